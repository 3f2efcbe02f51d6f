# stacks.sh - call stacks in the report: who waited and who made them wait,
# with exact counts, on examples/blame (one holder, two waiters, R rounds,
# every wait charged to one waiter's lock and to the holder's unlock); and
# the options MUTEXSTAT_STACK_SAMPLE, MUTEXSTAT_STACK_MEMORY and
# MUTEXSTAT_FRAMES.
. "$top_srcdir/tests/lib.sh"
B=$top_builddir
SRC=$top_srcdir/examples/blame.c
R=3

# The source lines of the two waiting locks and of the holder's unlock.
line_of() { grep -n "/\* $1 \*/" "$SRC" | cut -d: -f1; }
WAIT_ONE=$(line_of WAIT_ONE)
WAIT_TWO=$(line_of WAIT_TWO)
LET_GO=$(line_of LET_GO)

# top_counts FILE: "acquired contended" of the first mutex of the top table.
top_counts() {
	awk '/^Top [0-9]+ mutex(es)? by/ { getline; getline; print $3, $4; exit }' "$1"
}

# stacks FILE TITLE: one line per stack listed under TITLE ("who waited",
# "who made them wait") for the first mutex in the report:
#   waits share frames first-frame
# share without its %, frames counted from the lines the stack takes.
stacks() {
	awk -v title="  $2:" '
		function flush() { if (row != "") print row, frames, first; row = "" }
		index($0, title) == 1 { on = 1; getline; next }
		!on { next }
		match($0, /^ +[0-9]+ +[0-9.]+ [^ ]+ +[0-9.]+ [^ ]+ +[0-9]+% +/) {
			flush()
			share = $6; sub(/%/, "", share)
			row = $1 " " share
			first = substr($0, RLENGTH + 1)
			frames = 1
			next
		}
		/^                    +[^ ]/ { frames++; next }
		{ flush(); exit }
		END { flush() }' "$1"
}

# stack_count FILE TITLE: N of the section title's "(N stacks)".
stack_count() {
	sed -n "s/^  $2: .* (\([0-9]*\) stacks\{0,1\}):\$/\1/p" "$1" | head -1
}

# row_of FILE FUNC: the stacks line (see stacks) whose first frame is in FUNC
row_of() { awk -v f="$2+" 'index($4, f) == 1' "$1"; }

# ---- a mutex's first 256 contention events are all captured (default) ----
run_with "$WORK/out" "$WORK/err" "$B/examples/blame" $R
expect_eq "blame output" "$(cat "$WORK/out")" \
	"$R rounds: waiter_one and waiter_two waited $R times each, $((2 * R)) waits in all, each behind hold_too_long"
expect_eq "acquired, contended" "$(top_counts "$WORK/report")" "$((4 * R)) $((2 * R))"
expect_grep "header: the first events of each mutex, then sampled" \
	"^  call stacks: each of a mutex's first 256 contention events, then 1 in 8 \(MUTEXSTAT_STACK_SAMPLE\); [0-9]+ distinct$" "$WORK/report"
expect_no_grep "no stacks dropped" 'stacks were dropped' "$WORK/report"
expect_eq "no line over 120 columns" \
	"$(sed 's/µ/u/g' "$WORK/report" | awk 'length($0) > 120' | wc -l)" 0

# The histograms: rows that join up (each starts where the last ended),
# and never two empty rows in a row (a run of empty buckets is one row).
# The hold histogram has fast holds and holds of ~20 ms: a run between.
hist_rows() { awk '/^  (wait|hold) times, of / { on = 1; print "--"; next } on && /^    p50 / { on = 0 } on' "$1"; }
expect_eq "histograms: each row starts where the one above ended" "$(hist_rows "$WORK/report" | awk '
	/^--$/ { prev = ""; next }
	{ split($0, p, /\.\.|\|/); lo = p[1]; hi = p[2]; gsub(/ /, "", lo); gsub(/ /, "", hi) }
	prev != "" && lo != prev { bad++ }
	{ prev = hi; rows++ }
	END { print bad + 0 (rows ? "" : " (no rows)") }')" 0
