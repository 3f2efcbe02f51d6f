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

# ---- a mutex first seen destroyed: its kind is "destroyed", not every flag
run_with "$WORK/out" "$WORK/err" "$B/examples/misuse"
gone=$(grep -A1 '^MISUSE: use of a destroyed mutex' "$WORK/report" | head -1 | sed 's/.*mutex \(0x[0-9a-f]*\),.*/\1/')
expect_eq "the destroyed mutex's kind" \
	"$(grep "^#[0-9]* mutex $gone " "$WORK/report" | sed 's/^#[0-9]* mutex [^ ]* //')" "(destroyed)"
expect_no_grep "no mutex of every kind at once" 'prio-inherit prio-protect' "$WORK/report"
expect_eq "the top table: the mutexes never locked say so, not '?'" \
	"$(awk '/^Top /,/^$/' "$WORK/report" | grep -c '  (never locked)$') $(awk '/^Top /,/^$/' "$WORK/report" | grep -c ' ?$')" "2 0"

# ---- mutexes destroyed without ever being locked: the header says why no
# line has them ----
run_with "$WORK/out" "$WORK/err" "$P" ended
expect_grep "ended: 4 destroyed" "^  4 mutexes destroyed and 0 initialised again: " "$WORK/report"
expect_grep "ended: 3 of them in no line, and why" \
	'^  3 of them were never locked: no first-lock site, so no line unless a call on one failed$' "$WORK/report"
expect_grep "ended: the one locked has its line" '^  1 1 ended  +1 ' "$WORK/report"

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
# (its namespaces, which do not fit, go whole: "..registry_of_...")
expect_grep "long name: first locked at the function, its lists shortened" \
	'^  first locked at   [.][.]registry_of_things_that_need_locking<\.\.\.>::put_under_the_lock\(\.\.\.\) reading_names\.cpp:[0-9]+$' \
	"$WORK/report"
MUTEXSTAT_FORMAT=json MUTEXSTAT_OUTPUT=$WORK/names run_with "$WORK/out" "$WORK/err" "$B/tests/reading_names"
if command -v jq >/dev/null; then
	expect_eq "long name: JSON names the function" \
		"$(jq -r '.mutexes[0].first_locked_at[0].function' "$WORK/names.json" | sed 's/.*>::/..>::/')" \
		"..>::put_under_the_lock(...)"
fi

# a name still too long once its lists are "...": the frame keeps its end,
# whose "(...)" stays whole (a column cut to it read "duration(")
run_with "$WORK/out" "$WORK/err" "$B/tests/reading_names" long
expect_eq "longer name: the program ran" "$(cat "$WORK/out")" "1 item"
expect_grep "longer name: first locked at the function's end, its arguments whole" \
	'^  first locked at   \.\.[A-Za-z_:<>.]*_held_for_the_whole_duration\(\.\.\.\) reading_names\.cpp:[0-9]+$' \
	"$WORK/report"
expect_grep "longer name: the top table's column too" \
	'  \.\.[a-z_]*_duration\(\.\.\.\) reading_names\.cpp:[0-9]+$' "$WORK/report"

# ---- two mutexes first locked at one line, from two functions (a
# wrapper): each has a stack of its own; a line whose first four stacks
# agreed shares its stack, and a later caller's mutex shows the line alone ----
run_with "$WORK/out" "$WORK/err" "$P" sites
cp "$WORK/report" "$WORK/report.sites"
m1=$(addr_of "$WORK/out" m1)
m2=$(addr_of "$WORK/out" m2)
m3=$(addr_of "$WORK/out" m3)
# first_locked FILE ADDR: the first-locked-at lines of that mutex, joined
first_locked() {
	section "$1" "$2" | awk '/^  first locked at / { on = 1; sub(/^  first locked at +/, ""); printf "%s|", $0; next }
		on && /^                    / { sub(/^ +/, ""); printf "%s|", $0; next } { on = 0 }'
}
line_of() { grep -n "$1" "$top_srcdir/tests/reading.c" | cut -d: -f1; }
expect_eq "sites: m1's own stack, from from_alpha" \
	"$(first_locked "$WORK/report" "$m1" | sed 's/+0x[0-9a-f]*//g' | cut -d'|' -f1-2)" \
	"first_lock (tests/reading.c:$(line_of FIRST_LOCK), reading)|from_alpha (tests/reading.c:$(line_of '^	first_lock(&m1)'), reading)"
