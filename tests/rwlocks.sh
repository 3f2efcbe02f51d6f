# rwlocks.sh - read-write and spin locks in the report (tests/rwlocks.c):
# exact counts by mode, the findings that go through them -- a
# reader-writer inversion, a mixed mutex/rwlock cycle, one on locks
# destroyed before the report, a live writer-waits-for-readers deadlock,
# write-after-read and spin relock self-deadlocks, relocks refused,
# misuse, a read lock held at thread exit -- and what must not be
# reported: the read-read cycle that cannot deadlock, and writers caught
# waiting by the exit report with their holder unseen.
. "$top_srcdir/tests/lib.sh"
T=$top_builddir/tests/rwlocks
SRC=$top_srcdir/tests/rwlocks.c
FINDING='^(DEADLOCK|POTENTIAL DEADLOCK|GUARDED INVERSION|SELF-DEADLOCK|HELD AT THREAD EXIT|MISUSE|STALL):'

# line_of MARKER: the line of the call marked /* MARKER */.
line_of() { grep -n "/\* $1 \*/" "$SRC" | cut -d: -f1; }

# run NAME ARGS...: the scenario under the library, report in NAME.report.
run() {
	name=$1
	shift
	env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/$name.report" \
		"$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
	rc=$?
}

# findings NAME: the headings of NAME's findings, one line.
findings() { grep -E "$FINDING" "$WORK/$1.report" | sed 's/:.*//' | paste -sd';' -; }

# section NAME RANK: the detail section #RANK of NAME's report.
section() {
	awk -v r="#$2" 'on && /^$/ { exit } $1 == r { on = 1 } on' "$WORK/$1.report"
}

# ---- exact counts, by mode ------------------------------------------------
run counts "$T" counts
expect_eq "counts: exit status" "$rc" 0
expect_eq "counts: no finding" "$(findings counts)" ""
expect_grep "counts: the heading names locks" '^Top 2 locks by wait:$' "$WORK/counts.report"
expect_grep "counts: so does the first line" ' used locks, 2 locks tracked, 0 untracked$' "$WORK/counts.report"
expect_grep "counts: the rwlock's row: 1020 acquisitions, its kind" \
	'^  [12] (0x[0-9a-f]+|<[^>]+>) +1020 +0 .* rwlock +.*rwlocks\.c:[0-9]+\)?$' "$WORK/counts.report"
expect_grep "counts: the spin lock's row: 105 acquisitions" \
	'^  [12] (0x[0-9a-f]+|<[^>]+>) +105 +0 .* spin +.*rwlocks\.c:[0-9]+\)?$' "$WORK/counts.report"
rank=$(awk '/^  [12] (0x|<).* rwlock / { print $1 }' "$WORK/counts.report")
section counts "$rank" >"$WORK/rw.section"
expect_grep "counts: the rwlock's section" '^#[12] rwlock 0x[0-9a-f]+( <[^>]+>)? \(reader-preferring, no init seen\)$' \
	"$WORK/rw.section"
expect_grep "counts: reads 1006, writes 14" \
	'^  reads 1006 \(0 contended, waited 0 ns\), writes 14 \(0 contended, waited 0 ns\); most readers at once 1$' \
	"$WORK/rw.section"
expect_grep "counts: the tries by mode" \
	'^  tryrdlock 5 ok, 2 busy; trywrlock 3 ok, 2 busy; timed out: reads 0, writes 0$' \
	"$WORK/rw.section"
expect_grep "counts: the history names the mode" '  unlock \(read\) +ok ' "$WORK/rw.section"
expect_grep "counts: ... and a busy tryrdlock" '  tryrdlock +EBUSY ' "$WORK/rw.section"
rank=$(awk '/^  [12] (0x|<).* spin / { print $1 }' "$WORK/counts.report")
section counts "$rank" >"$WORK/spin.section"
expect_grep "counts: the spin lock's section" '^#[12] spin lock 0x[0-9a-f]+( <[^>]+>)? \(spin\)$' "$WORK/spin.section"
expect_grep "counts: spin tries" '^  trylock 4 ok, 1 busy; ' "$WORK/spin.section"
# what a spin lock cannot do is not counted (it read "timed out 0;
# condition waits 0"), nor an rwlock's condition waits
expect_grep "counts: spin tries, no timeouts, no condition waits" \
	'^  trylock 4 ok, 1 busy; most waiters at once [0-9]+$' "$WORK/spin.section"
expect_no_grep "counts: no condition waits for an rwlock" 'condition waits' "$WORK/rw.section"

# The reads' own history (lib/record/other_locks.c) merged with the main
# one by order, the newest 16 kept: 4 read pairs of the first 10, the
# write pair, the 3 read pairs after it, each from its line.
run rh "$T" read-history
expect_eq "read history: exit status" "$rc" 0
section rh 1 >"$WORK/rh.section"
expect_grep "read history: reads 13, writes 1" \
	'^  reads 13 \(0 contended, waited 0 ns\), writes 1 \(0 contended' "$WORK/rh.section"
expect_eq "read history: the newest 16, in order, from their lines" \
	"$(awk '/^  recent operations/ { on = 1; getline; next } on && NF == 0 { exit }
		on { op = $3; if ($4 ~ /^\(/) op = op " " $4; sub(/.*rwlocks\.c:/, ""); sub(/,.*/, "");
		     printf "%s@%s;", op, $0 }' "$WORK/rh.section")" \
	"$(r1=$(line_of rh-read-1) w=$(line_of rh-write) r2=$(line_of rh-read-2)
	   for i in 1 2 3 4; do printf 'rdlock@%s;unlock (read)@%s;' "$r1" $((r1 + 1)); done
	   printf 'wrlock@%s;unlock (write)@%s;' "$w" $((w + 1))
	   for i in 1 2 3; do printf 'rdlock@%s;unlock (read)@%s;' "$r2" $((r2 + 1)); done)"
expect_eq "read history: orders one apart, rising" \
	"$(awk '/^  recent operations/ { on = 1; getline; next } on && NF == 0 { exit }
		on { if (last && $1 != last + 1) bad++; last = $1 } END { print bad + 0 }' "$WORK/rh.section")" 0

# A life that failed once ends: its ended line's copy of its recent
# operations has its reads, from the slot's history, in order.
run re "$T" read-ended
expect_eq "read ended: the copy kept, reads and all" \
	"$(awk '/^#1 1 rwlock that ended/ { on = 1 } on && /^       order/ { r = 1; next }
		r && NF == 0 { exit } r { print $3 }' "$WORK/re.report" | paste -sd, -)" \
	"init,rdlock,unlock,rdlock,unlock,rdlock,trywrlock,unlock,destroy"

