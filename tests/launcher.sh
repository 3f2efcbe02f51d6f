# tests/launcher.sh - the mutexstat launcher (scripts/mutexstat): its help
# and version, that it runs a program unchanged with the library preloaded
# and the options turned into MUTEXSTAT_* variables, that it keeps existing
# LD_PRELOAD entries, finds the library, and refuses with status 2 what the
# loader could not preload into (missing, static, setuid/setgid programs).

. "$top_srcdir/tests/lib.sh"

MS="$top_builddir/scripts/mutexstat"
CONTENTION="$top_builddir/examples/contention"
CC=${CC:-cc}

# launch OUT ERR args...: run the launcher; its status is left in $rc.
launch() {
	out=$1; err=$2; shift 2
	rc=0
	"$MS" "$@" >"$out" 2>"$err" || rc=$?
}

# expect_refused WHAT MESSAGE-REGEX args...: status 2, the message on
# stderr, and nothing run (no stdout).
expect_refused() {
	what=$1; msg=$2; shift 2
	launch "$WORK/out" "$WORK/err" "$@"
	expect_eq "$what: exit status" "$rc" 2
	expect_grep "$what: message" "^mutexstat: .*$msg" "$WORK/err"
	expect_eq "$what: program not run" "$(cat "$WORK/out")" ""
}

# ---- one process whose report is in files alone: where they are ----------
# (--format json: nothing on the terminal said where)
rc=0
(cd "$WORK" && "$MS" --format json "$CONTENTION") >"$WORK/alone.out" 2>"$WORK/alone.err" || rc=$?
alone=$(sed -n 's|^mutexstat: contention (pid [0-9]*): the report is in \(.*\)$|\1|p' "$WORK/alone.err")
expect_eq "json alone: status, one line on stderr naming the file" \
	"$rc $(wc -l <"$WORK/alone.err") $(echo "$alone" | sed 's/\.[0-9][0-9]*\.json$/.PID.json/')" \
	"0 1 $WORK/mutexstat.PID.json"
expect_eq "json alone: the report is there" "$(jq -r .program "${alone:-none}" 2>&1)" "contention"
(cd "$WORK" && "$MS" --format json,pprof "$CONTENTION") >/dev/null 2>"$WORK/alone.err"
expect_grep "json and pprof: the others beside it" \
	"^mutexstat: contention \(pid [0-9]+\): the report is in $WORK/mutexstat\.[0-9]+\.json \(the other formats beside it\)\$" \
	"$WORK/alone.err"
rm -f "$WORK"/mutexstat.*.json "$WORK"/mutexstat.*.pb.gz
# text alone goes to the terminal, as ever: no such line
"$MS" "$CONTENTION" >/dev/null 2>"$WORK/alone.err"
expect_no_grep "text alone: no such line" 'the report is in' "$WORK/alone.err"

# ---- help and version -----------------------------------------------------

launch "$WORK/help" "$WORK/err" --help
expect_eq "--help exit status" "$rc" 0
for opt in '-o, --output PATH' '--top N' '--sort COL' '--history N' \
    '--table-size N' '--no-exit-report' '--no-follow' '--lib PATH' '-h, --help' '--version'; do
	if grep -qF -- "$opt" "$WORK/help"; then pass "--help lists $opt"
	else fail "--help does not list '$opt'"; fi
done
# every variable with its default, as a row: NAME  DEFAULT  meaning
for pair in MUTEXSTAT_OUTPUT=stderr MUTEXSTAT_TABLE_SIZE=1048576 \
    MUTEXSTAT_HISTORY=16 MUTEXSTAT_TOP=10 MUTEXSTAT_SORT=wait \
    MUTEXSTAT_EXIT_REPORT=1; do
	expect_grep "--help lists ${pair%%=*} with default ${pair#*=}" \
	    "^ +${pair%%=*} +${pair#*=} +[^ ]" "$WORK/help"
done
# and every variable the library itself knows about
for var in $(grep -ao 'MUTEXSTAT_[A-Z_]*' "$MUTEXSTAT_LIB" | sort -u); do
	expect_grep "--help lists $var, named in the library" "^ +$var " "$WORK/help"
done
expect_grep "--help names MUTEXSTAT_LIB" "^ +MUTEXSTAT_LIB " "$WORK/help"
"$MS" -h >"$WORK/h" 2>&1
expect_eq "-h is --help" "$(cmp -s "$WORK/h" "$WORK/help" && echo same)" same

version=$(sed -n 's/^VERSION = //p' "$top_builddir/Makefile")
launch "$WORK/out" "$WORK/err" --version
expect_eq "--version exit status" "$rc" 0
expect_eq "--version" "$(cat "$WORK/out")" "mutexstat $version"

