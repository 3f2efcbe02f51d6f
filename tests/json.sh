# json.sh - MUTEXSTAT_FORMAT=json: PREFIX.json is valid JSON that says what
# the text report says: the same counters for the same mutexes, who waited,
# the findings (inversion, misuse, a live deadlock), histograms that count
# the waits, and strings escaped whatever bytes they hold; read-write and
# spin locks with their kind, reads and writes, and the modes of their
# operations, stacks, holds, waits and lock-order edges.
. "$top_srcdir/tests/lib.sh"
B=$top_builddir

# json_run NAME program args...: text and JSON reports to $WORK/NAME.{txt,json}
json_run() {
	name=$1; shift
	env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_FORMAT=text,json \
	    MUTEXSTAT_OUTPUT="$WORK/$name" "$@" > "$WORK/$name.out" 2> "$WORK/$name.err"
}

# valid NAME: jq parses the document and it is version 1
valid() {
	if jq . "$WORK/$1.json" > /dev/null 2>&1; then pass "$1: valid JSON"; else
		fail "$1: not valid JSON"; head -c 2000 "$WORK/$1.json" >&2; fi
	expect_eq "$1: version" "$(jq '.version' "$WORK/$1.json")" 1
}

# same_counts NAME: every address row of the text report's top table (or
# variable: "<cache_lock>", JSON's "symbol") has the same acquisitions and
# contentions in the JSON document.
same_counts() {
	awk '/^Top [0-9]+ (mutex(es)?|locks?) by/ { t = 1; getline; next } t && /^$/ { t = 0 }
	     t && $2 ~ /^(0x|<)/ { print $2, $3, $4 }' "$WORK/$1.txt" > "$WORK/$1.rows"
	rows=$(wc -l < "$WORK/$1.rows")
	[ "$rows" -gt 0 ] || fail "$1: no address rows in the text report"
	bad=0
	while read -r a acq con; do
		got=$(jq -r --arg a "$a" '.mutexes[] |
			select(.address == $a or "<\(.symbol)>" == $a) |
			"\(.acquisitions) \(.contended)"' "$WORK/$1.json")
		[ "$got" = "$acq $con" ] || { bad=$((bad + 1)); echo "  $1 $a: text '$acq $con', json '$got'" >&2; }
	done < "$WORK/$1.rows"
	expect_eq "$1: the $rows top rows' acquisitions and contentions match" "$bad" 0
}

# hist_counts NAME: each mutex's wait histogram counts its contended acquisitions
hist_counts() {
	expect_eq "$1: wait histograms count the waits that got the mutex" \
		"$(jq '[.mutexes[] | select(([.histograms.wait[].count] | add // 0) != .contended)] | length' "$WORK/$1.json")" 0
}

# ---- blame: who waited ---------------------------------------------------
json_run blame "$B/examples/blame" 3
valid blame
same_counts blame
hist_counts blame
J=$WORK/blame.json
expect_eq "blame: the hot mutex was contended 6 times" \
	"$(jq '[.mutexes[] | .contended] | max' "$J")" 6
expect_eq "blame: waiting stacks are waiter_one and waiter_two" \
	"$(jq -r '.mutexes[] | select(.contended > 0) | [.waiting_stacks[].stack[0].function] | sort | join(" ")' "$J")" \
	"waiter_one waiter_two"
expect_eq "blame: their counts add up to the contentions" \
	"$(jq '.mutexes[] | select(.contended > 0) | ([.waiting_stacks[].count] | add) == .contended' "$J")" true
expect_eq "blame: the waits of their stacks add up to the mutex's wait total, to the ns" \
	"$(jq '.mutexes[] | select(.contended > 0) | ([.waiting_stacks[].total_ns] | add) - .wait_total_ns' "$J")" 0
expect_eq "blame: so do the waits the holders' stacks made" \
	"$(jq '.mutexes[] | select(.contended > 0) | ([.holding_stacks[].total_ns] | add) - .wait_total_ns' "$J")" 0
expect_eq "blame: the holder's unlock is blamed for all of them" \
	"$(jq -r '.mutexes[] | select(.contended > 0) | "\(.holding_stacks[0].stack[0].function) \(.holding_stacks[0].count)"' "$J")" \
	"hold_too_long 6"
expect_eq "blame: frames have a source line" \
	"$(jq '[.mutexes[].first_locked_at // [] | .[] | select(.line == null)] | length' "$J")" 0
expect_eq "blame: recent operations are in happened-before order" \
	"$(jq '[.mutexes[] | [.recent_operations[].order] | . == sort] | all' "$J")" true
expect_eq "blame: a waited lock has its time" \
	"$(jq '[.mutexes[].recent_operations[] | select(.waited) | .time_ns != null] | all' "$J")" true
expect_eq "blame: no findings" "$(jq '.findings | length' "$J")" 0
expect_eq "blame: every lock a mutex, without reads or writes" \
	"$(jq '[.mutexes[] | .lock == "mutex" and .reads == null and .writes == null] | all' "$J")" true
expect_eq "blame: no operation has a mode" \
	"$(jq '[.mutexes[].recent_operations[].mode] | unique' "$J" | tr -d ' \n')" '[null]'

# ---- deadlock_abba: one inversion ----------------------------------------
json_run abba "$B/examples/deadlock_abba"
valid abba
same_counts abba
J=$WORK/abba.json
expect_eq "abba: one potential-deadlock finding" \
	"$(jq '[.findings[] | select(.kind == "potential-deadlock")] | length' "$J")" 1
expect_eq "abba: 2 mutexes, 2 edges" \
	"$(jq -r '.findings[] | select(.kind == "potential-deadlock") | "\(.mutexes | length) \(.edges | length)"' "$J")" "2 2"
expect_eq "abba: every edge's from_at and to_at is in deadlock_abba.c" \
	"$(jq '[.findings[] | select(.kind == "potential-deadlock") | .edges[] | (.from_at[0].file, .to_at[0].file) | test("deadlock_abba\\.c$")] | all' "$J")" true
expect_eq "abba: the edges make a cycle" \
	"$(jq '.findings[] | select(.kind == "potential-deadlock") | .edges | .[0].to == .[1].from and .[1].to == .[0].from' "$J")" true
expect_eq "abba: mutexes' edges have no modes" \
	"$(jq -c '[.findings[] | .edges[] | .from_mode, .to_mode] | unique' "$J")" '[null]'

# ---- an inversion whose mutexes were destroyed: kept, with its lives -------
json_run lives "$B/tests/deadlocks" lives 20
valid lives
J=$WORK/lives.json
DSRC=$top_srcdir/tests/deadlocks.c
destroy_a=$(grep -n '/\* LIVES_DESTROY_A \*/' "$DSRC" | cut -d: -f1)
expect_eq "lives: one potential-deadlock, closed 20 times, of 2 mutexes" \
	"$(jq -c '[.findings[] | select(.kind == "potential-deadlock") | [.count, .length]]' "$J")" '[[20,2]]'
expect_eq "lives: both lives destroyed" \
	"$(jq -c '[.findings[] | select(.kind == "potential-deadlock") | .lives[].ended]' "$J")" \
	'["destroyed","destroyed"]'
expect_eq "lives: the first round's A, where it was destroyed" \
	"$(jq -r --arg a "$(awk '$1 == "mutex" && $2 == "A" { print $3 }' "$WORK/lives.out")" \
		'.findings[] | select(.kind == "potential-deadlock") | .lives[] | select(.mutex == $a) | .ended_at[0].line' "$J")" \
	"$destroy_a"
expect_eq "lives: a kind and an init stack for each" \
	"$(jq -c '[.findings[] | select(.kind == "potential-deadlock") | .lives[] | [.mutex_kind, (.initialised_at | length > 0)]]' "$J")" \
	'[["normal",true],["normal",true]]'
expect_eq "lives: no mutex is live at the end" "$(jq '.mutexes_tracked' "$J")" 0

# ---- misuse: four kinds, each a finding ----------------------------------
json_run misuse "$B/examples/misuse"
valid misuse
J=$WORK/misuse.json
expect_eq "misuse: 4 misuse findings, as many as the text's MISUSE lines" \
	"$(jq '[.findings[] | select(.kind == "misuse")] | length' "$J") $(grep -c '^MISUSE:' "$WORK/misuse.txt")" "4 4"
expect_eq "misuse: the four kinds" \
	"$(jq -r '[.findings[] | select(.kind == "misuse") | .what] | sort | join(" ")' "$J")" \
	"destroy_locked unlock_not_owner unlock_unlocked use_destroyed"
expect_eq "misuse: each says where, in misuse.c" \
	"$(jq '[.findings[] | select(.kind == "misuse") | .last.caller.file | test("misuse\\.c$")] | all' "$J")" true
expect_eq "misuse: glibc's errors, each counted on its mutex" \
	"$(jq -r '[.mutexes[].errors | to_entries[] | "\(.key)=\(.value)"] | sort | join(" ")' "$J")" \
	"EBUSY=1 EINVAL=1 EPERM=1"
expect_eq "misuse: a thread ended holding a mutex" \
	"$(jq '[.findings[] | select(.kind == "held-at-thread-exit")] | length' "$J")" 1

# ---- scenario exact and contend: counts and histograms --------------------
json_run exact "$B/tests/scenario" exact
valid exact
same_counts exact
hist_counts exact
m2=$(awk '/^m2 /{print $2}' "$WORK/exact.out")
expect_eq "exact: m2's busy trylocks and timeout (not errors, as in the text)" \
	"$(jq -r --arg a "$m2" '.mutexes[] | select(.address == $a) | "\(.trylock_busy) \(.timeouts) \(.errors | length)"' "$WORK/exact.json")" \
	"2 1 0"
expect_eq "exact: m2's history has the timeout" \
	"$(jq -r --arg a "$m2" '.mutexes[] | select(.address == $a) | [.recent_operations[] | select(.result == "ETIMEDOUT") | .op] | join(" ")' "$WORK/exact.json")" \
	"timedlock"

json_run contend "$B/tests/scenario" contend
valid contend
same_counts contend
hist_counts contend
m1=$(awk '/^m1 /{print $2}' "$WORK/contend.out")
expect_eq "contend: 10 acquisitions, 5 contended, 9 owner changes, 5 in the histogram" \
	"$(jq -r --arg a "$m1" '.mutexes[] | select(.address == $a) | "\(.acquisitions) \(.contended) \(.owner_changes) \([.histograms.wait[].count] | add)"' "$WORK/contend.json")" \
	"10 5 9 5"
expect_eq "contend: hold times were measured" \
	"$(jq -r --arg a "$m1" '.mutexes[] | select(.address == $a) | .hold.timed > 0 and .hold.max_ns >= .hold.mean_ns' "$WORK/contend.json")" true

# A stack's total_ns is rounded as the stacks' running sum is, to add up to
# the mutex's total: a stack of one wait read its max_ns 1 ns over it (a
# stack in 8).  100 stacks of one wait each (tests/scenario.c waitsites):
# no max over its total.
json_run waitsites "$B/tests/scenario" waitsites 100
valid waitsites
expect_eq "waitsites: 100 waiting stacks of one wait" \
	"$(jq '[.mutexes[].waiting_stacks[] | select(.count == 1)] | length' "$WORK/waitsites.json")" 100
expect_eq "waitsites: no stack's max_ns over its total_ns" \
	"$(jq -c '[.mutexes[] | (.waiting_stacks + .holding_stacks)[] | select(.max_ns > .total_ns) | [.count, .total_ns, .max_ns]]' "$WORK/waitsites.json")" \
	"[]"
expect_eq "waitsites: the waits of the stacks still add up to the mutex's total" \
	"$(jq '.mutexes[] | select(.contended > 0) | ([.waiting_stacks[].total_ns] | add) - .wait_total_ns' "$WORK/waitsites.json")" 0

# ---- strings are escaped: a program named with quotes, tabs, bad UTF-8 ----
odd=$(printf 'sc"en\\ar\tio\377x')
ln -s "$B/tests/scenario" "$WORK/$odd"
json_run odd "$WORK/$odd" exact
valid odd
expect_eq "odd name: escaped, the bad byte replaced" \
	"$(jq -r '.program' "$WORK/odd.json" | od -An -c | tr -s ' ' | tr -d '\n')" \
	"$(printf 'sc"en\\ar\tio\357\277\275x\n' | od -An -c | tr -s ' ' | tr -d '\n')"

# live_json NAME FORMAT MODE READY: a live dump of tests/scenario MODE once
# it has printed READY, in FORMAT, as $WORK/NAME.1.json
live_json() {
	env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_FORMAT=$2 MUTEXSTAT_OUTPUT="$WORK/$1" \
		"$B/tests/scenario" $3 > "$WORK/$1.out" 2> "$WORK/$1.err" &
	pid=$!
	wait_for "$WORK/$1.out" "^$4\$" || fail "$1: never $4"
	kill -USR1 $pid
	n=0 # the JSON file is written after the text one: wait until it parses
	while [ $n -lt 600 ] && ! { [ -s "$WORK/$1.1.json" ] &&
		jq -e '.version == 1' "$WORK/$1.1.json" > /dev/null 2>&1; }; do
		sleep 0.1; n=$((n + 1))
	done
	kill -9 $pid; wait $pid 2>/dev/null
}

# ---- a live dump of a deadlocked program ---------------------------------
live_json live text,json hang deadlocked
valid live.1
J=$WORK/live.1.json
expect_eq "live: one deadlock finding of 2 threads" \
	"$(jq '[.findings[] | select(.kind == "deadlock") | .threads | length] | join(" ")' "$J")" '"2"'
expect_eq "live: each waits for the mutex the other holds" \
	"$(jq '.findings[] | select(.kind == "deadlock") | .threads | .[0].held_by == .[1].thread and .[1].held_by == .[0].thread' "$J")" true
expect_eq "live: the waits are at hang_one and hang_two" \
	"$(jq -r '[.findings[] | select(.kind == "deadlock") | .threads[].at.function] | sort | join(" ")' "$J")" \
	"hang_one hang_two"
expect_eq "live: both threads are waiting in the threads list" \
	"$(jq '[.threads[] | select(.waiting_for != null)] | length' "$J")" 2
# text first, JSON second: every format counts waits to the report's one
# moment, its run_ns, within the ticks-to-ns rounding (JSON's own reading
# of the graph came ~200 ms later, and said the waits had begun before the
# threads called lock)
expect_eq "live: each wait counted to the moment of run_ns" \
	"$(jq '[.threads[] | select(.waiting_for != null) | .waiting_for.since_ns + .waiting_for.waited_ns - $r | fabs < 1000000] | unique' --argjson r "$(jq .run_ns "$J")" "$J")" \
	'[
  true
]'
expect_eq "live: each wait names the variable it waits for, as the text" \
	"$(jq -r '[.findings[] | select(.kind == "deadlock") | .threads[].symbol] | sort | join(" ")' "$J")" \
	"m1 m2"
