# stall.sh - the watchdog's STALL (tests/stall.c, MUTEXSTAT_WATCHDOG=1): a
# lost wakeup and a semaphore nobody posts are reported with every
# thread, what it waits for and where, and abort with
# MUTEXSTAT_ON_DEADLOCK=abort; waits a deadline or another process ends,
# and an idle pool beside a sleeping main thread, are no stall at all;
# nor is a hang a DEADLOCK explains.
. "$top_srcdir/tests/lib.sh"
P=$top_builddir/tests/stall
SRC=$top_srcdir/tests/stall.c

line_of() { grep -n "/\* $1 \*/" "$SRC" | cut -d: -f1; }

# run MODE [VAR=VALUE...]: under the library with the watchdog and
# MUTEXSTAT_ON_DEADLOCK=abort; the report in $WORK/MODE, the status in $rc.
run() {
	mode=$1
	shift
	rm -f "$WORK/$mode" "$WORK/$mode".*
	rc=0
	timeout -s KILL 60 env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/$mode" \
		MUTEXSTAT_WATCHDOG=1 MUTEXSTAT_ON_DEADLOCK=abort "$@" \
		"$P" "$mode" >"$WORK/$mode.out" 2>"$WORK/$mode.err" || rc=$?
}

# field MODE KEY WORD: the third word of the line "KEY WORD ..." of its output
field() { awk -v k="$2" -v w="$3" '$1 == k && $2 == w { print $3; exit }' "$WORK/$1.out"; }

# ---- a lost wakeup ---------------------------------------------------------
run lost
R=$WORK/lost.1
expect_eq "lost: aborted after the report (SIGABRT)" "$rc" 134
expect_grep "lost: STALL, three threads, nothing can end it" \
	'^STALL: all 3 threads blocked in waits for 1\.[0-9]+ s or more, no mutex operation meanwhile, none can wake another$' "$R"
expect_grep "lost: main waits to join the first worker" \
	"^  thread $(field lost thread main) \"stall\" waits to join thread $(field lost thread w1), for " "$R"
# (a sanitized build merges main's calls of pthread_join into one)
join_line=$(line_of STALL_JOIN)
sanitized && join_line='[0-9]+'
expect_grep "lost: where main joins" \
	"^    waits at      main\+0x[0-9a-f]+ \(.*stall\.c:$join_line, stall\)$" "$R"
for w in w1 w2; do
	expect_grep "lost: $w waits for the condition and its mutex" \
		"^  thread $(field lost thread $w) \"stall\" waits for condition $(field lost cond c)( <[^>]+>)? \(mutex $(field lost mutex m)( <[^>]+>)?\), for " "$R"
done
expect_eq "lost: both workers wait at the condition wait's line" \
	"$(grep -c "^    waits at      waiter+0x[0-9a-f]* (.*stall\.c:$(line_of STALL_COND), stall)$" "$R")" 2
expect_no_grep "lost: no DEADLOCK (no mutex is held)" '^DEADLOCK' "$R"

# JSON: the same finding, for scripts
run lost MUTEXSTAT_FORMAT=json
J=$WORK/lost.1.json
expect_eq "lost, JSON: one stall of 3 threads" \
	"$(jq -c '[.findings[] | select(.kind == "stall") | .threads_blocked]' "$J")" '[3]'
expect_eq "lost, JSON: what each waits for" \
	"$(jq -r '.findings[] | select(.kind == "stall") | .threads[] | .waits_for' "$J" | sort | paste -sd' ' -)" \
	"condition condition join"
expect_eq "lost, JSON: the condition waits name their variables, as the text" \
	"$(jq -r '.findings[] | select(.kind == "stall") | .threads[] | "\(.object_symbol)/\(.mutex_symbol)"' "$J" | sort | paste -sd' ' -)" \
	"c/m c/m null/null"
expect_eq "lost, JSON: the join names its thread" \
	"$(jq -r '.findings[] | select(.kind == "stall") | .threads[] | select(.waits_for == "join") | .joins' "$J")" \
	"$(field lost thread w1)"