# A writer's busy try, while a read is held, is listed after that read,
# not before the reads (its order goes past the reads' history too).
run rb "$T" read-busy
expect_eq "read busy: exit status" "$rc" 0
# (The unlock's line is not compared: it is the function's last call, and
# its return address may be given the line of the code inlined after it.)
expect_eq "read busy: the last three operations" \
	"$(awk '/^#[0-9]+ rwlock / { on = 1 } on && /^  recent operations/ { r = 1; getline; next }
		r && NF == 0 { exit } r { op = $3; if ($4 ~ /^\(/) op = op " " $4 " " $5; else op = op " " $4
		     sub(/.*rwlocks\.c:/, ""); sub(/,.*/, ""); print op "@" $0 }' "$WORK/rb.report" | tail -n 3 |
	   sed '3s/@.*//' | paste -sd';' -)" \
	"rdlock ok@$(line_of rb-read);trywrlock EBUSY@$(line_of rb-try);unlock (read) ok"

# A lock that found no slot for its reads (every one taken) keeps its reads
# and writes together for the rest of its life, though one is freed later
# and a busy tryrdlock comes.
run sl MUTEXSTAT_TABLE_SIZE=1024 MUTEXSTAT_TOP=100 "$T" spent-late
expect_eq "spent, then a slot freed: exit status" "$rc" 0
expect_eq "spent, then a slot freed: reads and writes still not told apart" \
	"$(awk '/^#[0-9]+ rwlock .*\(reader-preferring, no init seen\)$/ { on = 1; next }
		on && /^  reads/ { print; exit }' "$WORK/sl.report")" \
	"  reads and writes not told apart: every slot for rwlocks' reads was taken (64 rwlocks at once)"

# A write after a read by a thread whose clock was far ahead: ordered
# after the read (the writer looks at the reads' history for its order).
run ro "$T" read-order
expect_eq "read order: the rwlock's operations in order" \
	"$(awk '/^#[0-9]+ rwlock / { on = 1 } on && /^  recent operations/ { r = 1; getline; next }
		r && NF == 0 { exit } r { print $3 }' "$WORK/ro.report" | paste -sd, -)" \
	"init,rdlock,unlock,wrlock,unlock"
expect_eq "read order: ... the write's order past the read's unlock" \
	"$(awk '/^#[0-9]+ rwlock / { on = 1 } on && /^  recent operations/ { r = 1; getline; next }
		r && NF == 0 { exit } r { o[n++] = $1 } END { print (o[3] > o[2] && o[2] > o[1]) }' "$WORK/ro.report")" 1

# Four threads reading at once, each read counted in the slot's position.
run rt "$T" read-threads
expect_eq "read threads: exit status" "$rc" 0
expect_grep "read threads: 20000 acquisitions" '^  1 (0x[0-9a-f]+|<[^>]+>) +20000 .* rwlock ' "$WORK/rt.report"
expect_grep "read threads: 19800 reads, 200 writes" \
	'^  reads 19800 \([0-9]+ contended, waited .*\), writes 200 \(' "$WORK/rt.report"

# A lock that has made a thread wait times its holds, in each mode the
# first 4096 and then one in 16: of the 10,002 of that mode after the
# wait, 10,000 by a thread holding nothing (the plain case's, if not timed:
# lib/record/read_plain.h, write_plain.h), one under a mutex, 4466 are
# timed; the thread that held the lock in the other mode did once.
for mode in reads writes; do
	env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_FORMAT=json MUTEXSTAT_OUTPUT="$WORK/t$mode" \
		"$T" "timed-$mode" >"$WORK/t$mode.out" 2>&1
	expect_eq "timed $mode: exit status" "$?" 0
	expect_eq "timed $mode: 10002, one contended, 4466 holds timed; 1 of the other mode" \
		"$(jq -c --arg m "$mode" '.mutexes[] | select(.reads) |
			[.[$m].acquisitions, .[$m].contended, .[$m].hold.timed, .acquisitions]' "$WORK/t$mode.json")" \
		"[10002,1,4466,10003]"
done

# Two readers at once, the second read the plain case: the most at once.
run ra "$T" readers-at-once
expect_eq "readers at once: exit status" "$rc" 0
expect_grep "readers at once: 4 reads, 2 at most at once" \
	'^  reads 4 \(0 contended, waited 0 ns\), writes 0 \(0 contended, waited 0 ns\); most readers at once 2$' \
	"$WORK/ra.report"

# Write locks of the plain case (lib/record/write_plain.h): the counts, the
# owner changes (none for a first owner), the history's modes and order,
# and a read ordered after the write unlock that let it in, though its
# thread's clock was behind.
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_FORMAT=text,json MUTEXSTAT_OUTPUT="$WORK/pw" "$T" plain-writes \
	>"$WORK/pw.out" 2>&1
expect_eq "plain writes: exit status" "$?" 0
expect_eq "plain writes: 9 acquisitions, 2 owner changes, 3 reads, 6 writes" \
	"$(jq -c '.mutexes[] | select(.reads) | [.acquisitions, .owner_changes, .reads.acquisitions, .writes.acquisitions]' "$WORK/pw.json")" \
	"[9,2,3,6]"
pw_history() {
	awk '/^#[0-9]+ rwlock / { on = 1 } on && /^  recent operations/ { r = 1; getline; next }
		r && NF == 0 { exit } r' "$WORK/pw.txt"
}
expect_eq "plain writes: the history, newest 16, in order" \
	"$(pw_history | awk '{ print $3 ($3 == "unlock" ? " " $4 : "") }' | paste -sd, -)" \
	"rdlock,unlock (read),wrlock,unlock (write),wrlock,unlock (write),wrlock,unlock (write),wrlock,unlock (write),wrlock,unlock (write),wrlock,unlock (write),rdlock,unlock (read)"
expect_eq "plain writes: orders one apart, rising" \
	"$(pw_history | awk 'NR > 1 && $1 != prev + 1 { bad++ } { prev = $1 } END { print bad + 0 }')" 0

# Write locks the cache knows, taken holding a mutex: an edge each, so m
# then a and a then m is a cycle (the plain case adds no edge); a and b
# let go of first taken first: each unlock in its own lock's history (a is
# wn+0x28 and b wn+0x60, after the mutex, in tests/rwlocks.c's wn).
run wn "$T" write-nested
expect_eq "write nested: exit status" "$rc" 0
expect_eq "write nested: one POTENTIAL DEADLOCK, nothing else" "$(findings wn)" "POTENTIAL DEADLOCK"
# last_unlock NAME: the line of the newest write unlock in lock NAME's history
last_unlock() {
	rank=$(awk -v n="<$1>" '$1 ~ /^#[0-9]+$/ && index($0, n " ") { sub("#", "", $1); print $1; exit }' \
		"$WORK/wn.report")
	section wn "$rank" | grep ' unlock (write) ' | tail -n 1 | sed -n 's/.*rwlocks\.c:\([0-9]*\).*/\1/p'
}
expect_eq "write nested: a's last unlock, taken first, let go of first" \
	"$(last_unlock wn+0x28)" "$(line_of FIRST_OUT)"
expect_eq "write nested: b's last unlock" "$(last_unlock wn+0x60)" "$(line_of LAST_OUT)"

