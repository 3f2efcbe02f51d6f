#!/bin/sh
# tests/toolchains.sh - programs built in other ways than the suite's own
# (tests/toolchains.c, compiled here with each compiler and flag set):
#
# * ThreadSanitizer (gcc's libtsan.so, clang's runtime in the executable)
#   and MemorySanitizer (clang): the library steps aside with one line, and
#   the program runs as without it -- same output, same status, the same
#   data-race report of its own -- where before it crashed (SIGSEGV) or
#   ended with the sanitizer's reports of our code;
#
# Each part is skipped (with a message) where its compiler or runtime is
# missing; the whole test is skipped where none could run.

. "$top_srcdir/tests/lib.sh"

src="$top_srcdir/tests/toolchains.c"
RAN=0

# build NAME COMPILER FLAGS...: $WORK/NAME from tests/toolchains.c; fails
# quietly (the part is skipped) where the compiler or its runtime is missing.
build() {
	name=$1 compiler=$2
	shift 2
	command -v "$compiler" >/dev/null 2>&1 &&
		"$compiler" "$@" -o "$WORK/$name" "$src" -lpthread \
		    >"$WORK/$name.cc.log" 2>&1 &&
		"$WORK/$name" >/dev/null 2>&1 </dev/null
}

# same_run NAME ARGS...: the program without and with the library: the same
# stdout, the same status; the stderrs are left in $WORK/NAME.plain.err and
# $WORK/NAME.with.err.
same_run() {
	name=$1
	shift
	"$WORK/$name" "$@" >"$WORK/$name.plain.out" 2>"$WORK/$name.plain.err"
	plain_status=$?
	rm -f "$WORK/report"
	run_with "$WORK/$name.with.out" "$WORK/$name.with.err" "$WORK/$name" "$@"
	with_status=$?
	expect_eq "$name $*: status with the library" "$with_status" "$plain_status"
	if cmp -s "$WORK/$name.plain.out" "$WORK/$name.with.out"; then
		pass "$name $*: the same output ($(cat "$WORK/$name.plain.out"))"
	else
		fail "$name $*: output differs (- without, + with):"
		diff -u "$WORK/$name.plain.out" "$WORK/$name.with.out" | sed 's/^/  | /' >&2
	fi
}

# ---- sanitizers that intercept the same calls -----------------------------

# beside_sanitizer NAME SANITIZER: the library steps aside, saying so once.
beside_sanitizer() {
	same_run "$1"
	expect_grep "$1: one line says why nothing is recorded" \
	    "^mutexstat: the program uses $2 \(-fsanitize=[a-z]+\), which cannot run beside mutexstat: not recording$" \
	    "$WORK/$1.with.err"
	expect_eq "$1: that line once, and no other of ours" \
	    "$(grep -c '^mutexstat' "$WORK/$1.with.err")" 1
	expect_eq "$1: no report file" "$(test -e "$WORK/report" && echo made || echo none)" none
	grep -v '^mutexstat: the program uses ' "$WORK/$1.with.err" >"$WORK/$1.rest.err"
	if cmp -s "$WORK/$1.plain.err" "$WORK/$1.rest.err"; then
		pass "$1: stderr otherwise as without the library"
	else
		fail "$1: stderr differs (- without, + with):"
		diff -u "$WORK/$1.plain.err" "$WORK/$1.rest.err" | sed 's/^/  | /' >&2
	fi
}

# tsan_race NAME: a data race of the program is still found, once, and the
# status is TSan's (66) as without the library.
tsan_race() {
	same_run "$1" race
	expect_eq "$1 race: ThreadSanitizer's status" "$plain_status" 66
	expect_eq "$1 race: TSan's data-race reports without the library" \
	    "$(grep -c 'WARNING: ThreadSanitizer: data race' "$WORK/$1.plain.err")" 1
	expect_eq "$1 race: and with it" \
	    "$(grep -c 'WARNING: ThreadSanitizer: data race' "$WORK/$1.with.err")" 1
	expect_no_grep "$1 race: none in the library's code" 'libmutexstat|lib/[a-z_]+\.c' \
	    "$WORK/$1.with.err"
}

if sanitized; then
	echo "skip: ThreadSanitizer and MemorySanitizer (this build preloads ASan's runtime," \
	    "which cannot share a process with them)"
else
	# gcc links libtsan.so (after us in the lookup order); clang puts
	# its runtime into the executable (in front of us)
	for cc in gcc clang; do
		if build "tsan_$cc" "$cc" -g -O1 -fsanitize=thread; then
			RAN=$((RAN + 1))
			# TSan's own interceptors see no program race here
			TSAN_OPTIONS=exitcode=66 beside_sanitizer "tsan_$cc" ThreadSanitizer
			TSAN_OPTIONS=exitcode=66 tsan_race "tsan_$cc"
		else
			echo "skip: $cc -fsanitize=thread does not build or run here"
		fi
	done
	if build msan_clang clang -g -O1 -fsanitize=memory; then
		RAN=$((RAN + 1))
		beside_sanitizer msan_clang MemorySanitizer
	else
		echo "skip: clang -fsanitize=memory does not build or run here"
	fi
fi

if [ "$RAN" -eq 0 ]; then
	echo "SKIP: no toolchain of this test could build and run its program"
	exit 77
fi
finish
