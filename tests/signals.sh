# tests/signals.sh - programs that use signals their own way keep them:
#   - a SIGUSR1 handler installed after start-up gets every SIGUSR1; one
#     installed before (a library constructor), or SIGUSR1 ignored by the
#     parent, is left in place with one line saying live dumps are off;
#   - a program that blocks every signal in every thread (itself, or
#     inherited from its parent) takes SIGUSR1 with sigwait as before --
#     no live dump steals it -- and the watchdog still reports its hang;
#   - a thread that blocks SIGRTMAX-3, or waits for it in sigwaitinfo, is
#     not sent it by a dump asking where it is (its program would take it);
#   - a program's own SIGRTMAX-3 handler gets no signal from a live dump;
#   - _exit writes the report exit() would, except in a fork child, from
#     a signal handler or in a process that locked nothing; so does
#     quick_exit, after the program's at_quick_exit handlers, whose lock
#     calls are in it (exit from a thread writes it too).
#   - what sigaction and signal say of SIGUSR1 and SIGRTMAX-3 is what they
#     say without the library (the default), and a program that saves and
#     restores SIGUSR1 gets the default back;
#   - a program whose signal handler waits for a mutex (not async-signal-
#     safe, but glibc copes) does not hang in the library's locks.
# And what does change, documented: SIGUSR1's default action (the end of
# the process) becomes a live dump.

. "$top_srcdir/tests/lib.sh"

B=$top_builddir
SIG="$B/tests/signals"
RUN="$B/tests/run_hostile"
CC=${CC:-cc}
NOTE_HANDLER="mutexstat: no live dumps on SIGUSR1: the program handles it itself (MUTEXSTAT_SIGNAL picks another, or none)"
NOTE_IGNORED="mutexstat: no live dumps on SIGUSR1: the program ignores it (MUTEXSTAT_SIGNAL picks another, or none)"

# with "VAR=value..." "RUN-OPTIONS" program args: under the library (and
# run_hostile's options), report to $WORK/r; stdout and how it ended in
# $WORK/out, stderr in $WORK/err.
# Each run's stderr is kept too (err.N): UBSan writes its report there and
# ends the program with status 1, and the next run's would overwrite it
# before sanitizer_reports (tests/lib.sh) looks.
with_runs=0
with() {
	rm -f "$WORK"/r "$WORK"/r.*
	vars=$1 opts=$2; shift 2
	# shellcheck disable=SC2086
	"$RUN" $opts env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/r" $vars "$@" \
	    >"$WORK/out" 2>"$WORK/err"
	with_runs=$((with_runs + 1))
	cp "$WORK/err" "$WORK/err.$with_runs"
}

# ---- the program's own SIGUSR1 -----------------------------------------------

# A vfork child that sets SIGUSR1's disposition before its exec sets its
# own (the exec resets it), in its parent's memory: the parent's report
# said "the program took SIGUSR1 for itself", which it had not.
with "" "" "$SIG" vfork-usr1
expect_eq "a vfork child's SIGUSR1: the parent goes on" "$(cat "$WORK/out")" "after raise
exit 0"
expect_grep "a vfork child's SIGUSR1: the parent's SIGUSR1 still asks for a live dump" \
    '^  a SIGUSR1 came but no live dump was written' "$WORK/r"
expect_no_grep "a vfork child's SIGUSR1: the parent's report does not say it was taken" \
    'took SIGUSR1 for itself' "$WORK/r"

with "" "" "$SIG" own-usr1
expect_eq "own SIGUSR1 handler, installed after start-up: it gets every signal" \
    "$(cat "$WORK/out")" "own handler ran 3 times
exit 0"
expect_eq "own SIGUSR1 handler: the same without the library" "$("$RUN" "$SIG" own-usr1)" \
    "$(cat "$WORK/out")"
