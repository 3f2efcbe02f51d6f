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

finish
