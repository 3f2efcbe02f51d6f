# history.sh - a mutex's recent operations in the report say, row by row,
# what each lock path did: the order, the thread that did it, the
# operation, its result, the time of a wait or failure, and the caller --
# on the plain path, after uncontended changes of owner, on contended
# locks, busy trylocks and timeouts, and past the first 4,096 acquisitions
# of a mutex that made a thread wait (holds sampled 1 in 16).  Also the
# hold times: how many holds are timed, their mean and maximum, between
# what was slept and what the program measured around each hold, in the
# text report and in JSON, for a live mutex and an ended one.
# The programs are tests/history.c's; every call of theirs is on a line
# marked H:name.
. "$top_srcdir/tests/lib.sh"
B=$top_builddir
P=$B/tests/history
SRC=$top_srcdir/tests/history.c

if ! command -v jq >/dev/null; then
	echo "SKIP: jq reads the JSON report (scripts/deps installs it)"
	exit 77
fi

# run NAME ARGS...: tests/history ARGS under the library, keeping 128
# operations a mutex; text and JSON reports in $WORK/NAME.{txt,json}, what
# it printed in $WORK/NAME.out.  Sets A, B_TID (thread ids) and M (m's
# address).
run() {
	name=$1
	shift
	env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_HISTORY=128 MUTEXSTAT_FORMAT=text,json \
	    MUTEXSTAT_OUTPUT="$WORK/$name" "$P" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
	expect_eq "$name: the program ran" "$?" 0
	A=$(sed -n 's/^A //p' "$WORK/$name.out")
	B_TID=$(sed -n 's/^B //p' "$WORK/$name.out")
	M=$(sed -n 's/^m //p' "$WORK/$name.out")
}