# ---- running a program ----------------------------------------------------

"$CONTENTION" 2 1000 >"$WORK/bare.out"
launch "$WORK/out" "$WORK/err" -o "$WORK/r.txt" "$CONTENTION" 2 1000
expect_eq "contention under the launcher: exit status" "$rc" 0
expect_eq "contention under the launcher: stdout as bare" \
    "$(cat "$WORK/out")" "$(cat "$WORK/bare.out")"
expect_eq "contention under the launcher: nothing on stderr" "$(cat "$WORK/err")" ""
expect_grep "report file's first line" \
    '^mutexstat: contention \(pid [0-9]+\) ran [^:]+: 3 threads used mutexes, 2 mutexes tracked, 0 untracked$' \
    "$WORK/r.txt"
expect_eq "report file starts with the summary" \
    "$(head -n 1 "$WORK/r.txt" | cut -c1-22)" "mutexstat: contention "

launch "$WORK/out" "$WORK/err" sh -c 'exit 7'
expect_eq "the program's exit status passes through" "$rc" 7
launch "$WORK/out" "$WORK/err" --no-exit-report "$CONTENTION" 0
expect_eq "a failing program's status passes through" "$rc" 2
expect_grep "and its stderr" '^usage: contention' "$WORK/err"

# a #! script runs, and its interpreter (dynamic) has the library; dash
# leaves with _exit, so it writes no report of its own: look at its maps
printf '#!/bin/sh\necho "script $1"\ngrep -c /libmutexstat /proc/$$/maps\n' \
    >"$WORK/script"
chmod +x "$WORK/script"
launch "$WORK/out" "$WORK/err" "$WORK/script" arg
expect_eq "a #! script runs" "$rc $(head -n 1 "$WORK/out")" "0 script arg"
expect_no_grep "a #! script's interpreter has the library" '^0$' "$WORK/out"

# a program found in PATH
launch "$WORK/out" "$WORK/err" --no-exit-report printenv MUTEXSTAT_EXIT_REPORT
expect_eq "a program from PATH runs" "$rc $(cat "$WORK/out")" "0 0"

# options after the program, or after --, are the program's
launch "$WORK/out" "$WORK/err" --no-exit-report sh -c 'echo "$@"' sh --top 1 -h
expect_eq "options after the program are its own" "$(cat "$WORK/out")" "--top 1 -h"
launch "$WORK/out" "$WORK/err" --no-exit-report -- sh -c 'echo ran'
expect_eq "-- ends the options" "$rc $(cat "$WORK/out")" "0 ran"

# ---- options become variables ---------------------------------------------

launch "$WORK/out" "$WORK/err" -o "$WORK/o.txt" --top 3 --sort hold \
    --history 8 --table-size 128 --no-exit-report \
    sh -c 'for v in OUTPUT TOP SORT HISTORY TABLE_SIZE EXIT_REPORT; do
		eval "echo MUTEXSTAT_$v=\${MUTEXSTAT_$v-unset}"; done'
cat >"$WORK/want" <<EOF
MUTEXSTAT_OUTPUT=$WORK/o.txt
MUTEXSTAT_TOP=3
MUTEXSTAT_SORT=hold
MUTEXSTAT_HISTORY=8
MUTEXSTAT_TABLE_SIZE=128
MUTEXSTAT_EXIT_REPORT=0
EOF
expect_eq "options set the variables" "$(tr '\n' ' ' <"$WORK/out")" \
    "$(tr '\n' ' ' <"$WORK/want")"
launch "$WORK/out" "$WORK/err" --output="$WORK/o2.txt" --top=4 --sort=acquired \
    --history=2 --table-size=64 sh -c \
    'echo "$MUTEXSTAT_OUTPUT $MUTEXSTAT_TOP $MUTEXSTAT_SORT $MUTEXSTAT_HISTORY $MUTEXSTAT_TABLE_SIZE"'
expect_eq "--option=value forms" "$(cat "$WORK/out")" "$WORK/o2.txt 4 acquired 2 64"
launch "$WORK/out" "$WORK/err" -o"$WORK/o3.txt" printenv MUTEXSTAT_OUTPUT
expect_eq "-oPATH form" "$(cat "$WORK/out")" "$WORK/o3.txt"
(cd "$WORK" && "$MS" -o rel.txt printenv MUTEXSTAT_OUTPUT >"$WORK/out" 2>&1)
expect_eq "a relative --output is made absolute" "$(cat "$WORK/out")" "$WORK/rel.txt"
launch "$WORK/out" "$WORK/err" --no-follow --no-exit-report printenv MUTEXSTAT_FOLLOW
expect_eq "--no-follow sets MUTEXSTAT_FOLLOW=0" "$(cat "$WORK/out")" 0
# the shell has the library; the commands it starts do not
launch "$WORK/out" "$WORK/err" --no-follow --no-exit-report sh -c \
    'grep -q /libmutexstat /proc/$$/maps && echo loaded; printenv LD_PRELOAD || echo unset'
