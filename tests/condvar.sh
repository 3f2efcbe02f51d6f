# condvar.sh - condition waits as glibc makes them on each kind of mutex
# (tests/condvar.c): the program answers as without the library, and the
# report says what glibc did to the mutex -- a robust mutex's retake that
# got EOWNERDEAD, a wait that made one not recoverable, a recursive mutex
# that stays held through the wait, waits on mutexes the thread does not
# hold -- with exact counts, also in a broadcast storm.
. "$top_srcdir/tests/lib.sh"
B=$top_builddir
SRC=$top_srcdir/tests/condvar.c
line_of() { grep -n "/\* $1" "$SRC" | cut -d: -f1; }

# same_answers MODE...: the program's output with the library is the same
# as without it (addresses aside), and the report is in $WORK/MODE.
same_answers() {
	mode=$1
	bare=$(timeout 20 "$B/tests/condvar" "$@" 2>&1 | sed 's/0x[0-9a-f]*/ADDR/g')
	rc=0
	timeout 20 env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/$mode" \
	    "$B/tests/condvar" "$@" >"$WORK/$mode.out" 2>"$WORK/$mode.err" || rc=$?
	expect_eq "$mode: status with the library" "$rc" 0
	expect_eq "$mode: the same answers with the library" \
	    "$(sed 's/0x[0-9a-f]*/ADDR/g' "$WORK/$mode.out")" "$bare"
}

# ---- a robust mutex whose owner dies while the thread waits ---------------
# The retake answers EOWNERDEAD: it is an acquisition and an owner's death,
# which main repairs -- a note in the mutex's section, no finding.  (Before,
# glibc's owner field, which reads "inconsistent" then, hid the retake: 3
# acquisitions, the consistent call not counted.)
same_answers robust-retake
m=$(awk '/^mutex /{print $2}' "$WORK/robust-retake.out")
expect_grep "robust-retake: 4 acquisitions, the retake among them" \
    "^ +1 $(top_label_re "$WORK/robust-retake" "$m") +4 " "$WORK/robust-retake"
expect_grep "robust-retake: the owner's death, made consistent once" \
    "^  owner died: 1 time; made consistent again \(pthread_mutex_consistent\): 1 time -- repaired, no finding$" \
    "$WORK/robust-retake"
expect_grep "robust-retake: at the condition wait" \
    "the next lock returned EOWNERDEAD, last at main\+0x[0-9a-f]+ \(.*condvar\.c:$(line_of RETAKE_OWNERDEAD)," \
    "$WORK/robust-retake"
expect_no_grep "robust-retake: repaired, so no finding: not OWNER DIED, not HELD AT THREAD EXIT" \
    '^(OWNER DIED|HELD AT THREAD EXIT)' "$WORK/robust-retake"
expect_grep "robust-retake: the retake in the history" \
    " cond-wait retake +EOWNERDEAD " "$WORK/robust-retake"
expect_no_grep "robust-retake: nothing left locked" '^Mutexes still locked' "$WORK/robust-retake"

# ---- a wait on a robust mutex not made consistent -------------------------
# glibc's release inside the wait leaves it not recoverable, and the thread
# does not hold it after.  (Before: the wait was not seen -- "condition waits
# 0", "unlocked without that: 0 times", and the mutex still locked by the
# thread at exit.)
same_answers robust-left
expect_grep "robust-left: a condition wait" "condition waits 1(;|$)" "$WORK/robust-left"
expect_grep "robust-left: let go without being made consistent" \
    "made consistent again \(pthread_mutex_consistent\): 0 times; unlocked without that: 1 time$" \
    "$WORK/robust-left"
expect_grep "robust-left: the retake and the lock after answered ENOTRECOVERABLE" \
    "NOT RECOVERABLE: .*; 2 locks since returned ENOTRECOVERABLE$" "$WORK/robust-left"
expect_no_grep "robust-left: not held at exit" '^Mutexes still locked' "$WORK/robust-left"

# ---- a recursive mutex held twice through the wait ------------------------
# glibc takes one level and keeps the mutex: the thread that would signal
# waits for it for ever.  A dump shows the mutex held and the deadlock.
# (Before, the report had it let go: no "still locked", no DEADLOCK.)
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/rdump" \
    "$B/tests/condvar" recursive-hang >"$WORK/out" 2>"$WORK/err" &
