# api_stress.sh - the public API under stress: mutexstat_reset() while
# threads lock hard, mutexstat_dump() from a signal handler that interrupts
# a dump, names that are not one printable line, dumps to bad descriptors.
. "$top_srcdir/tests/lib.sh"
B=$top_builddir

# Ten resets while four threads lock one mutex: after each, the mutex's
# acquisitions are those since that reset, never the run's (the holder's
# increment used to bring the old count back).
MUTEXSTAT_EXIT_REPORT=0 run_with "$WORK/out" "$WORK/err" "$B/tests/api_stress" reset
expect_eq "reset: ten dumps" "$(grep -c '^Top 1 mutex by wait' "$WORK/out")" 10
expect_eq "reset: each dump's acquisitions are within its bounds" "$(awk '
	/^bounds / { lo = $2; hi = $3; next }
	/^  1 (0x[0-9a-f]+|<[^>]+>) / { n++; if ($3 >= lo && $3 <= hi) ok++; else print "got " $3 " want " lo "-" hi > "/dev/stderr" }
	END { print ok + 0 "/" n + 0 }' "$WORK/out")" 10/10

# A reset while a thread waits for the mutex: that wait is still under
# way, and a second thread's wait after the reset makes two at once; when
# both have got it and let go, none waits now (the reset zeroed the count
# of waits under way, and the first waiter's end took it below zero: the
# report read "(4294967295 now)").
MUTEXSTAT_EXIT_REPORT=0 run_with "$WORK/out" "$WORK/err" timeout 60 "$B/tests/api_stress" resetwait
expect_eq "resetwait: after both waits, two at once and none now" \
	"$(sed -n '/^none waits$/,$s/^  trylock \(.*\); condition waits.*/\1/p' "$WORK/out")" \
	"0 ok, 0 busy; timed out 0; most waiters at once 2"

# A signal handler's mutexstat_dump, interrupting a dump on its thread,
# fails with EDEADLK instead of spinning for ever on the report's lock.
MUTEXSTAT_EXIT_REPORT=0 run_with "$WORK/out" "$WORK/err" timeout 60 "$B/tests/api_stress" nested
expect_grep "nested: every handler call returned" '^nested: 10 calls, ' "$WORK/out"

# So do mutexstat_reset() and _name() from a handler that interrupts the
# table's update on its thread (making or destroying a mutex): before, reset
# spun for ever on the update's lock, and name failed leaving errno as it was.
MUTEXSTAT_EXIT_REPORT=0 run_with "$WORK/out" "$WORK/err" timeout 120 "$B/tests/api_stress" updates
expect_eq "updates: every handler call returned; a failed one set EDEADLK" "$(cat "$WORK/out")" \
	"updates: 0 failed without EDEADLK"

# A dump to a bad descriptor fails as write(2) would: -1, EBADF -- and so
# does one to a descriptor the library keeps (its copy of stderr), which the
# program without it would not have open.
MUTEXSTAT_EXIT_REPORT=0 run_with "$WORK/out" "$WORK/err" "$B/tests/api_stress" badfd
expect_eq "badfd: -1, an unopened and a read-only descriptor" "$(cat "$WORK/out")" "dump(-1) -1 EBADF
dump(999) -1 EBADF
dump(read-only) -1 EBADF
dump(the library's 1 or more) -1 EBADF each"
MUTEXSTAT_EXIT_REPORT=0 run_with "$WORK/out" "$WORK/err" "$B/tests/api_stress" ownfd
expect_eq "ownfd: the program's own copy of stderr where the library's was: dumped to" \
	"$(cat "$WORK/out")" "dump(the program's own at 1000) 0 0"
expect_grep "ownfd: ... the report in its stderr" '^mutexstat: api_stress \(pid ' "$WORK/err"

# Names: one printable line each.
MUTEXSTAT_TOP=5 MUTEXSTAT_SORT=acquired MUTEXSTAT_FORMAT=text,json MUTEXSTAT_OUTPUT=$WORK/n \
	run_with "$WORK/out" "$WORK/err" "$B/tests/api_stress" names
expect_eq "names: mutexstat_name returned 0" "$(awk '{ s = s $3 } END { print s }' "$WORK/out")" 00000
expect_eq "names: no control character in the report" \
	"$(LC_ALL=C grep -c '[[:cntrl:]]' "$WORK/n.txt")" 0
expect_eq "names: the report is UTF-8" "$(iconv -f UTF-8 -t UTF-8 "$WORK/n.txt" >/dev/null 2>&1; echo $?)" 0
m0=$(awk '/^m0 /{print $2}' "$WORK/out"); m4=$(awk '/^m4 /{print $2}' "$WORK/out")
expect_grep "names: newline and tab shown as ?" '^ +[0-9]+ new\?line\?tab +1 ' "$WORK/n.txt"
expect_grep "names: the detail line" "^#[0-9]+ mutex $m0( <[^>]+>)? \"new\\?line\\?tab\" \(normal, no init seen\)$" "$WORK/n.txt"
expect_grep "names: bytes that are not UTF-8 shown as ?" '^ +[0-9]+ bad \?\? bytes +2 ' "$WORK/n.txt"
expect_grep "names: cut before the character that does not fit, with ..." '^#[0-9]+ mutex 0x[0-9a-f]+( <[^>]+>)? "x{37}\.\.\." ' "$WORK/n.txt"
expect_grep "names: the table cuts before a character, not inside, with ..." '^ +[0-9]+ aé{7}\.\.\. +4 ' "$WORK/n.txt"
expect_grep "names: an empty name shows the address" "^ +[0-9]+ $(top_label_re "$WORK/n.txt" "$m4") +5 " "$WORK/n.txt"
if command -v jq >/dev/null; then
	expect_eq "names: the JSON names" "$(jq -r '[.mutexes[] | .name // "null"] | sort | join("|")' "$WORK/n.json")" \
		"aéééééééééé|bad ?? bytes|new?line?tab|null|$(printf 'x%.0s' $(seq 62))"
fi
finish
