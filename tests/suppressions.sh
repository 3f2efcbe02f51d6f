# tests/suppressions.sh - MUTEXSTAT_SUPPRESSIONS and the launcher's
# --suppressions: a suppressed finding is not printed and does not count
# for MUTEXSTAT_EXIT_CODE; the report says what each rule left out and
# which matched nothing; a kept finding says the rule that would leave it
# out; a bad file (a bad line, missing, a directory) gets one message and
# applies no rule, and the program runs on; in a run, only the first
# process says so on its stderr, and the run's summary leaves suppressed
# findings out too.  The JSON report lists a suppressed finding with the
# rule that left it out, and mutexstat compare does not count it.

. "$top_srcdir/tests/lib.sh"

MS="$top_builddir/scripts/mutexstat"
ABBA="$top_builddir/examples/deadlock_abba"

# run_abba NAME [env...]: deadlock_abba under the launcher, exit code 4 on
# a finding; status in $rc, stderr in $WORK/NAME.err.
run_abba() {
	name=$1
	shift
	rc=0
	env MUTEXSTAT_EXIT_CODE=4 "$@" "$MS" "$ABBA" >/dev/null 2>"$WORK/$name.err" || rc=$?
}

# ---- no rules -------------------------------------------------------------

run_abba none
expect_eq "no rules: the finding fails the run" "$rc" 4
expect_grep "no rules: the finding is printed" \
	"^POTENTIAL DEADLOCK: 2 mutexes taken in a cycle of orders$" "$WORK/none.err"
expect_grep "no rules: with the rule that would leave it out" \
	"^  to suppress it: potential-deadlock:\\^transfer\\$ \(a line of MUTEXSTAT_SUPPRESSIONS\)$" \
	"$WORK/none.err"
expect_no_grep "no rules: no suppressions section" "^suppressions from" "$WORK/none.err"

# ---- rules that match -------------------------------------------------------

cat >"$WORK/rules" <<'EOF'
# known: the bank's transfer, in code we cannot change
potential-deadlock:^transfer$

stall:never_called
EOF
run_abba rules MUTEXSTAT_SUPPRESSIONS="$WORK/rules"
expect_eq "suppressed: the run passes" "$rc" 0
expect_no_grep "suppressed: not printed" "POTENTIAL DEADLOCK" "$WORK/rules.err"
expect_grep "suppressed: the report counts it" \
	"^suppressions from $WORK/rules: 1 finding left out$" "$WORK/rules.err"
expect_grep "suppressed: by its rule, with its line" \
	"^  line 2    potential-deadlock:\^transfer\\$  1$" "$WORK/rules.err"
expect_grep "suppressed: the rule that matched nothing" \
	"^  line 4    stall:never_called  matched nothing$" "$WORK/rules.err"
expect_eq "suppressed: no warning at start-up" "$(grep -c 'no rule of it applies' "$WORK/rules.err")" 0
# the launcher's option, with a relative path, from another directory
(cd "$WORK" && env MUTEXSTAT_EXIT_CODE=4 "$MS" --suppressions rules "$ABBA" \
	>/dev/null 2>"$WORK/opt.err") && rc=0 || rc=$?
expect_eq "--suppressions: the run passes" "$rc" 0
expect_grep "--suppressions: an absolute path for the library" \
	"^suppressions from $WORK/rules: 1 finding left out$" "$WORK/opt.err"
# a file that is not there: refused before the program runs, as other
# bad options are (the program ran without rules, status 0)
rc=0
"$MS" --suppressions "$WORK/no-such-rules" "$ABBA" >"$WORK/missing.out" 2>"$WORK/missing.err" || rc=$?
expect_eq "--suppressions, no such file: status 2, the message, not run" \
	"$rc $(cat "$WORK/missing.err") $(wc -c <"$WORK/missing.out")" \
	"2 mutexstat: --suppressions '$WORK/no-such-rules': no such file 0"

# a rule of another kind, or on prose, leaves it in
printf 'self-deadlock:transfer\npotential-deadlock:cycle of orders\n' >"$WORK/other"
run_abba other MUTEXSTAT_SUPPRESSIONS="$WORK/other"
expect_eq "other rules: the finding still fails the run" "$rc" 4
expect_grep "other rules: printed" "^POTENTIAL DEADLOCK: " "$WORK/other.err"

# ---- bad files ----------------------------------------------------------------