# Histograms by mode (tests/rw_formats.c contend): rw's read waited 100 ms
# longer than its write's whole phase took, so the lock's maximum is the
# read's and the writes' is only bounded by their highest bucket: "max <=
# ".  wo, only
# written, knows its writes' maximum.
run modes "$top_builddir/tests/rw_formats" contend
rank_of() { awk -v a="$(awk -v n="$1" '$1 == n { print $2 }' "$WORK/modes.out")" \
	'$1 ~ /^#[0-9]+$/ && $3 == a { sub(/#/, "", $1); print $1 }' "$WORK/modes.report"; }
section modes "$(rank_of rw)" >"$WORK/modes.rw"
expect_eq "modes: rw's read waits' maximum, exact; its writes', a bound" \
	"$(awk '/^  (read|write) wait times/ { on = 1 } on && /^    p50 / { on = 0; sub(/.*  max /, ""); sub(/[0-9.]+ [mµn]*s$/, ""); print "max " $0 }' \
		"$WORK/modes.rw" | paste -sd, -)" \
	"max ,max <= "
section modes "$(rank_of wo)" >"$WORK/modes.wo"
expect_grep "modes: wo, only written: its writes' maximum, exact" \
	'^    p50 .* max [0-9.]+ [mµn]*s$' "$WORK/modes.wo"
expect_no_grep "modes: ... not a bound" 'max <= ' "$WORK/modes.wo"

# MUTEXSTAT_TRACK leaves kinds out: the spin lock alone.
run track MUTEXSTAT_TRACK=spin "$T" counts
expect_grep "MUTEXSTAT_TRACK=spin: only the spin lock" '^Top 1 lock by wait:$' "$WORK/track.report"
expect_grep "MUTEXSTAT_TRACK=spin: ... its row" '^  1 (0x[0-9a-f]+|<[^>]+>) +105 .* spin ' "$WORK/track.report"

# Lives of both kinds that only locked and unlocked: the header counts
# them as locks, their ended lines keep no recent operations (those are
# kept for lives that waited, failed or were named, as the heading of
# them says), and a top table of one mutex still reads "locks", with the
# kind column, as the header does.
# ---- reads beyond the 64 locks a thread's held set follows -------------------
# let go of, all: the thread ends holding nothing (before: "HELD AT THREAD
# EXIT: ... ended holding 1 mutex", of "mutex 0x0 taken at ?")
for order in fifo lifo; do
	run beyond-$order "$T" beyond-$order
	expect_eq "beyond-$order: exit status" "$rc" 0
	expect_eq "beyond-$order: no finding" "$(findings beyond-$order)" ""
	expect_grep "beyond-$order: the reads not followed, counted" \
		'^  lock order not followed for 6 acquisitions: their thread already held 64 locks \(the most followed per thread\)$' \
		"$WORK/beyond-$order.report"
done

# two threads that each hold 70 reads at once, then let go: neither ends
# holding any (a condition that put another thread's holds beyond those
# followed against this one's unlock said both did)
run beyond-two "$T" beyond-two
expect_eq "beyond-two: exit status, no finding" "$rc $(findings beyond-two)" "0 "

# a thread that ends holding 70 reads: the first 8 shown, the rest counted
# (the holds beyond the 64 followed read "mutex 0x0 taken at ?")
run beyond-held "$T" beyond-held
expect_grep "beyond-held: its finding" \
	'^HELD AT THREAD EXIT: thread [0-9]+ "rwlocks" ended holding 70 locks$' "$WORK/beyond-held.report"
expect_eq "beyond-held: 8 of them shown, each a read of its rwlock" \
	"$(grep -cE '^  rwlock 0x[0-9a-f]+( <[^>]+>)? \(read\) taken at read_beyond_and_end\+' "$WORK/beyond-held.report")" 8
expect_grep "beyond-held: the others counted" \
	"^  and 62 not shown: past the first 8, or taken beyond the 64 locks a thread's held set follows\$" \
	"$WORK/beyond-held.report"
expect_no_grep "beyond-held: no lock of address 0" ' 0x0 taken at' "$WORK/beyond-held.report"

run plain "$T" plain-ended
expect_grep "plain lives: the header counts locks destroyed" \
	'^  6 locks destroyed and 0 initialised again: ' "$WORK/plain.report"
expect_grep "plain lives: the rwlocks' ended line" \
	'^#[0-9] 3 rwlocks that ended ' "$WORK/plain.report"
expect_grep "plain lives: the mutexes' ended line" \
	'^#[0-9] 3 mutexes that ended ' "$WORK/plain.report"
expect_eq "plain lives: no recent operations kept of either" \
	"$(grep -c '^  recent operations of the last of them' "$WORK/plain.report")" 0
run plaintop MUTEXSTAT_TOP=1 MUTEXSTAT_SORT=acquired "$T" plain-ended
expect_grep "plain lives, top 1: the table says locks" '^Top 1 lock by acquired:$' \
	"$WORK/plaintop.report"
expect_grep "plain lives, top 1: the live mutex, with its kind" \
	'^  1 (0x[0-9a-f]+|<[^>]+>) +20 .* mutex +[a-z_]+ \(rwlocks\.c:[0-9]+\)$' "$WORK/plaintop.report"

# More rwlocks at once than slots for their reads: the first 64 tell reads
# from writes, the others say they cannot; none says a wrong split.
run many MUTEXSTAT_TABLE_SIZE=1024 MUTEXSTAT_TOP=100 "$T" many
expect_eq "many: the 64 with slots split 2 reads, 1 write" \
	"$(grep -c '^  reads 2 (0 contended, waited 0 ns), writes 1 ' "$WORK/many.report")" 64
expect_eq "many: the 36 without say so" \
	"$(grep -c '^  reads and writes not told apart: every slot for rwlocks. reads was taken (64 rwlocks at once)$' "$WORK/many.report")" 36

# Names given with mutexstat_name_lock, to each kind.
run named "$T" named
expect_eq "named: exit status" "$rc" 0
expect_grep "named: the rwlock's row" '^  [12] table lock +3 ' "$WORK/named.report"
expect_grep "named: the spin lock's row" '^  [12] counter spin +3 ' "$WORK/named.report"
expect_grep "named: the rwlock's section" '^#[12] rwlock 0x[0-9a-f]+( <[^>]+>)? "table lock" \(reader-preferring' \
	"$WORK/named.report"
expect_grep "named: the spin lock's section" '^#[12] spin lock 0x[0-9a-f]+( <[^>]+>)? "counter spin" \(spin\)$' \
	"$WORK/named.report"

# ---- a reader-writer inversion --------------------------------------------
run inversion "$T" inversion
expect_eq "inversion: one POTENTIAL DEADLOCK, nothing else" "$(findings inversion)" \
	"POTENTIAL DEADLOCK"
expect_grep "inversion: two locks" '^POTENTIAL DEADLOCK: 2 locks taken in a cycle of orders' \
	"$WORK/inversion.report"
