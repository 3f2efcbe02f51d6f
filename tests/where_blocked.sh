#!/bin/sh
# where_blocked.sh - a live dump shows where a holder blocked in a system
# call is (poll, nanosleep, sigtimedwait; a join, inside the library's own
# pthread_timedjoin_np, whose frames are left out), three calls deep, read from /proc
# and its stack: no signal is sent to it, so none of its calls is cut short,
# and a thread that blocks or waits for signals is shown too.  Code built
# without frame pointers (-O2), with them (-O2 -fno-omit-frame-pointer,
# prologues the compiler interleaves) and unoptimised (-O0).
. "$top_srcdir/tests/lib.sh"
B=$top_builddir
SRC=$top_srcdir/tests/where_blocked.c
line_of() { grep -n "$1" "$SRC" | cut -d: -f1; }

for build in where_blocked where_blocked_fp where_blocked_O0; do
	for mode in poll sleep sigwait join; do
		t="$build $mode"
		rm -f "$WORK"/r*
		: >"$WORK/out"
		env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/r" \
			"$B/tests/$build" $mode "$WORK/r.1" >"$WORK/out" 2>"$WORK/err" &
		pid=$!
		wait_for "$WORK/out" '^ready$' || fail "$t: never ready"
		kill -USR1 $pid
		wait_or_kill $pid 60
		rc=$?
		expect_eq "$t: runs to its end, none of the holder's calls cut short" \
			"$rc $(cat "$WORK/out")" "0 ready
calls cut short: 0"
		case $mode in
		poll) call=poll; line=$(line_of INNER_POLLS) ;;
		sleep) call='(clock_)?nanosleep'; line=$(line_of INNER_SLEEPS) ;;
		sigwait) call='(sigtimedwait|__sigtimedwait)'; line=$(line_of INNER_SIGWAITS) ;;
		join) call='__futex_abstimed_wait_common(64)?'; line=$(line_of INNER_JOINS) ;;
		esac
		# the holder's frames, from the line that says where it is; in
		# a call of the library's (join), our frames are left out and
		# the line says the graph was read a moment before
		said='is not waiting for a mutex'
		[ $mode = join ] && said='was not waiting for a mutex when this was read'
		sed -n "/$said; it is now at/,/^\$/p" "$WORK/r.1" >"$WORK/frames"
		# (its first frame on a line of its own where it would pass 120
		# columns after the words)
		first=$(awk 'NR == 1 && sub(/.*; it is now at /, "") { print; exit }
			NR == 2 { sub(/^ +/, ""); print; exit }' "$WORK/frames")
		expect_eq "$t: the chain ends at the holder, in $call" \
			"$(echo "$first" | grep -cE "^$call\+0x")" 1
		# (", where_blocked" is left out where the first frame stood
		# after the words -- a thread id of 3 digits -- and the others
		# line up under it, with 46 columns left)
		f=$(sed -n 's/^ *\([a-z_]*\)+0x[0-9a-f]* (.*where_blocked\.c:\([0-9]*\)[,)].*/\1:\2/p' \
			"$WORK/frames" | tr '\n' ' ')
		expect_eq "$t: then each of the program's frames at its line" "$f" \
			"wait_once:$line inner:$(line_of INNER_CALLS) middle:$(line_of MIDDLE_CALLS) outer:$(line_of OUTER_CALLS) holder:$(line_of 'outer();') "
		# ... down to the thread's function, the C library's start left
		# out as in every stack of the report (report.md)
		expect_no_grep "$t: not the C library's thread start" \
			'^ +(start_thread|clone3?)\+0x' "$WORK/frames"
		expect_no_grep "$t: none of the library's own frames" 'libmutexstat' "$WORK/frames"
		expect_eq "$t: nothing on stderr" "$(cat "$WORK/err")" ""
	done
done
finish
