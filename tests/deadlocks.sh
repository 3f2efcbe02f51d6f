# deadlocks.sh - the deadlock findings, scenario by scenario (tests/deadlocks.c
# and examples/deadlock_*.c): each is reported when it should be -- its
# heading, how many mutexes, which ones, which threads took which edge and
# at which source lines (the lock calls' marker comments) -- and nothing is
# reported when nothing should be: a false report is a bug.  Also what
# MUTEXSTAT_EXIT_CODE makes of each kind of finding, and the two scenarios
# that really hang (one killed once it waits for ever, one under timeout).
. "$top_srcdir/tests/lib.sh"
B=$top_builddir
T=$B/tests/deadlocks
TSRC=$top_srcdir/tests/deadlocks.c
FINDING='^(DEADLOCK|POTENTIAL DEADLOCK|GUARDED INVERSION|SELF-DEADLOCK|HELD AT THREAD EXIT|MISUSE):'

# line_of SOURCE MARKER: the line of the call marked /* MARKER */ (or
# /* MARKER: ...), which must be there once.
line_of() {
	l=$(grep -n "/\* $2[ :]" "$1" | cut -d: -f1)
	case $l in
	*[!0-9]* | "") echo "deadlocks.sh: marker $2 in $1: '$l'" >&2; echo 0 ;;
	*) echo "$l" ;;
	esac
}

# run NAME PROGRAM ARGS...: under the library; stdout in $WORK/NAME.out,
# stderr in NAME.err, the report in NAME.report, the status in $rc.
run() {
	name=$1
	shift
	env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/$name.report" \
		"$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
	rc=$?
}

# count NAME HEADING: how many findings of NAME's report have this heading
count() { grep -c "^$2" "$WORK/$1.report"; }

# finding NAME HEADING-REGEX: the first finding whose heading matches, to
# the blank line that ends it, into $WORK/NAME.finding.
finding() {
	awk -v h="$2" 'on && /^$/ { exit } on { print } !on && $0 ~ h { on = 1; print }' \
		"$WORK/$1.report" >"$WORK/$1.finding"
}

# edges NAME SOURCE-FILE-NAME: one line per edge shown in NAME.finding,
#   TID FIRST-LINE SECOND-LINE CALLER
# the source lines of the first frames of the two stacks ("?" if not in
# that file) and the function of the second stack's second frame ("-").
edges() {
	awk -v src="$2" '
		function line_in(s) {
			if (!match(s, src ":[0-9]+")) return "?"
			return substr(s, RSTART + length(src) + 1, RLENGTH - length(src) - 1)
		}
		function flush() { if (n) print tid, first, second, caller; n = 0 }
		/^  thread [0-9]+ ("[^"]*" )?took / { flush(); tid = $2; next }
		/^    [A-Z][A-Z0-9]* +at  / {
			n++
			if (n == 1) first = line_in($0)
			else { second = line_in($0); caller = "-"; want_caller = 1 }
			next
		}
		want_caller && /^           +[^ ]/ {
			caller = $1; sub(/\+0x.*/, "", caller); want_caller = 0; next
		}
		{ want_caller = 0 }
		END { flush() }' "$WORK/$1.finding"
}

# Lists are compared sorted, on one line: "item; item; ...".
# oneline: stdin's lines so; sorted ITEMS...: the arguments so.
oneline() { sort | paste -sd';' - | sed 's/;/; /g'; }
sorted() { printf '%s\n' "$@" | oneline; }

# edges3 NAME SOURCE: the edges without the caller.
edges3() { edges "$1" "$2" | cut -d' ' -f1-3 | oneline; }

# cycle_mutexes NAME: the addresses of the mutexes listed in NAME.finding.
cycle_mutexes() {
	awk '/^  [A-Z][A-Z0-9]* +mutex 0x/ { a = $3; sub(/,$/, "", a); print a }' \
		"$WORK/$1.finding" | oneline
}

# cycles NAME: the mutexes of each cycle in NAME's report, each cycle as
# group prints it; group WORDS...: the words sorted, on one line.
group() { printf '%s\n' "$@" | sort | paste -sd' ' -; }
cycles() {
	awk '/^(POTENTIAL DEADLOCK|GUARDED INVERSION): / { n++ }
		/^  [A-Z][A-Z0-9]* +mutex 0x/ { a = $3; sub(/,$/, "", a); print n, a }' \
		"$WORK/$1.report" | sort -k1,1n -k2,2 |
	awk '$1 != n { if (NR > 1) print line; n = $1; line = $2; next }
		{ line = line " " $2 } END { if (NR) print line }' | oneline
}

# field NAME KEY WORD: the third word of the stdout line "KEY WORD ..." of a
# scenario ("mutex A 0x...", "thread t1 1234").
field() { awk -v k="$2" -v w="$3" '$1 == k && $2 == w { print $3; exit }' "$WORK/$1.out"; }

# nothing_found NAME WHAT: the run went as the program wanted, and the
# report has no finding at all.
nothing_found() {
	expect_eq "$2: exit status" "$rc" 0
	expect_eq "$2: nothing on stderr" "$(cat "$WORK/$1.err")" ""
	if grep -Eq "$FINDING" "$WORK/$1.report"; then
		fail "$2: a false report (the findings follow)"
		awk '/^Top [0-9]+ mutex/ { exit } NR > 3' "$WORK/$1.report" | sed 's/^/  | /' >&2
	else
		pass "$2: no finding"
	fi
}

# ---- examples/deadlock_abba: two threads, A then B and B then A, in turns --
SRC=$top_srcdir/examples/deadlock_abba.c
FROM=$(line_of "$SRC" LOCK_FROM)
TO=$(line_of "$SRC" LOCK_TO)
run abba "$B/examples/deadlock_abba"
expect_eq "abba: exit status" "$rc" 0
expect_grep "abba: and printed all it prints" '^balances: alice 95, bob 105$' "$WORK/abba.out"
alice=$(sed -n "s/^alice's lock \(0x[0-9a-f]*\), bob's lock.*/\1/p" "$WORK/abba.out")
bob=$(sed -n "s/^alice's lock .*, bob's lock \(0x[0-9a-f]*\)$/\1/p" "$WORK/abba.out")
t1=$(sed -n 's/^thread \([0-9]*\): alice pays bob .*/\1/p' "$WORK/abba.out")
t2=$(sed -n 's/^thread \([0-9]*\): bob pays alice .*/\1/p' "$WORK/abba.out")
expect_eq "abba: one POTENTIAL DEADLOCK" "$(count abba 'POTENTIAL DEADLOCK: ')" 1
expect_eq "abba: no other finding" "$(grep -Ec "$FINDING" "$WORK/abba.report")" 1
finding abba '^POTENTIAL DEADLOCK: '
expect_grep "abba: 2 mutexes, taken by two threads" \
	'^POTENTIAL DEADLOCK: 2 mutexes taken in a cycle of orders$' "$WORK/abba.finding"
expect_grep "abba: the order A -> B -> A" '^  order: A -> B -> A$' "$WORK/abba.finding"
expect_eq "abba: the two mutexes are the two accounts' locks" \
	"$(cycle_mutexes abba)" "$(sorted "$alice" "$bob")"
expect_grep "abba: alice's lock first locked at transfer's first lock" \
	"^  [AB]   mutex $alice <alice[+]0x18>, first locked at transfer\+0x[0-9a-f]+ \(.*deadlock_abba\.c:$FROM, deadlock_abba\)$" \
	"$WORK/abba.finding"
expect_grep "abba: bob's lock first locked at transfer's second lock" \
	"^  [AB]   mutex $bob <bob[+]0x18>, first locked at transfer\+0x[0-9a-f]+ \(.*deadlock_abba\.c:$TO, deadlock_abba\)$" \
	"$WORK/abba.finding"
expect_eq "abba: each thread's edge, first lock then second, at transfer's lines" \
	"$(edges3 abba deadlock_abba.c)" "$(sorted "$t1 $FROM $TO" "$t2 $FROM $TO")"
expect_eq "abba: the second lock's stack goes on into each thread's own function" \
	"$(edges abba deadlock_abba.c | awk '{ print $1, $4 }' | oneline)" \
	"$(sorted "$t1 alice_pays_bob" "$t2 bob_pays_alice")"
expect_eq "abba: no line of the finding over 120 columns" \
	"$(awk 'length($0) > 120' "$WORK/abba.finding" | wc -l)" 0

# MUTEXSTAT_EXIT_CODE: a potential deadlock fails the run, after the report
# and the program's own output.
run abba_exit MUTEXSTAT_EXIT_CODE=7 "$B/examples/deadlock_abba"
expect_eq "abba, MUTEXSTAT_EXIT_CODE=7: exit status 7" "$rc" 7
expect_grep "abba, MUTEXSTAT_EXIT_CODE=7: the program's output is all there" \
	'^balances: alice 95, bob 105$' "$WORK/abba_exit.out"
