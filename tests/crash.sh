# tests/crash.sh - MUTEXSTAT_ON_CRASH=report: a program that dies of
# SIGSEGV, SIGBUS, SIGFPE, SIGILL or SIGABRT (a fault -- also one inside
# glibc under our pthread_mutex_lock --, abort, or kill from
# outside) leaves the report -- with a crash line and the mutexes the
# crashed thread held -- and then dies of the same signal as without the
# library (same status, same core dump, same output).  Two threads crashing
# at once leave one report; a report that cannot finish (the dump thread
# stuck on a FIFO nobody reads) is given up after 5 s without progress.  A
# program's own handler, installed before or after the library starts, runs
# as before.  Off by default: nothing is installed, no report is written.

. "$top_srcdir/tests/lib.sh"

B=$top_builddir
CRASH="$B/tests/crash"
RUN="$B/tests/run_hostile"
SRC="$top_srcdir/tests/crash.c"
line_of() { grep -n "$1" "$SRC" | cut -d: -f1; }
CC=${CC:-cc}
san_leave_signals # (a sanitized build: ASan would catch them first)

# crash_run REPORT MODE [VAR=value...]: tests/crash MODE under the library
# with MUTEXSTAT_ON_CRASH=report; how it ended and its stdout in $WORK/out,
# its stderr in $WORK/err.
crash_run() {
	report=$1 mode=$2; shift 2
	rm -f "$report"
	"$RUN" env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_ON_CRASH=report \
	    MUTEXSTAT_OUTPUT="$report" "$@" "$CRASH" $mode >"$WORK/out" 2>"$WORK/err"
}

# bare MODE: how tests/crash MODE ends without the library.
bare() {
	"$RUN" "$CRASH" "$@" 2>/dev/null
}

# expect_crash_report WHAT FILE SIGNAL WHY-REGEX HELD-LINE: the report has
# the crash line, and lists the mutex the crashed thread holds, taken at
# crash.c:HELD-LINE.
expect_crash_report() {
	expect_grep "$1: the report" '^mutexstat: crash \(pid [0-9]+\) ran ' "$2"
	line=$(grep '^  crash: ' "$2" | head -n 1)
	case $line in
	"  crash: SIG$3 ("*") in thread "*" \"crash\"; the usual effect follows")
		pass "$1: the crash line" ;;
	*) fail "$1: the crash line: '$line'"; sed 's/^/  | /' "$2" >&2 ;;
	esac
	if printf '%s\n' "$line" | grep -Eq "^  crash: SIG$3 \($4\) "; then
		pass "$1: the crash line says $4"
	else fail "$1: the crash line does not say /$4/: '$line'"; fi
	tid=$(printf '%s\n' "$line" | sed -n 's/.* in thread \([0-9]*\) .*/\1/p')
	expect_grep "$1: the crashed thread's mutex is still locked, where it took it" \
	    "^  0x[0-9a-f]+( <[^>]+>)? held by thread $tid, taken at [a-z_]+\+0x[0-9a-f]+ \(tests/crash\.c:$5, crash\)$" "$2"
}

# ---- each fatal signal (bad-mutex: inside our pthread_mutex_lock) -------------------------------------------------------

HELD=$(line_of CRASH_HELD)
for case in "segv SEGV a fault at address 0x10" \
    "abort ABRT raised by the process itself" \
    "bus BUS a fault at address 0x[0-9a-f]+" \
    "fpe FPE a fault at address 0x[0-9a-f]+" \
    "ill ILL a fault at address 0x[0-9a-f]+" \
    "bad-mutex SEGV a fault at address 0x[0-9a-f]+"; do
	set -- $case
	mode=$1 sig=$2; shift 2
	why=$*
	want=$(bare "$mode")
	expect_eq "$mode: without the library" "$want" "before the crash
signal $sig"
	crash_run "$WORK/$mode.txt" "$mode"
	expect_eq "$mode: the same output and end with the library" "$(cat "$WORK/out")" "$want"
	expect_eq "$mode: nothing on stderr" "$(cat "$WORK/err")" ""
	expect_crash_report "$mode" "$WORK/$mode.txt" "$sig" "$why" "$HELD"
done

crash_run "$WORK/thread.txt" segv-thread
expect_eq "a crash in another thread: output and end" "$(cat "$WORK/out")" "$(bare segv-thread)"
expect_crash_report "a crash in another thread" "$WORK/thread.txt" SEGV \
    "a fault at address 0x10" "$(line_of CRASH_THREAD_HELD)"
expect_no_grep "a crash in another thread: its name is not the main thread's" \
    "in thread $(sed -n 's/^mutexstat: crash (pid \([0-9]*\)).*/\1/p' "$WORK/thread.txt") " \
    "$WORK/thread.txt"

