# tests/interval.sh - MUTEXSTAT_INTERVAL: a service run with an interval
# writes PREFIX.N.pb.gz and PREFIX.N.{wait,hold}.folded every interval, one
# series numbered from 1 without a gap, the last (partial) one at exit,
# then the whole run's files as without an interval.  Each interval holds
# what happened since the one before: the intervals' contentions add up
# exactly to the whole run's, and their delays to within rounding -- also
# for mutexes that ended between two intervals (the service's sessions).
# go tool pprof reads each, merges them, and -diff_base between the first
# and the last shows the change the service makes half-way.  Every sample
# carries program, pid and host labels; time_nanos and duration_nanos make
# the profiles a time series without gaps.  MUTEXSTAT_KEEP keeps the
# newest N; a live dump is PREFIX.dump.N then.  Bad input: an interval of
# 0, negative, not a number, too many decimals; an output directory that
# does not exist; the launcher's --interval.  (The text, JSON and DOT
# interval files: tests/interval_text.sh.)

. "$top_srcdir/tests/lib.sh"

SERVICE="$top_builddir/examples/service"
MS="$top_builddir/scripts/mutexstat"
have_go=
if command -v go >/dev/null 2>&1; then
	have_go=1
	# go and pprof write nothing outside $WORK
	export HOME="$WORK" GOPATH="$WORK/go" GOCACHE="$WORK/gocache" GOFLAGS=-mod=mod \
		PPROF_TMPDIR="$WORK" GOTOOLCHAIN=local
else
	echo "note: no go command (Debian: golang-go): the go tool pprof checks are left out"
fi

# ---- a run with an interval ---------------------------------------------
# 3.3 s at 1 s: three whole intervals and a partial one, give or take one
# for a slow machine: the test counts the files, it does not expect a number
mkdir "$WORK/a"
MUTEXSTAT_INTERVAL=1 MUTEXSTAT_FORMAT=text,pprof,folded MUTEXSTAT_STACK_SAMPLE=1 \
	MUTEXSTAT_OUTPUT="$WORK/a/r" run_with "$WORK/out" "$WORK/err" "$SERVICE" 3.3 4
rc=$?
expect_eq "the service's status under an interval" "$rc" 0
expect_grep "the service's output" '^served [0-9]+ requests' "$WORK/out"
expect_eq "nothing on its stderr" "$(cat "$WORK/err")" ""
pid=$(awk '/^mutexstat: service \(pid/ { sub(/\).*/, "", $4); print $4; exit }' "$WORK/a/r.txt")

n=0
while [ -e "$WORK/a/r.$((n + 1)).pb.gz" ]; do n=$((n + 1)); done
[ "$n" -ge 3 ] && pass "$n interval profiles, r.1.pb.gz to r.$n.pb.gz" ||
	fail "$n interval profiles; want 3 or more"
missing=
for i in $(seq 1 "$n"); do
	for ext in txt pb.gz wait.folded hold.folded; do
		[ -e "$WORK/a/r.$i.$ext" ] || missing="$missing r.$i.$ext"
	done
done
expect_eq "each interval has its four files" "$missing" ""
others=$(cd "$WORK/a" && ls | grep -Ev "^r\.([0-9]+\.)?(txt|pb\.gz|wait\.folded|hold\.folded)$" | tr '\n' ' ')
expect_eq "no other files, no gap in the numbers" "$others$(ls "$WORK/a" | grep -c '\.pb\.gz$')" "$((n + 1))"
for f in r.txt r.pb.gz r.wait.folded r.hold.folded; do
	[ -s "$WORK/a/$f" ] && pass "the whole run's $f as without an interval" ||
		fail "the whole run's $f missing"
done