expect_grep "abba, MUTEXSTAT_EXIT_CODE=7: the report too" '^POTENTIAL DEADLOCK: 2 mutexes' \
	"$WORK/abba_exit.report"
expect_eq "abba, MUTEXSTAT_EXIT_CODE=7, report to a file: stderr is the program's alone" \
	"$(wc -c <"$WORK/abba_exit.err")" 0
# with the report on stderr, its last line says why the status changed
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_EXIT_CODE=7 "$B/examples/deadlock_abba" \
	>/dev/null 2>"$WORK/abba_exit_stderr.err"
rc=$?
expect_eq "abba, MUTEXSTAT_EXIT_CODE=7, report on stderr: its last line, status 7" \
	"$(tail -n 1 "$WORK/abba_exit_stderr.err") $rc" \
	"mutexstat: exit status 7, not the program's 0: a failing finding in its report (MUTEXSTAT_EXIT_CODE) 7"

# under the launcher with the report in a file: the status still said
# (it changed with nothing on stderr to say why)
"$top_builddir/scripts/mutexstat" -o "$WORK/abba_launched.txt" \
	"$B/examples/deadlock_abba" >/dev/null 2>"$WORK/abba_launched.err" </dev/null
rc=$?
MUTEXSTAT_EXIT_CODE=7 "$top_builddir/scripts/mutexstat" \
	-o "$WORK/abba_launched.txt" "$B/examples/deadlock_abba" >/dev/null 2>"$WORK/abba_launched7.err" </dev/null
rc7=$?
expect_eq "abba under the launcher, -o FILE: stderr empty without MUTEXSTAT_EXIT_CODE, status 0" \
	"$(wc -c <"$WORK/abba_launched.err") $rc" "0 0"
expect_eq "abba under the launcher, -o FILE, MUTEXSTAT_EXIT_CODE=7: one line says why, status 7" \
	"$(cat "$WORK/abba_launched7.err") $rc7" \
	"mutexstat: exit status 7, not the program's 0: a failing finding in its report (MUTEXSTAT_EXIT_CODE) 7"

# The fix, one order for both directions: nothing, and the status is the
# program's own.
run abba_ordered MUTEXSTAT_EXIT_CODE=7 "$B/examples/deadlock_abba" ordered
nothing_found abba_ordered "abba ordered, MUTEXSTAT_EXIT_CODE=7"

# ---- static initialisers; the second lock of thread 2 waits -----------------
run static "$T" static_abba
expect_eq "static_abba: exit status" "$rc" 0
expect_eq "static_abba: one POTENTIAL DEADLOCK, nothing else" \
	"$(count static 'POTENTIAL DEADLOCK: 2 mutexes taken in a cycle of orders$') $(grep -Ec "$FINDING" "$WORK/static.report")" "1 1"
finding static '^POTENTIAL DEADLOCK: '
expect_eq "static_abba: the two static mutexes" "$(cycle_mutexes static)" \
	"$(sorted "$(field static mutex A)" "$(field static mutex B)")"
expect_eq "static_abba: A then B in thread 1, B then (waiting for) A in thread 2" \
	"$(edges3 static deadlocks.c)" \
	"$(sorted "$(field static thread t1) $(line_of "$TSRC" STATIC_T1_A) $(line_of "$TSRC" STATIC_T1_B)" \
		"$(field static thread t2) $(line_of "$TSRC" STATIC_T2_B) $(line_of "$TSRC" STATIC_T2_A)")"

# ---- one thread, A then B, later B then A -----------------------------------
run one "$T" one_thread
tid=$(field one thread main)
expect_eq "one_thread: one POTENTIAL DEADLOCK" "$(count one 'POTENTIAL DEADLOCK: ')" 1
finding one '^POTENTIAL DEADLOCK: '
expect_grep "one_thread: says one thread took every edge" \
	'^POTENTIAL DEADLOCK: 2 mutexes taken in a cycle of orders \(all by one thread: two threads doing the same would deadlock\)$' \
	"$WORK/one.finding"
expect_eq "one_thread: both edges by the main thread, at their lines" \
	"$(edges3 one deadlocks.c)" \
	"$(sorted "$tid $(line_of "$TSRC" ONE_AB_A) $(line_of "$TSRC" ONE_AB_B)" \
		"$tid $(line_of "$TSRC" ONE_BA_B) $(line_of "$TSRC" ONE_BA_A)")"

# ---- a mutex made and locked in a critical section (ghostscript) -------------
# A then B only ever on a B made in that hold of A: no other thread could
# have it.  Still a POTENTIAL DEADLOCK (it fails MUTEXSTAT_EXIT_CODE: the
# code may have published B), but it no longer says two threads doing the
# same would deadlock, and a note says which mutex was new.
run new_link MUTEXSTAT_FORMAT=text,json "$T" new_link
expect_eq "new_link: exit status" "$rc" 0
mv "$WORK/new_link.report.txt" "$WORK/new_link.report"
expect_eq "new_link: one POTENTIAL DEADLOCK" "$(count new_link 'POTENTIAL DEADLOCK: ')" 1
finding new_link '^POTENTIAL DEADLOCK: '
expect_grep "new_link: one thread, without the claim that two would deadlock" \
	'^POTENTIAL DEADLOCK: 2 mutexes taken in a cycle of orders \(all by one thread\)$' \
	"$WORK/new_link.finding"
tid=$(field new_link thread main)
expect_eq "new_link: the edges, at their lines" "$(edges3 new_link deadlocks.c)" \
	"$(sorted "$tid $(line_of "$TSRC" NEW_LINK_A) $(line_of "$TSRC" NEW_LINK_B)" \
		"$tid $(line_of "$TSRC" NEW_LINK_B) $(line_of "$TSRC" NEW_LINK_BA_A)")"
expect_eq "new_link: the note, under the edge to the new mutex" \
	"$(awk '/ took A, then B:$/ { on = 1; next } /^  thread / { on = 0 }
		on && / was new: / { print; getline; print }' "$WORK/new_link.finding")" \
	"    B was new: no thread had locked it before. If none but this one could reach it yet (an
    object locked before it is published), this order cannot deadlock"
expect_eq "new_link: JSON, one edge to a new mutex, the one to B" \
	"$(jq -r --arg b "$(field new_link mutex L)" '[.findings[] | select(.kind == "potential-deadlock") |
		.edges[] | select(.to_was_new) | .to == $b] | map(tostring) | join(" ")' \
		"$WORK/new_link.report.json")" "true"

# ... taken so once more, B not new: a plain one, at the later lines
run new_link_retaken "$T" new_link_retaken
expect_eq "new_link_retaken: exit status" "$rc" 0
expect_eq "new_link_retaken: one POTENTIAL DEADLOCK" "$(count new_link_retaken 'POTENTIAL DEADLOCK: ')" 1
finding new_link_retaken '^POTENTIAL DEADLOCK: '
expect_grep "new_link_retaken: two threads doing the same would deadlock" \
	'^POTENTIAL DEADLOCK: 2 mutexes taken in a cycle of orders \(all by one thread: two threads doing the same would deadlock\)$' \
	"$WORK/new_link_retaken.finding"
expect_no_grep "new_link_retaken: no note" "was new" "$WORK/new_link_retaken.finding"
tid=$(field new_link_retaken thread main)
expect_eq "new_link_retaken: the edge A then B of the later lines" \
	"$(edges3 new_link_retaken deadlocks.c)" \
	"$(sorted "$tid $(line_of "$TSRC" RETAKEN_A) $(line_of "$TSRC" RETAKEN_B)" \
		"$tid $(line_of "$TSRC" NEW_LINK_B) $(line_of "$TSRC" NEW_LINK_BA_A)")"

# ... B made in one hold of A and first locked in the next: not new
run new_link_later_hold "$T" new_link_later_hold
expect_eq "new_link_later_hold: exit status" "$rc" 0
finding new_link_later_hold '^POTENTIAL DEADLOCK: '
expect_grep "new_link_later_hold: two threads doing the same would deadlock" \
	'^POTENTIAL DEADLOCK: 2 mutexes taken in a cycle of orders \(all by one thread: two threads doing the same would deadlock\)$' \
	"$WORK/new_link_later_hold.finding"
expect_no_grep "new_link_later_hold: no note" "was new" "$WORK/new_link_later_hold.finding"