crash_run "$WORK/two.txt" segv-two
expect_eq "two threads crash at once: output and end" "$(cat "$WORK/out")" "before the crash
signal SEGV"
expect_eq "two threads crash at once: one report" \
    "$(grep -c '^mutexstat: crash (pid' "$WORK/two.txt") $(grep -c '^  crash: SIGSEGV' "$WORK/two.txt")" "1 1"
expect_eq "two threads crash at once: nothing on stderr" "$(cat "$WORK/err")" ""

crash_run "$WORK/fork.txt" fork-segv
expect_eq "a child of fork crashes: as without the library" "$(cat "$WORK/out")" "$(bare fork-segv)"
expect_eq "a child of fork crashes: how it ended" "$(cat "$WORK/out")" "before the crash
child: SEGV
exit 0"
expect_eq "a child of fork crashes: one line says there is no crash report" "$(cat "$WORK/err")" \
    "mutexstat: SIGSEGV in a process without a dump thread (a child of fork); no crash report"
expect_no_grep "a child of fork crashes: the parent's exit report has no crash line" '^  crash: ' \
    "$WORK/fork.txt"
expect_grep "a child of fork crashes: the parent's exit report" '^mutexstat: crash \(pid [0-9]+\) ran ' \
    "$WORK/fork.txt"

# A vfork child runs in its parent's memory: its crash claimed the parent's
# crash report, whose exit report then read as a crash of the child's pid;
# and a later crash of the parent waited 5 s and left no report.
crash_run "$WORK/vfork.txt" vfork-segv
expect_eq "a vfork child crashes: how it ended" "$(cat "$WORK/out")" "before the crash
child: SEGV
exit 0"
expect_eq "a vfork child crashes: one line says there is no crash report" "$(cat "$WORK/err")" \
    "mutexstat: SIGSEGV in a vfork child before its exec; no crash report"
expect_no_grep "a vfork child crashes: the parent's exit report has no crash line" '^  crash: ' \
    "$WORK/vfork.txt"
expect_grep "a vfork child crashes: the parent's exit report" '^mutexstat: crash \(pid [0-9]+\) ran ' \
    "$WORK/vfork.txt"
# A vfork child whose exec failed calls exit(), not _exit: glibc runs the
# exit handlers there, in the parent's memory, and spends them -- the
# parent's exit runs none.  The report is the child's exit's, the
# process's numbers until then, and says so; MUTEXSTAT_EXIT_CODE leaves
# the child's status alone (it is the program's).
rm -f "$WORK"/vexit.*
rc=0
"$RUN" env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/vexit.%p" MUTEXSTAT_EXIT_CODE=9 \
    "$CRASH" vfork-exit >"$WORK/out" 2>"$WORK/err" || rc=$?
brc=0
bout=$("$RUN" "$CRASH" vfork-exit 2>/dev/null) || brc=$?
expect_eq "vfork-exit: output and status as without the library" "$rc $(cat "$WORK/out")" "$brc $bout"
expect_eq "vfork-exit: the child's status is its own" "$(grep -c '^child: exit 3$' "$WORK/out")" 1
set -- "$WORK"/vexit.*
expect_eq "vfork-exit: one report" "$#" 1
expect_grep "vfork-exit: it says where it was written" \
    '^  written by a vfork child \(pid [0-9]+\) that called exit\(\) before its exec: process [0-9]+.s exit handlers ran there' "$1"
expect_grep "vfork-exit: with the process's finding" '^POTENTIAL DEADLOCK: 2 mutexes' "$1"
# ... and a parent that ends with exit(): the library sees that end, and
# writes the parent's own report and its exit code there
rm -f "$WORK"/vexit.*
rc=0
"$RUN" env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/vexit.%p" MUTEXSTAT_EXIT_CODE=9 \
    "$CRASH" vfork-exit exit >"$WORK/out" 2>"$WORK/err" || rc=$?
expect_eq "vfork-exit, then exit(): the child's status is its own" "$(grep -c '^child: exit 3$' "$WORK/out")" 1
expect_grep "vfork-exit, then exit(): the parent's finding gives its exit code" '^exit 9$' "$WORK/out"
expect_eq "vfork-exit, then exit(): two reports, the child's saying where it was written" \
	"$(ls "$WORK"/vexit.* | wc -l) $(grep -l '^  written by a vfork child' "$WORK"/vexit.* | wc -l)" "2 1"
crash_run "$WORK/vfork2.txt" "vfork-segv abort"
expect_eq "a vfork child crashes, then its parent aborts: as without the library" \
    "$(cat "$WORK/out")" "$(bare vfork-segv abort)"
