#!/bin/sh
# tests/unwind_safety.sh - the library's use of libunwind does no harm to
# C++ exceptions, pthread_exit and pthread_cancel.
#
# Debian's libunwind.so.8 defines the GCC unwinder ABI (_Unwind_RaiseException,
# _Unwind_ForcedUnwind, ...).  Were it ever in the program's global symbol
# scope ahead of libgcc_s, exceptions and thread exit would unwind through
# libunwind's implementation and crash now and then.  (Tried on purpose,
# with libunwind.so.8 preloaded ahead of the library, tests/unwind_cxx hangs
# in __libunwind_Unwind_RaiseException: the timeout below turns that into a
# failure.)  The library opens it privately (dlopen RTLD_LOCAL, see
# lib/stacks/stack.h); this test proves that:
#
#   1. the library exports only pthread_*, mutexstat_*, C11's, _Fork, exit, _exit,
#      _Exit, setsid, close, dup2, dup3, close_range, closefrom, sigaction, signal and sigaltstack (no
#      _Unwind_*) and does not link libunwind or libdw (no NEEDED entry for them);
#   2. tests/unwind_cxx (exceptions thrown, rethrown and caught while
#      contended std::mutexes are held), tests/unwind_exit (pthread_exit and
#      pthread_cancel with cleanup handlers) and tests/unwind_terminate
#      (a caught exception rethrown into std::terminate), each linked with
#      and without --as-needed, print the same stdout and stderr and exit
#      the same with and without the library, run after run;
#   3. under the library no object binds a symbol to libunwind except
#      libunwind itself (LD_DEBUG=bindings), while the C++ runtime and glibc
#      bind their _Unwind_* calls to libgcc_s;
#   4. after contention (so stacks were captured), dlsym(RTLD_DEFAULT) finds
#      _Unwind_RaiseException in libgcc_s or nowhere, never in libunwind,
#      and does not find libunwind's own unw_backtrace at all;
#   5. the runs that exit normally wrote a report for the right program.
#
# Outputs of a failed run are kept under
# $top_builddir/tests/unwind_safety.failures/ (the work directory is removed).

. "$top_srcdir/tests/lib.sh"

ulimit -c 0 2>/dev/null || : # the abort mode must not leave core files
tests="$top_builddir/tests"
kept="$top_builddir/tests/unwind_safety.failures"
rm -rf "$kept"
limit=120 # seconds per run; only to turn a hang into a failure, not timing
if command -v timeout >/dev/null 2>&1; then
	bound="timeout -k 10 $limit"
else
	echo "note: no timeout(1); a hang would hang this test"
	bound=
fi

# run OUT ERR COMMAND...: COMMAND's exit status, stdout to OUT, stderr to
# ERR, killed after $limit seconds.  The command redirects in its own
# process (exec), and the shell waiting for it has stderr on /dev/null: so
# the shell's "Aborted" or "Segmentation fault" notice lands in neither ERR
# (dash redirects before it forks) nor the log.
run() {
	out=$1 err=$2
	shift 2
	{ (exec >"$out" 2>"$err"; exec $bound "$@"); } 2>/dev/null
}

# keep DIR: copy a failed run's files where they survive the test.
keep() {
	mkdir -p "$kept" && cp -r "$1" "$kept/" &&
		echo "  (outputs kept in $kept/$(basename "$1"))" >&2
}

# ---- 1. what the library exports and what it links ---------------------
# Version nodes (type A, no code) are not symbols anyone binds to; skip them.
nm -D --defined-only "$MUTEXSTAT_LIB" >"$WORK/exports" ||
	fail "nm -D could not read $MUTEXSTAT_LIB"
awk '$2 != "A" { print $3 }' "$WORK/exports" |
	grep -Ev '^(pthread_|mutexstat_|mtx_(init|lock|trylock|timedlock|unlock|destroy)$|cnd_(wait|timedwait|signal|broadcast)$|_Fork$|exit$|_exit$|_Exit$|quick_exit$|daemon$|setsid$|close$|dup2$|dup3$|close_range$|closefrom$|sigaction$|signal$|sigaltstack$)' \
	>"$WORK/exports.other"
if [ -s "$WORK/exports.other" ]; then
	fail "the library exports symbols other than pthread_*, mutexstat_*, C11's mtx_* and cnd_*, _Fork, exit, _exit, _Exit, quick_exit, daemon, setsid, close, dup2, dup3, close_range, closefrom, sigaction, signal and sigaltstack:"
	sed 's/^/  | /' "$WORK/exports.other" >&2
else
	pass "the library exports only pthread_*, mutexstat_*, C11's mtx_* and cnd_*, _Fork, exit, _exit, _Exit, quick_exit, daemon, setsid, close, dup2, dup3, close_range, closefrom, sigaction, signal and sigaltstack ($(awk '$2 != "A"' "$WORK/exports" | wc -l) symbols)"