# ... a ring of three by one thread through a new mutex: no claim that
# three threads doing the same would deadlock either
run new_link_ring "$T" new_link_ring
expect_eq "new_link_ring: exit status" "$rc" 0
finding new_link_ring '^POTENTIAL DEADLOCK: '
expect_eq "new_link_ring: one thread, and no claim under the heading" \
	"$(head -n 2 "$WORK/new_link_ring.finding")" \
	"POTENTIAL DEADLOCK: 3 mutexes taken in a cycle of orders (all by one thread)
  order: A -> B -> C -> A"
expect_eq "new_link_ring: the note once" "$(grep -c ' was new: ' "$WORK/new_link_ring.finding")" 1

# ---- a ring one thread walks hand over hand (a log's ring of buffers) ---------
# Two threads walking it need not meet: the note says how many would.
run one_ring "$T" one_ring 8
expect_eq "one_ring: one POTENTIAL DEADLOCK" "$(count one_ring 'POTENTIAL DEADLOCK: ')" 1
finding one_ring '^POTENTIAL DEADLOCK: '
expect_grep "one_ring: all by one thread" \
	'^POTENTIAL DEADLOCK: 8 mutexes taken in a cycle of orders \(all by one thread\)$' "$WORK/one_ring.finding"
expect_eq "one_ring: eight threads, each at another step, would deadlock (its second line)" \
	"$(sed -n 2p "$WORK/one_ring.finding")" "  8 threads doing the same, each at another step, would deadlock"
expect_eq "one_ring: no line over 120 columns" "$(awk 'length > 120' "$WORK/one_ring.finding")" ""
expect_grep "one_ring: the order round the ring" \
	'^  order: A -> B -> C -> D -> E -> F -> G -> H -> A$' "$WORK/one_ring.finding"

# ---- rings: thread i takes M[i] then M[i+1 mod N] ----------------------------
RF=$(line_of "$TSRC" RING_FIRST)
RS=$(line_of "$TSRC" RING_SECOND)
for n in 3 4; do
	run ring$n "$T" ring $n
	expect_eq "ring $n: one finding" "$(grep -Ec "$FINDING" "$WORK/ring$n.report")" 1
	finding ring$n '^POTENTIAL DEADLOCK: '
	expect_grep "ring $n: $n mutexes, several threads" \
		"^POTENTIAL DEADLOCK: $n mutexes taken in a cycle of orders$" "$WORK/ring$n.finding"
	expect_eq "ring $n: the ring's mutexes" "$(cycle_mutexes ring$n)" \
		"$(awk '$1 == "mutex" { print $3 }' "$WORK/ring$n.out" | oneline)"
	expect_eq "ring $n: one edge per thread, at the ring's two lock lines" \
		"$(edges3 ring$n deadlocks.c)" \
		"$(awk -v f="$RF" -v s="$RS" '$1 == "thread" { print $3, f, s }' "$WORK/ring$n.out" | oneline)"
done
expect_grep "ring 3: A -> B -> C -> A" '^  order: A -> B -> C -> A$' "$WORK/ring3.finding"

run ring20 "$T" ring 20
expect_eq "ring 20: one finding" "$(grep -Ec "$FINDING" "$WORK/ring20.report")" 1
finding ring20 '^POTENTIAL DEADLOCK: '
expect_grep "ring 20: 20 mutexes" '^POTENTIAL DEADLOCK: 20 mutexes taken in a cycle of orders$' \
	"$WORK/ring20.finding"
expect_grep "ring 20: the order, A to T" '^  order: A -> B -> .* -> S -> T -> A$' "$WORK/ring20.finding"
expect_eq "ring 20: all 20 mutexes listed" "$(cycle_mutexes ring20)" \
	"$(awk '$1 == "mutex" { print $3 }' "$WORK/ring20.out" | oneline)"
expect_grep "ring 20: edges shortened" '^  \.\.\. 12 more edges \.\.\.$' "$WORK/ring20.finding"
awk '$1 == "thread" { print $3 }' "$WORK/ring20.out" | sort >"$WORK/ring20.tids"
expect_eq "ring 20: the 8 edges shown, each by a ring thread at the ring's lines" \
	"$(edges ring20 deadlocks.c | awk -v f="$RF" -v s="$RS" '$2 == f && $3 == s { print $1 }' |
	   sort -u | comm -12 - "$WORK/ring20.tids" | wc -l)" 8
expect_eq "ring 20: no line over 120 columns" \
	"$(awk 'length($0) > 120' "$WORK/ring20.finding" | wc -l)" 0

# Longer than the alphabet: the mutexes past Z are M27, M28, ...
run ring30 "$T" ring 30
finding ring30 '^POTENTIAL DEADLOCK: '
expect_grep "ring 30: 30 mutexes" '^POTENTIAL DEADLOCK: 30 mutexes taken in a cycle of orders$' \
	"$WORK/ring30.finding"
expect_eq "ring 30: all 30 mutexes listed, the last as M30" \
	"$(grep -c '^  [A-Z][A-Z0-9]* \{1,\}mutex 0x' "$WORK/ring30.finding") $(grep -c '^  M30 mutex 0x' "$WORK/ring30.finding")" "30 1"
expect_eq "ring 30: no line over 120 columns" \
	"$(awk 'length($0) > 120' "$WORK/ring30.finding" | wc -l)" 0

# Two cycles sharing B, made by the same two lines: one finding (the code
# to mend is one), closed twice, showing the first pair.
run two "$T" two_cycles
expect_eq "two_cycles: one POTENTIAL DEADLOCK of 2 mutexes, nothing else" \
	"$(count two 'POTENTIAL DEADLOCK: 2 mutexes taken in a cycle of orders$') $(grep -Ec "$FINDING" "$WORK/two.report")" \
	"1 1"
expect_grep "two_cycles: closed twice" \
	'^  closed 2 times, by other mutexes each time at the same code \(the first time below\)$' \
	"$WORK/two.report"
expect_eq "two_cycles: the first pair, A/B" "$(cycles two)" \
	"$(group "$(field two mutex A)" "$(field two mutex B)")"

# Two inversions at lines of their own: exactly two findings.
run twoinv "$T" two_inversions
expect_eq "two_inversions: two POTENTIAL DEADLOCKs of 2 mutexes, nothing else" \
	"$(count twoinv 'POTENTIAL DEADLOCK: 2 mutexes taken in a cycle of orders$') $(grep -Ec "$FINDING" "$WORK/twoinv.report")" \
	"2 2"
expect_eq "two_inversions: the pairs A/B and C/D" "$(cycles twoinv)" \
	"$(sorted "$(group "$(field twoinv mutex A)" "$(field twoinv mutex B)")" \
		"$(group "$(field twoinv mutex C)" "$(field twoinv mutex D)")")"
expect_eq "two_inversions: neither was closed more than once" \
	"$(grep -c '^  closed ' "$WORK/twoinv.report")" 0
# Their frames are the same functions: no function names one of them
# alone, a variable of its mutexes does, and the rule suggested names it
# (it named two_inversions_step, "it leaves out 1 other finding here too").
rule_re='^  to suppress it: potential-deadlock:\^\(m[a-d]\)\$ (a line of MUTEXSTAT_SUPPRESSIONS)$'
expect_eq "two_inversions: each rule suggested names a mutex of its own pair" \
	"$(sed -n "s/$rule_re/\\1/p" "$WORK/twoinv.report" | tr abcd aacc | sort | tr -d '\n')" "mamc"

# One inversion taken again by other code (without the gate it had, by
# another thread): one finding of those two mutex lives, not two, shown as
# the two threads' -- the way it deadlocks without three threads' help.
run ungated "$T" ungated_later
expect_eq "ungated_later: one finding, a POTENTIAL DEADLOCK of two threads" \
	"$(grep -E "$FINDING" "$WORK/ungated.report")" "POTENTIAL DEADLOCK: 2 mutexes taken in a cycle of orders"
finding ungated '^POTENTIAL DEADLOCK: '
expect_grep "ungated_later: the other thread's A then B" \
	"^    B   at  ungated_a_then_b\+0x[0-9a-f]+ \(.*deadlocks.c:$(line_of "$TSRC" UNGATED_AB), " "$WORK/ungated.finding"
expect_grep "ungated_later: ... and the first thread's B then A" \
	"^    A   at  [a-z_]+\+0x[0-9a-f]+ \(.*deadlocks.c:$(line_of "$TSRC" UNGATED_BA), " "$WORK/ungated.finding"
expect_eq "ungated_later: closed once" "$(grep -c '^  closed ' "$WORK/ungated.finding")" 0
# ... but where the code of before closed it for two pairs (closed 2
# times), that finding stays, with its count, beside the new code's, which
# counts its own closing
run ungcount "$T" ungated_count
expect_eq "ungated_count: the old code's finding and the new one's" \
	"$(grep -E "$FINDING" "$WORK/ungcount.report" | sort)" \
	"$(printf '%s\n' 'POTENTIAL DEADLOCK: 2 mutexes taken in a cycle of orders' \
		'POTENTIAL DEADLOCK: 2 mutexes taken in a cycle of orders (all by one thread: two threads doing the same would deadlock)')"