expect_grep "... the parent's crash report" '^  crash: SIGABRT ' "$WORK/vfork2.txt"

# ---- the report in every format ----------------------------------------------

crash_run "$WORK/all" abort MUTEXSTAT_FORMAT=text,json
expect_eq "text and json: output and end" "$(cat "$WORK/out")" "$(bare abort)"
expect_grep "text and json: the text report" '^  crash: SIGABRT ' "$WORK/all.txt"
if command -v jq >/dev/null 2>&1; then
	expect_eq "json: the crash: signal, thread, no address, sent by the process itself" \
	    "$(jq -c '[.crash.signal, .crash.tid > 0, .crash.address, .crash.sender_pid == .pid]' \
		"$WORK/all.json")" '["ABRT",true,null,true]'
else
	expect_grep "json: the crash" '"crash": *\{"signal": *"ABRT"' "$WORK/all.json"
fi

# ---- the launcher's --on-crash ------------------------------------------------

"$RUN" "$B/scripts/mutexstat" --lib "$MUTEXSTAT_LIB" --on-crash report -o "$WORK/launched.txt" \
    "$CRASH" segv >"$WORK/out" 2>"$WORK/err"
expect_eq "mutexstat --on-crash report: output and end" "$(cat "$WORK/out")" "$(bare segv)"
expect_grep "mutexstat --on-crash report: the crash report" '^  crash: SIGSEGV ' "$WORK/launched.txt"
"$RUN" "$B/scripts/mutexstat" --lib "$MUTEXSTAT_LIB" --on-crash sometimes "$CRASH" segv \
    >"$WORK/out" 2>"$WORK/err"
expect_eq "mutexstat --on-crash sometimes: refused" "$(head -n 1 "$WORK/err") $(cat "$WORK/out")" \
    "mutexstat: --on-crash 'sometimes' is not report or off exit 2"

# ---- sent from outside -------------------------------------------------------

rm -f "$WORK/killed.txt"
: >"$WORK/out" # the background job truncates it only once it runs
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_ON_CRASH=report MUTEXSTAT_OUTPUT="$WORK/killed.txt" \
    "$CRASH" wait >"$WORK/out" 2>"$WORK/err" &
pid=$!
n=0
until grep -q '^ready$' "$WORK/out" 2>/dev/null || [ $n -ge 200 ]; do sleep 0.1; n=$((n + 1)); done
kill -SEGV $pid
wait_or_kill $pid 30
rc=$?
expect_eq "kill -SEGV: it dies of SIGSEGV (128 + 11)" "$rc" 139
expect_crash_report "kill -SEGV" "$WORK/killed.txt" SEGV "sent by pid $$" "$HELD"

# ---- the core dump, where cores are plain files in the working directory ----