expect_eq "live: the threads list names what each holds and waits for" \
	"$(jq -r '[.threads[] | select(.waiting_for != null) | "\(.held[0].symbol)>\(.waiting_for.symbol)"] | sort | join(" ")' "$J")" \
	"m1>m2 m2>m1"
expect_eq "live: the inversion too" \
	"$(jq '[.findings[] | select(.kind == "potential-deadlock")] | length' "$J")" 1
expect_eq "live: no wait chain (both waits are the deadlock's)" \
	"$(jq '[.findings[] | select(.kind == "wait-chain")] | length' "$J")" 0

# ---- a condition wait holding the mutex its signaller waits for ------------
live_json cond json condhang hung
expect_eq "condition wait: a deadlock finding, as in the text report" \
	"$(jq '[.findings[] | select(.kind == "deadlock" and .condition_wait)] | length' "$WORK/cond.1.json")" 1
expect_eq "condition wait: the blocked signaller" \
	"$(jq -r '.findings[] | select(.kind == "deadlock" and .condition_wait) | .threads[0].at.function' "$WORK/cond.1.json")" \
	cond_signaller
expect_eq "condition wait: its mutex (m1; it holds m2) is named" \
	"$(jq -r '.findings[] | select(.kind == "deadlock" and .condition_wait) | .condition_mutex_symbol' "$WORK/cond.1.json")" \
	m1