# A live dump of the lost wakeup, without the watchdog: the STALL is the
# watchdog's finding, but a hang through condition waits still shows
# what each thread waits for -- in the text, each condition wait of 1 s
# or more; in JSON's "threads", every one.
rm -f "$WORK/lostlive" "$WORK/lostlive".* "$WORK/lostlive.out"
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/lostlive" MUTEXSTAT_FORMAT=text,json \
	"$P" lost >"$WORK/lostlive.out" 2>"$WORK/lostlive.err" &
pid=$!
wait_for "$WORK/lostlive.out" '^both wait$' 20 || fail "lost, live: the workers never waited"
sleep 2.2 # their waits are 2 s or more (the text shows those of 1 s or more)
kill -USR1 "$pid"
# the JSON, written after the text, whole
wait_for "$WORK/lostlive.1.json" '^}' 20 || fail "lost, live: no dump"
kill -KILL "$pid"
wait "$pid" 2>/dev/null
R=$WORK/lostlive.1.txt
expect_grep "lost, live: the workers' condition waits, a section of their own" \
	'^Threads in a condition wait for 1 s or more \(no finding: an idle worker pool waits so too\):$' "$R"
for w in w1 w2; do
	expect_grep "lost, live: $w waits for the condition and its mutex" \
		"^  thread $(field lostlive thread $w) \"stall\" waits for condition $(field lostlive cond c)( <[^>]+>)? \(mutex $(field lostlive mutex m)( <[^>]+>)?\), for [2-9]\.[0-9]+ s\$" "$R"
done
expect_eq "lost, live: each at the condition wait's line" \
	"$(grep -c "^    waits at      waiter+0x[0-9a-f]* (.*stall\.c:$(line_of STALL_COND), stall)$" "$R")" 2
expect_no_grep "lost, live: no STALL without the watchdog" '^STALL' "$R"
expect_eq "lost, live, JSON: the workers' condition waits, their mutex, no deadline" \
	"$(jq -r '.threads[] | select(.condition_wait != null) | "\(.tid) \(.condition_wait.condition) \(.condition_wait.mutex) \(.condition_wait.timed) \(.condition_wait.at.line)"' \
		"$WORK/lostlive.1.json" | sort)" \
	"$(for w in w1 w2; do echo "$(field lostlive thread $w) $(field lostlive cond c) $(field lostlive mutex m) false $(line_of STALL_COND)"; done | sort)"

expect_eq "lost, live, JSON: the condition waits' variables" \
	"$(jq -r '.threads[] | select(.condition_wait != null) | "\(.condition_wait.condition_symbol)/\(.condition_wait.mutex_symbol)"' \
		"$WORK/lostlive.1.json")" "c/m
c/m"

# ---- a semaphore nobody posts, and a mutex behind it ------------------------
run sem
# the report the abort follows: the watchdog may write one of the mutex's
# 1 s wait before the STALL is 1 s old (the second worker's wait began
# before the first was seen asleep in sem_wait)
R=$(last_report "$WORK/sem")
expect_eq "sem: aborted after the report (SIGABRT)" "$rc" 134
expect_grep "sem: STALL of three threads" '^STALL: all 3 threads blocked in waits for ' "$R"
expect_grep "sem: the worker in sem_wait, a futex wait the library does not see" \
	"^  thread $(field sem thread w1) \"stall\" sleeps in a futex wait on 0x[0-9a-f]+, for 1\.[0-9]+ s or more$" "$R"
expect_grep "sem: what such a wait may be" \
	"^    \(sem_wait, a barrier, a lock the library does not see\)$" "$R"
expect_grep "sem: where it waits" "^                  sem_waiter\+0x[0-9a-f]+ \(.*stall\.c:$(line_of STALL_SEM), stall\)$" "$R"
expect_grep "sem: the other worker waits for the mutex the first holds" \
	"^  thread $(field sem thread w2) \"stall\" waits for mutex $(field sem mutex other)( <[^>]+>)? held by thread $(field sem thread w1), for " "$R"
expect_grep "sem: at its line" "^    waits at      other_waiter\+0x[0-9a-f]+ \(.*stall\.c:$(line_of STALL_MUTEX), stall\)$" "$R"

# ---- a process of one thread, waiting on a condition --------------------------
# (beside another malloc than glibc's -- a sanitized build's -- a process
# of one thread has no dump thread, so no watchdog: processes-and-signals.md)
if sanitized; then
	pass "alone: skipped in a sanitized build (ASan's malloc: no dump thread)"
