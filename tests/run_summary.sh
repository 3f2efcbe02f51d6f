# tests/run_summary.sh - a whole suite under the launcher: the processes it
# starts never write into their own stderr (a test comparing a program's
# stderr with what it expects passes as without the tool); each one that
# locked a mutex leaves its report in the run's directory, as PROGRAM.PID;
# one that locked nothing writes nothing (unless --verbose); and the
# suite's first process ends with one summary of the run: the processes,
# each finding once with the processes that had it, the most waited-for
# mutexes of all of them, and the directory in its first and last lines.
# MUTEXSTAT_EXIT_CODE applies to the launcher's status only, for any
# process's finding, when the suite itself passed.

. "$top_srcdir/tests/lib.sh"

MS="$top_builddir/scripts/mutexstat"
ABBA="$top_builddir/examples/deadlock_abba"
CONTENTION="$top_builddir/examples/contention"
RUNS="$WORK/runs"
mkdir -p "$RUNS"

# The suite: tools that lock nothing, one whose stderr a test compares,
# two runs of a program with a potential deadlock, one with contention.
# It is run by bash and by dash (dash ends with _exit, not exit()).
cat >"$WORK/suite.sh" <<EOF
ls /nonexistent-mutexstat-test 2>"$WORK/ls.err"
cat "$WORK/ls.err" >"$WORK/ls.copy"
"$ABBA" >/dev/null
"$ABBA" >/dev/null
"$CONTENTION" >/dev/null 2>"$WORK/contention.err"
sort </dev/null
exit \${SUITE_STATUS:-0}
EOF
ls /nonexistent-mutexstat-test 2>"$WORK/ls.bare"

for shell in bash dash; do
	command -v $shell >/dev/null 2>&1 || { pass "$shell: not installed, skipped"; continue; }
	rc=0
	TMPDIR=$RUNS "$MS" $shell "$WORK/suite.sh" >"$WORK/out" 2>"$WORK/err" || rc=$?
	expect_eq "$shell: the suite's status" "$rc" 0
	expect_eq "$shell: ls's stderr is as bare" "$(cat "$WORK/ls.err")" "$(cat "$WORK/ls.bare")"
	expect_eq "$shell: nothing in a recorded program's stderr" \
		"$(cat "$WORK/contention.err")" ""
	dir=$(sed -n 's|^mutexstat: the run of .*; reports in \(.*\)/$|\1|p' "$WORK/err")
	expect_eq "$shell: the summary's first line names a directory of TMPDIR" \
		"$(dirname "${dir:-none}")" "$RUNS"
	expect_grep "$shell: and its last line the same" \
		"^mutexstat: end of the run's summary; reports in $dir/\$" "$WORK/err"
	expect_eq "$shell: the summary ends the launcher's stderr" \
		"$(tail -n 1 "$WORK/err")" "mutexstat: end of the run's summary; reports in $dir/"
	expect_eq "$shell: and begins it, with no blank line (no report above it there)" \
		"$(head -n 1 "$WORK/err" | sed 's/ (pid [0-9]*)//')" \
		"mutexstat: the run of $shell: 7 processes (3 took locks); reports in $dir/"
	# sh, ls, cat, 2 x deadlock_abba, contention, sort
	expect_grep "$shell: processes run and recorded" \
		"^mutexstat: the run of $shell \(pid [0-9]+\): 7 processes \\(3 took locks\\); " "$WORK/err"
	expect_eq "$shell: a report per process that locked a mutex, named by program and pid" \
		"$(ls "$dir" | grep -v '^summary.json$' | sed 's/\.[0-9]*$/.PID/' | sort | tr '\n' ' ')" \
		"contention.PID deadlock_abba.PID deadlock_abba.PID "
	expect_eq "$shell: the finding once" \
		"$(grep -c '^  POTENTIAL DEADLOCK: 2 mutexes taken in a cycle of orders$' "$WORK/err")" 1
	pids=$(ls "$dir" | sed -n 's/^deadlock_abba\.//p' | sort -n | tr '\n' ' ')
	set -- $pids
	expect_eq "$shell: the finding's code, then its processes" \
		"$(grep -A1 '^  POTENTIAL DEADLOCK: ' "$WORK/err" | sed -n 2p)" \
		"    code: alice_pays_bob, bob_pays_alice, transfer"
	expect_grep "$shell: with the two processes that had it" \
		"^    in deadlock_abba \(pid ($1|$2)\), deadlock_abba \(pid ($1|$2)\)$" "$WORK/err"
	expect_grep "$shell: each report holds its finding" \
		"^POTENTIAL DEADLOCK: 2 mutexes taken in a cycle of orders" "$dir/deadlock_abba.$1"
	expect_grep "$shell: the contended mutex, by where it was first locked" \
		"^ .* 80000 +1  worker\+0x[0-9a-f]+ \(examples/contention\.c:33, contention\)$" \
		"$WORK/err"
	expect_grep "$shell: the summary as JSON too" \
		"^\(and as JSON in $dir/summary.json\)\$" "$WORK/err"
	expect_grep "$shell: JSON: processes" '^  "processes":7,$' "$dir/summary.json"
	expect_grep "$shell: JSON: recorded" '^  "recorded":3,$' "$dir/summary.json"
	expect_grep "$shell: JSON: the finding and its processes" \
		'^    \{"heading":"POTENTIAL DEADLOCK: 2 mutexes taken in a cycle of orders","code":"alice_pays_bob, bob_pays_alice, transfer","processes":2,"first_processes":\[\{"pid":[0-9]+,"program":"deadlock_abba"\},\{"pid":[0-9]+,"program":"deadlock_abba"\}\]\}$' \
		"$dir/summary.json"
	expect_grep "$shell: JSON: the contended mutex" \
		'"first_locked_at":"worker\+0x[0-9a-f]+ \(examples/contention\.c:33, contention\)","wait_ns":[0-9]+,"contended":[0-9]+,"acquisitions":80000,"processes":1' \
		"$dir/summary.json"
	expect_no_grep "$shell: no line about processes that locked nothing" \
		"locked no mutexes" "$WORK/err"
