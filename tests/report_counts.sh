# report_counts.sh - the report's numbers are exact where they can be:
# acquisitions, contentions, trylock and timeout counts, owner changes.
. "$top_srcdir/tests/lib.sh"
B=$top_builddir

# durations in ns, from the report's "1.23 ms" form
ns() { awk -v v="$1" -v u="$2" 'BEGIN { m = u == "s" ? 1e9 : u == "ms" ? 1e6 : u == "ns" ? 1 : 1e3; printf "%.0f\n", v * m }'; }

# The design's own check: 10 threads x 20 mutexes x 100 rounds.
MUTEXSTAT_TOP=20 run_with "$WORK/out" "$WORK/err" "$B/examples/ten_by_twenty"
expect_eq "ten_by_twenty exit output" "$(cat "$WORK/out")" \
	"10 threads x 20 mutexes x 100 rounds done"
expect_grep "summary line" '^mutexstat: ten_by_twenty \(pid [0-9]+\) ran .*: 11 threads used mutexes, 20 mutexes tracked, 0 untracked$' "$WORK/report"
rows=$(awk '/^Top 20 mutexes/ { t = 1; getline; next } t && /^$/ { t = 0 } t' "$WORK/report")
expect_eq "rows in the top table" "$(printf '%s\n' "$rows" | wc -l)" 20
expect_eq "rows with exactly 1000 acquisitions" \
	"$(printf '%s\n' "$rows" | awk '$3 == 1000' | wc -l)" 20

# The demo: 4 threads on one hot mutex, one thread alone on another.
run_with "$WORK/out" "$WORK/err" "$B/examples/contention" 4 5000
expect_eq "contention output" "$(cat "$WORK/out")" \
	"counter = 20000 (expected 20000), quiet counter = 5000"
expect_grep "hot mutex: 20000 acquisitions" '^ +1 <hot> +20000 ' "$WORK/report"
expect_grep "quiet mutex: 5000, never contended, no owner change" \
	'^ +2 <quiet> +5000 +0 +0 ns +0 ns +- +- +0 ' "$WORK/report"

# exact: 1000 locks + 3 trylocks of m1; 2 EBUSY and 1 timeout on m2.
run_with "$WORK/out" "$WORK/err" "$B/tests/scenario" exact
m1=$(awk '/^m1 /{print $2}' "$WORK/out"); m2=$(awk '/^m2 /{print $2}' "$WORK/out")
expect_grep "m1: 1003 acquisitions, none contended" "^ +[0-9]+ $(top_label_re "$WORK/report" "$m1") +1003 +0 " "$WORK/report"
expect_grep "m1 detail: 3 trylocks ok" "^#[0-9]+ mutex $m1( <[^>]+>)? \(normal, no init seen\)" "$WORK/report"
expect_grep "m1 trylocks" "trylock 3 ok, 0 busy; timed out 0" "$WORK/report"
expect_grep "m2: 1 acquisition by the helper" "^ +[0-9]+ $(top_label_re "$WORK/report" "$m2") +1 +0 " "$WORK/report"
expect_grep "m2: 2 busy trylocks, 1 timeout" "trylock 0 ok, 2 busy; timed out 1; most waiters at once 1" "$WORK/report"
expect_grep "m2 history shows the EBUSY trylock" " trylock +EBUSY " "$WORK/report"
expect_grep "m2 history shows the timeout" " timedlock +ETIMEDOUT " "$WORK/report"

# baddeadline: a timedlock of a held mutex that glibc answers EINVAL for its
# deadline, which it never waits with: an error, not a waiter
run_with "$WORK/out" "$WORK/err" "$B/tests/scenario" baddeadline
expect_grep "baddeadline: no waiter, no timeout" "trylock 0 ok, 0 busy; timed out 0; most waiters at once 0" "$WORK/report"
expect_grep "baddeadline: the EINVAL counted" "^  errors returned: EINVAL 1\$" "$WORK/report"
expect_grep "baddeadline: ... and in the history" " timedlock +EINVAL " "$WORK/report"

