#!/bin/sh
# tests/transparency.sh - the library never changes what a program sees.
#
# tests/transparency calls every wrapped pthread function on every kind of
# mutex, through every success and error path, and prints each return value
# and errno.  Run it without and with the library: stdout, stderr and the
# exit status must be the same, byte for byte.  The report goes to a file so
# that it cannot mix with what the program prints.  Three rounds, to catch
# anything that only goes wrong sometimes.

. "$top_srcdir/tests/lib.sh"

prog="$top_builddir/tests/transparency"
rounds=3

# The program stops itself after 60 s (alarm); timeout is a second line of
# defence.  It runs outside LD_PRELOAD so the library only sees the program.
limit=""
if command -v timeout >/dev/null 2>&1; then limit="timeout 180"; fi

for round in $(seq 1 $rounds); do
	plain="$WORK/plain.$round"
	traced="$WORK/traced.$round"
	report="$WORK/report.$round"

	$limit "$prog" >"$plain.out" 2>"$plain.err"
	plain_status=$?
	$limit env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$report" \
	    "$prog" >"$traced.out" 2>"$traced.err"
	traced_status=$?

	expect_eq "round $round: exit status without the library" "$plain_status" 0
	expect_eq "round $round: exit status with the library" "$traced_status" "$plain_status"

	lines=$(wc -l <"$plain.out")
	if [ "$lines" -gt 80 ] && tail -n 1 "$plain.out" | grep -qx done; then
		pass "round $round: the program ran to the end ($lines lines)"
	else
		fail "round $round: $lines lines, last: $(tail -n 1 "$plain.out")"
	fi

	if cmp -s "$plain.out" "$traced.out"; then
		pass "round $round: stdout identical with the library"
	else
		fail "round $round: stdout differs with the library (- without, + with):"
		diff -u "$plain.out" "$traced.out" | sed -n '3,120p' | sed 's/^/  | /' >&2
	fi
	if cmp -s "$plain.err" "$traced.err"; then
		pass "round $round: stderr identical with the library"
	else
		fail "round $round: stderr differs with the library (- without, + with):"
		diff -u "$plain.err" "$traced.err" | sed -n '3,40p' | sed 's/^/  | /' >&2
	fi

	if [ -s "$report" ]; then
		first=$(head -n 1 "$report")
		case $first in
		"mutexstat: transparency (pid"*) pass "round $round: report starts with its header" ;;
		*) fail "round $round: report starts with '$first'" ;;
		esac
	else
		fail "round $round: no report in $report"
	fi
done

finish
