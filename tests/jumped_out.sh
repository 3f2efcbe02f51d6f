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
finish
