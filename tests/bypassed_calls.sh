# bypassed_calls.sh - mutex calls that reach glibc without passing the
# library (tests/bypass.c): a lock through a handle to libc.so.6 and one
# made by a library opened RTLD_DEEPBIND (tests/bypass_deep.c), each
# unlocked the ordinary way, then locked the ordinary way.  The program's
# answers do not change, the unlock of the hold we did not see is no
# MISUSE, and the mutex is "first locked at" the first lock we saw (it was
# "?" for the rest of its life).
. "$top_srcdir/tests/lib.sh"
skip_if_sanitized "ASan's runtime refuses a dlopen with RTLD_DEEPBIND (google/sanitizers issue 611)"
CC=${CC:-cc}
S=$top_srcdir/tests
if ! "$CC" -g -O0 -shared -fPIC -o "$WORK/deep.so" "$S/bypass_deep.c" -lpthread 2>"$WORK/cc.err" ||
   ! "$CC" -g -O0 -o "$WORK/bypass" "$S/bypass.c" -lpthread -ldl 2>>"$WORK/cc.err"; then
	fail "cannot compile the test program with $CC"
	sed 's/^/  | /' "$WORK/cc.err" >&2
	finish
fi
line_of() { # the line of bypass.c holding the marker
	grep -n -- "$1" "$S/bypass.c" | cut -d: -f1
}
"$WORK/bypass" "$WORK/deep.so" >"$WORK/want" 2>&1
expect_eq "without the library: every call succeeds" "$(head -1 "$WORK/want")" "0 0 0 0 0 0 0 0"
run_with "$WORK/out" "$WORK/err" "$WORK/bypass" "$WORK/deep.so"
expect_eq "status" "$?" 0
expect_eq "the program's answers" "$(head -1 "$WORK/out")" "$(head -1 "$WORK/want")"
expect_no_grep "no MISUSE for the unlock of a hold we did not see" '^MISUSE' "$WORK/report"
for name in by_handle by_deep; do
	addr=$(sed -n "s/.*$name \(0x[0-9a-f]*\).*/\1/p" "$WORK/out")
	expect_grep "$name: first locked at the first lock seen" \
		"^ +[0-9]+ $(top_label_re "$WORK/report" "$addr") .* main \(bypass\.c:$(line_of "first seen: $name")\)$" "$WORK/report"
done
finish
