# own_malloc.sh - a program with its own malloc, which takes a pthread
# mutex, calls it before the library's constructor has run (tests/
# own_malloc.c): the library starts inside that first lock call, and its
# start mallocs.  It must start before glibc's try takes the mutex, not
# after: firefox hung so at start-up, its one thread waiting for itself.
. "$top_srcdir/tests/lib.sh"
T=$top_builddir/tests/own_malloc
skip_if_sanitized "ASan's malloc and a program's own cannot both be malloc"

bare=$("$T" 2>&1)
rc=$?
expect_eq "without the library" "$rc $bare" "0 own malloc: ok"
rc=0
timeout -s KILL 60 env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/report" "$T" \
	>"$WORK/out" 2>&1 || rc=$?
expect_eq "with the library: no hang, the same output and status" "$rc $(cat "$WORK/out")" "0 $bare"
expect_grep "the allocator's mutex in the report" \
	'^  1 (0x[0-9a-f]+|<[^>]+>) +[0-9]+ +0 .* take \(own_malloc\.c:' "$WORK/report"
finish
