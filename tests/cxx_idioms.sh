#!/bin/sh
# tests/cxx_idioms.sh - C++ standard library idioms (tests/cxx_idioms.cpp)
# run as without the library, and their report says what happened, no more:
# a mutex libstdc++ unlocks at thread exit (notify_all_at_thread_exit) is
# not HELD AT THREAD EXIT, a real one is; a timed_mutex's mean wait counts
# the waits that timed out, as its total does, so it is never above its max;
# std::lock, std::scoped_lock, try_to_lock and hand-over-hand locking are no
# POTENTIAL DEADLOCK, a real inversion is; and one through a std::mutex on
# the heap (whose memory a later object may have reused) says so.
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

# ---- the owner's timed relock: a self-deadlock until the deadline, no wait ---
same_run self self-timeout
expect_grep "self: SELF-DEADLOCK until the deadline" \
	'^SELF-DEADLOCK: thread [0-9]+ relocked a mutex it holds, with a timeout, 1 time: it waited for itself until the deadline$' \
	"$WORK/self.report"
expect_grep "self: the timeout counted" '^  trylock 0 ok, 0 busy; timed out 1; ' "$WORK/self.report"
expect_no_grep "self: no mean wait (no thread waited for another)" 'mean wait' "$WORK/self.report"

# ---- lock orders that cannot deadlock ---------------------------------------
same_run orders lock-orders
expect_grep "orders: the report was written" '^mutexstat: cxx_idioms ' "$WORK/orders.report"
expect_no_grep "orders: no finding" '^[A-Z ]+:' "$WORK/orders.report"

# ---- a real inversion between static mutexes --------------------------------
same_run inversion inversion
expect_eq "inversion: one POTENTIAL DEADLOCK" \
	"$(grep -c '^POTENTIAL DEADLOCK: 2 mutexes taken in a cycle of orders$' "$WORK/inversion.report")" 1
expect_no_grep "inversion: no note about reused memory (both are static data)" \
	'^  note: ' "$WORK/inversion.report"
# Each mutex's line names where it was first locked with its line number
# whole: cut after it ("..."), or in the short form (with or without its
# parentheses), never in the middle of
# it (it read "cxx_idioms.cpp:2" for line 2xx).
for what in first second; do
	l=$(grep -n "lock_guard<std::mutex> [xy]($what);" "$top_srcdir/tests/cxx_idioms.cpp" | head -1 | cut -d: -f1)
	expect_grep "inversion: mutex '$what' first locked at line $l, shown whole" \
		"^  [AB]   mutex 0x[0-9a-f]+ <$what>, first locked at .*cxx_idioms\.cpp:$l(\)|, .*)?\$" "$WORK/inversion.report"
done
expect_eq "inversion: no line over 120 columns" \
	"$(sed 's/µ/u/g' "$WORK/inversion.report" | awk 'length($0) > 120' | wc -l)" 0

# ---- a cycle through a std::mutex whose memory held another object ----------
same_run reused reused
report=$WORK/reused.report
expect_eq "reused: one POTENTIAL DEADLOCK" \
	"$(grep -c '^POTENTIAL DEADLOCK: 2 mutexes taken in a cycle of orders$' "$report")" 1
# The job's mutex is the one first locked at its lock_guard's line; the
# note must name it, and it alone (the registry is static data).
line=$(grep -n 'lock_guard<std::mutex> x(j->m);' "$top_srcdir/tests/cxx_idioms.cpp" | cut -d: -f1)
heap=$(sed -n "s/^  \([AB]\)  *mutex 0x[0-9a-f]*, first locked at .*cxx_idioms\.cpp:$line\b.*/\1/p" "$report")
expect_grep "reused: a note on one mutex: no init seen, on the heap" \
	'^  note: [AB]: no init or destroy seen, on the heap or a stack \(a C\+\+ std::mutex\?\): objects that had$' \
	"$report"
expect_grep "reused: and what that means" \
	'^        its address earlier in the run are the same mutex here: the orders may be of different objects$' \
	"$report"
expect_eq "reused: the note is about the job's mutex (first locked at line $line)" \
	"$(sed -n 's/^  note: \([AB]\):.*/\1/p' "$report")" "${heap:-(not found)}"
# the same with std::shared_mutex: the note names it, and locks, not mutexes
same_run reused-shared reused-shared
report=$WORK/reused-shared.report
expect_eq "reused-shared: one POTENTIAL DEADLOCK" \
	"$(grep -c '^POTENTIAL DEADLOCK: 2 locks taken in a cycle of orders$' "$report")" 1
expect_grep "reused-shared: the note names std::shared_mutex" \
	'^  note: [AB]: no init or destroy seen, on the heap or a stack \(a C\+\+ std::shared_mutex\?\): objects that had$' \
	"$report"