done

# ---- the exit status ------------------------------------------------------

rc=0
TMPDIR=$RUNS MUTEXSTAT_EXIT_CODE=9 "$MS" bash "$WORK/suite.sh" >/dev/null 2>"$WORK/err" || rc=$?
expect_eq "exit code: a passing suite with a finding" "$rc" 9
rc=0
TMPDIR=$RUNS MUTEXSTAT_EXIT_CODE=9 SUITE_STATUS=3 "$MS" bash "$WORK/suite.sh" \
	>/dev/null 2>"$WORK/err" || rc=$?
expect_eq "exit code: a failing suite keeps its own" "$rc" 3
cat >"$WORK/status.sh" <<EOF
"$ABBA" >/dev/null; echo "abba: \$?"
EOF
TMPDIR=$RUNS MUTEXSTAT_EXIT_CODE=9 "$MS" bash "$WORK/status.sh" >"$WORK/out" 2>/dev/null
expect_eq "exit code: the suite's processes keep theirs" "$(cat "$WORK/out")" "abba: 0"

# ---- the run's directory removed while the run goes on ---------------------
# A suite that cleans its temporary directory removes the run's with it.
# Before, the later processes' reports and findings were lost unsaid, and
# MUTEXSTAT_EXIT_CODE passed the run.  A process that cannot open the run's
# list now says so and reports as outside a run (on its stderr; its exit
# status stays its own, as the run's processes' do); the first process
# reads the list through the file it still has open, so the findings of
# processes started before still count, and with MUTEXSTAT_EXIT_CODE the
# run fails all the same: the later ones' findings could not be counted.

cat >"$WORK/gone.sh" <<EOF
"$ABBA" >/dev/null 2>"$WORK/abba1.err"
rm -rf "\$MUTEXSTAT_RUN_DIR"
"$ABBA" >/dev/null 2>"$WORK/abba2.err"; echo "abba: \$?" >"$WORK/abba2.status"
EOF
rc=0
TMPDIR=$RUNS MUTEXSTAT_EXIT_CODE=9 "$MS" bash "$WORK/gone.sh" >/dev/null 2>"$WORK/err" || rc=$?
expect_eq "directory gone: the first program's finding still fails the run" "$rc" 9
expect_eq "directory gone: nothing in the first program's stderr" "$(cat "$WORK/abba1.err")" ""
expect_grep "directory gone: the later program says why its report is on its stderr" \
	"^mutexstat: MUTEXSTAT_RUN_DIR '$RUNS/mutexstat\.[A-Za-z0-9]+': cannot open the run's list in it \(ENOENT\); this process reports as outside a run$" \
	"$WORK/abba2.err"
expect_grep "directory gone: and reports its finding there" \
	"^POTENTIAL DEADLOCK: 2 mutexes taken in a cycle of orders$" "$WORK/abba2.err"
expect_eq "directory gone: its exit status its own, as in a run" "$(cat "$WORK/abba2.status")" "abba: 0"
expect_grep "directory gone: the summary has the first program's finding" \
	"^  POTENTIAL DEADLOCK: 2 mutexes taken in a cycle of orders$" "$WORK/err"
expect_grep "directory gone: and says the directory went" \
	"^mutexstat: end of the run's summary; the run's directory $RUNS/mutexstat\.[A-Za-z0-9]+/ was removed while the run went on: the reports written there are lost$" \
	"$WORK/err"
expect_no_grep "directory gone: no summary.json promised" "summary.json" "$WORK/err"
# the finding only in a process started after: the run fails, and says why
cat >"$WORK/gone_first.sh" <<EOF
rm -rf "\$MUTEXSTAT_RUN_DIR"
"$ABBA" >/dev/null 2>/dev/null
EOF
rc=0
TMPDIR=$RUNS MUTEXSTAT_EXIT_CODE=9 "$MS" bash "$WORK/gone_first.sh" >/dev/null 2>"$WORK/err" || rc=$?
expect_eq "directory gone first: MUTEXSTAT_EXIT_CODE fails the run" "$rc" 9
expect_grep "directory gone first: and the summary says why" \
	"^the run fails \(MUTEXSTAT_EXIT_CODE\): the findings of processes started after the directory went are not counted here$" \
	"$WORK/err"
rc=0
TMPDIR=$RUNS "$MS" bash "$WORK/gone_first.sh" >/dev/null 2>"$WORK/err" || rc=$?
expect_eq "directory gone first, no MUTEXSTAT_EXIT_CODE: the suite's status" "$rc" 0
# a process started before, which outlives the first and the directory
# (4 x 5 million locks: 1 million ended before the first, once, under a
# sanitized build on a loaded machine):
# its report, which no summary will tell of, goes to its stderr
cat >"$WORK/gone_daemon.sh" <<EOF
"$CONTENTION" 4 5000000 >/dev/null 2>"$WORK/daemon.err" &
sleep 0.2
rm -rf "\$MUTEXSTAT_RUN_DIR"
EOF
TMPDIR=$RUNS "$MS" bash "$WORK/gone_daemon.sh" >/dev/null 2>"$WORK/err"
expect_grep "directory gone, a process living on: the first's summary says where its report goes" \
	"^  \(processes of this run live on \(a daemon\?\): the run's directory was removed, so their reports, if any, will go to their stderr,$" \
	"$WORK/err"
