# tests/run_stderr.sh - under the launcher, a process of the run other than
# its first writes nothing into its program's stderr, notes included: a
# bad MUTEXSTAT_* value and "no live dumps on SIGUSR1" (a process started
# with SIGUSR1 ignored, as under nohup, or that takes it later) go into
# its report instead.  The
# run's first process says a bad value on its stderr, once; a process on
# its own says a bad value there as before, and the signal where its
# report goes; both in its report too.

. "$top_srcdir/tests/lib.sh"

MS="$top_builddir/scripts/mutexstat"
ABBA="$top_builddir/examples/deadlock_abba"
SIG="$top_builddir/tests/signals"
RUNS="$WORK/runs"
mkdir -p "$RUNS"

BAD_TOP="mutexstat: MUTEXSTAT_TOP='many' is not a number from 1 to 100000; using 10"
IGNORED="mutexstat: no live dumps on SIGUSR1: the program ignores it (MUTEXSTAT_SIGNAL picks another, or none)"
expect_eq "the bad value's note, as options say it" \
	"$(LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_TOP=many MUTEXSTAT_OUTPUT="$WORK/alone" "$ABBA" 2>&1 >/dev/null)" \
	"$BAD_TOP"

cat >"$WORK/suite.sh" <<SUITE
"$ABBA" >/dev/null 2>"$WORK/first.err"
"$SIG" own-usr1 >/dev/null 2>"$WORK/own-usr1.err"
trap '' USR1
"$ABBA" >/dev/null 2>"$WORK/second.err"
SUITE
rc=0
TMPDIR=$RUNS MUTEXSTAT_TOP=many "$MS" bash "$WORK/suite.sh" >/dev/null 2>"$WORK/err" || rc=$?
expect_eq "the suite's status" "$rc" 0
expect_eq "nothing in the first child's stderr" "$(cat "$WORK/first.err")" ""
expect_eq "nothing in the second's, which started with SIGUSR1 ignored" \
	"$(cat "$WORK/second.err")" ""
expect_eq "nothing in the stderr of one that took SIGUSR1 after start-up" \
	"$(cat "$WORK/own-usr1.err")" ""
expect_eq "the bad value said once on the run's stderr, by its first process" \
	"$(grep -cxF "$BAD_TOP" "$WORK/err")" 1
dir=$(sed -n 's|^mutexstat: the run of .*; reports in \(.*\)/$|\1|p' "$WORK/err")
expect_grep "its report says it" \
	"^  the program took SIGUSR1 for itself: no more live dumps on it " "${dir:-$WORK/none}"/signals.*
set -- "${dir:-$WORK/none}"/deadlock_abba.*
expect_eq "two reports" "$#" 2
for r in "$@"; do
	expect_grep "$(basename "$r"): the bad value in the report's heading" \
		"^  MUTEXSTAT_TOP='many' is not a number from 1 to 100000; using 10$" "$r"
done
expect_eq "the ignored SIGUSR1 said in the second's report alone" \
	"$(grep -lxF "  no live dumps on SIGUSR1: the program ignores it (MUTEXSTAT_SIGNAL picks another, or none)" "$@" | wc -l)" 1

# On its own, the process says it in its report, and on its stderr only
# where the report goes too (under nohup, SIGUSR1 ignored, every program's
# stderr had the line, /bin/echo's with MUTEXSTAT_OUTPUT set).
rc=0
(trap '' USR1; exec env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/own" "$ABBA") \
	>/dev/null 2>"$WORK/own.err" || rc=$?
expect_eq "on its own: its status" "$rc" 0
expect_eq "on its own, MUTEXSTAT_OUTPUT: its stderr stays its own" "$(cat "$WORK/own.err")" ""
expect_grep "on its own: the note in its report" \
	"^  no live dumps on SIGUSR1: the program ignores it " "$WORK/own"
(trap '' USR1; exec env LD_PRELOAD="$MS_PRELOAD" "$ABBA") >/dev/null 2>"$WORK/own.err" || :
expect_eq "on its own, the report on stderr: the note there, once" \
	"$(grep -cxF "$IGNORED" "$WORK/own.err")" 1
(trap '' USR1; exec env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/echo" /bin/echo hi) \
	>"$WORK/echo.out" 2>"$WORK/echo.err" || :
expect_eq "a program that locks nothing, SIGUSR1 ignored: its output, nothing on stderr" \
	"$(cat "$WORK/echo.out")|$(cat "$WORK/echo.err")" "hi|"
if command -v jq >/dev/null 2>&1; then
	LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_TOP=many MUTEXSTAT_FORMAT=json \
		MUTEXSTAT_OUTPUT="$WORK/j" "$ABBA" >/dev/null 2>&1
	expect_eq "the JSON report's notes" "$(jq -r '.notes[]' "$WORK/j.json" 2>&1)" \
		"MUTEXSTAT_TOP='many' is not a number from 1 to 100000; using 10"
fi

finish