fi
expect_no_grep "the library exports no _Unwind_* symbol" '_Unwind_' "$WORK/exports"

if command -v readelf >/dev/null 2>&1; then
	readelf -d "$MUTEXSTAT_LIB" | sed -n 's/.*(NEEDED).*\[\(.*\)\].*/\1/p' >"$WORK/needed"
elif command -v objdump >/dev/null 2>&1; then
	objdump -p "$MUTEXSTAT_LIB" | awk '$1 == "NEEDED" { print $2 }' >"$WORK/needed"
else
	echo "note: neither readelf nor objdump: NEEDED entries not checked"
	: >"$WORK/needed.skip"
fi
if [ ! -e "$WORK/needed.skip" ]; then
	if grep -Eq 'libunwind|libdw' "$WORK/needed"; then
		fail "the library links libunwind or libdw (NEEDED: $(tr '\n' ' ' <"$WORK/needed"))"
	else
		pass "no NEEDED entry for libunwind or libdw (NEEDED: $(tr '\n' ' ' <"$WORK/needed"))"
	fi
fi

# ---- 2. the same behaviour with and without the library ------------------
# compare LABEL RUNS STATUS STDERR REPORT PROGRAM ARGS...: run PROGRAM RUNS
# times without and with the library.  The run without must exit STATUS
# and print exactly the file STDERR on stderr; the run with must match it
# in exit status, stdout and stderr.  REPORT=yes: the run with the library
# must have written one report (MUTEXSTAT_OUTPUT, %p = pid) for PROGRAM's
# pid; REPORT=no: the program ends by _exit or abort, which skip the
# library's exit-time report, so there is nothing to check.
compare() {
	label=$1 runs=$2 want_status=$3 want_err=$4 report=$5
	shift 5
	base=$(basename "$1")
	r=1
	while [ "$r" -le "$runs" ]; do
		d="$WORK/$(echo "$label" | tr ' ' '-').$r"
		mkdir -p "$d"
		run "$d/plain.out" "$d/plain.err" "$@"
		plain_status=$?
		run "$d/lib.out" "$d/lib.err" env LD_PRELOAD="$MS_PRELOAD" \
		    MUTEXSTAT_OUTPUT="$d/report.%p" "$@"
		lib_status=$?
		echo "$plain_status" >"$d/plain.status"
		echo "$lib_status" >"$d/lib.status"
		bad=0
		if [ "$plain_status" != "$want_status" ]; then
			fail "$label run $r: without the library the exit status is $plain_status, want $want_status"
			bad=1
		fi
		if ! cmp -s "$want_err" "$d/plain.err"; then
			fail "$label run $r: without the library stderr is not as expected (- want, + got):"
			diff -u "$want_err" "$d/plain.err" | sed 's/^/  | /' >&2
			bad=1
		fi
		if [ "$lib_status" != "$plain_status" ]; then
			case $lib_status in
			124) how="timed out after ${limit}s (hang?)" ;;
			13[0-9] | 14[0-9] | 15[0-9]) how="killed by signal $((lib_status - 128))" ;;
			*) how="" ;;
			esac
			fail "$label run $r: exit status $lib_status with the library, $plain_status without $how"
			bad=1
		fi
		if ! cmp -s "$d/plain.out" "$d/lib.out"; then
			fail "$label run $r: stdout differs with the library (- without, + with):"
			diff -u "$d/plain.out" "$d/lib.out" | sed 's/^/  | /' >&2
			bad=1
		fi
		if ! cmp -s "$d/plain.err" "$d/lib.err"; then
			fail "$label run $r: stderr differs with the library (- without, + with):"
			diff -u "$d/plain.err" "$d/lib.err" | sed 's/^/  | /' >&2
			bad=1
		fi
		if [ "$report" = yes ]; then
			reports=$(cd "$d" && ls report.* 2>/dev/null)
			report_file="$d/$reports"
			if [ "$(echo "$reports" | grep -c .)" -ne 1 ] || [ ! -s "$report_file" ]; then
				fail "$label run $r: want one report in $d, found: '$(echo $reports)'"
				bad=1
			else
				pid=${reports#report.}
				if ! head -n 1 "$report_file" |
				    grep -Eq "^mutexstat: $base \\(pid $pid\\)"; then
					fail "$label run $r: the report's first line is not 'mutexstat: $base (pid $pid)...':"
					head -n 3 "$report_file" | sed 's/^/  | /' >&2
					bad=1
				fi
			fi
		fi
		if [ "$bad" -eq 0 ]; then
			msg="$label run $r: exit $plain_status, same stdout and stderr with the library"
			[ "$report" = yes ] && msg="$msg, report for $base"
			pass "$msg"
		else
			keep "$d"
		fi
		r=$((r + 1))
	done
}

