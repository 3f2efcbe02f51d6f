# setproctitle.sh - a program that writes its process title over argv[] and
# its environment strings (as redis, nginx and postgres do) gets its report
# where MUTEXSTAT_OUTPUT said -- the path used to be read from the block
# the title overwrote at exit, and the report went to stderr with "cannot
# write MUTEXSTAT_OUTPUT ''" -- and its own code is named after its file,
# not after the title (dladdr names the program by argv[0] as it reads now).
. "$top_srcdir/tests/lib.sh"
P=$top_builddir/tests/setproctitle

bare=$("$P" 2>&1)
expect_eq "without the library" "$bare" "title set: title: serving 127.0.0.1:6379"
run_with "$WORK/out" "$WORK/err" "$P"
expect_eq "exit status" "$?" 0
expect_eq "output" "$(cat "$WORK/out")" "$bare"
expect_eq "nothing on stderr" "$(cat "$WORK/err")" ""
expect_grep "the report is in MUTEXSTAT_OUTPUT's file" \
	'^mutexstat: setproctitle \(pid [0-9]+\) ran .*: 1 thread used mutexes,' "$WORK/report"
expect_grep "the program's code is named after its file" \
	'^  first locked at   locker\+0x[0-9a-f]+ \(tests/setproctitle\.c:[0-9]+, setproctitle\)$' \
	"$WORK/report"
expect_no_grep "not after its title" 'title:' "$WORK/report"
finish
