# lifetimes.sh - destroy ends a mutex's life (its numbers go to its
# first-lock site's line), init of a known address starts from zero, a full
# table keeps working and says so, mutexes held at exit are listed.
. "$top_srcdir/tests/lib.sh"
B=$top_builddir

run_with "$WORK/out" "$WORK/err" "$B/tests/scenario" destroy
m2=$(awk '/^m2 /{print $2}' "$WORK/out")
expect_grep "header counts destroyed and re-initialised" \
	"^  100 mutexes destroyed and 1 initialised again" "$WORK/report"
expect_grep "the 100 short-lived mutexes fold into one line of 300 acquisitions" \
	"^ +[0-9]+ 100 ended +300 +0 " "$WORK/report"
expect_grep "m2's second life starts from zero: 2 acquisitions" "^ +[0-9]+ $(top_label_re "$WORK/report" "$m2") +2 +0 " "$WORK/report"
expect_grep "m2's first life is its own ended line" "^ +[0-9]+ 1 ended +1 +0 " "$WORK/report"
expect_grep "m2 was seen through init" "^#[0-9]+ mutex $m2( <[^>]+>)? \(normal\)$" "$WORK/report"
expect_grep "m2's first life's section: one mutex" \
	'^#[0-9]+ 1 mutex that ended \(destroyed or initialised again\), first locked at ' "$WORK/report"

# An ended line's section gives a first-lock site too long for the end of
# its heading (80 characters after a heading of 75 or more) a line of its
# own, whole, its source line kept (it was once cut off with the function's
# end, later the name cut to its last characters).
run_with "$WORK/out" "$WORK/err" "$B/tests/scenario" longsite
expect_eq "longsite: the section, the site on a line of its own, the source line kept" \
	"$(grep -A1 '^#1 ' "$WORK/report" | sed 's/+0x[0-9a-f]*//')" \
	"#1 2 mutexes that ended (destroyed or initialised again), first locked at
    a_function_whose_name_is_long_enough_to_fill_most_of_a_report_line_on_its_own_if_printed_whole (scenario.c:$(grep -n 'LONG_SITE' "$top_srcdir/tests/scenario.c" | head -1 | cut -d: -f1))"
expect_grep "longsite: the top table's column, the source line" \
	'^  1 2 ended +2 +0 .* scenario\.c:[0-9]+$' "$WORK/report"
expect_eq "longsite: no line over 120 columns" \
	"$(sed 's/µ/u/g' "$WORK/report" | awk 'length($0) > 120' | wc -l)" 0

# A pool's mutex, made twice at one line, named, contended and destroyed:
# its ended line keeps what its section would show alive -- who waited and
# who made them wait (merged by stack over both lives), the histograms
# with their percentiles, where it was first locked and initialised, the
# name, and the last life's recent operations (it had none of them).
line_of() { grep -n "$1" "$top_srcdir/tests/scenario.c" | cut -d: -f1; }
# ended_section FILE: the sections of ended lines
ended_section() { awk '/^#[0-9]+ / { on = / that ended / } on' "$1"; }
run_with "$WORK/out" "$WORK/err" "$B/tests/scenario" endedwait
ended_section "$WORK/report" > "$WORK/ended"
expect_grep "endedwait: one line for both lives, 12 acquisitions, 6 contended" \
	"^  1 2 ended +12 +6 .* pool_life \(?scenario\.c:$(line_of ENDED_HOLDS)\)?\$" "$WORK/report"
expect_grep "endedwait: its section, first locked at the pool's line" \
	"^#1 2 mutexes that ended \(destroyed or initialised again\), first locked at pool_life\+0x[0-9a-f]+ \(tests/scenario\.c:$(line_of ENDED_HOLDS)" \
	"$WORK/ended"
expect_eq "endedwait: the name it was given" "$(sed -n 2p "$WORK/ended")" '  named "ended pool"'
# ... but the line shows the newest kept life's: one not named shows none,
# not an older life's name beside its own recent operations
run_with "$WORK/out" "$WORK/err" "$B/tests/scenario" endedwait unnamed-last
expect_eq "endedwait, the last life unnamed: no name on its line" \
	"$(ended_section "$WORK/report" | grep -c '^  named ')" 0
expect_grep "endedwait: the wait histogram holds the 6 waits" \
	'^  wait times, of waits that got the mutex \(6\):$' "$WORK/ended"
expect_eq "endedwait: percentiles under both histograms" \
	"$(grep -cE '^    p50 <= [0-9.]+ [nµm]?s  p90 <= [0-9.]+ [nµm]?s  p99 <= [0-9.]+ [nµm]?s  max [0-9.]+ [nµm]?s$' "$WORK/ended")" 2
