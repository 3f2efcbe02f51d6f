# unloaded_code.sh - a program that dlopens a library whose code locks
# mutexes (tests/unload_lib.c), and dlcloses it (tests/unload.c).  Names
# are read at report time, from the modules mapped then, so the report
# cannot name code that is gone: it says, in its header (text) and in
# "libraries_unloaded" (JSON), how many libraries were unloaded, so that a
# missing name, or one of a library loaded at that place later, is not
# taken for the truth.  The program's output and status do not change;
# a program that unloads nothing gets no such line, even where the
# library opened and gave up a libdw.so.1 or libz of its own.
. "$top_srcdir/tests/lib.sh"
CC=${CC:-cc}
S=$top_srcdir/tests
if ! "$CC" -g -O0 -shared -fPIC -o "$WORK/unload_lib.so" "$S/unload_lib.c" -lpthread 2>"$WORK/cc.err" ||
   ! "$CC" -g -O0 -o "$WORK/unload" "$S/unload.c" -ldl 2>>"$WORK/cc.err"; then
	fail "cannot compile the test program with $CC"
	sed 's/^/  | /' "$WORK/cc.err" >&2
	finish
fi
LIB=$WORK/unload_lib.so
for times in 0 1 3; do
	"$WORK/unload" "$LIB" $times >"$WORK/want" 2>&1
	cp "$WORK/want" "$WORK/want$times"
	run_with "$WORK/out" "$WORK/err" "$WORK/unload" "$LIB" $times
	expect_eq "closed $times times: status" "$?" 0
	expect_eq "closed $times times: the program's output" "$(cat "$WORK/out")" "$(cat "$WORK/want")"
	case $times in
	0) expect_no_grep "kept open: no line about unloaded libraries" 'unloaded' "$WORK/report" ;;
	1) expect_grep "closed once: the header says one library was unloaded" \
		'^  1 library was unloaded during the run \(dlclose\): addresses in its code are shown as addresses,$' \
		"$WORK/report" ;;
	*) expect_grep "closed $times times: the header counts each unload" \
		"^  $times libraries were unloaded during the run \\(dlclose\\): addresses in their code" \
		"$WORK/report" ;;
	esac
done
# Names are kept from one report to the next (a live dump names mostly
# what the last one named), but not across a dlclose: a dump made while
# the library is open names its code; the exit report, after the close,
# must not.
run_with "$WORK/out" "$WORK/err" "$WORK/unload" "$LIB" 1 dump
expect_grep "a dump before the close names the library's code" \
	'^  first locked at   lock_here\+0x[0-9a-f]+ \(tests/unload_lib\.c:[0-9]+, unload_lib\.so\)$' "$WORK/err"
expect_no_grep "the report after the close does not" 'lock_here' "$WORK/report"
# an address in no module, or in what was mapped there since (under ASan,
# the libunwind that the report loads)
expect_grep "... but the address as it is, or in what is mapped there now" \
	'^  first locked at   ([^ ]+\+)?0x[0-9a-f]+$' "$WORK/report"

# The inversion of two of its static mutexes, reported after the close:
# static data unmapped since, not "on the heap or a stack" (the note that
# a C++ object's reused memory may join orders of different objects).
expect_grep "the unloaded library's inversion is reported" '^POTENTIAL DEADLOCK: 2 mutexes' \
	"$WORK/report"
expect_no_grep "... without the note for mutexes on the heap or a stack" 'on the heap or a stack' \
	"$WORK/report"

rm -f "$WORK/report".*
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_FORMAT=text,json MUTEXSTAT_OUTPUT="$WORK/report" \
	"$WORK/unload" "$LIB" 1 >"$WORK/out" 2>"$WORK/err"
expect_grep "JSON: libraries_unloaded 1" '"libraries_unloaded": ?1[,}]' "$WORK/report.json"
expect_grep "JSON's text report: the same line" '^  1 library was unloaded' "$WORK/report.txt"

# The library's own opens are not the program's unloads: a libdw.so.1
# that is no libdw (names then come from dladdr) and libz for the pprof
# file (which libdw would have brought) were dlclose'd after use, and the
# reports of a program that unloads nothing said "1 library was unloaded"
# (JSON, written after the pprof file: 2).
mkdir -p "$WORK/nodw"
echo 'int not_libdw;' >"$WORK/nodw/nodw.c"
if "$CC" -shared -fPIC -Wl,-soname,libdw.so.1 -o "$WORK/nodw/libdw.so.1" "$WORK/nodw/nodw.c" 2>"$WORK/cc.err"; then
	rm -f "$WORK/report".*
	env LD_LIBRARY_PATH="$WORK/nodw" LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_FORMAT=text,pprof,json \
		MUTEXSTAT_OUTPUT="$WORK/report" "$WORK/unload" "$LIB" 0 >"$WORK/out" 2>"$WORK/err"
	expect_eq "no libdw, kept open: the program's output" "$(cat "$WORK/out")" "$(cat "$WORK/want0")"
	expect_no_grep "no libdw: names from dladdr, without source lines" '\.c:[0-9]' "$WORK/report.txt"
	expect_grep "no libdw: the header says so, and why" \
		'^  names: from dladdr \(libdw\.so\.1 has no [a-z_]+\): exported functions and module offsets, no source lines$' \
		"$WORK/report.txt"
	expect_no_grep "no libdw: no line about unloaded libraries" 'unloaded' "$WORK/report.txt"
	expect_grep "no libdw, after the pprof file: JSON libraries_unloaded 0" \
		'"libraries_unloaded": ?0[,}]' "$WORK/report.json"
else
	fail "cannot compile a stand-in libdw.so.1 with $CC"
fi
finish
