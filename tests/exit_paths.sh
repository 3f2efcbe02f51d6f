# tests/exit_paths.sh - how a program ends, under the library as without it:
#   - main calls pthread_exit while workers run on: the last worker's end
#     ends the process (exit(0), the program's atexit handler runs), with
#     the report -- the dump thread does not keep the process alive (it
#     blocks every signal, so only SIGKILL ended it), and the report, written
#     by that last thread, names the workers' functions and lines;
#   - main calls pthread_exit with no other thread of the program left, or
#     after it closed every descriptor (the dump thread needs none);
#   - the last thread ends holding a mutex: HELD AT THREAD EXIT;
#   - exit() from a signal handler that interrupted mutexstat_dump on the
#     same thread, pause(), malloc (its lock held), dl_iterate_phdr (the
#     dynamic linker's lock held), and from a timer's handler while threads make, nest and share
#     mutexes: the program ends with its status, no hang (one line says
#     when there is no exit report, or it did not finish);
#   - a daemon that moves to another directory and closes every descriptor
#     writes its report where a relative MUTEXSTAT_OUTPUT says, from the
#     directory it started in;
#   - MUTEXSTAT_EXIT_CODE replaces the status after the destructors of the
#     program's own shared libraries, which are finalised after ours, ran.
# A hang is caught by timeout -s KILL (status 137).

. "$top_srcdir/tests/lib.sh"

P="$top_builddir/tests/exit_paths"
LIMIT=${LIMIT:-30}

# under VARS... -- program args: under the library, report to $WORK/r,
# stdout to $WORK/out, stderr to $WORK/err; $st is the status.
under() {
	rm -f "$WORK/r"
	vars=
	while [ "$1" != -- ]; do vars="$vars${vars:+ }$1"; shift; done
	shift
	# shellcheck disable=SC2086
	timeout -s KILL $LIMIT env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/r" $vars \
	    "$@" >"$WORK/out" 2>"$WORK/err"
	st=$?
}

bare() {
	timeout -s KILL $LIMIT "$@" >"$WORK/bare.out" 2>"$WORK/bare.err"
	bare_st=$?
}

# ---- pthread_exit from main -------------------------------------------------

bare "$P" main-pthread-exit 5000
expect_eq "main's pthread_exit, without the library: status" "$bare_st" 0
for vars in "" "MUTEXSTAT_ON_CRASH=report" "MUTEXSTAT_WATCHDOG=1"; do
	under $vars -- "$P" main-pthread-exit 5000
	what="main's pthread_exit${vars:+ ($vars)}"
	expect_eq "$what: the process ends as without the library" "$st" "$bare_st"
	expect_eq "$what: the same output (atexit ran)" "$(cat "$WORK/out")" \
	    "$(cat "$WORK/bare.out")"
	expect_grep "$what: the report has every acquisition" \
	    '^ +[0-9]+ (0x[0-9a-f]+|<[^>]+>) +10000 ' "$WORK/r"
	expect_grep "$what: the report names the workers' line" \
	    'first locked at +worker\+0x[0-9a-f]+ \(tests/exit_paths.c:[0-9]+, exit_paths\)' "$WORK/r"
done

bare "$P" alone-pthread-exit
expect_eq "main's pthread_exit, no other thread: status without the library" "$bare_st" 0
under -- "$P" alone-pthread-exit
expect_eq "main's pthread_exit, no other thread: the process ends" "$st" 0
expect_eq "main's pthread_exit, no other thread: the same output" "$(cat "$WORK/out")" \
    "$(cat "$WORK/bare.out")"
expect_grep "main's pthread_exit, no other thread: the report" '^ +[0-9]+ (0x[0-9a-f]+|<[^>]+>) +10 ' "$WORK/r"

bare "$P" last-holds
under -- "$P" last-holds
expect_eq "the last thread ends holding a mutex: status as without the library" \
    "$st" "$bare_st"
expect_grep "the last thread ends holding a mutex: HELD AT THREAD EXIT" \
    '^HELD AT THREAD EXIT: ' "$WORK/r"
expect_grep "the last thread ends holding a mutex: taken in keeper" \
    'keeper\+0x[0-9a-f]+ \(tests/exit_paths.c:[0-9]+' "$WORK/r"