pattern=$(cat /proc/sys/kernel/core_pattern 2>/dev/null)
case $pattern in
*/* | *'|'* | '')
	echo "skipped: core dumps (core_pattern '$pattern' does not write here)" ;;
*)
	mkdir "$WORK/cores"
	bare_core=$(cd "$WORK/cores" && ulimit -c unlimited && "$RUN" "$CRASH" segv 2>/dev/null)
	rm -f "$WORK/cores"/*
	with_core=$(cd "$WORK/cores" && ulimit -c unlimited && "$RUN" env LD_PRELOAD="$MS_PRELOAD" \
	    MUTEXSTAT_ON_CRASH=report MUTEXSTAT_OUTPUT="$WORK/core.txt" "$CRASH" segv 2>/dev/null)
	expect_eq "core dump: without the library" "$bare_core" "before the crash
signal SEGV core"
	expect_eq "core dump: the same with the library" "$with_core" "$bare_core"
	expect_eq "core dump: a core file" "$(ls "$WORK/cores" | grep -c '^core')" 1
	expect_grep "core dump: and the report" '^  crash: SIGSEGV ' "$WORK/core.txt"
	rm -rf "$WORK/cores" ;;
esac

# ---- the program's own handler -----------------------------------------------

crash_run "$WORK/own.txt" own-after
expect_eq "own handler installed after start-up: it runs as before" \
    "$(cat "$WORK/out")" "$(bare own-after)"
expect_eq "own handler: its exit" "$(tail -n 1 "$WORK/out")" "exit 42"
expect_eq "own handler: no crash report, no exit report (it called _exit)" \
    "$(test -e "$WORK/own.txt" && echo written)" ""

crash_run "$WORK/chain.txt" own-chain
expect_eq "own handler passing the signal on: as before" "$(cat "$WORK/out")" "before the crash
own handler
signal SEGV"
expect_eq "own handler passing the signal on: the same without the library" \
    "$(bare own-chain)" "$(cat "$WORK/out")"
expect_crash_report "own handler passing the signal on to ours" "$WORK/chain.txt" SEGV \
    "a fault at address 0x10" "$HELD"

# a handler installed before the library starts (a library constructor
# that runs before ours) is left in place, with one line saying so
cat >"$WORK/early.c" <<'EOF'
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
static void early_handler(int sig)
{
	(void)sig;
	if (write(1, "early handler\n", 14) < 0) {
	}
	_exit(43);
}
__attribute__((constructor)) static void early(void)
{
	struct sigaction old;
	sigaction(SIGSEGV, NULL, &old);
	fprintf(stderr, "early: SIGSEGV was %s\n", old.sa_handler == SIG_DFL ? "default" : "taken");
	signal(SIGSEGV, early_handler);
}
EOF
if "$CC" -shared -fPIC -o "$WORK/early.so" "$WORK/early.c"; then
	rm -f "$WORK/early.txt"
	"$RUN" env LD_PRELOAD="$MS_PRELOAD:$WORK/early.so" MUTEXSTAT_ON_CRASH=report \
	    MUTEXSTAT_OUTPUT="$WORK/early.txt" "$CRASH" segv >"$WORK/out" 2>"$WORK/err"
	expect_eq "own handler from before start-up: it runs" "$(cat "$WORK/out")" \
	    "$("$RUN" env LD_PRELOAD="$SAN_FIRST$WORK/early.so" "$CRASH" segv 2>/dev/null)"
	expect_eq "own handler from before start-up: its exit" "$(tail -n 1 "$WORK/out")" "exit 43"
	if [ "$(head -n 1 "$WORK/err")" = "early: SIGSEGV was default" ]; then
		expect_eq "own handler from before start-up: the note" "$(sed 1d "$WORK/err")" \
		    "mutexstat: no crash report for SIGSEGV: the program handles (or ignores) it itself"
	else
		echo "note: the library started before early.so here; its handler replaced ours"
	fi
else
	fail "cannot compile a shared library with $CC"
fi

# ---- a report that cannot finish ---------------------------------------------

mkfifo "$WORK/stuck.1"
rc=0
timeout 60 "$RUN" env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_ON_CRASH=report MUTEXSTAT_TOP=3000 \
    MUTEXSTAT_OUTPUT="$WORK/stuck" "$CRASH" stuck "$WORK/stuck.1" >"$WORK/out" 2>"$WORK/err" || rc=$?
expect_eq "the dump thread stuck: the crash goes on" "$rc $(cat "$WORK/out")" "0 before the crash
signal SEGV"
expect_eq "the dump thread stuck: one line says so" "$(cat "$WORK/err")" \
    "mutexstat: the crash report did not finish; SIGSEGV goes on"

# ---- the watchdog's abort (MUTEXSTAT_ON_DEADLOCK=abort) is not a crash -------

"$RUN" env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_ON_CRASH=report MUTEXSTAT_WATCHDOG=1 \
    MUTEXSTAT_ON_DEADLOCK=abort timeout 30 "$B/tests/scenario" hang >"$WORK/out" 2>"$WORK/err"
expect_eq "watchdog abort: it aborts" "$(tail -n 1 "$WORK/out")" "signal ABRT"
expect_eq "watchdog abort: one report, the watchdog's" \
    "$(grep -c '^mutexstat: scenario (pid' "$WORK/err")" 1
expect_no_grep "watchdog abort: no crash line, no note" '^  crash: |^mutexstat: SIG' "$WORK/err"

# ---- off by default -------------------------------------------------------------

expect_eq "off: what the program sees of the fatal signals" \
    "$(env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/off.txt" "$CRASH" dispositions)" \
    "$("$CRASH" dispositions)"
expect_eq "on: the program sees our handlers (why it is off by default)" \
    "$(env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_ON_CRASH=report MUTEXSTAT_OUTPUT="$WORK/on.txt" \
	"$CRASH" dispositions | tr '\n' ' ')" \
    "SIGSEGV handled SIGBUS handled SIGFPE handled SIGILL handled SIGABRT handled "
rm -f "$WORK/off.txt"
"$RUN" env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/off.txt" "$CRASH" segv \
    >"$WORK/out" 2>"$WORK/err"
expect_eq "off: the crash as without the library" "$(cat "$WORK/out")" "$(bare segv)"
expect_eq "off: no report" "$(test -e "$WORK/off.txt" && echo written)" ""
expect_eq "off: nothing on stderr" "$(cat "$WORK/err")" ""

finish