expect_grep "endedwait: who waited: one stack" \
	'^  who waited: the stacks of the threads that waited \(1 stack\):$' "$WORK/ended"
expect_grep "endedwait: who waited: 6 waits, at the waiter's lock" \
	"^ +6 +[0-9.]+ [nµm]?s +[0-9.]+ [nµm]?s +100%  wait_for_pool\+0x[0-9a-f]+ \(tests/scenario\.c:$(line_of ENDED_WAITS), scenario\)\$" \
	"$WORK/ended"
expect_grep "endedwait: who made them wait: 6 waits, at main's unlock" \
	"^ +6 +[0-9.]+ [nµm]?s +[0-9.]+ [nµm]?s +100%  pool_life\+0x[0-9a-f]+ \(tests/scenario\.c:$(line_of ENDED_LETS_IN), scenario\)\$" \
	"$WORK/ended"
expect_grep "endedwait: initialised at" \
	"^  initialised at    pool_life\+0x[0-9a-f]+ \(tests/scenario\.c:$(line_of ENDED_INIT), scenario\)\$" "$WORK/ended"
expect_eq "endedwait: the last life's recent operations" \
	"$(awk '/^ +order +thread +operation/ { on = 1; next }
		on && /^ +[0-9]+ +[0-9]+  / { r = $4; if ($5 == "after") r = r " after wait"; printf "%s %s,", $3, r }' "$WORK/ended")" \
	"$(printf 'init ok,'; for i in 1 2 3; do printf 'lock ok,unlock ok,lock ok after wait,unlock ok,'; done; printf 'destroy ok,')"
# the first life's 13 operations are ordered 1 to 14 at most
expect_eq "endedwait: they are the last life's, ordered after the first life's" \
	"$(awk '/^ +order +thread +operation/ { on = 1; next }
		on && /^ +[0-9]+ +[0-9]+  / { print ($1 > 14) ? "after" : $1; exit }' "$WORK/ended")" after

# One thread's lookup cache across lives: a record handed to another mutex
# after a destroy, and two mutexes that share a cache entry.
run_with "$WORK/out" "$WORK/err" "$B/tests/scenario" recycle
for v in x y p q; do
	eval "$v=\$(awk '/^$v /{print \$2}' \"\$WORK/out\")"
done
expect_grep "x's second life: 2 acquisitions" "^ +[0-9]+ $(top_label_re "$WORK/report" "$x") +2 +0 " "$WORK/report"
expect_grep "y, in x's old record: 5 acquisitions" "^ +[0-9]+ $(top_label_re "$WORK/report" "$y") +5 +0 " "$WORK/report"
expect_grep "x's first life is an ended line of 3" "^ +[0-9]+ 1 ended +3 +0 " "$WORK/report"
expect_grep "p, sharing a cache entry with q: 1100 acquisitions" "^ +[0-9]+ $(top_label_re "$WORK/report" "$p") +1100 +0 " "$WORK/report"
expect_grep "q: 1100 acquisitions" "^ +[0-9]+ $(top_label_re "$WORK/report" "$q") +1100 +0 " "$WORK/report"
expect_no_grep "no finding: one order, p then q" "POTENTIAL DEADLOCK|MISUSE" "$WORK/report"
expect_grep "header: one mutex destroyed, in the singular" \
	"^  1 mutex destroyed and 0 initialised again: " "$WORK/report"

# Both levels of the lookup cache: 40 mutexes in turn, one made again
# half-way (a new life at the same address), and two mutexes that share
# an entry of both levels.
MUTEXSTAT_TOP=100 run_with "$WORK/out" "$WORK/err" "$B/tests/scenario" turns
for v in ring0 ring7 ring39 u v; do
	eval "$v=\$(awk '/^$v /{print \$2}' \"\$WORK/out\")"
done
expect_grep "ring0: 100 acquisitions" "^ +[0-9]+ $(top_label_re "$WORK/report" "$ring0") +100 +0 " "$WORK/report"
expect_grep "ring39: 100 acquisitions" "^ +[0-9]+ $(top_label_re "$WORK/report" "$ring39") +100 +0 " "$WORK/report"
expect_grep "ring7's second life: 50" "^ +[0-9]+ $(top_label_re "$WORK/report" "$ring7") +50 +0 " "$WORK/report"
expect_grep "ring7's first life: an ended line of 50" "^ +[0-9]+ 1 ended +50 +0 " "$WORK/report"
expect_eq "every other ring mutex: 100" \
	"$(grep -cE "^ +[0-9]+ $LOCK_RE +100 +0 " "$WORK/report")" 39