else
	run alone
	R=$WORK/alone.1
	expect_eq "alone: aborted after the report (SIGABRT)" "$rc" 134
	expect_grep "alone: a STALL of the only thread" \
		'^STALL: the only thread blocked in a wait for 1\.[0-9]+ s or more, no mutex operation meanwhile, nothing can wake it$' "$R"
	expect_grep "alone: what it waits for" \
		"^  thread $(field alone thread main) \"stall\" waits for condition $(field alone cond c)( <[^>]+>)? \(mutex $(field alone mutex m)( <[^>]+>)?\), for " "$R"
	expect_grep "alone: where" "^    waits at      main\+0x[0-9a-f]+ \(.*stall\.c:$(line_of STALL_ALONE), stall\)$" "$R"
	expect_eq "alone: no line over 120 columns" \
		"$(sed 's/µ/u/g' "$R" | awk 'length($0) > 120' | wc -l)" 0
fi
expect_eq "lost and sem: no line over 120 columns" \
	"$(cat "$WORK/lost.1" "$WORK/sem.1" | sed 's/µ/u/g' | awk 'length($0) > 120' | wc -l)" 0

# ---- waits that something ends: no stall ------------------------------------
# A deadline ends the first, another process the second: the world outside,
# as for a thread in read() or nanosleep().  An armed alarm or POSIX timer
# the last two: its signal's handler posts what main waits for.
for mode in timed pshared alarm timer; do
	run $mode MUTEXSTAT_EXIT_CODE=7
	expect_eq "$mode: runs to its end, the run not failed" \
		"$rc $(tail -1 "$WORK/$mode.out")" "0 done"
	expect_no_grep "$mode: no STALL" '^STALL' "$WORK/$mode"
	expect_eq "$mode: no watchdog report" "$(ls "$WORK/$mode".1* 2>/dev/null)" ""
done

# ---- a daemon waiting for SIGTERM: a STALL with a caveat ---------------------
# Its SIGTERM handler posts the semaphore main waits on: another process's
# kill ends the stall, which the report says; it does not abort, nor fail
# the run (it aborted with SIGABRT before, and failed with EXIT_CODE).
rm -f "$WORK/term" "$WORK/term".*
rc=0
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/term" MUTEXSTAT_WATCHDOG=1 \
	MUTEXSTAT_ON_DEADLOCK=abort MUTEXSTAT_EXIT_CODE=7 "$P" term \
	>"$WORK/term.out" 2>"$WORK/term.err" &
pid=$!
for i in $(seq 1 200); do
	[ -s "$WORK/term.1" ] && break
	sleep 0.1
done
sleep 0.5 # the report written whole
kill -TERM "$pid" 2>/dev/null
wait "$pid" || rc=$?
R=$WORK/term.1
expect_eq "term: ended by its SIGTERM as without the library, the run not failed" \
	"$rc $(tail -1 "$WORK/term.out")" "0 done"
expect_grep "term: the STALL" '^STALL: all 2 threads blocked in waits for ' "$R"
expect_grep "term: what may end it" \
	'^  unless a signal ends a wait: the program handles SIGTERM, whose handler may wake a thread \(sem_post$' "$R"
expect_grep "term: ... and what it does not do" \
	'^  is async-signal-safe\): not counted for MUTEXSTAT_EXIT_CODE, no MUTEXSTAT_ON_DEADLOCK$' "$R"
expect_grep "term: main in its sem_wait" \
	"^  thread $(field term thread main) \"stall\" sleeps in a futex wait on 0x" "$R"
if command -v jq >/dev/null; then
	rm -f "$WORK/tj".*
	env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/tj" MUTEXSTAT_FORMAT=json \
		MUTEXSTAT_WATCHDOG=1 "$P" term >/dev/null 2>&1 &
	pid=$!
	for i in $(seq 1 200); do
		[ -s "$WORK/tj.1.json" ] && break
		sleep 0.1
	done
	sleep 0.5
	kill -TERM "$pid" 2>/dev/null
	wait "$pid"
	expect_eq "term, JSON: the stall's handled signal" \
		"$(jq -r '.findings[] | select(.kind == "stall") | .handled_signal' "$WORK/tj.1.json")" SIGTERM
