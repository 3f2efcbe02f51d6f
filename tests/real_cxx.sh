# real_cxx.sh - pzstd (Debian's zstd package), a C++ program whose thread
# pool and work queues are std::thread, std::mutex and
# std::condition_variable: one stream compressed and decompressed on 4
# threads, then 100 files one after another (5 threads, their queues
# and mutexes made and ended for each).  The same bytes with
# and without the library, the same exit status, complete reports with the
# condition waits of std::condition_variable.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/real_lib.sh"
PZ=/usr/bin/pzstd
need_program zstd "$PZ"
nm -D "$PZ" 2>/dev/null | grep -q '_ZNSt18condition_variable4wait' &&
	pass "pzstd imports std::condition_variable::wait" ||
	echo "note: could not check pzstd's imports (nm missing?)"

seq 1000000 | awk '{ printf "%d %x %d\n", $1, ($1 * 2654435761) % 4294967296, $1 % 97 }' \
	> "$WORK/in"

# ---- one stream ---------------------------------------------------------
"$PZ" -1 -p 4 -q -c < "$WORK/in" > "$WORK/bare.zst"
bare_rc=$?
MUTEXSTAT_OUTPUT=$WORK/c.report run_with "$WORK/lib.zst" "$WORK/c.err" \
	"$PZ" -1 -p 4 -q -c < "$WORK/in"
rc=$?
expect_eq "compress: exit status" "$rc" "$bare_rc"
expect_eq "compress: exit status is success" "$bare_rc" 0
cmp -s "$WORK/bare.zst" "$WORK/lib.zst" &&
	pass "compress: identical output, byte for byte ($(wc -c < "$WORK/lib.zst") bytes)" ||
	fail "compress: output differs"
expect_eq "compress: stderr empty" "$(cat "$WORK/c.err")" ""
report_complete "compress" "$WORK/c.report" pzstd
expect_grep "compress: std::condition_variable waits were seen" \
	'; condition waits [1-9][0-9]*' "$WORK/c.report"

MUTEXSTAT_OUTPUT=$WORK/d.report run_with "$WORK/d.out" "$WORK/d.err" \
	"$PZ" -d -p 4 -q -c < "$WORK/lib.zst"
rc=$?
expect_eq "decompress: exit status" "$rc" 0
cmp -s "$WORK/in" "$WORK/d.out" && pass "decompress: the input back" ||
	fail "decompress: output differs from the input"
report_complete "decompress" "$WORK/d.report" pzstd

# ---- 100 files: new threads and queues for each -----------------------------
mkdir "$WORK/bare" "$WORK/lib"
(cd "$WORK/bare" && split -n 100 -d -a 3 "$WORK/in" part)
cp "$WORK/bare"/part* "$WORK/lib/"
"$PZ" -1 -p 4 -q "$WORK/bare"/part* > "$WORK/fbare.out" 2>&1
bare_rc=$?
MUTEXSTAT_OUTPUT=$WORK/f.report run_with "$WORK/f.out" "$WORK/f.err" \
	"$PZ" -1 -p 4 -q "$WORK/lib"/part*
rc=$?
expect_eq "100 files: exit status" "$rc" "$bare_rc"
expect_eq "100 files: nothing printed" "$(cat "$WORK/f.out" "$WORK/f.err")" "$(cat "$WORK/fbare.out")"
same=0
for f in "$WORK/bare"/part*.zst; do
	cmp -s "$f" "$WORK/lib/${f##*/}" && same=$((same + 1))
done
expect_eq "100 files: each compressed file identical" "$same" 100
report_complete "100 files" "$WORK/f.report" pzstd
# pzstd starts 5 threads per file (its pool of 4 and one more), and ends them.
expect_grep "100 files: 5 threads per file and the main thread used mutexes" \
	': 501 threads used mutexes,' "$WORK/f.report"
finish
