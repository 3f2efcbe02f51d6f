# real_python.sh - Debian's python3 running a threaded workload (threads,
# queue.Queue, locks, a condition, a barrier; tests/real_python.py) prints
# the same line and exits the same way under the library, and the report
# is complete: the GIL, a pthread mutex with a condition variable, is
# there with its condition waits.  And Python sees SIGUSR1 as without the
# library.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/real_lib.sh"
PY=/usr/bin/python3
need_program python3 "$PY"
SCRIPT=$top_srcdir/tests/real_python.py

"$PY" "$SCRIPT" > "$WORK/bare.out" 2> "$WORK/bare.err"
bare_rc=$?
run_with "$WORK/out" "$WORK/err" "$PY" "$SCRIPT"
rc=$?
expect_eq "exit status" "$rc" "$bare_rc"
expect_eq "exit status is success" "$bare_rc" 0
expect_eq "printed results" "$(cat "$WORK/out")" "$(cat "$WORK/bare.out")"
expect_eq "stderr" "$(cat "$WORK/err")" "$(cat "$WORK/bare.err")"
expect_grep "the work was done" '^40000 799980000 [0-9a-f]{64}$' "$WORK/out"
report_complete "report" "$WORK/report" python3
expect_grep "nine threads (main and eight workers) used mutexes" \
	': 9 threads used (mutexes|locks),' "$WORK/report"
expect_grep "the GIL's condition waits were seen" \
	'^  trylock [0-9]+ ok, [0-9]+ busy; timed out [0-9]+; most waiters at once [0-9]+; condition waits [1-9][0-9]*;' \
	"$WORK/report"
# Python reads every signal's handler at start-up: SIGUSR1's, with the
# library's live-dump handler on it, is the default it would be without
# (it was None, "a handler not installed from Python", and code that saves
# and restores it with signal.signal raised TypeError).
SIGCODE='import signal, os
print(signal.getsignal(signal.SIGUSR1) == signal.SIG_DFL)
old = signal.signal(signal.SIGUSR1, lambda s, f: print("handled"))
os.kill(os.getpid(), signal.SIGUSR1)
signal.signal(signal.SIGUSR1, old)
print("restored")'
"$PY" -c "$SIGCODE" > "$WORK/sig.bare" 2>&1
run_with "$WORK/sig.out" "$WORK/sig.err" "$PY" -c "$SIGCODE"
expect_eq "signal.getsignal and a save and restore of SIGUSR1: as without the library" \
	"$(cat "$WORK/sig.out" "$WORK/sig.err")" "$(cat "$WORK/sig.bare")"
expect_eq "... which is the default" "$(head -1 "$WORK/sig.bare")" True
total=$(acquired_total "$WORK/report")
[ "$total" -ge 1000 ] && pass "the GIL changed hands often: $total acquisitions" ||
	fail "only $total acquisitions: the workload did not switch threads"
finish