expect_eq "directory gone, a process living on: said once" "$(grep -c 'processes of this run live on' "$WORK/err")" 1
n=0
while [ $n -lt 300 ] && ! grep -q '^Top ' "$WORK/daemon.err" 2>/dev/null; do sleep 0.1; n=$((n + 1)); done
expect_grep "directory gone, a process living on: it says why its report is on its stderr" \
	"^mutexstat: the run's directory '$RUNS/mutexstat\.[A-Za-z0-9]+' was removed while the run went on; the report goes to stderr$" \
	"$WORK/daemon.err"
expect_grep "directory gone, a process living on: and its report is there" \
	"^mutexstat: contention \(pid [0-9]+\) ran " "$WORK/daemon.err"
rc=0
MUTEXSTAT_RUN_DIR=$WORK/never-made LD_PRELOAD="$MS_PRELOAD" "$ABBA" >/dev/null \
	2>"$WORK/never.err" || rc=$?
expect_eq "a run directory that is not there: the program's status" "$rc" 0
expect_grep "a run directory that is not there: said once" \
	"^mutexstat: MUTEXSTAT_RUN_DIR '$WORK/never-made': cannot open the run's list in it \(ENOENT\); this process reports as outside a run$" \
	"$WORK/never.err"
expect_grep "a run directory that is not there: the report on stderr" \
	"^POTENTIAL DEADLOCK: 2 mutexes taken in a cycle of orders$" "$WORK/never.err"

# ---- one program, --verbose, --output, --run-dir ---------------------------

rc=0
TMPDIR=$RUNS "$MS" "$ABBA" >/dev/null 2>"$WORK/err" || rc=$?
expect_grep "one program: its report on stderr" "^POTENTIAL DEADLOCK: " "$WORK/err"
expect_no_grep "one program: no summary" "^mutexstat: the run of" "$WORK/err"
before=$(ls "$RUNS" | wc -l)
TMPDIR=$RUNS "$MS" "$ABBA" >/dev/null 2>/dev/null
expect_eq "one program: no directory left behind" "$(ls "$RUNS" | wc -l)" "$before"
mkdir "$WORK/mine"
TMPDIR=$RUNS "$MS" --run-dir "$WORK/mine" "$ABBA" >/dev/null 2>/dev/null
expect_eq "--run-dir: a directory the user had stays, as it was" \
	"$([ -d "$WORK/mine" ] && ls -A "$WORK/mine" | wc -l)" 0
# A directory used by a run before: that run's processes and findings are
# not this one's (its summary counted them, and MUTEXSTAT_EXIT_CODE failed
# a clean run for the last one's inversion).
TMPDIR=$RUNS "$MS" --run-dir "$WORK/again" bash -c "$ABBA; true" >/dev/null 2>/dev/null
rc=0
MUTEXSTAT_EXIT_CODE=5 TMPDIR=$RUNS "$MS" --run-dir "$WORK/again" bash -c "$CONTENTION >/dev/null; true" \
	>/dev/null 2>"$WORK/err" || rc=$?
expect_eq "--run-dir used again: the clean run passes" "$rc" 0
expect_grep "--run-dir used again: its own processes only" \
	'^mutexstat: the run of bash \(pid [0-9]+\): 2 processes \(1 took locks\); reports in ' "$WORK/err"
expect_grep "--run-dir used again: no findings" '^no findings$' "$WORK/err"
# MUTEXSTAT_RUN_DIR left in the environment by a run that is over: no run
# to join (the report went quietly into it, no summary, and
# MUTEXSTAT_EXIT_CODE passed an inversion); it names the new run's directory.
mkdir "$WORK/stale"
rc=0
MUTEXSTAT_EXIT_CODE=4 MUTEXSTAT_RUN_DIR=$WORK/stale TMPDIR=$RUNS "$MS" "$ABBA" >/dev/null \
	2>"$WORK/err" || rc=$?
expect_eq "a stale MUTEXSTAT_RUN_DIR: MUTEXSTAT_EXIT_CODE applies" "$rc" 4
expect_grep "a stale MUTEXSTAT_RUN_DIR: the report on stderr" '^POTENTIAL DEADLOCK: ' "$WORK/err"
# A relative MUTEXSTAT_SUPPRESSIONS of the environment reaches a process
# that changed directory, as --suppressions does.
printf 'potential-deadlock:.\n' >"$WORK/all.supp"
rc=0
(cd "$WORK" && MUTEXSTAT_EXIT_CODE=5 MUTEXSTAT_SUPPRESSIONS=all.supp TMPDIR=$RUNS \
	"$MS" bash -c "cd / && $ABBA; true" >/dev/null 2>"$WORK/err") || rc=$?
expect_eq "a relative MUTEXSTAT_SUPPRESSIONS: the child in / reads it" "$rc" 0
# A run in which nothing locked leaves no report and no directory: the
# summary says so rather than name the directory it removes.
before=$(ls "$RUNS" | wc -l)
TMPDIR=$RUNS "$MS" bash -c 'ls / >/dev/null; sort </dev/null; true' >/dev/null 2>"$WORK/err"
expect_grep "locking nothing: the summary says there are no reports" \
	"^mutexstat: the run of bash \(pid [0-9]+\): 3 processes \\(0 took locks\\); no reports\$" "$WORK/err"
expect_eq "locking nothing: and ends so" \
	"$(tail -n 1 "$WORK/err")" "mutexstat: end of the run's summary; no reports"