fi

# ---- five threads behind one sleeping holder: one WAIT CHAIN ----------------
# Not a stall (the holder sleeps); the watchdog's report tells the five
# waits as one chain: the first in full, the others a line each, the
# holder where it sleeps once (it was five chains, each with its stack).
run behind-one
R=$WORK/behind-one.1
expect_eq "behind-one: runs to its end" "$rc $(tail -1 "$WORK/behind-one.out")" "0 done"
expect_no_grep "behind-one: no STALL" '^STALL' "$WORK/behind-one"
expect_eq "behind-one: one WAIT CHAIN" "$(grep -c '^WAIT CHAIN:$' "$R")" 1
expect_grep "behind-one: its first wait, in full" \
	"^    held by thread $(field behind-one thread holder), taken at sleeping_holder\+0x" "$R"
expect_eq "behind-one: the four others, a line each" \
	"$(grep -cE '^  thread [0-9]+ "stall" waits for it too, for [0-9.]+ [a-zµ]+$' "$R")" 4
expect_eq "behind-one: the holder, once" \
	"$(grep -c "^  thread $(field behind-one thread holder) is not waiting for a mutex; it is now at" "$R")" 1

# ---- an idle pool beside a sleeping main thread: no stall -------------------
run pool
expect_eq "pool: runs to its end" "$rc $(tail -1 "$WORK/pool.out")" "0 done"
expect_no_grep "pool: no STALL" '^STALL' "$WORK/pool"
expect_eq "pool: no watchdog report" "$(ls "$WORK"/pool.1* 2>/dev/null)" ""
# ---- a hang a deadlock explains: no STALL beside it ---------------------------
# (every thread blocked is a stall too, but the DEADLOCK says why; a STALL
# beside it was a second finding, with a suppression rule of its own)
# (a process of one thread has no dump thread beside ASan's malloc, and so
# no watchdog: doc/testing.md)
progs="$top_builddir/examples/deadlock_hang"
if sanitized; then
	echo "skip: the one-thread self-relock's watchdog (ASan's malloc)"
else
	progs="$progs:$top_builddir/tests/deadlocks self_relock"
fi
IFS=:
set -- $progs
unset IFS
for prog in "$@"; do
	name=$(basename "${prog%% *}")
	rm -f "$WORK/dl" "$WORK"/dl.*
	rc=0
	# shellcheck disable=SC2086 # a program and its mode
	timeout -s KILL 60 env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/dl" \
		MUTEXSTAT_WATCHDOG=1 MUTEXSTAT_ON_DEADLOCK=abort $prog >/dev/null 2>&1 || rc=$?
	expect_eq "$name: aborted after the report (SIGABRT)" "$rc" 134
	R=$(last_report "$WORK/dl")
	expect_grep "$name: the DEADLOCK (a SELF-DEADLOCK: the thread waits for itself)" \
		'^(DEADLOCK|SELF-DEADLOCK): ' "$R"
	expect_eq "$name: no STALL in any report" "$(cat "$WORK"/dl.* | grep -c '^STALL:')" 0
done

# ---- a recursive mutex whose condition wait lets go of one level ------------
# One hang, one finding: the STALL, not a DEADLOCK ("unless a thread
# outside this chain signals it") beside it -- every thread is blocked.
# And the mutex still locked is at its outer level's line, where the
# held-set is; the newest lock entry was the inner level's, which the
# condition wait gave back.
run recursive MUTEXSTAT_FORMAT=text,json
R=$WORK/recursive.1.txt
expect_eq "recursive: aborted after the report (SIGABRT)" "$rc" 134
expect_grep "recursive: a STALL" '^STALL: all 2 threads blocked in waits for ' "$R"
expect_no_grep "recursive: no DEADLOCK beside it" '^DEADLOCK' "$R"
expect_eq "recursive, JSON: the one finding" \
	"$(jq -c '[.findings[].kind]' "$WORK/recursive.1.json")" '["stall"]'
expect_grep "recursive: still locked, at its outer level" \
	"^  $(field recursive mutex rec)( <[^>]+>)? held by thread $(field recursive thread consumer)(, for [^,]+)?, taken at rec_consumer\+0x[0-9a-f]+ \(.*stall\.c:$(line_of RECURSIVE_OUTER), stall\)$" "$R"