finding ungcount '^POTENTIAL DEADLOCK: 2 mutexes taken in a cycle of orders$'
expect_grep "ungated_count: the other thread's finding" '^            ungated_ab_thread\+0x' "$WORK/ungcount.finding"
expect_eq "ungated_count: ... closed once at its code" "$(grep -c '^  closed ' "$WORK/ungcount.finding")" 0
finding ungcount '^POTENTIAL DEADLOCK: .*all by one thread'
expect_grep "ungated_count: the old code's, closed 2 times" \
	'^  closed 2 times, by other mutexes each time at the same code' "$WORK/ungcount.finding"

# Two inversions through one helper: each finding's suggested rule names
# its own caller of the helper, anchored (the helper's name would leave
# both out, and "pair_ab" unanchored names pair_ab_all too), and leaves out
# that finding alone.
run helper "$T" shared_helper
expect_eq "shared_helper: two POTENTIAL DEADLOCKs, nothing else" \
	"$(count helper 'POTENTIAL DEADLOCK: 2 mutexes taken in a cycle of orders$') $(grep -Ec "$FINDING" "$WORK/helper.report")" \
	"2 2"
expect_eq "shared_helper: the rules suggested name the helper's callers" \
	"$(grep '^  to suppress it:' "$WORK/helper.report" | sort)" \
	"  to suppress it: potential-deadlock:^pair_ab\$ (a line of MUTEXSTAT_SUPPRESSIONS)
  to suppress it: potential-deadlock:^pair_cd\$ (a line of MUTEXSTAT_SUPPRESSIONS)"
printf 'potential-deadlock:^pair_ab$\n' >"$WORK/helper.rules"
run helper_sup env MUTEXSTAT_SUPPRESSIONS="$WORK/helper.rules" "$T" shared_helper
expect_eq "shared_helper: the rule for A/B leaves out that finding alone" \
	"$(count helper_sup 'POTENTIAL DEADLOCK') $(grep -c '^suppressions from .*: 1 finding left out$' "$WORK/helper_sup.report")" \
	"1 1"
expect_eq "shared_helper: the finding left is C/D's" "$(cycles helper_sup)" \
	"$(group "$(field helper_sup mutex C)" "$(field helper_sup mutex D)")"

# Every lock through one wrapper, A and B first locked (one at a time) by
# a function of no cycle: the lock lines show it past the wrapper, and the
# rule suggested names code of the cycle, which leaves the finding out
# (it named the bystander, and a rule naming it leaves out every later
# cycle of A and B).
run bystander "$T" wrapped_bystander
expect_grep "wrapped_bystander: the lock lines show the first lock past the wrapper" \
	'^        through a wrapper, first locked from  bystander\+0x' "$WORK/bystander.report"
expect_grep "wrapped_bystander: the rule names code of the cycle, not the wrapper's first caller" \
	'^  to suppress it: potential-deadlock:\^wrapped_(ab|ba)\$ \(a line of MUTEXSTAT_SUPPRESSIONS\)$' \
	"$WORK/bystander.report"
sed -n 's/^  to suppress it: \(.*\) (a line of MUTEXSTAT_SUPPRESSIONS)$/\1/p' \
	"$WORK/bystander.report" >"$WORK/bystander.rules"
run bystander_sup env MUTEXSTAT_SUPPRESSIONS="$WORK/bystander.rules" "$T" wrapped_bystander
expect_eq "wrapped_bystander: the rule suggested leaves the finding out" \
	"$(count bystander_sup 'POTENTIAL DEADLOCK') $(grep -c '^suppressions from .*: 1 finding left out$' "$WORK/bystander_sup.report")" \
	"0 1"

# A finding made after one of its threads ended names that thread all the
# same (before, a thread gone when the cycle closed had no name: "thread
# 11241 took A" beside "thread 11244 "two_inv" took B").
run gone "$T" gone_abba
expect_grep "gone_abba: the thread that ended, named" \
	"^  thread $(field gone thread early) \"early\" took A, then B:\$" "$WORK/gone.report"
expect_grep "gone_abba: the thread that closed the cycle, named" \
	"^  thread $(field gone thread late) \"late\" took B, then A:\$" "$WORK/gone.report"

# ---- findings outlive their mutexes ----------------------------------------
# A/B inverted, then both destroyed before the report: the finding stays,
# and says where each ended.
run destroyed MUTEXSTAT_EXIT_CODE=7 "$T" destroyed_abba
expect_eq "destroyed_abba: the program's output, MUTEXSTAT_EXIT_CODE=7 applies" \
	"$rc $(tail -1 "$WORK/destroyed.out")" "7 1 rounds"
expect_eq "destroyed_abba: one POTENTIAL DEADLOCK, nothing else" \
	"$(count destroyed 'POTENTIAL DEADLOCK: 2 mutexes taken in a cycle of orders$') $(grep -Ec "$FINDING" "$WORK/destroyed.report")" \
	"1 1"
expect_grep "destroyed_abba: the table holds none of them now" \
	' 0 mutexes tracked, ' "$WORK/destroyed.report"
finding destroyed '^POTENTIAL DEADLOCK: '
expect_eq "destroyed_abba: A and B" "$(cycle_mutexes destroyed)" \
	"$(sorted "$(field destroyed mutex A)" "$(field destroyed mutex B)")"
expect_eq "destroyed_abba: each destroyed at its line" \
	"$(sed -n 's/^        destroyed at .*deadlocks\.c:\([0-9]*\), deadlocks)$/\1/p' "$WORK/destroyed.finding" | oneline)" \
	"$(sorted "$(line_of "$TSRC" LIVES_DESTROY_A)" "$(line_of "$TSRC" LIVES_DESTROY_B)")"
expect_eq "destroyed_abba: both edges, at their lines" "$(edges destroyed deadlocks.c | cut -d' ' -f2-3 | oneline)" \
	"$(sorted "$(line_of "$TSRC" LIVES_T1_A) $(line_of "$TSRC" LIVES_T1_B)" \
		"$(line_of "$TSRC" LIVES_T2_B) $(line_of "$TSRC" LIVES_T2_A)")"

# The same 200 times, with mutexes made anew each time: one finding, closed
# 200 times (each round's lives are other mutexes; the code is the same).
run lives MUTEXSTAT_EXIT_CODE=7 "$T" lives 200
expect_eq "lives 200: MUTEXSTAT_EXIT_CODE=7 applies" "$rc $(tail -1 "$WORK/lives.out")" "7 200 rounds"
expect_eq "lives 200: one POTENTIAL DEADLOCK, nothing else" \
	"$(count lives 'POTENTIAL DEADLOCK: 2 mutexes taken in a cycle of orders$') $(grep -Ec "$FINDING" "$WORK/lives.report")" \
	"1 1"
expect_grep "lives 200: closed 200 times" \
	'^  closed 200 times, by other mutexes each time at the same code \(the first time below\)$' \
	"$WORK/lives.report"
finding lives '^POTENTIAL DEADLOCK: '
expect_eq "lives 200: the first round's A and B" "$(cycle_mutexes lives)" \
	"$(sorted "$(field lives mutex A)" "$(field lives mutex B)")"

# A ring of 30 whose mutexes are all destroyed before the report.
run ringd "$T" ring_destroyed 30
expect_eq "ring_destroyed 30: one finding" "$(grep -Ec "$FINDING" "$WORK/ringd.report")" 1
finding ringd '^POTENTIAL DEADLOCK: '
expect_grep "ring_destroyed 30: 30 mutexes" '^POTENTIAL DEADLOCK: 30 mutexes taken in a cycle of orders$' \
	"$WORK/ringd.finding"
expect_eq "ring_destroyed 30: all 30 listed, each destroyed at the ring's line" \
	"$(grep -c '^  [A-Z][A-Z0-9]* \{1,\}mutex 0x' "$WORK/ringd.finding") $(grep -c "^        destroyed at .*deadlocks\.c:$(line_of "$TSRC" RING_DESTROY), " "$WORK/ringd.finding")" \
	"30 30"

# ---- dining philosophers ------------------------------------------------------
SRC=$top_srcdir/examples/deadlock_philosophers.c
run classic "$B/examples/deadlock_philosophers" classic
expect_eq "philosophers classic: all meals eaten" "$rc $(tail -1 "$WORK/classic.out")" "0 100 meals eaten"
expect_eq "philosophers classic: one finding" "$(grep -Ec "$FINDING" "$WORK/classic.report")" 1
finding classic '^POTENTIAL DEADLOCK: '
expect_grep "philosophers classic: the 5 forks in a cycle" \
	'^POTENTIAL DEADLOCK: 5 mutexes taken in a cycle of orders$' "$WORK/classic.finding"