expect_eq "locking nothing: no directory left behind" "$(ls "$RUNS" | wc -l)" "$before"
# --verbose: each process writes its "locked no mutexes" line, and the
# summary still counts none that took locks
TMPDIR=$RUNS "$MS" --verbose --run-dir "$WORK/verbose" bash -c 'ls / >/dev/null; sort </dev/null; true' \
	>/dev/null 2>"$WORK/err"
expect_grep "--verbose, locking nothing: none took locks" \
	"^mutexstat: the run of bash \(pid [0-9]+\): 3 processes \(0 took locks\); reports in " "$WORK/err"
expect_eq "--verbose, locking nothing: JSON, 3 reports, none took locks" \
	"$(grep -o '"\(recorded\|took_locks\)":[0-9]*' "$WORK/verbose/summary.json" | tr '\n' ' ')" \
	'"recorded":3 "took_locks":0 '
# A server started as root whose workers become another user (apache's
# www-data): without --run-user they can write nothing into the run's
# directory, and their reports were lost, unsaid; with it, the directory
# and its list are that user's.  Needs root and setpriv.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1 &&
   su -s /bin/sh nobody -c "test -x '$CONTENTION'" 2>/dev/null; then
	as_nobody="setpriv --reuid=65534 --regid=65534 --clear-groups $CONTENTION"
	"$MS" --run-user nobody sh -c "$as_nobody >/dev/null; true" >/dev/null 2>"$WORK/err"
	dir=$(sed -n 's|^mutexstat: end of the run.s summary; reports in \(.*\)/$|\1|p' "$WORK/err")
	expect_grep "--run-user: the worker's site in the summary" \
		'^ .* 80000 +1  worker\+0x[0-9a-f]+ \(.*contention\.c:[0-9]+, contention\)$' "$WORK/err"
	expect_eq "--run-user: its report in the run's directory, the user's" \
		"$(ls -l "${dir:-/nonexistent}" 2>/dev/null | awk '$NF ~ /^contention\.[0-9]+$/ { print $3 }')" nobody
	[ -n "$dir" ] && rm -rf -- "$dir"
	# a directory the user had (a --run-dir of /tmp, or .) stays theirs
	# (made in /tmp: nobody cannot reach into $WORK)
	shared=$(mktemp -d /tmp/mutexstat-test-shared.XXXXXX)
	chmod 1777 "$shared"
	"$MS" --run-dir "$shared" --run-user nobody sh -c "$as_nobody >/dev/null; true" \
		>/dev/null 2>"$WORK/err"
	expect_eq "--run-user, a --run-dir that existed: still root's" "$(stat -c %U "$shared")" root
	expect_eq "... and the worker's report in it all the same" \
		"$(ls "$shared" | grep -c '^contention\.[0-9]*$')" 1
	rm -rf -- "$shared"
	rc=0
	"$MS" --run-user no-such-user-here true 2>"$WORK/err" || rc=$?
	expect_eq "--run-user of no user: refused" "$rc" 2
else
	pass "--run-user: not root, or no setpriv, or the build not readable by nobody: skipped"
fi

# ... and without it, a worker that becomes nobody after it started (as
# apache's do) cannot write its report into the root-owned directory:
# its lines reach the run's list all the same (the list was opened as the
# process started), and the summary says what was lost and why.
if [ "$(id -u)" -eq 0 ]; then
	rc=0
	TMPDIR=$RUNS "$MS" "$top_builddir/tests/scenario" nobody >/dev/null 2>"$WORK/err" || rc=$?
	expect_eq "a worker become nobody: the run's status" "$rc" 0
	expect_grep "a worker become nobody: 2 processes, 1 locked" \
		'^mutexstat: the run of scenario \(pid [0-9]+\): 2 processes \(1 took locks\); reports in ' \
		"$WORK/err"
	expect_eq "a worker become nobody: the summary says its report is lost, and why" \
		"$(grep -A1 '^  (1 report could not be written there' "$WORK/err")" \
		"$(printf '%s\n%s' '  (1 report could not be written there, 1 by a process that became uid 65534 and may not write' \
			'   into the directory: mutexstat --run-user gives the directory to that user)')"
	dir=$(sed -n 's|^mutexstat: end of the run.s summary; reports in \(.*\)/$|\1|p' "$WORK/err")
	expect_eq "a worker become nobody: summary.json counts it" \
		"$(jq -r '[.reports_unwritten, .reports_unwritten_by_another_user] | @tsv' \
			"${dir:-/nonexistent}/summary.json" 2>/dev/null)" "$(printf '1\t1')"
	[ -n "$dir" ] && rm -rf -- "$dir"
	# -o where that worker may not write: its report is not put into the
	# program's stderr (it was, whole, after a warning), and the summary
	# says why
	mkdir "$WORK/odir"
	rc=0
	TMPDIR=$RUNS "$MS" -o "$WORK/odir/r.%p.txt" "$top_builddir/tests/scenario" nobody \
		>/dev/null 2>"$WORK/err" || rc=$?
	expect_eq "-o, a worker that may not write there: the run's status" "$rc" 0
	expect_eq "-o, a worker that may not write there: the summary alone on stderr" \
		"$(grep -c '^mutexstat: \(cannot write\|scenario (pid\)' "$WORK/err")" 0
	expect_eq "-o, a worker that may not write there: the summary says so, and why" \
		"$(grep -A1 '^  (1 report could not be written there' "$WORK/err")" \
		"$(printf '%s\n%s' '  (1 report could not be written there, 1 by a process that became uid 65534 and may not write' \
			'   there: -o into a directory that user may write to keeps them)')"
	expect_eq "-o, a worker that may not write there: no report there (the first locked nothing)" \
		"$(ls "$WORK/odir" | wc -l)" 0
else
	pass "a worker become nobody: not root: skipped"
fi

