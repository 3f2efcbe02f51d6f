# memcheck.sh - examples run clean under valgrind's memcheck with the
# library preloaded: no invalid read or write, no use of uninitialised
# memory, no bad free, no definite leak, in the library's start-up, its
# lock paths, its dump thread and the exit report (call stacks, symbols,
# findings).  Each program's output and report are as without valgrind.
# Then helgrind: no race in a correct program's own code.  Skipped without
# valgrind, and in a sanitized build (ASan and valgrind
# cannot watch the same process).
. "$top_srcdir/tests/lib.sh"
B=$top_builddir
skip_if_sanitized "valgrind cannot run an ASan-instrumented program"
if ! command -v valgrind >/dev/null 2>&1; then
	echo "SKIP: valgrind is not installed (Debian package valgrind)"
	exit 77
fi

# memcheck NAME PROGRAM ARGS...: PROGRAM under memcheck and the library;
# valgrind's log in $WORK/NAME.vg, stdout in $WORK/NAME.out, the report in
# $WORK/NAME.report.
memcheck() {
	name=$1; shift
	rc=0
	env LD_PRELOAD="$MUTEXSTAT_LIB" MUTEXSTAT_OUTPUT="$WORK/$name.report" \
	    valgrind -q --error-exitcode=99 --leak-check=full \
	    --show-leak-kinds=definite --errors-for-leak-kinds=definite \
	    --suppressions="$top_srcdir/tests/memcheck.supp" \
	    --log-file="$WORK/$name.vg" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" || rc=$?
	expect_eq "$name: exit status under memcheck" "$rc" 0
	if [ -s "$WORK/$name.vg" ]; then
		fail "$name: memcheck reported errors:"
		sed 's/^/  | /' "$WORK/$name.vg" >&2
	else
		pass "$name: memcheck reported nothing"
	fi
}

memcheck contention "$B/examples/contention" 2 1000
expect_eq "contention: its output" "$(cat "$WORK/contention.out")" \
    "counter = 2000 (expected 2000), quiet counter = 1000"
expect_grep "contention: the report, with the hot mutex's 2000 acquisitions" \
    '^ +1 (0x[0-9a-f]+|<[^>]+>) +2000 ' "$WORK/contention.report"
expect_grep "contention: the report names the lock's line" \
    'worker\+0x[0-9a-f]+ \(examples/contention\.c:[0-9]+, contention\)' \
    "$WORK/contention.report"

memcheck producer_consumer "$B/examples/producer_consumer"
expect_eq "producer_consumer: its output" "$(cat "$WORK/producer_consumer.out")" \
    "$("$B/examples/producer_consumer")"
expect_grep "producer_consumer: condition waits counted" \
    'condition waits [1-9][0-9]*' "$WORK/producer_consumer.report"

memcheck deadlock_abba "$B/examples/deadlock_abba"
expect_grep "deadlock_abba: the inversion found" '^POTENTIAL DEADLOCK: 2 mutexes' \
    "$WORK/deadlock_abba.report"

# helgrind watches the program's locking through glibc's lock functions;
# the library takes a normal mutex with its own steps (lib/glibc/glibc_fast.h)
# unless helgrind or drd is there.  The program's own critical sections
# must not be races: no report whose first frame is the program's code
# (the library's own lock-free table and records are reported; the
# program's counter, updated under its mutex, must not be).
rc=0
env LD_PRELOAD="$MUTEXSTAT_LIB" MUTEXSTAT_OUTPUT="$WORK/helgrind.report" \
    valgrind --tool=helgrind --log-file="$WORK/helgrind.vg" \
    "$B/tests/locked_counter" >"$WORK/helgrind.out" 2>"$WORK/helgrind.err" || rc=$?
expect_eq "helgrind: exit status" "$rc" 0
expect_eq "helgrind: its output" "$(cat "$WORK/helgrind.out")" 4000
races=$(grep -A2 'Possible data race' "$WORK/helgrind.vg" | grep -c 'at 0x[0-9A-F]*: .*(locked_counter\.c:')
expect_eq "helgrind: no race in the program's own code" "$races" 0

finish
