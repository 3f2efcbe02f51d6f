# tests/interval_text.sh - MUTEXSTAT_INTERVAL with the text, JSON and DOT
# formats: every interval writes PREFIX.N.txt, PREFIX.N.json and
# PREFIX.N.dot, numbered from 1 without a gap, the last (partial) one at
# exit, then the whole run's files as without an interval.  The text and
# JSON hold what happened in the interval alone: over the intervals the
# acquisitions, contentions, ended mutexes and waiting stacks add up
# exactly to the whole run's, and the wait time to within rounding -- also
# call site by call site for the service's session mutexes, which live in
# one interval and end in the next.  The change the service makes
# half-way (a second mutex, for its log) is in the later intervals only.
# A read-write lock's reads and writes add up too.  After
# mutexstat_reset() an interval holds what followed it, and says so.
# The text says the same as the JSON.  Text alone names the files after
# MUTEXSTAT_OUTPUT (or mutexstat.PID) without an extension, as its live
# dumps; a fork child writes its own series.
. "$top_srcdir/tests/lib.sh"

SERVICE="$(cd "$top_builddir/examples" && pwd)/service"

# ---- a run with an interval, every lock listed ------------------------------
mkdir "$WORK/a"
MUTEXSTAT_INTERVAL=0.5 MUTEXSTAT_FORMAT=text,json,dot MUTEXSTAT_STACK_SAMPLE=1 \
	MUTEXSTAT_TOP=5000 MUTEXSTAT_OUTPUT="$WORK/a/r" \
	run_with "$WORK/out" "$WORK/err" "$SERVICE" 2.2 4
expect_eq "the service's status under an interval" "$?" 0
expect_grep "the service's output" '^served [0-9]+ requests' "$WORK/out"
expect_eq "nothing on its stderr" "$(cat "$WORK/err")" ""

n=0
while [ -e "$WORK/a/r.$((n + 1)).json" ]; do n=$((n + 1)); done
[ "$n" -ge 3 ] && pass "$n intervals, r.1.json to r.$n.json" ||
	fail "$n intervals; want 3 or more"
missing=
for i in $(seq 1 "$n"); do
	for ext in txt json dot; do
		[ -s "$WORK/a/r.$i.$ext" ] || missing="$missing r.$i.$ext"
	done
done
expect_eq "each interval has its text, JSON and DOT" "$missing" ""
others=$(cd "$WORK/a" && ls | grep -Ev '^r\.([0-9]+\.)?(txt|json|dot)$' | tr '\n' ' ')
expect_eq "no other files, and the whole run's" "$others$(ls "$WORK/a" | grep -c '^r\.[a-z]*$')" "3"

# every interval's JSON, in order, as one array
J="$WORK/all.json"
for i in $(seq 1 "$n"); do cat "$WORK/a/r.$i.json"; done | jq -s . > "$J" ||
	fail "an interval's JSON is not valid"
W="$WORK/a/r.json"
expect_eq "each is version 1, numbered in turn" \
	"$(jq -c '[.[] | [.version, .interval.number]]' "$J")" \
	"$(jq -nc --argjson n "$n" '[range(1; $n + 1) | [1, .]]')"
# (to the nanosecond; jq's numbers are doubles, good to 256 ns here)
expect_eq "each starts where the one before ended" \
	"$(jq '[range(1; length) as $i | .[$i].interval.start_ns -
		(.[$i - 1].interval.start_ns + .[$i - 1].interval.duration_ns) | fabs < 1000] | all' "$J")" true
expect_eq "program and pid in each" \
	"$(jq -r '[.[] | "\(.program) \(.pid)"] | unique | .[]' "$J")" \
	"$(jq -r '"\(.program) \(.pid)"' "$W")"

# the intervals add up to the whole run
for k in acquisitions contended; do
	expect_eq "the intervals' $k add up to the whole run's" \
		"$(jq "[.[].totals.$k] | add" "$J")" \
		"$(jq "[(.mutexes[], .ended[]).$k] | add" "$W")"
