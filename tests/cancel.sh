# cancel.sh - the library adds no cancellation point: a thread with a
# cancellation pending goes through pthread_mutex_lock and
# pthread_mutex_unlock -- a mutex's first lock, where the library captures
# the call stack, and a lock that waits, where it captures the waiter's and
# the holder's -- and is cancelled at its next cancellation point, as
# without the library.  (libunwind read()s while it walks a stack: before
# the library turned cancellation off around its own work, such a thread
# was cancelled inside pthread_mutex_lock, and a waiting one hung.)
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
    '^ +[0-9]+ 0x[0-9a-f]+ +2 +1 ' "$WORK/contended.report"

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
	    '^  mutex 0x[0-9a-f]+ taken at cond_victim\+0x[0-9a-f]+ \(tests/cancel.c:' \
	    "$WORK/$mode.report"
	# the victim's lock and retake, the main thread's lock and its trylock
	# (EBUSY is no acquisition): 3
	expect_grep "$mode: 3 acquisitions, the retake among them" \
	    '^ +1 0x[0-9a-f]+ +3 ' "$WORK/$mode.report"
	expect_grep "$mode: the mutex is still locked at exit" \
	    '^Mutexes still locked:' "$WORK/$mode.report"
done

finish