expect_eq "sites: m2's own stack, from from_beta (the line is a wrapper)" \
	"$(first_locked "$WORK/report" "$m2" | sed 's/+0x[0-9a-f]*//g' | cut -d'|' -f1-2)" \
	"first_lock (tests/reading.c:$(line_of FIRST_LOCK), reading)|from_beta (tests/reading.c:$(line_of '^	first_lock(&m2)'), reading)"
expect_eq "sites: m3 at a shared line alone, not from_loop's callers" \
	"$(first_locked "$WORK/report" "$m3" | sed 's/+0x[0-9a-f]*//')" \
	"shared_lock (tests/reading.c:$(line_of SHARED_LOCK), reading)|(its callers: not kept, this line's stack was taken for the first mutex it locked)|"
# the top table's column names a wrapper's caller, a shared line the line
column_of() { awk -v a="$(top_label "$1" "$2")" '$2 == a { gsub(/[()]/, "", $NF); print $NF }' "$1"; }
expect_eq "sites: the column of m1, m2 (a wrapper's callers) and m3 (a shared line)" \
	"$(column_of "$WORK/report" "$m1") $(column_of "$WORK/report" "$m2") $(column_of "$WORK/report" "$m3")" \
	"reading.c:$(line_of '^	first_lock(&m1)') reading.c:$(line_of '^	first_lock(&m2)') reading.c:$(line_of SHARED_LOCK)"
# (without the parentheses where the line's number leaves no room for them)
expect_grep "sites: m2's row names from_beta" "^ +[0-9]+ $(top_label_re "$WORK/report" "$m2") .* from_beta \(?reading\.c:[0-9]+\)?\$" "$WORK/report"
MUTEXSTAT_FORMAT=json MUTEXSTAT_OUTPUT=$WORK/sites run_with "$WORK/out" "$WORK/err" "$P" sites
m1=$(addr_of "$WORK/out" m1)
m2=$(addr_of "$WORK/out" m2)
m3=$(addr_of "$WORK/out" m3)
if command -v jq >/dev/null; then
	expect_eq "sites: JSON, m1's and m2's stacks, m3's line alone" \
		"$(jq -r --arg a "$m1" --arg b "$m2" --arg c "$m3" '[(.mutexes[] | select(.address == $a) | .first_locked_at[1].function),
			(.mutexes[] | select(.address == $b) | .first_locked_at[1].function),
			(.mutexes[] | select(.address == $c) | .first_locked_at | length | tostring)] | join(" ")' "$WORK/sites.json")" \
		"from_alpha from_beta 1"
fi

# ---- a wrapper whose slot of the site cache another line took: its mutexes
# still read as first locked by their callers, the one locked after the
# wrapper came back to the slot too ----
run_with "$WORK/out" "$WORK/err" "$P" slottaken
if grep -q '^slots alike$' "$WORK/out"; then
	expect_eq "slottaken: the callers of the wrapper, not its line" \
		"$(for w in w1 w2 w3; do column_of "$WORK/report" "$(addr_of "$WORK/out" $w)"; done | paste -sd' ' -)" \
		"reading.c:$(line_of '^	wrap_slot(&w1)') reading.c:$(line_of '^	wrap_slot(&w2)') reading.c:$(line_of '^	wrap_slot(&w3)')"
else
	pass "slottaken: the two functions' call sites are not alike here, skipped"
fi