# expand: the rows wanted, from stdin, with each @name made the line of
# history.c marked H:name.
expand() {
	awk -v src="$SRC" 'BEGIN {
		while ((getline l < src) > 0) {
			n++
			if (match(l, /H:[a-z_]+ \*\//))
				at[substr(l, RSTART + 2, RLENGTH - 5)] = n
		}
	}
	{
		while (match($0, /@[a-z_]+/)) {
			k = substr($0, RSTART + 1, RLENGTH - 1)
			$0 = substr($0, 1, RSTART - 1) (k in at ? at[k] : "?" k) \
			     substr($0, RSTART + RLENGTH)
		}
		print
	}'
}

# plain_mu FILE: the file with each "µ" (two bytes) made "u", so that
# columns the report pads by characters are bytes apart.
plain_mu() {
	LC_ALL=C sed 's/µ/u/g' "$1"
}

# text_rows NAME [ADDR]: the recent operations of the mutex at ADDR ($M),
# or of the ended line (ADDR "ended"), from the text report, one a line:
# order (from the first row's), thread (A, B, else its id), operation,
# result, at ("-", or t for a time), caller's function:line.
text_rows() {
	plain_mu "$WORK/$1.txt" | LC_ALL=C awk -v a="${2:-$M}" -v A="$A" -v B="$B_TID" '
		/^#[0-9]+ / { on = a == "ended" ? / that ended / : $2 == "mutex" && $3 == a; rows = 0; next }
		on && /^ +order +thread +operation/ { rows = 1; timed = / at +caller$/; next }
		on && rows && !/^ +[0-9]+ +[0-9]+  / { rows = 0 }
		on && rows {
			# the columns are fixed: "  %10s %8s  %-18s %-16s %-10s %s",
			# or without the "at" column where no row has a time
			# (in characters: plain_mu made each one byte)
			o = substr($0, 1, 12) + 0; t = substr($0, 13, 9) + 0
			op = substr($0, 24, 18); res = substr($0, 43, 16)
			if (timed) { at = substr($0, 60, 10); caller = substr($0, 71) }
			else { at = "-"; caller = substr($0, 60) }
			gsub(/ +$/, "", op); gsub(/ +$/, "", res); gsub(/ +$/, "", at)
			if (first == "") first = o
			who = t == A ? "A" : t == B ? "B" : t
			if (at ~ /^t\+[0-9.]+ [a-z]+$/) at = "t"
			fn = caller; sub(/\+0x.*/, "", fn)
			ln = caller
			if (match(ln, /\.c:[0-9]+/)) ln = substr(ln, RSTART + 3, RLENGTH - 3); else ln = "?"
			print "+" (o - first) "|" who "|" op "|" res "|" at "|" fn ":" ln
		}'
}

# json_rows NAME [ADDR]: the same from the JSON report.
json_rows() {
	jq -r --arg a "${2:-$M}" --argjson A "$A" --argjson B "$B_TID" '
		(if $a == "ended" then .ended[0] else .mutexes[] | select(.address == $a) end)
		| .recent_operations | .[0].order as $o0 | .[]
		| ["+\(.order - $o0)",
		   (if .thread == $A then "A" elif .thread == $B then "B" else "\(.thread)" end),
		   .op, (.result + (if .waited then " after wait" else "" end)),
		   (if .time_ns == null then "-" else "t" end),
		   "\(.caller.function):\(.caller.line)"] | join("|")' "$WORK/$1.json"
}

# expect_rows WHAT GOT WANT: two files of rows, the same.
expect_rows() {
	if cmp -s "$2" "$3"; then pass "$1"; else
		fail "$1 (- wanted, + reported):"
		diff -u "$3" "$2" | tail -n +3 | sed 's/^/  | /' >&2
	fi
}

# both_rows NAME WHAT WANT [ADDR]: the text and the JSON report list the
# rows wanted.
both_rows() {
	text_rows "$1" "${4:-}" > "$WORK/$1.text_rows"
	json_rows "$1" "${4:-}" > "$WORK/$1.json_rows"
	expect_rows "$1: $2 (text)" "$WORK/$1.text_rows" "$3"
	expect_rows "$1: $2 (JSON)" "$WORK/$1.json_rows" "$3"
}

# mutex NAME FILTER: jq FILTER of m's object in the JSON report
mutex() {
	jq -r --arg a "$M" ".mutexes[] | select(.address == \$a) | $2" "$WORK/$1.json"
}

# ns N UNIT: a report's duration ("1.23 ms") in ns
ns() {
	LC_ALL=C awk -v v="$1" -v u="$2" 'BEGIN { m = u == "s" ? 1e9 : u == "ms" ? 1e6 : u == "ns" ? 1 : 1e3; printf "%.0f\n", v * m }'
}

# slept MS: the least a wait or hold of MS milliseconds or more can be
# reported as, in ns: 2% less, for the calibration of the clock's ticks
# against CLOCK_MONOTONIC over the run (a preemption between its two reads
# skews it; 0.17% was seen) and the 3 digits of the text report.
slept() {
	echo $(($1 * 1000000 / 100 * 98))
}

# within WHAT VALUE LOW HIGH: LOW <= VALUE <= HIGH (integers, ns)
within() {
	if [ "$2" -ge "$3" ] 2>/dev/null && [ "$2" -le "$4" ]; then
		pass "$1 ($2 in [$3, $4])"
	else
		fail "$1: $2 not in [$3, $4]"
	fi
}

# ---- owners: the plain path, changes of owner without a wait ------------
# A and B take m by turns, never at once.  Every row names the thread that
# made it: also an uncontended change of owner, which takes the plain
# path once the thread's cache knows m (its first lock of m does not), and
# a retake by the same thread.
run owners owners
expand > "$WORK/owners.want" <<'EOF'
+0|A|init|ok|-|init_m:@init
+1|A|lock|ok|-|a_lock_unlock:@a_lock
+2|A|unlock|ok|-|a_lock_unlock:@a_unlock
+3|B|lock|ok|-|b_lock_unlock:@b_lock
+4|B|unlock|ok|-|b_lock_unlock:@b_unlock
+5|A|lock|ok|-|a_lock_unlock:@a_lock
+6|A|unlock|ok|-|a_lock_unlock:@a_unlock
+7|B|lock|ok|-|b_lock_unlock:@b_lock
+8|B|unlock|ok|-|b_lock_unlock:@b_unlock
+9|A|lock|ok|-|a_lock_unlock:@a_lock
+10|A|unlock|ok|-|a_lock_unlock:@a_unlock
+11|A|lock|ok|-|a_lock_unlock:@a_lock
+12|A|unlock|ok|-|a_lock_unlock:@a_unlock
+13|B|trylock|ok|-|b_trylock_unlock:@b_trylock
+14|B|unlock|ok|-|b_trylock_unlock:@b_tryunlock
+15|B|trylock|ok|-|b_trylock_unlock:@b_trylock
+16|B|unlock|ok|-|b_trylock_unlock:@b_tryunlock
+17|A|timedlock|ok|-|a_timedlock_unlock:@a_timedlock
+18|A|unlock|ok|-|a_timedlock_unlock:@a_timedunlock
+19|B|clocklock|ok|-|b_clocklock_unlock:@b_clocklock
+20|B|unlock|ok|-|b_clocklock_unlock:@b_clockunlock
EOF
both_rows owners "every row by the thread that did it, none waited" "$WORK/owners.want"
expect_eq "owners: 10 acquisitions, 7 owner changes, 2 trylocks, none waited" \
	"$(mutex owners '"\(.acquisitions) \(.owner_changes) \(.trylock_ok) \(.contended) \(.hold_timed) \(.hold)"')" \
	"10 7 2 0 false null"
expect_eq "owners: the top table says so too" \
	"$(top_row "$WORK/owners.txt" "$M" | awk '{ print $3, $4, $(NF - 2) }')" "10 0 7"
# no row has a time (none waited): no "at" column of dashes
expect_eq "owners: the columns, without \"at\"" \
	"$(awk -v a="$M" '/^#[0-9]+ / { on = $2 == "mutex" && $3 == a; next }
		on && /^ +order +thread/ { $1 = $1; print; exit }' "$WORK/owners.txt")" \
	"order thread operation result caller"

# ---- contended: waits, a busy trylock, a timeout ------------------------
# A holds m; B's trylock finds it busy and B's 20 ms timedlock times out,
# both in the side ring.  Both share the order of A's unlock and are
# listed before it, in the order made: B's second failure on the same hold
# takes its first one's number (one more would list it after A's unlock,
# which it came before; A's unlock saw neither: failures leave the mutex's
# order alone).  B's lock waits 50 ms for A.  Then A waits 30 ms for B by timedlock and by clocklock.
# Waits and failures have their time.
run contended contended
expand > "$WORK/contended.want" <<'EOF'
+0|A|init|ok|-|init_m:@init
+1|A|lock|ok|-|a_lock:@a_lock_only
+2|B|trylock|EBUSY|t|b_trylock_busy:@b_trylock_busy
+2|B|timedlock|ETIMEDOUT|t|b_timedlock_timeout:@b_timedlock_timeout
+2|A|unlock|ok|-|a_unlock:@a_unlock_only
+3|B|lock|ok after wait|t|b_wait_hold_20:@b_lock_wait
+4|B|unlock|ok|-|b_wait_hold_20:@b_unlock_wait
+5|B|lock|ok|-|b_lock:@b_lock_only
+6|B|unlock|ok|-|b_unlock_after_waiter:@b_unlock_after
+7|A|timedlock|ok after wait|t|a_timedlock_wait:@a_timedlock_wait
+8|A|unlock|ok|-|a_unlock:@a_unlock_only
+9|B|lock|ok|-|b_lock:@b_lock_only
+10|B|unlock|ok|-|b_unlock_after_waiter:@b_unlock_after
+11|A|clocklock|ok after wait|t|a_clocklock_wait:@a_clocklock_wait
+12|A|unlock|ok|-|a_unlock:@a_unlock_only
+13|A|trylock|ok|-|a_trylock_unlock:@a_trylock
+14|A|unlock|ok|-|a_trylock_unlock:@a_tryunlock
EOF
both_rows contended "waits, a busy trylock and a timeout, each by its thread" "$WORK/contended.want"
# acquisitions: A, B after its wait, B, A, B, A, A: 4 owner changes
expect_eq "contended: 3 waits that got it, 1 timeout, 1 busy and 1 ok trylock" \
	"$(mutex contended '"\(.acquisitions) \(.contended) \(.timeouts) \(.trylock_busy) \(.trylock_ok) \(.owner_changes)"')" \
	"7 3 1 1 1 4"
# The times of the rows, from the JSON report (t1 the trylock ... t5 the
# clocklock): each at least what the program slept between them, none
# after the run's end.
run_ns=$(jq .run_ns "$WORK/contended.json")
set -- $(mutex contended '.recent_operations[] | select(.time_ns != null) | .time_ns')
expect_eq "contended: five rows with a time" "$#" 5
if [ "$#" -eq 5 ]; then
	t1=$1 t2=$2 t3=$3 t4=$4 t5=$5
	within "contended: the timeout 20 ms or more after the trylock" $((t2 - t1)) "$(slept 20)" "$run_ns"
	within "contended: B's wait ended 50 ms or more after the timeout" $((t3 - t2)) "$(slept 50)" "$run_ns"
	within "contended: A's timedlock got it 20 + 30 ms or more after" $((t4 - t3)) "$(slept 50)" "$run_ns"
	within "contended: A's clocklock got it 30 ms or more after" $((t5 - t4)) "$(slept 30)" "$run_ns"
	within "contended: the first time after the start" "$t1" 1 "$run_ns"
	within "contended: the last before the run's end" "$t5" "$t4" "$run_ns"
	expect_eq "contended: the columns, with \"at\"" \
		"$(awk -v a="$M" '/^#[0-9]+ / { on = $2 == "mutex" && $3 == a; next }
			on && /^ +order +thread/ { $1 = $1; print; exit }' "$WORK/contended.txt")" \
		"order thread operation result at caller"
	# the text's "at" column ("t+6.04 ms") is the same time, to the 3
	# digits it shows
	# (within 0.5%, and a little for the rounding of ns)
	plain_mu "$WORK/contended.txt" | LC_ALL=C awk -v a="$M" '
		/^#[0-9]+ / { on = $2 == "mutex" && $3 == a; next }
		on && /^ +[0-9]+ +[0-9]+  / && substr($0, 60, 10) ~ /[0-9]/ { print substr($0, 60, 10) }' \
		> "$WORK/contended.at"
	printf '%s\n' "$t1" "$t2" "$t3" "$t4" "$t5" | paste "$WORK/contended.at" - |
	    awk -F '\t' '{ sub(/^t\+/, "", $1); split($1, d, " "); u = d[2]
		t = d[1] * (u == "s" ? 1e9 : u == "ms" ? 1e6 : u == "ns" ? 1 : 1e3)
		if (t < $2 * 0.994 || t > $2 * 1.006 + 1) { bad++; print "  at " $1 ", JSON " $2 " ns" > "/dev/stderr" }
		n++ } END { print bad + 0, n + 0 }' > "$WORK/contended.same"
	expect_eq "contended: the text's times are the JSON's" "$(cat "$WORK/contended.same")" "0 5"
