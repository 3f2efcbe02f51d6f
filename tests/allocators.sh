# allocators.sh - with jemalloc or tcmalloc preloaded beside us (in either
# order), whose malloc locks pthread mutexes, nothing recurses or hangs,
# output is unchanged and the report is complete.
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
		expect_grep "$name: report complete" "^ +[0-9]+ 0x[0-9a-f]+ +12000 " "$WORK/report"
	done
done
if [ "$found" = 0 ]; then
	echo "SKIP: neither libjemalloc2 nor libtcmalloc-minimal4 is installed"
	exit 77
fi
finish