expect_grep "u, sharing both cache entries with v: 1000" "^ +[0-9]+ $(top_label_re "$WORK/report" "$u") +1000 +0 " "$WORK/report"
expect_grep "v: 1000" "^ +[0-9]+ $(top_label_re "$WORK/report" "$v") +1000 +0 " "$WORK/report"

# A full table: 64 records, 100 mutexes.
MUTEXSTAT_TABLE_SIZE=64 run_with "$WORK/out" "$WORK/err" "$B/tests/scenario" many 100
expect_eq "program unaffected" "$(cat "$WORK/out")" "100 mutexes locked"
expect_grep "64 tracked, 36 untracked" "64 mutexes tracked, 36 untracked$" "$WORK/report"
expect_grep "says which variable raises the limit" \
	"^  the table is full: 36 mutexes were not tracked; raise MUTEXSTAT_TABLE_SIZE \(now 64\)$" "$WORK/report"

# Records to spare, but 200 mutexes whose addresses share one place of
# the index (made from the hash): 128 fit within a probe, the others are
# lost, and the report says so -- not "the table is full: 0 mutexes were
# not tracked", as it did.  Twice the table spreads them.
MUTEXSTAT_TABLE_SIZE=1024 run_with "$WORK/out" "$WORK/err" "$B/tests/no_room" 200
expect_eq "no room: the program runs" "$(cat "$WORK/out")" "200 mutexes locked"
expect_grep "no room: the calls that found none" \
	"^  [0-9]+ calls found no room near their mutex's place in the index\$" "$WORK/report"
expect_grep "no room: some untracked, uncounted" ", 128 mutexes tracked, some untracked\$" "$WORK/report"
expect_grep "no room: the table is not full, and what to do" \
	'^  \(the table is not full: 128 of 1024 records used\); raise MUTEXSTAT_TABLE_SIZE \(now 1024\) to spread it$' \
	"$WORK/report"
expect_no_grep "no room: not called full" "table is full" "$WORK/report"
MUTEXSTAT_TABLE_SIZE=2048 run_with "$WORK/out" "$WORK/err" "$B/tests/no_room" 200
expect_grep "no room, twice the table: all 200 tracked" ", 200 mutexes tracked, 0 untracked\$" "$WORK/report"
expect_no_grep "no room, twice the table: no such line" "found no room" "$WORK/report"

# An array of 10,000 spin locks: 4 bytes each, two to every 8 bytes, which
# had one home in the index -- past a probe's reach every other one was
# untracked (5,127 of 10,000), whatever the table's size.
run_with "$WORK/out" "$WORK/err" "$B/tests/no_room" spins 10000
expect_eq "spin lock array: the program runs" "$(cat "$WORK/out")" "10000 spin locks locked"
expect_grep "spin lock array: every one tracked" ", 10000 locks tracked, 0 untracked\$" "$WORK/report"

# 200,000 mutexes created and destroyed one after another reuse one record.
MUTEXSTAT_TABLE_SIZE=64 run_with "$WORK/out" "$WORK/err" "$B/tests/scenario" destroy
expect_grep "small table, many lifetimes: still tracked" "^ +[0-9]+ 100 ended +300 " "$WORK/report"

# Held at exit.
run_with "$WORK/out" "$WORK/err" "$B/tests/scenario" held
m1=$(awk '/^m1 /{print $2}' "$WORK/out")
expect_grep "section" "^Mutexes still locked:$" "$WORK/report"
expect_grep "m1 held by the main thread, with where it was taken" \
	"^  $m1( <[^>]+>)? held by thread [0-9]+, taken at main\+0x[0-9a-f]+ \((.*:[0-9]+, )?scenario\)$" "$WORK/report"
expect_eq "only m1 is listed" "$(grep -c ' held by thread ' "$WORK/report")" 1
# A hold that follows a wait is timed: the report says how long it has
# lasted (the holder's held set keeps when it began).
run_with "$WORK/out" "$WORK/err" "$B/tests/scenario" heldtimed
m1=$(awk '/^m1 /{print $2}' "$WORK/out")
line=$(grep -E "^  $m1( <[^>]+>)? held by thread " "$WORK/report")
expect_grep "heldtimed: held for how long, taken by the waiter" \
	"^  $m1( <[^>]+>)? held by thread [0-9]+ for [0-9.]+ ms, taken at take_m1_after_wait\+0x[0-9a-f]+ " "$WORK/report"
ms=$(echo "$line" | sed -n 's/.* for \([0-9.]*\) ms,.*/\1/p')
expect_eq "heldtimed: held 100 ms or more, less than 10 s" \
	"$(awk -v ms="${ms:-0}" 'BEGIN { print (ms >= 100 && ms < 10000) ? "yes" : ms }')" yes
