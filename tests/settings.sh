# tests/settings.sh - the settings at their limits and in combination: the
# report must come, right and in one piece, for every value the settings
# table allows, and the program must run as it runs without the library.
#   * MUTEXSTAT_TOP at its limit (100000) over 200,000 mutexes that come in
#     the worst order for a top list: the report is written (a hang guard,
#     not a timing: a list kept sorted by insertion took 79 s), its rows are
#     the true top 100000 in rank order.
#   * Warnings stay one printable line whatever a value holds: a newline
#     or an escape in a value or in MUTEXSTAT_OUTPUT's path shows as '?', a
#     long value is cut (at a character, with "..."); a bad MUTEXSTAT_OUTPUT
#     beside other formats names the default those use (mutexstat.%p), not
#     stderr.
#   * Under an address-space limit (ulimit -v) the library takes at most
#     half of what the limit leaves, and says so in one line: a program
#     that starts its threads without the library starts them with it (the
#     table used to take all the room there was, and each new thread a
#     malloc arena of 64 MiB); with little room left the report names
#     functions with dladdr, not libdw (which crashed).
#   * The launcher refuses a --format list with an empty word (which the
#     library would refuse with a warning after the launcher let it by).
#   * All five formats of one report: the same run length in the text
#     header ("ran 12.0 ms"), the JSON's run_ns and the pprof profile's
#     duration_nanos (each writer used to read the clock itself), and the
#     same acquisitions, contentions and total wait in text and JSON.

. "$top_srcdir/tests/lib.sh"

S="$top_builddir/tests/settings"

# run VAR=VALUE... program args...: under the library, report to
# $WORK/report; status in $rc (124: it did not end within 40 s).
run() {
	rm -f "$WORK/report"
	rc=0
	timeout 40 env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/report" "$@" \
	    >"$WORK/out" 2>"$WORK/err" || rc=$?
}

# top_rows FILE: "acquired address" for each row of the top table.
top_rows() {
	awk '/^Top [0-9]+ mutex(es)? by/ { on = 1; getline; next }
		on && /^$/ { exit }
		on { print $3, $2 }' "$1"
}

# ---- MUTEXSTAT_TOP=100000 ----------------------------------------------------

# (a tenth of it under ASan, whose every allocation and access is slower:
# the heap's rows are checked the same way)
N=200000; sanitized && N=20000
TOP=$((N / 2)); PER=$((N / 10))
run MUTEXSTAT_TOP=$TOP MUTEXSTAT_SORT=acquired MUTEXSTAT_HISTORY=1 \
    "$S" ranked $N 10
expect_eq "TOP=$TOP over $N mutexes: the program's status (124: the report hung)" "$rc" 0
expect_eq "TOP=$TOP: the program's output" "$(cat "$WORK/out")" "$N mutexes, $((PER * 55)) locks"
expect_eq "TOP=$TOP: nothing on stderr" "$(cat "$WORK/err")" ""
expect_grep "TOP=$TOP: the heading" "^Top $TOP mutexes by acquired:\$" "$WORK/report"
top_rows "$WORK/report" >"$WORK/rows"
expect_eq "TOP=$TOP: the rows by acquisitions ($PER of 10 locks each, $PER of 9, ...)" \
    "$(cut -d' ' -f1 "$WORK/rows" | uniq -c | awk '{ printf "%s:%s ", $2, $1 }')" \
    "10:$PER 9:$PER 8:$PER 7:$PER 6:$PER "
expect_eq "TOP=$TOP: equal rows in address order" \
    "$(awk 'NR > 1 && $1 == n && $2 <= a { bad++ } { n = $1; a = $2 } END { print bad + 0 }' "$WORK/rows")" 0
expect_eq "TOP=$TOP: $TOP details" "$(grep -c '^#[0-9]* mutex ' "$WORK/report")" $TOP

# ---- warnings: one line each ------------------------------------------------

L="$top_builddir/examples/contention"
"$L" 2 1000 >"$WORK/small.out"