# ---- ended lives of a wrapper: a line per caller once the wrapper is
# known (from_two's first capture differs from from_three's); from_three's
# lives ended before that, at the wrapper's line ----
run_with "$WORK/out" "$WORK/err" "$P" wrapended
expect_eq "wrapended: 3 lives ended at the wrapper's line, then 2 at from_two's" \
	"$(awk '$3 == "ended" { gsub(/[()]/, "", $NF); print $2, $4, $NF }' "$WORK/report" | sort)" \
	"$(printf '2 2 reading.c:%s\n3 3 reading.c:%s' "$(line_of FROM_TWO)" "$(line_of WRAPPED_LOCK)")"

expect_grep "wrapended: from_two's line says it called a wrapper" \
	"^#[0-9]+ 2 mutexes that ended \(destroyed or initialised again\), first locked by a wrapper called at from_two " "$WORK/report"
expect_grep "wrapended: the wrapper's own line says where it locks" \
	"^#[0-9]+ 3 mutexes that ended \(destroyed or initialised again\), first locked at wrapped_life\+" "$WORK/report"
if command -v jq >/dev/null; then
	MUTEXSTAT_FORMAT=json MUTEXSTAT_OUTPUT=$WORK/wrapended run_with "$WORK/out" "$WORK/err" "$P" wrapended
	expect_eq "wrapended: JSON, through_wrapper on from_two's line only" \
		"$(jq -r '[.ended[] | "\(.mutexes):\(.through_wrapper)"] | sort | join(" ")' "$WORK/wrapended.json")" \
		"2:true 3:false"
fi

# ---- a function with one caller, reached from main and from a thread:
# its stacks differ below that caller, and it is not a wrapper ----
run_with "$WORK/out" "$WORK/err" "$P" onecaller
expect_eq "onecaller: 2000 lives in one line, at the lock's" \
	"$(awk '$3 == "ended" { gsub(/[()]/, "", $NF); print $2, $4, $NF }' "$WORK/report")" \
	"2000 2000 reading.c:$(line_of ONE_LIFE)"

# ---- a MISUSE at a line where another mutex was first locked, from
# another caller: its own stack, captured when it happened -- from_gamma's,
# not that of the other mutex's first lock (from_delta) ----
run_with "$WORK/out" "$WORK/err" "$P" destroyed
expect_eq "destroyed: glibc's answer" "$(grep '^lock of' "$WORK/out")" "lock of a destroyed mutex: EINVAL"
expect_eq "destroyed: the MISUSE's own stack, through lock_only from from_gamma" \
	"$(grep -A4 '^MISUSE: use of a destroyed mutex' "$WORK/report" | sed -n '3,4p' | sed 's/+0x[0-9a-f]*//')" \
	"    lock_only (tests/reading.c:$(line_of LOCK_ONLY), reading)
    from_gamma (tests/reading.c:$(line_of '^	printf("lock of a destroyed'), reading)"

# ---- a mutex still locked by a thread that has ended says so ----
run_with "$WORK/out" "$WORK/err" "$P" exited
cp "$WORK/report" "$WORK/report.exited"
expect_grep "exited: HELD AT THREAD EXIT" '^HELD AT THREAD EXIT: thread [0-9]+ ' "$WORK/report"
holder=$(sed -n 's/^HELD AT THREAD EXIT: thread \([0-9]*\) .*/\1/p' "$WORK/report")
expect_grep "exited: still locked, by a thread that has exited" \
	"^  $(addr_of "$WORK/out" m1) <m1> held by thread $holder \(exited\), taken at take_and_leave" "$WORK/report"

