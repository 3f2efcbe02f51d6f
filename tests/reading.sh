# reading.sh - the report read line by line, as a user would: each line
# must be true of what the program did (tests/reading.c, tests/reading_names.cpp
# and the examples), not only well formed.
. "$top_srcdir/tests/lib.sh"
B=$top_builddir
P=$B/tests/reading

# addr_of OUT NAME: the address the program printed for NAME ("m1 0x...").
addr_of() { sed -n "s/^$2 //p" "$1"; }

# section FILE ADDR: the detail section of the mutex at ADDR ("#N mutex ADDR ...").
section() {
	awk -v a="$2" '/^#[0-9]+ / { on = ($2 == "mutex" && $3 == a) } on' "$1"
}

# ops FILE ADDR: "operation result" of each recent operation of that mutex,
# oldest first, one per line.
ops() {
	section "$1" "$2" | awk '/^ +order +thread +operation/ { on = 1; next }
		on && /^ +[0-9]+ +[0-9]+  / { r = $4; if ($5 == "after") r = r " after wait"
			print $3, r }'
}

# ---- a mutex first seen destroyed: its kind is "destroyed", not every flag ----
run_with "$WORK/out" "$WORK/err" "$B/examples/misuse"
gone=$(grep -A1 '^MISUSE: use of a destroyed mutex' "$WORK/report" | head -1 | sed 's/.*mutex \(0x[0-9a-f]*\),.*/\1/')
expect_eq "the destroyed mutex's kind" \
	"$(grep "^#[0-9]* mutex $gone " "$WORK/report" | sed 's/^#[0-9]* mutex [^ ]* //')" "(destroyed)"
expect_no_grep "no mutex of every kind at once" 'prio-inherit prio-protect' "$WORK/report"

# ---- a busy trylock and the unlock after it share an order number: the
# trylock, which found the mutex held, is listed first ----
run_with "$WORK/out" "$WORK/err" "$P" tie
expect_eq "tie: the trylock found it busy" "$(grep '^trylock' "$WORK/out")" "trylock: EBUSY"
expect_eq "tie: m1's recent operations in the order they happened" \
	"$(ops "$WORK/report" "$(addr_of "$WORK/out" m1)" | tr '\n' ',')" \
	"lock ok,trylock EBUSY,unlock ok,"

# ---- a C++ name longer than a frame holds keeps its end: the function ----
run_with "$WORK/out" "$WORK/err" "$B/tests/reading_names"
expect_eq "long name: the program ran" "$(cat "$WORK/out")" "1 item"
expect_grep "long name: first locked at the function, its lists shortened" \
	'^  first locked at   [.a-z_]*::registry_of_things_that_need_locking<\.\.\.>::put_under_the_lock\(\.\.\.\) reading_names\.cpp:[0-9]+$' \
	"$WORK/report"
MUTEXSTAT_FORMAT=json MUTEXSTAT_OUTPUT=$WORK/names run_with "$WORK/out" "$WORK/err" "$B/tests/reading_names"
if command -v jq >/dev/null; then
	expect_eq "long name: JSON names the function" \
		"$(jq -r '.mutexes[0].first_locked_at[0].function' "$WORK/names.json" | sed 's/.*>::/..>::/')" \
		"..>::put_under_the_lock(...)"
fi

awk 'length > 120 { print FILENAME ": " $0 }' "$WORK"/report* >"$WORK/wide"
expect_eq "no line over 120 columns" "$(cat "$WORK/wide")" ""
finish