fi
wait_total=$(mutex contended .wait_total_ns)
within "contended: wait total, the timeout's 20 ms and 50 + 30 + 30 ms of waits or more" \
	"$wait_total" "$(slept 130)" "$run_ns"
within "contended: the longest wait 50 ms or more" "$(mutex contended .wait_max_ns)" "$(slept 50)" "$wait_total"
expect_eq "contended: each hold from B's wait on timed (the 2nd to 7th)" \
	"$(mutex contended .hold.timed)" 6
within "contended: the longest hold B's 20 ms or more" "$(mutex contended .hold.max_ns)" "$(slept 20)" "$run_ns"

# ---- sampled: past the first 4,096 acquisitions ----------------------------
# After one wait (the 2nd acquisition), holds of m are timed up to its
# 4,096th acquisition, then 1 in 16: the 4,097th, 4,113th, 4,129th, ...
# Past the 4,096th each path takes a timed hold and a plain one; the last
# 128 operations are acquisitions 4,098 to 4,161, each a lock or trylock by
# the thread that made it, then its unlock:
#   4,098-4,144  A's relocks (4,113th and 4,129th timed)
#   4,145        B: an uncontended owner change, timed
#   4,146        B's relock
#   4,147        A: an uncontended owner change, not timed
#   4,148-4,158  A's relocks
#   4,159        B: an owner change by trylock
#   4,160-4,161  B's retakes by trylock (the 4,161st timed)
run sampled sampled
{
	pairs() { # N WHO OP FUNCTION LOCK-LINE UNLOCK-LINE
		for _ in $(seq "$1"); do
			echo "$2|$3|ok|-|$4:@$5"
			echo "$2|unlock|ok|-|$4:@$6"
		done
	}
	pairs 47 A lock a_relock a_relock a_reunlock
	pairs 2 B lock b_lock_unlock b_lock b_unlock
	pairs 12 A lock a_relock a_relock a_reunlock
	pairs 3 B trylock b_trylock_unlock b_trylock b_tryunlock
} | awk '{ print "+" NR - 1 "|" $0 }' | expand > "$WORK/sampled.want"
both_rows sampled "the 128 operations past the 4,097th acquisition" "$WORK/sampled.want"
# timed: the 2nd to the 4,096th, then the 4,097th, 4,113th, 4,129th,
# 4,145th and 4,161st; owner changes at the 2nd, 3rd, 4,145th, 4,147th and
# 4,159th
expect_eq "sampled: 4,161 acquisitions, 4,100 holds timed, 5 owner changes" \
	"$(mutex sampled '"\(.acquisitions) \(.hold.timed) \(.owner_changes) \(.contended) \(.trylock_ok)"')" \
	"4161 4100 5 1 3"