empty="$WORK/empty.err"
: >"$empty"
handler_err="$WORK/handler.err"
echo "terminate handler called: boom" >"$handler_err"
abort_err="$WORK/abort.err"
printf "terminate called after throwing an instance of 'std::runtime_error'\n  what():  boom\n" >"$abort_err"

for variant in "" _asneeded; do
	compare "unwind_cxx$variant" 5 0 "$empty" yes "$tests/unwind_cxx$variant"
	compare "unwind_exit$variant" 5 0 "$empty" yes "$tests/unwind_exit$variant"
	prog="$tests/unwind_terminate$variant"
	compare "unwind_terminate$variant caught" 3 0 "$empty" yes "$prog" caught
	compare "unwind_terminate$variant handler" 3 3 "$handler_err" no "$prog" handler
	compare "unwind_terminate$variant abort" 3 134 "$abort_err" no "$prog" abort
done

# ---- 3. who binds to libunwind (LD_DEBUG=bindings) ------------------------
# The dynamic linker logs every symbol binding, lazy ones included, and
# names the object a symbol was found in.  dlsym on a handle is logged as a
# binding of the handle's object, so the library's own look-ups into the
# libunwind it opened read "binding file .../libunwind.so.8 to
# .../libunwind.so.8": the only bindings to libunwind allowed.  Lines of
# several threads interleave; each binding is cut out with grep -o.
# bindings LABEL SYMBOLS PROGRAM ARGS...: SYMBOLS (extended regex) must be
# bound to libgcc_s at least once -- the proof that the log saw the
# unwinding at all.
bindings() {
	label=$1 want=$2
	shift 2
	d="$WORK/bindings.$label"
	mkdir -p "$d"
	run "$d/out" "$d/err" env LD_PRELOAD="$MS_PRELOAD" \
	    MUTEXSTAT_OUTPUT="$d/report.%p" LD_DEBUG=bindings LD_DEBUG_OUTPUT="$d/ld" "$@"
	status=$?
	expect_eq "$label under LD_DEBUG=bindings: exit status" "$status" 0
	cat "$d"/ld.* 2>/dev/null |
		grep -o 'binding file [^ ]* \[[0-9]*\] to [^ ]* \[[0-9]*\]: normal symbol `[^'"'"']*' \
		    >"$d/all"
	grep ' to [^ ]*libunwind[^ /]* \[' "$d/all" |
		grep -v '^binding file [^ ]*/libunwind[^ /]* ' >"$d/to-libunwind"
	if [ -s "$d/to-libunwind" ]; then
		fail "$label: objects other than libunwind bind symbols to libunwind:"
		sort -u "$d/to-libunwind" | head -n 20 | sed 's/^/  | /' >&2
		keep "$d"
	else
		pass "$label: nothing but libunwind itself binds to libunwind"
	fi
	if grep -Eq " to [^ ]*/libgcc_s[^ /]* \[[0-9]*\]: normal symbol \`($want)\$" "$d/all"; then
		pass "$label: $want bound to libgcc_s"
	else
		fail "$label: no binding of $want to libgcc_s in the LD_DEBUG log"
		keep "$d"
	fi
	if grep -q 'libunwind' "$d/all"; then
		echo "  ($label: libunwind was loaded: $(grep -c '^binding file [^ ]*/libunwind' "$d/all") bindings inside it)"
	else
		echo "  note: $label: libunwind was never loaded (no stack captured?): this check is vacuous until it is"
	fi
}

for variant in "" _asneeded; do
	bindings "unwind_cxx$variant" '_Unwind_RaiseException|_Unwind_Resume' \
	    "$tests/unwind_cxx$variant"
	bindings "unwind_exit$variant" '_Unwind_ForcedUnwind' "$tests/unwind_exit$variant"
	bindings "unwind_terminate$variant" '_Unwind_RaiseException|_Unwind_Resume_or_Rethrow' \
	    "$tests/unwind_terminate$variant" caught
done

# ---- 4. the global scope, seen from inside the program -------------------
# A small C program, built here: it makes a thread wait for a mutex (and
# knows it did: the waiter is asleep, /proc/self/task/TID/stat state S,
# before the mutex is released), then lets 4 threads contend and one thread
# pthread_exit, then asks dlsym(RTLD_DEFAULT, ...) -- the global scope --
# where the unwinder ABI and libunwind's own API are, and dladdr which
# object they are in.  Built twice: plain (a C program does not link
# libgcc_s, which may then be absent from the global scope: the answer
# must be "none") and linked with libgcc_s (the answer must be libgcc_s).
cat >"$WORK/scope.c" <<'EOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static atomic_int waiter_tid;
static long counter;

static void *waiter(void *arg)
{
	atomic_store(&waiter_tid, (int)syscall(SYS_gettid));
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	return arg;
}

