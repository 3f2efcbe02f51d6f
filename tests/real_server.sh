# real_server.sh - memcached (Debian's, 4 worker threads; its connections,
# item locks, LRU and statistics are pthread mutexes and condition
# variables) on 127.0.0.1 under a bounded load (tests/real_server_client.py:
# 4 connections in parallel, 3 batches of 1,600 requests each), with a live
# dump after each batch, then a clean shutdown.  The responses and the
# server's request counters are the same with and without the library, so
# is its exit status; the three dumps and the exit report are complete.
# memcached catches SIGUSR1 (its graceful stop), so the dumps use
# MUTEXSTAT_SIGNAL=USR2; SIGUSR1 still does for memcached what it does
# without the library.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/real_lib.sh"
MC=/usr/sbin/memcached
[ -x "$MC" ] || MC=/usr/bin/memcached
PY=/usr/bin/python3
need_program memcached "$MC"
need_program python3 "$PY"
CLIENT=$top_srcdir/tests/real_server_client.py

free_port() {
	"$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# memcached refuses to run as root without -u
user=$(id -un)
# serve OUT ERR ENV...: start memcached on a free port in the background
# ($server, $port), with the environment words given.
serve() {
	out=$1; err=$2; shift 2
	port=$(free_port)
	env "$@" "$MC" -u "$user" -l 127.0.0.1 -p "$port" -U 0 -t 4 -m 16 -c 64 -A \
		> "$out" 2> "$err" &
	server=$!
}
# ready: wait (bounded) until the server answers "version".
ready() {
	"$PY" -c 'import socket, sys, time
end = time.monotonic() + 20
while True:
    try:
        s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=20)
        s.sendall(b"version\r\n")
        sys.exit(0 if s.recv(100).startswith(b"VERSION ") else 1)
    except OSError:
        if time.monotonic() > end:
            sys.exit(1)
        time.sleep(0.05)' "$port"
}
# stopped: wait (bounded) for the server to end; its status in $rc.
stopped() {
	n=0
	while kill -0 "$server" 2>/dev/null && [ $n -lt 200 ]; do
		sleep 0.1; n=$((n + 1))
	done
	if kill -0 "$server" 2>/dev/null; then
		fail "memcached did not stop; killing it"
		kill -9 "$server"
	fi
	wait "$server"
	rc=$?
}

# ---- without the library ----------------------------------------------------
serve "$WORK/bare.out" "$WORK/bare.err"
timeout 60 "$PY" "$CLIENT" "$port" 0 USR2 - > "$WORK/bare.client" 2> "$WORK/bare.cerr"
expect_eq "bare: the client ran" "$?" 0
stopped
bare_rc=$rc

# ---- with it, three live dumps ------------------------------------------------
# (ranked by acquisitions: the sum of the top table's then only grows from
# dump to dump; ranked by wait, the top ten can change to mutexes locked
# less often, and the sum fall)
serve "$WORK/out" "$WORK/err" LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/r" \
	MUTEXSTAT_FORMAT=text,folded MUTEXSTAT_SIGNAL=USR2 MUTEXSTAT_SORT=acquired
timeout 60 "$PY" "$CLIENT" "$port" "$server" USR2 "$WORK/r" > "$WORK/client" 2> "$WORK/cerr"
expect_eq "the client ran, each dump came" "$?" 0
stopped
expect_eq "exit status after the shutdown command" "$rc" "$bare_rc"
expect_eq "exit status is success" "$bare_rc" 0
expect_eq "responses and request counters" "$(cat "$WORK/client")" "$(cat "$WORK/bare.client")"
expect_grep "every request was answered" '^get_hits 4804$' "$WORK/client"
expect_eq "client's stderr" "$(cat "$WORK/cerr")" ""
expect_eq "server's stdout and stderr" "$(cat "$WORK/out" "$WORK/err")" \
	"$(cat "$WORK/bare.out" "$WORK/bare.err")"
expect_eq "three live dumps, one per signal" \
	"$(cd "$WORK" && ls r.[0-9]*.txt | tr '\n' ' ')" "r.1.txt r.2.txt r.3.txt "
for k in 1 2 3; do
	report_complete "dump $k" "$WORK/r.$k.txt" memcached
done
report_complete "exit report" "$WORK/r.txt" memcached
expect_grep "4 workers and memcached's other threads used mutexes" \
	': ([5-9]|[1-9][0-9]) threads used mutexes,' "$WORK/r.txt"
a1=$(acquired_total "$WORK/r.1.txt"); a3=$(acquired_total "$WORK/r.3.txt")
[ "$a1" -gt 0 ] && [ "$a3" -gt "$a1" ] &&
	pass "counts grow from dump 1 ($a1) to dump 3 ($a3)" ||
	fail "top-table acquisitions: dump 1 $a1, dump 3 $a3"
expect_no_grep "no finding: memcached's lock order is consistent" \
	'^(DEADLOCK|POTENTIAL DEADLOCK|SELF-DEADLOCK|MISUSE)' "$WORK/r.txt"

# ---- SIGUSR1 is memcached's own: a graceful stop, as without us ----------------
serve "$WORK/u.bare.out" "$WORK/u.bare.err"
ready || fail "SIGUSR1, bare: memcached did not answer"
kill -USR1 "$server"
stopped
ubare=$rc
serve "$WORK/u.out" "$WORK/u.err" LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/u"
ready || fail "SIGUSR1: memcached did not answer"
kill -USR1 "$server"
stopped
expect_eq "SIGUSR1: memcached's exit status as without the library" "$rc" "$ubare"
expect_eq "SIGUSR1: memcached's own messages" "$(cat "$WORK/u.out" "$WORK/u.err")" \
	"$(cat "$WORK/u.bare.out" "$WORK/u.bare.err")"
[ ! -e "$WORK/u.1" ] && pass "SIGUSR1: memcached's handler ran, no dump" ||
	fail "SIGUSR1: a dump was written though memcached handles the signal"
report_complete "SIGUSR1: the exit report" "$WORK/u" memcached
finish