# ---- a wait chain: the main thread waits behind a holder in pause() -------
line_of() { grep -n "$1" "$top_srcdir/tests/scenario.c" | cut -d: -f1; }
live_json chain json holdsleep waiting
J=$WORK/chain.1.json
valid chain.1
expect_eq "wait chain: one finding, as the text report's WAIT CHAIN, and no deadlock" \
	"$(jq -r '[.findings[] | .kind] | join(" ")' "$J")" "wait-chain"
expect_eq "wait chain: the main thread waits at holdsleep, for the holder" \
	"$(jq -r '.findings[0] | "\(.threads | length) \(.threads[0].thread == .end.thread) \(.threads[0].held_by == .end.thread) \(.threads[0].at.function)"' "$J")" \
	"1 false true holdsleep"
expect_eq "wait chain: the wait names its variable" \
	"$(jq -r '.findings[0].threads[0].symbol' "$J")" m1
expect_eq "wait chain: its end is where the holder is now: pause, at the line" \
	"$(jq -r '.findings[0].end | "\(.now_at[0].function) \(.now_at[1].function):\(.now_at[1].line) \(.not_asked)"' "$J")" \
	"pause holder_sleeps:$(line_of HOLDSLEEP_PAUSES) null"
expect_eq "wait chain: where it is now ends at the program's code, not the C library's start" \
	"$(jq -r '[.findings[0].end.now_at[].function | select(. == "__libc_start_call_main" or . == "__libc_start_main" or . == "_start" or . == "start_thread" or . == "clone3")] | length' "$J")" 0