expect_eq "philosophers classic: the five forks" "$(cycle_mutexes classic)" \
	"$(awk '$1 == "fork" { print $5 }' "$WORK/classic.out" | oneline)"
expect_eq "philosophers classic: each philosopher's edge, left fork then right" \
	"$(edges3 classic deadlock_philosophers.c)" \
	"$(awk -v f="$(line_of "$SRC" LEFT_FORK)" -v s="$(line_of "$SRC" RIGHT_FORK)" \
		'$1 == "philosopher" { print $5, f, s }' "$WORK/classic.out" | oneline)"

run waiter "$B/examples/deadlock_philosophers" waiter
expect_eq "philosophers waiter: all meals eaten" "$rc $(tail -1 "$WORK/waiter.out")" "0 100 meals eaten"
expect_eq "philosophers waiter: no POTENTIAL DEADLOCK" "$(count waiter 'POTENTIAL DEADLOCK')" 0
expect_eq "philosophers waiter: one finding" "$(grep -Ec "$FINDING" "$WORK/waiter.report")" 1
finding waiter '^GUARDED INVERSION: '
expect_grep "philosophers waiter: the cycle is guarded" \
	'^GUARDED INVERSION: 5 mutexes taken in a cycle of orders, always under one more mutex: cannot deadlock$' \
	"$WORK/waiter.finding"
# (a sanitized build inlines differently: eat_with_waiter may be inlined
# into philosopher, whose name the line then carries)
waiter_fn=eat_with_waiter
sanitized && waiter_fn='(eat_with_waiter|philosopher)'
expect_grep "philosophers waiter: the gate is the waiter, by its address" \
	"^  gate: mutex $(sed -n 's/^the waiter is mutex //p' "$WORK/waiter.out") <waiter>, held on every edge, first locked at $waiter_fn(\+0x[0-9a-f]+)? \(.*deadlock_philosophers\.c:$(line_of "$SRC" WAITER)\)$" \
	"$WORK/waiter.finding"
expect_eq "philosophers waiter: the five forks, not the waiter" "$(cycle_mutexes waiter)" \
	"$(awk '$1 == "fork" { print $5 }' "$WORK/waiter.out" | oneline)"
run waiter_exit MUTEXSTAT_EXIT_CODE=7 "$B/examples/deadlock_philosophers" waiter
expect_eq "philosophers waiter, MUTEXSTAT_EXIT_CODE=7: a guarded cycle does not fail the run" "$rc" 0

run ordered "$B/examples/deadlock_philosophers" ordered
expect_eq "philosophers ordered: all meals eaten" "$(tail -1 "$WORK/ordered.out")" "100 meals eaten"
nothing_found ordered "philosophers ordered"

# ---- a gate: G, then A, B in one thread and B, A in the other ----------------
run gate "$T" gate
expect_eq "gate: no POTENTIAL DEADLOCK" "$(count gate 'POTENTIAL DEADLOCK')" 0
expect_eq "gate: one finding" "$(grep -Ec "$FINDING" "$WORK/gate.report")" 1
finding gate '^GUARDED INVERSION: '
expect_grep "gate: GUARDED INVERSION of 2 mutexes" '^GUARDED INVERSION: 2 mutexes taken' "$WORK/gate.finding"
# (a line the variable makes long loses its module first: "(tests/deadlocks.c:973)")
expect_grep "gate: the gate, where it was first locked" \
	"^  gate: mutex $(field gate mutex G)( <[^>]+>)?, held on every edge, first locked at .*deadlocks\.c:$(line_of "$TSRC" GATE_G)(, |\)$)" \
	"$WORK/gate.finding"
expect_eq "gate: the cycle is A and B, not G" "$(cycle_mutexes gate)" \
	"$(sorted "$(field gate mutex A)" "$(field gate mutex B)")"
expect_eq "gate: both edges, at their lines" "$(edges3 gate deadlocks.c)" \
	"$(sorted "$(field gate thread t1) $(line_of "$TSRC" GATE_T1_A) $(line_of "$TSRC" GATE_T1_B)" \
		"$(field gate thread t2) $(line_of "$TSRC" GATE_T2_B) $(line_of "$TSRC" GATE_T2_A)")"

run gate_partial "$T" gate_partial
expect_eq "gate_partial: one thread skipped the gate: POTENTIAL DEADLOCK, not guarded" \
	"$(count gate_partial 'POTENTIAL DEADLOCK: 2 mutexes') $(count gate_partial 'GUARDED')" "1 0"

# ---- gates that do not exclude: read holds, and a gate left out later -------
# Both threads read G: readers are inside together, so G guards nothing.
# One writes and the other reads: guarded.  A thread that took A, B under
# G and again without it (or under G read where it wrote), against B, A
# under G (read): its later take can deadlock -- it found the edge in its
# cache and was not looked at again.  The _big ones: with the thread's
# bigger cache of edges, after 400 others; _copied: the bigger cache made
# between the two times, the gated edge copied into it.
for how in gate_read gate_dropped gate_weakened gate_dropped_big gate_weakened_big \
	gate_dropped_copied; do
	run $how "$T" $how
	expect_eq "$how: a POTENTIAL DEADLOCK, not guarded" \
		"$(count $how 'POTENTIAL DEADLOCK: 2 mutexes') $(count $how 'GUARDED')" "1 0"
	finding $how '^POTENTIAL DEADLOCK: '
	expect_eq "$how: its edges at their lines" "$(edges $how deadlocks.c | cut -d' ' -f2,3 | sort)" \
		"$(printf '%s %s\n%s %s\n' "$(line_of "$TSRC" GATE_RW_A)" "$(line_of "$TSRC" GATE_RW_B)" \
			"$(line_of "$TSRC" GATE_RW_T2_B)" "$(line_of "$TSRC" GATE_RW_T2_A)" | sort)"
done
run gate_broken "$T" gate_broken
expect_eq "gate_broken: one finding, a POTENTIAL DEADLOCK" \
	"$(grep -E "$FINDING" "$WORK/gate_broken.report")" "POTENTIAL DEADLOCK: 2 mutexes taken in a cycle of orders"
expect_eq "gate_broken: closed once, at the ungated code" \
	"$(grep -c '^  closed ' "$WORK/gate_broken.report") $(grep -c '^  thread .* took A, then B:' "$WORK/gate_broken.report")" "0 1"
expect_grep "gate_broken: the ungated thread's edge" "^  thread $(field gate_broken thread t3) .* took A, then B:" \
	"$WORK/gate_broken.report"
run gate_two_pairs "$T" gate_two_pairs
expect_eq "gate_two_pairs: one POTENTIAL DEADLOCK, closed at that code by two pairs" \
	"$(count gate_two_pairs 'POTENTIAL DEADLOCK') $(grep -c '^  closed 2 times, by other mutexes each time at the same code' "$WORK/gate_two_pairs.report")" \
	"1 1"
# A thread waits behind one that relocked its mutex: one finding, the
# SELF-DEADLOCK, which the wait chain names (it named a DEADLOCK "above"
# that is no longer printed).
run self_chain "$T" self_chain
expect_eq "self_chain: the SELF-DEADLOCK alone" \
	"$(grep -E "$FINDING" "$WORK/self_chain.report" | cut -d: -f1 | paste -sd' ' -)" "SELF-DEADLOCK"
expect_grep "self_chain: the chain behind it names it" \
	"^  thread $(field self_chain thread relocker) waits for a lock it holds itself: the SELF-DEADLOCK below\$" \
	"$WORK/self_chain.report"
expect_no_grep "self_chain: no DEADLOCK above" 'DEADLOCK above' "$WORK/self_chain.report"
run gate_read_write "$T" gate_read_write
expect_eq "gate_read_write: G written by one, read by the other: guarded" \
	"$(count gate_read_write 'POTENTIAL DEADLOCK') $(count gate_read_write 'GUARDED INVERSION: 2 mutexes')" "0 1"

# ---- trylock ---------------------------------------------------------------------
run backoff "$T" trylock_backoff
nothing_found backoff "trylock back-off (a failed try, a successful one under B)"

run ttl "$T" trylock_then_lock
expect_eq "trylock_then_lock: one POTENTIAL DEADLOCK" \
	"$(count ttl 'POTENTIAL DEADLOCK: 2 mutexes taken in a cycle of orders$') $(grep -Ec "$FINDING" "$WORK/ttl.report")" "1 1"