# (a sanitized build's launcher preloads the ASan runtime too: that stays)
expect_eq "--no-follow: the program has the library, its children not even in LD_PRELOAD" \
    "$(tr '\n' ' ' <"$WORK/out")" "loaded ${SAN_PRELOAD:-unset} "
MUTEXSTAT_TOP=5 "$MS" --no-exit-report printenv MUTEXSTAT_TOP >"$WORK/out" 2>&1
expect_eq "variables not set by an option pass through" "$(cat "$WORK/out")" 5

# and the library acts on them
launch "$WORK/out" "$WORK/err" --top 1 -o "$WORK/top1.txt" "$CONTENTION" 2 1000
expect_grep "--top 1: one row" '^Top 1 mutex by wait:$' "$WORK/top1.txt"
launch "$WORK/out" "$WORK/err" --sort acquired -o "$WORK/acq.txt" "$CONTENTION" 2 1000
expect_grep "--sort acquired" '^Top 2 mutexes by acquired:$' "$WORK/acq.txt"
expect_eq "--sort acquired: the 2000-lock mutex first" \
    "$(awk '/^Top /{getline; getline; print $3; exit}' "$WORK/acq.txt")" 2000
launch "$WORK/out" "$WORK/err" --history 2 -o "$WORK/h2.txt" "$CONTENTION" 2 1000
expect_eq "--history 2: two recent operations" "$(awk '
	/recent operations/ { getline; on = 1; next }
	on && /^$/ { exit }
	on { n++ }
	END { print n + 0 }' "$WORK/h2.txt")" 2
launch "$WORK/out" "$WORK/err" --no-exit-report -o "$WORK/none.txt" "$CONTENTION" 2 1000
expect_eq "--no-exit-report: no report" \
    "$rc $(cat "$WORK/err")$(test -e "$WORK/none.txt" && echo file)" "0 "
# the run's directory, made for its processes' reports, goes again when
# none came -- with no exit report too (it stayed, empty), and with no
# summary of reports nobody asked for
mkdir "$WORK/tmp"
TMPDIR=$WORK/tmp "$MS" --no-exit-report "$CONTENTION" 2 1000 >"$WORK/out" 2>"$WORK/err" || rc=$?
expect_eq "--no-exit-report: nothing said, no directory left" \
	"$rc $(cat "$WORK/err") $(ls -A "$WORK/tmp")" "0  "
TMPDIR=$WORK/tmp "$MS" --no-exit-report sh -c '"$1" 2 1000; "$1" 2 1000; :' sh "$CONTENTION" \
	>"$WORK/out" 2>"$WORK/err" || rc=$?
expect_eq "--no-exit-report, three processes: nothing said, no directory left" \
	"$rc $(cat "$WORK/err") $(ls -A "$WORK/tmp")" "0  "

# ---- bad command lines: status 2, program not run -------------------------

expect_refused "unknown option" "unknown option '--frobnicate'" \
    --frobnicate "$CONTENTION"
expect_refused "no program" "no program to run"
# what is wrong, in words, and no advice to do what the user just did
kept_lib=$MUTEXSTAT_LIB
MUTEXSTAT_LIB="$WORK/no-lib.so"
expect_refused "MUTEXSTAT_LIB, no such file" \
    "MUTEXSTAT_LIB '$WORK/no-lib.so': no such file\$" "$CONTENTION"
MUTEXSTAT_LIB=$kept_lib
expect_refused "--suppressions, a directory" "--suppressions '$WORK': a directory, not a file\$" \
    --suppressions "$WORK" "$CONTENTION"
: >"$WORK/a-file"
expect_refused "--run-dir, a file" "--run-dir '$WORK/a-file': not a directory\$" \
    --run-dir "$WORK/a-file" "$CONTENTION"
# a report file in a directory that is not there: every process of a run
# wrote its report into its own stderr instead
expect_refused "--output in no directory" "--output '$WORK/nodir/r.txt': no directory $WORK/nodir" \
    -o "$WORK/nodir/r.txt" echo ran
expect_refused "--top without a value" "--top needs a value" --top
expect_refused "--top abc" "--top 'abc' is not a number from 1 to 100000" \
    --top abc echo ran
expect_refused "--top 0" "--top '0' is not a number" --top 0 echo ran
expect_refused "--top too large" "--top '100001' is not a number" \
    --top 100001 echo ran
expect_refused "--history 1025" "--history '1025' is not a number from 1 to 1024" \
    --history 1025 echo ran