# ---- a thread that ended holding a mutex it took through a wrapper: its
# "taken at" is the wrapper's line, which every such finding shares; the
# finding shows where the wrapper was called for the mutex's first lock,
# and the rule it suggests names that caller, not the wrapper ----
run_with "$WORK/out" "$WORK/err" "$P" exitwrapped
cp "$WORK/report" "$WORK/report.exitwrapped"
m3=$(addr_of "$WORK/out" m3)
expect_eq "exitwrapped: the finding, through the wrapper to its caller" \
	"$(sed -n '/^HELD AT THREAD EXIT/,/^$/p' "$WORK/report" | sed 's/+0x[0-9a-f]*//g; s/thread [0-9]* "[^"]*"/thread T/')" \
	"HELD AT THREAD EXIT: thread T ended holding 1 mutex
  mutex $m3 <m3> taken at lock_only (tests/reading.c:$(line_of LOCK_ONLY), reading)
    through a wrapper, first locked from  leave_wrapped (tests/reading.c:$(line_of LEAVE_WRAPPED), reading)
  to suppress it: held-at-exit:^leave_wrapped$ (a line of MUTEXSTAT_SUPPRESSIONS)"
expect_eq "exitwrapped: still locked, through the wrapper to its caller" \
	"$(sed -n '/^Mutexes still locked:/,/^$/p' "$WORK/report" | sed 's/+0x[0-9a-f]*//g; s/thread [0-9]*/thread T/')" \
	"Mutexes still locked:
  $m3 <m3> held by thread T (exited), taken at lock_only (tests/reading.c:$(line_of LOCK_ONLY), reading)
    through a wrapper, first locked from  leave_wrapped (tests/reading.c:$(line_of LEAVE_WRAPPED), reading)"
printf 'held-at-exit:leave_wrapped\n' > "$WORK/rules"
MUTEXSTAT_SUPPRESSIONS=$WORK/rules run_with "$WORK/out" "$WORK/err" "$P" exitwrapped
expect_no_grep "exitwrapped: a rule naming the wrapper's caller suppresses it" \
	'^HELD AT THREAD EXIT' "$WORK/report"
if command -v jq >/dev/null; then
	MUTEXSTAT_FORMAT=json MUTEXSTAT_SUPPRESSIONS=$WORK/rules MUTEXSTAT_OUTPUT=$WORK/ew \
	    run_with "$WORK/out" "$WORK/err" "$P" exitwrapped
	expect_eq "exitwrapped: JSON, the wrapper's caller and the rule that matched" \
		"$(jq -r '.findings[] | select(.kind == "held-at-thread-exit") |
			"\(.mutexes[0].at.function) \(.mutexes[0].wrapper_called_from[0].function) \(.suppressed_by)"' \
			"$WORK/ew.json")" "lock_only leave_wrapped held-at-exit:leave_wrapped"
fi

# ---- an inversion of two mutexes first locked in a wrapper: each mutex's
# line says which line called the wrapper for its first lock, and the rule
# suggested names that caller, not the wrapper every lock goes through ----
run_with "$WORK/out" "$WORK/err" "$P" wrapabba
cp "$WORK/report" "$WORK/report.wrapabba"
for m in m1:INV_ONE_A m3:INV_ONE_B; do
	name=${m%%:*} at=$(addr_of "$WORK/out" "${m%%:*}")
	expect_eq "wrapabba: $name's line, and the line that called the wrapper for its first lock" \
		"$(grep -A1 "^  [AB]   mutex $at <$name>, " "$WORK/report" | sed 's/+0x[0-9a-f]*//g; s/^  [AB]  /  X  /')" \
		"  X   mutex $at <$name>, first locked at lock_only (tests/reading.c:$(line_of LOCK_ONLY), reading)
        through a wrapper, first locked from  inv_one (tests/reading.c:$(line_of "${m#*:}"), reading)"
done
expect_grep "wrapabba: the rule suggested names the wrapper's caller" \
	'^  to suppress it: potential-deadlock:\^inv_one\$ ' "$WORK/report"
printf 'potential-deadlock:inv_one\n' > "$WORK/rules"
MUTEXSTAT_SUPPRESSIONS=$WORK/rules run_with "$WORK/out" "$WORK/err" "$P" wrapabba
expect_no_grep "wrapabba: and suppresses it" '^POTENTIAL DEADLOCK' "$WORK/report"

# ---- a DEADLOCK of mutexes taken in a wrapper: each holder's "taken at" is
# the wrapper's line; the line under it says which line called it for the
# mutex's first lock, and the rule suggested names that line's function ----
# (the watchdog's report is the first live one, report.1)
MUTEXSTAT_WATCHDOG=1 MUTEXSTAT_ON_DEADLOCK=abort \
	run_with "$WORK/out" "$WORK/err" timeout 30 "$P" wraphang
expect_eq "wraphang: ended by MUTEXSTAT_ON_DEADLOCK (SIGABRT)" "$?" 134
cp "$WORK/report.1" "$WORK/report.wraphang"
expect_eq "wraphang: the holders' lines, through the wrapper to hang_side" \
	"$(sed -n '/^DEADLOCK:/,/^$/p' "$WORK/report.1" | grep --no-group-separator -A1 '^    held by thread' |
	   sed 's/+0x[0-9a-f]*//g; s/thread [0-9]*/thread T/')" \
	"$(for i in 1 2; do
		echo "    held by thread T, taken at lock_only (tests/reading.c:$(line_of LOCK_ONLY), reading)"
		echo "      through a wrapper, first locked from  hang_side (tests/reading.c:$(line_of HANG_FIRST), reading)"
	done)"