finding ttl '^POTENTIAL DEADLOCK: '
expect_eq "trylock_then_lock: A taken by trylock, then B; elsewhere B then A" \
	"$(edges3 ttl deadlocks.c)" \
	"$(sorted "$(field ttl thread t2) $(line_of "$TSRC" TTL_T2_A) $(line_of "$TSRC" TTL_T2_B)" \
		"$(field ttl thread t1) $(line_of "$TSRC" TTL_T1_B) $(line_of "$TSRC" TTL_T1_A)")"

# ---- timed locks that time out still tried the order ------------------------------
for how in timed clock; do
	run $how "$T" ${how}_inversion
	expect_eq "${how}_inversion: exit status" "$rc" 0
	expect_eq "${how}_inversion: one finding, POTENTIAL DEADLOCK of A and B" \
		"$(grep -Ec "$FINDING" "$WORK/$how.report") $(count $how 'POTENTIAL DEADLOCK: 2 mutexes taken in a cycle of orders$')" \
		"1 1"
	finding $how '^POTENTIAL DEADLOCK: '
	expect_eq "${how}_inversion: A and B" "$(cycle_mutexes $how)" \
		"$(sorted "$(field $how mutex A)" "$(field $how mutex B)")"
	upper=$(echo $how | tr a-z A-Z)
	expect_eq "${how}_inversion: the timed-out lock's edge, at its line" \
		"$(edges3 $how deadlocks.c)" \
		"$(sorted "$(field $how thread t1) $(line_of "$TSRC" TIMEDINV_T1_A) $(line_of "$TSRC" TIMEDINV_T1_B)" \
			"$(field $how thread t2) $(line_of "$TSRC" TIMEDINV_T2_B) $(line_of "$TSRC" ${upper}INV_T2_A)")"
done

# ---- self-deadlocks -----------------------------------------------------------
# A normal mutex relocked never returns: said at once on stderr.  Once it
# is said, the process hangs: its thread sleeps in the kernel's futex wait
# (it was killed after 5 s, which a loaded machine's start-up and
# symbolising the message's lines could take).
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/self.report" \
	"$T" self_relock >"$WORK/self.out" 2>"$WORK/self.err" &
pid=$!
wait_for "$WORK/self.err" '^  relocked at .*\)$' 20 || fail "self_relock: no SELF-DEADLOCK on stderr"
# asleep in the futex (a kernel that hides wchan: asleep)
in_futex() {
	case $(cat "/proc/$1/wchan" 2>/dev/null) in
	*futex*) return 0 ;;
	0 | '') [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" = S ] ;;
	*) return 1 ;;
	esac
}
n=0
while [ $n -lt 200 ] && ! in_futex $pid; do sleep 0.1; n=$((n + 1)); done
in_futex $pid && pass "self_relock: the process hangs, asleep in its futex wait" ||
	fail "self_relock: not asleep in a futex wait: $(cat "/proc/$pid/wchan" 2>&1)"
kill -KILL $pid 2>/dev/null; wait $pid 2>/dev/null
expect_eq "self_relock: it got to the relock" "$(tail -1 "$WORK/self.out")" relocking
expect_grep "self_relock: stderr says so at once" \
	"^mutexstat: SELF-DEADLOCK: thread $(field self thread main) locks a mutex it already holds: it waits for itself, forever$" \
	"$WORK/self.err"
expect_grep "self_relock: which mutex" "^  mutex $(field self mutex A)( <[^>]+>)?$" "$WORK/self.err"
expect_grep "self_relock: where it was taken" \
	"^  taken at     .*deadlocks\.c:$(line_of "$TSRC" SELF_FIRST), deadlocks\)$" "$WORK/self.err"
expect_grep "self_relock: where it was relocked" \
	"^  relocked at  .*deadlocks\.c:$(line_of "$TSRC" SELF_AGAIN), deadlocks\)$" "$WORK/self.err"

# The hung process, alone in its one thread, still answers: a live dump on
# SIGUSR1 shows the finding -- once: the wait-for graph's thread waiting
# for itself is that SELF-DEADLOCK, not a DEADLOCK beside it (two findings
# and two rules to suppress for one hang).  (Not
# beside another malloc than glibc's, ASan's: no thread of ours can start
# in a process with one thread there -- doc/processes-and-signals.md, "When the dump thread starts".)
if sanitized; then
	echo "skip: the hung one-thread process's live dump and watchdog (ASan's malloc)"
else
	env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/selfdump.report" \
		"$T" self_relock >"$WORK/selfdump.out" 2>"$WORK/selfdump.err" &
	pid=$!
	wait_for "$WORK/selfdump.err" '^  relocked at .*\)$' 20 || fail "self_relock, dump: no SELF-DEADLOCK on stderr"
	kill -USR1 $pid
	wait_for "$WORK/selfdump.report.1" '^  relocked at .*\)$' 20 ||
		fail "self_relock, dump: no live dump of the hung process"
	kill -KILL $pid 2>/dev/null; wait $pid 2>/dev/null
	expect_eq "self_relock, dump: the SELF-DEADLOCK finding, no DEADLOCK beside it" \
		"$(grep -E '^(DEADLOCK|SELF-DEADLOCK):' "$WORK/selfdump.report.1" | cut -d: -f1-2)" \
		"SELF-DEADLOCK: thread $(field selfdump thread main) locks a mutex it already holds"
	expect_grep "self_relock, dump: where it waits" \
		"^  relocked at  .*deadlocks\.c:$(line_of "$TSRC" SELF_AGAIN), deadlocks\)$" "$WORK/selfdump.report.1"

	# With the watchdog and MUTEXSTAT_ON_DEADLOCK=abort the hang ends: the
	# report, then SIGABRT.
	timeout -s KILL 60 env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/selfwd.report" \
		MUTEXSTAT_WATCHDOG=1 MUTEXSTAT_ON_DEADLOCK=abort "$T" self_relock \
		>"$WORK/selfwd.out" 2>"$WORK/selfwd.err"
	rc=$?
	expect_eq "self_relock, watchdog: aborted (SIGABRT)" "$rc" 134
	expect_grep "self_relock, watchdog: stderr names the finding it aborts for" \
		'^mutexstat: aborting the program: a SELF-DEADLOCK \(MUTEXSTAT_ON_DEADLOCK=abort\)$' \
		"$WORK/selfwd.err"
	expect_eq "self_relock, watchdog: the report has the SELF-DEADLOCK, no DEADLOCK beside it" \
		"$(grep -E '^(DEADLOCK|SELF-DEADLOCK):' "$WORK/selfwd.report.1" | cut -d: -f1-2)" \
		"SELF-DEADLOCK: thread $(field selfwd thread main) locks a mutex it already holds"
fi

# A relock that another thread's unlock (a misuse) let through: the exit
# report said "it waits for itself, forever" of a program that had ended.
run self_released MUTEXSTAT_FORMAT=text,json "$T" self_released
mv "$WORK/self_released.report.txt" "$WORK/self_released.report"
expect_eq "self_released: the program's status and output" "$rc $(tail -1 "$WORK/self_released.out")" \
	"0 the relock returned"
expect_grep "self_released: the SELF-DEADLOCK says how the wait ended" \
	"^SELF-DEADLOCK: thread $(field self_released thread main) relocked a mutex it held, 1 time: it waited for itself until another thread's unlock let it go$" \
	"$WORK/self_released.report"
expect_no_grep "self_released: not forever" "forever" "$WORK/self_released.report"
expect_grep "self_released: the unlock that let it go, a MISUSE" "^MISUSE: " "$WORK/self_released.report"
expect_eq "self_released: JSON, released" \
	"$(jq -c '[.findings[] | select(.kind == "self-deadlock") | [.count, .released]]' "$WORK/self_released.report.json")" \
	"[[1,1]]"

# No dump thread wanted (no dump signal, no watchdog): the finding is said
# on stderr all the same.
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/selfquiet.report" MUTEXSTAT_SIGNAL=none \
	"$T" self_relock >"$WORK/selfquiet.out" 2>"$WORK/selfquiet.err" &
pid=$!
wait_for "$WORK/selfquiet.err" '^  relocked at .*\)$' 20 ||
	fail "self_relock, MUTEXSTAT_SIGNAL=none: no SELF-DEADLOCK on stderr"
kill -KILL $pid 2>/dev/null; wait $pid 2>/dev/null
expect_grep "self_relock, MUTEXSTAT_SIGNAL=none: stderr says so" \
	"^mutexstat: SELF-DEADLOCK: thread $(field selfquiet thread main) locks a mutex it already holds" \
	"$WORK/selfquiet.err"

