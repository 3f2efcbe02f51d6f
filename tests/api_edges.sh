# api_edges.sh - the public API at its edges (tests/api_edges.c): a dump
# that blocks for ever does not keep the process from ending; names are
# kept once each, so renaming never runs out of memory.
. "$top_srcdir/tests/lib.sh"
B=$top_builddir
LIBDIR=$(dirname "$MUTEXSTAT_LIB")

# A thread's mutexstat_dump() blocked writing to a pipe nobody reads: main
# returns and the process ends with its status, as without the library;
# the exit report gives up waiting for the stuck dump, and says so (it
# used to spin for ever on the report's lock, a CPU at 100%).
env LD_LIBRARY_PATH="$LIBDIR" timeout -s KILL 60 "$B/tests/api_edges" blocked \
	> "$WORK/out" 2> "$WORK/err"
rc=$?
expect_eq "blocked dump: the process ends with main's status" "$rc:$(cat "$WORK/out")" "0:main returns"
expect_eq "blocked dump: one line says why there is no exit report" "$(cat "$WORK/err")" \
	"mutexstat: no exit report: another report has been stuck for 5 s (a mutexstat_dump() to a pipe nobody reads?)"

# Renaming a mutex back and forth two million times: each name is kept
# once, every call succeeds, and the report has the last name.
env LD_LIBRARY_PATH="$LIBDIR" MUTEXSTAT_OUTPUT="$WORK/report" timeout -s KILL 60 \
	"$B/tests/api_edges" renames > "$WORK/out" 2> "$WORK/err"
expect_eq "renames: every call succeeds" "$?:$(cat "$WORK/out")" "0:0 renames failed"
expect_grep "renames: the report has the last name" '^  1 busy +3 ' "$WORK/report"
finish