live_json spin json holdspin waiting
expect_eq "wait chain: a running holder is asked, its loop's line first" \
	"$(jq -r '.findings[0].end.now_at[0] | "\(.function):\(.line)"' "$WORK/spin.1.json")" \
	"holder_spins:$(line_of HOLDSPIN_RUNS)"

# ---- mutexes that ended: their site line keeps what a live one shows ----
# (tests/scenario.c endedwait: a named pool mutex, two lives at one line,
# each made a thread wait 3 times, destroyed)
json_run ended "$B/tests/scenario" endedwait
valid ended
E=$WORK/ended.json
expect_eq "ended: one site line, 2 lives, named" \
	"$(jq -r '.ended | length, .[0].mutexes, .[0].name' "$E" | tr '\n' ' ')" "1 2 ended pool "
expect_eq "ended: who waited, 6 waits at the waiter's line" \
	"$(jq -r '.ended[0].waiting_stacks | length, .[0].count, "\(.[0].stack[0].function):\(.[0].stack[0].line)"' "$E" | tr '\n' ' ')" \
	"1 6 wait_for_pool:$(line_of ENDED_WAITS) "
expect_eq "ended: who made them wait, 6 at the unlock that let them in" \
	"$(jq -r '.ended[0].holding_stacks | length, .[0].count, "\(.[0].stack[0].function):\(.[0].stack[0].line)"' "$E" | tr '\n' ' ')" \
	"1 6 pool_life:$(line_of ENDED_LETS_IN) "
