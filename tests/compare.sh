# tests/compare.sh - mutexstat compare OLD.json NEW.json: findings new and
# gone, matched by the code they name and not by addresses or pids (two
# runs of one program compare equal), the call sites whose wait or
# contention changed most, with ratios; exit status 1 on new findings, for
# CI; JSON reports of processes and runs' summaries, where two findings of
# one heading are told apart by the functions they name; bad input
# (missing, a directory, not JSON, not ours, another version, not two
# files) gets one message and 2.

. "$top_srcdir/tests/lib.sh"

MS="$top_builddir/scripts/mutexstat"
ABBA="$top_builddir/examples/deadlock_abba"
CONTENTION="$top_builddir/examples/contention"

command -v jq >/dev/null 2>&1 || { echo "SKIP: jq is not installed"; exit 77; }

# json NAME PROGRAM: its JSON report in $WORK/NAME.json
json() {
	env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_FORMAT=json MUTEXSTAT_OUTPUT="$WORK/$1" "$2" \
		>/dev/null 2>&1
}
json abba1 "$ABBA"
json abba2 "$ABBA"
json cont "$CONTENTION"

# cmp_run OLD NEW: status in $rc, output in $WORK/cmp
cmp_run() {
	rc=0
	"$MS" compare "$1" "$2" >"$WORK/cmp" 2>"$WORK/cmp.err" || rc=$?
}

cmp_run "$WORK/abba1.json" "$WORK/abba2.json"
expect_eq "same program, two runs: status" "$rc" 0
expect_grep "same program: the pids named" \
	"^mutexstat compare: deadlock_abba \(pid [0-9]+\) -> deadlock_abba \(pid [0-9]+\)$" "$WORK/cmp"
expect_grep "same program: no new finding (other addresses, same code)" "^new findings: 0$" "$WORK/cmp"
expect_grep "same program: none gone" "^gone findings: 0$" "$WORK/cmp"

# the same program built in another directory (a CI job's checkout): its
# files' paths differ, its code does not -- no finding new or gone
jq '(.. | objects | select(has("file") and (.file | type) == "string") | .file) |=
	"/elsewhere/build/" + sub("^.*/"; "")' "$WORK/abba2.json" >"$WORK/moved.json"
cmp_run "$WORK/abba1.json" "$WORK/moved.json"
expect_eq "built elsewhere: no finding new or gone" \
	"$rc $(grep -E '^(new|gone) findings' "$WORK/cmp" | tr '\n' ' ')" \
	"0 new findings: 0 gone findings: 0 "
# two of a kind only: a run's summary or an interval against a process's
# report read as findings new and gone
echo '{"version": 1, "sites": [], "findings": []}' >"$WORK/summary.json"
cmp_run "$WORK/summary.json" "$WORK/abba1.json"
expect_eq "a summary against a report: refused, said why" "$rc $(cat "$WORK/cmp.err")" \
	"2 mutexstat: compare: $WORK/summary.json is a run's summary and $WORK/abba1.json a process's report: compare two of a kind"
: >"$WORK/empty.json"
cmp_run "$WORK/empty.json" "$WORK/abba1.json"
expect_eq "an empty file: said so" "$rc $(cat "$WORK/cmp.err")" \
	"2 mutexstat: compare: $WORK/empty.json: empty"
cat "$WORK/abba1.json" "$WORK/abba1.json" >"$WORK/two.json"
cmp_run "$WORK/two.json" "$WORK/abba1.json"
expect_eq "two reports in one file: said so" "$rc $(cat "$WORK/cmp.err")" \
	"2 mutexstat: compare: $WORK/two.json: holds 2 JSON values; compare reads one report"

# a stripped program's sites: module+offset, the offset in hexadecimal as
# the reports write it (JSON has it in decimal), each site its own row
jq '.mutexes |= [.[] | .first_locked_caller |= {module: "prog", offset: (if .line == 33 then 46631 else 46822 end)} | .first_locked_site = .first_locked_caller | .wait_total_ns = 1000 | .contended = 1]' \
	"$WORK/cont.json" >"$WORK/stripped.json"
