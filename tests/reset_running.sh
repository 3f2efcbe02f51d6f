# reset_running.sh - after a mutexstat_reset() (tests/reset_running.c),
# the report's counts are those of what came after it: each mutex's
# acquisitions, and the acquisitions whose lock order was not followed
# (their thread already held 64 mutexes).
. "$top_srcdir/tests/lib.sh"
B=$top_builddir
LIBDIR=$(dirname "$MUTEXSTAT_LIB")

# 10 threads take 200 mutexes in turn 20 times, a reset, 20 times more:
# each mutex 200 acquisitions, and 10 x 20 x (200 - 64) = 27,200 not
# followed.  The count of those not followed kept the 27,200 of before
# the reset (54,400).
env LD_LIBRARY_PATH="$LIBDIR" MUTEXSTAT_OUTPUT="$WORK/report" MUTEXSTAT_TOP=300 \
	"$B/tests/reset_running" 10 200 20 > "$WORK/out" 2> "$WORK/err"
expect_eq "runs" "$?:$(cat "$WORK/out")" "0:200 mutexes, each locked 200 times since the reset"
expect_eq "each mutex: 200 acquisitions since the reset" \
    "$(awk '/^Top [0-9]+ mutex/ { on = 1; getline; next } on && /^$/ { exit }
	on { n[$3 == 200]++ } END { printf "%d exact, %d not", n[1], n[0] }' "$WORK/report")" \
    "200 exact, 0 not"
expect_grep "not followed: those since the reset" \
    "^  lock order not followed for 27200 acquisitions: their thread already held 64 mutexes" "$WORK/report"
expect_eq "nothing on stderr" "$(cat "$WORK/err")" ""
finish
