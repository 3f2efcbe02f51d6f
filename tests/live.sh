# live.sh - the live dump (kill -USR1) of a deadlocked program finds the
# cycle; the watchdog reports a hang and aborts it; a storm of dump signals
# while threads lock hard changes nothing.
. "$top_srcdir/tests/lib.sh"
B=$top_builddir
SRC=$top_srcdir/tests/scenario.c
line_of() { grep -n "$1" "$SRC" | cut -d: -f1; }

# ---- kill -USR1 on a deadlocked program ----------------------------------
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/dump" \
	"$B/tests/scenario" hang > "$WORK/out" 2> "$WORK/err" &
pid=$!
if wait_for "$WORK/out" '^deadlocked$' 20; then pass "the program deadlocked"; else fail "never deadlocked"; fi
kill -USR1 $pid
if wait_for "$WORK/dump.1" '^Top ' 20; then pass "a dump was written"; else fail "no dump"; fi
kill -0 $pid 2>/dev/null && pass "the program goes on after the dump" || fail "the dump ended the program"
kill -USR1 $pid
wait_for "$WORK/dump.2" '^Top ' 20 && pass "a second dump, numbered 2" || fail "no second dump"
kill -9 $pid; wait $pid 2>/dev/null
expect_grep "the cycle" '^DEADLOCK: 2 threads wait for each other, forever$' "$WORK/dump.1"
expect_eq "a dump says it is one, under its heading" "$(sed -n 2p "$WORK/dump.1")" \
	"  a live dump (the dump signal, MUTEXSTAT_SIGNAL); the program runs on"
expect_grep "thread one waits at its second lock" \
	"waits at +hang_one\+0x[0-9a-f]+ \(.*scenario\.c:$(line_of HANG_ONE_WAITS), scenario\)" "$WORK/dump.1"
expect_grep "thread two waits at its second lock" \
	"waits at +hang_two\+0x[0-9a-f]+ \(.*scenario\.c:$(line_of HANG_TWO_WAITS), scenario\)" "$WORK/dump.1"
expect_grep "where the mutex one waits for was taken by two" \
	"held by thread [0-9]+, taken at hang_two\+0x[0-9a-f]+ \(.*scenario\.c:$(line_of HANG_TWO_FIRST)," "$WORK/dump.1"
expect_grep "where the mutex two waits for was taken by one" \
	"held by thread [0-9]+, taken at hang_one\+0x[0-9a-f]+ \(.*scenario\.c:$(line_of HANG_ONE_FIRST)," "$WORK/dump.1"
expect_grep "the inversion too" '^POTENTIAL DEADLOCK: 2 mutexes' "$WORK/dump.1"
expect_eq "findings before the statistics" \
	"$(awk '/^DEADLOCK:/ { d = NR } /^Top / { t = NR } END { print (d && d < t) ? "yes" : "no" }' "$WORK/dump.1")" yes

# ---- a process of one thread: the dump comes at its next mutex call -------
# one that makes none after the signal writes no dump, and its exit report
# says so (it said nothing: a user waited for a file that never came)
# (ASan's malloc is not glibc's: a sanitized process of one thread writes
# no live dump at all, doc/processes-and-signals.md -- and says so)
afters="0 1"
if sanitized; then afters=0; fi
for after in $afters; do
	rm -f "$WORK/go"
	env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/one$after" \
		"$B/tests/scenario" onedump "$WORK/go" $after >"$WORK/out" 2>"$WORK/err" &
	pid=$!
	wait_for "$WORK/out" '^ready$' 20 || fail "onedump $after: never ready"
	kill -USR1 $pid
	# delivered: SIGUSR1 (bit 10) pending no more, so its handler has run
	# before the thread's next call
	n=0
	while [ $n -lt 2000 ] && awk '/^(SigPnd|ShdPnd):/ { if (index("2367abef", substr($2, 14, 1))) p = 1 }
		END { exit !p }' "/proc/$pid/status" 2>/dev/null; do
		n=$((n + 1))
		sleep 0.01
	done
	: >"$WORK/go"
	wait $pid
	expect_eq "onedump $after: exit status" "$?" 0