jq '.mutexes |= [.[] | .wait_total_ns *= 2]' "$WORK/stripped.json" >"$WORK/stripped2.json"
cmp_run "$WORK/stripped.json" "$WORK/stripped2.json"
expect_eq "stripped: status" "$rc" 0
expect_eq "stripped: one row a site, named as the report names it" \
	"$(grep -o 'prog+0x[0-9a-f]*$' "$WORK/cmp" | sort | tr '\n' ' ')" \
	"$(jq -r '.mutexes[].first_locked_caller.offset' "$WORK/stripped.json" | sort -u |
	   while read -r o; do printf 'prog+0x%x ' "$o"; done)"

cmp_run "$WORK/cont.json" "$WORK/abba1.json"
expect_eq "a new finding: status 1" "$rc" 1
expect_grep "a new finding: counted" "^new findings: 1$" "$WORK/cmp"
# (one frame a line: on one, 190 to 240 columns)
expect_eq "a new finding: by the code it names, one frame a line" \
	"$(sed -n '/^new findings/,/^gone findings/p' "$WORK/cmp" | sed 's/([^)]*examples\//(/')" \
	"new findings: 1
  potential-deadlock: alice_pays_bob (deadlock_abba.c:$(grep -n 'transfer(&alice, &bob' "$top_srcdir/examples/deadlock_abba.c" | head -1 | cut -d: -f1));
      bob_pays_alice (deadlock_abba.c:$(grep -n 'transfer(&bob, &alice' "$top_srcdir/examples/deadlock_abba.c" | head -1 | cut -d: -f1));
      transfer (deadlock_abba.c:$(grep -n LOCK_FROM "$top_srcdir/examples/deadlock_abba.c" | cut -d: -f1));
      transfer (deadlock_abba.c:$(grep -n LOCK_TO "$top_srcdir/examples/deadlock_abba.c" | cut -d: -f1))
gone findings: 0"
wait_ns=$(jq '[.mutexes[] | select(.first_locked_caller.function == "worker") | .wait_total_ns] | add' \
	"$WORK/cont.json")
contended=$(jq '[.mutexes[] | select(.first_locked_caller.function == "worker") | .contended] | add' \
	"$WORK/cont.json")
expect_grep "a site gone: its wait and contended count, and the ratio" \
	"^ +[0-9.]+ [nµm]?s +0 ns +gone +$contended +0 +gone  worker \(contention.c:[0-9]+\)$" \
	"$WORK/cmp"

cmp_run "$WORK/abba1.json" "$WORK/cont.json"
expect_eq "a finding gone: status 0" "$rc" 0
expect_grep "a finding gone: listed" "^gone findings: 1$" "$WORK/cmp"
expect_grep "a site new" "^ +0 ns +[0-9.]+ [nµm]?s +new +0 +$contended +new  worker " "$WORK/cmp"
[ "$wait_ns" -gt 0 ] && pass "the contention run waited ($wait_ns ns)" || fail "no wait in contention's report"

# ---- locks taken through a wrapper, alive and ended ---------------------------
# The text report names both by the wrapper's caller; so must compare,
# which keyed a live one by the wrapper's own line: the same code read
# "gone" at use_a and "new" at lk.
WRAPPED="$top_builddir/tests/wrapped_sites"
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_FORMAT=json MUTEXSTAT_OUTPUT="$WORK/ended" "$WRAPPED" ended \
	>/dev/null 2>&1
json alive "$WRAPPED"
expect_eq "wrapped, alive: each mutex's site is its wrapper's caller, through_wrapper" \
	"$(jq -r '[.mutexes[] | "\(.first_locked_site.function) \(.through_wrapper)"] | sort | join(",")' \
		"$WORK/alive.json")" "use_a true,use_b true"
expect_eq "wrapped, alive: first_locked_caller is the wrapper's line" \
	"$(jq -r '[.mutexes[] | .first_locked_caller.function] | unique | join(",")' "$WORK/alive.json")" "lk"
cmp_run "$WORK/ended.json" "$WORK/alive.json"
expect_eq "wrapped, ended -> alive: status" "$rc" 0
expect_no_grep "wrapped, ended -> alive: no site new or gone" ' (new|gone) +[0-9]+ +[0-9]+ +(new|gone) ' "$WORK/cmp"
expect_grep "wrapped, ended -> alive: use_a's site on both sides" \
	'^ +[0-9.]+ [nµm]?s +[0-9.]+ [nµm]?s +[0-9.]+x +[0-9]+ +[0-9]+ +[0-9.]+x +use_a [(]wrapped_sites[.]c:[0-9]+[)]$' \
	"$WORK/cmp"

