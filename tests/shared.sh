# shared.sh - mutexes across processes and owners' deaths: a process-shared
# mutex locked hard by two processes (each report has exactly what its own
# process did, at the address it mapped the mutex); robust mutexes whose
# owner thread or process died, with the same return values as without the
# library, a note when the new owner repaired it and an OWNER DIED finding
# when it was left not recoverable; a live dump names the other process
# holding a shared mutex, and calls it a deadlock once that process is gone.
. "$top_srcdir/tests/lib.sh"
P=$top_builddir/tests/shared

acquired() {
	top_row "$1" "$2" | awk '{ print $3 }'
}

# ---- one process-shared mutex, two processes ------------------------------
timeout -s KILL 60 env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/c.%p" \
	"$P" counts 20000 "$WORK/area" > "$WORK/out" 2> "$WORK/err"
expect_eq "counts: exit status" "$?" 0
expect_grep "counts: the mutex kept them apart: 4 x 20000" '^counter 80000$' "$WORK/out"
read -r _ ppid _ paddr _ <<EOF
$(grep '^parent ' "$WORK/out")
EOF
read -r _ cpid _ caddr _ <<EOF
$(grep '^child [0-9]' "$WORK/out")
EOF
[ -n "$paddr" ] && [ "$paddr" != "$caddr" ] && pass "counts: mapped at two addresses" ||
	fail "counts: addresses '$paddr' and '$caddr'"
expect_eq "counts: the parent's report, at its address, its 40000" "$(acquired "$WORK/c.$ppid" "$paddr")" 40000
expect_eq "counts: the child's report, at its address, its 40000" "$(acquired "$WORK/c.$cpid" "$caddr")" 40000
expect_grep "counts: the kind" "^#1 mutex $paddr( <[^>]+>)? \(normal pshared\)$" "$WORK/c.$ppid"
expect_no_grep "counts: no misuse (glibc's owner is often the other process's thread)" \
	'^MISUSE' "$WORK/c.$ppid"
expect_no_grep "counts: none in the child either" '^MISUSE' "$WORK/c.$cpid"
expect_eq "counts: nothing on stderr" "$(cat "$WORK/err")" ""

# ---- robust mutexes whose owner dies ---------------------------------------
# An owner death that the next owner repairs (pthread_mutex_consistent) is
# the correct use of a robust mutex: a note in the mutex's section, no
# finding, nothing for MUTEXSTAT_EXIT_CODE -- whether the owner was a thread
# that ended or another process.  One never repaired, the mutex left not
# recoverable, is an OWNER DIED finding, counted for it.  (Before, a repaired
# death was both HELD AT THREAD EXIT and OWNER DIED, and an unrepaired one
# did not change the exit status.)

# same_answers MODE: the mode's return values (its addresses aside) as
# without the library, its status with MUTEXSTAT_EXIT_CODE=7 in $status,
# its report (the only one: the children that die make none) in $report.
same_answers() {
	"$P" $1 "$WORK/plain.area" > "$WORK/plain" 2>&1
	status=0
	timeout -s KILL 60 env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/$1.%p" \
		MUTEXSTAT_FORMAT=text,json MUTEXSTAT_EXIT_CODE=7 \
		"$P" $1 "$WORK/$1.area" > "$WORK/$1.out" 2>&1 || status=$?
	expect_eq "$1: every return value as without the library" \
		"$(grep -Ev '^(local|shared|second) ' "$WORK/$1.out")" \
		"$(grep -Ev '^(local|shared|second) ' "$WORK/plain")"
	set -- "$WORK/$1".*.txt
	expect_eq "$(basename "$1"): one report" "$#" 1
	report=$1
}
addr_of() { awk -v w="$1" '$1 == w { print $2 }' "$WORK/$2.out"; }
# section FILE ADDR: that mutex's section of the report
section() {
	awk -v m="$2" '$0 ~ "^#[0-9]+ mutex " m " " { on = 1 } on && /^$/ { exit } on' "$1"
}
FINDING='^(DEADLOCK|POTENTIAL DEADLOCK|GUARDED INVERSION|SELF-DEADLOCK|HELD AT THREAD EXIT|OWNER DIED|MISUSE)'
REPAIRED='^  owner died: 1 time; made consistent again \(pthread_mutex_consistent\): 1 time -- repaired, no finding$'

