# scale.sh - the library at scale (tests/scale.c): 1,000 threads alive at
# once on 100 mutexes, counted exactly; 10,000,000 mutex lives with
# destroy, folded exactly per first-lock site in constant memory; a table
# that was full says so after its untracked mutexes are gone; a thread
# holding 100 mutexes (more than the 64 followed) keeps counts, the list
# of held mutexes and the deadlock analysis right, and the report says
# what was not followed; the resident memory of 1,000,000 live mutexes
# stays within the budget in doc/internals.md, and so does that of 200
# threads that each waited once (each a call stack captured).
. "$top_srcdir/tests/lib.sh"
skip_if_sanitized "it measures resident memory, which ASan's shadow memory changes"
S=$top_builddir/tests/scale
BUDGET=320 # bytes of resident memory per live mutex (doc/internals.md, "Scale")
THREAD_BUDGET=64 # kB of resident memory per thread that waited (doc/internals.md)

# scale_run WHAT ARGS...: same_run (tests/lib.sh) of the scale program,
# and nothing on stderr.
scale_run() {
	same_run "$S" "$@"
	expect_eq "$1: stderr empty" "$(cat "$WORK/err")" ""
}

# ---- 1,000 threads, 100 mutexes ---------------------------------------------
MUTEXSTAT_TOP=100 scale_run "1000 threads" threads 1000 100 100
expect_eq "1000 threads: the program's own counts" "$(cat "$WORK/out")" \
	"1000 threads, 100 mutexes: 100 of 100 locked exactly 1000 times"
expect_grep "1000 threads (and main, which initialised) used mutexes" \
	': 1001 threads used mutexes, 100 mutexes tracked, 0 untracked$' "$WORK/report"
expect_eq "1000 threads: every mutex acquired exactly 1000 times" \
	"$(awk '/^Top [0-9]+ mutex/ { on = 1; getline; next } on && /^$/ { exit }
		on { n[$3 == 1000]++ } END { printf "%d exact, %d not", n[1], n[0] }' "$WORK/report")" \
	"100 exact, 0 not"

# ---- 10,000,000 lives, 1,000 alive at a time -----------------------------------
scale_run "10M lives" churn 1 10000000 1000
expect_grep "10M lives: all destroyed" \
	'^  10000000 mutexes destroyed and 0 initialised again' "$WORK/report"
expect_grep "10M lives: 5,000,000 locked once at churn_once" \
	'^ +[0-9]+ 5000000 ended +5000000 +0 .* churn_once' "$WORK/report"
expect_grep "10M lives: 3,000,000 locked twice at churn_twice" \
	'^ +[0-9]+ 3000000 ended +6000000 +0 .* churn_twice' "$WORK/report"
expect_grep "10M lives: 2,000,000 locked three times at churn_thrice" \
	'^ +[0-9]+ 2000000 ended +6000000 +0 .* churn_thrice' "$WORK/report"
expect_grep "10M lives: only the sampling mutex is alive at the end" \
	': 1 thread used mutexes, 1 mutex tracked, 0 untracked$' "$WORK/report"
grow=$(sed -n 's/.*kB at the end: grew \(-\{0,1\}[0-9][0-9]*\) kB$/\1/p' "$WORK/out")
[ -n "$grow" ] && [ "$grow" -le 1024 ] &&
	pass "10M lives: peak resident memory grew ${grow} kB from the first 1M to 10M" ||
	fail "10M lives: peak resident memory grew '${grow}' kB (more than 1 MiB): $(tail -n 1 "$WORK/out")"

# Two threads at once: the folding stays exact.
scale_run "2 threads, 2M lives" churn 2 2000000 1000
expect_grep "2 threads: 1,000,000 at churn_once" '^ +[0-9]+ 1000000 ended +1000000 +0 .* churn_once' "$WORK/report"
expect_grep "2 threads: 600,000 at churn_twice" '^ +[0-9]+ 600000 ended +1200000 +0 .* churn_twice' "$WORK/report"
expect_grep "2 threads: 400,000 at churn_thrice" '^ +[0-9]+ 400000 ended +1200000 +0 .* churn_thrice' "$WORK/report"

# four threads ending lives at the same three sites at once: the stripes'
# sums (table.c) reach the report exactly
scale_run "4 threads, 2M lives" churn 4 2000000 100
expect_grep "4 threads: 1,000,000 at churn_once" '^ +[0-9]+ 1000000 ended +1000000 +0 .* churn_once' "$WORK/report"
expect_grep "4 threads: 600,000 at churn_twice" '^ +[0-9]+ 600000 ended +1200000 +0 .* churn_twice' "$WORK/report"
expect_grep "4 threads: 400,000 at churn_thrice" '^ +[0-9]+ 400000 ended +1200000 +0 .* churn_thrice' "$WORK/report"

# ---- a table that was full ---------------------------------------------------------
# 64 records, 100 mutexes locked by 8 threads; then all destroyed and 10
# new ones used (tests/lifetimes.sh has the table that is still full).
MUTEXSTAT_TABLE_SIZE=64 MUTEXSTAT_TOP=20 scale_run "full table" full 8 100 1000
expect_eq "full table: the program's counts, untracked mutexes too" "$(head -n 1 "$WORK/out")" \
	"8 threads, 100 mutexes: 100 of 100 locked exactly 80 times"
expect_grep "full table: says it was full, how many were not tracked, and the variable" \
	'^  the table was full: 36 mutexes were not tracked, 36 of them destroyed since;$' "$WORK/report"
expect_grep "full table: ... and the limit" \
	'^  their numbers are in no line of this report; raise MUTEXSTAT_TABLE_SIZE \(now 64\)$' "$WORK/report"
