# misuse.sh - the program's own misuse passes through to glibc unchanged,
# is counted, and is listed under MISUSE with where it happened.
. "$top_srcdir/tests/lib.sh"
B=$top_builddir
"$B/examples/misuse" > "$WORK/bare" 2>&1; bare_rc=$?
run_with "$WORK/out" "$WORK/err" "$B/examples/misuse"; rc=$?
expect_eq "exit status unchanged" "$rc" "$bare_rc"
if cmp -s "$WORK/bare" "$WORK/out"; then pass "glibc's answers unchanged"; else
	fail "answers differ"; diff "$WORK/bare" "$WORK/out" >&2; fi
expect_grep "glibc answers EPERM to a non-owner" "does not hold it +-> EPERM" "$WORK/out"
expect_grep "unlock of unlocked" '^MISUSE: unlock of a mutex that is not locked: mutex 0x[0-9a-f]+, 1 time$' "$WORK/report"
expect_grep "unlock by non-owner" '^MISUSE: unlock by a thread that does not hold it: mutex 0x[0-9a-f]+, 1 time$' "$WORK/report"
expect_grep "destroy of locked" '^MISUSE: destroy of a locked mutex: mutex 0x[0-9a-f]+, 1 time$' "$WORK/report"
expect_grep "use of destroyed" '^MISUSE: use of a destroyed mutex: mutex 0x[0-9a-f]+, 1 time$' "$WORK/report"
expect_grep "the EPERM unlock: by whom, glibc's answer" "last by thread [0-9]+, glibc returned EPERM, at:$" "$WORK/report"
expect_eq "the EPERM unlock: where, as a stack" \
	"$(grep -A1 'glibc returned EPERM, at:' "$WORK/report" | tail -1 | grep -Ec '^    main\+0x[0-9a-f]+ \(.*misuse\.c:[0-9]+, misuse\)$')" 1
expect_grep "where: the EBUSY destroy" "glibc returned EBUSY" "$WORK/report"
expect_grep "where: the EINVAL lock" "glibc returned EINVAL" "$WORK/report"
# glibc's kind field reads -1 once destroyed: a mutex first seen then has
# no kind to tell (it read "adaptive robust prio-inherit prio-protect")
expect_grep "the destroyed mutex's kind" '^#[0-9]+ mutex 0x[0-9a-f]+ \(destroyed\)$' "$WORK/report"
expect_eq "four MISUSE findings" "$(grep -c '^MISUSE:' "$WORK/report")" 4
finish
