# spaced_pools.sh - mutexes made in pools a power of two apart (each
# thread's malloc arena, thread stacks, huge pages), far from a full table,
# are every one tracked and counted exactly: none is left "with no room".
. "$top_srcdir/tests/lib.sh"
B=$top_builddir

# expect_all_tracked WHAT N THREADS: the report tracks all N of the
# program's mutexes, says nothing of a full table, and counts each 3
# acquisitions.
expect_all_tracked() {
	expect_grep "$1: $2 mutexes tracked, 0 untracked" \
	    ": $3 threads used mutexes, $2 mutexes tracked, 0 untracked\$" "$WORK/report"
	expect_no_grep "$1: no call found no room" "found no room|table is full" "$WORK/report"
	expect_eq "$1: every mutex locked 3 times" \
	    "$(awk '/^Top [0-9]+ mutex/ { on = 1; getline; next } on && /^$/ { exit }
		on { n[$3 == 3]++ } END { printf "%d exact, %d not", n[1], n[0] }' "$WORK/report")" \
	    "$2 exact, 0 not"
}

# 32,000 mutexes 48 bytes apart in the threads' pools: 16 threads' pools
# 64 MiB apart (as glibc's arenas) and 8 MiB apart (thread stacks), 64
# threads' 2 MiB apart.  The hash whose part from the high bits moved
# little tracked 12,861 of them at 64 MiB and said the table of a million
# was full.
for run in "16 2000 0x4000000" "16 2000 0x800000" "64 500 0x200000"; do
	set -- $run
	MUTEXSTAT_TOP=40000 run_with "$WORK/out" "$WORK/err" "$B/tests/spaced_pools" pools $run
	expect_eq "$1 pools $3 apart: runs" "$?:$(cat "$WORK/out")" "0:32000 mutexes in $1 pools"
	expect_all_tracked "$1 pools $3 apart" 32000 $1
done

# The same with malloc: each thread's mutexes in its own arena.
MUTEXSTAT_TOP=40000 run_with "$WORK/out" "$WORK/err" "$B/tests/spaced_pools" heap 16 2000
expect_grep "heap: runs" "^32000 mutexes in [0-9]+ regions of 64 MiB$" "$WORK/out"
expect_all_tracked "heap, $(awk '{ print $4 }' "$WORK/out") arenas" 32000 16
finish