# contend: 5 contended acquisitions out of 10, owner alternating: 9 changes,
# each wait ~20 ms, hold times measured once contended.
run_with "$WORK/out" "$WORK/err" "$B/tests/scenario" contend
m1=$(awk '/^m1 /{print $2}' "$WORK/out")
row=$(top_row "$WORK/report" "$m1")
expect_eq "contend: acquired, contended" "$(echo "$row" | awk '{print $3, $4}')" "10 5"
# (times from below only: a loaded machine makes sleeps longer, never shorter)
expect_eq "contend: 9 owner changes" "$(echo "$row" | awk '{print $13}')" 9
expect_eq "contend: a timed hold of at least the 20 ms slept" \
	"$(ns $(echo "$row" | awk '{print $11, $12}') | awk '{print ($1 >= 20000000) ? "yes" : $1 " ns"}')" yes
expect_eq "contend: the waits add up to at least 5 x 20 ms" \
	"$(ns $(echo "$row" | awk '{print $5, $6}') | awk '{print ($1 >= 100000000) ? "yes" : $1 " ns"}')" yes
expect_grep "contend: history marks waited locks" " lock +ok after wait +t\+[0-9.]+ m?s " "$WORK/report"
expect_grep "contend: a histogram of the 5 waits" '^  wait times, of waits that got the mutex \(5\):$' "$WORK/report"
expect_eq "contend: its rows count the 5 waits" \
	"$(awk '/^  wait times, of waits/ { on = 1; next } on && /^    p50/ { exit } on { s += $NF } END { print s }' "$WORK/report")" 5
expect_grep "contend: the waits' percentiles" '^    p50 <= [0-9.]+ m?s  p90 <= [0-9.]+ m?s  p99 <= [0-9.]+ m?s  max [0-9.]+ m?s$' "$WORK/report"
expect_grep "contend: a histogram of the timed holds" '^  hold times, of the holds timed \([0-9]+\):$' "$WORK/report"

# contend, then 100,000 pairs alone: holds are timed from the first wait
# (the 2nd acquisition) to the 4096th, then the 4097th, 4113th, ... --
# 4095 + 5995 = 10090, whichever path the lock took (most are plain).
run_with "$WORK/out" "$WORK/err" "$B/tests/scenario" contend 100000
m1=$(awk '/^m1 /{print $2}' "$WORK/out")
expect_eq "contend, then alone: acquired" "$(top_row "$WORK/report" "$m1" | awk '{print $3}')" 100010
expect_grep "contend, then alone: exactly the holds to time" '^  hold times, of the holds timed \(10090\):$' "$WORK/report"
expect_no_grep "contend, then alone: 20-ms holds are not short" 'short holds' "$WORK/report"

# shortholds: one contended acquisition of m1, then pairs alone.  Holds of
# a few ns: the detail says the library's own work lengthens them, as does
# JSON's short_holds.  Holds of at least 1 us: neither (lines.h: under
# 500 ns on average).  A hold the thread is preempted in is longer by the
# time it waited for a CPU, and the mean with it: the few-ns holds are some
# 20 ns here, longer in a sanitized build, where a loaded machine could
# take them past 500 -- there the line and JSON must only agree with the
# mean.
short_holds() { # NAME PAIRS NS: the text's line, JSON's [contended, short_holds, mean < 500]
	MUTEXSTAT_FORMAT=text,json MUTEXSTAT_OUTPUT=$WORK/sh run_with "$WORK/out" "$WORK/err" \
		"$B/tests/scenario" shortholds "$2" "$3"
	m1=$(awk '/^m1 /{print $2}' "$WORK/out")
	expect_eq "$1: acquired, contended" "$(top_row "$WORK/sh.txt" "$m1" | awk '{print $3, $4}')" \
		"$(($2 + 2)) 1"
	SH_LINE=$(grep -A1 '^  short holds' "$WORK/sh.txt")
	SH_JSON=$(jq -c '[.mutexes[] | select(.address == "'"$m1"'") |
		.contended, .short_holds, .hold.mean_ns < 500]' "$WORK/sh.json")
}
short_holds "shortholds, a few ns" 4000000 0
if ! sanitized || [ "$SH_JSON" = "[1,true,true]" ]; then
	expect_eq "shortholds, a few ns: the detail's line" "$(printf '%s\n' "$SH_LINE" | sed 's/([0-9]* ns on average)/(N ns on average)/')" \