expect_grep "full table: the 64 tracked ones ended with 80 acquisitions each" \
	'^ +[0-9]+ 64 ended +5120 ' "$WORK/report"
expect_grep "full table: room again: the 10 new ones are tracked" \
	': 9 threads used mutexes, 10 mutexes tracked, 0 untracked$' "$WORK/report"
expect_eq "full table: the new ones' 55 acquisitions" \
	"$(awk '/^Top [0-9]+ mutex/ { on = 1; getline; next } on && /^$/ { exit }
		on && $2 ~ /^(0x|<)/ { s += $3 } END { print s }' "$WORK/report")" 55

# ---- 100 mutexes held at once -----------------------------------------------------
MUTEXSTAT_TOP=200 scale_run "100 held" deep 100
m10=$(awk '/^M10 / { print $2 }' "$WORK/out")
m99=$(awk '/^M99 / { print $2 }' "$WORK/out")
expect_grep "100 held: every mutex tracked" ': 3 threads used mutexes, 101 mutexes tracked, 0 untracked$' "$WORK/report"
expect_grep "100 held: the 100th, beyond those followed, counted exactly" "^ *[0-9]+ $m99 +2 +0 " "$WORK/report"
expect_grep "100 held: the 11th counted exactly" "^ *[0-9]+ $m10 +2 +0 " "$WORK/report"
expect_grep "100 held: says what was not followed" \
	'^  lock order not followed for 72 acquisitions: their thread already held 64 mutexes \(the most followed per thread\)$' "$WORK/report"
expect_no_grep "100 held: no finding (the held set was emptied both ways)" \
	'^(DEADLOCK|POTENTIAL DEADLOCK|GUARDED INVERSION|SELF-DEADLOCK|HELD AT THREAD EXIT|MISUSE)' "$WORK/report"

scale_run "100 held, then an inversion" deep_inversion 100
m10=$(awk '/^M10 / { print $2 }' "$WORK/out")
y=$(awk '/^Y / { print $2 }' "$WORK/out")
expect_eq "inversion: one finding" "$(grep -Ec '^(POTENTIAL DEADLOCK|GUARDED INVERSION|DEADLOCK)' "$WORK/report")" 1
awk '/^POTENTIAL DEADLOCK/ { on = 1 } on && /^$/ { exit } on' "$WORK/report" > "$WORK/cycle"
expect_grep "inversion: the cycle has M10" "mutex $m10( <[^>]+>)?," "$WORK/cycle"
expect_grep "inversion: the cycle has Y" "mutex $y <my>," "$WORK/cycle"
expect_grep "inversion: Y tracked too" ': 3 threads used mutexes, 102 mutexes tracked, 0 untracked$' "$WORK/report"
expect_grep "inversion: Y, taken while 100 were held, is not followed either" \
	'^  lock order not followed for 73 acquisitions' "$WORK/report"

scale_run "100 held at exit" held 100
expect_eq "100 held at exit: each listed as held, with where it was taken" \
	"$(grep -Ec '^  0x[0-9a-f]+ held by thread [0-9]+, taken at held_main\+0x[0-9a-f]+ ' "$WORK/report")" 100
expect_grep "100 held at exit: the 36 beyond 64 not followed" \
	'^  lock order not followed for 36 acquisitions: their thread already held 64 mutexes' "$WORK/report"

# ---- memory: 1,000,000 live mutexes ------------------------------------------------
"$S" million 1000000 > "$WORK/bare" 2>&1
run_with "$WORK/out" "$WORK/err" "$S" million 1000000
growth() { awk '{ print $(NF - 5) " " $(NF - 2) }' "$1"; } # before after (kB)
set -- $(growth "$WORK/bare") $(growth "$WORK/out")
if [ $# -eq 4 ]; then
	per=$(( (($4 - $3) - ($2 - $1)) * 1024 / 1000000 ))
	[ "$per" -le "$BUDGET" ] &&
		pass "1M live mutexes: the library's resident memory is $per B/mutex (budget $BUDGET)" ||
		fail "1M live mutexes: $per B/mutex, over the budget of $BUDGET"
else
	fail "1M live mutexes: no memory figures: $(cat "$WORK/bare" "$WORK/out")"
fi
expect_grep "1M live mutexes: all tracked" ': 1 thread used mutexes, 1000000 mutexes tracked, 0 untracked$' "$WORK/report"

# ---- memory: 200 threads that each waited once ----------------------------------
# Each wait captures the thread's stack.  libunwind's fast walk alone kept
# 256 KiB a thread for it (280 kB above bare here); lib/stacks/cfi.c's walker
# keeps one cache for all threads.
"$S" waiters 200 > "$WORK/bare" 2>&1
run_with "$WORK/out" "$WORK/err" "$S" waiters 200
set -- $(growth "$WORK/bare") $(growth "$WORK/out")
if [ $# -eq 4 ]; then
	per=$(( (($4 - $3) - ($2 - $1)) / 200 ))
	[ "$per" -le "$THREAD_BUDGET" ] &&
		pass "200 threads that waited: the library's resident memory is $per kB a thread (budget $THREAD_BUDGET)" ||
		fail "200 threads that waited: $per kB a thread, over the budget of $THREAD_BUDGET"
else
	fail "200 threads that waited: no memory figures: $(cat "$WORK/bare" "$WORK/out")"
fi
expect_grep "200 threads that waited: each wait counted" \
	"^  1 $LOCK_RE +201 +200 " "$WORK/report"
expect_grep "200 threads that waited: their stacks captured" \
	'^ +200 .*waiter\+0x[0-9a-f]+ \(.*scale\.c:[0-9]+' "$WORK/report"
finish
