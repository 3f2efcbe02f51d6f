#!/bin/sh
# small_stack.sh - a report written on a small stack.  The exit report runs
# on the stack of the thread that exits, and a live dump on the dump
# thread's, as large as ulimit -s by default; a report needs more than 64
# KiB (its own frames are 67 KiB, libdw's come on top).  Under ulimit -s 64
# the program alone runs and ends well; under the library its exit report,
# from the main thread or from a thread of ulimit -s, once ended it with
# SIGSEGV (and so did a live dump: the dump thread's stack is now 2 MiB).  The report now has a stack of its own (2
# MiB) wherever the thread's is smaller.
. "$top_srcdir/tests/lib.sh"

S="$top_builddir/tests/settings"
SIG="$top_builddir/tests/signals"

for kb in 64 128; do
	bare=$( (ulimit -s $kb && "$S" threads 4) 2>&1) || :
	if [ "$bare" != "4 of 4 threads started, counter 4000" ]; then
		echo "(ulimit -s $kb: the program alone does not run here: $bare)"
		continue
	fi
	rc=0
	(ulimit -s $kb && exec env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/report" \
	    "$S" threads 4) >"$WORK/out" 2>"$WORK/err" || rc=$?
	expect_eq "ulimit -s $kb, exit report from the main thread: status and output" \
	    "$rc $(cat "$WORK/out")" "0 $bare"
	expect_eq "ulimit -s $kb: nothing on stderr" "$(cat "$WORK/err")" ""
	expect_grep "ulimit -s $kb: the report" \
	    '^mutexstat: settings \(pid [0-9]+\) ran .*: 4 threads used mutexes, 1 mutex tracked, 0 untracked$' \
	    "$WORK/report"
	expect_grep "ulimit -s $kb: 4000 acquisitions of the one mutex" '^ +1 0x[0-9a-f]+ +4000 ' "$WORK/report"

	# exit(5) from a thread whose stack is ulimit -s
	bare=$( (ulimit -s $kb && "$SIG" thread-exit) 2>&1; echo "status $?")
	rm -f "$WORK/report"
	rc=0
	(ulimit -s $kb && exec env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/report" \
	    "$SIG" thread-exit) >"$WORK/out" 2>"$WORK/err" || rc=$?
	expect_eq "ulimit -s $kb, exit report from a thread: status and output" \
	    "$(cat "$WORK/out"; echo "status $rc")" "$bare"
	expect_grep "ulimit -s $kb, exit from a thread: the report, the mutex still held" \
	    '^Mutexes still locked:$' "$WORK/report"
done

finish