# ---- a condition wait's retake: a wait for the mutex ------------------------
# A thread woken from its condition wait that blocks taking the mutex back
# waits for that mutex like any other (model.md): a live dump shows its
# wait, behind the holder.  It was in no line of the dump when nobody
# waited for it in turn -- only "Mutexes still locked" named the holder.
# live MODE NAME [ARG]: a live dump of `stall MODE` once its worker blocks
# taking m back, as $WORK/NAME.1.txt and .json; the program is left to
# $pid.
live() {
	rm -f "$WORK/$2" "$WORK/$2".*
	env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/$2" MUTEXSTAT_FORMAT=text,json \
		"$P" "$1" ${3+"$3"} >"$WORK/$2.out" 2>"$WORK/$2.err" &
	pid=$!
	wait_for "$WORK/$2.out" '^retaking$' 20 || fail "$1, live: the worker never blocked"
	sleep "${before_dump:-0}"
	kill -USR1 "$pid"
	wait_for "$WORK/$2.1.json" '^}' 20 || fail "$1, live: no dump"
}

# The holder, main, keeps m until the test lets it go: a WAIT CHAIN.
live retake-held rh "$WORK/rh.stop"
: >"$WORK/rh.stop"
wait_or_kill $pid 30
expect_eq "retake-held: runs to its end" "$? $(tail -1 "$WORK/rh.out")" "0 done"
R=$WORK/rh.1.txt
main=$(field rh thread main)
w1=$(field rh thread w1)
expect_grep "retake-held: a WAIT CHAIN" '^WAIT CHAIN:$' "$R"
expect_grep "retake-held: the worker waits for m again" \
	"^  thread $w1 \"stall\" waits for mutex $(field rh mutex m)( <[^>]+>)? again, to return from its condition wait \(in it for " "$R"
expect_grep "retake-held: ... at its condition wait's line" \
	"^    waits at      waiter\+0x[0-9a-f]+ \(.*stall\.c:$(line_of STALL_COND), stall\)$" "$R"
expect_grep "retake-held: held by main, where it took m" \
	"^    held by thread $main, taken at until_waiting\+0x[0-9a-f]+ \(.*stall\.c:$(line_of UNTIL_WAITING), stall\)$" "$R"
expect_grep "retake-held: main, at the chain's end, where it is" \
	"^  thread $main is not waiting for a mutex; it is now at " "$R"
expect_eq "retake-held, JSON: the chain, its retake, its end" \
	"$(jq -c '[.findings[] | select(.kind == "wait-chain") |
		[.threads[] | [.thread, .waits_for, .held_by, .retake]], .end.thread]' "$WORK/rh.1.json")" \
	"[[[$w1,\"$(field rh mutex m)\",$main,true]],$main]"
expect_eq "retake-held, JSON: the worker's thread waits for m, a retake, in its condition wait" \
	"$(jq -c ".threads[] | select(.tid == $w1) |
		[.waiting_for.mutex, .waiting_for.retake, .waiting_for.at.line, .condition_wait.mutex]" \
		"$WORK/rh.1.json")" \
	"[\"$(field rh mutex m)\",true,$(line_of STALL_COND),\"$(field rh mutex m)\"]"

# The holder sleeps in a condition wait nobody signals (and main joins the
# worker): a hang, as without the library.  The dump said only that the
# holder waits for a condition.  Its condition wait, 1 s old (the list of
# long condition waits shows those of 1 s or more), ends the DEADLOCK: it
# is not listed again as "no finding" (it was).
before_dump=1.1 live retake rt
kill -KILL "$pid"
wait "$pid" 2>/dev/null
R=$WORK/rt.1.txt
holder=$(field rt thread holder)
w1=$(field rt thread w1)
expect_grep "retake: a DEADLOCK, through the holder's condition wait" \
	"^DEADLOCK: thread $holder waits for a condition while holding a mutex other threads wait for$" "$R"
expect_grep "retake: the worker waits for m again" \
	"^  thread $w1 \"stall\" waits for mutex $(field rt mutex m)( <[^>]+>)? again, to return from its condition wait \(in it for " "$R"