expect_grep "inversion: A written, then B read" \
	'^  thread [0-9]+ "rwlocks" took A \(write\), then B \(read\):$' "$WORK/inversion.report"
expect_grep "inversion: B written, then A read" \
	'^  thread [0-9]+ "rwlocks" took B \(write\), then A \(read\):$' "$WORK/inversion.report"
expect_grep "inversion: both are rwlocks" "^  A   rwlock 0x[0-9a-f]+( <[^>]+>)?, first locked at main\+0x[0-9a-f]+ \(.*rwlocks.c:$(line_of inv-a1)" \
	"$WORK/inversion.report"
expect_grep "inversion: B's first lock" "^  B   rwlock 0x[0-9a-f]+( <[^>]+>)?, first locked at main\+0x[0-9a-f]+ \(.*rwlocks.c:$(line_of inv-b1)" \
	"$WORK/inversion.report"

# ---- reads only: no deadlock with reader-preferring locks, one with
# writer-preferring ones ---------------------------------------------------
run readread "$T" read-read
expect_eq "read-read: exit status" "$rc" 0
expect_eq "read-read, reader-preferring: no finding" "$(findings readread)" ""
run readwp "$T" read-read-writer-preferring
expect_eq "read-read, writer-preferring: one POTENTIAL DEADLOCK" "$(findings readwp)" \
	"POTENTIAL DEADLOCK"
expect_grep "read-read, writer-preferring: the reads" \
	'^  thread [0-9]+ "rwlocks" took A \(read\), then B \(read\):$' "$WORK/readwp.report"
expect_grep "read-read, writer-preferring: the locks ended, and where" \
	'^        destroyed at read_read\+0x[0-9a-f]+ ' "$WORK/readwp.report"
expect_eq "read-read, writer-preferring: why reads alone can deadlock" \
	"$(grep -A1 '^  only reads' "$WORK/readwp.report")" \
	"  only reads, but A, B are writer-preferring: a read of them waits while a writer waits for them,
  so two threads reading in these orders deadlock once a writer comes between them"
expect_no_grep "a cycle with a write in it: no such note" '^  only reads' "$WORK/inversion.report"

# ---- memory of a spin lock and an rwlock, never destroyed, used as mutexes
# with no init: each mutex a new life of its own kind; the rwlock's finding
# says where its life ended ----
run reused "$T" reused
expect_eq "reused: exit status" "$rc" 0
spin_at=$(awk '/^spin / { print $2 }' "$WORK/reused.out")
rw_at=$(awk '/^spin / { print $4 }' "$WORK/reused.out")
expect_eq "reused: one finding" "$(findings reused)" "POTENTIAL DEADLOCK"
expect_grep "reused: the rwlock's life ended where its memory became a mutex" \
	"^        its memory used as another kind of lock at .*rwlocks\.c:$(line_of reused-rw), rwlocks\)$" \
	"$WORK/reused.report"
expect_eq "reused: the mutexes, 7 and 3 acquisitions, first locked as mutexes" \
	"$(top_row "$WORK/reused.report" "$rw_at" | awk '{ print $3, $(NF - 2), $NF }');$(
	   top_row "$WORK/reused.report" "$spin_at" | awk '{ print $3, $(NF - 2), $NF }')" \
	"7 mutex (rwlocks.c:$(line_of reused-rw));3 mutex (rwlocks.c:$(line_of reused-spin))"
expect_eq "reused: the ended lives, a spin lock's 5 and an rwlock's 2" \
	"$(awk '/^Top /{t=1; next} t && /^$/ { exit } t && / ended / { print $4, $(NF - 2) }' "$WORK/reused.report" |
	   sort | paste -sd';' -)" "2 rwlock;5 spin"

# ... a name given to such a mutex before its first lock is the mutex's
# an rwlock whose only call failed, then a spin lock there: a spin lock's
# life, its 3 acquisitions, no MISUSE at its unlocks
run rf "$T" reused-failed
expect_eq "reused, failed first: exit status" "$rc" 0
expect_eq "reused, failed first: no finding" "$(findings rf)" ""
expect_grep "reused, failed first: a spin lock's row, 3 acquisitions, first locked as one" \
	"^  [12] (0x[0-9a-f]+|<[^>]+>) +3 +0 .* spin +.*rwlocks\.c:$(line_of reused-failed)\)\$" "$WORK/rf.report"
expect_grep "reused, failed first: its section says spin lock" \
	'^#[12] spin lock 0x[0-9a-f]+( <[^>]+>)? \(spin, no init seen\)$' "$WORK/rf.report"

# a reader's lock destroyed and made again, held by main: the reader's
# write lock of it waits for main (contended 1), no SELF-DEADLOCK, and the
# reader ends holding nothing
run dr "$T" destroyed-while-read
expect_eq "destroyed while read: exit status, nothing on stderr" "$rc $(cat "$WORK/dr.err")" "0 "
expect_eq "destroyed while read: the MISUSE alone" "$(findings dr)" "MISUSE"
expect_grep "destroyed while read: the misuse is the destroy" \
	"^MISUSE: destroy of a locked rwlock: 1 time" "$WORK/dr.report"
expect_eq "destroyed while read: the ended life's history ends with that destroy, once" \
	"$(awk '/^#[0-9]+ 1 rwlock that ended/ { on = 1 } on && /^       order/ { r = 1; next }
		r && NF == 0 { exit } r { print $3 }' "$WORK/dr.report" | grep -c '^destroy$')" 1
dr_at=$(awk '/^rwlock / { print $2 }' "$WORK/dr.out")
expect_eq "destroyed while read: the new life, 2 write locks, 1 contended" \
	"$(top_row "$WORK/dr.report" "$dr_at" | awk '{ print $3, $4 }')" "2 1"

# ... and its unlock of the new life, which main holds for read: an unlock
# by a thread that does not hold it, however its held set reads
run du "$T" destroyed-then-unlock
expect_eq "destroyed, then the reader's unlock: exit status" "$rc" 0
expect_grep "destroyed, then the reader's unlock: an unlock MISUSE" \
	"^MISUSE: unlock by a thread that does not hold it: .*" "$WORK/du.report"
expect_no_grep "destroyed, then the reader's unlock: no HELD AT THREAD EXIT" \
	'^HELD AT THREAD EXIT' "$WORK/du.report"

run rn "$T" reused-named
expect_eq "reused, named: exit status" "$rc" 0
expect_grep "reused, named: the mutex's row has the name" \
	'^  [12] the new mutex +3 .* mutex +main ' "$WORK/rn.report"
expect_grep "reused, named: the spin lock's ended life has none" \
	'^  [12] 1 ended +5 .* spin +main ' "$WORK/rn.report"