done
note='  a SIGUSR1 came but no live dump was written: a process of one thread writes it at its next mutex call (none came)'
if sanitized; then
	note="  a SIGUSR1 came but no live dump was written: beside another malloc than glibc's, a process of one thread writes none"
fi
expect_eq "onedump, no call after: no dump, and the exit report says why" \
	"$(ls "$WORK" | grep -c '^one0\.')/$(grep -cxF "$note" "$WORK/one0")" "0/1"
if ! sanitized; then
	expect_eq "onedump, a call after: the dump, and no such line" \
		"$(ls "$WORK" | grep -c '^one1\.1$')/$(grep -cxF "$note" "$WORK/one1")" "1/0"
fi

# ---- the holder at the end of a wait chain: where it is now ----------------
# dump_holder NAME MODE: a live dump of `scenario MODE` (a holder, and the
# main thread waiting for it) as $WORK/NAME.1
dump_holder() {
	: >"$WORK/out" # the last run's "waiting" is there until the job truncates it
	env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/$1" \
		"$B/tests/scenario" $2 > "$WORK/out" 2> "$WORK/err" &
	pid=$!
	wait_for "$WORK/out" '^waiting$' 20 || fail "$2: never started"
	kill -USR1 $pid
	wait_for "$WORK/$1.1" '^Top ' 20 || fail "$2: no dump"
	kill -9 $pid; wait $pid 2>/dev/null
}
# It sleeps, blocked in the kernel: its stack is read from /proc and
# memory, without a signal, beginning where it is, in pause().
dump_holder sleep holdsleep
expect_grep "holdsleep: the holder is now in pause(), its first frame" \
	'^  thread [0-9]+ is not waiting for a mutex; it is now at pause\+0x[0-9a-f]+ ' "$WORK/sleep.1"
expect_grep "holdsleep: then the line that pauses" \
	"^ +holder_sleeps\+0x[0-9a-f]+ \(.*scenario\.c:$(line_of HOLDSLEEP_PAUSES), scenario\)" "$WORK/sleep.1"
# It runs: asked with a signal, its stack is captured by a signal handler
# on that thread; the frames of the handler and of the signal trampoline
# it returns to are not where the thread is, and are left out: the first
# frame is the holder's loop.
dump_holder spin holdspin
expect_grep "holdspin: the running holder's first frame is its loop, at its line" \
	"^  thread [0-9]+ is not waiting for a mutex; it is now at holder_spins\+0x[0-9a-f]+ \(.*scenario\.c:$(line_of HOLDSPIN_RUNS), scenario\)" "$WORK/spin.1"

# ---- dining philosophers, all five hungry at once: a 5-thread cycle -------
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/phil" \
	"$B/examples/deadlock_philosophers" hang > "$WORK/out" 2> "$WORK/err" &