# ... and a std::mutex of a program built with -O0, whose lock is a frame of
# libstdc++'s: live, it was filed past it, at use(); ended, at libstdc++'s
# line, as its site line is
cat >"$WORK/o0.cpp" <<'EOF'
#include <mutex>
#include <thread>
#include <unistd.h>
std::mutex *m;
void use()
{
	for (int i = 0; i < 100; i++) {
		std::lock_guard<std::mutex> g(*m);
		usleep(50);
	}
}
int main(int argc, char **argv)
{
	(void)argv;
	m = new std::mutex;
	std::thread a(use), b(use), c(use);
	a.join(); b.join(); c.join();
	if (argc > 1) {
		pthread_mutex_destroy(m->native_handle());
		delete m;
	}
	return 0;
}
EOF
if ${CXX:-c++} -O0 -g -pthread -o "$WORK/o0" "$WORK/o0.cpp" 2>"$WORK/o0.err"; then
	env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_FORMAT=json MUTEXSTAT_OUTPUT="$WORK/o0_ended" "$WORK/o0" ended \
		>/dev/null 2>&1
	json o0_alive "$WORK/o0"
	cmp_run "$WORK/o0_ended.json" "$WORK/o0_alive.json"
	expect_no_grep "-O0 std::mutex, ended -> alive: no site new or gone" \
		' (new|gone) +[0-9]+ +[0-9]+ +(new|gone) ' "$WORK/cmp"
else
	fail "cannot compile a C++ program with ${CXX:-c++}"
	sed 's/^/  | /' "$WORK/o0.err" >&2
fi

# ---- kinds of lock left out on one side (MUTEXSTAT_TRACK) ----------------------
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_TRACK=rwlock MUTEXSTAT_FORMAT=json \
	MUTEXSTAT_OUTPUT="$WORK/rwonly" "$CONTENTION" >/dev/null 2>&1
cmp_run "$WORK/rwonly.json" "$WORK/cont.json"
expect_grep "TRACK on one side: a note says what it left out" \
	"^note: not the same kinds of lock recorded \(MUTEXSTAT_TRACK\): the old one left out mutex, spin, the new one none\$" \
	"$WORK/cmp"
cmp_run "$WORK/cont.json" "$WORK/cont.json"
expect_no_grep "the same kinds on both sides: no note" '^note:' "$WORK/cmp"

# ---- runs' summaries ----------------------------------------------------------

cat >"$WORK/suite.sh" <<EOF
"$ABBA" >/dev/null
EOF
cat >"$WORK/suite2.sh" <<EOF
"$CONTENTION" >/dev/null
EOF
TMPDIR=$WORK "$MS" --run-dir "$WORK/run1" bash "$WORK/suite.sh" 2>/dev/null
TMPDIR=$WORK "$MS" --run-dir "$WORK/run2" bash "$WORK/suite2.sh" 2>/dev/null
cmp_run "$WORK/run2/summary.json" "$WORK/run1/summary.json"
expect_eq "summaries: a new finding, status 1" "$rc" 1
expect_grep "summaries: the heading, numbers aside, and the code it names" \
	"^  POTENTIAL DEADLOCK: N mutexes taken in a cycle of orders \(code: alice_pays_bob, bob_pays_alice, transfer\)$" \
	"$WORK/cmp"

# two inversions of two mutexes each, in two programs: one heading, two
# findings, told apart by the functions they name -- in the summary, and
# for compare, which sees the second one come
cat >"$WORK/suite3.sh" <<EOF
"$ABBA" >/dev/null
"$top_builddir/tests/deadlocks" static_abba >/dev/null
EOF
TMPDIR=$WORK "$MS" --run-dir "$WORK/run3" bash "$WORK/suite3.sh" 2>"$WORK/run3.err"
expect_eq "summary: two inversions of one heading are two findings" \
	"$(jq -r '[.findings[] | .code] | sort | join(" / ")' "$WORK/run3/summary.json")" \
	"alice_pays_bob, bob_pays_alice, transfer / static_abba_1, static_abba_2"
expect_eq "summary text: each finding with its code, then its processes" \
	"$(grep -A2 '^  POTENTIAL DEADLOCK' "$WORK/run3.err" | grep -c '^    code: .*$')" 2