# An errorcheck mutex relocked: glibc refuses (EDEADLK) and nothing hangs,
# a MISUSE among the others, which MUTEXSTAT_EXIT_CODE does not fail on
# (Samba's tdb relocks on purpose, to ask glibc whether it holds a lock)
run errcheck MUTEXSTAT_EXIT_CODE=7 "$T" self_errorcheck
expect_eq "self_errorcheck: EDEADLK each time, the program went on, its own exit status (a MISUSE does not fail)" \
	"$rc $(tail -1 "$WORK/errcheck.out")" "0 EDEADLK 3 times, and on"
expect_eq "self_errorcheck: nothing on stderr" "$(cat "$WORK/errcheck.err")" ""
expect_eq "self_errorcheck: one finding" "$(grep -Ec "$FINDING" "$WORK/errcheck.report")" 1
finding errcheck '^MISUSE: '
expect_grep "self_errorcheck: refused, 3 times" \
	"^MISUSE: relock refused: thread $(field errcheck thread main) relocked an errorcheck mutex it holds, 3 times; glibc answered EDEADLK$" \
	"$WORK/errcheck.finding"
expect_grep "self_errorcheck: which mutex" "^  mutex $(field errcheck mutex E)$" "$WORK/errcheck.finding"
expect_grep "self_errorcheck: where it was taken" \
	"^  taken at     .*deadlocks\.c:$(line_of "$TSRC" ERRCHECK_FIRST), " "$WORK/errcheck.finding"
expect_grep "self_errorcheck: where it was relocked" \
	"^  relocked at  .*deadlocks\.c:$(line_of "$TSRC" ERRCHECK_AGAIN), " "$WORK/errcheck.finding"
expect_grep "self_errorcheck: the rule that leaves it out is a misuse rule" \
	'^  to suppress it: misuse:' "$WORK/errcheck.report"
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_FORMAT=json MUTEXSTAT_OUTPUT="$WORK/errcheck_json" \
	"$T" self_errorcheck >/dev/null 2>&1
expect_eq "self_errorcheck: JSON, a misuse with its count, thread, glibc's answer and both stacks, no last" \
	"$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for f in d["findings"]:
    print(f["kind"], f["what"], f["count"], f["result"], f["thread"] > 0,
          f["relocked_at"][0]["line"] == int(sys.argv[3]),
          f["taken_at"][0]["line"] == int(sys.argv[2]), f["suppressed_by"], "last" in f)
' "$WORK/errcheck_json.json" "$(line_of "$TSRC" ERRCHECK_FIRST)" "$(line_of "$TSRC" ERRCHECK_AGAIN)")" \
	"misuse relock_refused 3 EDEADLK True True True None False"

# ... robust, priority-inheriting: glibc's try answers the relock itself
# (EDEADLK), and it is the same finding (a priority-protected one too, which
# needs a ceiling the machine may not grant)
for how in robust pi; do
	run "errcheck_$how" MUTEXSTAT_EXIT_CODE=7 "$T" "self_errorcheck_$how"
	expect_eq "self_errorcheck ($how): EDEADLK each time, the program went on, its own status" \
		"$rc $(tail -1 "$WORK/errcheck_$how.out")" "0 EDEADLK 2 times, and on"
	finding "errcheck_$how" '^MISUSE: '
	expect_grep "self_errorcheck ($how): refused, 2 times, where" \
		"^MISUSE: relock refused: thread $(field "errcheck_$how" thread main) relocked an errorcheck mutex it holds, 2 times; glibc answered EDEADLK$" \
		"$WORK/errcheck_$how.finding"
	expect_grep "self_errorcheck ($how): where it was relocked" \
		"^  relocked at  .*deadlocks\.c:$(line_of "$TSRC" ERRCHECK_AS_AGAIN), " "$WORK/errcheck_$how.finding"
done

# ... and of a robust mutex whose owner died, before the repair: its owner
# field reads "inconsistent" then, and the relock was not seen as its
# holder's (no MISUSE; a normal one's relock, a wait for itself, was no
# SELF-DEADLOCK but a wait for another thread)
run died_errcheck MUTEXSTAT_EXIT_CODE=7 "$T" self_died_errorcheck
expect_eq "self_died_errorcheck: EDEADLK each time, the program went on, its own status" \
	"$rc $(tail -1 "$WORK/died_errcheck.out")" "0 EDEADLK 2 times, and on"
finding died_errcheck '^MISUSE: relock'
expect_grep "self_died_errorcheck: refused, 2 times" \
	"^MISUSE: relock refused: thread $(field died_errcheck thread main) relocked an errorcheck mutex it holds, 2 times; glibc answered EDEADLK$" \
	"$WORK/died_errcheck.finding"
expect_grep "self_died_errorcheck: taken where the lock got EOWNERDEAD" \
	"^  taken at     .*deadlocks\.c:$(line_of "$TSRC" DIED_FIRST), " "$WORK/died_errcheck.finding"
expect_grep "self_died_errorcheck: where it was relocked" \
	"^  relocked at  .*deadlocks\.c:$(line_of "$TSRC" DIED_AGAIN), " "$WORK/died_errcheck.finding"
run died_timed MUTEXSTAT_EXIT_CODE=7 "$T" self_died_timed
expect_eq "self_died_timed: ETIMEDOUT, the program went on; the SELF-DEADLOCK fails the run" \
	"$rc $(tail -1 "$WORK/died_timed.out")" "7 ETIMEDOUT, and on"
finding died_timed '^SELF-DEADLOCK: '
expect_grep "self_died_timed: waited for itself until the deadline" \
	"^SELF-DEADLOCK: thread $(field died_timed thread main) relocked a mutex it holds, with a timeout, 1 time: " \
	"$WORK/died_timed.finding"
expect_grep "self_died_timed: where it was relocked" \
	"^  relocked at  .*deadlocks\.c:$(line_of "$TSRC" DIED_TIMED_AGAIN), " "$WORK/died_timed.finding"

# Relocks refused take at most half the room of these findings: the
# SELF-DEADLOCK after 200 of them is kept, and fails the run
run crowded MUTEXSTAT_EXIT_CODE=7 "$T" self_crowded
expect_eq "self_crowded: the program went on; the SELF-DEADLOCK fails the run" \
	"$rc $(tail -1 "$WORK/crowded.out")" "7 200 EDEADLK, ETIMEDOUT, and on"
expect_eq "self_crowded: 128 relocks refused kept, and the SELF-DEADLOCK" \
	"$(grep -c '^MISUSE: relock refused: ' "$WORK/crowded.report") $(grep -c '^SELF-DEADLOCK: ' "$WORK/crowded.report")" \
	"128 1"
expect_grep "self_crowded: the others counted" \
	'^  \(and 72 more relocks refused: not kept\)$' "$WORK/crowded.report"

run timedself MUTEXSTAT_EXIT_CODE=7 "$T" self_timed
expect_eq "self_timed: ETIMEDOUT, and the program went on; MUTEXSTAT_EXIT_CODE=7 fails the run" \
	"$rc $(tail -1 "$WORK/timedself.out")" "7 ETIMEDOUT, and on"
expect_eq "self_timed: one finding" "$(grep -Ec "$FINDING" "$WORK/timedself.report")" 1
finding timedself '^SELF-DEADLOCK: '
expect_grep "self_timed: waited for itself until the deadline" \
	"^SELF-DEADLOCK: thread $(field timedself thread main) relocked a mutex it holds, with a timeout, 1 time: " \
	"$WORK/timedself.finding"
expect_grep "self_timed: where it was taken" \
	"^  taken at     .*deadlocks\.c:$(line_of "$TSRC" TIMED_FIRST), " "$WORK/timedself.finding"
expect_grep "self_timed: where it was relocked" \
	"^  relocked at  .*deadlocks\.c:$(line_of "$TSRC" TIMED_AGAIN), " "$WORK/timedself.finding"

# The same with a signal handler that waits for B inside the relock's
# wait: each wait is a waiter while it lasts, none is left counted after.
run timedsig "$T" self_timed_signal
expect_eq "self_timed_signal: ETIMEDOUT, and on" "$rc $(tail -1 "$WORK/timedsig.out")" "0 ETIMEDOUT, and on"
expect_eq "self_timed_signal: A, waited for by its holder, and B, by the handler: one waiter at most each, none now" \
	"$(for m in A B; do awk -v a="$(field timedsig mutex $m)" '$1 ~ /^#[0-9]+$/ { on = $3 == a } on && /most waiters at once/ { sub(/.*most waiters at once /, ""); sub(/;.*/, ""); print }' "$WORK/timedsig.report"; done | paste -sd, -)" \
	"1,1"

run trylockself "$T" self_trylock
nothing_found trylockself "self_trylock (a try of a held mutex cannot wait)"

