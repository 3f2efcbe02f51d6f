# watchdog.sh - MUTEXSTAT_WATCHDOG with MUTEXSTAT_ON_DEADLOCK=abort on
# programs that are slow but healthy: a holder that keeps a mutex until the
# watchdog has reported (as if it slept or did I/O), a chain of waiters
# behind it, a holder waiting for a condition a slow producer signals, a
# cycle through a timed lock that gives up.  Each gets the watchdog's report
# of its long wait, no DEADLOCK finding that is not one, and runs to its end
# (no abort).  And a program slow first, then really deadlocked: the
# watchdog reports the deadlock too, and aborts; and a deadlock through a
# condition wait's retake of its mutex, and a wait chain running into it.
# (tests/live.sh, fork.sh and crash.sh abort real hangs at once.)
. "$top_srcdir/tests/lib.sh"
P=$top_builddir/tests/watchdog

for mode in slow chain cond cond-timed timed; do
	rm -f "$WORK"/r*
	rc=0
	timeout -s KILL 120 env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/r" \
		MUTEXSTAT_WATCHDOG=1 MUTEXSTAT_ON_DEADLOCK=abort \
		"$P" "$mode" "$WORK/r.1" >"$WORK/out" 2>"$WORK/err" || rc=$?
	expect_eq "$mode: runs to its end, no abort" "$rc $(cat "$WORK/out")" "0 done"
	expect_grep "$mode: the watchdog reported the long wait" '^Top ' "$WORK/r.1"
	expect_grep "$mode: ... and says whose report it is" \
		"^  the watchdog's report \(MUTEXSTAT_WATCHDOG\): a thread has waited that long$" \
		"$WORK/r.1"
	expect_grep "$mode: the exit report" '^Top ' "$WORK/r"
	expect_eq "$mode: no other report" "$(cd "$WORK" && ls r*)" "r
r.1"
	case $mode in
	cond) # documented: a DEADLOCK unless a thread outside the chain signals
		expect_grep "cond: says who could end it" \
			'^  \(unless a thread outside this chain signals it\)$' "$WORK/r.1" ;;
	cond-timed) # a condition wait with a deadline ends by itself: no
		# DEADLOCK (it was one, "unless a thread outside this chain
		# signals it"), a WAIT CHAIN that says so
		expect_no_grep "cond-timed: no DEADLOCK" '^DEADLOCK' "$WORK/r.1"
		expect_grep "cond-timed: a WAIT CHAIN to the holder in its timed wait" \
			'^  thread [0-9]+ waits for a condition \(mutex 0x[0-9a-f]+\) for [0-9.]+ [a-zµ]+, until a deadline$' \
			"$WORK/r.1" ;;
	timed) # a cycle through a timed lock lasts until it gives up, if seen
		expect_no_grep "timed: no DEADLOCK forever" '^DEADLOCK: .*forever$' "$WORK/r.1" ;;
	*)	expect_no_grep "$mode: no DEADLOCK" '^DEADLOCK' "$WORK/r.1"
		expect_grep "$mode: a WAIT CHAIN to the holder" '^WAIT CHAIN:$' "$WORK/r.1" ;;
	esac
	expect_no_grep "$mode: no MISUSE" '^MISUSE' "$WORK/r"
done

# The watchdog's report does not cut a holder's sleep short: nobody asked
# for it, and a signal ends nanosleep with EINTR whatever SA_RESTART says.
# The holder sleeping in nanosleep is shown where it sleeps, read from
# /proc and its stack without a signal.
rm -f "$WORK"/r*
rc=0
timeout -s KILL 120 env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/r" MUTEXSTAT_WATCHDOG=1 \
	"$P" sleeper "$WORK/r.1" >"$WORK/out" 2>"$WORK/err" || rc=$?
expect_eq "sleeper: runs to its end, none of its sleeps cut short" "$rc $(cat "$WORK/out")" "0 sleeps cut short: 0
done"
expect_grep "sleeper: the holder is shown in nanosleep" \
	'it is now at (clock_)?nanosleep\+0x' "$WORK/r.1"
expect_grep "sleeper: ... at the line that sleeps" \
	"^ +sleeping_holder\+0x[0-9a-f]+ \(.*watchdog\.c:$(grep -n 'nanosleep(&t, NULL)' "$top_srcdir/tests/watchdog.c" | cut -d: -f1)," "$WORK/r.1"

# slow first (a report of a wait that is no deadlock), then a real one:
# still found, reported and aborted
rm -f "$WORK"/r*
rc=0
timeout -s KILL 120 env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/r" \
	MUTEXSTAT_WATCHDOG=1 MUTEXSTAT_ON_DEADLOCK=abort \
	"$P" slow-then-dead "$WORK/r.1" >"$WORK/out" 2>"$WORK/err" || rc=$?
expect_eq "slow, then dead: aborted after the slow part" "$rc $(cat "$WORK/out")" "134 slow part done"
expect_grep "slow, then dead: the first report, no deadlock" '^WAIT CHAIN:$' "$WORK/r.1"
expect_no_grep "slow, then dead: the first report has no DEADLOCK" '^DEADLOCK' "$WORK/r.1"
expect_grep "slow, then dead: the second report has the cycle" \
	'^DEADLOCK: 2 threads wait for each other, forever$' "$WORK/r.2"