# A site too long for the summary's line is fitted to it, as in a report.
SCENARIO=$top_builddir/tests/scenario
TMPDIR=$RUNS "$MS" bash -c "$SCENARIO longwait; $SCENARIO longwait; true" >/dev/null 2>"$WORK/err"
sed -n '/^most waited-for mutexes of the run/,/^mutexstat: end of/p' "$WORK/err" >"$WORK/sites"
expect_grep "long site: in the summary, from both processes, its line kept" \
	"^ .* 2  .*_take_the_run_summary_line_past_its_width scenario\.c:[0-9]+\$" "$WORK/sites"
expect_eq "long site: no line of the summary's sites over 120 columns" \
	"$(sed 's/µ/u/g' "$WORK/sites" | awk 'length($0) > 120' | wc -l)" 0

TMPDIR=$RUNS "$MS" --verbose bash "$WORK/suite.sh" >/dev/null 2>"$WORK/err"
dir=$(sed -n 's|^mutexstat: end of the run.s summary; reports in \(.*\)/$|\1|p' "$WORK/err")
expect_eq "--verbose: a report from every process but the first" \
	"$(ls "$dir" | grep -v '^summary.json$' | sed 's/\.[0-9]*$//' | sort | tr '\n' ' ')" \
	"cat contention deadlock_abba deadlock_abba ls sort "
expect_eq "--verbose: no mark of the launcher's left in the run's directory" \
	"$(ls -A "$dir" | grep -c '^\.made$')" 0
expect_grep "--verbose: the first's on its stderr, as without a run" \
	"^mutexstat: bash \(pid [0-9]+\) ran .* and locked no mutexes$" "$WORK/err"
expect_grep "--verbose: the one line of one that locked nothing" \
	"^mutexstat: ls \(pid [0-9]+\) ran .* and locked no mutexes$" "$dir"/ls.*

"$MS" --run-dir "$WORK/mine" -o "$WORK/own.%p" bash "$WORK/suite.sh" >/dev/null 2>"$WORK/err"
expect_eq "--output: the reports where the user says" \
	"$(ls "$WORK" | grep -c '^own\.[0-9]*$')" 3
expect_grep "--output with %p: the summary names where the reports are" \
	"^mutexstat: the run of bash .* reports as $WORK/own\\.%p \\(%p the pid\\)\$" "$WORK/err"
expect_grep "--output with %p: and at its end" \
	"^mutexstat: end of the run's summary; reports as $WORK/own\\.%p \\(%p the pid\\)\$" "$WORK/err"
expect_grep "--run-dir: its JSON in the run's directory" \
	"^\\(and as JSON in $WORK/mine/summary.json\\)\$" "$WORK/err"
expect_grep "--run-dir: the summary's findings from the --output files" \
	"^  POTENTIAL DEADLOCK: 2 mutexes taken in a cycle of orders$" "$WORK/err"

# --output without %p names the first process's report: the others would
# each replace the one before's (only the last process's was left), so
# theirs go to the run's directory, which the summary names.
rm -f "$WORK/one"
"$MS" --verbose --run-dir "$WORK/runs1" -o "$WORK/one" bash "$WORK/suite.sh" >/dev/null 2>"$WORK/err"
expect_eq "--output without %p: the first process's report in it" \
	"$(grep -c '^mutexstat: ' "$WORK/one"):$(grep -c '^mutexstat: bash (pid [0-9]*) ran .* and locked no mutexes$' "$WORK/one")" \
	"1:1"
expect_eq "--output without %p: the others' in the run's directory" \
	"$(ls "$WORK/runs1" | grep -v '^summary.json$' | sed 's/\.[0-9]*$//' | sort | tr '\n' ' ')" \
	"cat contention deadlock_abba deadlock_abba ls sort "
expect_grep "--output without %p: the summary names the directory, and the first's file" \
	"^mutexstat: the run of bash .* reports in $WORK/runs1/, the first process's in $WORK/one\$" "$WORK/err"
expect_grep "--output without %p: ... its last line too" \
	"^mutexstat: end of the run's summary; reports in $WORK/runs1/, the first process's in $WORK/one\$" \
	"$WORK/err"
expect_no_grep "--output without %p, its report written: no word of it" "^  \(no " "$WORK/err"
# ... without --verbose the first process, which locked nothing, writes
# none: the summary says why the file the user named is not there
rm -f "$WORK/one"
"$MS" --run-dir "$WORK/runs2" -o "$WORK/one" bash "$WORK/suite.sh" >/dev/null 2>"$WORK/err"
expect_eq "--output without %p, quiet: no file" "$(ls "$WORK/one" 2>/dev/null)" ""
expect_grep "--output without %p, quiet: the summary says why" \
	"^  \(no $WORK/one: that is the first process's report, and it locked nothing\)\$" "$WORK/err"
# -o /dev/stdout: the first process's own stdout, as a file without %p --
# the others' reports go to the run's directory, not into the outputs of
# the programs a test suite compares
"$MS" --verbose --run-dir "$WORK/runs3" -o /dev/stdout bash "$WORK/suite.sh" >"$WORK/out" 2>"$WORK/err"
expect_eq "-o /dev/stdout: the first process's report on its stdout, alone" \
	"$(grep -c '^mutexstat: ' "$WORK/out"):$(grep -c '^mutexstat: bash (pid [0-9]*) ran .* and locked no mutexes$' "$WORK/out")" \
	"1:1"
expect_eq "-o /dev/stdout: the others' in the run's directory" \
	"$(ls "$WORK/runs3" | grep -v '^summary.json$' | sed 's/\.[0-9]*$//' | sort | tr '\n' ' ')" \
	"cat contention deadlock_abba deadlock_abba ls sort "