expect_eq "ended: the waits of the stacks add up to the line's wait total, to the ns" \
	"$(jq '.ended[0] | ([.waiting_stacks[].total_ns] | add) - .wait_total_ns' "$E")" 0
expect_eq "ended: the wait histogram counts the 6 waits" \
	"$(jq '[.ended[0].histograms.wait[].count] | add' "$E")" 6
expect_eq "ended: where the last life was first locked and initialised" \
	"$(jq -r '.ended[0] | "\(.first_locked_stack[0].line) \(.initialised_at[0].line)"' "$E")" \
	"$(line_of ENDED_HOLDS) $(line_of ENDED_INIT)"
expect_eq "ended: the last life's recent operations" \
	"$(jq -r '[.ended[0].recent_operations[] | .op + (if .waited then "+wait" else "" end)] | join(",")' "$E")" \
	"init,lock,unlock,lock+wait,unlock,lock,unlock,lock+wait,unlock,lock,unlock,lock+wait,unlock,destroy"
# ---- read-write and spin locks (tests/rw_formats.c) ------------------------
RW=$B/tests/rw_formats
rw_line() { grep -n "$1" "$top_srcdir/tests/rw_formats.c" | cut -d: -f1; }
# addr NAME RUN: the address tests/rw_formats printed for lock NAME
addr() { awk -v n="$1" '$1 == n { print $2 }' "$WORK/$2.out"; }
# lock RUN NAME FILTER: jq FILTER of lock NAME's object
lock() { jq -r --arg a "$(addr "$2" "$1")" ".mutexes[] | select(.address == \$a) | $3" "$WORK/$1.json"; }