expect_eq "histograms: no two empty rows in a row" \
	"$(hist_rows "$WORK/report" | awk '/^--$/ { last = -1; next } $NF == 0 && last == 0 { n++ } { last = $NF } END { print n + 0 }')" 0

stacks "$WORK/report" "who waited" >"$WORK/waited"
stacks "$WORK/report" "who made them wait" >"$WORK/caused"
expect_eq "who waited: stacks" "$(stack_count "$WORK/report" "who waited")" 2
expect_eq "who waited: lines" "$(wc -l <"$WORK/waited")" 2
expect_eq "who waited: waiter_one's waits" \
	"$(row_of "$WORK/waited" waiter_one | cut -d' ' -f1)" $R
expect_eq "who waited: waiter_two's waits" \
	"$(row_of "$WORK/waited" waiter_two | cut -d' ' -f1)" $R
expect_eq "who waited: waits add up to the contended count" \
	"$(awk '{ n += $1 } END { print n }' "$WORK/waited")" $((2 * R))
shares=$(awk '{ s += $2 } END { print s }' "$WORK/waited")
expect_eq "who waited: shares add to 100% (+-1)" \
	"$(awk -v s="$shares" 'BEGIN { print (s >= 99 && s <= 101) ? "yes" : s }')" yes
expect_grep "who waited: waiter_one at its lock line" \
	"^ +$R +.*% +waiter_one\+0x[0-9a-f]+ \(.*blame\.c:$WAIT_ONE, blame\)$" "$WORK/report"
expect_grep "who waited: waiter_two at its lock line" \
	"^ +$R +.*% +waiter_two\+0x[0-9a-f]+ \(.*blame\.c:$WAIT_TWO, blame\)$" "$WORK/report"
expect_eq "who waited: both stacks go on below the job" \
	"$(awk '$3 >= 2' "$WORK/waited" | wc -l)" 2
expect_grep "the frame below is run_job's" '^ {20,}run_job\+0x[0-9a-f]+ ' "$WORK/report"

expect_eq "who made them wait: stacks" \
	"$(stack_count "$WORK/report" "who made them wait")" 1
expect_eq "who made them wait: hold_too_long, 2R waits, 100%" \
	"$(row_of "$WORK/caused" hold_too_long | cut -d' ' -f1,2)" "$((2 * R)) 100"
expect_grep "who made them wait: at the holder's unlock line" \
	"^ +$((2 * R)) +.*% +hold_too_long\+0x[0-9a-f]+ \(.*blame\.c:$LET_GO, blame\)$" \
	"$WORK/report"
expect_grep "first locked by the holder" '^  first locked at   hold_too_long\+' \
	"$WORK/report"

# ---- every event: MUTEXSTAT_STACK_SAMPLE=1 --------------------------------
MUTEXSTAT_STACK_SAMPLE=1 run_with "$WORK/out" "$WORK/err" "$B/examples/blame" $R
expect_grep "every event: header says so" \
	'^  call stacks: every contention event; [0-9]+ distinct$' "$WORK/report"
expect_eq "every event: acquired, contended" \
	"$(top_counts "$WORK/report")" "$((4 * R)) $((2 * R))"
stacks "$WORK/report" "who waited" >"$WORK/waited"
expect_eq "every event: all waits captured" \
	"$(awk '{ n += $1 } END { print n }' "$WORK/waited")" $((2 * R))

# ---- sampled 1 in a million: the first 256 events of a mutex are still all
# captured, so here every one; counts stay exact ----------------------------
MUTEXSTAT_STACK_SAMPLE=1000000 run_with "$WORK/out" "$WORK/err" "$B/examples/blame" $R
expect_grep "sampled: header says so" \
	"^  call stacks: each of a mutex's first 256 contention events, then 1 in 1000000 \(MUTEXSTAT_STACK_SAMPLE\)" \
	"$WORK/report"
