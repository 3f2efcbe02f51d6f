# allocators.sh - with jemalloc or tcmalloc preloaded beside us (in either
# order), whose malloc locks pthread mutexes, nothing recurses or hangs,
# output is unchanged and the report is complete, with the program's
# mutexes counted exactly under contention.
. "$top_srcdir/tests/lib.sh"
B=$top_builddir
skip_if_sanitized "ASan brings its own malloc, which another allocator" \
    "preloaded beside it would replace"
found=0
for a in /usr/lib/*/libjemalloc.so.2 /usr/lib/*/libtcmalloc_minimal.so.4; do
	[ -e "$a" ] || continue
	found=1
	name=$(basename "$a")
	"$B/examples/contention" 4 3000 > "$WORK/bare"
	for order in "$a:$MUTEXSTAT_LIB" "$MUTEXSTAT_LIB:$a"; do
		env LD_PRELOAD="$order" MUTEXSTAT_OUTPUT="$WORK/report" \
			"$B/examples/contention" 4 3000 > "$WORK/out" 2> "$WORK/err"
		expect_eq "$name ($order): output" "$(cat "$WORK/out")" "$(cat "$WORK/bare")"
		expect_grep "$name: report complete" "^ +[0-9]+ $LOCK_RE +12000 " "$WORK/report"
	done
done
# A threaded program with contention: 10 threads x 20 mutexes x 100 rounds,
# and 200 threads started at once on 20 mutexes (thread stacks and TLS come
# from the allocator): every mutex of the program counted exactly, whatever
# the allocator's own mutexes add to the table.
for a in /usr/lib/*/libjemalloc.so.2 /usr/lib/*/libtcmalloc_minimal.so.4; do
	[ -e "$a" ] || continue
	name=$(basename "$a")
	for order in "$a:$MUTEXSTAT_LIB" "$MUTEXSTAT_LIB:$a"; do
		env LD_PRELOAD="$order" MUTEXSTAT_OUTPUT="$WORK/report" MUTEXSTAT_TOP=200 \
			"$B/examples/ten_by_twenty" > "$WORK/out" 2> "$WORK/err"
		expect_eq "$name ($order): ten_by_twenty runs" "$?:$(cat "$WORK/out")" \
			"0:10 threads x 20 mutexes x 100 rounds done"
		expect_grep "$name: 11 threads in the summary" ': 11 threads used mutexes, [0-9]+ mutexes tracked, 0 untracked$' "$WORK/report"
		expect_eq "$name: the program's 20 mutexes, 1000 acquisitions each" \
			"$(awk '/^Top [0-9]+ mutex/ { on = 1; getline; next } on && /^$/ { exit }
				on && /ten_by_twenty/ { n[$3 == 1000]++ } END { printf "%d exact, %d not", n[1], n[0] }' "$WORK/report")" \
			"20 exact, 0 not"
		env LD_PRELOAD="$order" MUTEXSTAT_OUTPUT="$WORK/report" MUTEXSTAT_TOP=200 \
			"$B/tests/scale" threads 200 20 100 > "$WORK/out" 2> "$WORK/err"
		expect_eq "$name ($order): 200 threads run" "$?:$(cat "$WORK/out")" \
			"0:200 threads, 20 mutexes: 20 of 20 locked exactly 1000 times"
		expect_eq "$name: 200 threads: each mutex 1000 acquisitions in the report" \
			"$(awk '/^Top [0-9]+ mutex/ { on = 1; getline; next } on && /^$/ { exit }
				on && /turns/ { n[$3 == 1000]++ } END { printf "%d exact, %d not", n[1], n[0] }' "$WORK/report")" \
			"20 exact, 0 not"
		expect_eq "$name: nothing on stderr" "$(cat "$WORK/err")" ""
	done
done
# New threads whose first call is into jemalloc (malloc_usable_size, free),
# which sets the thread up and locks mutexes new to it there: the library's
# first stack capture on such a thread used to allocate libunwind's
# thread-local block with malloc from inside that malloc, and jemalloc
# crashed (SIGSEGV in redis-server's background threads).
for a in /usr/lib/*/libjemalloc.so.2 /usr/lib/*/libtcmalloc_minimal.so.4; do
	[ -e "$a" ] || continue
	name=$(basename "$a")
	for order in "$a:$MUTEXSTAT_LIB" "$MUTEXSTAT_LIB:$a"; do
		for run in 1 2 3; do
			env LD_PRELOAD="$order" MUTEXSTAT_OUTPUT="$WORK/report" \
				"$B/tests/first_alloc" > "$WORK/out" 2> "$WORK/err"
			echo "$?:$(cat "$WORK/out")" > "$WORK/got.$run"
		done
		expect_eq "$name ($order): threads starting in the allocator, 3 runs" \
			"$(cat "$WORK/got.1" "$WORK/got.2" "$WORK/got.3" | sort | uniq -c | sed 's/^ *//')" \
			"3 0:64 threads, 64 returned their block's size"
		# tcmalloc's own locks are not pthread mutexes: it locks none here
		case $name in
		libjemalloc*) expect_grep "$name: 65 threads in the report" \
			': 65 threads used mutexes,' "$WORK/report" ;;
		esac
		expect_eq "$name: nothing on stderr" "$(cat "$WORK/err")" ""
	done
done
if [ "$found" = 0 ]; then
	echo "SKIP: neither libjemalloc2 nor libtcmalloc-minimal4 is installed"
	exit 77
fi
finish
