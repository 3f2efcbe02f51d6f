# cancel.sh - the library adds no cancellation point: a thread with a
# cancellation pending goes through pthread_mutex_lock and
# pthread_mutex_unlock -- a mutex's first lock, where the library captures
# the call stack, and a lock that waits, where it captures the waiter's and
# the holder's -- and is cancelled at its next cancellation point, as
# without the library.  (libunwind read()s while it walks a stack: before
# the library turned cancellation off around its own work, such a thread
# was cancelled inside pthread_mutex_lock, and a waiting one hung.)  And
# asynchronous cancellation, anywhere in the lock, as without the library.
. "$top_srcdir/tests/lib.sh"
B=$top_builddir
CANCEL="$B/tests/cancel"

for mode in first contended; do
	bare=$(timeout 20 "$CANCEL" $mode 2>&1)
	expect_eq "$mode: without the library" "$bare" \
	    "$mode: went through: yes; cancelled"
	rc=0
	timeout 20 env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/$mode.report" \
	    "$CANCEL" $mode >"$WORK/out" 2>"$WORK/err" || rc=$?
	expect_eq "$mode: with the library, status" "$rc" 0
	expect_eq "$mode: with the library, the same" "$(cat "$WORK/out")" "$bare"
	expect_grep "$mode: the report was written" '^mutexstat: cancel \(pid [0-9]+\) ran ' \
	    "$WORK/$mode.report"
done
# the wait happened: the contended lock is in the report
expect_grep "contended: one contention on the main thread's mutex" \
    '^ +[0-9]+ (0x[0-9a-f]+|<[^>]+>) +2 +1 ' "$WORK/contended.report"

# A cancel pending through lock calls that make new lock-order edges while
# other threads do too: the waits for the library's lock of them nap after
# a millisecond, and that nap is no cancellation point (it was glibc's
# nanosleep: the thread died there, holding G, on a loaded machine)
# (Not in a sanitized build: ASan's runtime, tearing down a thread its
# cancellation unwound, writes to stack its redzones still cover -- a
# stack-buffer-underflow in the program alone, without the library.)
if sanitized; then
	echo "skip: edges, in a sanitized build"
else
	expect_eq "edges: without the library" "$(timeout 20 "$CANCEL" edges 2>&1)" \
		"edges: cancelled; main's lock of G: ok"
	for run in 1 2; do
		expect_eq "edges, run $run: with the library, the same" \
			"$(timeout 20 env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_EXIT_REPORT=0 "$CANCEL" edges 2>&1)" \
			"edges: cancelled; main's lock of G: ok"
	done
fi

# A condition wait is a cancellation point: glibc takes the mutex back
# before the cleanup handlers run, and this handler leaves it locked, so
# the thread ends holding it.  The library saw the retake (it used to miss
# it: no finding, one acquisition too few, and the handler's own locks made
# no lock-order edges).
for mode in condwait timedwait; do
	bare=$(timeout 20 "$CANCEL" $mode 2>&1)
	expect_eq "$mode: without the library" "$bare" \
	    "$mode: cleanup ran holding the mutex: yes; cancelled"
	rc=0
	timeout 20 env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/$mode.report" \
	    "$CANCEL" $mode >"$WORK/out" 2>"$WORK/err" || rc=$?
	expect_eq "$mode: with the library, status" "$rc" 0
	expect_eq "$mode: with the library, the same" "$(cat "$WORK/out")" "$bare"
	expect_grep "$mode: the thread ended holding the mutex it waited with" \
	    '^HELD AT THREAD EXIT: thread [0-9]+ "cancel" ended holding 1 mutex' \
	    "$WORK/$mode.report"
	expect_grep "$mode: taken back at the wait" \
	    '^  mutex 0x[0-9a-f]+( <[^>]+>)? taken at cond_victim\+0x[0-9a-f]+ \(tests/cancel.c:' \
	    "$WORK/$mode.report"
	# the victim's lock and retake, the main thread's lock and its trylock
	# (EBUSY is no acquisition): 3
	expect_grep "$mode: 3 acquisitions, the retake among them" \
	    '^ +1 (0x[0-9a-f]+|<[^>]+>) +3 ' "$WORK/$mode.report"
	expect_grep "$mode: the mutex is still locked at exit" \
	    '^Mutexes still locked:' "$WORK/$mode.report"
done