pid=$!
wait_for "$WORK/out" '^hung$' 20 && pass "recursive-hang: hung" || fail "recursive-hang: never hung"
kill -USR1 $pid
wait_for "$WORK/rdump.1" '^#1 ' 20 || fail "recursive-hang: no dump"
kill -9 $pid; wait $pid 2>/dev/null
expect_grep "recursive-hang: a deadlock" \
    '^DEADLOCK: thread [0-9]+ waits for a condition while holding a mutex other threads wait for$' \
    "$WORK/rdump.1"
expect_grep "recursive-hang: the signaller blocks on the held mutex" \
    "waits at +signaller\+0x[0-9a-f]+ \(.*condvar\.c:$(line_of RECURSIVE_BLOCKS)," "$WORK/rdump.1"
expect_grep "recursive-hang: the waiter waits for the condition" \
    "waits at +[a-z_]+\+0x[0-9a-f]+ \(.*condvar\.c:$(line_of RECURSIVE_WAITS)," "$WORK/rdump.1"
expect_grep "recursive-hang: the mutex is still locked" '^Mutexes still locked:' "$WORK/rdump.1"
expect_grep "recursive-hang: a condition wait under way" \
    "most waiters at once 1 \(1 now\); condition waits 1(;|$)" "$WORK/rdump.1"

# ---- waits on mutexes the thread does not hold ---------------------------
# Each is a MISUSE of its own kind, with glibc's answer and the line.  glibc
# lets a normal mutex go whoever holds it and gives it to the waiter after:
# that retake is an acquisition.  (Before: no MISUSE, the retakes not
# counted, and a wait on a destroyed mutex was no "use of a destroyed
# mutex".)
same_answers not-held
set -- $(sed -n "s/^mutexes: plain \(0x[0-9a-f]*\) errorcheck \(0x[0-9a-f]*\) another's \(0x[0-9a-f]*\) destroyed \(0x[0-9a-f]*\)$/\1 \2 \3 \4/p" \
    "$WORK/not-held.out")
plain=$1 errorcheck=$2 others=$3 gone=$4
R=$WORK/not-held
for x in "plain $plain ETIMEDOUT NOT_HELD_PLAIN" "errorcheck $errorcheck EPERM NOT_HELD_ERRORCHECK" \
    "another's $others ETIMEDOUT NOT_HELD_OTHER"; do
	set -- $x
	expect_grep "not-held: $1: one MISUSE" \
	    "^MISUSE: condition wait on a mutex the thread does not hold: mutex $2( <[^>]+>)?, 1 time$" "$R"
	expect_eq "not-held: $1: glibc's answer, and the line" \
	    "$(grep -EA2 "^MISUSE: condition wait .* mutex $2( <[^>]+>)?," "$R" | sed -n '2s/.*glibc returned \([A-Z]*\), at:$/\1/p;3s/.*condvar\.c:\([0-9]*\),.*/\1/p' | tr '\n' ' ')" \
	    "$3 $(line_of $4) "
done
expect_eq "not-held: the plain mutex's retake is counted" "$(top_row "$R" "$plain" | awk '{print $3}')" 1
expect_eq "not-held: another's mutex: its lock and the retake" "$(top_row "$R" "$others" | awk '{print $3}')" 2
expect_grep "not-held: the destroyed one is a use of a destroyed mutex" \
    "^MISUSE: use of a destroyed mutex: mutex $gone( <[^>]+>)?, 1 time$" "$R"
expect_grep "not-held: the destroyed one's kind" "^#[0-9] mutex $gone( <[^>]+>)? \(destroyed\)$" "$R"
expect_eq "not-held: four MISUSE lines" "$(grep -c '^MISUSE' "$R")" 4
expect_no_grep "not-held: nothing left locked" '^Mutexes still locked' "$R"
expect_no_grep "not-held: the thread glibc took a mutex from did not end holding it" \
    '^HELD AT THREAD EXIT' "$R"
