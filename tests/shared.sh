# shared.sh - mutexes across processes and owners' deaths: a process-shared
# mutex locked hard by two processes (each report has exactly what its own
# process did, at the address it mapped the mutex); robust mutexes whose
# owner thread or process died, with the same return values as without the
# library and an OWNER DIED finding; a live dump names the other process
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
expect_grep "counts: the kind" "^#1 mutex $paddr \(normal pshared\)$" "$WORK/c.$ppid"
expect_no_grep "counts: no misuse (glibc's owner is often the other process's thread)" \
	'^MISUSE' "$WORK/c.$ppid"
expect_no_grep "counts: none in the child either" '^MISUSE' "$WORK/c.$cpid"
expect_eq "counts: nothing on stderr" "$(cat "$WORK/err")" ""

# ---- robust mutexes whose owner dies ---------------------------------------
"$P" robust "$WORK/area2" > "$WORK/plain" 2>&1
timeout -s KILL 60 env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/r.%p" \
	"$P" robust "$WORK/area3" > "$WORK/out" 2>&1
strip() { grep -Ev '^(local|shared) ' "$1"; }
expect_eq "robust: every return value as without the library" "$(strip "$WORK/out")" "$(strip "$WORK/plain")"
expect_grep "robust: a process died: EOWNERDEAD" '^process died: lock EOWNERDEAD$' "$WORK/out"
local=$(awk '/^local / { print $2 }' "$WORK/out")
shared=$(awk '/^shared / { print $2 }' "$WORK/out")
report=$(ls "$WORK"/r.* | while read -r f; do grep -l "^OWNER DIED" "$f"; done)
expect_grep "robust: the thread that died holding it" \
	"^HELD AT THREAD EXIT: thread [0-9]+ \"shared\" ended holding 1 mutex$" "$report"
expect_grep "robust: the local mutex's owner died once" \
	"^OWNER DIED: mutex $local \(robust\): its owner died holding it, 1 time$" "$report"
expect_grep "robust: the shared one's twice" \
	"^OWNER DIED: mutex $shared \(robust\): its owner died holding it, 2 times$" "$report"
awk -v m="$shared" '$0 ~ "^OWNER DIED: mutex " m { on = 1; next } on && /^$/ { exit } on' \
	"$report" > "$WORK/shared.finding"
expect_grep "robust: where the lock that got EOWNERDEAD was" \
	"^  the next lock returned EOWNERDEAD, last at [a-z_]+\+0x[0-9a-f]+ \(.*shared\.c:$(grep -n EOWNERDEAD_LOCK "$top_srcdir/tests/shared.c" | cut -d: -f1), shared\)$" \
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
	# no dump thread, so this one writes no live dump (README, Live dumps)
	echo "skip: the live dumps of a waiting single-threaded process, beside ASan's malloc"
	finish
fi
: > "$WORK/out" # empty now: the job truncates it only once it runs
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/w.%p" "$P" wait "$WORK/area4" \
	> "$WORK/out" 2> "$WORK/err" &
pid=$!
wait_for "$WORK/out" '^locking$' 20 || fail "wait: never got to the lock"
holder=$(awk '/^holder / { print $2 }' "$WORK/out")
mutex=$(awk '/^mutex / { print $2 }' "$WORK/out")
# the main thread is in the lock once it sleeps in the kernel's futex wait
blocked() {
	case $(cat "/proc/$1/wchan" 2>/dev/null) in
	*futex*) return 0 ;;
	0 | '') [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" = S ] ;;
	*) return 1 ;;
	esac
}
n=0
while [ $n -lt 200 ] && ! blocked $pid; do sleep 0.1; n=$((n + 1)); done
kill -USR1 $pid
if wait_for "$WORK/w.$pid.1" '^(WAIT CHAIN|DEADLOCK)' 20; then pass "wait: a dump"; else fail "wait: no dump"; fi
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
finish