# bad NAME FILE MESSAGE: one message, no rule applied, the program unchanged
bad() {
	run_abba "$1" MUTEXSTAT_SUPPRESSIONS="$2"
	expect_eq "$1: the finding still fails the run" "$rc" 4
	expect_eq "$1: one message at start-up" \
		"$(grep -cE "^mutexstat: MUTEXSTAT_SUPPRESSIONS '$2': $3; no rule of it applies$" \
		    "$WORK/$1.err")" 1
	expect_eq "$1: the report says none applied, and why on the next line" \
		"$(grep -A1 "^suppressions from $2: none applied$" "$WORK/$1.err" | sed -n 2p)" \
		"  $3"
	expect_grep "$1: the program ran" "^POTENTIAL DEADLOCK: " "$WORK/$1.err"
}
printf 'potential-deadlock:^transfer$\ndeadlok:foo\n' >"$WORK/typo"
bad typo "$WORK/typo" "line 2: not a kind of finding: 'deadlok'"
kinds="  (the kinds: deadlock, potential-deadlock, guarded-inversion, self-deadlock, held-at-exit, owner-died, misuse, stall)"
expect_eq "typo: the kinds follow the message" \
	"$(grep -A1 "^mutexstat: MUTEXSTAT_SUPPRESSIONS " "$WORK/typo.err" | sed -n 2p)" "$kinds"
expect_eq "typo: and the reason in the report" \
	"$(grep -A2 "^suppressions from $WORK/typo: none applied$" "$WORK/typo.err" | sed -n 3p)" "$kinds"
bad missing "$WORK/no-such-rules" "cannot open it: ENOENT"
mkdir "$WORK/rulesdir"
bad directory "$WORK/rulesdir" "it is a directory"
awk 'BEGIN { printf "stall:"; for (i = 0; i < 5000; i++) printf "x"; print "" }' >"$WORK/huge"
bad huge "$WORK/huge" "line 1: longer than 4096 bytes"

# ---- the JSON report, and mutexstat compare -----------------------------------------
# json NAME PROGRAM [env...]: its text and JSON to $WORK/NAME.{txt,json}
json() {
	name=$1 prog=$2
	shift 2
	env "$@" MUTEXSTAT_FORMAT=text,json MUTEXSTAT_OUTPUT="$WORK/$name" LD_PRELOAD="$MS_PRELOAD" \
		"$prog" >/dev/null 2>&1
}
json j-none "$ABBA"
json j-rules "$ABBA" MUTEXSTAT_SUPPRESSIONS="$WORK/rules"
MUTEXSTAT_FORMAT=json MUTEXSTAT_OUTPUT="$WORK/j-ordered" LD_PRELOAD="$MS_PRELOAD" \
	"$ABBA" ordered >/dev/null 2>&1
expect_eq "JSON: a finding no rule matches has suppressed_by null" \
	"$(jq -c '[.findings[] | [.kind, .suppressed_by]]' "$WORK/j-none.json")" \
	'[["potential-deadlock",null]]'
expect_eq "JSON: a suppressed finding is listed, with its rule" \
	"$(jq -c '[.findings[] | [.kind, .suppressed_by]]' "$WORK/j-rules.json")" \
	'[["potential-deadlock","potential-deadlock:^transfer$"]]'
rc=0
"$MS" compare "$WORK/j-ordered.json" "$WORK/j-rules.json" >"$WORK/cmp" 2>&1 || rc=$?
expect_eq "compare: a new finding that is suppressed is not new (status 0)" \
	"$rc/$(sed -n 2p "$WORK/cmp")" "0/new findings: 0"