expect_grep "wraphang: the rule suggested names the wrapper's caller" \
	'^  to suppress it: deadlock:\^hang_side\$ ' "$WORK/report.1"
if command -v jq >/dev/null; then
	MUTEXSTAT_WATCHDOG=1 MUTEXSTAT_ON_DEADLOCK=abort MUTEXSTAT_FORMAT=json MUTEXSTAT_OUTPUT=$WORK/wh \
		run_with "$WORK/out" "$WORK/err" timeout 30 "$P" wraphang
	expect_eq "wraphang: JSON, each holder's wrapper called from hang_side" \
		"$(jq -r '[.findings[] | select(.kind == "deadlock") | .threads[] |
			.owner_wrapper_called_from[0].function] | join(" ")' "$WORK/wh.1.json")" \
		"hang_side hang_side"
fi

# ---- a relock refused through a wrapper: where the lock was taken is the
# wrapper's line, and the line that called it follows ----
run_with "$WORK/out" "$WORK/err" "$P" wrapself
expect_eq "wrapself: glibc's answer" "$(grep '^relock' "$WORK/out")" "relock: EDEADLK"
expect_eq "wrapself: taken at the wrapper, first locked from wrapself" \
	"$(sed -n '/^MISUSE: relock refused/,/^  relocked at/p' "$WORK/report" | sed -n '3,4p' | sed 's/+0x[0-9a-f]*//g')" \
	"  taken at     lock_only (tests/reading.c:$(line_of LOCK_ONLY), reading)
    through a wrapper, first locked from  wrapself (tests/reading.c:$(line_of SELF_FIRST), reading)"
expect_grep "wrapself: the rule suggested names the wrapper's caller" \
	'^  to suppress it: misuse:\^wrapself\$ ' "$WORK/report"

# ---- an ended line whose site is too long for its heading's end: the
# site on a line of its own, whole, not cut to its last characters ----
run_with "$WORK/out" "$WORK/err" "$P" longended
expect_eq "longended: the heading, then the site on a line of its own" \
	"$(grep -A1 '^#1 ' "$WORK/report" | sed 's/+0x[0-9a-f]*//')" \
	"#1 1 mutex that ended (destroyed or initialised again), first locked at
    a_function_whose_name_leaves_no_room_at_the_end_of_a_heading (tests/reading.c:$(line_of LONG_NAMED), reading)"

# ---- a live dump of a hang: the waits under way, in no total yet, say how
# long they have lasted ----
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/phil" \
	"$B/examples/deadlock_philosophers" hang > "$WORK/out" 2> "$WORK/err" &