expect_eq "own SIGUSR1 handler: no live dump, the exit report" "$(cd "$WORK" && ls r*)" r
# a kill -USR1 meant for a dump reaches the program now: the report's
# heading says so -- and one line on stderr as it happens, where the
# report goes to stderr too (with MUTEXSTAT_OUTPUT, as here, the
# program's stderr stays its own: xz, redis and memcached take SIGUSR1)
expect_eq "own SIGUSR1 handler, report to a file: nothing on stderr" "$(cat "$WORK/err")" ""
expect_grep "own SIGUSR1 handler: the report says it" \
    '^  the program took SIGUSR1 for itself: no more live dumps on it ' "$WORK/r"
"$RUN" env LD_PRELOAD="$MS_PRELOAD" "$SIG" own-usr1 >"$WORK/out" 2>"$WORK/err"
expect_eq "own SIGUSR1 handler, report to stderr: one line says so as it happens" \
    "$(head -n 1 "$WORK/err")" \
    "mutexstat: the program took SIGUSR1 for itself: no more live dumps on it (MUTEXSTAT_SIGNAL picks another, or none)"
"$RUN" env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_SIGNAL=USR2 "$SIG" own-usr1 >"$WORK/out" 2>"$WORK/err"
expect_eq "own SIGUSR1 handler, dumps on SIGUSR2: no note" \
    "$(grep -c 'took SIGUSR1' "$WORK/err")" 0
# ... but not where no report comes whatever the process does: with no
# exit report, or none from a process that locks nothing (the launcher's
# MUTEXSTAT_QUIET): the line would stand alone in the stderr a parent
# reads (make takes SIGUSR1 and locks nothing; cargo reads rustc's)
"$RUN" env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_EXIT_REPORT=0 "$SIG" own-usr1 >"$WORK/out" 2>"$WORK/err"
expect_eq "own SIGUSR1 handler, no exit report: stderr the program's own" "$(cat "$WORK/err")" ""
"$RUN" env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_QUIET=1 "$SIG" own-usr1 >"$WORK/out" 2>"$WORK/err"
expect_eq "own SIGUSR1 handler, MUTEXSTAT_QUIET: no line as it happens" \
    "$(grep -c '^mutexstat: the program took SIGUSR1' "$WORK/err")" 0
expect_grep "own SIGUSR1 handler, MUTEXSTAT_QUIET: its report's heading says it" \
    '^  the program took SIGUSR1 for itself: no more live dumps on it ' "$WORK/err"

# What the program sees of the signals the library handles is what it
# would see without it (the default), and a disposition it saves and puts
# back is that default: SIGUSR1 then ends it, as it would.
with "" "" "$SIG" sees-usr1
expect_eq "the program sees SIGUSR1 and SIGRTMAX-3 as without the library" \
    "$(cat "$WORK/out")" "sigaction: SIGUSR1 default
sigaction: SIGRTMAX-3 default
signal: SIGUSR1 was default
sigaction: SIGUSR1 was default
signal USR1"
expect_eq "... the same without the library" "$("$RUN" "$SIG" sees-usr1)" "$(cat "$WORK/out")"

with "" "--ignore 10" "$SIG" raise-usr1
expect_eq "SIGUSR1 ignored by the parent: still ignored" "$(cat "$WORK/out")" "after raise
exit 0"
expect_eq "SIGUSR1 ignored: the same without the library" \
    "$("$RUN" --ignore 10 "$SIG" raise-usr1)" "$(cat "$WORK/out")"
