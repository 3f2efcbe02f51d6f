# lint.sh - scripts/lint finds nothing in lib/: cppcheck and clang-tidy
# (the checks in .clang-tidy) report no finding, or each one is explained
# where it is with an inline suppression.  And it does find: in a copy of
# the tree whose lib/ holds two planted bugs, each tool names each one and
# the script fails.  Skipped without cppcheck or clang-tidy, and in a sanitized
# build (it reads the sources, which the normal build's suite has linted).
. "$top_srcdir/tests/lib.sh"
skip_if_sanitized "the sources are linted by the normal build's suite"
for tool in cppcheck clang-tidy; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "SKIP: $tool is not installed (Debian package $tool)"
		exit 77
	fi
done

rc=0
sh "$top_srcdir/scripts/lint" >"$WORK/lint.out" 2>&1 || rc=$?
sed 's/^/  | /' "$WORK/lint.out"
expect_eq "scripts/lint on lib/: exit status" "$rc" 0
expect_eq "scripts/lint on lib/: the last line" "$(tail -n 1 "$WORK/lint.out")" \
    "lint: 0 findings"

# A tree with one file in lib/base/: a leak and a division by zero.
T=$WORK/tree
mkdir -p "$T/scripts" "$T/lib/base" "$T/include"
cp "$top_srcdir/scripts/lint" "$top_srcdir/scripts/cppcheck-posix.cfg" "$T/scripts/"
cp "$top_srcdir/.clang-tidy" "$T/"
cat >"$T/lib/base/planted.c" <<'EOF'
#include <stdlib.h>
int planted_leak(int n)
{
	char *p = malloc(16);
	if (n > 0)
		return n; /* p is lost */
	free(p);
	return 0;
}
int planted_divide(int n)
{
	int zero = 0;
	return n / zero;
}
EOF
rc=0
sh "$T/scripts/lint" >"$WORK/planted.out" 2>&1 || rc=$?
expect_eq "planted bugs: exit status" "$rc" 1
expect_grep "planted bugs: cppcheck names the leak" \
    '^lib/base/planted\.c:6: cppcheck error \[memleak\]' "$WORK/planted.out"
expect_grep "planted bugs: cppcheck names the division" \
    '^lib/base/planted\.c:13: cppcheck error \[zerodiv\]' "$WORK/planted.out"
expect_grep "planted bugs: clang-tidy names the leak" \
    'lib/base/planted\.c:6:[0-9]+: error: Potential leak of memory .* \[clang-analyzer-unix\.Malloc' \
    "$WORK/planted.out"
expect_grep "planted bugs: clang-tidy names the division" \
    'lib/base/planted\.c:13:[0-9]+: error: Division by zero \[clang-analyzer-core\.DivideZero' \
    "$WORK/planted.out"
expect_eq "planted bugs: the last line" "$(tail -n 1 "$WORK/planted.out")" \
    "lint: 4 findings"

finish