expect_grep "sampled: the text says 4,100 holds timed" \
	'^  hold times, of the holds timed \(4100\):$' "$WORK/sampled.txt"
expect_eq "sampled: the top table says 4,161 acquired, 5 owner changes" \
	"$(top_row "$WORK/sampled.txt" "$M" | awk '{ print $3, $4, $(NF - 2) }')" "4161 1 5"

# ---- holds: what the hold times add up to --------------------------------
# B waits for m, then holds it 20 ms; A holds it 20, 20, 50 and 50 ms: 5
# timed holds (A's first, before any wait, is not), 160 ms or more in all,
# the longest 50 ms or more.  The program measured how long each could at
# most have lasted (from before the lock to after the unlock): the
# report's numbers lie between (5% more for the clock's calibration).
check_holds() { # NAME ADDR-OR-ended
	name=$1 which=$2
	if [ "$which" = ended ]; then
		sel='.ended[0]'
	else
		sel=".mutexes[] | select(.address == \"$M\")"
	fi
	set -- $(sed -n 's/^bound total \([0-9]*\) max \([0-9]*\)$/\1 \2/p' "$WORK/$name.out")
	bound_total=$1 bound_max=$2
	set -- $(jq -r "$sel | .hold | \"\\(.timed) \\(.mean_ns) \\(.max_ns) \\(.total_ns)\"" "$WORK/$name.json")
	expect_eq "$name: 5 holds timed (JSON)" "$1" 5
	within "$name: hold total 160 ms or more (JSON)" "$4" "$(slept 160)" \
		$((bound_total + bound_total / 20))
	expect_eq "$name: hold mean is the total over 5 (JSON)" "$2" $(($4 / 5))
	within "$name: hold mean 32 ms or more (JSON)" "$2" "$(slept 32)" $((bound_total / 5 + bound_total / 100))
	within "$name: hold max 50 ms or more (JSON)" "$3" "$(slept 50)" $((bound_max + bound_max / 20))
	# the text: its top row's hold avg and max, 3 digits
	if [ "$which" = ended ]; then
		row=$(top_row "$WORK/$name.txt" "1 ended")
	else
		row=$(top_row "$WORK/$name.txt" "$M")
	fi
	# its durations: wait total, wait max, hold avg, hold max
	durations=$(echo "$row" | LC_ALL=C sed 's/µ/u/g' | awk '{ for (i = 2; i <= NF; i++)
		if ($i ~ /^(ns|us|ms|s)$/ && $(i - 1) ~ /^[0-9.]+$/) printf "%s %s|", $(i - 1), $i }')
	avg=$(echo "$durations" | cut -d'|' -f3)
	max=$(echo "$durations" | cut -d'|' -f4)
	within "$name: hold avg $avg, 32 ms or more (text)" "$(ns $avg)" "$(slept 32)" \
		$((bound_total / 5 + bound_total / 100))
	within "$name: hold max $max, 50 ms or more (text)" "$(ns $max)" "$(slept 50)" \
		$((bound_max + bound_max / 20))
}
run holds holds
check_holds holds live
expect_grep "holds: the text counts 5 holds timed" '^  hold times, of the holds timed \(5\):$' "$WORK/holds.txt"
expect_eq "holds: its histogram's rows count them" \
	"$(awk -v a="$M" '/^#[0-9]+ / { on = $2 == "mutex" && $3 == a; next }
		on && /^  hold times, of the holds timed/ { h = 1; next }
		on && h && /^    p50/ { exit } on && h { s += $NF } END { print s }' "$WORK/holds.txt")" 5
