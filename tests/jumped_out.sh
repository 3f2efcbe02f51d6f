# jumped_out.sh - a program's signal handler leaves a wait in a pthread call
# by siglongjmp, and the thread ends by pthread_exit (tests/jumped_out.c):
# the same output and status as without the library.  (The library's waits
# linked a cleanup buffer into the thread's state; the jump left it
# pointing into a dead frame and pthread_exit jumped there: SIGSEGV.)
# What the library's records make of the wait left so: doc/limits.md.
. "$top_srcdir/tests/lib.sh"
T=$top_builddir/tests/jumped_out

for mode in cond mutex join rwlock; do
	bare=$(timeout 60 "$T" $mode 2>&1)
	expect_eq "$mode: without the library" "$bare" \
		"$(printf '%s: jumped out\n%s: the thread ended with 7' $mode $mode)"
	rc=0
	timeout 60 env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/$mode.report" \
		"$T" $mode >"$WORK/out" 2>&1 || rc=$?
	expect_eq "$mode: with the library, status" "$rc" 0
	expect_eq "$mode: with the library, the same" "$(cat "$WORK/out")" "$bare"
	expect_grep "$mode: the report was written" '^mutexstat: jumped_out \(pid [0-9]+\) ran ' \
		"$WORK/$mode.report"
done
# The wait left so stays in the library's records, but the watchdog looks
# at what the thread does: in another system call than futex(), it is not
# in that wait.  It was a DEADLOCK (and a STALL), and with
# MUTEXSTAT_ON_DEADLOCK=abort the program was aborted.
bare=$(timeout 60 "$T" watched 2>&1)
expect_eq "watched: without the library" "$bare" "$(printf 'watched: jumped out\nwatched: done')"
rc=0
timeout 60 env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/watched.report" MUTEXSTAT_WATCHDOG=1 \
	MUTEXSTAT_ON_DEADLOCK=abort "$T" watched >"$WORK/out" 2>&1 || rc=$?
expect_eq "watched: with the watchdog, status" "$rc" 0
expect_eq "watched: with the watchdog, the same" "$(cat "$WORK/out")" "$bare"
expect_eq "watched: the watchdog's report, no DEADLOCK or STALL" \
	"$(cat "$WORK"/watched.report.* 2>/dev/null | grep -Ec '^(DEADLOCK|STALL)')" 0
expect_grep "watched: ... the chain that was, to the sleeping main thread" \
	'^  thread [0-9]+ is not waiting for a mutex; it is now at ' "$WORK/watched.report.1"
finish