# ... also once the holder has exited (the start outlives its held set).
run_with "$WORK/out" "$WORK/err" "$B/tests/scenario" heldexited
m1=$(awk '/^m1 /{print $2}' "$WORK/out")
expect_grep "heldexited: held by the exited thread, and for how long" \
	"^  $m1( <[^>]+>)? held by thread [0-9]+ \(exited\) for [0-9.]+ ms, taken at take_m1_after_wait_and_exit" \
	"$WORK/report"
# A timed hold under way at mutexstat_reset is not counted after it: the
# numbers start at the reset (main's own hold after its wait is).
run_with "$WORK/out" "$WORK/err" "$B/tests/scenario" resethold
m1=$(awk '/^m1 /{print $2}' "$WORK/out")
expect_grep "resethold: one acquisition, contended, since the reset" "^ +1 $(top_label_re "$WORK/report" "$m1") +1 +1 " "$WORK/report"
expect_grep "resethold: one timed hold since the reset, not the one before it" \
	"^  hold times, of the holds timed \(1\):\$" "$WORK/report"
# The header counts the mutexes whose holds are timed, ended ones too.
run_with "$WORK/out" "$WORK/err" "$B/tests/scenario" waitedended
expect_grep "waitedended: the destroyed mutex that made a thread wait is counted" \
	"^  hold times: of the 1 mutex that made a thread wait, " "$WORK/report"
expect_grep "waitedended: its ended line has its hold times" \
	"^ +[0-9]+ 1 ended +2 +1 .* [0-9.]+ [nµm]?s +[0-9.]+ [nµm]?s " "$WORK/report"
# 100,000 short-lived threads: records are reused, nothing runs out.
run_with "$WORK/out" "$WORK/err" "$B/tests/scenario" threads 100000
m1=$(awk '/^m1 /{print $2}' "$WORK/out")
expect_grep "100000 threads used mutexes" ": 100000 threads used mutexes, 1 mutex tracked, 0 untracked$" "$WORK/report"
expect_grep "m1 locked exactly 100000 times" "^ +1 $(top_label_re "$WORK/report" "$m1") +100000 " "$WORK/report"
expect_no_grep "no thread ended holding a mutex" "^HELD AT THREAD EXIT" "$WORK/report"
# 5000 lives, each first locked at a site of its own: the first 4096 sites
# (MS_MAX_SITES) have a line each, the other 904 lives are summed in a line
# that says what it is -- they went to the 4096th site's line, under its
# name, 905 lives it had one of -- with a note in the header; JSON, folded
# likewise.  The numbers stay whole (the last life has a wait).
MUTEXSTAT_FORMAT=text,json,folded MUTEXSTAT_TOP=5000 MUTEXSTAT_OUTPUT="$WORK/sites" \
	run_with "$WORK/out" "$WORK/err" "$B/tests/scenario" sites 5000
expect_eq "sites: the program runs" "$(cat "$WORK/out")" "5000 sites"
S=$WORK/sites
expect_grep "sites: the header says how many lives are past the sites kept" \
	'^  904 of them were first locked at sites past the 4096 kept: one line sums them, "other sites"$' \
	"$S.txt"
expect_eq "sites: a line for each of the first 4096 sites" \
	"$(grep -cE '^ *[0-9]+ 1 ended +1 +0 ' "$S.txt")" 4096
expect_grep "sites: the other 904 lives' line, named for what it is" \
	'^ +[0-9]+ 904 ended +905 +1 .*  other sites \(past the 4096 sites kept\)$' "$S.txt"
expect_eq "sites: 4097 ended lines in all" "$(grep -cE '^ *[0-9]+ [0-9]+ ended ' "$S.txt")" 4097
expect_grep "sites: its section" \
	'^#[0-9]+ 904 mutexes that ended \(destroyed or initialised again\), first locked at other sites \(past the 4096 sites kept\)$' \
	"$S.txt"
expect_eq "sites: JSON: the other sites' line, no site" \
	"$(jq -c '[.ended[] | select(.other_sites) | [.first_locked_at, .mutexes, .acquisitions, .contended]]' "$S.json")" \
	'[[null,904,905,1]]'
expect_eq "sites: JSON: the header's count, every life and acquisition in a line" \
	"$(jq -c '[.ended_at_other_sites, (.ended | length), ([.ended[].mutexes] | add), ([.ended[].acquisitions] | add), ([.ended[] | select(.first_locked_at == null)] | length)]' "$S.json")" \
	'[904,4097,5000,5001,1]'
expect_eq "sites: folded: the wait under the other sites' line" \
	"$(cut -d';' -f1 "$S.wait.folded")" "mutexes ended at other sites (past the 4096 sites kept)"

finish