rc=0
"$MS" compare "$WORK/j-ordered.json" "$WORK/j-none.json" >"$WORK/cmp" 2>&1 || rc=$?
expect_eq "compare: without the rule it is (status 1)" "$rc/$(sed -n 2p "$WORK/cmp")" "1/new findings: 1"
# the JSON says what the text left out: one rule for the held mutex of
# examples/misuse, one for all of its misuse
printf 'held-at-exit:take_and_keep\n' >"$WORK/held"
printf 'misuse:main\n' >"$WORK/mis"
# (the JSON's kind of it, copied into a rule, names it as well)
printf 'held-at-thread-exit:take_and_keep\n' >"$WORK/held_json"
# (and a variable, <held_elsewhere>, for either kind)
printf 'held-at-exit:^held_elsewhere$\nmisuse:^held_elsewhere$\n' >"$WORK/held_var"
for r in held held_json mis held_var; do
	json "j-$r" "$top_builddir/examples/misuse" MUTEXSTAT_SUPPRESSIONS="$WORK/$r"
	left=$(sed -n "s|^suppressions from $WORK/$r: \([0-9]*\) findings\{0,1\} left out$|\1|p" "$WORK/j-$r.txt")
	[ -n "$left" ] && [ "$left" -gt 0 ] || fail "$r: the text report left nothing out"
	expect_eq "$r: the JSON marks as many findings as the text left out ($left)" \
		"$(jq '[.findings[] | select(.suppressed_by != null)] | length' "$WORK/j-$r.json")" "$left"
	expect_eq "$r: and the text prints the others" \
		"$(jq '[.findings[] | select(.suppressed_by == null and (.kind == "misuse" or .kind == "held-at-thread-exit"))] | length' "$WORK/j-$r.json")" \
		"$(grep -cE '^(MISUSE|HELD AT THREAD EXIT): ' "$WORK/j-$r.txt")"
done
# the JSON's name of the kind stays as written, in the counts and the JSON
expect_grep "held_json: the counts quote the rule as written" \
	"^  line 1    held-at-thread-exit:take_and_keep  [1-9]" "$WORK/j-held_json.txt"
expect_eq "held_json: so does the JSON's suppressed_by" \
	"$(jq -r '[.findings[] | .suppressed_by // empty] | unique | join(" ")' "$WORK/j-held_json.json")" \
	"held-at-thread-exit:take_and_keep"

# ---- a thread's name that holds a newline -------------------------------------
# The program names its threads (pthread_setname_np) with any bytes.  A
# name printed raw split the finding at a line of its own, "DEADLOCK: x",
# which the rules then took for a finding: the right rule stopped working
# and the wrong one passed the run.  Names are printed with '?' for such
# bytes, as mutex names are.

CC=${CC:-cc}
cat >"$WORK/named.c" <<'EOF2'
#define _GNU_SOURCE
#include <pthread.h>
static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;
static void *backwards(void *arg)
{
	pthread_setname_np(pthread_self(), "w\nDEADLOCK: x\xff");
	pthread_mutex_lock(&b);
	pthread_mutex_lock(&a);
	pthread_mutex_unlock(&a);
	pthread_mutex_unlock(&b);
	return arg;
}
int main(void)
{
	pthread_t t;
	pthread_mutex_lock(&a);
	pthread_mutex_lock(&b);
	pthread_mutex_unlock(&b);
	pthread_mutex_unlock(&a);
	pthread_create(&t, NULL, backwards, NULL);
	pthread_join(t, NULL);
	return 0;
}
EOF2
# shellcheck disable=SC2086 # SAN_FLAGS is a list of flags
"$CC" -g $SAN_FLAGS -pthread -o "$WORK/named" "$WORK/named.c" || fail "named.c does not build"
printf 'potential-deadlock:^backwards$\n' >"$WORK/named.right"
printf 'deadlock:^backwards$\n' >"$WORK/named.wrong"
for rules in none right wrong; do
	rc=0
	if [ $rules = none ]; then
		env MUTEXSTAT_EXIT_CODE=4 LD_PRELOAD="$MS_PRELOAD" "$WORK/named" 2>"$WORK/named.$rules.err" || rc=$?
	else
		env MUTEXSTAT_EXIT_CODE=4 MUTEXSTAT_SUPPRESSIONS="$WORK/named.$rules" LD_PRELOAD="$MS_PRELOAD" \
			"$WORK/named" 2>"$WORK/named.$rules.err" || rc=$?
	fi
	eval "rc_$rules=$rc"
done
expect_grep "a thread named with a newline: its name on the finding's line, as '?'" \
	'^  thread [0-9]+ "w\?DEADLOCK: x\?" took B, then A:$' "$WORK/named.none.err"
expect_no_grep "a thread named with a newline: no heading made of its name" \
	"^DEADLOCK: x" "$WORK/named.none.err"
expect_eq "a thread named with a newline: the finding fails the run" "$rc_none" 4
expect_eq "a thread named with a newline: its rule leaves it out" "$rc_right" 0
expect_eq "a thread named with a newline: a rule for another kind does not" "$rc_wrong" 4

