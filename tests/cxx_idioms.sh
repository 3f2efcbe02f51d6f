#!/bin/sh
# tests/cxx_idioms.sh - C++ standard library idioms (tests/cxx_idioms.cpp)
# run as without the library, and their report says what happened, no more:
# a mutex libstdc++ unlocks at thread exit (notify_all_at_thread_exit) is
# not HELD AT THREAD EXIT, a real one is; a timed_mutex's mean wait counts
# the waits that timed out, as its total does, so it is never above its max.
. "$top_srcdir/tests/lib.sh"
prog="$top_builddir/tests/cxx_idioms"

# same_run NAME SCENARIO: run it without and with the library; the same
# stdout and status, and status 0.
same_run() {
	"$prog" "$2" >"$WORK/$1.plain" 2>&1
	plain_rc=$?
	rm -f "$WORK/report"
	run_with "$WORK/$1.out" "$WORK/$1.err" "$prog" "$2"
	rc=$?
	expect_eq "$1: exit status without the library" "$plain_rc" 0
	expect_eq "$1: exit status with the library" "$rc" "$plain_rc"
	expect_eq "$1: output with the library" "$(cat "$WORK/$1.out")" "$(cat "$WORK/$1.plain")"
	cp "$WORK/report" "$WORK/$1.report" 2>/dev/null || : >"$WORK/$1.report"
}

# ns "28.3 ms": a report duration in nanoseconds (integer part).
ns() {
	echo "$1" | awk '{ u = $2; v = $1
		m = u == "ns" ? 1 : u == "µs" ? 1e3 : u == "ms" ? 1e6 : u == "s" ? 1e9 : -1
		if (m < 0) print "?"; else printf "%d\n", v * m }'
}

# ---- std::notify_all_at_thread_exit, set_value_at_thread_exit -------------
same_run exit at-thread-exit
expect_grep "exit: the report was written" '^mutexstat: cxx_idioms ' "$WORK/exit.report"
expect_no_grep "exit: no HELD AT THREAD EXIT (libstdc++ unlocks the mutex as the thread ends)" \
	'HELD AT THREAD EXIT' "$WORK/exit.report"
expect_grep "exit: the main thread and the 20 notifying threads used mutexes" ': 21 threads used mutexes' "$WORK/exit.report"

# ---- a thread that does end holding a mutex --------------------------------
same_run held held-at-exit
expect_eq "held: one HELD AT THREAD EXIT" \
	"$(grep -c '^HELD AT THREAD EXIT: thread [0-9]* "cxx_idioms" ended holding 1 mutex$' "$WORK/held.report")" 1

# ---- timed_mutex: 4 timeouts and a wait ------------------------------------
same_run timeouts timeouts
report=$WORK/timeouts.report
expect_no_grep "timeouts: no finding (the holder takes the timed mutex, then the gate)" \
	'^[A-Z ]+:' "$report"
# The timed mutex's section (timed out 4) and its row in the top table.
rank=$(awk '/^#[0-9]+ mutex/ { r = substr($1, 2) } /timed out 4;/ { print r; exit }' "$report")
if [ -z "$rank" ]; then
	fail "timeouts: no mutex with 'timed out 4'"
	sed 's/^/  | /' "$report" >&2
else
	pass "timeouts: the timed_mutex timed out 4 times (#$rank)"
	row=$(awk -v r="$rank" '/^Top [0-9]+ mutex/ { top = 1; next } top && $1 == r { print; exit }' "$report")
	max=$(ns "$(echo "$row" | awk '{ print $7, $8 }')")
	mean=$(ns "$(sed -n "/^#$rank mutex/,/^#/s/.*; mean wait \([0-9.]* [^ ;]*\).*/\1/p" "$report" | head -1)")
	case "$max$mean" in
	*'?'* | '') fail "timeouts: could not read wait max ($max) and mean wait ($mean)"
		sed 's/^/  | /' "$report" >&2 ;;
	*) if [ "$mean" -le "$max" ]; then
		pass "timeouts: mean wait ${mean} ns is at most wait max ${max} ns"
	else
		fail "timeouts: mean wait ${mean} ns is above wait max ${max} ns"
		sed 's/^/  | /' "$report" >&2
	fi ;;
	esac
fi

finish
