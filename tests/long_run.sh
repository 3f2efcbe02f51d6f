# long_run.sh - a program that runs for a long time (tests/long_run.c):
# threads that come and go, and mutex lives that end, cost no memory that
# stays, and the report after them is as true as at the start.
. "$top_srcdir/tests/lib.sh"
L=$top_builddir/tests/long_run

# same_run: tests/lib.sh

# ---- threads that come and go ----------------------------------------------
# Each takes a stack (a new lock-order edge), so libunwind locks a mutex of
# its own as the thread ends, after the library's thread-exit handler: the
# record that call got was never given back (4.5 kB a thread, and one more
# "live" thread in every report, for ever).  Measured over the second
# half of 16,000: each thread's edge (own mutex, then global; about 200
# bytes) is kept until 4,096 edges have been made, then the ended lives'
# are swept and their memory holds the next (lib/analysis/order.c).  From a
# quarter of 4,000, before any sweep, the edges grew the peak by 580 kB
# to 1.1 MB (1 MiB failed in 1 run of 8 beside the suite); from half of
# 16,000, by 4 to 156 kB.
MUTEXSTAT_FORMAT=text,json MUTEXSTAT_OUTPUT=$WORK/churn same_run "$L" "16000 threads" threads 16000
expect_grep "16000 threads: all seen" ': 16000 threads used mutexes, ' "$WORK/churn.txt"
if command -v jq >/dev/null 2>&1; then
	expect_eq "16000 threads: none is alive at the end (JSON threads; main used no mutex)" \
		"$(jq '.threads | length' "$WORK/churn.json")" 0
else
	echo "skip: jq is not installed: the JSON check"
fi
grow=$(sed -n 's/.*kB at the end: grew \(-\{0,1\}[0-9][0-9]*\) kB$/\1/p' "$WORK/out")
if sanitized; then
	echo "skip: the resident memory check (ASan's shadow memory and quarantine change it)"
elif [ -n "$grow" ] && [ "$grow" -le 1024 ]; then
	pass "16000 threads: peak resident memory grew ${grow} kB over the last 8000"
else
	fail "16000 threads: peak resident memory grew '${grow}' kB (more than 1 MiB): $(tail -n 1 "$WORK/out")"
fi

# ---- mutex lives that end, each having made a thread wait -----------------
# Each life's "who waited" and "who made them wait" lines are of no use
# once it has ended; they were kept for ever, so 20,000 such lives spent 1
# MiB of stack memory and the last wait's stacks were dropped.
MUTEXSTAT_STACK_MEMORY=1 same_run "$L" "20000 waits" waits 20000
expect_grep "20000 waits: all ended" '^  20000 mutexes destroyed and 0 initialised again' "$WORK/report"
expect_grep "20000 waits: each waited once" '^ +[0-9]+ 20000 ended +[0-9]+ +20000 ' "$WORK/report"
expect_no_grep "20000 waits: no stack dropped" 'stacks were dropped' "$WORK/report"
g=$(awk '/^global / { print $2 }' "$WORK/out")
awk -v g="$g" '$0 ~ "^#[0-9]+ mutex " g " " { on = 1 } on && /^$/ { exit } on' "$WORK/report" > "$WORK/global"
expect_grep "20000 waits: the global mutex's waiter, by its stack" \
	'^ +1 +[0-9.]+ .s +[0-9.]+ .s +100%  waiter\+0x[0-9a-f]+ \(tests/long_run.c:[0-9]+, long_run\)' "$WORK/global"
expect_grep "20000 waits: ... and who made it wait" \
	'^ +1 +[0-9.]+ .s +[0-9.]+ .s +100%  make_wait\+0x[0-9a-f]+ \(tests/long_run.c:[0-9]+, long_run\)' "$WORK/global"

# ---- a live dump of many threads waiting behind one -------------------------
# 50 threads wait for the mutex main holds while it sleeps: one WAIT CHAIN
# of 50 waits ends at main, and the dump reads where main is once, from /proc and its
# stack, without a signal -- it asked with a signal once for each chain,
# which cut 51 sleeps short, and a thread that did not answer cost 50 ms
# for each chain.  The dump signal itself may cut one (the kernel may hand
# it to main).
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/behind" MUTEXSTAT_FORMAT=text,json \
	"$L" behind 50 "$WORK/behind.1.json" > "$WORK/out" 2> "$WORK/err" &
pid=$!
if wait_for "$WORK/out" '^50 threads wait$' 20; then
	kill -USR1 $pid
	wait $pid
	expect_eq "behind: exit status" $? 0
	# told as one chain: the first wait in full, ten a line each, the
	# rest counted, main once
	expect_eq "behind: the 50 waits are one chain" \
		"$(grep -c '^WAIT CHAIN:$' "$WORK/behind.1.txt")" 1
	expect_grep "behind: ... the rest counted" '^  and 39 more threads wait for it$' \
		"$WORK/behind.1.txt"
	expect_eq "behind: ... ending at main, once" \
		"$(grep -c "^  thread $pid is not waiting for a mutex; it is now at .*nanosleep" \
			"$WORK/behind.1.txt")" 1
	expect_grep "behind: main was not asked with a signal: at most one sleep cut short" \
		'^sleeps cut short: [01]$' "$WORK/out"
else
	fail "behind: the waiters never all waited: $(cat "$WORK/out" "$WORK/err")"
	kill $pid
	wait $pid
fi

# ---- mutex lives that end, each in a lock-order edge ----------------------
# 30,000 lives taken under the global mutex, in 1 MiB of stack memory: an
# edge whose mutex has ended is of no use any more, and its memory goes to
# new ones.  (It was kept for ever: the budget went to dead edges, and the
# real inversion at the end was "not kept", its stacks dropped.)
MUTEXSTAT_STACK_MEMORY=1 same_run "$L" "30000 lives" lives 30000
a=$(awk '/^A / { print $2 }' "$WORK/out")
b=$(awk '/^B / { print $2 }' "$WORK/out")
expect_grep "30000 lives: all ended" '^  30000 mutexes destroyed and 0 initialised again' "$WORK/report"
expect_no_grep "30000 lives: every edge kept" 'lock-order edges were not kept' "$WORK/report"
expect_no_grep "30000 lives: no stack dropped" 'stacks were dropped' "$WORK/report"
expect_eq "30000 lives: the inversion of A and B found" \
	"$(grep -c '^POTENTIAL DEADLOCK: 2 mutexes taken in a cycle of orders' "$WORK/report")" 1
expect_grep "30000 lives: ... with A" "^  [AB]   mutex $a <mutex_a>, first locked at a_then_b" "$WORK/report"
expect_grep "30000 lives: ... and B" "^  [AB]   mutex $b <mutex_b>, first locked at a_then_b" "$WORK/report"
expect_grep "30000 lives: ... and where B was taken after A" \
	'^    [AB]   at  a_then_b\+0x[0-9a-f]+ \(tests/long_run.c:[0-9]+, long_run\)' "$WORK/report"

finish
