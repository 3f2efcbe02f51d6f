# cond_pool.sh - live dumps of a healthy thread pool that lives on
# condition waits (tests/cond_pool.c: workers holding a mutex of their own
# through timed and untimed waits on one queue, broadcast herds taking the
# queue's mutex back, checkers waiting behind the workers).  Twenty dumps:
# no DEADLOCK, every holder named with where it took the mutex, and no wait
# shown longer than any wait for that mutex ever lasted -- a dump that
# pauses to see whether a chain ending at a condition wait lasts measured
# the waits after the pause, so waits that had ended in it read 100 ms
# longer than they were.
. "$top_srcdir/tests/lib.sh"
command -v jq >/dev/null || { echo "skip: no jq"; exit 77; }

env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/d" MUTEXSTAT_FORMAT=text,json \
	"$top_builddir/tests/cond_pool" 32 "$WORK/stop" >"$WORK/out" 2>"$WORK/err" &
pid=$!
wait_for "$WORK/out" '^ready$' 20 || fail "never started"
k=1
while [ $k -le 20 ]; do
	kill -USR1 $pid
	wait_for "$WORK/d.$k.json" '^}' 20 || { fail "no dump $k"; break; }
	k=$((k + 1))
done
: >"$WORK/stop"
wait_or_kill $pid 60
expect_eq "runs to its end" "$?:$(cat "$WORK/out")" "0:ready
done"
expect_eq "twenty dumps" "$(ls "$WORK" | grep -c '^d\.[0-9]*\.txt$')" 20
expect_eq "no DEADLOCK in any" "$(cat "$WORK"/d.*.txt | grep -c '^DEADLOCK')" 0
expect_eq "no deadlock in the JSON" "$(cat "$WORK"/d.*.json | grep -c '"kind": *"deadlock"')" 0
chains=$(cat "$WORK"/d.*.txt | grep -c '^WAIT CHAIN:$')
[ "$chains" -ge 1 ] && pass "the waits are there ($chains wait chains)" ||
	fail "no wait chain in twenty dumps"
# the holder's held set read in the graph's second round, not only its
# first: a worker can let q go and take it again between the two
expect_eq "every holder named holds the mutex (no 'taken at ?')" \
	"$(cat "$WORK"/d.*.txt | grep -c 'taken at ?')" 0
# each wait for a mutex a dump showed has ended since, and is one of the
# waits the exit report counts: none is longer than their longest
jq -r '.mutexes[] | "\(.address) \(.wait_max_ns)"' "$WORK/d.json" | sort >"$WORK/max"
cat "$WORK"/d.[0-9]*.json | jq -r '.findings[] | .threads[]? |
	select(.retake == false) | "\(.waits_for) \(.waited_ns)"' | sort >"$WORK/shown"
[ -s "$WORK/shown" ] && pass "the dumps show waits ($(wc -l <"$WORK/shown"))" ||
	fail "no wait in the dumps' JSON"
longer=$(join "$WORK/shown" "$WORK/max" | awk '$2 > $3' | wc -l)
expect_eq "no wait shown longer than the longest for its mutex" "$longer" 0
join "$WORK/shown" "$WORK/max" | awk '$2 > $3' | head -3 >&2
finish
