# descriptors.sh - the library's own descriptors stay out of the program's
# way (tests/descriptors.c prints what the program sees; each output must be
# the same with and without the library):
#   - the program's first open()s get the numbers they get without it (3,
#     4, 5), also after stack captures started libunwind, and under a
#     limit of 11 descriptors;
#   - a program that closes every descriptor above 2 and makes pipes of its
#     own at those numbers finds in them exactly what it and its fork child
#     wrote: the fork handler closes no descriptor of the program's, and
#     libunwind's memory checks read no byte from them, nor write one.
. "$top_srcdir/tests/lib.sh"
P=$top_builddir/tests/descriptors

for mode in numbers reuse; do
	"$P" "$mode" > "$WORK/$mode.bare" 2>&1
	expect_eq "$mode: without the library" "$?" 0
	# three runs: libunwind's checks come at moments the threads decide
	for run in 1 2 3; do
		rc=0
		timeout -s KILL 60 env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/r.$mode" \
			"$P" "$mode" > "$WORK/$mode.out" 2> "$WORK/$mode.err" || rc=$?
		expect_eq "$mode ($run): exit status" "$rc" 0
		if cmp -s "$WORK/$mode.bare" "$WORK/$mode.out"; then
			pass "$mode ($run): the program sees the same descriptors"
		else
			fail "$mode ($run): the program's output differs:"
			diff "$WORK/$mode.bare" "$WORK/$mode.out" | cat -v | sed 's/^/  | /' >&2
		fi
	done
	expect_grep "$mode: the report was written" '^mutexstat: descriptors \(pid [0-9]+\) ran ' "$WORK/r.$mode"
done
expect_grep "numbers: the program got 3, 4 and 5" '^open: 3$' "$WORK/numbers.bare"

# Under a limit of 11 descriptors there is no room from 10 up: the library's
# go to the highest free numbers below it, and the program's open()s still
# get 3, 4 and 5 (they got 3 and then the numbers above the library's).
(ulimit -n 11 && "$P" numbers) > "$WORK/low.bare" 2>&1
(ulimit -n 11 && env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/r.low" "$P" numbers) \
	> "$WORK/low.out" 2> "$WORK/low.err"
expect_eq "ulimit -n 11: the same numbers as without the library" \
	"$(cat "$WORK/low.out")" "$(cat "$WORK/low.bare")"
expect_grep "ulimit -n 11: the report was written" '^mutexstat: descriptors \(pid [0-9]+\) ran ' "$WORK/r.low"

# Under a limit of 4 there is no descriptor for libunwind's or libdw's file:
# the report says so in the loader's words, not "not found".  (Not with
# ASan, whose runtime needs descriptors of its own.)
if ! sanitized; then
	(ulimit -n 4 && env LD_PRELOAD="$MS_PRELOAD" "$top_builddir/examples/contention" 2 100) \
		> "$WORK/four.out" 2> "$WORK/four.err"
	expect_eq "ulimit -n 4: why there are no call stacks, nor libdw's names" \
		"$(grep -o '(lib[a-z]*\.so\.[0-9]* [^)]*)' "$WORK/four.err")" \
		"(libunwind.so.8 could not be loaded: Too many open files)
(libdw.so.1 could not be loaded: Too many open files)"
fi

# A program that defines close() itself, taking a mutex in it, whose first
# lock of that mutex makes the library's capture use libunwind (whose pipe
# the library moves): the library's close is the system call, not the
# program's, which waited for the mutex its thread was taking (chromium's
# crash handler hung so, every signal blocked).
C=$top_builddir/tests/close_override
rc=0
"$C" >"$WORK/close.bare" 2>&1 || rc=$?
if [ "$rc" = 77 ]; then
	echo "skip: close_override (its assembly stub is x86-64's)"
else
	expect_eq "close override: without the library" "$rc $(cat "$WORK/close.bare")" "0 close_override: done"
	rc=0
	timeout -s KILL 60 env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/r.close" "$C" \
		>"$WORK/close.out" 2>&1 || rc=$?
	expect_eq "close override: with the library, no hang" "$rc $(cat "$WORK/close.out")" \
		"0 close_override: done"
fi
finish