"$MS" -o /dev/stdout "$CONTENTION" >"$WORK/out" 2>"$WORK/err"
expect_eq "-o /dev/stdout, one process: its report on stdout, nothing on stderr" \
	"$(grep -c '^mutexstat: contention (pid [0-9]*) ran ' "$WORK/out") $(wc -c <"$WORK/err")" "1 0"
rc=0
"$MS" --run-dir /proc/mutexstat-no bash -c true 2>"$WORK/err" || rc=$?
expect_eq "--run-dir that cannot be made: refused" "$rc" 2
expect_grep "--run-dir that cannot be made: says so" \
	"^mutexstat: --run-dir '/proc/mutexstat-no': cannot create or write it$" "$WORK/err"

# --no-follow: no run, and the program's one line as before
rc=0
TMPDIR=$RUNS "$MS" --no-follow ls / >/dev/null 2>"$WORK/err" || rc=$?
expect_grep "--no-follow: the one line of a program that locked nothing" \
	"^mutexstat: ls \(pid [0-9]+\) ran .* and locked no mutexes$" "$WORK/err"
before=$(ls "$RUNS" | wc -l)
TMPDIR=$RUNS "$MS" --no-follow ls / >/dev/null 2>&1
expect_eq "--no-follow: no run directory" "$(ls "$RUNS" | wc -l)" "$before"

# ---- a launcher inside a run joins it --------------------------------------

cat >"$WORK/nested.sh" <<EOF
"$MS" "$ABBA" >/dev/null
EOF
TMPDIR=$RUNS "$MS" bash "$WORK/nested.sh" >/dev/null 2>"$WORK/err"
expect_eq "nested launcher: one summary" "$(grep -c '^mutexstat: the run of' "$WORK/err")" 1
expect_grep "nested launcher: its program in the run" \
	"^mutexstat: the run of bash \(pid [0-9]+\): [0-9]+ processes \\(1 took locks\\); " "$WORK/err"

# top_acquired DIR PROGRAM: the acquisitions of the top row of PROGRAM's
# report in the run's directory DIR, once it is written whole (waited for
# up to 10 s: a process of the run that outlives the first writes it
# later); "" if none came.
top_acquired() {
	top_acquired_n=0
	while :; do
		top_acquired_row=$(cat "$1/$2".* 2>/dev/null |
			awk '/^Top /{t=1; next} t && /^ +1 (0x|<)/ { print $3; exit }')
		[ -n "$top_acquired_row" ] || [ $top_acquired_n -ge 100 ] && break
		sleep 0.1
		top_acquired_n=$((top_acquired_n + 1))
	done
	echo "$top_acquired_row"
}

# ---- a daemon: the first process ends before the one it forked ------------
# The run's directory stays for the daemon's report (and its live dumps),
# and the first process says where it will be.
cat >"$WORK/daemon.c" <<'EOF'
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int main(int argc, char **argv)
{
	(void)argc;
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid > 0) { /* the parent goes; the daemon stays a while */
		printf("daemon %d\n", (int)pid);
		return 0;
	}
	setsid();
	while (access(argv[1], F_OK) != 0) /* until the test has seen the parent end */
		usleep(10000);
	for (int i = 0; i < 25; i++) {
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
	}
	return 0;
}
EOF
${CC:-cc} -o "$WORK/daemon" "$WORK/daemon.c" -lpthread || fail "cannot build daemon.c"
rm -rf "$WORK/drun" "$WORK/go"
rc=0
"$MS" --run-dir "$WORK/drun" "$WORK/daemon" "$WORK/go" >"$WORK/dout" 2>"$WORK/derr" || rc=$?
expect_eq "daemon: the parent's status" "$rc" 0
daemon=$(awk '/^daemon / { print $2 }' "$WORK/dout")
expect_grep "daemon: the first process says where the daemon's report will be" \
	"^mutexstat: processes of this run live on \(a daemon\?\): their reports, if any, will be in $WORK/drun/\$" \
	"$WORK/derr"
: >"$WORK/go"
wait_for "$WORK/drun/daemon.$daemon" '^mutexstat: daemon \(pid [0-9]+\) ran ' 20 ||
	fail "daemon: its report never came to the run's directory"
expect_eq "daemon: its 25 locks" "$(top_acquired "$WORK/drun" daemon)" 25
n=0
while [ $n -lt 100 ] && [ -e "$WORK/drun/.left" ]; do sleep 0.1; n=$((n + 1)); done
expect_eq "daemon: the directory, its report and the run's list left" \
	"$(ls -A "$WORK/drun" | tr '\n' ' ')" ".processes daemon.$daemon "

# ... and with -o PATTERN, where the reports go instead: the message names
# the pattern, not the run's directory (which goes, no report coming to it)
mkdir -p "$WORK/o"
rm -rf "$WORK/orun" "$WORK/go"
"$MS" --run-dir "$WORK/orun" -o "$WORK/o/r.%p.txt" "$WORK/daemon" "$WORK/go" \
	>"$WORK/oout" 2>"$WORK/oerr"
expect_grep "daemon, -o PATTERN: the first process says where the daemon's report will be" \
	"^mutexstat: processes of this run live on \(a daemon\?\): their reports, if any, will be as $WORK/o/r\.%p\.txt \(%p the pid\)\$" \
	"$WORK/oerr"
odaemon=$(awk '/^daemon / { print $2 }' "$WORK/oout")
: >"$WORK/go"
wait_for "$WORK/o/r.$odaemon.txt" '^mutexstat: daemon \(pid [0-9]+\) ran ' 20 ||
	fail "daemon, -o PATTERN: its report never came as the pattern says"