# The program closes every descriptor and raises the dump signal: the dump
# thread, which waits on a futex word and holds no descriptor, writes that
# dump.  The thread stays, outside glibc's count of threads: main's
# pthread_exit waits for the last worker as without the library, and that
# worker's exit() is the only one.  (The thread once waited on a pipe, saw
# it gone and ended, and its end could be counted as the last thread's: a
# second exit() ended the process in the middle of the exit report.)
bare "$P" closed-all
expect_eq "every descriptor closed, main's pthread_exit: status without the library" \
    "$bare_st:$(cat "$WORK/bare.out")" "0:main leaves
total 2000"
for vars in "" MUTEXSTAT_WATCHDOG=1; do
	w=${vars:+ (watchdog)}
	rm -f "$WORK/r.1"
	under $vars -- "$P" closed-all
	expect_eq "every descriptor closed$w, main's pthread_exit: the last worker ends the process" \
	    "$st:$(cat "$WORK/out")" "$bare_st:$(cat "$WORK/bare.out")"
	expect_grep "every descriptor closed$w: the report has every acquisition" \
	    '^ +[0-9]+ (0x[0-9a-f]+|<[^>]+>) +2000 ' "$WORK/r"
	expect_grep "every descriptor closed$w: the dump signal's dump is written" \
	    '^ +[0-9]+ (0x[0-9a-f]+|<[^>]+>) +1000 ' "$WORK/r.1"
	expect_eq "every descriptor closed$w: nothing on stderr" "$(cat "$WORK/err")" ""
done

# A program that closes every descriptor again and again: with a pipe, the
# dump thread made 20 new ones and then gave up, and with the write end
# alone closed it spun in poll(), a CPU to itself.  Now nothing it closes
# is the library's wake-up: the thread waits, idle, and dumps go on.
bare "$P" closed-often
expect_eq "closed 21 times, without the library" "$bare_st:$(cat "$WORK/bare.out")" \
    "0:closed 21 times, dump thread absent
a second after: idle"
rm -f "$WORK/r.1"
under MUTEXSTAT_WATCHDOG=1 -- "$P" closed-often
expect_eq "closed 21 times: the dump thread waits, the process idles, a dump signal dumps" \
    "$st:$(cat "$WORK/out")" "0:closed 21 times, dump thread waits
a second after: idle
the dump signal: dumped"
expect_eq "closed 21 times: nothing on stderr" "$(cat "$WORK/err")" ""
expect_grep "closed 21 times: the exit report" '^mutexstat: exit_paths ' "$WORK/r"

# ... and when the last thread closes the descriptors on its way out, the
# dump thread goes on waiting while that thread's exit() runs the exit
# handlers (one waits for it to wait).  With a pipe it saw it gone then and
# ended, its end counted as the last thread's, and its own exit() ended the
# process before the report (7 runs of 10 had none).
bare "$P" closed-at-end
bad=0
for run in 1 2 3 4 5; do
	under MUTEXSTAT_WATCHDOG=1 -- "$P" closed-at-end
	[ "$st:$(cat "$WORK/out")" = "$bare_st:$(cat "$WORK/bare.out")" ] || bad=$((bad + 1))
	grep -Eq '^ +[0-9]+ (0x[0-9a-f]+|<[^>]+>) +1000 ' "$WORK/r" || bad=$((bad + 1))
done
expect_eq "the last thread closes every descriptor as it ends, 5 runs: status, output and report each time" \
    "$bare_st:$(cat "$WORK/bare.out"):$bad" "0:total 1000:0"

# ---- exit() from a signal handler ------------------------------------------

NOTE="mutexstat: exit() from a signal handler inside mutexstat's own code; no exit report"
UNFINISHED="mutexstat: the exit report did not finish (exit() from a signal handler); the program ends"
bare "$P" handler-in-report
expect_eq "exit() in a handler, without the library: status" "$bare_st" 3
under -- "$P" handler-in-report
expect_eq "exit() in a handler that interrupted mutexstat_dump: the program's status" \
    "$st" 3
expect_eq "exit() in a handler that interrupted mutexstat_dump: one line says why" \
    "$(cat "$WORK/err")" "$NOTE"