# one thread: 1000 reads and 10 writes, 100 spin lock pairs; an inversion
json_run rwcounts "$RW" counts inversion
valid rwcounts
same_counts rwcounts
expect_eq "rwlock: its lock and kind" "$(lock rwcounts rw '"\(.lock) \(.kind)"')" \
	"rwlock reader-preferring, no init seen"
expect_eq "rwlock: 1010 acquisitions, 1000 reads, 10 writes, one reader at once" \
	"$(lock rwcounts rw '"\(.acquisitions) \(.reads.acquisitions) \(.writes.acquisitions) \(.reads.readers_max)"')" \
	"1010 1000 10 1"
expect_eq "rwlock: nothing waited, no reader now" \
	"$(lock rwcounts rw '"\(.reads.contended) \(.writes.contended) \(.writes.behind_readers) \(.reads.readers_now)"')" \
	"0 0 0 0"
expect_eq "rwlock: each operation's mode" \
	"$(lock rwcounts rw '[.recent_operations[] | "\(.op)=\(.mode)"] | unique | join(",")')" \
	"rdlock=read,unlock (read)=read,unlock (write)=write,wrlock=write"
expect_eq "spin lock: its lock and kind, 100 acquisitions, no reads or writes" \
	"$(lock rwcounts spin '"\(.lock) \(.kind) \(.acquisitions) \(.reads) \(.writes)"')" \
	"spin spin 100 null null"
expect_eq "spin lock: its operations have no mode" \
	"$(lock rwcounts spin '[.recent_operations[].mode] | unique | map(tostring) | join(",")')" null
expect_eq "inversion: one potential-deadlock of two rwlocks" \
	"$(jq -c '[.findings[] | select(.kind == "potential-deadlock") | [.lives[].lock]]' "$WORK/rwcounts.json")" \
	'[["rwlock","rwlock"]]'
expect_eq "inversion: A written then B read, B written then A read" \
	"$(jq -r --arg a "$(addr A rwcounts)" '.findings[] | select(.kind == "potential-deadlock") |
		[.edges[] | "\(if .from == $a then "A" else "B" end) \(.from_mode) \(if .to == $a then "A" else "B" end) \(.to_mode)"] |
		sort | join(", ")' "$WORK/rwcounts.json")" \
	"A write B read, B write A read"

# contended: a reader waits for a writer and a writer for a reader, on rw
# and on an rwlock then destroyed; a lock only written; a spin lock
json_run rwcontend MUTEXSTAT_STACK_SAMPLE=1 "$RW" contend ended
valid rwcontend
same_counts rwcontend
hist_counts rwcontend
expect_eq "contend: rw's 2 reads and 2 writes, one wait each, the writer's behind a reader" \
	"$(lock rwcontend rw '"\(.reads.acquisitions) \(.writes.acquisitions) \(.reads.contended) \(.writes.contended) \(.writes.behind_readers)"')" \
	"2 2 1 1 1"
expect_eq "contend: reads' and writes' waits add up to the lock's" \
	"$(lock rwcontend rw '.reads.wait_total_ns + .writes.wait_total_ns == .wait_total_ns')" true
expect_eq "contend: each mode's histogram counts its wait" \
	"$(lock rwcontend rw '"\([.reads.histograms.wait[].count] | add) \([.writes.histograms.wait[].count] | add)"')" "1 1"