expect_grep "summary text: the code line" "^    code: static_abba_1, static_abba_2$" "$WORK/run3.err"
cmp_run "$WORK/run1/summary.json" "$WORK/run3/summary.json"
expect_eq "summaries: the second inversion is new, status 1" "$rc" 1
expect_grep "summaries: one new finding" "^new findings: 1$" "$WORK/cmp"
expect_grep "summaries: the new one by its code" \
	"^  POTENTIAL DEADLOCK: N mutexes taken in a cycle of orders \(code: static_abba_1, static_abba_2\)$" \
	"$WORK/cmp"

# a summary's stripped sites stay apart: module+offset is all they have
jq '.sites = [{first_locked_at: "prog+0xb627", wait_ns: 10, contended: 1},
	{first_locked_at: "prog+0xb6e6", wait_ns: 20, contended: 2},
	{first_locked_at: "worker+0x21 (contention.c:33)", wait_ns: 30, contended: 3},
	{first_locked_at: "worker+0x2f (contention.c:33)", wait_ns: 40, contended: 4}]' \
	"$WORK/run2/summary.json" >"$WORK/sites1.json"
jq '.sites |= map(.wait_ns *= 3)' "$WORK/sites1.json" >"$WORK/sites2.json"
cmp_run "$WORK/sites1.json" "$WORK/sites2.json"
expect_eq "summaries: stripped sites apart, one line's two offsets together" \
	"$(sed -n 's/.*x  //p' "$WORK/cmp" | sort | tr '\n' ',')" \
	"prog+0xb627,prog+0xb6e6,worker (contention.c:33),"

# a long C++ name keeps its end, and the line its 120 columns
long="std::__detail::_Executor<__gnu_cxx::__normal_iterator<char const*, std::string>, true>::_M_dfs(long)"
jq --arg s "$long+0x10 (executor.tcc:291)" '.sites = [{first_locked_at: $s, wait_ns: 10, contended: 1}]' \
	"$WORK/run2/summary.json" >"$WORK/long1.json"
jq '.sites |= map(.wait_ns *= 3)' "$WORK/long1.json" >"$WORK/long2.json"
cmp_run "$WORK/long1.json" "$WORK/long2.json"
expect_eq "summaries: a long site's end, in 120 columns" \
	"$(awk '/first locked at$/ { getline; print length($0) <= 120, $NF }' "$WORK/cmp")" "1 (executor.tcc:291)"
# a function with a long argument list keeps its name: the list goes
# first ("..teThread::Writer*, unsigned char) (librocksdb.so.7.8)" named
# no function)
jq --arg s "rocksdb::WriteThread::SetState(rocksdb::WriteThread::Writer*, unsigned char) (librocksdb.so.7.8)" \
	'.sites = [{first_locked_at: $s, wait_ns: 10, contended: 1}]' "$WORK/run2/summary.json" >"$WORK/args1.json"
jq '.sites |= map(.wait_ns *= 3)' "$WORK/args1.json" >"$WORK/args2.json"
cmp_run "$WORK/args1.json" "$WORK/args2.json"
expect_eq "summaries: a long argument list goes before the name" \
	"$(awk '/first locked at$/ { getline; sub(/.*  /, ""); print }' "$WORK/cmp")" \
	"rocksdb::WriteThread::SetState(...) (librocksdb.so.7.8)"

# ---- bad input ------------------------------------------------------------------

# bad WHAT FILE MESSAGE
bad() {
	cmp_run "$2" "$WORK/abba1.json"
	expect_eq "$1: status 2" "$rc" 2
	expect_grep "$1: says why" "^mutexstat: compare: $3$" "$WORK/cmp.err"
	expect_eq "$1: nothing on stdout" "$(cat "$WORK/cmp")" ""
}
bad missing "$WORK/none.json" "$WORK/none.json: no such file"
mkdir "$WORK/dir.json"
bad directory "$WORK/dir.json" "$WORK/dir.json: is a directory"
echo 'not { json' >"$WORK/text.json"
bad "not JSON" "$WORK/text.json" "$WORK/text.json: not JSON \(jq: .*\)"
echo '{"name": "something else"}' >"$WORK/other.json"
bad "another tool's" "$WORK/other.json" "$WORK/other.json: not a mutexstat JSON report or run summary"
jq '.version = 2' "$WORK/abba1.json" >"$WORK/v2.json"
bad "another version" "$WORK/v2.json" \
	"$WORK/v2.json: a mutexstat JSON of version 2; this mutexstat reads version 1"