# ---- asynchronous cancellation ----------------------------------------------
# A thread whose cancellation is asynchronous can be cancelled at any
# instruction, the library's too.  Cancelled while it held a lock of the
# library's (the table's, the thread records', the stack depot's), it left
# it held, and the next thread to want it waited for ever: the loop hung,
# one run in two or so, at a thread's exit or at the exit report.  And one
# cancelled in its wait stayed counted as waiting ("most waiters at once
# 3 (1496 now)"), even after it ended.  Four runs, with live dumps and the
# watchdog going on meanwhile.
# Not in a sanitized build: there a cancel that lands in the library's
# instrumented code leaves the redzones of the frames it unwinds poisoned,
# and ASan's runtime fails a CHECK in the program's cleanup handler
# (doc/testing.md, "Sanitizers and checkers").
loop_runs="1 2 3 4"
if sanitized; then
	echo "skip: async-loop, in a sanitized build"
	loop_runs=
fi
bare=$(timeout 60 "$CANCEL" async-loop 2000 2>&1)
loop_out="async-loop: 2000 rounds of 3 threads
async-loop: 6000 cancelled, 0 not; the mutex taken again after each round"
expect_eq "async-loop: without the library" "$bare" "$loop_out"
for run in $loop_runs; do
	: >"$WORK/out" # empty now: the job truncates it only once it runs
	env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/loop$run" MUTEXSTAT_WATCHDOG=1 \
	    "$CANCEL" async-loop 2000 >"$WORK/out" 2>"$WORK/err" &
	pid=$!
	wait_for "$WORK/out" '^async-loop: 2000 rounds' 20
	# a live dump every 0.3 s while it runs (at most 10), 60 s at most
	tenths=0
	while kill -0 $pid 2>/dev/null && [ $tenths -lt 600 ]; do
		[ $((tenths % 3)) -eq 0 ] && [ $tenths -lt 30 ] && kill -USR1 $pid
		sleep 0.1
		tenths=$((tenths + 1))
	done
	hung=no
	kill -0 $pid 2>/dev/null && { hung=yes; kill -KILL $pid; }
	rc=0
	wait $pid || rc=$?
	expect_eq "async-loop run $run: no hang" "$hung" no
	expect_eq "async-loop run $run: status" "$rc" 0
	expect_eq "async-loop run $run: the same output" "$(cat "$WORK/out")" "$loop_out"
	expect_grep "async-loop run $run: a live dump was written meanwhile" \
	    '^mutexstat: cancel \(pid [0-9]+\) ran ' "$WORK/loop$run.1"
	expect_grep "async-loop run $run: the waits counted (up to 3 at once)" \
	    '^  trylock 0 ok, 0 busy; timed out 0; most waiters at once [1-3];' "$WORK/loop$run"
	expect_no_grep "async-loop run $run: no thread waits at the end" \
	    'most waiters at once [0-9]+ \([0-9]+ now\)|^  waiting now: ' "$WORK/loop$run"
done

# A thread cancelled in its wait, whose cleanup handler lets the mutex go
# and stays: it waits no more, and a dump or the watchdog must not say it
# does (they did: "waiting now: 1 thread", and the watchdog's report after
# a second of it).
bare=$(timeout 20 "$CANCEL" async-ghost "$WORK/go0" 2>&1 & sleep 0.5; touch "$WORK/go0"; wait)
ghost_out="cleaned
async-ghost: cancelled, the mutex taken again"
expect_eq "async-ghost: without the library" "$bare" "$ghost_out"
: >"$WORK/out"
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/ghost" MUTEXSTAT_WATCHDOG=1 \
    "$CANCEL" async-ghost "$WORK/go" >"$WORK/out" 2>"$WORK/err" &
pid=$!
wait_for "$WORK/out" '^cleaned$' 20 || fail "async-ghost: never cleaned up"
kill -USR1 $pid
wait_for "$WORK/ghost.1" '^#1 ' 20 || fail "async-ghost: no dump"
expect_no_grep "async-ghost: the dump, no thread waiting" \
    'most waiters at once [0-9]+ \([0-9]+ now\)|^  waiting now: ' "$WORK/ghost.1"
sleep 2.5 # the watchdog's second, twice over
touch "$WORK/go"
rc=0
wait_or_kill $pid 20 || rc=$?
expect_eq "async-ghost: status" "$rc" 0
expect_eq "async-ghost: the same output" "$(cat "$WORK/out")" "$ghost_out"
expect_eq "async-ghost: no watchdog report (the only dump is the signal's)" \
    "$(ls "$WORK" | grep -c '^ghost\.[0-9]')" 1
expect_grep "async-ghost: one wait" \
    '^  trylock 0 ok, 0 busy; timed out 0; most waiters at once 1; ' "$WORK/ghost"

finish
