# real_compressor.sh - multithreaded compressors from Debian (pigz -p 4,
# xz -T4, zstd -T4: each hands blocks to worker threads through pthread
# mutexes and condition variables; pigz creates and destroys a mutex per
# job) write the same bytes with and without the library, exit the same
# way, decompress back to the input under the library, and leave complete
# reports.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/real_lib.sh"
need_program pigz /usr/bin/pigz
need_program xz-utils /usr/bin/xz
need_program zstd /usr/bin/zstd

# ~9 MB of text that compresses, in small blocks so there are many jobs.
seq 500000 | awk '{ printf "%d %x %d\n", $1, ($1 * 2654435761) % 4294967296, $1 % 97 }' \
	> "$WORK/in"

# check NAME COMM COMPRESS... -- DECOMPRESS...: both ways under the library.
check() {
	name=$1; comm=$2; shift 2
	comp=; while [ "$1" != -- ]; do comp="$comp $1"; shift; done; shift
	# shellcheck disable=SC2086 # the command's words
	$comp < "$WORK/in" > "$WORK/$name.bare" 2> "$WORK/$name.bare.err"
	bare_rc=$?
	# shellcheck disable=SC2086
	MUTEXSTAT_OUTPUT=$WORK/$name.report run_with "$WORK/$name.out" "$WORK/$name.err" \
		$comp < "$WORK/in"
	rc=$?
	expect_eq "$name: exit status" "$rc" "$bare_rc"
	expect_eq "$name: exit status is success" "$bare_rc" 0
	if cmp -s "$WORK/$name.bare" "$WORK/$name.out"; then
		pass "$name: compressed output identical, byte for byte ($(wc -c < "$WORK/$name.out") bytes)"
	else
		fail "$name: compressed output differs"
	fi
	expect_eq "$name: stderr" "$(cat "$WORK/$name.err")" "$(cat "$WORK/$name.bare.err")"
	report_complete "$name" "$WORK/$name.report" "$comm"
	MUTEXSTAT_OUTPUT=$WORK/$name.dreport run_with "$WORK/$name.dout" "$WORK/$name.derr" \
		"$@" < "$WORK/$name.out"
	rc=$?
	expect_eq "$name -d: exit status" "$rc" 0
	if cmp -s "$WORK/in" "$WORK/$name.dout"; then
		pass "$name -d: the input back"
	else
		fail "$name -d: decompressed output differs from the input"
	fi
	report_complete "$name -d" "$WORK/$name.dreport" "$comm"
}

check pigz pigz /usr/bin/pigz -p 4 -b 32 -n -c -- /usr/bin/pigz -d -p 4 -c
expect_grep "pigz: its per-job mutexes ended and were summed by site" \
	'^ +[0-9]+ [0-9]+ ended +[1-9][0-9]* ' "$WORK/pigz.report"
check xz xz /usr/bin/xz -T4 --block-size=65536 -c -- /usr/bin/xz -d -T4 -c
check zstd zstd /usr/bin/zstd -q -T4 -B65536 -c -- /usr/bin/zstd -q -d -c
for name in pigz xz zstd; do
	total=$(acquired_total "$WORK/$name.report")
	[ "$total" -ge 100 ] && pass "$name: the workers locked: $total acquisitions" ||
		fail "$name: only $total acquisitions: did it use threads?"
done
finish