# not two files: how to call it, when they are .json files (and with none
# where no program named compare is installed)
for args in "$WORK/abba1.json" "$WORK/abba1.json $WORK/abba2.json $WORK/cont.json"; do
	rc=0
	# shellcheck disable=SC2086 # two and three words
	"$MS" compare $args >"$WORK/cmp" 2>"$WORK/err" || rc=$?
	expect_eq "$(echo $args | wc -w) .json files: status 2" "$rc" 2
	expect_grep "$(echo $args | wc -w) .json files: how to call it" \
		"^usage: mutexstat compare OLD.json NEW.json$" "$WORK/err"
done
# one report and a mistyped name: the comparison's message (it ran a
# program named compare, ImageMagick's where it is installed)
rc=0
"$MS" compare "$WORK/abba1.json" "$WORK/abba2.jsn" >"$WORK/cmp" 2>"$WORK/err" || rc=$?
expect_eq "a .json file and a mistyped one: status 2, what is wrong" "$rc $(cat "$WORK/err")" \
	"2 mutexstat: compare: $WORK/abba2.jsn: no such file"
# a program named compare still runs where no argument is a .json file
# (ImageMagick's compare a.png b.png diff.png)
if command -v compare >/dev/null 2>&1; then
	pass "images: a program named compare is installed here; not tried"
else
	rc=0
	"$MS" compare "$WORK/a.png" "$WORK/b.png" 2>"$WORK/err" || rc=$?
	expect_grep "images: the program compare is looked for" \
		"^mutexstat: compare: command not found$" "$WORK/err"
	rc=0
	"$MS" compare 2>"$WORK/err" || rc=$?
	expect_grep "no argument, no program compare: how to call it" \
		"^usage: mutexstat compare OLD.json NEW.json$" "$WORK/err"
fi

# ratios that keep two digits at every size, within their column
jq '.sites = [{first_locked_at: "small (s.c:1)", wait_ns: 63619, contended: 1},
	{first_locked_at: "big (b.c:1)", wait_ns: 1, contended: 1}]' \
	"$WORK/run2/summary.json" >"$WORK/ratio1.json"
jq '.sites = [{first_locked_at: "small (s.c:1)", wait_ns: 286, contended: 1},
	{first_locked_at: "big (b.c:1)", wait_ns: 81910, contended: 1}]' \
	"$WORK/run2/summary.json" >"$WORK/ratio2.json"
cmp_run "$WORK/ratio1.json" "$WORK/ratio2.json"
expect_grep "a wait 222 times shorter: <0.01x, not 0x" "^ +63.6 µs +286 ns +<0.01x .* small \(s.c:1\)$" "$WORK/cmp"
expect_grep "a wait 81910 times longer: whole, in its column" "^ +1 ns +81.9 µs +81910x .* big \(b.c:1\)$" "$WORK/cmp"
# durations as the reports write them (three digits, rounded), ratios with
# their two decimals (0.60x, not 0.6x)
jq '.sites = [{first_locked_at: "a (a.c:1)", wait_ns: 524350000, contended: 10},
	{first_locked_at: "c (c.c:1)", wait_ns: 999950, contended: 10}]' \
	"$WORK/run2/summary.json" >"$WORK/dur1.json"
jq '.sites = [{first_locked_at: "a (a.c:1)", wait_ns: 546130000, contended: 6},
	{first_locked_at: "c (c.c:1)", wait_ns: 4500000, contended: 14}]' \
	"$WORK/run2/summary.json" >"$WORK/dur2.json"
cmp_run "$WORK/dur1.json" "$WORK/dur2.json"
expect_grep "durations of three digits, rounded; a ratio's two decimals" \
	"^ +524 ms +546 ms +1.04x +10 +6 +0.60x  a \(a.c:1\)$" "$WORK/cmp"
expect_grep "999.95 µs rounds to 1.00 ms, as the reports write it" \
	"^ +1.00 ms +4.50 ms +4.50x +10 +14 +1.40x  c \(c.c:1\)$" "$WORK/cmp"

finish