run recursive "$T" recursive
nothing_found recursive "recursive relocks, one while holding B"

# ---- orders that agree: nothing ---------------------------------------------------
run unlock "$T" unlock_out_of_order
nothing_found unlock "unlocks out of order, 4 threads"

run condvar "$T" condvar
expect_eq "condvar: every item consumed" "$(tail -1 "$WORK/condvar.out")" "2000 consumed"
nothing_found condvar "condition waits, one under an outer mutex"

run many "$T" many_held
nothing_found many "65 mutexes held, let go oldest first"

# ---- a mutex's new life (destroy, or init again) has no history ----------------
run rds "$T" reinit_destroy_swap
nothing_found rds "destroy and init again, then the other order"
run ris "$T" reinit_init_swap
nothing_found ris "init again without destroy, then the other order"
for how in destroy init windows; do
	run r$how "$T" reinit_${how}_same
	expect_eq "reinit_${how}_same: the new lives' cycle is one POTENTIAL DEADLOCK" \
		"$(count r$how 'POTENTIAL DEADLOCK: 2 mutexes taken in a cycle of orders$') $(grep -Ec "$FINDING" "$WORK/r$how.report")" \
		"1 1"
	finding r$how '^POTENTIAL DEADLOCK: '
	expect_eq "reinit_${how}_same: its edges at the second round's lines, not the first's" \
		"$(edges3 r$how deadlocks.c)" \
		"$(sorted "$(field r$how thread t1) $(line_of "$TSRC" REINIT_2_A) $(line_of "$TSRC" REINIT_2_B)" \
			"$(field r$how thread t2) $(line_of "$TSRC" REINIT_T2_B) $(line_of "$TSRC" REINIT_T2_A)")"
done

# A normal mutex let go by another thread (misuse, which glibc allows): its
# locker no longer holds it, neither when it takes B nor when it ends.
run elsewhere "$T" unlocked_elsewhere
expect_eq "unlocked_elsewhere: exit status" "$rc" 0
finding elsewhere '^MISUSE: unlock by a thread that does not hold it: '
expect_grep "unlocked_elsewhere: the MISUSE, by thread 2" \
	"last by thread $(field elsewhere thread t2)[^0-9]" "$WORK/elsewhere.finding"
expect_grep "unlocked_elsewhere: the MISUSE, at its line" \
	"deadlocks\.c:$(line_of "$TSRC" ELSEWHERE_UNLOCK), deadlocks\)" "$WORK/elsewhere.finding"
expect_eq "unlocked_elsewhere: one finding, the MISUSE (no lock order, nothing held at exit)" \
	"$(grep -E "$FINDING" "$WORK/elsewhere.report" | cut -d: -f1 | oneline)" "MISUSE"

# ---- threads that end holding mutexes ---------------------------------------------
run held MUTEXSTAT_EXIT_CODE=7 "$T" held_at_exit
expect_eq "held_at_exit: not a failing finding (MUTEXSTAT_EXIT_CODE=7)" "$rc" 0
expect_eq "held_at_exit: two findings, one per thread" \
	"$(grep -Ec "$FINDING" "$WORK/held.report") $(count held 'HELD AT THREAD EXIT: ')" "2 2"
finding held "^HELD AT THREAD EXIT: thread $(field held thread keeper) "
expect_grep "held_at_exit: keeper, by tid and name, 1 mutex" \
	"^HELD AT THREAD EXIT: thread $(field held thread keeper) \"keeper\" ended holding 1 mutex$" \
	"$WORK/held.finding"
expect_grep "held_at_exit: keeper's mutex, where it was taken" \
	"^  mutex $(field held mutex A)( <[^>]+>)? taken at .*deadlocks\.c:$(line_of "$TSRC" HELD_KEEPER_A), " \
	"$WORK/held.finding"
finding held "^HELD AT THREAD EXIT: thread $(field held thread quitter) "
expect_grep "held_at_exit: quitter (pthread_exit), 2 mutexes (R counts once)" \
	"^HELD AT THREAD EXIT: thread $(field held thread quitter) \"quitter\" ended holding 2 mutexes$" \
	"$WORK/held.finding"
expect_grep "held_at_exit: quitter's B" \
	"^  mutex $(field held mutex B)( <[^>]+>)? taken at .*deadlocks\.c:$(line_of "$TSRC" HELD_QUITTER_B), " \
	"$WORK/held.finding"
expect_grep "held_at_exit: quitter's R" \
	"^  mutex $(field held mutex R) <mr> taken at .*deadlocks\.c:$(line_of "$TSRC" HELD_QUITTER_R), " \
	"$WORK/held.finding"
expect_no_grep "held_at_exit: not the thread that let go of all it took" '"tidy"' "$WORK/held.report"

# ---- MUTEXSTAT_EXIT_CODE on a clean run: the program's own status ----------------
for status in 0 5; do
	run clean MUTEXSTAT_EXIT_CODE=7 "$T" clean $status
	expect_eq "clean $status, MUTEXSTAT_EXIT_CODE=7: the program's own status" "$rc" $status
	expect_no_grep "clean $status: no finding" "$FINDING" "$WORK/clean.report"
done

# ---- the ABBA that hangs --------------------------------------------------------
timeout -k 5 5 env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/hang.report" \
	"$B/examples/deadlock_hang" >"$WORK/hang.out" 2>"$WORK/hang.err"
rc=$?
expect_eq "deadlock_hang: the process hangs (timeout's 124)" "$rc" 124
expect_eq "deadlock_hang: nothing on stderr" "$(cat "$WORK/hang.err")" ""

# The watchdog's report of it: each edge of the POTENTIAL DEADLOCK was
# made as its thread asked for its second mutex, which it waits for now:
# "took A, then waits for B", not "then B".
timeout -s KILL 60 env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/hangwd.report" \
	MUTEXSTAT_FORMAT=text,json MUTEXSTAT_WATCHDOG=1 MUTEXSTAT_ON_DEADLOCK=abort \
	"$B/examples/deadlock_hang" >"$WORK/hangwd.out" 2>"$WORK/hangwd.err"
rc=$?
expect_eq "deadlock_hang, watchdog: aborted (SIGABRT)" "$rc" 134
expect_grep "deadlock_hang, watchdog: the DEADLOCK" '^DEADLOCK: 2 threads wait for each other, forever$' \
	"$WORK/hangwd.report.1.txt"
expect_eq "deadlock_hang, watchdog: both edges say the thread waits for its second mutex" \
	"$(grep -cE '^  thread [0-9]+ "deadlock_hang" took [AB], then waits for [AB]:$' "$WORK/hangwd.report.1.txt")" 2
expect_eq "deadlock_hang, watchdog: so does the JSON's waits_for_to" \
	"$(jq -c '[.findings[] | select(.kind == "potential-deadlock") | .edges[].waits_for_to]' \
		"$WORK/hangwd.report.1.json")" "[true,true]"

# The watchdog looks every 250 ms also while dump signals come more often:
# with one every 100 ms it once never looked, and the hang went on for ever.
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/storm.report" MUTEXSTAT_WATCHDOG=1 \
	MUTEXSTAT_ON_DEADLOCK=abort "$B/examples/deadlock_hang" >"$WORK/storm.out" 2>"$WORK/storm.err" &
storm_pid=$!
dump_ready $storm_pid || fail "storm: no dump thread"
# (30 s of them at most: the watchdog's 1 s and its look's 250 ms come
# first; before, the process aborted only once the signals stopped)
tries=0
while [ $tries -lt 300 ] && kill -USR1 $storm_pid 2>/dev/null; do
	sleep 0.1
	tries=$((tries + 1))
done
expect_eq "deadlock_hang, watchdog, a dump signal every 100 ms: it ends while they come" \
	"$([ $tries -lt 300 ] && echo yes || echo "no, still running after $tries signals")" yes
wait_or_kill $storm_pid 5
rc=$?
expect_eq "deadlock_hang, watchdog, a dump signal every 100 ms: aborted (SIGABRT)" "$rc" 134

# ... and once the deadlock is gone (the ABBA that does not hang, at exit):
# "took A, then B".
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/abba.report" MUTEXSTAT_FORMAT=text,json \
	"$B/examples/deadlock_abba" >/dev/null 2>&1
expect_eq "deadlock_abba: both edges say the thread took both" \
	"$(grep -cE '^  thread [0-9]+ ("[^"]*" )?took [AB], then [AB]:$' "$WORK/abba.report.txt")" 2
expect_eq "deadlock_abba: the JSON's waits_for_to" \
	"$(jq -c '[.findings[] | select(.kind == "potential-deadlock") | .edges[].waits_for_to]' \
		"$WORK/abba.report.json")" "[false,false]"
finish
