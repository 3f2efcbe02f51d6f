# pid_namespace.sh - a process-shared mutex held by a process in a pid
# namespace below this one (tests/pid_namespace.c): glibc's owner field
# holds the holder's own number for itself, 1, which here is another
# process (this namespace's init, which does not map the mutex).  The
# watchdog's report must not name that process as the holder, nor call the
# wait a DEADLOCK; the program gets the mutex.  All of it runs in a pid
# namespace of its own (unshare -p --mount-proc), whose init is a shell.
. "$top_srcdir/tests/lib.sh"
P=$top_builddir/tests/pid_namespace
if ! unshare -p -f --mount-proc true 2>/dev/null; then
	echo "SKIP: unshare -p --mount-proc is not allowed here (needs root)"
	exit 77
fi

rc=0
# (the shell stays: it is pid 1 there, the program is not)
timeout -s KILL 60 unshare -p -f --mount-proc sh -c \
	'env LD_PRELOAD="$1" MUTEXSTAT_OUTPUT="$2/r.%p" MUTEXSTAT_WATCHDOG=1 "$3" holder "$2/go"; echo "status $?"' \
	sh "$MS_PRELOAD" "$WORK" "$P" > "$WORK/out" 2> "$WORK/err" &
job=$!
wait_for "$WORK/out" '^inside 1 holds it$' 20 || fail "the holder did not lock"
n=0
while [ $n -lt 200 ] && ! grep -qs ' waits at ' "$WORK"/r.*.1; do
	sleep 0.1
	n=$((n + 1))
done
touch "$WORK/go"
wait "$job"
grep -q '^status 77$' "$WORK/out" && { echo "SKIP: unshare(CLONE_NEWPID) refused"; exit 77; }
expect_grep "the program got the mutex" '^parent got it$' "$WORK/out"
expect_grep "and ended as without the library" '^status 0$' "$WORK/out"
dump=$(ls "$WORK"/r.*.1 2>/dev/null | head -n 1)
expect_grep "the watchdog's report: the program waits" ' waits for mutex 0x[0-9a-f]+ for ' "${dump:-$WORK/none}"
expect_grep "held by thread 1 of another process, as that process numbers it" \
	'^  held by thread 1 of another process \(process-shared\), as that process numbers it: no process$' \
	"${dump:-$WORK/none}"
expect_no_grep "not by this namespace's init" 'of process 1 ' "${dump:-$WORK/none}"
expect_no_grep "no DEADLOCK" '^DEADLOCK' "${dump:-$WORK/none}"
finish