# expect_warning WHAT LINE: stderr is that one line; the program as without us
expect_warning() {
	expect_eq "$1: the program's status" "$rc" 0
	expect_eq "$1: the program's output" "$(cat "$WORK/out")" "$(cat "$WORK/small.out")"
	expect_eq "$1: one line on stderr" "$(wc -l <"$WORK/err" | tr -d ' ')" 1
	expect_eq "$1: the warning" "$(cat "$WORK/err")" "$2"
}

esc=$(printf '\033')
run MUTEXSTAT_TOP="5
mutexstat: a line of its own$esc[31m" "$L" 2 1000
expect_warning "a newline and an escape in MUTEXSTAT_TOP" \
    "mutexstat: MUTEXSTAT_TOP='5?mutexstat: a line of its own?[31m' is not a number from 1 to 100000; using 10"
long=$(printf 'x%.0s' $(seq 79))
run MUTEXSTAT_SORT="${long}éé" "$L" 2 1000
expect_warning "MUTEXSTAT_SORT of 83 bytes, cut at 80 before the character that does not fit" \
    "mutexstat: MUTEXSTAT_SORT='${long}...' is not one of wait, wait-max, contended, acquired, hold, hold-max, changes; using wait"
rc=0
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/no such dir/a
b" "$L" 2 1000 >"$WORK/out" 2>"$WORK/err" || rc=$?
expect_eq "a newline in MUTEXSTAT_OUTPUT's path: the warning is one line, then the report" \
    "$(sed -n 1p "$WORK/err")" \
    "mutexstat: cannot write MUTEXSTAT_OUTPUT '$WORK/no such dir/a?b' (ENOENT); the report goes to stderr"
expect_grep "a newline in MUTEXSTAT_OUTPUT's path: the report on stderr" '^mutexstat: contention \(pid' "$WORK/err"
mkdir "$WORK/cwd"
long=$(printf 'd/%.0s' $(seq 2100))
rc=0
(cd "$WORK/cwd" && exec env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_FORMAT=text,json \
    MUTEXSTAT_OUTPUT="$long" "$L" 2 1000) >"$WORK/out" 2>"$WORK/err" || rc=$?
expect_warning "MUTEXSTAT_OUTPUT too long beside MUTEXSTAT_FORMAT=text,json" \
    "mutexstat: MUTEXSTAT_OUTPUT='$(printf 'd/%.0s' $(seq 40))...' is not a path shorter than 4096 bytes; using the prefix mutexstat.%p"
expect_eq "MUTEXSTAT_OUTPUT too long beside text,json: the files mutexstat.PID.*" \
    "$(cd "$WORK/cwd" && ls | sed 's/[0-9][0-9]*/PID/' | tr '\n' ' ')" "mutexstat.PID.json mutexstat.PID.txt "

# ---- an address-space limit -------------------------------------------------

if sanitized; then
	echo "(a sanitized build: ASan's shadow memory needs more than ulimit -v allows)"
else
	for kb in 100000 150000; do
		# thread stacks of 8 MiB, whatever the caller's ulimit -s
		bare=$( (ulimit -s 8192 && ulimit -v $kb && "$S" threads 4) 2>&1)
		if [ "$bare" != "4 of 4 threads started, counter 4000" ]; then
			echo "(ulimit -v $kb: the program alone does not run here: $bare)"
			continue
		fi
		rc=0
		(ulimit -s 8192 && ulimit -v $kb && exec env LD_PRELOAD="$MS_PRELOAD" \
		    MUTEXSTAT_OUTPUT="$WORK/report" "$S" threads 4) >"$WORK/out" 2>"$WORK/err" || rc=$?
		expect_eq "ulimit -v $kb: the program's status and output" \
		    "$rc $(cat "$WORK/out")" "0 $bare"
		expect_eq "ulimit -v $kb: two lines on stderr" "$(wc -l <"$WORK/err" | tr -d ' ')" 2
		# a new thread's libunwind block would be its first malloc, and
		# glibc would give it an arena (64 MiB): under ulimit -v 150000,
		# 3 of 4 threads started in some runs on a loaded machine
		expect_grep "ulimit -v $kb: the second says the threads take no call stacks" \
		    "^mutexstat: under ulimit -v the threads the program starts take no call stacks \\(each would get a malloc arena, 64 MiB, beyond the library's half\\)\$" \
		    "$WORK/err"
		expect_grep "ulimit -v $kb: the line says what the library takes" \
		    '^mutexstat: the address-space limit \(ulimit -v\) leaves [0-9]+ MiB, of which the library takes at most half: tracking [0-9]+ mutexes \(MUTEXSTAT_TABLE_SIZE=1048576\), [0-9]+ MiB for call stacks \(MUTEXSTAT_STACK_MEMORY=64\)$' \
		    "$WORK/err"
		expect_grep "ulimit -v $kb: the report" \
		    '^mutexstat: settings \(pid [0-9]+\) ran .*: 4 threads used mutexes, 1 mutex tracked, 0 untracked$' \
		    "$WORK/report"
		expect_eq "ulimit -v $kb: 4000 acquisitions" \
		    "$(top_rows "$WORK/report" | cut -d' ' -f1)" 4000
		# libdw, which can crash when an allocation fails, is left
		# out when little is left (it once did: SIGSEGV at exit)
		if grep -q '^  names: from dladdr' "$WORK/report"; then
			expect_grep "ulimit -v $kb: dladdr's names, for want of room" \
			    '^  names: from dladdr \(ulimit -v leaves [0-9]+ MiB\): ' "$WORK/report"
		fi
	done
fi

# ---- the launcher: --format words ---------------------------------------------

for list in '' 'text,' ',json' 'text,,json' ','; do
	rc=0
	"$top_builddir/scripts/mutexstat" --format="$list" "$L" 2 1000 >"$WORK/out" 2>"$WORK/err" || rc=$?
	expect_eq "mutexstat --format='$list': refused (status 2), nothing run" "$rc $(cat "$WORK/out")" "2 "
	expect_eq "mutexstat --format='$list': the message" "$(sed -n 1p "$WORK/err")" \
	    "mutexstat: --format '$list': a word is empty (a comma-separated list of text, folded, pprof, dot, json)"
done

# ---- every format of one report: the same numbers ----------------------------

# duration NS: NS as the report writes it, three significant digits
# ("812 ns", "12.3 µs", "4.50 ms", "2.01 s"; lib/base/fmt.c, ms_duration).
duration() {
	python3 - "$1" <<'PY'
import sys
ns = int(sys.argv[1])
if ns < 1000:
    print("%d ns" % ns); sys.exit()
units = ["ns", "\u00b5s", "ms", "s"]
u, scale = 0, 1
while u < 3 and ns >= scale * 1000:
    scale *= 1000; u += 1
while True:
    for decimals, pow_ in ((2, 100), (1, 10), (0, 1)):
        fixed = (ns * pow_ + scale // 2) // scale
        if fixed < 1000 or decimals == 0:
            break
    if fixed < 1000 or u == 3:
        break
    scale *= 1000; u += 1
text = "%d" % (fixed // pow_)
if decimals:
    text += ".%0*d" % (decimals, fixed % pow_)
print(text + " " + units[u])
PY
}

# pprof_duration FILE: the profile's duration_nanos (field 10 of Profile).
pprof_duration() {
	python3 - "$1" <<'PY'
import gzip, sys
b = gzip.open(sys.argv[1]).read()
i = 0
def varint():
    global i
    v = s = 0
    while True:
        c = b[i]; i += 1
        v |= (c & 0x7f) << s; s += 7
        if c < 0x80:
            return v
while i < len(b):
    key = varint()
    if (key & 7) == 0:
        v = varint()
        if key >> 3 == 10:
            print(v)
    elif (key & 7) == 2:
        n = varint()
        i += n
    else:
        sys.exit("wire type %d" % (key & 7))
PY
}

if command -v python3 >/dev/null && command -v jq >/dev/null; then
	C="$top_builddir/examples/contention"
	"$C" 4 20000 >"$WORK/contention.out"
	rc=0
	timeout 40 env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/r" \
	    MUTEXSTAT_FORMAT=json,dot,pprof,folded,text MUTEXSTAT_STACK_SAMPLE=1 \
	    "$C" 4 20000 >"$WORK/out" 2>"$WORK/err" || rc=$?
	expect_eq "five formats: the program's status" "$rc" 0
	expect_eq "five formats: the program's output" "$(cat "$WORK/out")" "$(cat "$WORK/contention.out")"
	expect_eq "five formats: nothing on stderr" "$(cat "$WORK/err")" ""
	run_ns=$(jq .run_ns "$WORK/r.json")
	expect_eq "five formats: the pprof duration is the JSON's run_ns" \
	    "$(pprof_duration "$WORK/r.pb.gz")" "$run_ns"
	expect_eq "five formats: the text's run length is the JSON's run_ns" \
	    "$(sed -n '1s/.* ran \(.*\): [0-9]* threads used.*/\1/p' "$WORK/r.txt")" \
	    "$(duration "$run_ns")"
	hot=$(jq -r '.mutexes | max_by(.acquisitions) | .address' "$WORK/r.json")
	expect_eq "five formats: text and JSON, the hot mutex's acquisitions, contentions, owner changes" \
	    "$(top_row "$WORK/r.txt" "$hot" | awk '{ print $3, $4, $(NF - 2) }')" \
	    "$(jq -r --arg a "$hot" '.mutexes[] | select(.address == $a) |
		"\(.acquisitions) \(.contended) \(.owner_changes)"' "$WORK/r.json")"
	expect_eq "five formats: the folded waits add up to the JSON's total wait" \
	    "$(awk '{ s += $NF } END { print s + 0 }' "$WORK/r.wait.folded")" \
	    "$(jq '[.mutexes[].wait_total_ns] | add' "$WORK/r.json")"
else
	echo "(no python3 or jq: the formats of one report are not compared)"
fi

# ---- kinds left out (MUTEXSTAT_TRACK) and lines left out (MUTEXSTAT_TOP) ----
# "locked no mutexes" of a program whose mutexes were left out, and a table
# of 10 where 20 were used, said nothing of either
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_TRACK=rwlock "$top_builddir/examples/contention" \
	>/dev/null 2>"$WORK/track.err"
expect_eq "TRACK=rwlock: the one line, then what was left out" "$(sed 's/(pid [0-9]*) ran [^ ]* [^ ]*/(pid P) ran T/' "$WORK/track.err")" \
	"mutexstat: contention (pid P) ran T and locked no mutexes
  not recorded (MUTEXSTAT_TRACK): mutexes, spin locks"
if command -v jq >/dev/null 2>&1; then
	# and the JSON report of the same says what was left out
	env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_TRACK=rwlock MUTEXSTAT_FORMAT=json \
		MUTEXSTAT_OUTPUT="$WORK/track" "$top_builddir/examples/contention" >/dev/null 2>&1
	expect_eq "TRACK=rwlock: JSON's untracked_locks" \
		"$(jq -c '[.untracked_locks, (.mutexes | length)]' "$WORK/track.json")" '[["mutex","spin"],0]'
	env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_FORMAT=json MUTEXSTAT_OUTPUT="$WORK/all" \
		"$top_builddir/examples/contention" >/dev/null 2>&1
	expect_eq "TRACK by default: JSON's untracked_locks empty" \
		"$(jq -c '.untracked_locks' "$WORK/all.json")" '[]'
fi
env LD_PRELOAD="$MS_PRELOAD" "$top_builddir/examples/ten_by_twenty" >/dev/null 2>"$WORK/top.err"
expect_eq "TOP=10 of 20: ten rows, then how many more" \
	"$(awk '/^Top 10 mutexes by wait:$/ { on = 1; getline; next } on && /^$/ { getline; print n, $0; exit } on { n++ }' "$WORK/top.err")" \
	"10 (10 more not listed: MUTEXSTAT_TOP, the launcher's --top)"

finish