expect_eq "reused, named: the name once, on the mutex" "$(grep -c '"the new mutex"' "$WORK/rn.report")" 1
expect_grep "reused, named: ... its section" '^#[12] mutex 0x[0-9a-f]+( <[^>]+>)? "the new mutex" ' "$WORK/rn.report"
# ... and with MUTEXSTAT_TRACK=mutex, a spin lock on a mutex's memory is
# left out as any spin lock is
run rs env MUTEXSTAT_TRACK=mutex "$T" reused-spin
expect_eq "reused, spin left out: exit status" "$rc" 0
expect_grep "reused, spin left out: only the mutex" '^Top 1 mutex by wait:$' "$WORK/rs.report"
expect_grep "reused, spin left out: said under the heading" \
	'^  not recorded \(MUTEXSTAT_TRACK\): read-write locks, spin locks$' "$WORK/rs.report"
grep -v '^  not recorded (MUTEXSTAT_TRACK)' "$WORK/rs.report" >"$WORK/rs.rest"
expect_no_grep "reused, spin left out: no spin lock" ' spin ' "$WORK/rs.rest"

# ---- a timed write lock given no deadline (NULL): a wait for ever --------------
run nd env MUTEXSTAT_WATCHDOG=1 MUTEXSTAT_ON_DEADLOCK=abort "$T" null-deadline
expect_eq "no deadline: the watchdog's abort" "$rc" 134
expect_grep "no deadline: a DEADLOCK for ever, not until a deadline" \
	'^DEADLOCK: 2 threads wait for each other, forever$' "$WORK/nd.report.1"
expect_grep "no deadline: the writer's wait, at its line" \
	"^    waits at      nd_writer\+0x[0-9a-f]+ \(.*rwlocks.c:$(line_of nd-write), " "$WORK/nd.report.1"

# ---- a read taken in the order a write was, later: the write's finding only
run ml "$T" modes-later
expect_eq "modes later: one POTENTIAL DEADLOCK" "$(findings ml)" "POTENTIAL DEADLOCK"
expect_grep "modes later: the writer's" \
	"^  thread [0-9]+ \"rwlocks\" took B, then A \(write\):$" "$WORK/ml.report"
expect_grep "modes later: ... at its line" "^    A   at  m_then_write\+0x[0-9a-f]+ \(.*rwlocks.c:$(line_of modes-write)," \
	"$WORK/ml.report"
expect_eq "modes later: the finding does not name the later reader" \
	"$(awk '/^POTENTIAL DEADLOCK/ { on = 1 } on && /^$/ { exit } on' "$WORK/ml.report" | grep -c m_then_read)" 0
# the writer first, then the later reader, then the inversion's reader:
# the reader who took the writer's order in another mode is no taker to
# name
run mw "$T" modes-writer-first
expect_eq "writer first: one POTENTIAL DEADLOCK" "$(findings mw)" "POTENTIAL DEADLOCK"
expect_grep "writer first: the writer's" \
	"^    B   at  m_then_write\+0x[0-9a-f]+ \(.*rwlocks.c:$(line_of modes-write)," "$WORK/mw.report"
expect_eq "writer first: the finding does not name the later reader" \
	"$(awk '/^POTENTIAL DEADLOCK/ { on = 1 } on && /^$/ { exit } on' "$WORK/mw.report" | grep -c m_then_read)" 0

# ---- a mutex and an rwlock ---------------------------------------------------
run mixed "$T" mixed
expect_eq "mixed: one POTENTIAL DEADLOCK" "$(findings mixed)" "POTENTIAL DEADLOCK"
expect_grep "mixed: one mutex" "^  [AB]   mutex 0x[0-9a-f]+( <[^>]+>)?, first locked at main\+0x[0-9a-f]+ \(.*rwlocks.c:$(line_of mix-m1)" \
	"$WORK/mixed.report"
expect_grep "mixed: the rwlock read, then the mutex" \
	'^  thread [0-9]+ "rwlocks" took [AB] \(read\), then [AB]:$' "$WORK/mixed.report"
expect_grep "mixed: the mutex, then the rwlock written" \
	'^  thread [0-9]+ "rwlocks" took [AB], then [AB] \(write\):$' "$WORK/mixed.report"

# ---- the inversion on locks destroyed before the report -----------------------
run destroyed "$T" destroyed
expect_eq "destroyed: one POTENTIAL DEADLOCK" "$(findings destroyed)" "POTENTIAL DEADLOCK"
expect_grep "destroyed: where the first one ended" \
	"^        destroyed at main\+0x[0-9a-f]+ \(.*rwlocks.c:$(line_of destroy-x)" "$WORK/destroyed.report"
# their ended lines say what they were, and count the one read
expect_grep "destroyed: the heading counts locks, not mutexes" \
	'^mutexstat: rwlocks \(pid [0-9]+\) ran [0-9.]+ [mµn]?s: 1 thread used locks, 0 locks tracked, ' \
	"$WORK/destroyed.report"
expect_eq "destroyed: each ended line is an rwlock's" \
	"$(grep -c '^#[12] 1 rwlock that ended (destroyed or initialised again), first locked at ' "$WORK/destroyed.report")" 2
expect_grep "destroyed: y's one read, one reader at once" \
	'^  reads 1 \(0 contended, waited 0 ns\), writes 1 \(0 contended, waited 0 ns\); most readers at once 1$' \
	"$WORK/destroyed.report"

# ---- a live deadlock: a writer waits for a reader, which waits for it --------
# (the watchdog's report is the first live one: NAME.report.1)
run live MUTEXSTAT_WATCHDOG=1 MUTEXSTAT_ON_DEADLOCK=abort timeout 30 "$T" live
expect_eq "live: aborted by MUTEXSTAT_ON_DEADLOCK (SIGABRT)" "$rc" 134
expect_grep "live: a DEADLOCK of two threads" '^DEADLOCK: 2 threads wait for each other, forever$' \
	"$WORK/live.report.1"
expect_grep "live: the writer waits to write the rwlock" \
	'^  thread [0-9]+ "rwlocks" waits to write rwlock 0x[0-9a-f]+( <[^>]+>)? for ' "$WORK/live.report.1"
expect_grep "live: ... held for read by the reader, where it took it" \
	"^    held for read by thread [0-9]+, taken at \.\.[a-z_]+ rwlocks.c:$(line_of live-rd)$" \
	"$WORK/live.report.1"
expect_grep "live: the reader waits for the mutex" \
	"^    waits at      live_reader_with_a_name_long_enough_to_take_a_report_line_past_its_width\+0x[0-9a-f]+ \(.*rwlocks.c:$(line_of live-m)" "$WORK/live.report.1"
expect_eq "live: no line over 120 columns" \
	"$(sed 's/µ/u/g' "$WORK/live.report.1" | awk 'length($0) > 120' | wc -l)" 0
expect_grep "live: the held section lists the reader" '^  rwlock 0x[0-9a-f]+( <[^>]+>)? held for read by$' \
	"$WORK/live.report.1"