expect_eq "SIGUSR1 ignored: the program's stderr stays its own (MUTEXSTAT_OUTPUT)" "$(cat "$WORK/err")" ""
expect_eq "SIGUSR1 ignored: the report says live dumps are off" \
    "$(grep -cxF "  ${NOTE_IGNORED#mutexstat: }" "$WORK/r")" 1
expect_eq "SIGUSR1 ignored: no live dump" "$(cd "$WORK" && ls r*)" r
with MUTEXSTAT_OUTPUT= "--ignore 10" "$SIG" raise-usr1
expect_eq "SIGUSR1 ignored, the report on stderr: one line there says it" \
    "$(grep -cxF "$NOTE_IGNORED" "$WORK/err")" 1

with MUTEXSTAT_SIGNAL=none "--ignore 10" "$SIG" raise-usr1
expect_eq "SIGUSR1 ignored, MUTEXSTAT_SIGNAL=none: no note" "$(cat "$WORK/err")" ""

cat >"$WORK/early.c" <<'EOF'
/* a library whose constructor installs a SIGUSR1 handler */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
static void early_handler(int sig)
{
	(void)sig;
	if (write(1, "early handler\n", 14) < 0) {
	}
}
__attribute__((constructor)) static void early(void)
{
	struct sigaction old;
	sigaction(SIGUSR1, NULL, &old);
	fprintf(stderr, "early: SIGUSR1 was %s\n", old.sa_handler == SIG_DFL ? "default" : "taken");
	signal(SIGUSR1, early_handler);
}
EOF
if "$CC" -shared -fPIC -o "$WORK/early.so" "$WORK/early.c"; then
	# the last preloaded library starts first
	rm -f "$WORK"/r*
	"$RUN" env LD_PRELOAD="$MS_PRELOAD:$WORK/early.so" MUTEXSTAT_OUTPUT="$WORK/r" \
	    "$SIG" raise-usr1 >"$WORK/out" 2>"$WORK/err"
	expect_eq "a SIGUSR1 handler from before start-up: it runs" "$(cat "$WORK/out")" \
	    "early handler
after raise
exit 0"
	expect_eq "a SIGUSR1 handler from before start-up: no live dump" "$(cd "$WORK" && ls r*)" r
	if [ "$(head -n 1 "$WORK/err")" = "early: SIGUSR1 was default" ]; then
		expect_eq "a SIGUSR1 handler from before start-up: stderr stays the program's" \
		    "$(sed 1d "$WORK/err")" ""
		expect_eq "a SIGUSR1 handler from before start-up: the note in the report" \
		    "$(grep -cxF "  ${NOTE_HANDLER#mutexstat: }" "$WORK/r")" 1
	else
		echo "note: the library started before early.so here; its handler replaced ours"
	fi
else
	fail "cannot compile a shared library with $CC"
fi

# What changes: by default SIGUSR1 ends a process; under the library it
# asks for a live dump, and the program goes on.
expect_eq "SIGUSR1's default action without the library" "$("$RUN" "$SIG" raise-usr1)" \
    "signal USR1"
with "" "" "$SIG" raise-usr1
expect_eq "SIGUSR1 under the library: a live dump, the program goes on" \
    "$(cat "$WORK/out")" "after raise
exit 0"

# ---- every signal blocked in every thread --------------------------------------

for case in "sigwait" "sigwait-inherited --block-all"; do
	set -- $case
	mode=$1 opts=${2-}
	# nothing left of the case before: its "ready" and pid would be read
	rm -f "$WORK"/r* "$WORK/pid"
	: >"$WORK/out"
	# shellcheck disable=SC2086
	"$RUN" $opts sh -c 'echo $$ >"$1"; shift; exec "$@"' sh "$WORK/pid" \
	    env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/r" "$SIG" $mode \
	    >"$WORK/out" 2>"$WORK/err" &
	pid=$!
	wait_for "$WORK/out" '^ready$' || fail "$mode: never ready"
	prog=$(cat "$WORK/pid")
	kill -USR1 "$prog"
	wait_or_kill $pid 20 "$prog"
	expect_eq "all signals blocked ($mode): sigwait gets SIGUSR1, as without the library" \
	    "$(cat "$WORK/out")" "ready
sigwait got SIGUSR1
exit 0"
	expect_eq "all signals blocked ($mode): no live dump; the exit report" \
	    "$(cd "$WORK" && ls r*)" "r"
	expect_grep "all signals blocked ($mode): the exit report is complete" \
	    '^mutexstat: signals \(pid [0-9]+\) ran [^:]+: 1 thread used mutexes, 1 mutex tracked' "$WORK/r"
	expect_eq "all signals blocked ($mode): nothing on stderr" "$(cat "$WORK/err")" ""
done

# ... and a kill -USR1 that stays pending until the program exits (every
# thread blocks it, and it never calls sigwait): the exit report says no
# dump was written, and why -- an apache worker's dumps never came, and
# nothing said so.
rm -f "$WORK"/r* "$WORK/go"
: >"$WORK/out"
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/r" "$SIG" blocked-exit "$WORK/go" \
    >"$WORK/out" 2>"$WORK/err" &
pid=$!
wait_for "$WORK/out" '^ready$' || fail "blocked-exit: never ready"
kill -USR1 $pid
touch "$WORK/go"
wait_or_kill $pid 20
expect_eq "all signals blocked, SIGUSR1 pending at exit: no live dump; the exit report" \
    "$(cd "$WORK" && ls r*)" "r"
expect_grep "... whose heading says the signal came and why no dump was written" \
    '^  a SIGUSR1 came and is pending: every thread blocks it, so no live dump was written ' \
    "$WORK/r"
expect_eq "... within 120 columns" "$(awk 'length($0) > 120' "$WORK/r" | wc -l)" 0
with "" "" "$SIG" own-usr1
expect_no_grep "a program that never got the signal: no such line" 'came and is pending' "$WORK/r"

# the watchdog needs no signal: a hang in a program that blocks them all.
# A holder that sleeps (in sigwait) is shown where it is, read from /proc
# and its stack; one that runs could only be asked with a signal, which it
# blocks: it is not asked.
for mode in blocked-hang blocked-spin; do
	rm -f "$WORK"/r*
	: >"$WORK/out" # the background job truncates it only once it runs
	env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/r" MUTEXSTAT_WATCHDOG=1 \
	    "$SIG" $mode >"$WORK/out" 2>"$WORK/err" &
	pid=$!
	wait_for "$WORK/out" '^ready$' || fail "$mode: never ready"
	if wait_for "$WORK/r.1" '^#1 mutex '; then pass "all signals blocked ($mode): the watchdog reported the hang"
	else fail "all signals blocked ($mode): no watchdog report"; fi
	kill -USR1 $pid
	kill -KILL $pid
	wait $pid 2>/dev/null
	expect_grep "all signals blocked ($mode): the wait chain" '^WAIT CHAIN:$' "$WORK/r.1"
	if [ $mode = blocked-hang ]; then
		expect_grep "all signals blocked: the sleeping holder is shown in sigwait" \
		    '^  thread [0-9]+ is not waiting for a mutex; it is now at (__)?sigtimedwait' "$WORK/r.1"
		expect_grep "all signals blocked: ... at its line" '^ +hold_and_sleep\+0x[0-9a-f]+ \(.*signals\.c:' "$WORK/r.1"
	else
		expect_grep "all signals blocked: the running holder, blocking SIGRTMAX-3, is not asked where it is" \
		    '^  thread [0-9]+ is not waiting for a mutex; where it is now: not asked \(it blocks SIGRTMAX-3\)$' "$WORK/r.1"
	fi
	expect_eq "all signals blocked ($mode): kill -USR1 stays pending, no second report" \
	    "$(cd "$WORK" && ls r*)" "r.1"
done

# a signal thread (every signal blocked, sigwaitinfo for any of them) holds
# the mutex another thread waits for: the watchdog's report must not ask it
# where it is with SIGRTMAX-3, which its sigwaitinfo would take instead of
# the SIGTERM it waits for (the kernel unblocks the set while it waits); it
# is shown where it waits, read without a signal
rm -f "$WORK"/r*
: >"$WORK/out"
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/r" MUTEXSTAT_WATCHDOG=1 \
    "$SIG" sigwait-any >"$WORK/out" 2>"$WORK/err" &
pid=$!
wait_for "$WORK/out" '^ready$' || fail "sigwait-any: never ready"
wait_for "$WORK/r.1" 'is not waiting for a mutex' || fail "sigwait-any: no watchdog report"
kill -TERM $pid 2>/dev/null
wait_or_kill $pid 20
echo "exit $?" >>"$WORK/out"
expect_eq "a signal thread in sigwaitinfo: it gets the SIGTERM sent to it, not ours" \
    "$(cat "$WORK/out")" "ready
sigwaitinfo got SIGTERM
exit 0"
expect_grep "a signal thread in sigwaitinfo: the report shows it there" \
    '^  thread [0-9]+ is not waiting for a mutex; it is now at (__)?sigtimedwait' "$WORK/r.1"
expect_grep "a signal thread in sigwaitinfo: ... at its line" \
    '^ +hold_and_sigwait_any\+0x[0-9a-f]+ \(.*signals\.c:' "$WORK/r.1"

# ---- the program's own SIGRTMAX-3 ------------------------------------------------

# a holder blocked in read is shown without a signal; one that runs
# cannot be asked (the signal is the program's)
for mode in own-rtmax own-rtmax-spin; do
	rm -f "$WORK"/r* "$WORK/in"
	: >"$WORK/out"
	mkfifo "$WORK/in"
	env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/r" "$SIG" $mode \
	    <"$WORK/in" >"$WORK/out" 2>"$WORK/err" &
	pid=$!
	exec 3>"$WORK/in"
	wait_for "$WORK/out" '^ready$' || fail "$mode: never ready"
	found=
	n=1
	while [ $n -le 50 ]; do # until a dump sees the waiter waiting
		kill -USR1 $pid
		wait_for "$WORK/r.$n" '^Top ' || break
		if grep -q '^WAIT CHAIN:$' "$WORK/r.$n"; then found=$n; break; fi
		n=$((n + 1))
	done
	echo go >&3
	exec 3>&-
	wait $pid
	expect_eq "own SIGRTMAX-3 handler ($mode): no signal from the live dumps" "$(cat "$WORK/out")" "ready
own SIGRTMAX-3 handler ran 0 times"
	if [ -n "$found" ]; then
		if [ $mode = own-rtmax ]; then
			expect_grep "own SIGRTMAX-3 handler: the holder, blocked in read, is shown there" \
			    '^ +hold_and_read\+0x[0-9a-f]+ \(.*signals\.c:' "$WORK/r.$found"
		else
			expect_grep "own SIGRTMAX-3 handler: the dump says why the running holder's place is unknown" \
			    "^  thread [0-9]+ is not waiting for a mutex; where it is now: not asked \(SIGRTMAX-3 is the program's\)$" \
			    "$WORK/r.$found"
		fi
	else
		fail "own SIGRTMAX-3 handler ($mode): no dump saw the wait chain"
	fi
done

# ---- ends without exit handlers --------------------------------------------------

for case in "_exit 3" "quick_exit 4"; do
	set -- $case
	with "" "" "$SIG" $1
	expect_eq "$1: status and output as without the library" "$(cat "$WORK/out")" \
	    "$("$RUN" "$SIG" $1)"
	expect_eq "$1: its status" "$(tail -n 1 "$WORK/out")" "exit $2"
	expect_eq "$1: nothing on stderr" "$(cat "$WORK/err")" ""
done
# _exit from a thread: the report exit() would write (a program that ends
# so -- a linker, a tool in a hurry -- had none, and no word why), with
# the mutex the thread still held
with "" "" "$SIG" _exit
expect_eq "_exit: the report" "$(cd "$WORK" && ls r* 2>/dev/null)" "r"
expect_grep "_exit: the mutex still held" '^Mutexes still locked:$' "$WORK/r"
# quick_exit: the same, once the program's at_quick_exit handlers have
# run (glibc ends it with an _exit of its own, which no interposer sees)
with "" "" "$SIG" quick_exit
expect_eq "quick_exit: the report" "$(cd "$WORK" && ls r* 2>/dev/null)" "r"
expect_grep "quick_exit: the mutex still held" '^Mutexes still locked:$' "$WORK/r"
expect_grep "quick_exit: the at_quick_exit handler's lock and unlock" \
    "^  +1 $LOCK_RE +1 +0 .* lock_n_at_quick_exit \\(signals\\.c:[0-9]+\\)\$" "$WORK/r"
expect_grep "quick_exit: the handler's stack" \
    '^  first locked at   lock_n_at_quick_exit\+0x[0-9a-f]+ \(.*signals\.c:' "$WORK/r"
with MUTEXSTAT_EXIT_CODE=9 "" "$SIG" abba-quick_exit
expect_eq "quick_exit, handler inverts the order, MUTEXSTAT_EXIT_CODE=9: output" \
	"$(cat "$WORK/out")" "before the end
exit 9"
expect_grep "quick_exit: the handler's inversion" '^POTENTIAL DEADLOCK: 2 mutexes' "$WORK/r"
expect_eq "quick_exit after an inversion: nothing on stderr" "$(cat "$WORK/err")" ""
with "" "" "$SIG" abba-quick_exit
expect_eq "quick_exit after an inversion, no MUTEXSTAT_EXIT_CODE: its own status" \
	"$(tail -n 1 "$WORK/out")" "exit 0"
with MUTEXSTAT_EXIT_CODE=9 "" "$SIG" _exit
expect_eq "_exit with MUTEXSTAT_EXIT_CODE, no failing finding: the program's own status" \
	"$(tail -n 1 "$WORK/out")" "exit 3"
with MUTEXSTAT_EXIT_CODE=9 "" "$SIG" abba-_exit
expect_eq "_exit after an inversion, MUTEXSTAT_EXIT_CODE=9: its status" \
	"$(tail -n 1 "$WORK/out")" "exit 9"
expect_grep "_exit after an inversion: the finding" '^POTENTIAL DEADLOCK: 2 mutexes' "$WORK/r"
expect_eq "_exit after an inversion: nothing on stderr" "$(cat "$WORK/err")" ""
with "" "" "$SIG" abba-_exit
expect_eq "_exit after an inversion, no MUTEXSTAT_EXIT_CODE: its own status" \
	"$(tail -n 1 "$WORK/out")" "exit 0"
# a fork child's _exit (after a failed exec, a daemon's double fork)
# writes none: one report, the parent's
with "MUTEXSTAT_OUTPUT=$WORK/r.%p" "" "$SIG" fork-_exit
expect_eq "fork child's _exit: status and output as without the library" \
	"$(cat "$WORK/out")" "$("$RUN" "$SIG" fork-_exit)"
expect_eq "fork child's _exit: the parent's report alone" \
	"$(cd "$WORK" && ls r.* 2>/dev/null | wc -l):$(grep -c '^  forked from' "$WORK"/r.* 2>/dev/null)" "1:0"
# _exit from a signal handler of the program's writes none (a crash
# handler ends so; MUTEXSTAT_ON_CRASH asks for crash reports)
with "" "" "$SIG" term-_exit
expect_eq "SIGTERM handler's _exit: status and output as without the library" \
	"$(cat "$WORK/out")" "$("$RUN" "$SIG" term-_exit)"
expect_eq "SIGTERM handler's _exit: its status" "$(tail -n 1 "$WORK/out")" "exit 7"
expect_eq "SIGTERM handler's _exit: no report" "$(cd "$WORK" && ls r* 2>/dev/null)" ""
# a process that locked nothing (a shell) writes nothing at _exit
with "" "" "$SIG" nothing-_exit
expect_eq "_exit, nothing locked: status" "$(tail -n 1 "$WORK/out")" "exit 8"
expect_eq "_exit, nothing locked: no report" "$(cd "$WORK" && ls r* 2>/dev/null)" ""
with "" "" "$SIG" thread-exit
expect_eq "exit from a thread: status" "$(tail -n 1 "$WORK/out")" "exit 5"
expect_grep "exit from a thread: the report, the mutex still held" '^Mutexes still locked:$' "$WORK/r"

# ---- a handler that waits for a mutex ------------------------------------------
# Threads add a lock-order edge at every turn under a storm of SIGUSR2
# whose handler locks a mutex.  A handler that interrupted the library's
# edge bookkeeping, holding its lock, waited for that mutex, while the
# mutex's holder waited for the lock to note its own first use: 15 runs of
# 20 hung for ever.  The holder now gives up its wait after a second and
# its call goes unrecorded (counted in the report); a run with several
# such stalls on a loaded machine takes seconds, hence the 60 s.
expect_eq "handler that locks a mutex: without the library" \
	"$("$RUN" timeout -s KILL 60 "$SIG" handler-locks 300)" "ok
exit 0"
for i in 1 2 3 4; do
	with "" "" timeout -s KILL 60 "$SIG" handler-locks 300
	expect_eq "handler that locks a mutex, run $i: it ends as without the library" \
		"$(cat "$WORK/out")" "ok
exit 0"
	expect_eq "handler that locks a mutex, run $i: the report" \
		"$(cd "$WORK" && ls r* 2>/dev/null)" "r"
done

# ---- a timer's handler that takes a mutex ---------------------------------------
# SIGALRM every 200 us, whose handler makes a mutex under another, over two
# threads that make mutexes under a third.  A thread stopped in that
# handler inside the library's bookkeeping, holding one of its locks, waits
# for the handler's mutex; the handler holding that mutex waited for the
# library's lock a second, then 2 ms at each call, longer than the timer's
# period: main ran nothing but handlers, for ever (4 runs of 4 hung).  Now
# the library's waiters give up at once while such a thread is stopped.
expect_eq "timer's handler that locks: without the library" \
	"$("$RUN" timeout -s KILL 60 "$SIG" handler-timer 1000)" "ok
exit 0"
for i in 1 2 3; do
	with "" "" timeout -s KILL 60 "$SIG" handler-timer 1000
	expect_eq "timer's handler that locks, run $i: it ends as without the library" \
		"$(cat "$WORK/out")" "ok
exit 0"
done

# ---- a handler on a small alternate stack --------------------------------------
# A first lock is where a stack is captured; on a signal handler's 8 KB
# alternate stack (SIGSTKSZ) libunwind's first walk overflowed it, a
# SIGSEGV where the program runs without the library.  Not captured
# there now (the line is still named).
# (Not in a sanitized build: ASan's frames are several times larger, and
# its own handler of the overflow then spins on the small stack.)
if [ -z "$SAN_PRELOAD" ]; then
	expect_eq "8 KB alternate stack: without the library" \
		"$("$RUN" timeout -s KILL 60 "$SIG" altstack 8192)" "got 2
exit 0"
	with "" "" timeout -s KILL 60 "$SIG" altstack 8192
	expect_eq "8 KB alternate stack: as without the library" "$(cat "$WORK/out")" "got 2
exit 0"
	expect_grep "8 KB alternate stack: the handler's line named" \
		'first locked at +lock_two\+0x[0-9a-f]+ \(tests/signals\.c:[0-9]+, signals\)' "$WORK/r"
	# A wait captures a stack too: on a 4 KB alternate stack the walk went
	# below it (the kernel's SS_ONSTACK, the check then, is clear once
	# the stack pointer is below the stack), 3 runs of 3.
	with "" "" timeout -s KILL 60 "$SIG" altstack-contended 4096
	expect_eq "4 KB alternate stack, a wait: as without the library" "$(cat "$WORK/out")" \
		"got 1
exit 0"
	# A live dump asked a thread running a handler on a 6 KB alternate
	# stack where it was: its signal's frame and handler went below the
	# stack, 3 runs of 3.  Not asked there now, and said why.
	rm -f "$WORK"/dump*
	rc=0
	env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/dump" MUTEXSTAT_WATCHDOG=1 \
		timeout -s KILL 60 "$SIG" altstack-dump 6144 "$WORK/dump.1" >"$WORK/out" 2>&1 ||
		rc=$?
	expect_eq "6 KB alternate stack, a live dump: as without the library" \
		"$rc $(cat "$WORK/out")" "0 ok"
	expect_grep "6 KB alternate stack, a live dump: says why it is not asked" \
		"where it is now: not asked \(it may run a signal handler on its alternate stack, too near that stack's end to walk it\)$" \
		"$WORK/dump.1"
else
	echo "(sanitized build: the small alternate stacks are not tried)"
fi

# A seccomp filter refuses the signal that asks a running holder where it
# is (tgkill: EPERM): said so, not "it did not answer".
rm -f "$WORK"/dump*
rc=0
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/dump" MUTEXSTAT_WATCHDOG=1 \
	timeout -s KILL 60 "$SIG" seccomp-ask "$WORK/dump.1" >"$WORK/out" 2>&1 || rc=$?
if [ "$rc" = 77 ]; then
	echo "(no seccomp filter here: the refused ask is not tried)"
else
	expect_eq "tgkill refused: as without the library" "$rc $(cat "$WORK/out")" "0 ok"
	expect_grep "tgkill refused: the dump says the holder could not be asked, and why" \
		"where it is now: not asked \(sending it a signal failed: EPERM\)$" "$WORK/dump.1"
fi

# ---- a handler that locks between two writes of a held-set entry -------------
# A SIGTRAP handler that locks and unlocks a mutex of its own comes between
# every two instructions of lock and unlock pairs (x86-64's trap flag; no
# timing luck).  The held set's new top was written before its count was
# raised: the handler's lock there overwrote it, its unlock took the count
# back, and the thread's raise left the handler's mutex in the set for
# good -- a false lock-order edge from it at the thread's next lock, a
# false POTENTIAL DEADLOCK in every run (SIGALRM every 100 us made one in
# 20 runs of 3 s of eight threads).  The count comes first now.
with "" "" timeout -s KILL 60 "$SIG" handler-steps
if [ "$(tail -n 1 "$WORK/out")" = "exit 77" ]; then
	echo "(not x86-64: no trap flag, the stepped handler is not tried)"
else
	expect_eq "a handler between every two instructions: as without the library" \
		"$(cat "$WORK/out")" "ok, stepped
exit 0"
	expect_no_grep "a handler between every two instructions: no false inversion" \
		'^POTENTIAL DEADLOCK' "$WORK/r"
fi

# ---- a garbage collector's stop-the-world ------------------------------------
# A handler that parks its thread on a semaphore (async-signal-safe) while
# another thread goes on locking: parked inside the library with the lock
# of its record pool or of its read-write locks' slots held, the other
# thread waited for that lock for ever (2 runs of 4 of 6 s hung).  Waiters
# give up now: a second the first time, then milliseconds.
expect_eq "stop-the-world: without the library" \
	"$("$RUN" timeout -s KILL 60 "$SIG" stop-world 2000)" "ok
exit 0"
for i in 1 2 3; do
	with "" "" timeout -s KILL 60 "$SIG" stop-world 2000
	expect_eq "stop-the-world, run $i: it ends as without the library" \
		"$(cat "$WORK/out")" "ok
exit 0"
done

finish