static char state_of(int tid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/self/task/%d/stat", tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return '?';
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : '?';
}

/* 1 if a thread certainly waited for m */
static int wait_once(void)
{
	pthread_t t;
	int seen = 0;
	pthread_mutex_lock(&m);
	atomic_store(&waiter_tid, 0);
	pthread_create(&t, NULL, waiter, NULL);
	for (int i = 0; i < 60000 && !seen; i++) {
		int tid = atomic_load(&waiter_tid);
		if (tid && state_of(tid) == 'S')
			seen = 1;
		else
			nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	pthread_mutex_unlock(&m);
	pthread_join(t, NULL);
	return seen;
}

static void *contender(void *arg)
{
	for (int i = 0; i < 20000; i++) {
		pthread_mutex_lock(&m);
		counter++;
		pthread_mutex_unlock(&m);
	}
	return arg;
}

static void *exiter(void *arg)
{
	pthread_exit(arg);
}

static void where(const char *name)
{
	void *p = dlsym(RTLD_DEFAULT, name);
	Dl_info info;
	const char *module = "none";
	if (p) {
		module = "unknown";
		if (dladdr(p, &info) && info.dli_fname) {
			const char *slash = strrchr(info.dli_fname, '/');
			module = slash ? slash + 1 : info.dli_fname;
		}
	}
	printf("%s: %s\n", name, module);
}

int main(void)
{
	pthread_t t[5];
	int waited = wait_once() + wait_once();
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, contender, NULL);
	pthread_create(&t[4], NULL, exiter, NULL);
	for (int i = 0; i < 5; i++)
		pthread_join(t[i], NULL);
	printf("a thread waited: %s\n", waited == 2 ? "yes" : "no");

	char line[512];
	int mapped = 0;
	FILE *maps = fopen("/proc/self/maps", "r");
	while (maps && fgets(line, sizeof line, maps))
		mapped |= strstr(line, "/libunwind") != NULL;
	if (maps)
		fclose(maps);
	printf("libunwind mapped: %s\n", mapped ? "yes" : "no");

	where("_Unwind_RaiseException");
	where("_Unwind_ForcedUnwind");
	where("_Unwind_GetLanguageSpecificData");
	where("_Unwind_Resume");
	where("unw_backtrace");
	where("_ULx86_64_step");
	where("_ULx86_64_init_local");
	return 0;
}
EOF
cc=${CC:-cc}
if ! command -v "$cc" >/dev/null 2>&1; then
	echo "note: no C compiler ($cc): the global-scope probe is skipped"
else
	"$cc" -o "$WORK/scope" "$WORK/scope.c" -lpthread -ldl 2>"$WORK/scope.cc.err" ||
		fail "could not build the scope probe: $(cat "$WORK/scope.cc.err")"
	"$cc" -o "$WORK/scope_gcc_s" "$WORK/scope.c" -lpthread -ldl \
	    -Wl,--no-as-needed -lgcc_s 2>"$WORK/scope.cc.err" ||
		fail "could not build the scope probe with libgcc_s: $(cat "$WORK/scope.cc.err")"
	for probe in scope scope_gcc_s; do
		[ -x "$WORK/$probe" ] || continue
		out="$WORK/$probe.out"
		run "$out" "$WORK/$probe.err" env LD_PRELOAD="$MS_PRELOAD" \
		    MUTEXSTAT_OUTPUT="$WORK/$probe.report.%p" "$WORK/$probe"
		expect_eq "$probe: exit status under the library" "$?" 0
		sed 's/^/  | /' "$out"
		if [ "$probe" = scope_gcc_s ]; then
			allowed='libgcc_s\.so\.1'
		else
			allowed='none|libgcc_s\.so\.1'
		fi
		for sym in _Unwind_RaiseException _Unwind_ForcedUnwind \
		    _Unwind_GetLanguageSpecificData _Unwind_Resume; do
			also=
			# (a sanitized build: the ASan runtime, preloaded first,
			# has its own _Unwind_RaiseException, which calls gcc's)
			sanitized && [ "$sym" = _Unwind_RaiseException ] &&
				also='|libasan\.so[.0-9]*'
			expect_grep "$probe: dlsym(RTLD_DEFAULT, $sym) is in $allowed$also" \
			    "^$sym: ($allowed$also)\$" "$out"
		done
		for sym in unw_backtrace _ULx86_64_step _ULx86_64_init_local; do
			expect_grep "$probe: libunwind's $sym is not in the global scope" \
			    "^$sym: none\$" "$out"
		done
		expect_grep "$probe: a thread waited for a mutex" '^a thread waited: yes$' "$out"
		if ! grep -q '^libunwind mapped: yes$' "$out"; then
			echo "  note: $probe: libunwind is not loaded (stack capture not wired?): the scope checks are vacuous until it is"
		fi
	done
fi

finish