done
# the text's share of contended acquisitions, to a tenth of a percent,
# rounded (it was cut: 1.26 % read 1.2 %); some that round to none read
# "<0.1" (86 contended read 0.0 %)
want=$(jq -r '.[] | .totals | if .acquisitions == 0 then "0.0" else
	((.contended * 1000 + ((.acquisitions / 2) | floor)) / .acquisitions | floor) as $p |
	if $p == 0 and .contended > 0 then "<0.1" else
	"\(($p / 10) | floor).\($p % 10)" end end' "$J" | tr '\n' ' ')
got=$(for i in $(seq 1 "$n"); do
	sed -n 's/^  .* contended (\([<0-9.]*\) %), .*/\1/p' "$WORK/a/r.$i.txt"; done | tr '\n' ' ')
expect_eq "each interval's text: its share contended, rounded" "$got" "$want"
expect_eq "and the mutexes that ended" "$(jq '[.[].totals.mutexes_ended] | add' "$J")" \
	"$(jq '[.ended[].mutexes] | add' "$W")"
# (an interval with no lock listed -- the service's last, on a loaded
# machine -- sums to 0, not to jq's null)
expect_eq "the listed locks are all of them (MUTEXSTAT_TOP=5000)" \
	"$(jq '[.[] | (.totals.contended == ([.locks[].contended] | add // 0))] | all' "$J")" true
expect_eq "the wait time, to within 0.01 %" \
	"$(jq -n --slurpfile iv "$J" --slurpfile w "$W" '
		([$iv[0][].totals.wait_total_ns] | add) as $a |
		([($w[0].mutexes[], $w[0].ended[]).wait_total_ns] | add) as $b |
		(($a - $b) | fabs) <= $b / 10000')" true
# by call site: a session mutex is a live lock in the intervals it was
# alive in, and part of its site's ended line in the one it ended in
expect_eq "the session mutexes' contentions, site by site, add up to the whole run's" \
	"$(jq '[.[].locks[] | select(.first_locked_at.function == "count_in_session") |
		.contended] | add' "$J")" \
	"$(jq '[(.mutexes[] | select(.first_locked_caller.function == "count_in_session")),
		(.ended[] | select(.first_locked_at.function == "count_in_session")) |
		.contended] | add' "$W")"
expect_eq "and their waiting stacks' counts (every stack captured)" \
	"$(jq '[.[].locks[] | select(.first_locked_at.function == "count_in_session") |
		.waiting_stacks[].count] | add' "$J")" \
	"$(jq '[(.mutexes[] | select(.first_locked_caller.function == "count_in_session")),
		(.ended[] | select(.first_locked_at.function == "count_in_session")) |
		.waiting_stacks[].count] | add' "$W")"
expect_eq "each lock's wait histogram counts its contentions in the interval" \
	"$(jq '[.[].locks[] | ([.histograms.wait[].count] | add // 0) == .contended] | all' "$J")" true
# half-way the service starts to log: not before, and after
expect_eq "the log's mutex is not in the first interval" \
	"$(jq '[.[0].locks[] | select(.first_locked_at.function == "write_log")] | length' "$J")" 0
last=$((n - 1)) # the last whole interval
expect_eq "and is in interval $last, locked" \
	"$(jq --argjson i "$((last - 1))" '[.[$i].locks[] | select(.first_locked_at.function == "write_log") | .acquisitions > 0] | all and length == 1' "$J")" true

# mutexstat compare between two intervals: the log's site came
"$top_builddir/scripts/mutexstat" compare "$WORK/a/r.1.json" "$WORK/a/r.$last.json" \
	>"$WORK/cmp" 2>&1
expect_eq "compare r.1.json r.$last.json: no findings, status 0" "$?" 0
expect_grep "compare: the intervals named" "^mutexstat compare: service \(pid [0-9]+\), interval 1 -> service \(pid [0-9]+\), interval $last$" "$WORK/cmp"
expect_grep "compare: the log's site, new in the later interval" " new .* write_log \(.*service.c:[0-9]+\)$" "$WORK/cmp"

# the text says what the JSON says
t="$WORK/a/r.2.txt"
expect_grep "the text's first line: the interval and when" \
	"^mutexstat: service \(pid [0-9]+\) interval 2: [0-9.]+ ms, from [0-9.]+ ms to [0-9.]+ s into the run$" "$t"
expect_eq "its summary line: the JSON's totals" \
	"$(sed -n 2p "$t" | awk '{ print $1, $4, $6 }')" \
	"$(jq -r '.[1].totals | "\(.acquisitions) \(.locks) \(.contended)"' "$J")"
expect_grep "its table, by wait in this interval" '^Top [0-9]+ (mutexes|locks) by wait in this interval:$' "$t"
first=$(jq -r '.[1].locks[0] | "\(.acquisitions) \(.contended)"' "$J")
expect_eq "the table's first row: the JSON's first lock" \
	"$(awk '/ by wait in this interval:$/ { getline; getline
		if ($3 == "ended") print $4, $5; else print $3, $4  # "  1 12 ended 79566 26 ..."
		exit }' "$t")" "$first"