expand > "$WORK/holds.want" <<'EOF'
+0|A|init|ok|-|init_m:@init
+1|A|lock|ok|-|a_lock:@a_lock_only
+2|A|unlock|ok|-|a_unlock:@a_unlock_only
+3|B|lock|ok after wait|t|b_wait_hold_20:@b_lock_wait
+4|B|unlock|ok|-|b_wait_hold_20:@b_unlock_wait
+5|A|lock|ok|-|a_hold:@a_hold_lock
+6|A|unlock|ok|-|a_hold:@a_hold_unlock
+7|A|lock|ok|-|a_hold:@a_hold_lock
+8|A|unlock|ok|-|a_hold:@a_hold_unlock
+9|A|lock|ok|-|a_hold:@a_hold_lock
+10|A|unlock|ok|-|a_hold:@a_hold_unlock
+11|A|lock|ok|-|a_hold:@a_hold_lock
+12|A|unlock|ok|-|a_hold:@a_hold_unlock
EOF
both_rows holds "timed holds are plain rows" "$WORK/holds.want"

# The same mutex destroyed at the end: its line of ended mutexes keeps the
# same hold numbers and the same recent operations, and then the destroy
# that ended it, where and when.
run ended holds ended
check_holds ended ended
{ cat "$WORK/holds.want"; expand <<'EOF'
+13|A|destroy|ok|t|destroy_m:@destroy
EOF
} > "$WORK/ended.want"
both_rows ended "an ended mutex's rows" "$WORK/ended.want" ended