expect_grep "retake: held by the holder, where it took m" \
	"^    held by thread $holder, taken at cond_holder\+0x[0-9a-f]+ \(.*stall\.c:$(line_of RETAKE_HOLDER_LOCKS), stall\)$" "$R"
expect_grep "retake: the holder's condition wait" \
	"^  thread $holder waits for a condition \(mutex $(field rt mutex other)( <[^>]+>)?\) for " "$R"
expect_no_grep "retake: the DEADLOCK's condition wait, not listed again as no finding" \
	'^Threads in a condition wait for ' "$R"
expect_eq "retake, JSON: the deadlock, its retake" \
	"$(jq -c '[.findings[] | select(.kind == "deadlock") |
		[.condition_mutex, [.threads[] | [.thread, .waits_for, .held_by, .retake]]]]' "$WORK/rt.1.json")" \
	"[[\"$(field rt mutex other)\",[[$w1,\"$(field rt mutex m)\",$holder,true]]]]"

# The watchdog's STALL of the same hang: the worker waits for m, held by
# the holder (it said the worker "waits for condition c (mutex m)", and
# hid whom it waits for); the holder waits for its condition.
run retake MUTEXSTAT_FORMAT=text,json
R=$WORK/retake.1.txt
holder=$(field retake thread holder)
expect_eq "retake, STALL: aborted after the report (SIGABRT)" "$rc" 134
expect_grep "retake, STALL: all three threads" '^STALL: all 3 threads blocked in waits for ' "$R"
expect_grep "retake, STALL: the worker waits for m, held by the holder" \
	"^  thread $(field retake thread w1) \"stall\" waits for mutex $(field retake mutex m)( <[^>]+>)? held by thread $holder again,$" "$R"
expect_grep "retake, STALL: ... to return from its condition wait" \
	"^    to return from its condition wait \(in it for [0-9.]+ [a-zµ]+\)$" "$R"
expect_grep "retake, STALL: ... at its condition wait's line" \
	"^    waits at      waiter\+0x[0-9a-f]+ \(.*stall\.c:$(line_of STALL_COND), stall\)$" "$R"
expect_grep "retake, STALL: the holder waits for its condition" \
	"^  thread $holder \"stall\" waits for condition $(field retake cond c2)( <[^>]+>)? \(mutex $(field retake mutex other)( <[^>]+>)?\), for " "$R"
expect_no_grep "retake, STALL: the one finding, no DEADLOCK beside it" '^DEADLOCK' "$R"
expect_eq "retake, STALL: no line over 120 columns" \
	"$(sed -n '/^STALL/,/^$/p' "$R" | sed 's/µ/u/g' | awk 'length($0) > 120' | wc -l)" 0
expect_eq "retake, STALL, JSON: what each waits for, held by whom" \
	"$(jq -r '.findings[] | select(.kind == "stall") | .threads[] |
		"\(.thread) \(.waits_for) \(.mutex) \(.held_by) \(.retake)"' "$WORK/retake.1.json" | sort)" \
	"$(printf '%s\n' "$(field retake thread main) join null null false" \
		"$(field retake thread w1) mutex $(field retake mutex m) $holder true" \
		"$holder condition $(field retake mutex other) null false" | sort)"

# A STALL is every thread in the same wait for N seconds: a retake's
# wait begins when it blocks, not when its condition wait did.  The
# worker, in its condition wait 3 s, is woken by a thread that then
# ends: the STALL came at once, "for 3.xx s or more" (the retake 0.25 s
# old at most); now when the retake is 1 s old.  The worker's line still
# gives its condition wait's time.
run retake-late
R=$WORK/retake-late.1
expect_eq "retake-late, STALL: aborted after the report (SIGABRT)" "$rc" 134
expect_grep "retake-late, STALL: blocked for the retake's time" \
	'^STALL: all 3 threads blocked in waits for 1\.[0-9]+ s or more, ' "$R"
expect_grep "retake-late, STALL: the worker's line, its condition wait's time" \
	"^  thread $(field retake-late thread w1) \"stall\" waits for mutex $(field retake-late mutex m)( <[^>]+>)? held by thread $(field retake-late thread holder) again,$" "$R"