pid=$!
wait_for "$WORK/out" '^all five wait for their right fork$' 20 || fail "hang: never hung"
kill -USR1 $pid
waiting_now() { grep -Ec '^  waiting now: 1 thread, the longest for [0-9.]+ (ns|µs|ms|s) so far \(a wait is in the totals once it ends\)$' "$WORK/phil.1" 2>/dev/null; }
for tenth in $(seq 100); do [ "$(waiting_now)" -ge 5 ] && break; sleep 0.1; done
kill -9 $pid; wait $pid 2>/dev/null
expect_eq "hang: each fork's section says how long its waiter has waited" "$(waiting_now)" 5
expect_eq "hang: ... right after the line that counts it" \
	"$(grep -A1 '(1 now)' "$WORK/phil.1" | grep -c '^  waiting now: ')" 5

# ns "1.04 s": a report's duration in nanoseconds
ns() { echo "$1" | awk '{ v = $1; u = $2; m = u == "s" ? 1e9 : u == "ms" ? 1e6 : u == "ns" ? 1 : 1e3
	printf "%d\n", v * m }'; }

# ---- how long a wait under way has lasted counts to the report's moment,
# as the run's length in the header does: never longer than the run ----
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/sleep" \
	"$B/tests/scenario" holdsleep > "$WORK/out" 2> "$WORK/err" &
pid=$!
wait_for "$WORK/out" '^waiting$' 20 || fail "holdsleep: never started"
kill -USR1 $pid
wait_for "$WORK/sleep.1" '^  recent operations' 20 || fail "holdsleep: no dump"
kill -9 $pid; wait $pid 2>/dev/null
ran=$(ns "$(sed -n 's/^mutexstat: scenario (pid [0-9]*) ran \([0-9.]* [^:]*\):.*/\1/p' "$WORK/sleep.1")")
waited=$(ns "$(sed -n 's/^  waiting now: 1 thread, the longest for \([0-9.]* [^ ]*\) so far .*/\1/p' "$WORK/sleep.1")")
if [ "$ran" -gt 0 ] && [ "$waited" -gt 0 ] && [ "$waited" -le "$ran" ]; then
	pass "holdsleep: waited $waited ns so far, in a run of $ran ns"
else
	fail "holdsleep: waited '$waited' ns so far, in a run of '$ran' ns"
fi

# ---- names longer than their place are cut before a character, never
# inside one, and say so ----
run_with "$WORK/out" "$WORK/err" "$P" names
cp "$WORK/report" "$WORK/report.names"
if iconv -f UTF-8 -t UTF-8 "$WORK/report" >/dev/null 2>&1; then pass "names: the report is UTF-8"
else fail "names: a name was cut inside a character"; fi
accents=$(printf 'a'; for i in $(seq 20); do printf '\303\251'; done)
expect_eq "names: the top table's cuts" \
	"$(awk '/^Top /,/^$/' "$WORK/report" | awk '$1 ~ /^[12]$/ { print $2 }' | sort)" \
	"$(printf '%s\n' "a$(for i in $(seq 7); do printf '\303\251'; done)..." "queue_for_incom..." | sort)"
expect_grep "names: a MISUSE with the name cut at 30 bytes" \
	"^MISUSE: unlock of a mutex that is not locked: mutex 0x[0-9a-f]+ <m1> \"a$(for i in $(seq 13); do printf '\303\251'; done)\.\.\.\", 1 time$" \
	"$WORK/report"
expect_grep "names: the heading keeps 40 bytes, whole characters" \
	"^#[0-9] mutex 0x[0-9a-f]+ <m1> \"a$(for i in $(seq 18); do printf '\303\251'; done)\.\.\.\" \(normal, no init seen\)$" "$WORK/report"