# ---- self-deadlocks -------------------------------------------------------------
# self_hang NAME SCENARIO HEADING: the one-thread scenario hangs; the
# SELF-DEADLOCK is said on stderr as it happens, and with the watchdog and
# MUTEXSTAT_ON_DEADLOCK=abort the hang ends in a report (NAME.report.1) and
# SIGABRT.  (Not the watchdog beside ASan's malloc: no thread of ours can
# start in a process of one thread there -- doc/processes-and-signals.md.)
self_hang() {
	if sanitized; then
		env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/$1.report" MUTEXSTAT_SIGNAL=none \
			"$T" "$2" >"$WORK/$1.out" 2>"$WORK/$1.err" &
		pid=$!
		wait_for "$WORK/$1.err" '^  relocked at .*\)$' 20 || fail "$2: nothing on stderr"
		kill -KILL $pid 2>/dev/null
		wait $pid 2>/dev/null
		expect_grep "$2: SELF-DEADLOCK on stderr" "^mutexstat: $3" "$WORK/$1.err"
		cp "$WORK/$1.err" "$WORK/$1.report.1" # where the checks below look
		return
	fi
	run "$1" MUTEXSTAT_WATCHDOG=1 MUTEXSTAT_ON_DEADLOCK=abort timeout 30 "$T" "$2"
	expect_eq "$2: aborted" "$rc" 134
	expect_grep "$2: SELF-DEADLOCK" "^$3" "$WORK/$1.report.1"
	expect_grep "$2: said on stderr as it happened" "^mutexstat: $3" "$WORK/$1.err"
}

self_hang war write-after-read \
	'SELF-DEADLOCK: thread [0-9]+ write-locks an rwlock it holds for read: it waits for itself, forever$'
expect_grep "write-after-read: the write lock's line" \
	"^  relocked at  main\+0x[0-9a-f]+ \(.*rwlocks.c:$(line_of war-wr)" "$WORK/war.report.1"
if ! sanitized; then
	# the watchdog's wait-for graph: a cycle of one, certain (so the
	# abort above, even with the alarm(60) every scenario sets), which the
	# SELF-DEADLOCK says: no DEADLOCK beside it
	expect_no_grep "write-after-read: the watchdog's cycle of one is the SELF-DEADLOCK" \
		'^DEADLOCK: ' "$WORK/war.report.1"
	expect_grep "write-after-read: taken for read by the thread itself" \
		"^  taken at     main\+0x[0-9a-f]+ \(.*rwlocks.c:$(line_of war-rd)" \
		"$WORK/war.report.1"
fi
self_hang spin spin-relock \
	'SELF-DEADLOCK: thread [0-9]+ locks a spin lock it already holds: it spins for ever$'
expect_grep "spin relock: taken where" "^  taken at     main\+0x[0-9a-f]+ \(.*rwlocks.c:$(line_of spin-1)" \
	"$WORK/spin.report.1"
if ! sanitized; then
	# the holder spinning on its own lock is a waiter like any other
	expect_grep "spin relock: its one waiter, now and at most" \
		'^  trylock 0 ok, 0 busy; most waiters at once 1 \(1 now\)(; |$)' "$WORK/spin.report.1"
	expect_grep "spin relock: ... waiting now" '^  waiting now: 1 thread, the longest for ' \
		"$WORK/spin.report.1"
	expect_grep "spin relock: still locked, and called a spin lock" \
		'^  spin lock 0x[0-9a-f]+( <[^>]+>)? held by thread [0-9]+( for [^,]+)?, taken at main\+0x' \
		"$WORK/spin.report.1"
fi
run edeadlk "$T" edeadlk
expect_eq "edeadlk: glibc's answers" "$(cat "$WORK/edeadlk.out")" \
	"$(printf 'rdlock by the writer: EDEADLK\nwrlock by the writer: EDEADLK')"
expect_grep "edeadlk: a relock refused, a MISUSE counted twice" \
	'^MISUSE: relock refused: thread [0-9]+ relocked an rwlock it holds, 2 times; glibc answered EDEADLK$' \
	"$WORK/edeadlk.report"
expect_eq "edeadlk: no other finding" "$(findings edeadlk)" "MISUSE"
# ... on five lives of a lock made anew in a loop: one finding, which
# counts them all (there were five identical ones)
run edl "$T" edeadlk-lives
expect_eq "edeadlk, five lives: glibc's answers" "$(sort -u "$WORK/edl.out") $(wc -l <"$WORK/edl.out")" \
	"EDEADLK 5"
expect_eq "edeadlk, five lives: one MISUSE" "$(findings edl)" "MISUSE"
expect_grep "edeadlk, five lives: ... counting five" \
	'^MISUSE: relock refused: thread [0-9]+ relocked an rwlock it holds, 5 times; glibc answered EDEADLK$' \
	"$WORK/edl.report"
expect_grep "edeadlk, five lives: ... four of them on the later lives" \
	'^  \(4 of them by the same code on later lives of the lock at this address: counted here\)$' \
	"$WORK/edl.report"
run eda "$T" edeadlk-alive
expect_eq "edeadlk, two alive together: two findings" \
	"$(grep -c '^MISUSE: relock refused: thread [0-9]* relocked an rwlock it holds, 1 time; ' "$WORK/eda.report") $(grep -c 'later lives' "$WORK/eda.report")" \
	"2 0"
run dab "$T" destroy-after-busy
expect_eq "destroy after a busy try: glibc's answers" "$(cat "$WORK/dab.out")" "EBUSY 0"
expect_eq "destroy after a busy try: the kept history ends with one destroy" \
	"$(awk '/^#[0-9]+ 1 rwlock that ended/ { on = 1 } on && /^       order/ { r = 1; next }
		r && NF == 0 { exit } r { print $3 }' "$WORK/dab.report" | grep -c '^destroy$')" 1
expect_grep "edeadlk, five lives: ... relocked at its line" \
	"^  relocked at  main\+0x[0-9a-f]+ \(.*rwlocks.c:$(line_of edeadlk-lives)" "$WORK/edl.report"

# ---- misuse glibc lets through, and a read lock held at thread exit -----------
run misuse "$T" misuse
expect_eq "misuse: glibc's answers" "$(cat "$WORK/misuse.out")" \
	"$(printf 'unlock free: 0\nspin unlock not held: 0\ndestroy read-locked: 0\nbelow zero: 0 0, destroy: 0')"
expect_grep "misuse: the spin lock let go by another thread" \
	'^MISUSE: unlock by a thread that does not hold it: spin lock 0x[0-9a-f]+( <[^>]+>)?, 1 time$' "$WORK/misuse.report"
expect_grep "misuse: ... at its line" "^    main\+0x[0-9a-f]+ \(.*rwlocks.c:$(line_of misuse-spin)" \
	"$WORK/misuse.report"
expect_grep "misuse: the unlock of a free rwlock" \
	'^MISUSE: unlock of an rwlock that is not locked: rwlock 0x[0-9a-f]+( <[^>]+>)?, 1 time$' "$WORK/misuse.report"
expect_grep "misuse: the destroy of a read-locked rwlock" \
	'^MISUSE: destroy of a locked rwlock: 1 time on rwlocks \(now ended\)' "$WORK/misuse.report"
