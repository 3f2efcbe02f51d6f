#!/bin/sh
# tests/rw_blame.sh - a writer's wait behind readers is charged to the
# readers' unlock, or to none -- never to an unlock from before the wait
# (tests/rw_blame.c says how that happened).  Each of the 100 rounds has
# one wait the main thread's write unlock let in, so that line is charged
# 100 waits, never more (a few may go unattributed on a loaded machine:
# the waiter waits 5 ms at most for its holder's stack), and the readers'
# line at most 100.  "rw_blame barging": a mutex's waiter, woken and held
# in a signal handler while the main thread takes the mutex 20 times more:
# each round's wait is charged to the unlock that woke it, exactly, and
# none to the unlocks that barged in (each of those took a number and a
# stack capture, and the last one was charged the wait).  "rw_blame
# past-exact": the first case once the lock's reads are past those whose
# holds are all timed.  "rw_blame queue": four threads queued behind one
# 20 ms hold; each wait is split at the releases it was behind, and the
# long hold's unlock is charged every wait and most of their time, where
# the unlock that let each in was charged it all.

. "$top_srcdir/tests/lib.sh"

prog="$top_builddir/tests/rw_blame"
line_of() { grep -n "/\* $1 \*/" "$top_srcdir/tests/rw_blame.c" | cut -d: -f1; }
# waits_at LINE: the waits charged to that line of rw_blame.c (0: none)
waits_at() {
	awk -v at="rw_blame.c:$1," '/^  who made them wait/ { on = 1; next } on && /^ +waits / { next }
		on && !/^      / { on = 0 }
		on && index($0, at) { n += $1 } END { print n + 0 }' "$WORK/report"
}
for round in 1 2 3; do
	run_with "$WORK/out" "$WORK/err" "$prog"
	expect_eq "run $round: the program ran" "$?" 0
	w=$(waits_at "$(line_of W_UNLOCK)")
	if [ "$w" -ge 90 ] && [ "$w" -le 100 ]; then
		pass "run $round: the write unlock made $w of its 100 waits, no more"
	else
		fail "run $round: the write unlock made $w waits, want 90 to 100"
	fi
	r=$(waits_at "$(line_of R_UNLOCK)")
	if [ "$r" -ge 1 ] && [ "$r" -le 100 ]; then
		pass "run $round: the readers' unlock made $r of the other 100"
	else
		fail "run $round: the readers' unlock made $r waits, want 1 to 100"
	fi
done

# past-exact: the rounds' reads and writes past the lock's first 4096 of
# each, whose holds are all timed, so the unlocks are the plain case
# (lib/record/read_plain.h, write_plain.h) but for the waiter; the readers
# leave one after the other, so the second's unlock lets the writer in
# each round and is charged its wait, as W_UNLOCK is (2-6 of 100 when the
# plain case took an unlock with a waiter, which does not number its
# release).  The best of three runs counts, for a loaded machine.
both_charged() { [ "$w" -ge 90 ] && [ "$w" -le 100 ] && [ "$r" -ge 90 ] && [ "$r" -le 100 ]; }
got=""
for try in 1 2 3; do
	run_with "$WORK/out" "$WORK/err" "$prog" past-exact
	expect_eq "past-exact, run $try: the program ran" "$?" 0
	w=$(waits_at "$(line_of W_UNLOCK)")
	r=$(waits_at "$(line_of R_UNLOCK)")
	got="$got, $w and $r"
	both_charged && break
done
if both_charged; then
	pass "past-exact: the write unlock made $w waits, the readers' unlock $r"
else
	fail "past-exact: the write unlock's and the readers' unlock's waits were${got#,} (want 90 to 100 for each)"
fi

run_with "$WORK/out" "$WORK/err" "$prog" barging
expect_eq "barging: the program ran" "$?" 0
expect_eq "barging: the unlock that woke the waiter made all 100 waits" \
	"$(waits_at "$(line_of M_UNLOCK)")" 100
expect_eq "barging: the unlocks that barged in made none" "$(waits_at "$(line_of BARGE)")" 0
# share_at LINE: the share (%, without the sign) of the time charged to
# that line of rw_blame.c
share_at() {
	awk -v at="rw_blame.c:$1," '/^  who made them wait/ { on = 1; next } on && /^ +waits / { next }
		on && !/^      / { on = 0 }
		on && index($0, at) { s = $6; sub(/%/, "", s); n += s } END { print n + 0 }' "$WORK/report"
}
run_with "$WORK/out" "$WORK/err" "$prog" queue
expect_eq "queue: the program ran" "$? $(cat "$WORK/out")" "0 10 rounds of 4"
h=$(waits_at "$(line_of Q_HOLDER)") q=$(waits_at "$(line_of Q_UNLOCK)")
hs=$(share_at "$(line_of Q_HOLDER)")
# (a wait whose holder's stack did not come within 5 ms is not attributed;
# the share is 97-99 % on a quiet machine, 89 % seen with the suite
# running beside it, whose load stretches the queue's own short holds --
# the unlock that let each in was charged 26 % before)
if [ "$h" -ge 36 ] && [ "$h" -le 40 ] && [ "$q" -le 30 ] && [ "$hs" -ge 75 ]; then
	pass "queue: the long hold's unlock made $h of the 40 waits, $hs% of their time; the waiters' unlocks $q"
else
	fail "queue: the long hold's unlock made $h waits ($hs%), the waiters' unlocks $q: want 36-40 (75% or more) and at most 30"
fi
finish