pid=$!
wait_for "$WORK/out" '^all five wait for their right fork$' 20 && pass "philosophers: hung" || fail "philosophers: never hung"
kill -USR1 $pid
wait_for "$WORK/phil.1" '^Top ' 20 || fail "philosophers: no dump"
# each fork's section, as its writer gets there: one thread waits for it now
waiting_now() { grep -Ec '^  trylock .*; most waiters at once [0-9]+ \(1 now\); ' "$WORK/phil.1"; }
for tenth in $(seq 100); do [ "$(waiting_now)" -ge 5 ] && break; sleep 0.1; done
kill -9 $pid; wait $pid 2>/dev/null
expect_eq "philosophers: each fork has one thread waiting for it now" "$(waiting_now)" 5
PSRC=$top_srcdir/examples/deadlock_philosophers.c
expect_grep "philosophers: the cycle of five" '^DEADLOCK: 5 threads wait for each other, forever$' "$WORK/phil.1"
expect_eq "philosophers: each waits for its right fork" \
	"$(grep -Ec "waits at +philosopher\+0x[0-9a-f]+ \(.*deadlock_philosophers\.c:$(grep -n HANG_RIGHT "$PSRC" | cut -d: -f1)," "$WORK/phil.1")" 5
awk '/^DEADLOCK:/ { on = 1 } on && /^$/ { exit } on' "$WORK/phil.1" > "$WORK/phil.cycle"
expect_eq "philosophers: each right fork is a neighbour's left" \
	"$(grep -Ec "held by thread [0-9]+, taken at philosopher\+0x[0-9a-f]+ \(.*deadlock_philosophers\.c:$(grep -n HANG_LEFT "$PSRC" | cut -d: -f1)," "$WORK/phil.cycle")" 5

# ---- a condition wait holding the mutex its signaller needs --------------
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/cdump" \
	"$B/tests/scenario" condhang > "$WORK/out" 2> "$WORK/err" &
pid=$!
wait_for "$WORK/out" '^hung$' 20 && pass "condhang: hung" || fail "condhang: never hung"
kill -USR1 $pid
wait_for "$WORK/cdump.1" '^Top ' 20 || fail "condhang: no dump"
kill -9 $pid; wait $pid 2>/dev/null
expect_grep "condhang: a deadlock" \
	'^DEADLOCK: thread [0-9]+ waits for a condition while holding a mutex other threads wait for$' "$WORK/cdump.1"
expect_grep "condhang: the signaller blocks on the held mutex" \
	"waits at +cond_signaller\+0x[0-9a-f]+ \(.*scenario\.c:$(line_of CONDHANG_BLOCKS)," "$WORK/cdump.1"
expect_grep "condhang: where the other waits for the condition" \
	"waits at +cond_waiter\+0x[0-9a-f]+ \(.*scenario\.c:$(line_of CONDHANG_WAITS)," "$WORK/cdump.1"

# ---- a condition wait that is over, its thread not asleep: no deadlock ------
# The holder of the mutex main waits for is in a condition wait, but runs
# (a handler of a signal it got there loops): a chain ending at a condition
# wait is a DEADLOCK only if that thread still sleeps in it after a while.
# (A thread whose 1 ms timed wait had timed out, left without a CPU by a
# loaded machine for that while, made a DEADLOCK that never was.)
: >"$WORK/out"
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/busy" \
	"$B/tests/scenario" condbusy > "$WORK/out" 2> "$WORK/err" &
pid=$!
wait_for "$WORK/out" '^waiting$' 20 || fail "condbusy: never waited"
kill -USR1 $pid
wait_for "$WORK/busy.1" '^Top ' 20 || fail "condbusy: no dump"
kill -9 $pid; wait $pid 2>/dev/null
expect_no_grep "condbusy: no DEADLOCK" '^DEADLOCK' "$WORK/busy.1"
expect_grep "condbusy: a WAIT CHAIN, to the holder in its condition wait" \
	'^  thread [0-9]+ waits for a condition \(mutex 0x[0-9a-f]+\) for ' "$WORK/busy.1"

# ---- a mutex passed around, its holders' condition waits: no deadlock --------
# Each of 32 threads holds m1 for 200 us, lets it go, then waits 5 ms for a
# condition of its own: at any moment threads wait for m1, and its holder
# of a moment ago is in a condition wait.  The dump reads the threads while
# they go on (and symbolises between findings): the waits it puts together
# must have been under way at the same moment, or a wait for m1 is joined
# to a holder that has let go and waits for its condition, a DEADLOCK that
# never was (before: some 70 in the ten dumps, and 100 "taken at ?").
# With "held", each holds m1 through a 1 ms condition wait: the moment is
# real, but it passes, so it is a WAIT CHAIN, not a DEADLOCK (the JVM holds
# its Threads_lock so while a thread it starts gets going).
# passing_dumps NAME [held]: ten dumps of `scenario passing`, checked.
passing_dumps() {
	name=$1; shift
	: >"$WORK/out" # the last run's "passing" is there until the job truncates it
	env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/$name" MUTEXSTAT_FORMAT=text,json \
		"$B/tests/scenario" passing 60 "$@" > "$WORK/out" 2> "$WORK/err" &
	pid=$!
	wait_for "$WORK/out" '^passing$' 20 || fail "$name: never started"
	k=1
	while [ $k -le 10 ]; do
		kill -USR1 $pid
		wait_for "$WORK/$name.$k.json" '^}' 20 || { fail "$name: no dump $k"; break; }
		k=$((k + 1))
	done
	kill $pid; wait $pid 2>/dev/null
	expect_eq "$name: ten dumps" "$(ls "$WORK" | grep -c "^$name\.[0-9]*\.txt$")" 10
	expect_eq "$name: no DEADLOCK in any" "$(cat "$WORK/$name".*.txt | grep -c '^DEADLOCK')" 0
	expect_eq "$name: no deadlock finding in the JSON" \
		"$(cat "$WORK/$name".*.json | grep -c '"kind": *"deadlock"')" 0
	chains=$(cat "$WORK/$name".*.txt | grep -c '^WAIT CHAIN:$')
	[ "$chains" -ge 1 ] && pass "$name: the waits for m1 are there ($chains wait chains)" ||
		fail "$name: no wait chain in ten dumps"
	expect_eq "$name: every holder named holds the mutex (no 'taken at ?')" \
		"$(cat "$WORK/$name".*.txt | grep -c 'taken at ?')" 0
}
passing_dumps pass
passing_dumps passheld held
n=$(cat "$WORK"/passheld.*.txt | grep -c '^  thread [0-9]* waits for a condition (mutex 0x[0-9a-f]*) for ')
[ "$n" -ge 1 ] && pass "passheld: chains end at the holder's condition wait ($n)" ||
	fail "passheld: no chain ended at a condition wait"

# ---- the watchdog --------------------------------------------------------
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_WATCHDOG=1 MUTEXSTAT_ON_DEADLOCK=abort \
	timeout 30 "$B/tests/scenario" hang > "$WORK/out" 2> "$WORK/err"
rc=$?
expect_eq "watchdog: aborted (SIGABRT)" "$rc" 134
expect_grep "watchdog: the report names the cycle first" '^DEADLOCK: 2 threads' "$WORK/err"
expect_eq "watchdog: one report" "$(grep -c '^mutexstat: scenario (pid' "$WORK/err")" 1

# ---- a process with one thread ----------------------------------------
# glibc runs a single-threaded process's mutexes without locked
# instructions, so the library adds no thread there until one is needed:
# a dump signal is answered at the process's next mutex call.
: >"$WORK/out"
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/one" \
	"$B/tests/scenario" onethread > "$WORK/out" 2> "$WORK/err" &
pid=$!
wait_for "$WORK/out" '^ready$' 20
expect_grep "one thread: the library adds none" '^threads 1$' "$WORK/out"
kill -USR1 $pid
if sanitized; then
	# ASan's malloc is not glibc's: no moment but the program's second
	# thread is safe for ours, so the signal does nothing (as with jemalloc)
	echo "skip: the dump of a process with one thread, beside ASan's malloc"
else
	if wait_for "$WORK/one.1" '^#1 mutex ' 20; then pass "one thread: the dump, at the next mutex call"
	else fail "one thread: no dump"; fi
	m1=$(awk '/^m1 / { print $2 }' "$WORK/out")
	expect_grep "one thread: its counts (10, then 1 after the signal)" "^ +1 $(top_label_re "$WORK/one.1" "$m1") +1[01] " "$WORK/one.1"
fi
kill $pid; wait $pid 2>/dev/null
# a program that starts a thread has the dump thread from then on
: > "$WORK/out"
: >"$WORK/out"
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/two" \
	"$B/tests/scenario" onethread thread > "$WORK/out" 2> "$WORK/err" &
pid=$!
wait_for "$WORK/out" '^ready$' 20
expect_grep "a thread started and joined: the dump thread remains" '^threads 2$' "$WORK/out"
kill -USR1 $pid
if wait_for "$WORK/two.1" '^#1 mutex ' 20; then pass "with threads: the dump"
else fail "with threads: no dump"; fi
kill $pid; wait $pid 2>/dev/null

# ---- thousands of dump signals while 4 threads lock hard -----------------
# (the lockers run niced so the sender, on a small machine, gets the CPU;
# they lock on until the first dump's file is there, which a loaded
# machine's scheduler could leave for more than the storm's 3 s)
: >"$WORK/out"
nice -n 15 env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/storm" \
	"$B/tests/scenario" hammer 3 until-dump > "$WORK/out" 2> "$WORK/err" &
pid=$!
wait_for "$WORK/out" '^hammering$' 20
env -u LD_PRELOAD "$B/tests/scenario" signal $pid > "$WORK/sent" &
sender=$!
wait $pid
rc=$?
expect_eq "storm: exit status" "$rc" 0
wait $sender
sent=$(awk '{ print $1 }' "$WORK/sent")
expect_grep "storm: counts exact" ' locks, counter [0-9]+, exact$' "$WORK/out"
[ "${sent:-0}" -ge 2000 ] && pass "storm: $sent signals in 3 s" || fail "storm: only ${sent:-0} signals sent"
dumps=$(ls "$WORK" | grep -c '^storm\.[0-9]')
[ "$dumps" -ge 1 ] && pass "storm: $dumps dumps written" || fail "storm: no dump written"
# dump signals until the process ends: no dump file is left empty (the
# exit report went first while a dump had made its file but not written
# it; now it waits for that dump, and no dump starts after it)
empty=0
for d in "$WORK"/storm.[0-9]*; do
	head -n 1 "$d" | grep -Eq '^mutexstat: scenario \(pid [0-9]+\) ran ' || empty=$((empty + 1))
done
expect_eq "storm: every dump file holds a report" "$empty" 0
locks=$(awk '/ locks, counter/ { print $1 }' "$WORK/out")
m1=$(awk '/^m1 / { print $2 }' "$WORK/out")
expect_grep "storm: the exit report counts every lock" "^ +[0-9]+ $(top_label_re "$WORK/storm" "$m1") +$locks " "$WORK/storm"
expect_eq "storm: nothing on stderr" "$(cat "$WORK/err")" ""

# ---- the exit report of a program exiting holding a mutex another waits for ----
# The holder is the thread writing the report: where it is starts below
# the library's frames (it used to start at glibc's syscall() and list the
# report's own functions).
timeout 20 env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/exitwait" \
	"$B/tests/scenario" exitwait > "$WORK/out" 2> "$WORK/err"
expect_eq "exitwait: status and output" "$?:$(cat "$WORK/out")" "0:exiting"
expect_grep "exitwait: the waiter's chain" '^  thread [0-9]+ "scenario" waits for mutex ' "$WORK/exitwait"
expect_grep "exitwait: the holder is in exit(), called from main" \
	'^  thread [0-9]+ is not waiting for a mutex; it is now at [_a-z]+\+' "$WORK/exitwait"
# (each frame under the first, which the words began)
col=$(sed -n 's/\(.*; it is now at \).*/\1/p' "$WORK/exitwait" | head -1 | wc -c)
expect_grep "exitwait: ... then exit and main, under the first frame" \
	"^ {$((col - 1))}main\+0x[0-9a-f]+ \(tests/scenario\.c:" "$WORK/exitwait"
expect_no_grep "exitwait: none of the library's frames" 'libmutexstat' "$WORK/exitwait"
finish