# folded: per root (the mutex, or the site of lives that ended), the
# intervals' nanoseconds add up to the whole run's, give or take 0.01 %
# (each file turns ticks into nanoseconds with its own measure of the
# clock's rate, and rounds each line); a session mutex's waits are under
# its address in the intervals it was alive in (on main's stack: 0x7f..,
# where the cache and the log are the program's) and under its site once
# it ended: both count as the sessions' line
fold_sums() {
	cat "$@" | awk '{ v = $NF; $NF = ""; root = $0; sub(/;.*/, "", root)
		if (root ~ /^mutexes ended at count_in_session/ || root ~ /^mutex 0x7f/)
			root = "sessions"
		s[root] += v; l[root]++ }
		END { for (r in s) printf "%s\t%.0f\t%d\n", r, s[r], l[r] }' | sort
}
for kind in wait hold; do
	fold_sums "$WORK/a/r.$kind.folded" >"$WORK/whole.$kind"
	files=
	for i in $(seq 1 "$n"); do files="$files $WORK/a/r.$i.$kind.folded"; done
	# shellcheck disable=SC2086
	fold_sums $files >"$WORK/parts.$kind"
	verdict=$(join -t "$(printf '\t')" -a 1 -a 2 -e 0 -o 0,1.2,1.3,2.2 \
			"$WORK/whole.$kind" "$WORK/parts.$kind" |
		awk -F '\t' '{ d = $2 - $4; if (d < 0) d = -d
			if ($2 == 0 || d > $2 / 10000 + 100) { print "off: " $0; bad = 1 } }
			END { if (!bad) print "yes" }')
	expect_eq "$kind.folded: the intervals add up to the whole run, root by root" \
		"$verdict" yes
done
expect_grep "sessions that ended are in the whole run under their site" \
	'^mutexes ended at count_in_session' "$WORK/a/r.wait.folded"
cat "$WORK"/a/r.[0-9]*.wait.folded >"$WORK/parts.all"
expect_grep "and in the intervals under a live session's address" \
	'^mutex 0x[0-9a-f]+;.*count_in_session' "$WORK/parts.all"

