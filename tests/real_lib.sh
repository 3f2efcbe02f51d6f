# tests/real_lib.sh - helpers for the tests that run real programs from
# Debian packages under the library (tests/real_*.sh; sourced after
# tests/lib.sh).  What "a complete report" means is checked in one place.

# need_program PACKAGE PATH...: skip the test (exit 77) unless each PATH is
# an executable; the message names the Debian package (scripts/deps installs
# it, so CI has it).
need_program() {
	pkg=$1; shift
	for p in "$@"; do
		if [ ! -x "$p" ]; then
			echo "SKIP: $p is missing (Debian package $pkg; ./scripts/deps installs it)"
			exit 77
		fi
	done
}

# report_complete WHAT FILE PROGRAM: FILE is one whole report of PROGRAM
# (as `comm` names it): its summary line with no untracked mutexes, a top
# table whose every row has a nonzero acquisition count, one detail section
# per row, no history entry caught while being rewritten, nothing but text.
report_complete() {
	what=$1; f=$2; prog=$3
	expect_grep "$what: the summary line" \
		"^mutexstat: $prog \(pid [0-9]+\) ran [0-9.]+ [a-zµ]+: [0-9]+ threads? used (mutexes, [0-9]+ mutex(es)?|locks, [0-9]+ locks?) tracked, 0 untracked$" "$f"
	rows=$(sed -En 's/^Top ([0-9]+) (mutex(es)?|locks?) by [a-z-]*:$/\1/p' "$f")
	if [ -z "$rows" ]; then
		fail "$what: no top table"
		return
	fi
	# The acquired column: after the rank and the label ("0x...", a name
	# without spaces, or "N ended").
	got=$(awk '/^Top [0-9]+ (mutex(es)?|locks?) by/ { on = 1; getline; next }
		on && /^$/ { exit }
		on { a = ($3 == "ended") ? $4 : $3; n++; if (a + 0 > 0) ok++ }
		END { printf "%d of %d", ok, n }' "$f")
	expect_eq "$what: top table rows with acquisitions" "$got" "$rows of $rows"
	details=0
	i=1
	while [ "$i" -le "$rows" ]; do
		grep -q "^#$i " "$f" && details=$((details + 1))
		i=$((i + 1))
	done
	expect_eq "$what: a detail section per top mutex" "$details" "$rows"
	expect_no_grep "$what: no entry overwritten while read" "overwritten" "$f"
	# Text only: no NUL or other control characters (tabs and newlines aside).
	bad=$(tr -d '\t\n' < "$f" | LC_ALL=C tr -cd '\000-\037\177' | wc -c)
	expect_eq "$what: no control bytes" "$bad" 0
}

# acquired_total FILE: the sum of the top table's acquired column.
acquired_total() {
	awk '/^Top [0-9]+ (mutex(es)?|locks?) by/ { on = 1; getline; next }
		on && /^$/ { exit }
		on { s += ($3 == "ended") ? $4 : $3 }
		END { print s + 0 }' "$1"
}
