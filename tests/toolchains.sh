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
# * clang (at -O0 and -O2, DWARF 5 and 4), and gcc and clang with -fno-plt,
#   -Wl,-z,now, LTO, with and without frame pointers: exact acquisitions,
#   and the lock's source line in the top table and at "first locked at"
#   (clang writes no .debug_aranges, and its programs had no lines at all);
#   clang++ -O2's std::mutex::lock, inlined from libstdc++'s headers, at
#   the program's line (clang names the headers /usr/bin/../lib/gcc/...,
#   and puts functions inside their namespace's DIE).
#
# * AddressSanitizer programs linked with a shared runtime (gcc's
#   libasan.so, clang's -shared-libasan) under the launcher: they run, as
#   without it, where ASan refused to start them ("ASan runtime does not
#   come first in initial library list"), and are recorded; so does a
#   script's ASan child.
#
# * a program built against glibc before 2.34 (tests/old_glibc.c): its
#   trylock and timedlock@GLIBC_2.2.5 counted, its repair of a robust mutex
#   with pthread_mutex_consistent_np@GLIBC_2.4 seen (the report said 0
#   times), the same answers; __pthread_mutex_lock's aliases are no MISUSE.
#
# * a 32-bit program (gcc -m32): the launcher refuses it, saying why in
#   words; preloaded anyway, it runs as without the library (the loader's
#   one line aside).
#
# * a program built for musl (musl-gcc): the launcher refuses it, naming
#   its loader (it ran it, and musl's loader failed on our library: status
#   127, a screen of "symbol not found").
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
		pass "$name $*: the same output ($(head -n 1 "$WORK/$name.plain.out"))"
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

# ---- AddressSanitizer's shared runtime, under the launcher -----------------

launcher="$top_builddir/scripts/mutexstat"

# asan_launched NAME [ASAN_OPTIONS]: the launcher runs it as it runs
# without the library, and the report counts its acquisitions.
asan_launched() {
	"$WORK/$1" >"$WORK/$1.plain.out" 2>"$WORK/$1.plain.err"
	plain_status=$?
	rm -f "$WORK/report"
	ASAN_OPTIONS=${2-} MUTEXSTAT_LIB="$MUTEXSTAT_LIB" "$launcher" -o "$WORK/report" \
	    "$WORK/$1" >"$WORK/$1.with.out" 2>"$WORK/$1.with.err"
	with_status=$?
	expect_eq "$1 ${2-}: status under the launcher" "$with_status" "$plain_status"
	expect_eq "$1 ${2-}: output under the launcher" "$(cat "$WORK/$1.with.out")" 80000
	expect_no_grep "$1 ${2-}: ASan did not refuse the order" 'does not come first' \
	    "$WORK/$1.with.err"
	expect_eq "$1 ${2-}: the report's acquisitions" \
	    "$(grep -E '^ +1 (0x[0-9a-f]+|<[^>]+>) ' "$WORK/report" 2>/dev/null | awk '{ print $3 }')" 80000
}

if sanitized; then
	echo "skip: ASan programs under the launcher (this build's launcher preloads gcc's" \
	    "ASan runtime for the library itself)"
else
	if build asan_gcc gcc -g -O1 -fsanitize=address; then
		RAN=$((RAN + 1))
		asan_launched asan_gcc
		# the user's other options kept
		asan_launched asan_gcc detect_leaks=1
		# an ASan child of a script: nobody put its runtime first
		printf '#!/bin/sh\nexec "%s"\n' "$WORK/asan_gcc" >"$WORK/asan_script"
		chmod +x "$WORK/asan_script"
		MUTEXSTAT_LIB="$MUTEXSTAT_LIB" "$launcher" -o "$WORK/child.%p" \
		    "$WORK/asan_script" >"$WORK/script.out" 2>"$WORK/script.err"
		expect_eq "a script's ASan child: status" "$?" 0
		expect_eq "a script's ASan child: output" "$(cat "$WORK/script.out")" 80000
		expect_no_grep "a script's ASan child: ASan did not refuse the order" \
		    'does not come first' "$WORK/script.err"
	else
		echo "skip: gcc -fsanitize=address does not build or run here"
	fi
	clang_rt=$(clang -print-file-name=libclang_rt.asan-x86_64.so 2>/dev/null)
	if [ -f "$clang_rt" ] && build asan_clang_shared clang -g -O1 -fsanitize=address \
	    -shared-libasan -Wl,-rpath,"$(dirname "$clang_rt")"; then
		RAN=$((RAN + 1))
		asan_launched asan_clang_shared
	else
		echo "skip: clang -fsanitize=address -shared-libasan does not build or run here"
	fi
fi

# ---- compilers and flags: counts and source lines --------------------------

lock_line=$(grep -n 'the lock line' "$src" | cut -d: -f1)