# ---- a program with a long name: its name cut, the counts on a line of
# their own ----
long=a_program_whose_name_is_quite_long_for_a_report_line_really
cp "$P" "$WORK/$long"
MUTEXSTAT_OUTPUT=$WORK/report.long run_with "$WORK/out" "$WORK/err" "$WORK/$long" tie
expect_eq "long program name: the summary, on two lines" \
	"$(head -2 "$WORK/report.long" | sed 's/(pid [0-9]*) ran [0-9.]* [^:]*:/(pid P) ran T:/')" \
	"mutexstat: a_program_whose_name_is_quite_long_fo... (pid P) ran T:
  2 threads used mutexes, 1 mutex tracked, 0 untracked"
MUTEXSTAT_OUTPUT=$WORK/report.long0 run_with "$WORK/out" "$WORK/err" "$WORK/$long" nothing
expect_grep "long program name: the one line of a program that locked nothing" \
	'^mutexstat: a_program_whose_name_is_quite_long_fo\.\.\. \(pid [0-9]+\) ran [0-9.]+ [^ ]+ and locked no mutexes$' \
	"$WORK/report.long0"

# ---- counters with many digits: the line of counts wraps at 120 columns ----
MUTEXSTAT_STACK_SAMPLE=1000000 MUTEXSTAT_OUTPUT=$WORK/report.counters \
	run_with "$WORK/out" "$WORK/err" "$P" counters
expect_eq "counters: the program's own count" "$(tail -1 "$WORK/out")" \
	"busy 10000000, timed out 10000000, got 10000000, condition waits 10000000"
expect_eq "counters: m1's counts, on two lines" \
	"$(section "$WORK/report.counters" "$(addr_of "$WORK/out" m1)" | sed -n '2,3p' | sed 's/mean wait .*/mean wait/')" \
	"  trylock 10000000 ok, 10000000 busy; timed out 10000000; most waiters at once 1;
  condition waits 10000000; mean wait"

# ---- mutexes first locked in a stripped library, through its lock
# wrappers: the top table's column names the wrapper and its offset, or the
# library and the offset -- never the library's name alone, which is how
# every row of a key-value store's report read ----
CC=${CC:-cc}
KV=$WORK/libkeyvaluestore-test.so.3
if "$CC" -O2 -shared -fPIC -o "$KV" "$top_srcdir/tests/stripped_lock.c" -lpthread 2>"$WORK/cc.err" &&
   strip "$KV" 2>>"$WORK/cc.err" &&
   "$CC" -O2 -o "$WORK/kvuser" "$top_srcdir/tests/stripped_lock_user.c" "$KV" \
	-Wl,-rpath,"$WORK" 2>>"$WORK/cc.err"; then
	MUTEXSTAT_OUTPUT=$WORK/report.stripped run_with "$WORK/out" "$WORK/err" "$WORK/kvuser"
	expect_eq "stripped: the program ran" "$(cat "$WORK/out")" "1000 uses"
	awk '/^Top / { t = 1; getline; next } t && /^$/ { exit } t { print $NF }' \
		"$WORK/report.stripped" | sort > "$WORK/stripped.columns"
	expect_eq "stripped: the exported wrapper with its offset, the hidden one's library and offset" \
		"$(sed 's/+0x[0-9a-f]*$/+OFF/' "$WORK/stripped.columns" | tr '\n' ' ')" \
		"kvs_mutex_lock+OFF libkeyvaluestore-test.so.3+OFF "
else
	fail "stripped: cannot build the library and its program with $CC"
	sed 's/^/  | /' "$WORK/cc.err" >&2
fi

# columns, not bytes: a UTF-8 character's continuation bytes take none
for f in "$WORK"/report* "$WORK/phil.1"; do
	LC_ALL=C sed "s/$(printf '[\200-\277]')//g" "$f" | awk -v f="$f" 'length > 120 { print f ": " $0 }'
done >"$WORK/wide"
expect_eq "no line over 120 columns" "$(cat "$WORK/wide")" ""
finish
