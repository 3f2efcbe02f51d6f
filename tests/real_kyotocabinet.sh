# real_kyotocabinet.sh - Kyoto Cabinet (Debian's kyotocabinet-utils and
# libkyotocabinet16v5), whose databases lock with pthread read-write locks:
# a hash database's records behind 1,024 rwlocks (one per slot) and its
# methods behind one more, a B+ tree's pages and methods behind more of
# them.  4 threads each set, get and remove 10,000 records (kchashtest and
# kctreetest "order", the library's own load test: some 240,000 rwlock
# acquisitions a run), then 4 threads write 40,000 records to a B+ tree
# that is listed afterwards.  The programs print the same (but for their
# timings and memory use), exit the same way, leave the same records, and
# the reports are complete and show the rwlocks.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/real_lib.sh"
need_program kyotocabinet-utils /usr/bin/kchashtest /usr/bin/kctreetest /usr/bin/kctreemgr
# The test programs print the seed of their random numbers: the same one.
KCRNDSEED=1
export KCRNDSEED

# steady FILE: a test program's output but its timings and memory use.
steady() {
	grep -Ev '^(time|memory): ' "$1"
}

# check NAME PROGRAM ARGS...: PROGRAM run in $WORK/NAME.bare and, under
# the library, in $WORK/NAME.lib (the database's relative path in the
# output is the same), report in $WORK/NAME.report.
check() {
	name=$1; shift
	mkdir "$WORK/$name.bare" "$WORK/$name.lib"
	(cd "$WORK/$name.bare" && timeout 60 "$@" > ../"$name.bare.out" 2> ../"$name.bare.err")
	bare_rc=$?
	(cd "$WORK/$name.lib" && timeout 60 env LD_PRELOAD="$MS_PRELOAD" \
		MUTEXSTAT_OUTPUT="$WORK/$name.report" "$@" > ../"$name.out" 2> ../"$name.err")
	rc=$?
	expect_eq "$name: exit status" "$rc" "$bare_rc"
	expect_eq "$name: exit status is success" "$bare_rc" 0
	if [ "$(steady "$WORK/$name.out")" = "$(steady "$WORK/$name.bare.out")" ]; then
		pass "$name: the same output, timings and memory use aside ($(wc -l < "$WORK/$name.out") lines)"
	else
		fail "$name: the output differs"
		diff "$WORK/$name.bare.out" "$WORK/$name.out" | sed 's/^/  | /' >&2
	fi
	expect_eq "$name: the last word" "$(grep -v '^$' "$WORK/$name.out" | tail -n 1)" ok
	expect_eq "$name: stderr" "$(cat "$WORK/$name.err")" "$(cat "$WORK/$name.bare.err")"
	report_complete "$name" "$WORK/$name.report" "${1##*/}"
	expect_grep "$name: 4 workers and the main thread used locks" \
		': ([5-9]|[1-9][0-9]) threads used locks,' "$WORK/$name.report"
}

check hash /usr/bin/kchashtest order -th 4 casket.kch 10000
expect_grep "hash: all 40,000 records were set, then removed" '^count: 40000$' "$WORK/hash.out"
check tree /usr/bin/kctreetest order -th 4 casket.kct 10000
expect_grep "tree: all 40,000 records were set, then removed" '^count: 40000$' "$WORK/tree.out"

# Records set by 4 threads stay: the tree's pages split in the order the
# threads came, so the database's statistics vary from run to run, but
# not its records, listed in key order.
mkdir "$WORK/set.bare" "$WORK/set.lib"
(cd "$WORK/set.bare" && timeout 60 /usr/bin/kctreetest order -set -th 4 casket.kct 10000 \
	> ../set.bare.out 2>&1)
bare_rc=$?
(cd "$WORK/set.lib" && timeout 60 env LD_PRELOAD="$MS_PRELOAD" \
	MUTEXSTAT_OUTPUT="$WORK/set.report" \
	/usr/bin/kctreetest order -set -th 4 casket.kct 10000 > ../set.out 2> ../set.err)
rc=$?
expect_eq "set: exit status" "$rc/$bare_rc" 0/0
expect_eq "set: stderr" "$(cat "$WORK/set.err")" ""
/usr/bin/kctreemgr list -pv "$WORK/set.bare/casket.kct" > "$WORK/set.bare.list"
/usr/bin/kctreemgr list -pv "$WORK/set.lib/casket.kct" > "$WORK/set.list"
if cmp -s "$WORK/set.bare.list" "$WORK/set.list"; then
	pass "set: the same records ($(wc -l < "$WORK/set.list"))"
else
	fail "set: the records differ"
fi
expect_eq "set: 40,000 records, each its key's value" \
	"$(awk -F '\t' '$1 == $2 { n++ } END { print n + 0 }' "$WORK/set.list")/$(wc -l < "$WORK/set.list")" \
	40000/40000
report_complete "set" "$WORK/set.report" kctreetest

for name in hash tree set; do
	expect_grep "$name: the report shows rwlocks" 'rwlock' "$WORK/$name.report"
	expect_no_grep "$name: no finding: Kyoto Cabinet's lock order is consistent" \
		'^(DEADLOCK|POTENTIAL DEADLOCK|SELF-DEADLOCK|MISUSE)' "$WORK/$name.report"
done
finish
