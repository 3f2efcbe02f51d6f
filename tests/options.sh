# tests/options.sh - the MUTEXSTAT_* variables: every bad value (not a
# number, zero, too large, negative, empty, unknown word) earns exactly one
# warning line naming the variable, the value and the default, leaves the
# program's output and exit status alone, and the report uses the default;
# good values do what they say (TOP rows, HISTORY rounded up to a power of
# two, TABLE_SIZE likewise, every SORT column, EXIT_REPORT=0 silences).

. "$top_srcdir/tests/lib.sh"

CONTENTION="$top_builddir/examples/contention"
CC=${CC:-cc}

# locks: small deterministic scenarios the examples do not cover.
cat >"$WORK/locks.c" <<'EOF'
/* locks many N: lock and unlock N different mutexes once each.
 * locks sort: "busy" is locked 100 times, never contended; "waited" twice,
 * the second time by a thread that has to wait (seen asleep in its
 * futex in /proc before the holder lets go). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include "proc_wait.h"
#include <unistd.h>

static pthread_mutex_t many[1000];
static pthread_mutex_t busy = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t waited = PTHREAD_MUTEX_INITIALIZER;
static int waiter_tid;

static void *waiter(void *arg)
{
	(void)arg;
	__atomic_store_n(&waiter_tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
	pthread_mutex_lock(&waited);
	pthread_mutex_unlock(&waited);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "many")) {
		int n = atoi(argv[2]);
		if (n < 1 || n > 1000)
			return 2;
		for (int i = 0; i < n; i++) {
			pthread_mutex_lock(&many[i]);
			pthread_mutex_unlock(&many[i]);
		}
		printf("locked %d mutexes\n", n);
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "sort")) {
		for (int i = 0; i < 100; i++) {
			pthread_mutex_lock(&busy);
			pthread_mutex_unlock(&busy);
		}
		pthread_t t;
		int tid, tries = 0;
		pthread_mutex_lock(&waited);
		pthread_create(&t, NULL, waiter, NULL);
		while (!(tid = __atomic_load_n(&waiter_tid, __ATOMIC_ACQUIRE)))
			usleep(1000);
		while (!sleeps_on_futex(tid, &waited) && ++tries < 10000)
			usleep(1000);
		usleep(20000);
		pthread_mutex_unlock(&waited);
		pthread_join(t, NULL);
		if (tries >= 10000) {
			fprintf(stderr, "locks: the waiter never blocked\n");
			return 3;
		}
		printf("busy 100, waited 2\n");
		return 0;
	}
	fprintf(stderr, "usage: locks many N | locks sort\n");
	return 2;
}
EOF
LOCKS="$WORK/locks"
"$CC" -Wall -I"$top_srcdir/tests" -o "$LOCKS" "$WORK/locks.c" -lpthread || {
	fail "cannot compile the test program with $CC"
	finish
}

# run VAR=VALUE... -- program args...: the program under the library with
# those variables, report to $WORK/report; status in $rc.
run() {
	rm -f "$WORK/report"
	rc=0
	env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/report" "$@" \
	    >"$WORK/out" 2>"$WORK/err" || rc=$?
}

# history_rows FILE: how many recent operations the top mutex lists.
history_rows() {
	awk '/recent operations/ { getline; on = 1; next }
		on && /^$/ { exit }
		on { n++ }
		END { print n + 0 }' "$1"
}

# first_acquired FILE: the acquired column of the top table's first row.
first_acquired() {
	awk '/^Top [0-9]+ mutex(es)? by/ { getline; getline; print $3; exit }' "$1"
}

# The program's own output, to compare against.
"$CONTENTION" 2 1000 >"$WORK/contention.out"
"$LOCKS" many 12 >"$WORK/many12.out"
"$LOCKS" many 300 >"$WORK/many300.out"

# expect_one_warning WHAT LINE: stderr is exactly that one line.
expect_one_warning() {
	expect_eq "$1: one line on stderr" "$(wc -l <"$WORK/err" | tr -d ' ')" 1
	expect_eq "$1: the warning" "$(cat "$WORK/err")" "$2"
}

# expect_unchanged WHAT WANT-STDOUT-FILE
expect_unchanged() {
	expect_eq "$1: program's exit status" "$rc" 0
	expect_eq "$1: program's output" "$(cat "$WORK/out")" "$(cat "$2")"
}

# bad_number VAR DEFAULT MIN MAX CHECK-REGEX PROGRAM... : each bad value
# warns and the report, of PROGRAM, matches CHECK-REGEX.
bad_number() {
	var=$1; def=$2; min=$3; max=$4; check=$5; want=$6; shift 6
	for val in abc 0 $((max + 1)) -5 '' 12abc ' 7' 18446744073709551617; do
		what="$var='$val'"
		run "$var=$val" "$@"
		expect_one_warning "$what" \
		    "mutexstat: $var='$val' is not a number from $min to $max; using $def"
		expect_unchanged "$what" "$want"
		expect_grep "$what: report with the default" "$check" "$WORK/report"
	done
}

# bad_choice VAR DEFAULT CHOICES CHECK-REGEX WANT-STDOUT PROGRAM... VALUES
bad_choice() {
	var=$1; def=$2; choices=$3; check=$4; want=$5; shift 5
	for val in $BAD_WORDS; do
		[ "$val" = EMPTY ] && val=
		what="$var='$val'"
		run "$var=$val" "$@"
		expect_one_warning "$what" \
		    "mutexstat: $var='$val' is not one of $choices; using $def"
		expect_unchanged "$what" "$want"
		expect_grep "$what: report with the default" "$check" "$WORK/report"
	done
}

# ---- bad values ---------------------------------------------------------

bad_number MUTEXSTAT_TOP 10 1 100000 '^Top 10 mutexes by wait:$' \
    "$WORK/many12.out" "$LOCKS" many 12
bad_number MUTEXSTAT_HISTORY 16 1 1024 '^#1 mutex ' \
    "$WORK/contention.out" "$CONTENTION" 2 1000
# (the rows of the last run: the default history)
expect_eq "bad MUTEXSTAT_HISTORY: 16 recent operations" "$(history_rows "$WORK/report")" 16
bad_number MUTEXSTAT_TABLE_SIZE 1048576 64 67108864 \
    ' 300 mutexes tracked, 0 untracked$' "$WORK/many300.out" "$LOCKS" many 300

sorts='wait, wait-max, contended, acquired, hold, hold-max, changes'
BAD_WORDS='bogus EMPTY WAIT hold_max 1'
bad_choice MUTEXSTAT_SORT wait "$sorts" '^Top 2 mutexes by wait:$' \
    "$WORK/contention.out" "$CONTENTION" 2 1000
BAD_WORDS='2 yes EMPTY -1 true 01'
bad_choice MUTEXSTAT_EXIT_REPORT 1 '0, 1' '^mutexstat: contention \(pid ' \
    "$WORK/contention.out" "$CONTENTION" 2 1000

run MUTEXSTAT_TOP=abc MUTEXSTAT_HISTORY=0 "$CONTENTION" 2 1000
expect_eq "two bad variables: two warnings" "$(grep -c '^mutexstat: MUTEXSTAT_' "$WORK/err")" 2
expect_eq "two bad variables: nothing else on stderr" "$(grep -vc '^mutexstat: MUTEXSTAT_' "$WORK/err")" 0
run MUTEXSTAT_OUTPUT= MUTEXSTAT_TOP=abc "$CONTENTION" 2 1000
expect_grep "report on stderr: the warning first" \
    "^mutexstat: MUTEXSTAT_TOP='abc' is not a number" "$WORK/err"
expect_eq "report on stderr: then the report" "$(sed -n '2s/ (pid.*//p' "$WORK/err")" \
    "mutexstat: contention"