# A recursive robust mutex whose next owner lets an inner level go before
# the repair: glibc answers that unlock ENOTRECOVERABLE (and a condition
# wait on that level), but the mutex stays recoverable -- repaired, locked
# again.  No finding (it was NOT RECOVERABLE, and failed the run, counting
# those answers as locks refused).
same_answers recursive
expect_eq "recursive: the program's own status, MUTEXSTAT_EXIT_CODE=7 or not" "$status" 0
expect_eq "recursive: glibc's answers" "$(grep -Ev '^local ' "$WORK/recursive.out" | tr '\n' ';')" \
	"lock EOWNERDEAD;inner lock 0;inner unlock ENOTRECOVERABLE;inner lock 0;condition wait ENOTRECOVERABLE;consistent 0;unlock 0;lock again 0;unlock 0;"
expect_no_grep "recursive: no finding" "$FINDING" "$report"
section "$report" "$(addr_of local recursive)" > "$WORK/recursive.section"
expect_grep "recursive: the owner's death, repaired" "$REPAIRED" "$WORK/recursive.section"
expect_no_grep "recursive: recoverable" 'NOT RECOVERABLE' "$WORK/recursive.section"
expect_grep "recursive: glibc's two refusals counted as errors" \
	'^  errors returned: EOWNERDEAD 1, ENOTRECOVERABLE 2$' "$WORK/recursive.section"

# both repaired: a thread's death and a process's
same_answers repaired
expect_eq "repaired: the program's own status, MUTEXSTAT_EXIT_CODE=7 or not" "$status" 0
expect_no_grep "repaired: no finding" "$FINDING" "$report"
section "$report" "$(addr_of local repaired)" > "$WORK/local.section"
section "$report" "$(addr_of shared repaired)" > "$WORK/shared.section"
expect_grep "repaired: the thread's death, a note in its mutex's section" "$REPAIRED" "$WORK/local.section"
expect_grep "repaired: the process's death too" "$REPAIRED" "$WORK/shared.section"
expect_grep "repaired: where the lock that got EOWNERDEAD was" \
	"^    the next lock returned EOWNERDEAD, last at take_over\+0x[0-9a-f]+ \(.*shared\.c:$(grep -n TAKE_OVER_LOCK "$top_srcdir/tests/shared.c" | cut -d: -f1), shared\)$" \
	"$WORK/shared.section"
json=${report%.txt}.json
expect_eq "repaired: JSON, no finding" "$(jq '.findings | length' "$json")" 0
expect_eq "repaired: JSON, both repaired once, neither not recoverable" \
	"$(jq -c '[.mutexes[] | .owner_died | select(.) | [.times, .made_consistent, .unlocked_inconsistent, .not_recoverable]]' "$json")" \
	'[[1,1,0,false],[1,1,0,false]]'

# a thread dies holding two: one is repaired, the other left not recoverable
same_answers abandoned
expect_eq "abandoned: MUTEXSTAT_EXIT_CODE=7 for the one left not recoverable" "$status" 7
local=$(addr_of local abandoned)
expect_grep "abandoned: the thread ended holding the one not repaired" \
	"^HELD AT THREAD EXIT: thread [0-9]+ \"shared\" ended holding 1 mutex$" "$report"
expect_grep "abandoned: that one, where it was taken" \
	"^  mutex $local( <[^>]+>)? taken at die_holding_both\+0x[0-9a-f]+ \(" "$report"
expect_eq "abandoned: two findings" "$(grep -Ec "$FINDING" "$report")" 2
expect_grep "abandoned: the rule that would leave it out" \
	"^  to suppress it: owner-died:\\^take_over\\$ \(a line of MUTEXSTAT_SUPPRESSIONS\)$" "$report"
# a team that knows of it: a rule leaves it out, and the exit status is the program's
printf 'owner-died:take_over\n' > "$WORK/owner.rules"
status=0
timeout -s KILL 60 env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/sup.%p" \
	MUTEXSTAT_FORMAT=text,json MUTEXSTAT_EXIT_CODE=7 MUTEXSTAT_SUPPRESSIONS="$WORK/owner.rules" \
	"$P" abandoned "$WORK/sup.area" > "$WORK/sup.out" 2>&1 || status=$?
expect_eq "abandoned, suppressed: the program's own status" "$status" 0
sup=$(ls "$WORK"/sup.*.txt | head -n 1)
expect_no_grep "abandoned, suppressed: no OWNER DIED" "^OWNER DIED" "$sup"
expect_grep "abandoned, suppressed: the rule's count" \
	"^  line 1    owner-died:take_over  1$" "$sup"
