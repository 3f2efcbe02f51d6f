#!/bin/sh
# tests/cxx_debug.sh - std::mutex in a program built with -O0 (a debug
# build): every mutex is locked from the one line of bits/gthr-default.h
# that calls pthread_mutex_lock, under std::mutex::lock and a lock guard's
# constructor.  The report must name the program's functions: each
# mutex's own first-lock stack (not the first mutex's, shared), the top
# table's "first locked at" the function of tests/cxx_debug.cpp that took
# it, and an inversion's mutexes the line that first locked them.
# Built here, not by make: the build's CXXFLAGS (-O2) would come last.

. "$top_srcdir/tests/lib.sh"

CXX=${CXX:-c++}
if ! command -v "$CXX" >/dev/null 2>&1; then
	echo "skip: no C++ compiler ($CXX)"
	exit 77
fi
src="$top_srcdir/tests/cxx_debug.cpp"
# shellcheck disable=SC2086 # SAN_FLAGS is a list of flags
"$CXX" -std=gnu++17 -g -O0 $SAN_FLAGS -pthread -o "$WORK/cxx_debug" "$src" ||
	{ fail "cannot build $src with $CXX"; finish; }

"$WORK/cxx_debug" >"$WORK/plain.out" 2>"$WORK/plain.err"
plain_status=$?
MUTEXSTAT_TOP=20 run_with "$WORK/out" "$WORK/err" "$WORK/cxx_debug"
expect_eq "exit status as without the library" "$?" "$plain_status"
expect_eq "stdout as without the library (its addresses aside)" \
	"$(grep '^counter' "$WORK/out")" "counter 12, balances 100 100"

line_of() { grep -n "// $1\$" "$src" | cut -d: -f1; }
# column ADDR: the top table's "first locked at" of that mutex, without
# the parentheses a narrow column leaves out ("func (file.c:12)" or
# "func file.c:12")
column() {
	awk -v a="$(top_label "$WORK/report" "$1")" '/^Top [0-9]+ mutex/ { top = 1; next } top && /^$/ { top = 0 }
		top && $2 == a { sub(/.*  /, ""); sub(/ \(/, " "); sub(/\)$/, ""); print }' \
		"$WORK/report"
}
want_alpha="alpha(std::mutex&) cxx_debug.cpp:$(line_of ALPHA)"
want_beta="beta(std::mutex&) cxx_debug.cpp:$(line_of BETA)"
want_gamma="gamma_(std::mutex&) cxx_debug.cpp:$(line_of GAMMA)"
right=0 rows=0
while read -r by addr; do
	case $by in alpha) want=$want_alpha ;; beta) want=$want_beta ;; gamma) want=$want_gamma ;; *) continue ;; esac
	rows=$((rows + 1))
	got=$(column "$addr")
	if [ "$got" = "$want" ]; then
		right=$((right + 1))
	else
		echo "  $addr: first locked at '$got', want '$want'" >&2
	fi
done <"$WORK/out"
expect_eq "the top table's first-locked-at names alpha, beta or gamma_ for each of 12 mutexes" \
	"$right of $rows" "12 of 12"
expect_no_grep "each mutex has a first-lock stack of its own" "callers: not kept" "$WORK/report"

# the inversion: each account's line says where the program first locked it
savings=$(awk '$1 == "savings" { print $2 }' "$WORK/out")
expect_grep "one POTENTIAL DEADLOCK" "^POTENTIAL DEADLOCK: 2 mutexes" "$WORK/report"
expect_eq "the savings account's line names transfer()'s first lock, past std::" \
	"$(grep -A1 "^  [AB]   mutex $savings <savings>, first locked at" "$WORK/report" | sed -n 2p | sed 's/+0x[0-9a-f]*//')" \
	"        through a wrapper, first locked from  transfer(account&, account&, long) (tests/cxx_debug.cpp:$(line_of TRANSFER_FROM))"
finish