expect_grep "who waited, in the interval" '^  who waited: the stacks of the threads that waited' "$t"
expect_grep "the hot mutex's waits, at update_cache" '^ +[0-9]+ +[0-9.]+ [mµn]?s .*update_cache\+0x[0-9a-f]+ \(examples/service.c:[0-9]+' "$t"
expect_grep "the DOT: a graph" '^digraph mutexstat \{$' "$WORK/a/r.2.dot"

# ---- text alone ------------------------------------------------------------------
mkdir "$WORK/t"
MUTEXSTAT_INTERVAL=0.3 MUTEXSTAT_OUTPUT="$WORK/t/r" \
	run_with "$WORK/out" "$WORK/err" "$SERVICE" 0.7 2
expect_eq "text alone: the service's status" "$?" 0
expect_eq "text alone: nothing on stderr" "$(cat "$WORK/err")" ""
# (how many intervals a 0.7 s run has depends on how long the program
# took to start and its first report to be written: 2 or more, from 1
# without a gap)
k=$(ls "$WORK/t" | grep -c '^r\.[0-9]*$')
expect_eq "text alone: r.1 to r.N for the intervals, as its dumps, and r" \
	"$(cd "$WORK/t" && ls | grep -Ev '^r(\.[0-9]+)?$' | wc -l) $([ "$k" -ge 2 ] && echo 2+) $(ls "$WORK/t" | grep -c '^r$') $(ls "$WORK/t" | grep '^r\.[0-9]*$' | sort -t. -k2n | tr '\n' ' ')" \
	"0 2+ 1 $(seq 1 "$k" | sed 's/^/r./' | tr '\n' ' ')"
expect_grep "text alone: r.1 is an interval's" '^mutexstat: service \(pid [0-9]+\) interval 1: ' "$WORK/t/r.1"
mkdir "$WORK/s"
(cd "$WORK/s" && env -u MUTEXSTAT_OUTPUT LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_INTERVAL=0.3 \
	"$SERVICE" 0.4 2 >"$WORK/out" 2>"$WORK/err")
expect_grep "no MUTEXSTAT_OUTPUT: the exit report on stderr as ever" '^mutexstat: service \(pid' "$WORK/err"
# (1 or more: the tick at 0.3 s may come after the 0.4 s run's exit on a
# slow start)
k=$(ls "$WORK/s" | wc -l)
expect_eq "and the intervals in mutexstat.PID.N, from 1 without a gap" \
	"$(cd "$WORK/s" && ls | sed 's/^mutexstat\.[0-9]*\./mutexstat.PID./' | sort -t. -k3n | tr '\n' ' ')" \
	"$(seq 1 "$((k > 0 ? k : 1))" | sed 's/^/mutexstat.PID./' | tr '\n' ' ')"
expect_eq "all of one process" "$(cd "$WORK/s" && ls | cut -d. -f2 | sort -u | wc -l)" 1

# ---- a read-write lock: its reads and writes ----------------------------------------
mkdir "$WORK/w"
MUTEXSTAT_INTERVAL=0.1 MUTEXSTAT_FORMAT=json MUTEXSTAT_TOP=5000 MUTEXSTAT_OUTPUT="$WORK/w/r" \
	run_with "$WORK/out" "$WORK/err" "$top_builddir/examples/rwlock_cache"
expect_eq "rwlock: the program's status" "$?" 0
modes='[.reads.acquisitions, .writes.acquisitions, .reads.contended, .writes.contended]'
expect_eq "rwlock: the intervals' reads and writes add up to the whole run's" \
	"$(for f in "$WORK"/w/r.[0-9]*.json; do cat "$f"; done |
		jq -sc "[.[].locks[] | select(.lock == \"rwlock\") | $modes] | transpose | map(add)")" \
	"$(jq -c "[(.mutexes[], .ended[]) | select(.lock == \"rwlock\") | $modes] | transpose | map(add)" "$WORK/w/r.json")"

# ---- a mutex locked through a wrapper ----------------------------------------------
# its line names the wrapper's caller once a second caller shows wlock()
# is a wrapper; its life ends after that: its 1000 acquisitions are in the
# first interval, and not again in its site's line when it ends
mkdir "$WORK/wr"
MUTEXSTAT_INTERVAL=0.3 MUTEXSTAT_FORMAT=json MUTEXSTAT_TOP=5000 MUTEXSTAT_OUTPUT="$WORK/wr/r" \
	run_with "$WORK/out" "$WORK/err" "$top_builddir/tests/wrapped_life"
