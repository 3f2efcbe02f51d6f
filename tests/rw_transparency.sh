#!/bin/sh
# tests/rw_transparency.sh - the library never changes what a program sees
# of its read-write locks and spin locks.
#
# tests/rw_transparency calls every pthread_rwlock_* and pthread_spin_*
# function on every kind of lock, through every success and error path,
# and prints each return value and errno; tests/rw_cxx does the same
# through std::shared_mutex and std::shared_timed_mutex, whose answers are
# exceptions and booleans.  Run each without and with the library: stdout,
# stderr and the exit status must be the same, byte for byte.  The report
# goes to a file so that it cannot mix with what the program prints.
# Three rounds, to catch anything that only goes wrong sometimes.  A few
# lines of the plain run are checked too, so that a change to the programs
# that stops them reaching glibc's error paths does not pass unnoticed.

. "$top_srcdir/tests/lib.sh"

rounds=3

# The programs stop themselves after 60 s (alarm); timeout is a second
# line of defence.  It runs outside LD_PRELOAD so the library only sees
# the program.
limit=""
if command -v timeout >/dev/null 2>&1; then limit="timeout 180"; fi

# compare NAME MIN_LINES: run tests/NAME without and with the library.
compare() {
	prog="$top_builddir/tests/$1"
	for round in $(seq 1 $rounds); do
		plain="$WORK/$1.plain.$round"
		traced="$WORK/$1.traced.$round"
		report="$WORK/$1.report.$round"

		$limit "$prog" >"$plain.out" 2>"$plain.err"
		plain_status=$?
		$limit env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$report" \
		    "$prog" >"$traced.out" 2>"$traced.err"
		traced_status=$?

		expect_eq "$1 round $round: exit status without the library" "$plain_status" 0
		expect_eq "$1 round $round: exit status with the library" "$traced_status" "$plain_status"

		lines=$(wc -l <"$plain.out")
		if [ "$lines" -gt "$2" ] && tail -n 1 "$plain.out" | grep -qx done; then
			pass "$1 round $round: the program ran to the end ($lines lines)"
		else
			fail "$1 round $round: $lines lines, last: $(tail -n 1 "$plain.out")"
		fi

		if cmp -s "$plain.out" "$traced.out"; then
			pass "$1 round $round: stdout identical with the library"
		else
			fail "$1 round $round: stdout differs with the library (- without, + with):"
			diff -u "$plain.out" "$traced.out" | sed -n '3,120p' | sed 's/^/  | /' >&2
		fi
		if cmp -s "$plain.err" "$traced.err"; then
			pass "$1 round $round: stderr identical with the library"
		else
			fail "$1 round $round: stderr differs with the library (- without, + with):"
			diff -u "$plain.err" "$traced.err" | sed -n '3,40p' | sed 's/^/  | /' >&2
		fi

		if [ -s "$report" ]; then
			first=$(head -n 1 "$report")
			case $first in
			"mutexstat: $1 (pid"*) pass "$1 round $round: report starts with its header" ;;
			*) fail "$1 round $round: report starts with '$first'" ;;
			esac
		else
			fail "$1 round $round: no report in $report"
		fi
	done
}

compare rw_transparency 2000
compare rw_cxx 50

# ---- what glibc answers, in the run without the library ---------------------
# (the comparison above is only as good as the paths the programs reach)
out=$WORK/rw_transparency.plain.1.out
expect_grep "glibc: rdlock by the writer is EDEADLK" \
	'^default\.self-write pthread_rwlock_rdlock rc=EDEADLK errno=12345$' "$out"
expect_grep "glibc: clockwrlock by the writer is EDEADLK" \
	'^default\.self-write pthread_rwlock_clockwrlock rc=EDEADLK errno=12345$' "$out"
expect_grep "glibc: trywrlock by the writer is EBUSY" \
	'^default\.self-write pthread_rwlock_trywrlock rc=EBUSY errno=12345$' "$out"
expect_grep "glibc: a bad deadline is EINVAL on a free lock" \
	'^default\.free-bad-nsec pthread_rwlock_timedrdlock rc=EINVAL errno=12345$' "$out"
expect_grep "glibc: a bad clock is EINVAL on a free lock" \
	'^default\.free-bad-clock pthread_rwlock_clockwrlock rc=EINVAL errno=12345$' "$out"
expect_grep "glibc: a timed read lock times out while another thread writes" \
	'^pshared\.other-write-short pthread_rwlock_timedrdlock rc=ETIMEDOUT errno=12345$' "$out"
expect_grep "glibc: a reader-preferring lock lets its reader in again while a writer waits" \
	'^default\.writer-waits pthread_rwlock_rdlock rc=0 errno=12345$' "$out"
expect_grep "glibc: a non-recursive lock does not" \
	'^writer-nonrecursive\.writer-waits-short pthread_rwlock_timedrdlock rc=ETIMEDOUT errno=12345$' "$out"
expect_grep "glibc: the waiting writer gets the lock" \
	'^static-writer-nonrecursive\.writer-waits-writer pthread_rwlock_clockwrlock rc=0 errno=12345$' "$out"
expect_grep "glibc: a spin trylock of a held lock is EBUSY" \
	'^spin-pshared\.other pthread_spin_trylock rc=EBUSY errno=12345$' "$out"
expect_eq "the 10 forked children ended with status 0" \
	"$(grep -c '\.child \(exit\|killed\)' "$out")/$(grep -c '\.child exit status 0$' "$out")" 10/10
expect_grep "rw_transparency: the counters are exact" \
	'^counters\.end writes a=12000 b=12000 reads=12000 torn=0 spun=12000 failed=0$' "$out"
out=$WORK/rw_cxx.plain.1.out
expect_grep "rw_cxx: a relock by the writer throws" \
	'^shared_mutex\.self-write lock_shared system_error\(resource_deadlock_would_occur\)$' "$out"
expect_grep "rw_cxx: try_lock_shared_for times out while another thread writes" \
	'^shared_timed_mutex\.other-write try_lock_shared_for false$' "$out"
expect_grep "rw_cxx: the counters are exact" \
	'^counters\.shared_timed_mutex a=6000 b=6000 reads=12000 torn=0 timed_out=0$' "$out"

finish