# ---- a function the compiler copied (-O2: take_two.constprop.0) -----------
# The rule suggested named "take_two.constprop.0", which the same code
# built another way (-O0, another compiler) does not have.  Names are
# matched, and suggested, without such suffixes.
cat >"$WORK/clone.c" <<'EOF2'
#include <pthread.h>
static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;
static volatile long rows;
__attribute__((noinline)) static void take_two(pthread_mutex_t *x, pthread_mutex_t *y, int k)
{
	pthread_mutex_lock(x);
	pthread_mutex_lock(y);
	rows += k;
	pthread_mutex_unlock(y);
	pthread_mutex_unlock(x);
}
int main(void)
{
	take_two(&a, &b, 1);
	take_two(&b, &a, 1);
	return 0;
}
EOF2
for opt in O2 O0; do
	# shellcheck disable=SC2086 # SAN_FLAGS is a list of flags
	"$CC" -$opt -g $SAN_FLAGS -pthread -o "$WORK/clone.$opt" "$WORK/clone.c" ||
		fail "clone.c does not build at -$opt"
	rc=0
	env MUTEXSTAT_EXIT_CODE=4 LD_PRELOAD="$MS_PRELOAD" "$WORK/clone.$opt" 2>"$WORK/clone.$opt.err" || rc=$?
	expect_eq "-$opt: the inversion fails the run" "$rc" 4
	expect_grep "-$opt: the rule names the function, without what the compiler added" \
		"^  to suppress it: potential-deadlock:\^take_two\\$ \(a line of MUTEXSTAT_SUPPRESSIONS\)$" \
		"$WORK/clone.$opt.err"
	printf 'potential-deadlock:^take_two$\n' >"$WORK/clone.rules"
	rc=0
	env MUTEXSTAT_EXIT_CODE=4 MUTEXSTAT_SUPPRESSIONS="$WORK/clone.rules" LD_PRELOAD="$MS_PRELOAD" \
		"$WORK/clone.$opt" 2>/dev/null || rc=$?
	expect_eq "-$opt: one rule leaves it out in either build" "$rc" 0
done

# ---- a lock's variable ----------------------------------------------------------
# The report names a static lock by its variable, gdb style: 0x55..
# <cache_lock>, <accounts+0x38>.  A rule written from it matched nothing:
# only the lock's name in quotes was matched, and not even that after a
# variable (the text's "<accounts+0x38> "ledger"": the JSON matched it, the
# text did not).  A rule matches the variable as printed, without its angle
# brackets, in the text and the JSON alike.
cat >"$WORK/vars.c" <<'EOF2'
#include <mutexstat.h>
#pragma weak mutexstat_name
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static struct account {
	long balance;
	pthread_mutex_t mu;
} accounts[2] = { { 0, PTHREAD_MUTEX_INITIALIZER }, { 0, PTHREAD_MUTEX_INITIALIZER } };
__attribute__((noinline)) static void take(pthread_mutex_t *x, pthread_mutex_t *y)
{
	pthread_mutex_lock(x);
	pthread_mutex_lock(y);
	accounts[0].balance++;
	pthread_mutex_unlock(y);
	pthread_mutex_unlock(x);
}
int main(int argc, char **argv)
{
	(void)argv;
	if (mutexstat_name)
		mutexstat_name(&accounts[1].mu, "ledger");
	take(&cache_lock, &accounts[1].mu);
	take(&accounts[1].mu, &cache_lock);
	if (argc > 1) { /* another pair, through the same function */
		take(&queue_lock, &accounts[0].mu);
		take(&accounts[0].mu, &queue_lock);
	}
	return 0;
}
EOF2
# shellcheck disable=SC2086 # SAN_FLAGS is a list of flags
"$CC" -g $SAN_FLAGS -I"$top_srcdir/include" -pthread -o "$WORK/vars" "$WORK/vars.c" ||
	fail "vars.c does not build"
# vars NAME RULE [args]: the program with RULE, text and JSON to
# $WORK/vars.NAME.{txt,json}, status in $rc
vars() {
	name=$1 rule=$2
	shift 2
	printf '%s\n' "$rule" >"$WORK/vars.$name.rules"
	rc=0
	env MUTEXSTAT_EXIT_CODE=4 MUTEXSTAT_SUPPRESSIONS="$WORK/vars.$name.rules" \
		MUTEXSTAT_FORMAT=text,json MUTEXSTAT_OUTPUT="$WORK/vars.$name" \
		LD_PRELOAD="$MS_PRELOAD" "$WORK/vars" "$@" >/dev/null 2>&1 || rc=$?
}
vars none '# none'
expect_grep "variables: the finding names them" \
	'^  [AB]   mutex 0x[0-9a-f]+ <cache_lock>, first locked at take' "$WORK/vars.none.txt"