# glibc's count below zero: each extra unlock a MISUSE (the second was
# taken for some reader's), the destroy after them none
expect_grep "misuse: two read unlocks too many, both MISUSE" \
	'^MISUSE: unlock of an rwlock that is not locked: 2 times on rwlocks \(now ended\)' "$WORK/misuse.report"
expect_grep "misuse: ... the last at its line" \
	"^    main\+0x[0-9a-f]+ \(.*rwlocks.c:$(line_of misuse-below-zero)" "$WORK/misuse.report"
expect_eq "misuse: no destroy MISUSE for the lock below zero" \
	"$(grep -c '^MISUSE: destroy' "$WORK/misuse.report")" 1
# a reader's second read ended by another thread's unlock: that is the
# MISUSE, and the reader, which let go of the first, holds nothing at exit
run mo "$T" misuse-other-reader
expect_eq "another's read: glibc's answers" "$(cat "$WORK/mo.out")" \
	"$(printf 'unlock of another'"'"'s read: 0\nfree after: 0')"
expect_eq "another's read: one MISUSE, no HELD AT THREAD EXIT" "$(findings mo)" "MISUSE"
expect_grep "another's read: the unlock by a thread that does not hold it" \
	'^MISUSE: unlock by a thread that does not hold it: rwlock 0x[0-9a-f]+( <[^>]+>)?, 1 time$' "$WORK/mo.report"
expect_grep "another's read: ... at its line" \
	"^    unlocks_others\+0x[0-9a-f]+ \(.*rwlocks.c:$(line_of misuse-other)" "$WORK/mo.report"
# ... and a reader that lets its read go in a key destructor of its own,
# after the library's: its unlock is no second MISUSE
run mk "$T" misuse-key-reader
expect_eq "key reader: glibc's answers" "$(sort "$WORK/mk.out")" \
	"$(printf 'read let go at exit: 0\nunlock by another: 0')"
expect_eq "key reader: one MISUSE, no HELD AT THREAD EXIT" "$(findings mk)" "MISUSE"
expect_grep "key reader: the one unlock by a thread that does not hold it" \
	'^MISUSE: unlock by a thread that does not hold it: rwlock 0x[0-9a-f]+( <[^>]+>)?, 1 time$' "$WORK/mk.report"
expect_grep "key reader: ... at the other thread's line" \
	"^    k_other\+0x[0-9a-f]+ \(.*rwlocks.c:$(line_of key-other)" "$WORK/mk.report"
# The exited reader's read let go by main (a MISUSE), then a second reader
# exits: its hold is glibc's one reader, and a HELD AT THREAD EXIT (the
# misuse was counted against the exited reader and against the next live
# one too, whose exit then dropped its own read: no finding, and the lock
# read as free)
run exun "$T" exit-unlocked-exit
expect_eq "exit-unlocked-exit: glibc's answers" "$rc $(cat "$WORK/exun.out" | paste -sd, -)" \
	"0 unlock 0,trywrlock 16"
expect_eq "exit-unlocked-exit: both exits, the MISUSE" "$(findings exun)" \
	"HELD AT THREAD EXIT;HELD AT THREAD EXIT;MISUSE"
expect_grep "exit-unlocked-exit: the lock still held for read, by the second reader" \
	"^    thread [0-9]+ \(exited\), taken at exits_reading\+0x[0-9a-f]+ \(.*rwlocks.c:$(line_of exit-rd)" \
	"$WORK/exun.report"
run exit "$T" exit
expect_eq "exit: HELD AT THREAD EXIT, nothing else" "$(findings exit)" "HELD AT THREAD EXIT"
expect_grep "exit: the read lock" \
	"^  rwlock 0x[0-9a-f]+( <[^>]+>)? \(read\) taken at exits_reading\+0x[0-9a-f]+ \(.*rwlocks.c:$(line_of exit-rd)" \
	"$WORK/exit.report"

# ... and a writer that then waits for that reader waits for ever: a
# DEADLOCK, as one behind a writer that exited (a thread goes on working,
# so no STALL either: the watchdog found nothing, and the test its
# timeout).  "Locks still held" lists the reader.
run exitw MUTEXSTAT_WATCHDOG=1 MUTEXSTAT_ON_DEADLOCK=abort timeout 30 "$T" exit-then-write
expect_eq "exit-then-write: aborted by MUTEXSTAT_ON_DEADLOCK (SIGABRT)" "$rc" 134
exitw=$(last_report "$WORK/exitw.report")
expect_grep "exit-then-write: a DEADLOCK on a reader that exited" \
	'^DEADLOCK: thread [0-9]+ waits for an rwlock whose reader, thread [0-9]+, has exited: nobody can unlock it$' \
	"$exitw"
expect_grep "exit-then-write: the writer's wait, at its line" \
	"^    waits at      (main|exit_then_write)\+0x[0-9a-f]+ \(.*rwlocks.c:$(line_of exit-wr)" "$exitw"
expect_grep "exit-then-write: ... for the reader, where it took it" \
	"^    held for read by thread [0-9]+ \(exited\), taken at exits_reading\+0x[0-9a-f]+ \(.*rwlocks.c:$(line_of exit-rd)" \
	"$exitw"
expect_grep "exit-then-write: the reader still holds it" \
	"^    thread [0-9]+ \(exited\), taken at exits_reading\+0x[0-9a-f]+ \(.*rwlocks.c:$(line_of exit-rd)" \
	"$exitw"
expect_no_grep "exit-then-write: no STALL" '^STALL:' "$exitw"

# ... across a mutexstat_reset(), which held locks outlive
run exitrs MUTEXSTAT_WATCHDOG=1 MUTEXSTAT_ON_DEADLOCK=abort timeout 30 "$T" exit-reset-write
expect_eq "exit-reset-write: aborted by MUTEXSTAT_ON_DEADLOCK (SIGABRT)" "$rc" 134
expect_grep "exit-reset-write: the DEADLOCK on the reader that exited" \
	'^DEADLOCK: thread [0-9]+ waits for an rwlock whose reader, thread [0-9]+, has exited: nobody can unlock it$' \
	"$(last_report "$WORK/exitrs.report")"
# ... but not once another thread's unlock (a MISUSE) let that read go:
# readers that come and go made glibc's count run ahead of the held sets,
# the exited reader was believed, and the program, whose writer gets the
# lock after 3 s, was aborted for a DEADLOCK
run exitun MUTEXSTAT_WATCHDOG=1 MUTEXSTAT_ON_DEADLOCK=abort timeout 60 "$T" exit-unlocked-write
expect_eq "exit-unlocked-write: the program ends as without the library" \
	"$rc $(cat "$WORK/exitun.out")" "0 the writer got it"
cat "$WORK"/exitun.report* >"$WORK/exitun.all"
expect_no_grep "exit-unlocked-write: no DEADLOCK, in any report" '^DEADLOCK' "$WORK/exitun.all"
expect_grep "exit-unlocked-write: the unlock of the exited reader's read, a MISUSE" \
	'^MISUSE: unlock by a thread that does not hold it: rwlock ' "$WORK/exitun.report"

