# tests/settings.sh - the settings at their limits and in combination: the
# report must come, right and in one piece, for every value the settings
# table allows, and the program must run as it runs without the library.
#   * MUTEXSTAT_TOP at its limit (100000) over 200,000 mutexes that come in
#     the worst order for a top list: the report is written (a hang guard,
#     not a timing: a list kept sorted by insertion took 79 s), its rows are
#     the true top 100000 in rank order.

. "$top_srcdir/tests/lib.sh"

S="$top_builddir/tests/settings"

# run VAR=VALUE... program args...: under the library, report to
# $WORK/report; status in $rc (124: it did not end within 40 s).
run() {
	rm -f "$WORK/report"
	rc=0
	timeout 40 env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/report" "$@" \
	    >"$WORK/out" 2>"$WORK/err" || rc=$?
}

# top_rows FILE: "acquired address" for each row of the top table.
top_rows() {
	awk '/^Top [0-9]+ mutex(es)? by/ { on = 1; getline; next }
		on && /^$/ { exit }
		on { print $3, $2 }' "$1"
}

# ---- MUTEXSTAT_TOP=100000 ----------------------------------------------------

run MUTEXSTAT_TOP=100000 MUTEXSTAT_SORT=acquired MUTEXSTAT_HISTORY=1 \
    "$S" ranked 200000 10
expect_eq "TOP=100000 over 200,000 mutexes: the program's status (124: the report hung)" "$rc" 0
expect_eq "TOP=100000: the program's output" "$(cat "$WORK/out")" "200000 mutexes, 1100000 locks"
expect_eq "TOP=100000: nothing on stderr" "$(cat "$WORK/err")" ""
expect_grep "TOP=100000: the heading" '^Top 100000 mutexes by acquired:$' "$WORK/report"
top_rows "$WORK/report" >"$WORK/rows"
expect_eq "TOP=100000: the rows by acquisitions (20000 of 10 locks each, 20000 of 9, ...)" \
    "$(cut -d' ' -f1 "$WORK/rows" | uniq -c | awk '{ printf "%s:%s ", $2, $1 }')" \
    "10:20000 9:20000 8:20000 7:20000 6:20000 "
expect_eq "TOP=100000: equal rows in address order" \
    "$(awk 'NR > 1 && $1 == n && $2 <= a { bad++ } { n = $1; a = $2 } END { print bad + 0 }' "$WORK/rows")" 0
expect_eq "TOP=100000: 100000 details" "$(grep -c '^#[0-9]* mutex ' "$WORK/report")" 100000

finish