expect_eq "sampled: acquired, contended still exact" \
	"$(top_counts "$WORK/report")" "$((4 * R)) $((2 * R))"
stacks "$WORK/report" "who waited" >"$WORK/waited"
expect_eq "sampled: the first events all captured" \
	"$(awk '{ n += $1 } END { print n }' "$WORK/waited")" $((2 * R))

# ---- 1 MiB for stacks: enough for this program ---------------------------
MUTEXSTAT_STACK_MEMORY=1 run_with "$WORK/out" "$WORK/err" "$B/examples/blame" $R
expect_eq "1 MiB: program output" "$(cat "$WORK/out")" \
	"$R rounds: waiter_one and waiter_two waited $R times each, $((2 * R)) waits in all, each behind hold_too_long"
expect_eq "1 MiB: no warning" "$(cat "$WORK/err")" ""
expect_eq "1 MiB: acquired, contended" "$(top_counts "$WORK/report")" \
	"$((4 * R)) $((2 * R))"
expect_no_grep "1 MiB: no stacks dropped" 'stacks were dropped' "$WORK/report"
stacks "$WORK/report" "who waited" >"$WORK/waited"
expect_eq "1 MiB: who waited still adds up" \
	"$(awk '{ n += $1 } END { print n }' "$WORK/waited")" $((2 * R))

# ---- one frame per stack -------------------------------------------------
MUTEXSTAT_FRAMES=1 run_with "$WORK/out" "$WORK/err" "$B/examples/blame" $R
stacks "$WORK/report" "who waited" >"$WORK/waited"
stacks "$WORK/report" "who made them wait" >"$WORK/caused"
expect_eq "1 frame: who waited, 2 stacks of one frame each" \
	"$(awk '$3 == 1' "$WORK/waited" | wc -l)" 2