expect_grep "reused-shared: ... and a lock" \
	'^        its address earlier in the run are the same lock here: the orders may be of different objects$' \
	"$report"
# ---- a unique_lock unlocked by another thread, then a real inversion ---------
# The unlock leaves the locking thread's held set stale; pruning it must not
# hide the inversion that follows (it did: the stale entry came back and the
# next lock of that mutex looked like a relock, which adds no edge).
same_run handoff handoff
expect_eq "handoff: one MISUSE" \
	"$(grep -c '^MISUSE: unlock by a thread that does not hold it: mutex 0x[0-9a-f]* <handed>, 1 time$' "$WORK/handoff.report")" 1
expect_eq "handoff: the inversion after it is one POTENTIAL DEADLOCK" \
	"$(grep -c '^POTENTIAL DEADLOCK: 2 mutexes taken in a cycle of orders$' "$WORK/handoff.report")" 1

# ---- a gate held on every edge but once -------------------------------------
# Judged from the first time each edge was seen, the gate made it a GUARDED
# INVERSION ("cannot deadlock"); the third thread's order without the gate
# can deadlock with the second's.  The finding shows that thread's edge.
same_run bypass gate-bypass
report=$WORK/bypass.report
expect_eq "bypass: one POTENTIAL DEADLOCK" \
	"$(grep -c '^POTENTIAL DEADLOCK: 2 mutexes taken in a cycle of orders$' "$report")" 1
expect_no_grep "bypass: no GUARDED INVERSION" '^GUARDED INVERSION' "$report"
l=$(grep -n 'BYPASS_SECOND' "$top_srcdir/tests/cxx_idioms.cpp" | cut -d: -f1)
expect_grep "bypass: the edge shown is the one taken without the gate (line $l)" \
	"^    [AB]   at  .*cxx_idioms\.cpp:$l," "$report"

# ---- a deadlock through a timed lock: not "forever" -------------------------
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/timed" MUTEXSTAT_FORMAT=text,json \
	"$prog" timed-deadlock >"$WORK/timed.out" 2>"$WORK/timed.err" &
pid=$!
if wait_for "$WORK/timed.out" '^deadlocked$' 20; then
	kill -USR1 $pid
	wait_for "$WORK/timed.1.txt" '^Top ' 20 || fail "timed: no dump"
	# the JSON file is written after the text: its last line
	wait_for "$WORK/timed.1.json" '^}$' 20 || fail "timed: no JSON dump"
else
	fail "timed: never deadlocked"
fi
kill -9 $pid; wait $pid 2>/dev/null
dump=$WORK/timed.1.txt
expect_grep "timed: the cycle, until the timed lock gives up" \
	'^DEADLOCK: 2 threads wait for each other, until a timed lock gives up$' "$dump"
expect_eq "timed: one wait is timed" \
	"$(grep -c '^    a timed lock (timedlock, clocklock): it gives up at its deadline$' "$dump")" 1
# that line follows the thread that waits at try_lock_for
twait=$(grep -n 'TIMED_WAITS' "$top_srcdir/tests/cxx_idioms.cpp" | cut -d: -f1)
expect_eq "timed: it is the try_lock_for's thread's" \
	"$(awk -v l="cxx_idioms.cpp:$twait," '/^  thread [0-9]+ .* waits for mutex/ { t = 0; getline; t = /a timed lock/; next }
		/^    waits at/ && t && index($0, l) { print "yes"; exit }' "$dump")" yes
if command -v jq >/dev/null 2>&1; then
	expect_eq "timed: JSON, the deadlock's waits' timed" \
		"$(jq -c '[.findings[] | select(.kind == "deadlock") | .threads[].timed] | sort' "$WORK/timed.1.json")" \
		'[false,true]'
fi

# The JSON finding lists the same mutex under "maybe_reused"; the static
# inversion's lists none.
if command -v jq >/dev/null 2>&1; then
	for s in reused inversion; do
		MUTEXSTAT_FORMAT=json MUTEXSTAT_OUTPUT=$WORK/$s run_with "$WORK/$s.jout" "$WORK/$s.jerr" \
			"$prog" "$s"
	done
	expect_eq "reused: JSON maybe_reused holds one mutex" \
		"$(jq -c '[.findings[] | select(.kind == "potential-deadlock") | .maybe_reused | length]' \
			"$WORK/reused.json")" "[1]"
	expect_eq "inversion: JSON maybe_reused is empty" \
		"$(jq -c '[.findings[] | select(.kind == "potential-deadlock") | .maybe_reused | length]' \
			"$WORK/inversion.json")" "[0]"
else
	echo "note: jq not installed: the JSON checks are skipped"
fi
finish