# ---- "Locks still held" when every lock held is a read ---------------------
# (it was left out: it was written only if some lock was held for write;
# and a program with locks of other kinds than mutexes says "locks", as
# its header does, where its rwlocks were listed as "Mutexes still locked")
run mainrd "$T" main-reads
expect_eq "main-reads: exit status" "$rc" 0
expect_grep "main-reads: the section" '^Locks still held:$' "$WORK/mainrd.report"
expect_grep "main-reads: the rwlock held for read" '^  rwlock 0x[0-9a-f]+( <[^>]+>)? held for read by$' \
	"$WORK/mainrd.report"
expect_grep "main-reads: ... by main, at its line" \
	"^    thread [0-9]+, taken at main\+0x[0-9a-f]+ \(.*rwlocks.c:$(line_of main-rd)" "$WORK/mainrd.report"

# ---- a writer behind a reader of another process ----------------------------
# A process-shared rwlock a child process reads, which this one waits to
# write: the watchdog's report said nothing of the wait (its five lines
# named no thread, no lock).  It is a WAIT CHAIN ending at a reader not
# known here, as one behind another process's writer names that writer.
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/psr.report" MUTEXSTAT_WATCHDOG=1 \
	"$T" shared-reader >"$WORK/psr.out" 2>"$WORK/psr.err" &
pid=$!
wait_for "$WORK/psr.report.1" '^  held for read by 1 reader not known here: of another process' 20 ||
	fail "shared-reader: no reader of another process in the watchdog's report"
kill -KILL $pid 2>/dev/null
wait $pid 2>/dev/null
expect_grep "shared-reader: a WAIT CHAIN" '^WAIT CHAIN:$' "$WORK/psr.report.1"
expect_grep "shared-reader: the writer waits to write the rwlock" \
	'^  thread [0-9]+ "rwlocks" waits to write rwlock 0x[0-9a-f]+( <[^>]+>)? for [0-9.]+ s$' "$WORK/psr.report.1"
expect_grep "shared-reader: ... at its line" \
	"^    waits at      (main|shared_reader)\+0x[0-9a-f]+ \(.*rwlocks.c:$(line_of ps-wr)" \
	"$WORK/psr.report.1"

# ---- a write lock that times out behind a reader -----------------------------
# Counted as a write behind readers once it ended, with its time (the time
# was left out of waits that timed out: "1 times, 0 ns").
run timed "$T" timed-write
expect_eq "timed-write: glibc's answer" "$(cat "$WORK/timed.out")" "timedwrlock: ETIMEDOUT"
expect_grep "timed-write: the write timed out" 'timed out: reads 0, writes 1$' "$WORK/timed.report"
expect_grep "timed-write: it waited behind the reader, its 100 ms deadline counted" \
	'^  writers waited behind readers 1 time, [1-9][0-9.]* ms$' "$WORK/timed.report"
expect_eq "timed-write: no line over 120 columns (the held line is two)" \
	"$(sed 's/µ/u/g' "$WORK/timed.report" | awk 'length($0) > 120' | wc -l)" 0

# ... and one behind a writer, with a reader waiting too: glibc counts that
# reader, which holds nothing (it was counted as a write behind readers)
run tbw "$T" timed-behind-writer
expect_eq "timed-behind-writer: glibc's answers" "$(cat "$WORK/tbw.out")" \
	"$(printf 'timedwrlock: ETIMEDOUT\ntimedrdlock: ETIMEDOUT')"
expect_grep "timed-behind-writer: a write and a read timed out" 'timed out: reads 1, writes 1$' \
	"$WORK/tbw.report"
expect_grep "timed-behind-writer: no writer waited behind readers" \
	'^  writers waited behind readers 0 times, 0 ns$' "$WORK/tbw.report"
# each wait that timed out is its own mode's: the read's (a 300 ms
# deadline) in the reads' time, the write's (100 ms) in the writes'
tbw_waited=$(sed -n 's/^  reads 0 (0 contended, waited \([0-9.]*\) ms), writes 1 (0 contended, waited \([0-9.]*\) ms);.*/\1 \2/p' \
	"$WORK/tbw.report")
expect_eq "timed-behind-writer: the read's wait in the reads', the write's in the writes'" \
	"$(echo "$tbw_waited" | awk 'NF == 2 { print ($1 >= 250 && $2 >= 90 && $2 < 250) ? "yes" : $0 }')" yes

# ---- who let a waiter in, while other readers come and go ------------------
# A reader let in by main's write unlock holds on while a writer waits and
# main reads 40 times; then the reader lets the writer in.  Each wait is
# charged to the unlock that ended it: main's 40 read unlocks ended none,
# and with a release number each they overwrote the reader's before it
# read it (its wait went unattributed).
run blame "$T" blame-kept
expect_eq "blame-kept: exit status" "$rc" 0
awk '/^  who made them wait/ { on = 1; next } on && /^ +waits/ { next }
	on && !/^      / { exit } on' \
	"$WORK/blame.report" | sed 's/^ *\([0-9]*\) .*rwlocks\.c:\([0-9]*\),.*/\1 \2/' |
	sort >"$WORK/blame.rows"
expect_eq "blame-kept: each wait charged to the unlock that ended it" \
	"$(cat "$WORK/blame.rows")" \
	"$(printf '1 %s\n1 %s\n' "$(line_of bk-last-reader)" "$(line_of bk-let-in)" | sort)"
expect_no_grep "blame-kept: none unattributed" 'not attributed' "$WORK/blame.report"
# The reader let in held on longest: the writes' longest hold is not kept,
# and the held line bounds it as the write hold histogram does (it gave
# the longest read, milliseconds, for the writer's microseconds).  (A
# writer preempted in its hold on a loaded machine may hold longest: the
# maximum is then exact in both, without "<=".)
bound=$(sed -E -n 's/^  held: .*, writes avg .* max (<= )?(.*) \(of the holds timed\)$/\2/p' "$WORK/blame.report")
expect_grep "blame-kept: the held line bounds the writes' longest hold" . "$(printf '%s' "$bound" > "$WORK/bound"; echo "$WORK/bound")"
expect_eq "blame-kept: the held line's bound of the writes' longest hold is the histogram's" \
	"$bound" \
	"$(awk '/^  write hold times/ { on = 1 } on && /^    p50/ { sub(/.*max (<= )?/, ""); print; exit }' \
		"$WORK/blame.report")"

# ---- writers on one rwlock, the process exiting among them ------------------
# The exit report catches writers waiting while the holder is between
# glibc's lock and its record: each once named another waiting writer as
# what it waited for, and two of them a false DEADLOCK (12 runs in 20).
for i in 1 2 3 4 5; do
	run writers "$T" writers-exit
	expect_eq "writers-exit $i: exit status" "$rc" 0
	expect_eq "writers-exit $i: no finding" "$(findings writers)" ""
done

finish