expect_refused "--table-size 63" "--table-size '63' is not a number from 64" \
    --table-size 63 echo ran
expect_refused "--table-size huge" "--table-size '99999999999999999999'" \
    --table-size 99999999999999999999 echo ran
expect_refused "--sort unknown" "--sort 'fastest' is not one of wait," \
    --sort fastest echo ran
expect_refused "--version=1" "--version takes no value" --version=1 echo ran

# ---- where the library comes from -----------------------------------------

LD_PRELOAD=libm.so.6 "$MS" --no-exit-report cat /proc/self/maps \
    >"$WORK/maps" 2>"$WORK/err"
expect_grep "the library is mapped" '/libmutexstat\.so' "$WORK/maps"
expect_grep "an existing LD_PRELOAD entry is kept and mapped" '/libm\.so\.6$' "$WORK/maps"
# (a sanitized build's launcher puts the ASan runtime in front of it)
san=$SAN_FIRST
LD_PRELOAD=libm.so.6 "$MS" --no-exit-report printenv LD_PRELOAD >"$WORK/out" 2>&1
expect_eq "the library goes first in LD_PRELOAD" "$(cat "$WORK/out")" \
    "$san$MUTEXSTAT_LIB:libm.so.6"

built_lib="$(cd "$top_builddir/lib/.libs" && pwd)/libmutexstat.so"
env -u MUTEXSTAT_LIB "$MS" --no-exit-report printenv LD_PRELOAD >"$WORK/out" 2>&1
expect_eq "without MUTEXSTAT_LIB, the build tree's library" "$(cat "$WORK/out")" "$san$built_lib"
cp "$MUTEXSTAT_LIB" "$WORK/copy.so"
(cd "$WORK" && "$MS" --lib copy.so --no-exit-report printenv LD_PRELOAD) >"$WORK/out" 2>&1
expect_eq "--lib, made absolute" "$(cat "$WORK/out")" "$san$WORK/copy.so"
expect_refused "a missing --lib" "--lib '$WORK/nothere.so': no such file\$" \
    --lib "$WORK/nothere.so" echo ran
expect_refused "a --lib that is not ELF" "is not an ELF shared library" \
    --lib "$WORK/script" echo ran
# installed (not in a build tree): @libdir@/libmutexstat.so.0
mkdir "$WORK/bin"
cp "$MS" "$WORK/bin/mutexstat"
env -u MUTEXSTAT_LIB "$WORK/bin/mutexstat" --no-exit-report echo ran \
    >"$WORK/out" 2>"$WORK/err" && rc=0 || rc=$?
if [ "$rc" -eq 0 ]; then
	expect_eq "installed: runs with the installed library" "$(cat "$WORK/out")" ran
else
	expect_eq "installed, no library there: exit status" "$rc" 2
	expect_grep "installed: looks in libdir" "cannot find the library '/.*/libmutexstat\.so\.0'" \
	    "$WORK/err"
fi

# ---- programs the loader would not preload into -------------------------

expect_refused "a missing program" "no-such-program-here: command not found" \
    no-such-program-here
expect_refused "a missing path" "$WORK/missing: no such file" "$WORK/missing"
expect_refused "a directory" "is a directory" "$WORK"
printf 'echo ran\n' >"$WORK/noexec"
expect_refused "a file that is not executable" "is not executable" "$WORK/noexec"

printf '#include <stdio.h>\nint main(void) { puts("ran"); return 0; }\n' >"$WORK/tiny.c"
if "$CC" -o "$WORK/tiny" "$WORK/tiny.c"; then
	cp "$WORK/tiny" "$WORK/setuid"
	chmod u+s "$WORK/setuid"
	expect_refused "a setuid program" "setuid or setgid" "$WORK/setuid"
	cp "$WORK/tiny" "$WORK/setgid"
	chmod g+s "$WORK/setgid"
	expect_refused "a setgid program" "setuid or setgid" "$WORK/setgid"
	launch "$WORK/out" "$WORK/err" --no-exit-report "$WORK/tiny"
	expect_eq "the same program without the bit runs" "$rc $(cat "$WORK/out")" "0 ran"
else
	fail "cannot compile a test program with $CC"
fi
if "$CC" -static -o "$WORK/static" "$WORK/tiny.c" 2>"$WORK/cc.err"; then
	expect_refused "a static program" "statically linked" "$WORK/static"
else
	echo "skip: $CC -static does not work here (no libc.a?)"
fi
if "$CC" -static-pie -o "$WORK/static-pie" "$WORK/tiny.c" 2>"$WORK/cc.err"; then
	expect_refused "a static-pie program" "statically linked" "$WORK/static-pie"
else
	echo "skip: $CC -static-pie does not work here"
fi

finish