expect_eq "contend: who waited, in which mode" \
	"$(lock rwcontend rw '[.waiting_stacks[] | "\(.stack[0].function)=\(.mode)"] | sort | join(" ")')" \
	"read_waiter=read write_waiter=write"
expect_eq "contend: who made them wait, the mode each let go of" \
	"$(lock rwcontend rw '[.holding_stacks[] | "\(.stack[0].line)=\(.mode)"] | sort | join(" ")')" \
	"$(printf '%s\n' "$(rw_line WR_LETS_IN)=write" "$(rw_line RD_LETS_IN)=read" | sort | tr '\n' ' ' | sed 's/ $//')"
expect_eq "contend: a lock only written: its stacks are writes'" \
	"$(lock rwcontend wo '[.waiting_stacks[], .holding_stacks[] | .mode] | join(" ")')" "write write"
expect_eq "contend: a spin lock's stacks have no mode" \
	"$(lock rwcontend spin '"\(.contended) \([.waiting_stacks[], .holding_stacks[] | .mode] | map(tostring) | join(" "))"')" \
	"1 null null"
expect_eq "ended: the rwlock's site line, with its reads and writes" \
	"$(jq -r '.ended[] | select(.lock == "rwlock") | "\(.mutexes) \(.reads.acquisitions) \(.writes.acquisitions) \(.reads.contended) \(.writes.contended)"' "$WORK/rwcontend.json")" \
	"1 2 2 1 1"
expect_eq "ended: its stacks' modes" \
	"$(jq -r '.ended[] | select(.lock == "rwlock") | [.waiting_stacks[] | "\(.stack[0].function)=\(.mode)"] | sort | join(" ")' "$WORK/rwcontend.json")" \
	"read_waiter=read write_waiter=write"

# a live dump of a deadlock through a read hold: main holds A for read and
# waits to write B; the other thread holds B and waits to write A
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_FORMAT=json MUTEXSTAT_OUTPUT="$WORK/rwhang" \
	"$RW" hang > "$WORK/rwhang.out" 2> "$WORK/rwhang.err" &
pid=$!
wait_for "$WORK/rwhang.out" '^deadlocked$' || fail "rwhang: never deadlocked"
kill -USR1 $pid
n=0 # 60 s at most: a sanitized build on a busy machine once took over 20
# (jq 1.6 -e answers 0 for an empty file: the dump's file is made, then
# written; as in the wait above, it must have bytes first)
while [ $n -lt 600 ] && ! { [ -s "$WORK/rwhang.1.json" ] &&
	jq -e '.version == 1' "$WORK/rwhang.1.json" > /dev/null 2>&1; }; do
	sleep 0.1; n=$((n + 1))
done
kill -9 $pid; wait $pid 2>/dev/null
J=$WORK/rwhang.1.json
valid rwhang.1
A=$(addr A rwhang)
expect_eq "rwhang: a deadlock of two waits to write, one for a lock held for write, one held for read by one reader" \
	"$(jq -r --arg a "$A" '.findings[] | select(.kind == "deadlock") |
		[.threads[] | "\(if .waits_for == $a then "A" else "B" end) \(.lock) \(.mode) \(.held_for) \(.readers)"] |
		sort | join(", ")' "$J")" \
	"A rwlock write read 1, B rwlock write write 0"
expect_eq "rwhang: the threads' holds and waits, with their modes" \
	"$(jq -r --arg a "$A" '[.threads[] | "\(.held | map((if .mutex == $a then "A" else "B" end) + "=" + .mode) | join("")) waits \(if .waiting_for.mutex == $a then "A" else "B" end)=\(.waiting_for.mode)"] | sort | join(", ")' "$J")" \
	"A=read waits B=write, B=write waits A=write"
expect_eq "rwhang: the wait behind A's reader is under way: in no total yet" \
	"$(jq -r --arg a "$A" '.mutexes[] | select(.address == $a) | "\(.writes.contended) \(.writes.behind_readers) \(.waiting_now)"' "$J")" \
	"0 0 1"
finish