# A wait that only timed out made B wait too: the holds after it are timed
# (the one it ran into began before, and is not): 2, 70 ms or more in all.
run timeouts timeouts
set -- $(sed -n 's/^bound total \([0-9]*\) max \([0-9]*\)$/\1 \2/p' "$WORK/timeouts.out")
bound_total=$1
set -- $(mutex timeouts '"\(.timeouts) \(.hold_timed) \(.hold.timed) \(.hold.total_ns)"')
expect_eq "timeouts: 1 timeout, then 2 holds timed (JSON)" "$1 $2 $3" "1 true 2"
within "timeouts: their total 70 ms or more (JSON)" "$4" "$(slept 70)" $((bound_total + bound_total / 20))
expect_grep "timeouts: the heading counts the mutex among those that made a thread wait" \
	'^  hold times: of the 1 mutex that made a thread wait, ' "$WORK/timeouts.txt"

# Two lives that failed (an unlock refused: their histories are kept),
# destroyed b then a by one thread: the destroys' orders follow the
# thread (a's was the smaller, the lock's newest + 1)
cat >"$WORK/two.c" <<'EOF'
#include <pthread.h>
static pthread_mutex_t a, b;
static void life(pthread_mutex_t *m)
{
	pthread_mutexattr_t at;
	pthread_mutexattr_init(&at);
	pthread_mutexattr_settype(&at, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(m, &at);
	pthread_mutex_lock(m);
	pthread_mutex_unlock(m);
	pthread_mutex_unlock(m); /* EPERM */
}
int main(void)
{
	life(&a); /* first-a */
	life(&b);
	for (int i = 0; i < 20; i++) { /* b's order runs ahead of a's */
		pthread_mutex_lock(&b);
		pthread_mutex_unlock(&b);
	}
	pthread_mutex_destroy(&b); /* destroy-b */
	pthread_mutex_destroy(&a); /* destroy-a */
	return 0;
}
EOF
if ${CC:-cc} -g -O0 -o "$WORK/two" "$WORK/two.c" -lpthread; then
	env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/two.txt" "$WORK/two"
	two_line() { grep -n "/\* $1 \*/" "$WORK/two.c" | cut -d: -f1; }
	# "ORDER LINE" of each destroy row
	rows=$(awk '$3 == "destroy" && $4 == "ok" { l = $0; sub(/.*two\.c:/, "", l); sub(/[,)].*/, "", l); print $1, l }' \
		"$WORK/two.txt")
	ob=$(echo "$rows" | awk -v l="$(two_line destroy-b)" '$2 == l { print $1 }')
	oa=$(echo "$rows" | awk -v l="$(two_line destroy-a)" '$2 == l { print $1 }')
	expect_eq "two destroys: each life's history ends with its own, a's ordered after b's" \
		"$(echo "$rows" | wc -l) $([ -n "$oa" ] && [ -n "$ob" ] && [ "$oa" -gt "$ob" ] && echo after)" \
		"2 after"
else
	fail "two destroys: the program did not build"
fi

finish
