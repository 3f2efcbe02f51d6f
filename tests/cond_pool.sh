# cond_pool.sh - live dumps of a healthy thread pool that lives on
# condition waits (tests/cond_pool.c: workers holding a mutex of their own
# through timed and untimed waits on one queue, broadcast herds taking the
# queue's mutex back, checkers waiting behind the workers).  Twenty dumps:
# no DEADLOCK, every holder named with where it took the mutex, and no wait
# shown longer than any wait for that mutex ever lasted -- a dump that
# pauses to see whether a chain ending at a condition wait lasts measured
# the waits after the pause, so waits that had ended in it read 100 ms
# longer than they were.  Then a thread asleep in a condition wait while
# the condition's signals wake the other waiters (tests/cond_herd.c).
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

# ---- a thread asleep through the signals that wake the others --------------
# tests/cond_herd.c: a holder of h sleeps in a condition wait that is
# signalled every 5 ms, the signals waking 60 other waiters first, and a
# checker waits for h.  While the signals come, the checker's wait is a
# WAIT CHAIN ending at that condition wait in every dump, never a DEADLOCK
# (it was one whenever the holder slept through the dump's second look);
# once they stop, it is one -- though the main thread's timed waits on
# another condition keep taking the condition's mutex back (taking it is
# not wanting it: that read as a WAIT CHAIN too).
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/h" MUTEXSTAT_FORMAT=text,json \
	"$top_builddir/tests/cond_herd" 60 "$WORK/quiet" >"$WORK/hout" 2>"$WORK/herr" &
pid=$!
if wait_for "$WORK/hout" '^ready$' 20; then
	k=1
	while [ $k -le 5 ]; do
		kill -USR1 $pid
		wait_for "$WORK/h.$k.json" '^}' 20 || { fail "herd: no dump $k"; break; }
		k=$((k + 1))
	done
	: >"$WORK/quiet"
	wait_for "$WORK/hout" '^quiet$' 20 || fail "herd: the signals never stopped"
	# the last signal's waiter waits again soon; a dump while it still
	# takes q back sees a WAIT CHAIN, and a hang stays: up to 3 dumps
	sleep 0.3
	q=6
	while :; do
		kill -USR1 $pid
		wait_for "$WORK/h.$q.json" '^}' 20 || { fail "herd: no dump once quiet"; break; }
		grep -q '^DEADLOCK' "$WORK/h.$q.txt" || [ $q -ge 8 ] && break
		q=$((q + 1))
	done
else
	fail "herd: never started"
fi
rm -f "$WORK/quiet"
wait_or_kill $pid 20
expect_eq "herd: ends when told" "$?" 0
expect_eq "herd, signalled: no DEADLOCK in five dumps" \
	"$(cat "$WORK"/h.[1-5].txt | grep -c '^DEADLOCK')" 0
expect_eq "herd, signalled: nor in their JSON" \
	"$(cat "$WORK"/h.[1-5].json | grep -c '"kind": *"deadlock"')" 0
expect_eq "herd, signalled: the checker's WAIT CHAIN, ending at the condition wait, in each" \
	"$(grep -l -A5 '^WAIT CHAIN:$' "$WORK"/h.[1-5].txt | xargs grep -l 'waits for a condition (mutex 0x[0-9a-f]*) for' | wc -l)" 5
expect_grep "herd, quiet: a DEADLOCK" \
	'^DEADLOCK: thread [0-9]+ waits for a condition while holding a mutex other threads wait for$' \
	"$WORK/h.$q.txt"
expect_grep "herd, quiet: the checker in it, behind the holder" \
	'^    waits at      checker\+0x[0-9a-f]+ \(.*cond_herd\.c:[0-9]+' "$WORK/h.$q.txt"
expect_eq "herd, quiet: in the JSON, with its condition" \
	"$(jq '[.findings[] | select(.kind == "deadlock" and .condition_wait)] | length' "$WORK/h.$q.json")" 1
finish