expect_grep "retake-late, STALL: ... in its condition wait 4 s or more" \
	'^    to return from its condition wait \(in it for ([4-9]|[1-9][0-9])\.[0-9]+ s\)$' "$R"

# A retake's long wait is a long wait: the watchdog reports it when the
# process is not stalled (main sleeps, so it may end the wait), and does
# not abort -- as for a thread waiting in pthread_mutex_lock.  It wrote
# no report at all: its long waits were those of pthread_mutex_lock only.
# watch MODE NAME: `stall MODE FILE` under the watchdog with
# MUTEXSTAT_ON_DEADLOCK=abort until its report has its table (20 s at
# most), then FILE lets it end; its status in $rc.
watch() {
	rm -f "$WORK/$2" "$WORK/$2".*
	env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/$2" MUTEXSTAT_FORMAT=text,json \
		MUTEXSTAT_WATCHDOG=1 MUTEXSTAT_ON_DEADLOCK=abort \
		"$P" "$1" "$WORK/$2.stop" >"$WORK/$2.out" 2>"$WORK/$2.err" &
	pid=$!
	wait_for "$WORK/$2.1.txt" '^Top ' 20 || fail "$1, watchdog: no report in 20 s"
	wait_for "$WORK/$2.1.json" '^}' 10
	: >"$WORK/$2.stop"
	rc=0
	wait_or_kill $pid 30 || rc=$?
}

# Behind main, which keeps m (and sleeps): a WAIT CHAIN.
watch retake-held wrh
R=$WORK/wrh.1.txt
expect_eq "retake-held, watchdog: reported, not aborted, runs to its end" \
	"$rc $(tail -1 "$WORK/wrh.out")" "0 done"
expect_grep "retake-held, watchdog: the watchdog's report" \
	"^  the watchdog's report \(MUTEXSTAT_WATCHDOG\): a thread has waited that long$" "$R"
expect_grep "retake-held, watchdog: a WAIT CHAIN" '^WAIT CHAIN:$' "$R"
expect_grep "retake-held, watchdog: the worker waits for m again" \
	"^  thread $(field wrh thread w1) \"stall\" waits for mutex $(field wrh mutex m)( <[^>]+>)? again, to return from its condition wait \(in it for " "$R"
expect_grep "retake-held, watchdog: held by main" \
	"^    held by thread $(field wrh thread main), taken at until_waiting\+0x" "$R"
expect_no_grep "retake-held, watchdog: no STALL (main sleeps)" '^STALL' "$R"

# Behind the holder in a condition wait of its own: the DEADLOCK a live
# dump shows, "unless a thread outside this chain signals it" -- main,
# which does.
watch retake-slow wrs
R=$WORK/wrs.1.txt
holder=$(field wrs thread holder)
expect_eq "retake-slow, watchdog: reported, not aborted, runs to its end" \
	"$rc $(tail -1 "$WORK/wrs.out")" "0 done"
expect_grep "retake-slow, watchdog: a DEADLOCK through the holder's condition wait" \
	"^DEADLOCK: thread $holder waits for a condition while holding a mutex other threads wait for$" "$R"
expect_grep "retake-slow, watchdog: ... unless a thread outside it signals" \
	'^  \(unless a thread outside this chain signals it\)$' "$R"
expect_grep "retake-slow, watchdog: the worker waits for m again, held by the holder" \
	"^  thread $(field wrs thread w1) \"stall\" waits for mutex $(field wrs mutex m)( <[^>]+>)? again, to return from its condition wait \(in it for " "$R"
expect_no_grep "retake-slow, watchdog: no STALL (main sleeps)" '^STALL' "$R"
expect_eq "retake-slow, watchdog, JSON: the deadlock, its retake" \
	"$(jq -c '[.findings[] | select(.kind == "deadlock") |
		[.threads[] | [.thread, .held_by, .retake]]]' "$WORK/wrs.1.json")" \
	"[[[$(field wrs thread w1),$holder,true]]]"
expect_eq "retake-held and retake-slow, watchdog: one report each" \
	"$(cd "$WORK" && ls wrh.[0-9]* wrs.[0-9]* | paste -sd' ' -)" \
	"wrh.1.json wrh.1.txt wrs.1.json wrs.1.txt"

finish