# ... and a daemon started after another process of the run wrote its
# report: the summary has that report to count, and says the daemon's
# come after it (it said "no findings" alone, though a daemon of the run
# lived on: pg_ctl start, whose postmaster reported later)
rm -rf "$WORK/d2run" "$WORK/go"
"$MS" --run-dir "$WORK/d2run" sh -c '"$1" >/dev/null 2>&1; "$2" "$3"' sh \
	"$top_builddir/examples/contention" "$WORK/daemon" "$WORK/go" >"$WORK/d2out" 2>"$WORK/d2err"
expect_grep "daemon after a report: the summary counts the report" \
	'^mutexstat: the run of sh \(pid [0-9]+\): 3 processes \(1 took locks\); reports in ' "$WORK/d2err"
expect_eq "daemon after a report: ... and says a process lives on, whose report is not in it" \
	"$(sed -n '2,3p' "$WORK/d2err")" \
	"  (processes of this run live on (a daemon?): their reports, if any, will be in $WORK/d2run/,
   not in this summary)"
if command -v jq >/dev/null 2>&1; then
	expect_eq "daemon after a report: summary.json says so" \
		"$(jq -r '.processes_live_on' "$WORK/d2run/summary.json")" true
fi
d2=$(awk '/^daemon / { print $2 }' "$WORK/d2out")
: >"$WORK/go"
wait_for "$WORK/d2run/daemon.$d2" '^mutexstat: daemon \(pid [0-9]+\) ran ' 20 ||
	fail "daemon after a report: its report never came to the run's directory"

# ... and a process in the background that locks nothing: the last of the
# run to end removes the directory the launcher made
rm -rf "$WORK/brun"
TMPDIR=$WORK "$MS" --run-dir "$WORK/brun" sh -c "sleep 1 &" 2>"$WORK/berr"
expect_grep "background: said" '^mutexstat: processes of this run live on ' "$WORK/berr"
n=0
while [ $n -lt 100 ] && [ -e "$WORK/brun" ]; do sleep 0.1; n=$((n + 1)); done
expect_eq "background: the empty run's directory removed by its last process" \
	"$([ -e "$WORK/brun" ] && echo there || echo gone)" gone

# ... and a shell's subshell in the background, which ends with _exit
# (a fork child writes no lines): the last to end, it removes the
# directory all the same
rm -rf "$WORK/srun"
TMPDIR=$WORK "$MS" --run-dir "$WORK/srun" dash -c "(sleep 0.5; true) &" 2>"$WORK/serr"
expect_grep "subshell: said" '^mutexstat: processes of this run live on ' "$WORK/serr"
n=0
while [ $n -lt 100 ] && [ -e "$WORK/srun" ]; do sleep 0.1; n=$((n + 1)); done
expect_eq "subshell: the empty run's directory removed by the subshell's _exit" \
	"$([ -e "$WORK/srun" ] && ls -A "$WORK/srun" | tr '\n' ' ' || echo gone)" gone

# A program that closes the library's descriptor of the run's list (a
# daemon closing every descriptor) and puts a file of its own at that
# number: the library's end leaves it open, and the program's last line,
# which exit() flushes after the library's report, is written.
cat >"$WORK/reuse.c" <<'EOF'
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	int ours = -1;
	for (int fd = 3; fd < 65536 && argc == 2; fd++) {
		char link[64], to[4096];
		snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
		ssize_t n = readlink(link, to, sizeof to - 1);
		if (n > 0 && (to[n] = 0, strstr(to, "/.processes")))
			ours = fd;
	}
	if (ours < 0)
		return 2;
	close(ours);
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || dup2(fd, ours) != ours)
		return 3;
	close(fd);
	FILE *log = fdopen(ours, "w");
	fprintf(log, "the program's last line\n"); /* written by exit() */
	return 0;
}
EOF
${CC:-cc} -o "$WORK/reuse" "$WORK/reuse.c" || fail "cannot build reuse.c"
rc=0
TMPDIR=$WORK "$MS" "$WORK/reuse" "$WORK/reuse.log" 2>"$WORK/rerr" || rc=$?
expect_eq "its descriptor reused: the program's status" "$rc" 0
expect_eq "its descriptor reused: the program's file kept its last line" \
	"$(cat "$WORK/reuse.log")" "the program's last line"

# A process that forks a worker and then execs its program ("( loop ) &
# exec daemon"), away from the first process: the worker, ending first
# with _exit, must see the new program alive, though the worker still
# held the old program's hold on the same pid when the new one took its
# own; the new program's report comes to the directory.
cat >"$WORK/execafter.c" <<'EOF'
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "daemon")) {
		usleep(800000); /* the worker has ended */
		for (int i = 0; i < 3; i++) {
			pthread_mutex_lock(&m);
			pthread_mutex_unlock(&m);
		}
		return 0;
	}
	if (fork() == 0) {
		usleep(300000); /* the first process has ended */
		_exit(0);
	}
	execl("/proc/self/exe", argv[0], "daemon", (char *)0);
	return 1;
}
EOF
${CC:-cc} -o "$WORK/execafter" "$WORK/execafter.c" -lpthread || fail "cannot build execafter.c"
rm -rf "$WORK/xrun"
# (a child of the first process: one its parent left may not have taken
# its hold yet when the first one ends -- doc/limits.md)
TMPDIR=$WORK "$MS" --run-dir "$WORK/xrun" dash -c "\"$WORK/execafter\" & sleep 0.1" 2>"$WORK/xerr"
expect_eq "exec after a fork: the new program's report, in the directory" \
	"$(top_acquired "$WORK/xrun" execafter)" 3

