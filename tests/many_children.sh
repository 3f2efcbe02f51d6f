# many_children.sh - twenty fork children end at once, each writing its exit
# report (tests/many_children.c; their reports differ in length):
#   - with one MUTEXSTAT_OUTPUT file for all (no %p), the file holds the
#     twenty reports one after the other (each went after those written
#     while it lived), each whole -- one header, as many mutex sections as
#     its top table has rows, every row the acquisitions of that one child
#     -- not pieces of several (they once emptied it and wrote at once, in
#     8 KB pieces);
#   - with %p, every child's report is in its own file, whole, with its own
#     numbers: none lost;
#   - without MUTEXSTAT_OUTPUT, on the stderr they share (a pipe, a file),
#     the twenty reports one after the other, each whole, none cut into
#     another.
. "$top_srcdir/tests/lib.sh"
P=$top_builddir/tests/many_children
N=20

# whole REPORT OUT: "ok" if REPORT is one report of one child of OUT (the
# program's stdout), else what is wrong with it
whole() {
	pid=$(sed -n 's/^mutexstat: many_children (pid \([0-9]*\)) ran .*/\1/p' "$1")
	headers=$(grep -c '^mutexstat: ' "$1")
	line=$(grep "^child ${pid:-none} locked " "$2")
	mutexes=$(echo "$line" | awk '{ print $4 }')
	times=$(echo "$line" | awk '{ print $6 }')
	rows=$(awk '/^Top [0-9]+ mutex/ { t = 1; next } t && /^$/ { t = 0 }
		t && /^ +[0-9]+ (0x|<)/ { print $3 }' "$1")
	sections=$(grep -c '^#[0-9]* mutex ' "$1")
	if [ "$headers" != 1 ] || [ -z "$line" ]; then
		echo "$headers reports (pid '$pid')"
	elif [ "$(echo "$rows" | wc -l)" != "$mutexes" ] || [ "$sections" != "$mutexes" ]; then
		echo "child $pid had $mutexes mutexes; $(echo "$rows" | wc -l) rows, $sections sections"
	elif [ "$(echo "$rows" | sort -u)" != "$times" ]; then
		echo "child $pid locked each $times times; rows say $(echo "$rows" | sort -u | tr '\n' ' ')"
	else
		echo ok
	fi
}

# not_whole REPORT...: how many of the REPORTs are not one whole report of
# a child of $WORK/out (each one that is not is named on stderr)
not_whole() {
	bad=0
	for r in "$@"; do
		verdict=$(whole "$r" "$WORK/out")
		[ "$verdict" = ok ] || { bad=$((bad + 1)); echo "  $r: $verdict" >&2; }
	done
	echo $bad
}

# apart FILE WHAT: the reports in FILE, one after the other, each whole
apart() {
	rm -f "$WORK"/part.*
	awk -v dir="$WORK" '/^mutexstat: many_children \(pid/ { n++ } { print > (dir "/part." n) }' "$1"
	expect_eq "$2: twenty reports, each from the start of a line" \
		"$(grep -c '^mutexstat: many_children (pid' "$1")" $N
	expect_eq "$2: no line cut into another" "$(sed 's/µ/u/g' "$1" | awk 'length($0) > 120' | wc -l)" 0
	expect_eq "$2: each whole, with its child's numbers" "$(not_whole "$WORK"/part.*)" 0
}
for run in 1 2; do
	rm -f "$WORK/one"
	timeout -s KILL 60 env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_TOP=40 MUTEXSTAT_OUTPUT="$WORK/one" \
		"$P" together $N > "$WORK/out" 2> "$WORK/err"
	expect_eq "one file ($run): exit status" "$?" 0
	expect_eq "one file ($run): every child locked" "$(grep -c '^child ' "$WORK/out")" $N
	apart "$WORK/one" "one file ($run)"
done

timeout -s KILL 60 env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_TOP=40 MUTEXSTAT_OUTPUT="$WORK/each.%p" \
	"$P" together $N > "$WORK/out" 2> "$WORK/err"
expect_eq "%p: exit status" "$?" 0
expect_eq "%p: a file per child" "$(ls "$WORK" | grep -c '^each\.')" $N
expect_eq "%p: each whole, with its child's numbers" "$(not_whole "$WORK"/each.*)" 0
expect_eq "nothing on stderr" "$(cat "$WORK/err")" ""

for run in 1; do
	# stderr a pipe (cat reads it), and a file
	(timeout -s KILL 60 env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_TOP=40 "$P" together $N \
		2>&1 > "$WORK/out" | cat > "$WORK/piped")
	apart "$WORK/piped" "stderr a pipe ($run)"
	timeout -s KILL 60 env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_TOP=40 "$P" together $N \
		> "$WORK/out" 2> "$WORK/filed"
	apart "$WORK/filed" "stderr a file ($run)"
done
finish
