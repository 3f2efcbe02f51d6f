# real_redis.sh - redis-server (Debian's: jemalloc, 2 I/O threads, its
# background-job threads, an append-only file and a background save in a
# fork child) on 127.0.0.1 under redis-benchmark (4 commands x 3,000
# requests from 8 connections), a live dump while it runs, then SHUTDOWN.
# The keys the benchmark leaves and redis's exit status are the same with
# and without the library, nothing crashed (its background threads' first
# calls into jemalloc once did: see tests/allocators.sh), and the report
# lands in MUTEXSTAT_OUTPUT though redis writes its process title over its
# environment, naming its code "redis-server".
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/real_lib.sh"
need_program redis-server /usr/bin/redis-server
need_program redis-tools /usr/bin/redis-cli /usr/bin/redis-benchmark
PY=/usr/bin/python3
need_program python3 "$PY"

free_port() {
	"$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# run TAG ENV...: a server in $WORK/TAG, the load, the keys, the shutdown.
run() {
	tag=$1; shift
	d=$WORK/$tag; mkdir -p "$d"
	port=$(free_port)
	timeout 60 env "$@" /usr/bin/redis-server --port "$port" --bind 127.0.0.1 --dir "$d" \
		--io-threads 2 --io-threads-do-reads yes --appendonly yes --save "" \
		--daemonize no --logfile "" --protected-mode no > "$d/out" 2> "$d/err" &
	server=$!
	n=0
	until redis-cli -p "$port" ping > /dev/null 2>&1 || [ $n -ge 100 ]; do
		sleep 0.1; n=$((n + 1))
	done
	timeout 60 redis-benchmark -p "$port" -c 8 -n 3000 -P 4 -q -t set,get,incr,lpush \
		> "$d/bench" 2>&1 &
	bench=$!
	if [ "$tag" = lib ]; then
		sleep 0.5
		kill -USR1 "$(pgrep -P "$server")"
	fi
	wait "$bench"
	echo "bench $?" > "$d/keys"
	redis-cli -p "$port" bgsave > /dev/null
	n=0
	while ! grep -q 'Background saving terminated with success' "$d/out" && [ $n -lt 100 ]; do
		sleep 0.1; n=$((n + 1))
	done
	for c in dbsize "get key:__rand_int__" "get counter:__rand_int__" "llen mylist"; do
		redis-cli -p "$port" $c >> "$d/keys"
	done
	redis-cli -p "$port" shutdown > /dev/null 2>&1
	wait "$server"
	echo "exit $?" >> "$d/keys"
}

run bare A=1
run lib LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/r"
expect_eq "the keys, the benchmark's and redis's exit status" \
	"$(cat "$WORK/lib/keys")" "$(cat "$WORK/bare/keys")"
expect_eq "... as they should be" "$(tr '\n' ' ' < "$WORK/bare/keys")" \
	"bench 0 3 VXK 3000 3000 exit 0 "
expect_no_grep "redis did not crash" 'crashed by signal' "$WORK/lib/out"
expect_eq "nothing on stderr" "$(cat "$WORK/lib/err")" ""
report_complete "the live dump" "$WORK/r.1" redis-server
report_complete "the exit report" "$WORK/r" redis-server
expect_grep "redis's code is named redis-server" \
	'^  first locked at   [A-Za-z_]+\+0x[0-9a-f]+ \(redis-server\)$' "$WORK/r"
expect_no_grep "no finding but redis's own exit: its I/O threads wait" \
	'^(DEADLOCK|POTENTIAL DEADLOCK|SELF-DEADLOCK|MISUSE)' "$WORK/r"
finish