if command -v jq >/dev/null 2>&1; then
	env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/nhj" MUTEXSTAT_FORMAT=json \
	    "$B/tests/condvar" not-held >/dev/null 2>&1
	expect_eq "not-held: JSON: the three, with glibc's answers" \
	    "$(jq -r '[.findings[] | select(.what == "cond_wait_not_held") | .last.result] | sort | join(" ")' "$WORK/nhj.json")" \
	    "EPERM ETIMEDOUT ETIMEDOUT"
else
	echo "note: no jq: the JSON report not read (Debian package jq)"
fi

# ---- a broadcast storm --------------------------------------------------
# 40 threads woken together 50 times: every retake counted.  (How many
# waits there are depends on the run: a thread may come after a broadcast.)
rc=0
timeout 20 env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/storm" \
    "$B/tests/condvar" storm 40 >"$WORK/storm.out" 2>"$WORK/storm.err" || rc=$?
expect_eq "storm: status with the library" "$rc" 0
m=$(awk '/^mutex /{print $2}' "$WORK/storm.out")
n=$(awk '/^mutex /{print $4}' "$WORK/storm.out")
expect_eq "storm: the acquisitions the program counted" "$(top_row "$WORK/storm" "$m" | awk '{print $3}')" "$n"
expect_grep "storm: every wait a condition wait" "condition waits $((n - 41))(;|$)" "$WORK/storm"

# ---- lives that ended ---------------------------------------------------
# Their condition waits are summed in their site's line like their other
# numbers (the line said "condition waits 0", and JSON had none).
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/ended" MUTEXSTAT_FORMAT=text,json \
    "$B/tests/condvar" ended >/dev/null 2>&1
expect_grep "ended: the 3 lives' line" '^#1 3 mutexes that ended ' "$WORK/ended.txt"
expect_eq "ended: their 6 condition waits" \
    "$(sed -n '/^#1 3 mutexes that ended/{n;p;}' "$WORK/ended.txt" | sed -n 's/.*; condition waits \([0-9]*\).*/\1/p')" 6
if command -v jq >/dev/null 2>&1; then
	expect_eq "ended: JSON" "$(jq '.ended[0].condition_waits' "$WORK/ended.json")" 6
fi

# ---- a hold whose lock the library did not see -----------------------------
# The retake is then the first lock seen: "first locked at" the wait (it
# read "?"), as for the next lock after such a hold's unlock.
same_answers bypassed
m=$(awk '/^mutex /{print $2}' "$WORK/bypassed.out")
expect_grep "bypassed: the retake counted" "^ +1 $(top_label_re "$WORK/bypassed" "$m") +1 " "$WORK/bypassed"
expect_grep "bypassed: first locked at the wait" \
    "^  first locked at +[a-z_]+\+0x[0-9a-f]+ \(.*condvar\.c:$(line_of BYPASSED_WAIT)," "$WORK/bypassed"

# ---- calls glibc refuses before it looks at the mutex -----------------------
# A deadline's nanoseconds out of range, a clock glibc does not wait by:
# EINVAL, the mutex neither taken nor let go.  Every error is counted
# (doc/model.md); these went straight to glibc, not counted (2 of 6 in the
# tester's program, 0 of 7 here).
same_answers refused
expect_eq "refused: glibc's answers" \
    "$(grep -c ' EINVAL$' "$WORK/refused.out") $(grep -c ' 0$' "$WORK/refused.out")" "7 1"
m=$(awk '/^mutex /{print $2}' "$WORK/refused.out")
expect_grep "refused: every EINVAL counted" "^  errors returned: EINVAL 7$" "$WORK/refused"
expect_eq "refused: each in the history" \
    "$(grep -cE '^ +[0-9]+ +[0-9]+ +(clocklock|cond-wait release) +EINVAL ' "$WORK/refused")" 7
expect_grep "refused: no condition wait, one acquisition" \
    "^ +1 $(top_label_re "$WORK/refused" "$m") +1 " "$WORK/refused"
expect_grep "refused: no condition wait" "condition waits 0$" "$WORK/refused"
expect_no_grep "refused: no finding" '^(MISUSE|SELF-DEADLOCK)' "$WORK/refused"

finish