# counted_at_line NAME: the report has the 80,000 acquisitions of the
# program's mutex, at its lock line, in the top row and "first locked at".
counted_at_line() {
	same_run "$1"
	row=$(grep -E '^ +1 (0x[0-9a-f]+|<[^>]+>) ' "$WORK/report")
	expect_eq "$1: acquisitions" "$(echo "$row" | awk '{ print $3 }')" 80000
	case $row in
	*"(toolchains.c:$lock_line)") pass "$1: the top row names the lock line" ;;
	*) fail "$1: the top row names no line $lock_line: '$row'"
	   sed 's/^/  | /' "$WORK/report" >&2 ;;
	esac
	expect_grep "$1: first locked at the lock line" \
	    "^  first locked at +[a-z_]+\+0x[0-9a-f]+ \(tests/toolchains\.c:$lock_line, $1\)\$" \
	    "$WORK/report"
}

for variant in \
    'clang_O0:clang -g -O0' 'clang_O2:clang -g -O2' 'clang_dwarf4:clang -gdwarf-4 -O1' \
    'clang_nopie:clang -g -O1 -fno-pie -no-pie' 'clang_noplt:clang -g -O2 -fno-plt' \
    'clang_lto:clang -g -O2 -flto' 'gcc_noplt:gcc -g -O2 -fno-plt' \
    'gcc_now:gcc -g -O2 -Wl,-z,now' 'gcc_lto:gcc -g -O2 -flto' \
    'gcc_lto_parts:gcc -g -O2 -flto -flto-partition=max' \
    'gcc_omitfp:gcc -g -O2 -fomit-frame-pointer' \
    'gcc_fp:gcc -g -O2 -fno-omit-frame-pointer'; do
	name=${variant%%:*}
	# shellcheck disable=SC2086 # the flags are words
	if build "$name" ${variant#*:}; then
		RAN=$((RAN + 1))
		counted_at_line "$name"
		# LTO renames a static it moves between partitions
		# (counter_lock.lto_priv.0): the variable's name all the same
		case $name in
		*lto*) expect_grep "$name: the mutex is named <counter_lock>" \
			'^ +1 <counter_lock> ' "$WORK/report" ;;
		esac
	else
		echo "skip: ${variant#*:} does not build or run here"
	fi
done

# a C++ static in a namespace, renamed by LTO (_ZN5storeL11registry_muE
# .lto_priv.0, which the demangler does not read whole): its C++ name (the
# demangler is libstdc++'s: std::thread brings it in)
cat >"$WORK/lto_static.cpp" <<'EOF'
#include <pthread.h>
#include <cstdio>
#include <thread>
namespace store {
static pthread_mutex_t registry_mu = PTHREAD_MUTEX_INITIALIZER;
static int n;
__attribute__((noinline)) void bump() { pthread_mutex_lock(&registry_mu); n++; pthread_mutex_unlock(&registry_mu); }
}
static void work() { for (int i = 0; i < 1000; i++) store::bump(); }
int main() { std::thread t(work); work(); t.join(); std::printf("%d\n", store::n); }
EOF
if command -v g++ >/dev/null 2>&1 &&
    g++ -g -O2 -flto -flto-partition=max -pthread -o "$WORK/gxx_lto_static" "$WORK/lto_static.cpp" \
	>"$WORK/gxx_lto_static.cc.log" 2>&1 &&
    nm "$WORK/gxx_lto_static" | grep -q 'registry_muE\.lto_priv\.'; then
	RAN=$((RAN + 1))
	same_run gxx_lto_static
	expect_grep "gxx_lto_static: the mutex is named <store::registry_mu>, 2000 acquisitions" \
	    '^ +1 <store::registry_mu> +2000 ' "$WORK/report"
else
	echo "skip: g++ -flto -flto-partition=max does not build here, or renames no static"
fi

# clang names libstdc++'s headers from where it runs (/usr/bin/../lib/gcc/
# ...): std::mutex::lock inlined at -O2 is still a system header's line,
# and the line shown is the program's, where door.lock() is called
cxx_src="$top_srcdir/examples/cxx_mutex.cpp"
door_line=$(grep -n '^	door\.lock();' "$cxx_src" | cut -d: -f1)
if command -v clang++ >/dev/null 2>&1 &&
    clang++ -g -O2 -pthread -o "$WORK/clangxx_O2" "$cxx_src" >"$WORK/clangxx.cc.log" 2>&1; then
	RAN=$((RAN + 1))
	same_run clangxx_O2
	expect_grep "clangxx_O2: std::timed_mutex first locked at door.lock() (line $door_line)" \
	    "^  first locked at +main\+0x[0-9a-f]+ \(examples/cxx_mutex\.cpp:$door_line, clangxx_O2\)\$" \
	    "$WORK/report"
	# the functions in an anonymous namespace too (clang writes them
	# inside it, where libdw's dwarf_getscopes does not look)
	grep -E '^  first locked at |^ +[0-9]+ (0x[0-9a-f]+|<[^>]+>) ' "$WORK/report" >"$WORK/clangxx.sites"
	expect_grep "clangxx_O2: a namespaced function's lock at its own line" \
	    '^  first locked at +\(anonymous namespace\)::[a-z_]+\(int\)\+0x[0-9a-f]+ \(examples/cxx_mutex\.cpp:[0-9]+, clangxx_O2\)$' \
	    "$WORK/clangxx.sites"
	expect_no_grep "clangxx_O2: no site is a line of libstdc++'s headers" \
	    'gthr-default\.h|std_mutex\.h|mutex:[0-9]|unique_lock\.h' "$WORK/clangxx.sites"