# A handler that interrupted the program, not the library, anywhere: the
# dump thread writes the report (the interrupted code may hold malloc's
# lock, or the dynamic linker's, which the report needs).
bare "$P" handler-in-pause
expect_eq "exit() in a handler that interrupted pause(), without the library: status" \
    "$bare_st" 4
under -- "$P" handler-in-pause
expect_eq "exit() in a handler that interrupted pause(): the program's status" "$st" 4
expect_grep "exit() in a handler that interrupted pause(): the report" \
    '^ +[0-9]+ (0x[0-9a-f]+|<[^>]+>) +1000 ' "$WORK/r"
expect_eq "exit() in a handler that interrupted pause(): nothing on stderr" \
    "$(cat "$WORK/err")" ""

# ... inside malloc, holding its thread's lock (tests/exit_malloc.c: as
# glibc's arena lock, not recursive); not beside ASan's malloc.
if sanitized; then
	echo "skipped: exit() in a handler inside malloc (the test's malloc is not ASan's)"
else
	bare "$top_builddir/tests/exit_malloc"
	expect_eq "exit() in a handler inside malloc, without the library: status" \
	    "$bare_st:$(cat "$WORK/bare.out")" "3:mallocing"
	under -- "$top_builddir/tests/exit_malloc"
	expect_eq "exit() in a handler inside malloc: the program's status, no hang" \
	    "$st:$(cat "$WORK/out")" "3:mallocing"
	expect_grep "exit() in a handler inside malloc: the report, by the dump thread" \
	    '^ +[0-9]+ (0x[0-9a-f]+|<[^>]+>) +1000 ' "$WORK/r"
	expect_eq "exit() in a handler inside malloc: nothing on stderr" "$(cat "$WORK/err")" ""
fi

# ... inside dl_iterate_phdr, holding the dynamic linker's lock, which the
# report's dlopen of libdw needs: given up after 5 s, the program ends.
bare "$P" handler-in-phdr
expect_eq "exit() in a handler inside dl_iterate_phdr, without the library: status" \
    "$bare_st:$(cat "$WORK/bare.out")" "3:iterating"
under -- "$P" handler-in-phdr
expect_eq "exit() in a handler inside dl_iterate_phdr: the program's status, no hang" \
    "$st:$(cat "$WORK/out")" "3:iterating"
expect_eq "exit() in a handler inside dl_iterate_phdr: one line says the report did not finish" \
    "$(cat "$WORK/err")" "$UNFINISHED"

# A timer's handler exits while the threads are anywhere: in the program, in
# a stack capture, adding a lock-order edge, making a mutex.
# Not in a sanitized build: there the program alone can hang too -- its
# exit() from a handler that interrupted ASan's allocator waits for the
# allocator's lock (the run without the library was killed, once).
if sanitized; then
	echo "note: exit() from a timer's handler: not run in a sanitized build"
else
	bare "$P" timer-exit 20000
	expect_eq "exit() from a timer's handler, without the library: status" "$bare_st" 3
	hung=0 other=0
	for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
		under MUTEXSTAT_OUTPUT=/dev/null -- "$P" timer-exit 20000
		case $st in
		3) ;;
		137) hung=$((hung + 1)) ;;
		*) other=$((other + 1)); sed 's/^/  | /' "$WORK/err" >&2 ;;
		esac
		grep -v -x -F -e "$NOTE" -e "$UNFINISHED" "$WORK/err" >&2 && other=$((other + 1))
	done
	expect_eq "exit() from a timer's handler, 12 runs: none hangs" "$hung" 0
	expect_eq "exit() from a timer's handler, 12 runs: status 3, no other line on stderr" \
	    "$other" 0
fi

# ---- a daemon ----------------------------------------------------------------

# It moves to another directory and closes every descriptor: a relative
# MUTEXSTAT_OUTPUT is still where it was started.
mkdir "$WORK/start" "$WORK/elsewhere"
(cd "$WORK/start" && timeout -s KILL $LIMIT env LD_PRELOAD="$MS_PRELOAD" \
    MUTEXSTAT_OUTPUT='r.%p.txt' "$P" daemon "$WORK/elsewhere")
tenths=0 found=
while [ $tenths -lt 200 ] && [ -z "$found" ]; do
	found=$(grep -l '^  1 \(0x[0-9a-f]*\|<[^>]*>\) *100 ' "$WORK"/start/r.*.txt 2>/dev/null)
	[ -n "$found" ] || sleep 0.1
	tenths=$((tenths + 1))
