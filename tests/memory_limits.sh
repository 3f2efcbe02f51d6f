#!/bin/sh
# memory_limits.sh - the program under a data-size limit (ulimit -d,
# RLIMIT_DATA), and many threads under an address-space limit (below).  The kernel counts every private writable map in it: the
# table's and the call stacks' memory (1.4 GB of address space with the
# defaults, MAP_NORESERVE), the threads' stacks, the heap.  The library
# used to size itself for ulimit -v only: under ulimit -d 100000 its table
# took all that was left, and a program that starts 4 threads alone
# started none.  It now takes at most half of what the smaller limit
# leaves, and says so; and a report made with little room left uses
# dladdr, not libdw (whose out-of-memory handler ends the program).
. "$top_srcdir/tests/lib.sh"

skip_if_sanitized "ASan's shadow memory needs more than ulimit -d allows"
S="$top_builddir/tests/settings"

for kb in 100000 150000; do
	# thread stacks of 8 MiB, whatever the caller's ulimit -s
	bare=$( (ulimit -s 8192 && ulimit -d $kb && "$S" threads 4) 2>&1) || :
	if [ "$bare" != "4 of 4 threads started, counter 4000" ]; then
		echo "(ulimit -d $kb: the program alone does not run here: $bare)"
		continue
	fi
	rc=0
	(ulimit -s 8192 && ulimit -d $kb && exec env LD_PRELOAD="$MS_PRELOAD" \
	    MUTEXSTAT_OUTPUT="$WORK/report" "$S" threads 4) >"$WORK/out" 2>"$WORK/err" || rc=$?
	expect_eq "ulimit -d $kb: the program's status and output" \
	    "$rc $(cat "$WORK/out")" "0 $bare"
	expect_eq "ulimit -d $kb: one line on stderr" "$(wc -l <"$WORK/err" | tr -d ' ')" 1
	expect_grep "ulimit -d $kb: the line says what the library takes" \
	    '^mutexstat: the data-size limit \(ulimit -d\) leaves [0-9]+ MiB, of which the library takes at most half: tracking [0-9]+ mutexes \(MUTEXSTAT_TABLE_SIZE=1048576\), [0-9]+ MiB for call stacks \(MUTEXSTAT_STACK_MEMORY=64\)$' \
	    "$WORK/err"
	expect_grep "ulimit -d $kb: the report" \
	    '^mutexstat: settings \(pid [0-9]+\) ran .*: 4 threads used mutexes, 1 mutex tracked, 0 untracked$' \
	    "$WORK/report"
	expect_grep "ulimit -d $kb: 4000 acquisitions of the one mutex" '^ +1 (0x[0-9a-f]+|<[^>]+>) +4000 ' "$WORK/report"
done

# both limits: the smaller one's room is what the library sizes itself by
rc=0
(ulimit -s 8192 && ulimit -d 100000 && ulimit -v 2000000 && exec env LD_PRELOAD="$MS_PRELOAD" \
    MUTEXSTAT_OUTPUT="$WORK/report" "$S" threads 4) >"$WORK/out" 2>"$WORK/err" || rc=$?
expect_eq "ulimit -d 100000 under ulimit -v 2000000: the program's status and output" \
    "$rc $(cat "$WORK/out")" "0 4 of 4 threads started, counter 4000"
expect_grep "ulimit -d 100000 under ulimit -v 2000000: the line names ulimit -d" \
    '^mutexstat: the data-size limit \(ulimit -d\) leaves [0-9]+ MiB' "$WORK/err"
# libdw, out of memory, calls error(EXIT_FAILURE): it once ended this run
# with status 1 and an empty report; with little room dladdr names
expect_grep "ulimit -d 100000 under ulimit -v 2000000: the report" \
    '^mutexstat: settings \(pid [0-9]+\) ran .*: 4 threads used mutexes, 1 mutex tracked, 0 untracked$' \
    "$WORK/report"
if grep -q '^  names: from dladdr' "$WORK/report"; then
	expect_grep "ulimit -d 100000 under ulimit -v 2000000: dladdr's names, for want of room" \
	    '^  names: from dladdr \(ulimit -d leaves [0-9]+ MiB\): ' "$WORK/report"
fi

# ---- ulimit -v and the threads' malloc arenas ---------------------------------
# A thread's libunwind block is its first malloc, and glibc gives it an
# arena then: 64 MiB of address space.  Threads took one while the limit
# left 256 MiB, out of the program's half: 64 threads of 8 MiB stacks,
# each started once the one before runs, started 30 of 64 under ulimit -v
# 1000000 (43 under 1500000).  The arenas are now paid from the library's
# half: only as many threads as it has room for take call stacks.  (65
# threads use the mutex: the main thread waits on it too.)
for kb in 1000000 1500000; do
	bare=$( (ulimit -s 8192 && ulimit -v $kb && "$S" alive 64) 2>&1) || :
	if [ "$bare" != "64 of 64 threads started, counter 64000" ]; then
		echo "(ulimit -v $kb: the program alone does not run here: $bare)"
		continue
	fi
	rc=0
	(ulimit -s 8192 && ulimit -v $kb && exec env LD_PRELOAD="$MS_PRELOAD" \
	    MUTEXSTAT_OUTPUT="$WORK/report" "$S" alive 64) >"$WORK/out" 2>"$WORK/err" || rc=$?
	expect_eq "ulimit -v $kb, 64 threads alive at once: the program's status and output" \
	    "$rc $(cat "$WORK/out")" "0 $bare"
	expect_grep "ulimit -v $kb: one line says how many threads take call stacks" \
	    "^mutexstat: under ulimit -v (the first [0-9]+ threads? the program starts take call stacks, the others none|the threads the program starts take no call stacks) \\(each would get a malloc arena, 64 MiB, beyond the library's half\\)\$" \
	    "$WORK/err"
	expect_grep "ulimit -v $kb: the report" \
	    '^mutexstat: settings \(pid [0-9]+\) ran .*: 65 threads used mutexes, 1 mutex tracked, 0 untracked$' \
	    "$WORK/report"
done

finish
