#!/bin/sh
# c11_threads.sh - C11 threads (mtx_*, cnd_*): every call answers as
# without the library, and the program's mutexes are recorded (glibc calls
# its pthread functions inside libc, where they went past the library:
# the report said the program locked no mutexes).
. "$top_srcdir/tests/lib.sh"
P=$top_builddir/tests/c11_threads
SRC=$top_srcdir/tests/c11_threads.c
line_of() { grep -n "$1" "$SRC" | cut -d: -f1; }

"$P" answers >"$WORK/bare" 2>&1
run_with "$WORK/out" "$WORK/err" "$P" answers
expect_eq "answers: every call's thrd_* as without the library" "$(cat "$WORK/out")" "$(cat "$WORK/bare")"
expect_grep "answers: the timed lock of the held mutex timed out" \
	'^other thread: timedlock, 50 ms +thrd_timedout$' "$WORK/out"
expect_grep "answers: the unlock of an unlocked recursive mutex is MISUSE" \
	'^MISUSE: unlock of a mutex that is not locked: 1 time' "$WORK/report"
expect_no_grep "answers: no other MISUSE (each mutex is unlocked before its destroy)" \
	'^MISUSE: destroy' "$WORK/report"

run_with "$WORK/out" "$WORK/err" "$P" use
expect_eq "use: the program's output" "$(head -n 1 "$WORK/out")" "counter 4000, items 100"
m=$(awk '/^counter_lock / { print $2 }' "$WORK/out")
expect_grep "use: 4000 acquisitions of the counter's mtx_t, first locked at its line" \
	"^ +[0-9]+ $m +4000 .* count \(?c11_threads\.c:$(line_of C11_COUNTS)\)?$" "$WORK/report"
expect_grep "use: the two orders of a and b are a POTENTIAL DEADLOCK" \
	'^POTENTIAL DEADLOCK: 2 mutexes' "$WORK/report"
expect_grep "use: ... taken at the program's lines" \
	"use\+0x[0-9a-f]+ \(tests/c11_threads\.c:$(line_of C11_B_THEN_A)" "$WORK/report"
waits=$(awk '/condition waits/ { for (i = 1; i <= NF; i++) if ($i == "condition" && $(i + 1) ~ /^waits/) print $(i + 2) }' \
	"$WORK/report" | tr -d ';' | sort -n | tail -n 1)
[ "${waits:-0}" -ge 1 ] && pass "use: the consumer's cnd_waits are counted ($waits)" ||
	fail "use: no condition waits counted"
expect_eq "use: nothing on stderr" "$(cat "$WORK/err")" ""
finish
