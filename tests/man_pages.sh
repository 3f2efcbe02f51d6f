# man_pages.sh - the documentation says what the code does: mutexstat(1) and
# mutexstat(3) render with man -l and groff -ww (and mandoc -T lint, where
# mandoc is installed) without one warning, and no rendered line is wider
# than 80 columns; every setting in the library's options table is in
# mutexstat(1)'s ENVIRONMENT and in the README's settings table; every
# option `mutexstat --help` lists is in mutexstat(1)'s OPTIONS; and every
# doc/ file the README and the man pages name exists.  Skipped without man
# or groff (Debian packages man-db, groff-base).
. "$top_srcdir/tests/lib.sh"
for tool in man:man-db groff:groff-base; do
	if ! command -v "${tool%%:*}" >/dev/null 2>&1; then
		echo "SKIP: ${tool%%:*} is not installed (Debian package ${tool#*:})"
		exit 77
	fi
done

pages="$top_srcdir/man/mutexstat.1 $top_srcdir/man/mutexstat.3"
readme=$top_srcdir/README

# ---- each page renders, without a warning ------------------------------
# LC_ALL=C: ASCII output, so a name or option reads as typed ('-', not a
# Unicode minus) and a check can grep it.
for page in $pages; do
	name=$(basename "$page")
	rc=0
	MANWIDTH=80 LC_ALL=C man -l "$page" >"$WORK/$name.txt" 2>"$WORK/$name.man.err" || rc=$?
	expect_eq "man -l $name: exit status" "$rc" 0
	expect_eq "man -l $name: messages" "$(cat "$WORK/$name.man.err")" ""
	expect_grep "man -l $name: a NAME section" '^NAME$' "$WORK/$name.txt"
	expect_eq "man -l $name: lines wider than 80 columns" \
	    "$(awk 'length > 80' "$WORK/$name.txt" | head -n 3)" ""
	rc=0
	LC_ALL=C groff -ww -man -z "$page" >"$WORK/$name.groff" 2>&1 || rc=$?
	expect_eq "groff -ww $name: exit status" "$rc" 0
	expect_eq "groff -ww $name: warnings" "$(cat "$WORK/$name.groff")" ""
	if command -v mandoc >/dev/null 2>&1; then
		rc=0
		mandoc -T lint "$page" >"$WORK/$name.lint" 2>&1 || rc=$?
		expect_eq "mandoc -T lint $name: exit status" "$rc" 0
		expect_eq "mandoc -T lint $name: messages" "$(cat "$WORK/$name.lint")" ""
	else
		echo "(mandoc is not installed: no lint of $name; Debian package mandoc)"
	fi
done
man1=$WORK/mutexstat.1.txt

# section PAGE-TEXT HEADING: the lines of one section of a rendered page
section() {
	awk -v h="$2" '/^[A-Z]/ { on = ($0 == h); next } on' "$1"
}
section "$man1" ENVIRONMENT >"$WORK/environment"
section "$man1" OPTIONS >"$WORK/options"

# ---- every setting of the options table ------------------------------------
# The table is the one array of the library's source that lists the
# variables: found by its declaration wherever lib/ keeps it.
table=$(grep -rl --include='*.c' 'options\[\] = {' "$top_srcdir/lib" | head -n 1)
if [ -z "$table" ]; then
	fail "no options table ('options[] = {') in $top_srcdir/lib"
	finish
fi
sed -n '/options\[\] = {/,/^};/p' "$table" | grep -o '"MUTEXSTAT_[A-Z_]*"' |
    tr -d '"' >"$WORK/settings"
n=$(wc -l <"$WORK/settings")
# a table that reads as empty is a broken check, not a pass
if [ "$n" -ge 10 ]; then pass "the options table ($table) has $n settings"
else fail "only $n settings read from the options table in $table"; fi

# The README's table: the lines under its "Settings" heading, up to the
# underline of the next heading.
awk '/^Settings$/ { on = 1; getline; next } on && /^-+$/ { exit } on' \
    "$readme" >"$WORK/readme_table"

while read -r v; do
	# an entry of ENVIRONMENT: the name alone, as a tag at the indent
	if grep -Eq "^       $v\$" "$WORK/environment"; then
		pass "mutexstat(1) ENVIRONMENT: $v"
	else
		fail "mutexstat(1) has no $v in ENVIRONMENT (add a .TP entry)"
	fi
	# a row of the README's table: the name first, then its default
	if grep -Eq "^ +$v +[^ ]" "$WORK/readme_table"; then
		pass "README settings table: $v"
	else
		fail "the README's Settings table has no row for $v"
	fi
done <"$WORK/settings"

# ---- every option of the launcher -------------------------------------------
rc=0
sh "$top_srcdir/scripts/mutexstat.in" --help >"$WORK/help" 2>&1 || rc=$?
expect_eq "mutexstat --help: exit status" "$rc" 0
# The Options part: lines that start with an option, "-o, --output PATH".
sed -n '/^Options:/,/^$/p' "$WORK/help" | grep -E '^ +-' |
    grep -oE '(^|[ ,])--?[a-z][a-z-]*' | tr -d ' ,' | sort -u >"$WORK/launcher_options"
n=$(wc -l <"$WORK/launcher_options")
if [ "$n" -ge 10 ]; then pass "mutexstat --help lists $n options"
else fail "only $n options read from mutexstat --help"; fi
while read -r o; do
	# an entry of OPTIONS: a tag at the indent that names the option
	if grep -Eq -- "^       (-[a-z], )?$o( |,|\$)" "$WORK/options"; then
		pass "mutexstat(1) OPTIONS: $o"
	else
		fail "mutexstat(1) has no $o in OPTIONS (add a .TP entry)"
	fi
done <"$WORK/launcher_options"

# ---- the doc/ files they point to ------------------------------------------
cat "$readme" "$WORK/mutexstat.1.txt" "$WORK/mutexstat.3.txt" |
    grep -oE 'doc/[a-z-]+\.md' | sort -u >"$WORK/docs"
[ -s "$WORK/docs" ] || fail "the README names no doc/ file"
while read -r d; do
	if [ -f "$top_srcdir/$d" ]; then pass "$d exists"
	else fail "$d is named in the README or a man page, and does not exist"; fi
done <"$WORK/docs"

finish