expect_grep "variables: a lock in an array, with its name" \
	'^  [AB]   mutex 0x[0-9a-f]+ <accounts\+0x[0-9a-f]+> "ledger", first locked at take' \
	"$WORK/vars.none.txt"
expect_eq "variables: without a rule the inversion fails the run" "$rc" 4
for rule in 'potential-deadlock:^cache_lock$' 'potential-deadlock:^accounts' \
	'potential-deadlock:^ledger$'; do
	vars left "$rule"
	expect_eq "variables: $rule leaves the finding out (status, text, JSON)" \
		"$rc/$(grep -c '^POTENTIAL DEADLOCK' "$WORK/vars.left.txt")/$(sed -n \
			's/^suppressions from .*: \([0-9]*\) findings\{0,1\} left out$/\1/p' \
			"$WORK/vars.left.txt")/$(jq -r '[.findings[].suppressed_by] | join(" ")' \
			"$WORK/vars.left.json")" \
		"0/0/1/$rule"
done
# a prefix of a longer name, anchored at both ends, is no match
for rule in 'potential-deadlock:^cache$' 'potential-deadlock:^accounts$'; do
	vars kept "$rule"
	expect_eq "variables: $rule leaves it in (status, text, JSON)" \
		"$rc/$(grep -c '^POTENTIAL DEADLOCK' "$WORK/vars.kept.txt")/$(grep -c \
			'  matched nothing$' "$WORK/vars.kept.txt")/$(jq -c \
			'[.findings[].suppressed_by]' "$WORK/vars.kept.json")" \
		"4/1/1/[null]"
done
# Two inversions through one function, in main: no function is either's
# alone, a variable of each is, and the rule suggested names it.
vars two '# none' two
sed -n 's/^  to suppress it: \(.*\) (a line of MUTEXSTAT_SUPPRESSIONS)$/\1/p' \
	"$WORK/vars.two.txt" | sort -u >"$WORK/vars.two.suggested"
expect_eq "variables: each of two inversions through one function gets a rule of its own" \
	"$(grep -cE '^potential-deadlock:\^(cache_lock|queue_lock|accounts\+0x[0-9a-f]+)\$$' \
		"$WORK/vars.two.suggested")/$(grep -c 'here too' "$WORK/vars.two.txt")" "2/0"
for rule in $(cat "$WORK/vars.two.suggested"); do
	vars one "$rule" two
	expect_eq "variables: $rule leaves out its finding and not the other" \
		"$rc/$(grep -c '^POTENTIAL DEADLOCK' "$WORK/vars.one.txt")/$(jq -r \
			'[.findings[] | .suppressed_by // "null"] | sort | join(" ")' \
			"$WORK/vars.one.json")" \
		"4/1/null $rule"
done

# ---- in a run -------------------------------------------------------------------

cat >"$WORK/suite.sh" <<EOF
"$ABBA" >/dev/null 2>"$WORK/child.err"
"$ABBA" >/dev/null 2>>"$WORK/child.err"
EOF
rc=0
TMPDIR=$WORK MUTEXSTAT_EXIT_CODE=4 "$MS" --suppressions "$WORK/typo" bash "$WORK/suite.sh" \
	>/dev/null 2>"$WORK/run.err" || rc=$?
expect_eq "run, bad file: the finding fails the run" "$rc" 4
expect_eq "run, bad file: nothing in the children's stderr" "$(cat "$WORK/child.err")" ""
expect_eq "run, bad file: said once, by the first process" \
	"$(grep -c 'no rule of it applies$' "$WORK/run.err")" 1
rc=0
TMPDIR=$WORK MUTEXSTAT_EXIT_CODE=4 "$MS" --suppressions "$WORK/rules" bash "$WORK/suite.sh" \
	>/dev/null 2>"$WORK/run.err" || rc=$?
expect_eq "run, rules: the run passes" "$rc" 0
expect_grep "run, rules: a summary" "^mutexstat: the run of bash .*: 3 processes \\(2 took locks\\); " \
	"$WORK/run.err"
expect_grep "run, rules: without the suppressed finding" "^no findings$" "$WORK/run.err"

finish