# A deadlock through a condition wait's retake: the woken thread blocks
# taking its mutex back from a thread that waits for a mutex it holds.
# It is a cycle like any other (once shown as a chain ending at a thread
# "waiting for a condition", which the watchdog left alone): reported and
# aborted.
rm -f "$WORK"/r*
rc=0
timeout -s KILL 120 env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/r" \
	MUTEXSTAT_WATCHDOG=1 MUTEXSTAT_ON_DEADLOCK=abort \
	"$P" retake "$WORK/r.1" >"$WORK/out" 2>"$WORK/err" || rc=$?
expect_eq "retake: aborted" "$rc" 134
expect_eq "retake: stderr says why it aborts" "$(cat "$WORK/err")" \
	"mutexstat: aborting the program: a DEADLOCK (MUTEXSTAT_ON_DEADLOCK=abort)"
expect_grep "retake: the cycle" '^DEADLOCK: 2 threads wait for each other, forever$' "$WORK/r.1"
expect_grep "retake: the woken thread waits for its mutex again" \
	'^  thread [0-9]+ "watchdog" waits for mutex 0x[0-9a-f]+( <[^>]+>)? again, to return from its condition wait \(in it for ' \
	"$WORK/r.1"
expect_grep "retake: ... at its condition wait's line" \
	"^    waits at      retake_waiter\+0x[0-9a-f]+ \(.*watchdog\.c:$(grep -n 'RETAKE_WAITS' "$top_srcdir/tests/watchdog.c" | cut -d: -f1)," \
	"$WORK/r.1"
expect_grep "retake: the other thread, at its lock of A" \
	"^    waits at      .*watchdog\.c:$(grep -n 'RETAKE_BLOCKS' "$top_srcdir/tests/watchdog.c" | cut -d: -f1)" "$WORK/r.1"
expect_no_grep "retake: not called a wait for a condition" 'waits for a condition' "$WORK/r.1"
expect_no_grep "retake: nor listed among the long condition waits" \
	'^Threads in a condition wait for ' "$WORK/r.1"

# ... and in JSON: the retake's wait says so
rm -f "$WORK"/r*
rc=0
timeout -s KILL 120 env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/r" MUTEXSTAT_FORMAT=json \
	MUTEXSTAT_WATCHDOG=1 MUTEXSTAT_ON_DEADLOCK=abort \
	"$P" retake "$WORK/r.1" >"$WORK/out" 2>"$WORK/err" || rc=$?
expect_eq "retake, JSON: aborted" "$rc" 134
expect_eq "retake, JSON: one deadlock, its two waits, one of them the retake" \
	"$(jq -c '[.findings[] | select(.kind == "deadlock") | [.threads[].retake] | sort]' "$WORK/r.1.json")" \
	'[[false,true]]'

# A thread waiting behind the woken one (for a mutex it holds) is a wait
# chain that runs into that deadlock: it ends there, in text as in JSON
# (the text's walk went on round the cycle, and called a thread in it
# "not waiting for a mutex; it is now at __lll_lock_wait").
rm -f "$WORK"/r*
rc=0
timeout -s KILL 120 env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/r" MUTEXSTAT_FORMAT=text,json \
	MUTEXSTAT_WATCHDOG=1 MUTEXSTAT_ON_DEADLOCK=abort \
	"$P" retake-behind "$WORK/r.1.txt" >"$WORK/out" 2>"$WORK/err" || rc=$?
expect_eq "retake, behind: aborted" "$rc" 134
expect_grep "retake, behind: the cycle" '^DEADLOCK: 2 threads wait for each other, forever$' "$WORK/r.1.txt"
awk '/^WAIT CHAIN:$/ { on = 1; next } on && /^$/ { exit } on' "$WORK/r.1.txt" >"$WORK/chain"
expect_grep "retake, behind: the chain's wait" \
	"^    waits at      retake_behind\+0x[0-9a-f]+ \(.*watchdog\.c:$(grep -n 'RETAKE_BEHIND' "$top_srcdir/tests/watchdog.c" | cut -d: -f1)," \
	"$WORK/chain"
woken=$(sed -n 's/^  thread \([0-9]*\) "watchdog" waits for mutex 0x[0-9a-f]*\( <[^>]*>\)\{0,1\} again, .*/\1/p' "$WORK/r.1.txt")
expect_eq "retake, behind: the chain ends at the woken thread, in the deadlock" \
	"$(grep -E '^  thread [0-9]+ (waits in|is not waiting)' "$WORK/chain")" \
	"  thread $woken waits in the DEADLOCK above"
expect_eq "retake, behind: one wait in the chain, not the cycle again" \
	"$(grep -c ' waits for mutex ' "$WORK/chain")" 1
expect_eq "retake, behind: JSON, the chain's end is the deadlock" \
	"$(jq -c '[.findings[] | select(.kind == "wait-chain") | .end]' "$WORK/r.1.json")" \
	"[{\"thread\":$woken,\"deadlocked\":true}]"

# without abort, the same: two reports, and the program hangs on (killed here)
rm -f "$WORK"/r*
: >"$WORK/out"
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/r" MUTEXSTAT_WATCHDOG=1 \
	"$P" slow-then-dead "$WORK/r.1" >"$WORK/out" 2>"$WORK/err" &
pid=$!
if wait_for "$WORK/r.2" '^Top ' 60; then pass "report only: the deadlock after the slow part is reported"
else fail "report only: no report of the deadlock after the slow part"; fi
kill -0 $pid 2>/dev/null && pass "report only: the program goes on (hung)" || fail "report only: it ended"
kill -KILL $pid
wait $pid 2>/dev/null
expect_grep "report only: the cycle" '^DEADLOCK: 2 threads wait for each other, forever$' "$WORK/r.2"
expect_eq "report only: no third report" "$(cd "$WORK" && ls r*)" "r.1
r.2"

finish