"  short holds (N ns on average): the library's own work lengthens each, so threads find it taken
  more often than they would without the library (doc/limits.md, \"Short holds\")"
	expect_eq "shortholds, a few ns: JSON" "$SH_JSON" "[1,true,true]"
else
	expect_eq "shortholds, a few ns, sanitized, the mean past 500 ns: no line, as JSON says" \
		"$SH_LINE $SH_JSON" " [1,false,false]"
fi
short_holds "shortholds, 1 us" 20000 1000
expect_eq "shortholds, 1 us: no line" "$SH_LINE" ""
expect_eq "shortholds, 1 us: JSON" "$SH_JSON" "[1,false,false]"

# byturns: two threads take one mutex by turns, 10,000 times each, never
# at once: every acquisition but the first is an owner change.  Then the
# same after one wait at the start: 20,002 acquisitions, 20,001 changes,
# holds timed from the wait's (the 2nd) to the 4096th, then the 4097th,
# 4113th, ... 20001st: 4095 + 995.
run_with "$WORK/out" "$WORK/err" "$B/tests/scenario" byturns 10000
m3=$(awk '/^m3 /{print $2}' "$WORK/out")
row=$(top_row "$WORK/report" "$m3")
expect_eq "byturns: acquired, contended" "$(echo "$row" | awk '{print $3, $4}')" "20000 0"
expect_eq "byturns: an owner change at each turn" "$(echo "$row" | awk '{print $(NF - 2)}')" 19999
expect_no_grep "byturns: no hold timed" 'hold times, of the holds timed' "$WORK/report"
# Nested: each thread holds a mutex of its own around its turns (the
# inner lock's plain path, interpose.c's acquired_nested).
run_with "$WORK/out" "$WORK/err" "$B/tests/scenario" byturns 10000 nested
m3=$(awk '/^m3 /{print $2}' "$WORK/out")
row=$(top_row "$WORK/report" "$m3")
expect_eq "byturns nested: acquired, contended" "$(echo "$row" | awk '{print $3, $4}')" "20000 0"
expect_eq "byturns nested: an owner change at each turn" "$(echo "$row" | awk '{print $(NF - 2)}')" 19999
expect_no_grep "byturns nested: no finding" 'DEADLOCK|INVERSION|MISUSE' "$WORK/report"
expect_eq "byturns nested: an outer lock, one thread's: acquired, changes" \
	"$(top_row "$WORK/report" "<outer_a>" | awk '{print $3, $(NF - 2)}')" "10000 0"
run_with "$WORK/out" "$WORK/err" "$B/tests/scenario" byturns 10000 waited
m3=$(awk '/^m3 /{print $2}' "$WORK/out")
row=$(top_row "$WORK/report" "$m3")
expect_eq "byturns after a wait: acquired, contended" "$(echo "$row" | awk '{print $3, $4}')" "20002 1"
expect_eq "byturns after a wait: owner changes" "$(echo "$row" | awk '{print $(NF - 2)}')" 20001
expect_grep "byturns after a wait: exactly the holds to time" '^  hold times, of the holds timed \(5090\):$' "$WORK/report"
# The same turns on a spin lock (its plain path takes an owner change and
# a hold not to time as the mutex's does).
run_with "$WORK/out" "$WORK/err" "$B/tests/scenario" byturns 10000 spin
s3=$(awk '/^s3 /{print $2}' "$WORK/out")
row=$(top_row "$WORK/report" "$s3")
expect_eq "byturns, spin: acquired, contended" "$(echo "$row" | awk '{print $3, $4}')" "20000 0"
expect_eq "byturns, spin: an owner change at each turn, the kind" \
	"$(echo "$row" | awk '{print $(NF - 3), $(NF - 2)}')" "19999 spin"
expect_no_grep "byturns, spin: no hold timed" 'hold times, of the holds timed' "$WORK/report"
run_with "$WORK/out" "$WORK/err" "$B/tests/scenario" byturns 10000 spinwaited
s3=$(awk '/^s3 /{print $2}' "$WORK/out")
row=$(top_row "$WORK/report" "$s3")
expect_eq "byturns, spin, after a wait: acquired, contended" "$(echo "$row" | awk '{print $3, $4}')" "20002 1"
expect_eq "byturns, spin, after a wait: owner changes" "$(echo "$row" | awk '{print $(NF - 3)}')" 20001
expect_grep "byturns, spin, after a wait: exactly the holds to time" \
	'^  hold times, of the holds timed \(5090\):$' "$WORK/report"

# timeouts: two timed locks that time out and one lock that gets m1, each
# waiting ~20 ms: the mean wait is the total over all three waits, and the
# one wait that got the mutex is every percentile of its histogram (a
# bucket's top would read above the max).
run_with "$WORK/out" "$WORK/err" "$B/tests/scenario" timeouts
m1=$(awk '/^m1 /{print $2}' "$WORK/out")
expect_eq "timeouts: acquired, contended" "$(top_row "$WORK/report" "$m1" | awk '{print $3, $4}')" "2 1"
expect_grep "timeouts: 2 timed out" "timed out 2; most waiters at once 1; condition waits 0; mean wait " "$WORK/report"
total=$(top_row "$WORK/report" "$m1" | awk '{print $5, $6}')
mean=$(sed -n 's/.*; mean wait \([0-9.]*\) \([^ ]*\)$/\1 \2/p' "$WORK/report" | head -1)
expect_eq "timeouts: mean wait = total / 3 (to 5%)" "$(awk -v t="$(ns $total)" -v m="$(ns $mean)" \
	'BEGIN { r = t / (3 * m); print (r > 0.95 && r < 1.05) ? "yes" : "no: total " t " mean " m }')" yes
expect_eq "timeouts: one wait is p50, p90, p99 and max" "$(awk '/^    p50 / { print ($3 $4 == $7 $8 && $7 $8 == $11 $12 && $11 $12 == $14 $15) ? "yes" : $0; exit }' "$WORK/report")" yes

# condwait: 100 ms waiting for a condition is not contention.
run_with "$WORK/out" "$WORK/err" "$B/tests/scenario" condwait
m1=$(awk '/^m1 /{print $2}' "$WORK/out")
expect_grep "condwait: 3 acquisitions (lock, retake, signaller), no wait" \
	"^ +1 $(top_label_re "$WORK/report" "$m1") +3 +0 +0 ns +0 ns " "$WORK/report"
expect_grep "condwait: one condition wait" "condition waits 1$" "$WORK/report"
expect_grep "condwait: release and retake in the history" "cond-wait release" "$WORK/report"
expect_grep "condwait: retake" "cond-wait retake" "$WORK/report"

# A program that locks nothing says so in one line.
run_with "$WORK/out" "$WORK/err" "$B/tests/scenario" none
expect_eq "no mutexes: one line" "$(wc -l < "$WORK/report")" 1
expect_grep "no mutexes: the line" '^mutexstat: scenario \(pid [0-9]+\) ran .* and locked no mutexes$' "$WORK/report"
# It names no code, so libdw (and the libraries it needs) is not loaded:
# a short process's exit costs what its one line does.  A report that
# names code loads it.
LD_DEBUG=files run_with "$WORK/out" "$WORK/err" "$B/tests/scenario" none
expect_eq "no mutexes: libdw not loaded" "$(grep -c 'file=libdw\.so' "$WORK/err")" 0
LD_DEBUG=files run_with "$WORK/out" "$WORK/err" "$B/tests/scenario" exact
expect_eq "mutexes: libdw loaded to name their code" \
	"$(grep -c 'file=libdw\.so.*dynamically loaded by' "$WORK/err")" 1

# Lines are at most 120 columns, times in human units.
for f in "$WORK/report"; do :; done
run_with "$WORK/out" "$WORK/err" "$B/examples/contention" 4 2000
expect_eq "no line over 120 columns" "$(sed 's/µ/u/g' "$WORK/report" | awk 'length($0) > 120' | wc -l)" 0
# Mutexes initialised and never locked are tracked, and in no row: the
# header says how many, so that "3 mutexes tracked" above a table of one
# row reads right.
CC=${CC:-cc}
cat >"$WORK/unlocked.c" <<'EOF2'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
int main(int argc, char **argv)
{
	(void)argv;
	pthread_mutex_t a, b, c;
	pthread_mutex_init(&a, NULL);
	pthread_mutex_init(&b, NULL);
	pthread_mutex_init(&c, NULL);
	if (argc > 1) { /* "reset": all three locked, then a reset, then a */
		void (*reset)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "mutexstat_reset");
		pthread_mutex_lock(&b);
		pthread_mutex_unlock(&b);
		pthread_mutex_lock(&c);
		pthread_mutex_unlock(&c);
		if (reset)
			reset();
	}
	pthread_mutex_lock(&a);
	pthread_mutex_unlock(&a);
	return 0;
}
EOF2
# shellcheck disable=SC2086 # SAN_FLAGS is a list of flags
"$CC" $SAN_FLAGS -pthread -o "$WORK/unlocked" "$WORK/unlocked.c" || fail "cannot build unlocked.c"
run_with "$WORK/out" "$WORK/err" "$WORK/unlocked"
expect_grep "never locked: 3 tracked" ': 1 thread used mutexes, 3 mutexes tracked, 0 untracked$' \
	"$WORK/report"