else
	echo "skip: clang++ -O2 does not build examples/cxx_mutex.cpp here"
fi

# ---- a program built against an older glibc -------------------------------

old_src="$top_srcdir/tests/old_glibc.c"
if sanitized; then
	# gcc 12's ASan wraps __pthread_mutex_lock and finds glibc's with a
	# plain dlsym, which sees no compatibility-only symbol: it calls NULL
	echo "skip: a program built against an older glibc (ASan's runtime, preloaded," \
	    "crashes in its __pthread_mutex_lock, without the library too)"
elif ${CC:-cc} -g -O1 -o "$WORK/old_glibc" "$old_src" -lpthread >"$WORK/old.cc.log" 2>&1 &&
    "$WORK/old_glibc" >/dev/null 2>&1; then
	RAN=$((RAN + 1))
	same_run old_glibc
	# (with the kind column, the site column is short: "old_glibc.c:N")
	row=$(grep -E '^ +[0-9]+ (0x[0-9a-f]+|<[^>]+>) .* mutex +(main \()?old_glibc\.c:[0-9]+\)?$' "$WORK/report" | head -n 1)
	expect_eq "old_glibc: the plain mutex's acquisitions (10 trylocks, 5 timedlocks)" \
	    "$(echo "$row" | awk '{ print $3 }')" 15
	expect_grep "old_glibc: its trylocks" '^  trylock 10 ok, 0 busy; timed out 0;' "$WORK/report"
	expect_grep "old_glibc: the repair with pthread_mutex_consistent_np is seen" \
	    '^  owner died: 1 time; made consistent again \(pthread_mutex_consistent\): 1 time -- repaired, no finding$' \
	    "$WORK/report"
	expect_no_grep "old_glibc: no MISUSE (the aliases' locks and unlocks)" '^MISUSE' "$WORK/report"
	expect_grep "old_glibc: the rwlock's calls @GLIBC_2.2.5 (10 reads, 5 writes)" \
	    '^  reads 10 \(0 contended, waited 0 ns\), writes 5 ' "$WORK/report"
	expect_grep "old_glibc: the spin lock's (7 pairs)" '^ +[0-9]+ (0x[0-9a-f]+|<[^>]+>) +7 .* spin +' "$WORK/report"
else
	echo "skip: tests/old_glibc.c does not build or run here (x86-64 glibc only)"
fi

# ---- a 32-bit program -------------------------------------------------------

if build m32 gcc -m32 -g -O1; then
	RAN=$((RAN + 1))
	MUTEXSTAT_LIB="$MUTEXSTAT_LIB" "$launcher" "$WORK/m32" >"$WORK/m32.launch.out" \
	    2>"$WORK/m32.launch.err"
	expect_eq "m32: the launcher refuses it (status 2)" "$?" 2
	expect_eq "m32: and does not run it" "$(cat "$WORK/m32.launch.out")" ""
	expect_grep "m32: the refusal names both in words" \
	    "^mutexstat: $WORK/m32 is a 32-bit program for x86 \(i386\) but the library is 64-bit for x86-64: the loader would ignore it" \
	    "$WORK/m32.launch.err"
	same_run m32
	expect_grep "m32: preloaded, the loader says it ignores the library" \
	    'wrong ELF class: ELFCLASS64' "$WORK/m32.with.err"
	expect_eq "m32: no other line on stderr" \
	    "$(grep -vc 'wrong ELF class: ELFCLASS64' "$WORK/m32.with.err")" 0
else
	echo "skip: gcc -m32 does not build or run here (gcc-multilib)"
fi

# ---- a program of another C library ------------------------------------------

if build musl musl-gcc -g -O1; then
	RAN=$((RAN + 1))
	MUTEXSTAT_LIB="$MUTEXSTAT_LIB" "$launcher" "$WORK/musl" >"$WORK/musl.launch.out" \
	    2>"$WORK/musl.launch.err"
	expect_eq "musl: the launcher refuses it (status 2)" "$?" 2
	expect_eq "musl: and does not run it" "$(cat "$WORK/musl.launch.out")" ""
	expect_grep "musl: the refusal names its loader" \
	    "^mutexstat: $WORK/musl is built for another C library than glibc \(its loader is /lib/ld-musl-[a-z0-9_]+\.so\.1\), which cannot load the library: it cannot be measured\$" \
	    "$WORK/musl.launch.err"
	expect_eq "musl: that one line" "$(wc -l <"$WORK/musl.launch.err" | tr -d ' ')" 1
else
	echo "skip: musl-gcc does not build or run here (musl-tools)"
fi

if [ "$RAN" -eq 0 ]; then
	echo "SKIP: no toolchain of this test could build and run its program"
	exit 77
fi
finish