expect_eq "wrapper: the program's status" "$?" 0
expect_eq "wrapper: the intervals' acquisitions add up to the whole run's" \
	"$(for f in "$WORK"/wr/r.[0-9]*.json; do cat "$f"; done | jq -s '[.[].totals.acquisitions] | add')" \
	"$(jq '[(.mutexes[], .ended[]).acquisitions] | add' "$WORK/wr/r.json")"

# ---- mutexstat_reset() in an interval ------------------------------------------------
# examples/named resets half-way; its one interval (of 60 s) holds what
# followed the reset, as the whole-run report does, and says so
mkdir "$WORK/r"
MUTEXSTAT_INTERVAL=60 MUTEXSTAT_FORMAT=json MUTEXSTAT_OUTPUT="$WORK/r/r" \
	run_with "$WORK/out" "$WORK/err" "$top_builddir/examples/named"
expect_eq "reset: named's status" "$?" 0
expect_eq "reset: the interval says it came after a reset" \
	"$(jq '.interval.after_reset' "$WORK/r/r.1.json")" true
expect_eq "reset: and holds what came after it, as the whole run does" \
	"$(jq '.totals.acquisitions' "$WORK/r/r.1.json")" \
	"$(jq '[(.mutexes[], .ended[]).acquisitions] | add' "$WORK/r/r.json")"
expect_eq "reset: the first interval of a run without one says none" \
	"$(jq '.interval.after_reset' "$WORK/a/r.1.json")" false

# ---- a fork child writes its own series ---------------------------------------------
mkdir "$WORK/f"
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_INTERVAL=0.4 MUTEXSTAT_FORMAT=json MUTEXSTAT_TOP=5000 \
	MUTEXSTAT_OUTPUT="$WORK/f/r.%p" "$SERVICE" 1.2 2 fork >"$WORK/out" 2>"$WORK/err"
expect_eq "fork: the service's status" "$?" 0
pids=$(cd "$WORK/f" && ls | sed -n 's/^r\.\([0-9]*\)\.json$/\1/p' | sort -n | tr '\n' ' ')
expect_eq "fork: two whole-run reports" "$(echo $pids | wc -w)" 2
for p in $pids; do
	for i in $(ls "$WORK/f" | sed -n "s/^r\.$p\.\([0-9]*\)\.json$/\1/p" | sort -n); do
		cat "$WORK/f/r.$p.$i.json"
	done | jq -s . > "$WORK/f.json"
	expect_eq "pid $p: its intervals add up to its whole run (a child's from the fork)" \
		"$(jq '[.[].totals.contended] | add' "$WORK/f.json")/$(jq '[.[].totals.acquisitions] | add' "$WORK/f.json")" \
		"$(jq '[(.mutexes[], .ended[]).contended] | add' "$WORK/f/r.$p.json")/$(jq '[(.mutexes[], .ended[]).acquisitions] | add' "$WORK/f/r.$p.json")"
done
child= parent=
for p in $pids; do
	[ "$(jq -r '.forked_from' "$WORK/f/r.$p.json")" = null ] && parent=$p || child=$p
done
expect_eq "the child's intervals say whose fork it is" \
	"$(jq -r '.forked_from' "$WORK/f/r.$child.1.json")" "$parent"

# ---- an interval's findings line names the dump signal the run has -----------
ABBA="$top_builddir/examples/deadlock_abba"
for sig in default USR2 none; do
	mkdir "$WORK/sig$sig"
	(
		[ $sig = default ] || export MUTEXSTAT_SIGNAL=$sig
		MUTEXSTAT_INTERVAL=10 MUTEXSTAT_OUTPUT="$WORK/sig$sig/r" \
			run_with "$WORK/out" "$WORK/err" "$ABBA"
	)
	case $sig in
	default) how=", or a dump with kill -USR1," ;;
	USR2) how=", or a dump with kill -USR2," ;;
	none) how="" ;;
	esac
	expect_eq "MUTEXSTAT_SIGNAL $sig: the interval says how to see its findings" \
		"$(grep '^  findings: ' "$WORK/sig$sig/r.1")" \
		"  findings: 1 new in this interval, 1 in the run so far (the exit report$how tells them)"
done

finish