if [ -n "$have_go" ]; then
	# raw FILE: go tool pprof -raw's text of it
	raw() { go tool pprof -raw "$1" 2>"$WORK/raw.err"; }
	# contentions FILE...: the sum of the contentions of every sample
	contentions() {
		go tool pprof -raw "$@" 2>/dev/null |
			awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 }
			s && /^ +[0-9]+ +[0-9]+:/ { c += $1; d += $2 }
			END { printf "%.0f %.0f\n", c, d }'
	}
	readable=0
	for i in $(seq 1 "$n"); do
		raw "$WORK/a/r.$i.pb.gz" >"$WORK/raw.$i" && readable=$((readable + 1))
	done
	expect_eq "go tool pprof reads every interval profile" "$readable" "$n"
	expect_grep "an interval's comment names it" \
		"^Comment: service \\(pid $pid\\), interval 2\$" "$WORK/raw.2"
	raw "$WORK/a/r.pb.gz" >"$WORK/raw.whole"
	# the contentions add up exactly; the delays within 0.1 % (each profile
	# turns ticks into nanoseconds at its own moment)
	sum=0 dsum=0
	for i in $(seq 1 "$n"); do
		set -- $(contentions "$WORK/a/r.$i.pb.gz")
		sum=$((sum + $1)) dsum=$((dsum + $2))
	done
	set -- $(contentions "$WORK/a/r.pb.gz")
	whole=$1 dwhole=$2
	[ "$whole" -gt 0 ] && pass "the whole run has $whole contentions" ||
		fail "the whole run's profile has no contentions"
	expect_eq "the intervals' contentions add up to the whole run's" "$sum" "$whole"
	expect_eq "their delays too, within 0.1 %" "$(awk -v a="$dsum" -v b="$dwhole" \
		'BEGIN { d = a - b; if (d < 0) d = -d; print (d <= b / 1000) ? "yes" : a " vs " b }')" yes
	# merged by go tool pprof (several files: one profile)
	files=
	for i in $(seq 1 "$n"); do files="$files $WORK/a/r.$i.pb.gz"; done
	# shellcheck disable=SC2086
	expect_eq "go tool pprof merges them into the whole run's count" \
		"$(contentions $files | cut -d ' ' -f 1)" "$whole"
	# the second half logs: -diff_base from the first interval to the
	# last whole one shows write_log's waits appear.  -nodefraction=0:
	# the half with the log serves fewer requests, and its waits can be
	# under pprof's 0.5 % of both intervals' samples (3.4 % here, less
	# on the CI machine), a node -top would drop
	go tool pprof -top -nodefraction=0 -sample_index=contentions -diff_base "$WORK/a/r.1.pb.gz" \
		"$WORK/a/r.$((n - 1)).pb.gz" >"$WORK/diff" 2>"$WORK/diff.err"
	expect_eq "-diff_base between intervals shows the waits that came" \
		"$(awk '$NF == "write_log" && $1 + 0 > 0 { print "yes"; exit }' "$WORK/diff")" yes
	go tool pprof -top -nodefraction=0 -sample_index=contentions "$WORK/a/r.1.pb.gz" >"$WORK/top1" 2>/dev/null
	expect_no_grep "and the first interval had none of them" 'write_log$' "$WORK/top1"
	# labels of the process on every sample
	host=$(hostname 2>/dev/null || uname -n)
	samples=$(grep -Ec '^ +[0-9]+ +[0-9]+:' "$WORK/raw.2")
	# (-raw: the string labels on a line, the numbers on the next)
	labelled=$(awk -v h="host:[$host]" -v p="pid:[$pid]" '
		index($0, h) && index($0, "program:[service]") { s = 1; next }
		s && $1 == p { n++ } { s = 0 } END { print n + 0 }' "$WORK/raw.2")
	[ "$samples" -gt 0 ] && expect_eq "every sample labelled host, pid and program" \
		"$labelled" "$samples" || fail "interval 2 has no samples"
	focused=$(go tool pprof -raw -tagfocus=pid="$pid" "$WORK/a/r.2.pb.gz" 2>/dev/null |
		awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 }
		s && /^ +[0-9]+ +[0-9]+:/ { c += $1 } END { printf "%.0f\n", c }')
	expect_eq "-tagfocus=pid=$pid keeps every sample of the process" \
		"$focused" "$(contentions "$WORK/a/r.2.pb.gz" | cut -d ' ' -f 1)"
	# go tool pprof prints Time to the nanosecond and Duration rounded:
	# read both from -raw's header
	times=
	for i in $(seq 1 "$n"); do
		t=$(awk '/^Time:/ { print $2 "T" $3; exit }' "$WORK/raw.$i")
		times="$times $(date -u -d "${t%T*} ${t#*T}" +%s.%N 2>/dev/null)"
	done
	whole_t=$(awk '/^Time:/ { print $2 " " $3; exit }' "$WORK/raw.whole")
	verdict=$(echo "$(date -u -d "$whole_t" +%s.%N) $times" | awk '{
		for (i = 2; i < NF; i++) { d = $(i + 1) - $i; if (d < 0.1 || d > 5) bad = bad " " d }
		if ($2 - $1 > 0.05 || $2 < $1 - 0.001) bad = bad " start " $2 - $1
		print bad ? "off:" bad : "yes" }')
	expect_eq "the intervals start one after another, the first with the run" "$verdict" yes
	expect_grep "an interval's duration is set" '^Duration: [0-9.]+(ms|s)?' "$WORK/raw.2"
fi

# ---- two processes: merged, and split again by pid -------------------------
if [ -n "$have_go" ]; then
	mkdir "$WORK/m"
	env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_INTERVAL=0.5 MUTEXSTAT_FORMAT=pprof \
		MUTEXSTAT_OUTPUT="$WORK/m/r.%p" sh -c '"$1" 1.2 2 & "$1" 1.2 3; wait' sh "$SERVICE" \
		>"$WORK/out" 2>"$WORK/err"
	pids=$(cd "$WORK/m" && ls | sed -n 's/^r\.\([0-9]*\)\.pb\.gz$/\1/p' | sort -n | tr '\n' ' ')
	expect_eq "two services, two whole-run profiles" "$(echo $pids | wc -w)" 2
	all=$(contentions "$WORK"/m/r.*.[0-9]*.pb.gz | cut -d ' ' -f 1)
	split=0
	for p in $pids; do
		one=$(go tool pprof -raw -tagfocus=pid="$p" "$WORK"/m/r.*.[0-9]*.pb.gz 2>/dev/null |
			awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 }
			s && /^ +[0-9]+ +[0-9]+:/ { c += $1 } END { printf "%.0f\n", c }')
		whole_p=$(contentions "$WORK/m/r.$p.pb.gz" | cut -d ' ' -f 1)
		expect_eq "pid $p: its intervals, picked from both processes' by -tagfocus=pid" \
			"$one" "$whole_p"
		split=$((split + one))
	done
	expect_eq "both processes' intervals merged: the sum of the two" "$all" "$split"
fi

# ---- a fork child: a series of its own, from the fork --------------------------
if [ -n "$have_go" ]; then
	mkdir "$WORK/f"
	env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_INTERVAL=0.4 MUTEXSTAT_FORMAT=pprof \
		MUTEXSTAT_OUTPUT="$WORK/f/r.%p" "$SERVICE" 2 2 fork >"$WORK/out" 2>"$WORK/err"
	expect_eq "the forking service's status" "$?" 0
	parent=$(cd "$WORK/f" && ls | sed -n 's/^r\.\([0-9]*\)\.pb\.gz$/\1/p' | sort -n | head -n 1)
	child=$(cd "$WORK/f" && ls | sed -n 's/^r\.\([0-9]*\)\.pb\.gz$/\1/p' | sort -n | tail -n 1)
	[ -n "$child" ] && [ "$child" != "$parent" ] && [ -e "$WORK/f/r.$child.1.pb.gz" ] &&
		pass "the fork child writes its own series, r.$child.1.pb.gz on" ||
		fail "no series of the fork child's: $(ls "$WORK/f" | tr '\n' ' ')"
	for p in "$parent" "$child"; do
		files=
		for f in "$WORK"/f/r."$p".[0-9]*.pb.gz; do files="$files $f"; done
		# shellcheck disable=SC2086
		expect_eq "pid $p: its intervals add up to its whole run (a child's from the fork)" \
			"$(contentions $files | cut -d ' ' -f 1)" \
			"$(contentions "$WORK/f/r.$p.pb.gz" | cut -d ' ' -f 1)"
	done
	start_of() { date -u -d "$(go tool pprof -raw "$1" 2>/dev/null |
		awk '/^Time:/ { print $2 " " $3; exit }')" +%s.%N; }
	expect_eq "the child's first interval starts with its run, at the fork" \
		"$(start_of "$WORK/f/r.$child.1.pb.gz")" "$(start_of "$WORK/f/r.$child.pb.gz")"
fi

# ---- MUTEXSTAT_KEEP --------------------------------------------------------
mkdir "$WORK/k"
MUTEXSTAT_INTERVAL=0.5 MUTEXSTAT_KEEP=2 MUTEXSTAT_FORMAT=pprof MUTEXSTAT_OUTPUT="$WORK/k/r" \
	run_with "$WORK/out" "$WORK/err" "$SERVICE" 2.2 2
last=0
while [ -e "$WORK/k/r.$((last + 1)).pb.gz" ] || [ "$last" -lt 1 ]; do
	last=$((last + 1))
	[ "$last" -lt 100 ] || break
done
kept=$(cd "$WORK/k" && ls | tr '\n' ' ')
high=$(cd "$WORK/k" && ls | sed -n 's/^r\.\([0-9]*\)\.pb\.gz$/\1/p' | sort -n | tail -n 1)
[ "${high:-0}" -ge 4 ] && pass "MUTEXSTAT_KEEP=2: the series went on to r.$high" ||
	fail "MUTEXSTAT_KEEP=2: only up to r.${high:-none}"
expect_eq "MUTEXSTAT_KEEP=2: the newest two intervals stay, with the whole run's" \
	"$kept" "r.$((high - 1)).pb.gz r.$high.pb.gz r.pb.gz "

# ---- a live dump during intervals: a series of its own ---------------------
mkdir "$WORK/d"
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_INTERVAL=60 MUTEXSTAT_FORMAT=text,pprof \
	MUTEXSTAT_OUTPUT="$WORK/d/r" "$SERVICE" 3 2 >"$WORK/out" 2>"$WORK/err" &
job=$!
dump_ready $job || fail "no dump thread in the service"
kill -USR1 $job
wait_for "$WORK/d/r.dump.1.txt" '^mutexstat: service' 10 &&
	pass "a live dump is r.dump.1.txt during intervals" || fail "no r.dump.1.txt"
wait_or_kill $job 30
expect_eq "the service's status, dumped" "$?" 0
kept=$(cd "$WORK/d" && ls | tr '\n' ' ')
expect_eq "the dump's files, the last interval's, the whole run's" "$kept" \
	"r.1.pb.gz r.1.txt r.dump.1.pb.gz r.dump.1.txt r.pb.gz r.txt "

# ---- exit() from a signal handler, MUTEXSTAT_EXIT_REPORT=0 --------------------
# (the dump thread writes that exit's files: the last interval's alone)
mkdir "$WORK/x"
MUTEXSTAT_INTERVAL=60 MUTEXSTAT_EXIT_REPORT=0 MUTEXSTAT_FORMAT=text,folded \
	MUTEXSTAT_OUTPUT="$WORK/x/r" run_with "$WORK/out" "$WORK/err" \
	"$top_builddir/tests/exit_paths" handler-in-pause
expect_eq "exit(4) from a signal handler: the program's status" "$?" 4
expect_eq "MUTEXSTAT_EXIT_REPORT=0: the last interval's files, no whole-run report" \
	"$(ls "$WORK/x" | tr '\n' ' ')" "r.1.hold.folded r.1.txt r.1.wait.folded "

# ---- bad input ---------------------------------------------------------------
for bad in -1 ten 0.05 1.0001 10s; do
	mkdir "$WORK/b"
	MUTEXSTAT_INTERVAL=$bad MUTEXSTAT_FORMAT=pprof MUTEXSTAT_OUTPUT="$WORK/b/r" \
		run_with "$WORK/out" "$WORK/err" "$SERVICE" 0.3 2
	expect_eq "MUTEXSTAT_INTERVAL=$bad: the service runs as ever" "$?" 0
	expect_eq "MUTEXSTAT_INTERVAL=$bad: one warning, and no interval" "$(cat "$WORK/err")" \
		"mutexstat: MUTEXSTAT_INTERVAL='$bad' is not 0 (off) or a number of seconds from 0.1 to 86400 (up to 3 decimals); using none (off)"
	expect_eq "MUTEXSTAT_INTERVAL=$bad: the whole run's profile alone" "$(ls "$WORK/b")" "r.pb.gz"
	rm -rf "$WORK/b"
done
MUTEXSTAT_INTERVAL=0.2 MUTEXSTAT_FORMAT=pprof MUTEXSTAT_OUTPUT="$WORK/no/such/dir/r" \
	run_with "$WORK/out" "$WORK/err" "$SERVICE" 1 2
expect_eq "an output directory that does not exist: the service runs as ever" "$?" 0
expect_eq "said for the first interval, and that the series stops" \
	"$(sed "s|$WORK|W|g" "$WORK/err")" \
	"mutexstat: cannot write MUTEXSTAT_OUTPUT 'W/no/such/dir/r.1.pb.gz' (ENOENT); interval 1's pprof file is lost
mutexstat: no more interval files: this one could not be written
mutexstat: cannot write MUTEXSTAT_OUTPUT 'W/no/such/dir/r.pb.gz' (ENOENT); the pprof report is lost"

# 0 is off, as MUTEXSTAT_WATCHDOG=0: no warning, no interval
mkdir "$WORK/z"
MUTEXSTAT_INTERVAL=0 MUTEXSTAT_FORMAT=pprof MUTEXSTAT_OUTPUT="$WORK/z/r" \
	run_with "$WORK/out" "$WORK/err" "$SERVICE" 0.3 2
expect_eq "MUTEXSTAT_INTERVAL=0: off, said nothing" "$?:$(cat "$WORK/err"):$(ls "$WORK/z")" "0::r.pb.gz"
rm -rf "$WORK/z"
mkdir "$WORK/z"
"$MS" --interval 0 --format pprof -o "$WORK/z/r" "$SERVICE" 0.3 2 >"$WORK/out" 2>"$WORK/err"
expect_eq "mutexstat --interval 0: off" "$?:$(ls "$WORK/z")" "0:r.pb.gz"
# the launcher checks --interval as the library does
for bad in -1 ten 1.0001 86401 0.05; do
	rc=0
	"$MS" --interval "$bad" "$SERVICE" 0.1 1 >"$WORK/out" 2>"$WORK/err" || rc=$?
	expect_eq "mutexstat --interval $bad: a usage error" "$rc/$(grep -c "^mutexstat: --interval '$bad' is not 0 (off) or a number of seconds from 0.1 to 86400" "$WORK/err")" "2/1"
done
mkdir "$WORK/l"
"$MS" --interval 0.5 --keep 1 --format pprof -o "$WORK/l/r" "$SERVICE" 1.2 2 >"$WORK/out" 2>"$WORK/err"
expect_eq "mutexstat --interval 0.5 --keep 1: the last interval and the whole run" \
	"$(cd "$WORK/l" && ls | grep -c '^r\.[0-9]*\.pb\.gz$') $(ls "$WORK/l" | grep -c '^r\.pb\.gz$')" "1 1"

finish