expect_eq "abandoned, suppressed: JSON marks it" \
	"$(jq -r '.findings[] | select(.kind == "owner-died") | .suppressed_by' "${sup%.txt}.json")" \
	"owner-died:take_over"
expect_grep "abandoned: its owner died, unrepaired" \
	"^OWNER DIED: mutex $local( <[^>]+>)? \(robust\): its owner died holding it, 1 time$" "$report"
expect_grep "abandoned: not recoverable" \
	'^  NOT RECOVERABLE: unlocked while inconsistent, it can never be locked again; 1 lock since returned ENOTRECOVERABLE$' \
	"$report"
section "$report" "$(addr_of second abandoned)" > "$WORK/second.section"
expect_grep "abandoned: the repaired one, a note in its section" "$REPAIRED" "$WORK/second.section"
json=${report%.txt}.json
expect_eq "abandoned: JSON, the held-at-thread-exit and owner-died findings, of that mutex" \
	"$(jq -c '[.findings[] | [.kind, (.mutexes[0].mutex // .mutex)]]' "$json")" \
	"[[\"held-at-thread-exit\",\"$local\"],[\"owner-died\",\"$local\"]]"

# the same mutexes destroyed: the findings stay, by where they were first
# locked
same_answers ended
expect_eq "ended: MUTEXSTAT_EXIT_CODE=7 all the same" "$status" 7
expect_grep "ended: the thread ended holding the one not repaired" \
	"^HELD AT THREAD EXIT: thread [0-9]+ \"shared\" ended holding 1 mutex$" "$report"
expect_eq "ended: two findings" "$(grep -Ec "$FINDING" "$report")" 2
expect_grep "ended: its owner died, unrepaired, by its first lock" \
	"^OWNER DIED: on robust mutexes now ended, first locked at die_holding_both\+0x[0-9a-f]+ \(.*shared\.c:$(grep -n FIRST_OF_TWO "$top_srcdir/tests/shared.c" | cut -d: -f1), shared\): the next lock got EOWNERDEAD, 1 time$" \
	"$report"
expect_grep "ended: not recoverable" \
	'^  made consistent again \(pthread_mutex_consistent\): 0 times; unlocked without that: 1 time$' \
	"$report"
expect_eq "ended: JSON, the owner-died finding by its first lock" \
	"$(jq -c '[.findings[] | select(.kind == "owner-died") | [.mutex, .ended_first_locked_at.function, .unlocked_inconsistent]]' "${report%.txt}.json")" \
	'[[null,"die_holding_both",1]]'
expect_eq "ended: JSON, the repaired one's site says so" \
	"$(jq -c '[.ended[] | .owner_died | select(.) | [.made_consistent, .not_recoverable]] | sort' "${report%.txt}.json")" \
	'[[0,true],[1,false]]'

# a thread's death repaired; a process's twice, repaired once: not recoverable
same_answers robust
expect_grep "robust: a process died: EOWNERDEAD" '^process died: lock EOWNERDEAD$' "$WORK/robust.out"
expect_eq "robust: MUTEXSTAT_EXIT_CODE=7 for the one left not recoverable" "$status" 7
local=$(addr_of local robust)
shared=$(addr_of shared robust)
expect_no_grep "robust: the thread's death was repaired: it did not end holding it" \
	'^HELD AT THREAD EXIT' "$report"
expect_no_grep "robust: the local mutex is no finding" "^OWNER DIED: mutex $local " "$report"
section "$report" "$local" > "$WORK/local.section"
expect_grep "robust: the local mutex's note" "$REPAIRED" "$WORK/local.section"
expect_grep "robust: the shared one's twice" \
	"^OWNER DIED: mutex $shared( <[^>]+>)? \(robust\): its owner died holding it, 2 times$" "$report"
awk -v m="$shared" '$0 ~ "^OWNER DIED: mutex " m { on = 1; next } on && /^$/ { exit } on' \
	"$report" > "$WORK/shared.finding"
expect_grep "robust: where the lock that got EOWNERDEAD was" \
	"^  the next lock returned EOWNERDEAD, last at take_over\+0x[0-9a-f]+ \(.*shared\.c:$(grep -n TAKE_OVER_LOCK "$top_srcdir/tests/shared.c" | cut -d: -f1), shared\)$" \
	"$WORK/shared.finding"