expect_grep "never locked: 2 of them said, with why they have no row" \
	'^  2 of the mutexes tracked were not locked or tried: no line$' "$WORK/report"
expect_grep "never locked: a table of the one locked" '^Top 1 mutex by wait:$' "$WORK/report"
run_with "$WORK/out" "$WORK/err" "$WORK/unlocked" reset
expect_grep "not locked since a reset: said so" \
	'^  2 of the mutexes tracked were not locked or tried since mutexstat_reset\(\), [0-9.]+ [mµn]?s into the run: no line$' \
	"$WORK/report"

# Ties at 0 ns of wait: a trylock loop that found its mutex busy 100 times
# ranks above a mutex only locked more often (it ranked last)
cat >"$WORK/tries.c" <<'EOF'
#include <pthread.h>
#include <stdio.h>
static pthread_mutex_t busy = PTHREAD_MUTEX_INITIALIZER, plain = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t held, done;
static void *holder(void *arg)
{
	pthread_mutex_lock(&busy);
	pthread_barrier_wait(&held);
	pthread_barrier_wait(&done);
	pthread_mutex_unlock(&busy);
	return arg;
}
int main(void)
{
	pthread_t t;
	int n = 0;
	pthread_barrier_init(&held, NULL, 2);
	pthread_barrier_init(&done, NULL, 2);
	pthread_create(&t, NULL, holder, NULL);
	pthread_barrier_wait(&held);
	for (int i = 0; i < 100; i++)
		n += pthread_mutex_trylock(&busy) != 0;
	pthread_barrier_wait(&done);
	pthread_join(t, NULL);
	for (int i = 0; i < 1000; i++) {
		pthread_mutex_lock(&plain);
		pthread_mutex_unlock(&plain);
	}
	printf("busy %d\n", n);
	return 0;
}
EOF
if ${CC:-cc} $SAN_FLAGS -pthread -o "$WORK/tries" "$WORK/tries.c"; then
	run_with "$WORK/out" "$WORK/err" "$WORK/tries"
	expect_eq "tries: the program ran" "$(cat "$WORK/out")" "busy 100"
	expect_eq "tries: the busy mutex first, the one only locked more second" \
		"$(awk '/^Top 2 mutexes by wait:/ { on = 1; getline; next } on && NF { print $1, $3 } on && !NF { exit }' "$WORK/report" | paste -sd' ' -)" \
		"1 1 2 1000"
else
	fail "tries: the program did not build"
fi

finish