done
expect_eq "a daemon in another directory: its report is where it started" \
    "$(echo "$found" | grep -c .)" 1
expect_eq "a daemon in another directory: no report there" \
    "$(cd "$WORK/elsewhere" && ls)" ""

# ---- MUTEXSTAT_EXIT_CODE and the destructors that come after ours -----------

# The program's own shared library is finalised after the preloaded one: its
# destructor (which locks a mutex and writes through stdio) must still run,
# and the report, written after it, has its lock.
CC=${CC:-cc}
cat >"$WORK/libfin.c" <<'EOF'
#include <pthread.h>
#include <stdio.h>
static pthread_mutex_t fin_lock = PTHREAD_MUTEX_INITIALIZER;
__attribute__((destructor)) static void fin(void)
{
	pthread_mutex_lock(&fin_lock);
	printf("libfin: its destructor ran\n");
	pthread_mutex_unlock(&fin_lock);
}
void fin_touch(void) { pthread_mutex_lock(&fin_lock); pthread_mutex_unlock(&fin_lock); }
EOF
cat >"$WORK/usefin.c" <<'EOF'
#include <pthread.h>
#include <stdio.h>
void fin_touch(void);
static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;
int main(void)
{
	fin_touch();
	pthread_mutex_lock(&a); pthread_mutex_lock(&b); /* a, then b */
	pthread_mutex_unlock(&b); pthread_mutex_unlock(&a);
	pthread_mutex_lock(&b); pthread_mutex_lock(&a); /* b, then a */
	pthread_mutex_unlock(&a); pthread_mutex_unlock(&b);
	printf("main returns 5\n");
	return 5;
}
EOF
if "$CC" -shared -fPIC -o "$WORK/libfin.so" "$WORK/libfin.c" -lpthread &&
   "$CC" -o "$WORK/usefin" "$WORK/usefin.c" -L"$WORK" -lfin -Wl,-rpath,"$WORK" -lpthread; then
	bare "$WORK/usefin"
	expect_eq "a library's destructor, without the library: status" "$bare_st" 5
	under MUTEXSTAT_EXIT_CODE=9 -- "$WORK/usefin"
	expect_eq "MUTEXSTAT_EXIT_CODE=9 on an inversion: status 9" "$st" 9
	expect_eq "MUTEXSTAT_EXIT_CODE=9: the program's libraries' destructors still run" \
	    "$(cat "$WORK/out")" "$(cat "$WORK/bare.out")"
	expect_grep "MUTEXSTAT_EXIT_CODE=9: the report has the inversion" '^POTENTIAL DEADLOCK: ' "$WORK/r"
	under -- "$WORK/usefin"
	expect_eq "MUTEXSTAT_EXIT_CODE unset: the program's status" "$st" 5
	expect_eq "MUTEXSTAT_EXIT_CODE unset: the same output" "$(cat "$WORK/out")" \
	    "$(cat "$WORK/bare.out")"
	# the report comes after every destructor: the lock in libfin's is in it
	expect_grep "a library's destructor: its lock is in the report (2 acquisitions, not 1)" \
	    '^ +[0-9]+ (0x[0-9a-f]+|<[^>]+>) +2 .* fin_touch\+0x[0-9a-f]+ \(libfin\.so\)$' "$WORK/r"
else
	fail "cannot compile a shared library with $CC"
fi

# ---- exit() on two threads at once --------------------------------------------
# glibc 2.36 lets the two race: the later one ended the process while the
# first wrote the exit report, which was empty in 9 runs of 10.  It waits
# for the report now.
for mode in two-exits; do
	bare "$P" $mode
	expect_eq "$mode, without the library: status" "$bare_st" 3
	complete=0
	for i in 1 2 3 4 5 6 7 8 9 10; do
		under -- "$P" $mode
		[ "$st" = 3 ] && grep -q '^  1 \(0x[0-9a-f]*\|<[^>]*>\) *1000 ' "$WORK/r" && complete=$((complete + 1))
	done
	expect_eq "$mode, 10 runs: status 3, each report whole" "$complete" 10
done

finish
