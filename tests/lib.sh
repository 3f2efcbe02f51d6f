# tests/lib.sh - shared helpers for the integration tests (sourced).
#
# The test harness exports MUTEXSTAT_LIB (the built library), top_builddir
# and top_srcdir.  Each test runs programs with and without the library and
# checks what a user would read in the report.

set -u
: "${top_builddir:?run through make check}"
: "${MUTEXSTAT_LIB:?run through make check}"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/mutexstat-test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
FAILED=0
PASSED=0

# run_with OUT ERR program args...: the program under the library, report
# to $WORK/report (unless MUTEXSTAT_OUTPUT is already set by the caller).
run_with() {
	out=$1; err=$2; shift 2
	env LD_PRELOAD="$MUTEXSTAT_LIB" \
	    MUTEXSTAT_OUTPUT="${MUTEXSTAT_OUTPUT-$WORK/report}" \
	    "$@" >"$out" 2>"$err"
}

fail() {
	echo "FAIL: $*" >&2
	FAILED=$((FAILED + 1))
}

pass() {
	echo "ok: $*"
	PASSED=$((PASSED + 1))
}

# expect_eq WHAT GOT WANT
expect_eq() {
	if [ "$2" = "$3" ]; then pass "$1 = $3"; else fail "$1: got '$2', want '$3'"; fi
}

# expect_grep WHAT PATTERN FILE (extended regex)
expect_grep() {
	if grep -Eq -- "$2" "$3"; then pass "$1"; else
		fail "$1: /$2/ not in $3"; sed 's/^/  | /' "$3" >&2; fi
}

expect_no_grep() {
	if grep -Eq -- "$2" "$3"; then fail "$1: /$2/ found in $3"
		sed 's/^/  | /' "$3" >&2; else pass "$1"; fi
}

# top_row FILE MUTEX-LABEL: the row of the top table for a mutex (address,
# name, or "N destroyed"), columns separated by two or more spaces collapsed.
top_row() {
	awk -v label="$2" '/^Top [0-9]+ mutex(es)? by/ { in_top = 1; next }
		in_top && /^$/ { in_top = 0 }
		in_top && index($0, " " label " ") { print; exit }' "$1"
}

finish() {
	echo "$PASSED passed, $FAILED failed"
	[ "$FAILED" -eq 0 ]
	exit $?
}