expect_grep "robust: repaired once, not the second time" \
	'^  made consistent again \(pthread_mutex_consistent\): 1 time; unlocked without that: 1 time$' \
	"$WORK/shared.finding"
expect_grep "robust: so it is not recoverable, and the locks since were refused" \
	'^  NOT RECOVERABLE: unlocked while inconsistent, it can never be locked again; 2 locks since returned ENOTRECOVERABLE$' \
	"$WORK/shared.finding"
expect_grep "robust: the error counts" '^  errors returned: EOWNERDEAD 2, ENOTRECOVERABLE 2$' "$report"
expect_no_grep "robust: the unlock after EOWNERDEAD is no misuse" '^MISUSE' "$report"

# ---- waiting for a shared mutex another process holds ---------------------
if sanitized; then
	# beside ASan's malloc (not glibc's) a process with one thread starts
	# no dump thread, so this one writes no live dump (doc/processes-and-signals.md)
	echo "skip: the live dumps of a waiting single-threaded process, beside ASan's malloc"
	finish
fi
# the main thread is in the lock once it sleeps in the kernel's futex wait
blocked() {
	case $(cat "/proc/$1/wchan" 2>/dev/null) in
	*futex*) return 0 ;;
	0 | '') [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" = S ] ;;
	*) return 1 ;;
	esac
}
# waiter MODE PREFIX AREA: "$P" MODE AREA in the background, its reports
# in $WORK/PREFIX.PID; once its main thread waits in the lock, a live
# dump (PREFIX.PID.1).  Sets pid, holder (the other process) and lock.
waiter() {
	: > "$WORK/out" # empty now: the job truncates it only once it runs
	env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/$2.%p" "$P" "$1" "$3" \
		> "$WORK/out" 2> "$WORK/err" &
	pid=$!
	wait_for "$WORK/out" '^locking$' 20 || fail "$1: never got to the lock"
	holder=$(awk '/^holder / { print $2 }' "$WORK/out")
	lock=$(awk '/^mutex / { print $2 }' "$WORK/out")
	n=0
	while [ $n -lt 200 ] && ! blocked $pid; do sleep 0.1; n=$((n + 1)); done
	kill -USR1 $pid
	if wait_for "$WORK/$2.$pid.1" '^(WAIT CHAIN|DEADLOCK)' 20; then pass "$1: a dump"; else fail "$1: no dump"; fi
}
waiter wait w "$WORK/area4"
mutex=$lock
expect_grep "wait: who waits for what" "^  thread $pid \"shared\" waits for mutex $mutex for " "$WORK/w.$pid.1"
expect_grep "wait: held in the other process, named" \
	"^  held by thread $holder of process $holder \"shared\" \(process-shared\): that process's report shows what it does$" \
	"$WORK/w.$pid.1"
expect_no_grep "wait: not a deadlock while the holder lives" '^DEADLOCK' "$WORK/w.$pid.1"
kill -9 "$holder"
n=0
while [ $n -lt 200 ] && [ -e "/proc/$holder" ]; do sleep 0.1; n=$((n + 1)); done
kill -USR1 $pid
if wait_for "$WORK/w.$pid.2" '^(WAIT CHAIN|DEADLOCK)' 20; then pass "wait: a second dump"; else fail "wait: no second dump"; fi
kill -9 $pid
wait $pid 2>/dev/null
expect_grep "wait: the holder is gone: a deadlock" \
	"^DEADLOCK: thread $pid waits for a process-shared mutex whose owner, thread $holder of another process, has exited$" \
	"$WORK/w.$pid.2"

# ---- waiting to read a shared rwlock another process writes -------------
# glibc keeps the writer's thread id: the chain names it and its process.
waiter waitrw r "$WORK/area5"
expect_grep "waitrw: who waits for what" "^  thread $pid \"shared\" waits to read rwlock $lock for " "$WORK/r.$pid.1"
expect_grep "waitrw: the writer in the other process, named, a newline in it as '?'" \
	"^  held by thread $holder of process $holder \"sh\?DEADLOCK: x\" \(process-shared\): that process's report shows what it does$" \
	"$WORK/r.$pid.1"
expect_no_grep "waitrw: no heading made of its name" "^DEADLOCK: x" "$WORK/r.$pid.1"
kill -9 "$holder" $pid
wait $pid 2>/dev/null
finish