# A daemon made by glibc's daemon(3), whose parent ends with an _exit of
# glibc's own: the parent's report and its word on where the daemon's
# will be, as for a fork of the program's; the daemon's session, working
# directory and standard descriptors as without the library.
cat >"$WORK/daemon3.c" <<'EOF'
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int main(int argc, char **argv)
{
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	pid_t parent = getpid();
	if (argc != 2 || daemon(0, 0) != 0)
		return 1;
	for (int i = 0; i < 4; i++) {
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
	}
	char cwd[PATH_MAX] = "", to[3][PATH_MAX];
	if (!getcwd(cwd, sizeof cwd))
		return 2;
	for (int i = 0; i < 3; i++) {
		char link[64];
		snprintf(link, sizeof link, "/proc/self/fd/%d", i);
		ssize_t n = readlink(link, to[i], PATH_MAX - 1);
		to[i][n > 0 ? n : 0] = 0;
	}
	FILE *f = fopen(argv[1], "w");
	fprintf(f, "a new process %d, its session's leader %d, in %s, %s %s %s\n",
		getpid() != parent, getsid(0) == getpid(), cwd, to[0], to[1], to[2]);
	fclose(f);
	usleep(300000);
	return 0;
}
EOF
${CC:-cc} -o "$WORK/daemon3" "$WORK/daemon3.c" -lpthread || fail "cannot build daemon3.c"
"$WORK/daemon3" "$WORK/daemon3.bare"
rm -rf "$WORK/d3run"
rc=0
TMPDIR=$WORK "$MS" --run-dir "$WORK/d3run" "$WORK/daemon3" "$WORK/daemon3.with" 2>"$WORK/d3err" || rc=$?
expect_eq "daemon(3): the parent's status" "$rc" 0
expect_grep "daemon(3): the parent's report, on the run's stderr" \
	'^mutexstat: daemon3 \(pid [0-9]+\) ran .*1 mutex tracked' "$WORK/d3err"
expect_grep "daemon(3): the parent says where the daemon's report will be" \
	"^mutexstat: processes of this run live on \(a daemon\?\): their reports, if any, will be in $WORK/d3run/\$" \
	"$WORK/d3err"
expect_eq "daemon(3): the daemon's report in the directory, its own 4 locks" \
	"$(top_acquired "$WORK/d3run" daemon3)" 4
n=0
while [ $n -lt 100 ] && [ ! -s "$WORK/daemon3.bare" ]; do sleep 0.1; n=$((n + 1)); done
expect_eq "daemon(3): the daemon as without the library" "$(cat "$WORK/daemon3.with")" \
	"$(cat "$WORK/daemon3.bare")"
expect_eq "daemon(3): ... a new session, in /, on /dev/null" "$(cat "$WORK/daemon3.with")" \
	"a new process 1, its session's leader 1, in /, /dev/null /dev/null /dev/null"

# A run's first process that lowers its address-space limit below what it
# has mapped (the library's reserve among it) can map nothing more: its
# summary is made in memory it reserved as it started, and the run's
# finding still fails it (it ended with no word, and status 0)
# (not under ASan, whose shadow memory needs more than that limit)
if sanitized; then
	pass "address space lowered: skipped in a sanitized build"
else
	rm -rf "$WORK/asrun"
	rc=0
	MUTEXSTAT_EXIT_CODE=9 "$MS" --run-dir "$WORK/asrun" \
		sh -c 'ulimit -v 400000 && "$1" >/dev/null; true' sh "$ABBA" 2>"$WORK/aserr" || rc=$?
	expect_eq "address space lowered: the run's finding fails it" "$rc" 9
	expect_grep "address space lowered: the summary, both processes" \
		'^mutexstat: the run of sh \(pid [0-9]+\): 2 processes \(1 took locks\); reports in ' \
		"$WORK/aserr"
	expect_grep "address space lowered: ... the finding" '^  POTENTIAL DEADLOCK: ' "$WORK/aserr"
fi

# A run's list its first process cannot read at its end (here a link put
# in its place, and its own descriptor of it closed, after a child with a
# finding): the summary says so, and with MUTEXSTAT_EXIT_CODE the run
# fails -- its findings are not known
cat >"$WORK/unreadable.c" <<'EOF'
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	const char *dir = getenv("MUTEXSTAT_RUN_DIR");
	char list[PATH_MAX], moved[PATH_MAX];
	if (!dir || argc != 2 || system(argv[1]) != 0)
		return 2;
	snprintf(list, sizeof list, "%s/.processes", dir);
	snprintf(moved, sizeof moved, "%s/moved", dir);
	for (int fd = 3; fd < 4096; fd++)
		close(fd);
	if (rename(list, moved) != 0 || symlink(moved, list) != 0)
		return 3;
	return 0;
}
EOF
if ${CC:-cc} -o "$WORK/unreadable" "$WORK/unreadable.c"; then
	rm -rf "$WORK/urun"
	rc=0
	MUTEXSTAT_EXIT_CODE=9 "$MS" --run-dir "$WORK/urun" \
		"$WORK/unreadable" "$ABBA >/dev/null" 2>"$WORK/uerr" || rc=$?
	expect_eq "list unreadable: the run fails" "$rc" 9
	expect_grep "list unreadable: the summary says why" \
		"^mutexstat: the run of unreadable \(pid [0-9]+\): its list of processes could not be read \(ELOOP\); the run's findings are not known: their reports are in $WORK/urun/\$" \
		"$WORK/uerr"
	expect_grep "list unreadable: ... and the exit status why" \
		"^mutexstat: exit status 9, not the program's 0: the run's list could not be read: its findings are not known \(MUTEXSTAT_EXIT_CODE\)\$" \
		"$WORK/uerr"
else
	fail "list unreadable: the program did not build"
fi

finish