# ---- good values ----------------------------------------------------------

for pair in 1:1 3:3 007:7 12:12 100000:12; do
	run "MUTEXSTAT_TOP=${pair%%:*}" "$LOCKS" many 12
	expect_eq "MUTEXSTAT_TOP=${pair%%:*}: no warning" "$(cat "$WORK/err")" ""
	expect_grep "MUTEXSTAT_TOP=${pair%%:*}: ${pair#*:} rows" \
	    "^Top ${pair#*:} $( [ "${pair#*:}" = 1 ] && echo mutex || echo mutexes) by wait:$" "$WORK/report"
	expect_eq "MUTEXSTAT_TOP=${pair%%:*}: ${pair#*:} details" \
	    "$(grep -c '^#[0-9]* mutex ' "$WORK/report")" "${pair#*:}"
done
run MUTEXSTAT_TOP=1 "$CONTENTION" 2 1000
expect_grep "MUTEXSTAT_TOP=1 on contention" '^Top 1 mutex by wait:$' "$WORK/report"
expect_unchanged "MUTEXSTAT_TOP=1 on contention" "$WORK/contention.out"

for pair in 1:1 2:2 3:4 5:8 16:16 17:32 1000:1024 1024:1024; do
	run "MUTEXSTAT_HISTORY=${pair%%:*}" "$CONTENTION" 2 1000
	expect_eq "MUTEXSTAT_HISTORY=${pair%%:*}: no warning" "$(cat "$WORK/err")" ""
	expect_eq "MUTEXSTAT_HISTORY=${pair%%:*}: rows" "$(history_rows "$WORK/report")" \
	    "${pair#*:}"
done

for pair in 64:64 65:128 100:128 128:128; do
	run "MUTEXSTAT_TABLE_SIZE=${pair%%:*}" "$LOCKS" many 300
	expect_eq "MUTEXSTAT_TABLE_SIZE=${pair%%:*}: no warning" "$(cat "$WORK/err")" ""
	expect_unchanged "MUTEXSTAT_TABLE_SIZE=${pair%%:*}" "$WORK/many300.out"
	# (on two lines where one would be longer than 120 columns)
	# 300 mutexes in an index of twice the table: the table's records
	# are taken by the first, as many more fill the index untracked, and
	# the calls of the rest find no room: their mutexes are not counted,
	# so the count of untracked ones is a floor
	expect_grep "MUTEXSTAT_TABLE_SIZE=${pair%%:*}: full" \
	    "^  the table is full: ${pair#*:} mutexes were not tracked,$" "$WORK/report"
	expect_grep "MUTEXSTAT_TABLE_SIZE=${pair%%:*}: full at ${pair#*:}" \
	    "^  and [1-9][0-9]* calls were of mutexes it could not even count; raise MUTEXSTAT_TABLE_SIZE \(now ${pair#*:}\)$" \
	    "$WORK/report"
	expect_eq "MUTEXSTAT_TABLE_SIZE=${pair%%:*}: lines within 120 columns" \
	    "$(LC_ALL=C sed "s/$(printf '[\200-\277]')//g" "$WORK/report" | awk 'length > 120')" ""
	expect_grep "MUTEXSTAT_TABLE_SIZE=${pair%%:*}: ${pair#*:} tracked" \
	    " ${pair#*:} mutexes tracked, more than ${pair#*:} untracked$" "$WORK/report"
done

# Sorting: "busy" (100 locks, no waiting) against "waited" (2 locks, one
# wait of 20 ms, the only mutex with hold times): only "acquired" ranks
# busy first.
for sort in wait wait-max contended acquired hold hold-max changes; do
	run "MUTEXSTAT_SORT=$sort" "$LOCKS" sort
	expect_eq "MUTEXSTAT_SORT=$sort: program" "$rc $(cat "$WORK/out")" \
	    "0 busy 100, waited 2"
	expect_grep "MUTEXSTAT_SORT=$sort: heading" "^Top 2 mutexes by $sort:$" "$WORK/report"
	want=2
	[ "$sort" = acquired ] && want=100
	expect_eq "MUTEXSTAT_SORT=$sort: first row's acquisitions" \
	    "$(first_acquired "$WORK/report")" "$want"
done

run MUTEXSTAT_EXIT_REPORT=0 "$CONTENTION" 2 1000
expect_unchanged "MUTEXSTAT_EXIT_REPORT=0" "$WORK/contention.out"
expect_eq "MUTEXSTAT_EXIT_REPORT=0: no report file" "$(test -e "$WORK/report" && echo made)" ""
expect_eq "MUTEXSTAT_EXIT_REPORT=0: nothing on stderr" "$(cat "$WORK/err")" ""
run MUTEXSTAT_EXIT_REPORT=0 MUTEXSTAT_OUTPUT= "$CONTENTION" 2 1000
expect_eq "MUTEXSTAT_EXIT_REPORT=0, no MUTEXSTAT_OUTPUT: nothing on stderr" \
    "$(cat "$WORK/err")" ""
run MUTEXSTAT_EXIT_REPORT=1 "$CONTENTION" 2 1000
expect_grep "MUTEXSTAT_EXIT_REPORT=1: report" '^mutexstat: contention \(pid ' "$WORK/report"

finish