# (a wait no unlock saw, on a loaded machine, is a row of its own: not a
# stack, and not what this counts)
expect_eq "1 frame: who made them wait, 1 stack of one frame" \
	"$(awk '$3 == 1 && $4 != "(not"' "$WORK/caused" | wc -l)" 1
expect_eq "1 frame: no continuation lines under first locked at" \
	"$(sed -n '/^  first locked at /{n;p;}' "$WORK/report" | grep -c '^                    [^ ]')" 0
expect_eq "1 frame: counts unchanged" \
	"$(awk '{ n += $1 } END { print n }' "$WORK/waited")" $((2 * R))
expect_eq "1 frame: still the waiters' own frames" \
	"$(row_of "$WORK/waited" waiter_one | wc -l) $(row_of "$WORK/waited" waiter_two | wc -l)" "1 1"
# ---- the C library's frames are left out without asking libdw -------------
# Stacks end in the C library's start frames (start_thread, clone3,
# __libc_start_main), which the report leaves out.  They are known by
# their module: asking libdw for their names made it look for the C
# library's separate debug file, and with libc6-dbg installed inflate it
# (~45 ms at every exit of a small program).  strace shows the look.
libc=$(sed -n 's@^[^/]* \(/[^ ]*/libc\.so\.6\)$@\1@p' /proc/self/maps | head -n 1)
libc_id=$(readelf -n "$libc" 2>/dev/null | awk '/Build ID:/ { print $3; exit }')
if ! command -v strace >/dev/null 2>&1 || ! strace -o /dev/null true 2>/dev/null ||
   [ -z "$libc_id" ]; then
	echo "note: strace (or the C library's build ID) not available: its debug file's look not checked"
else
	# (LeakSanitizer cannot run under ptrace: the sanitized build's
	# leak check is left to the other runs)
	strace -f -e trace=open,openat,stat,newfstatat,access -o "$WORK/trace" \
	    -E LD_PRELOAD="$MS_PRELOAD" -E MUTEXSTAT_OUTPUT="$WORK/report" \
	    -E ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
	    "$B/examples/blame" $R >"$WORK/out" 2>"$WORK/err"
	expect_no_grep "libc's frames: none shown" 'libc\.so' "$WORK/report"
	expect_grep "libc's frames: the program's are" 'waiter_one.*blame\.c:' "$WORK/report"
	id_tail=${libc_id#??}
	expect_no_grep "libc's frames: its debug file not looked for" \
	    "debug/\\.build-id/${libc_id%"$id_tail"}/$id_tail" "$WORK/trace"

	# A C library frame inside a stack (pthread_once's), in a program as
	# built and stripped: named without its source line (with libc6-dbg
	# installed, the line tables of the C library's debug file cost some
	# 80 ms to inflate at every such exit: OpenSSL and LLVM lock inside
	# pthread_once), and the process's start left out -- stripped, the
	# program's _start has no name: it is known by the entry point.
	LSRC=$top_srcdir/tests/libc_frames.c
	FIRST=$(grep -n '/\* FIRST_LOCK \*/' "$LSRC" | cut -d: -f1)
	ONCE=$(grep -n '/\* ONCE \*/' "$LSRC" | cut -d: -f1)
	cp "$B/tests/libc_frames" "$WORK/built"
	have_strip=0
	strip -o "$WORK/stripped" "$B/tests/libc_frames" 2>/dev/null && have_strip=1
	[ "$have_strip" = 1 ] || echo "note: no strip: the stripped program's stack not checked"
	for how in built stripped; do
		[ -x "$WORK/$how" ] || continue
		env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/$how.report" \
		    "$WORK/$how" >"$WORK/$how.out" 2>"$WORK/$how.err"
		expect_eq "$how: its output" "$(cat "$WORK/$how.out")" once
		sed -n '/^  first locked at /,/^  recent operations/p' "$WORK/$how.report" |
			sed '$d' | sed 's/^  first locked at //; s/^ *//' >"$WORK/$how.first"
		expect_eq "$how: first locked at: 3 frames, the start left out" \
			"$(wc -l <"$WORK/$how.first")" 3
		expect_grep "$how: pthread_once's frame, without a source line" \
			'^([_a-z]+\+0x[0-9a-f]+ \(libc\.so\.6\)|libc\.so\.6\+0x[0-9a-f]+)$' "$WORK/$how.first"
		# main's lock alone: its stack ends in the start, which is left
		# out without naming it (a look at the C library's debug file)
		strace -f -e trace=open,openat,stat,newfstatat,access -o "$WORK/$how.trace" \
		    -E LD_PRELOAD="$MS_PRELOAD" -E MUTEXSTAT_OUTPUT="$WORK/$how.plain" \
		    -E ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		    "$WORK/$how" plain >"$WORK/$how.out" 2>"$WORK/$how.err"
		expect_no_grep "$how, main's lock: the C library's debug file not looked for" \
		    "debug/\\.build-id/${libc_id%"$id_tail"}/$id_tail" "$WORK/$how.trace"
		expect_eq "$how, main's lock: first locked at, one frame" \
			"$(sed -n '/^  first locked at /,/^  recent operations/p' "$WORK/$how.plain" | wc -l)" 2
	done
	expect_eq "built: the routine's lock, then the call of pthread_once" \
		"$(sed -n '1s/.*(\(.*libc_frames\.c:[0-9]*\),.*/\1/p; 3s/.*(\(.*libc_frames\.c:[0-9]*\),.*/\1/p' "$WORK/built.first" |
		   sed 's@.*/@@' | tr '\n' ' ')" "libc_frames.c:$FIRST libc_frames.c:$ONCE "
	if [ "$have_strip" = 1 ]; then
		expect_grep "stripped: the program's frames by module and offset" \
			'^stripped\+0x[0-9a-f]+$' "$WORK/stripped.first"
	fi
fi
finish
