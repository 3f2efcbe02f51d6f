#!/bin/sh
# c11_threads.sh - C11 threads (mtx_*, cnd_*): every call answers as
# without the library, and the program's mutexes are recorded (glibc calls
# its pthread functions inside libc, where they went past the library:
# the report said the program locked no mutexes).
. "$top_srcdir/tests/lib.sh"
P=$top_builddir/tests/c11_threads
SRC=$top_srcdir/tests/c11_threads.c
line_of() { grep -n "$1" "$SRC" | cut -d: -f1; }

"$P" answers >"$WORK/bare" 2>&1
run_with "$WORK/out" "$WORK/err" "$P" answers
expect_eq "answers: every call's thrd_* as without the library" "$(cat "$WORK/out")" "$(cat "$WORK/bare")"
expect_grep "answers: the timed lock of the held mutex timed out" \
	'^other thread: timedlock, 50 ms +thrd_timedout$' "$WORK/out"
expect_grep "answers: the unlock of an unlocked recursive mutex is MISUSE" \
	'^MISUSE: unlock of a mutex that is not locked: 1 time' "$WORK/report"
expect_no_grep "answers: no other MISUSE (each mutex is unlocked before its destroy)" \
	'^MISUSE: destroy' "$WORK/report"

run_with "$WORK/out" "$WORK/err" "$P" use
expect_eq "use: the program's output" "$(head -n 1 "$WORK/out")" "counter 4000, items 100"
m=$(awk '/^counter_lock / { print $2 }' "$WORK/out")
expect_grep "use: 4000 acquisitions of the counter's mtx_t, first locked at its line" \
	"^ +[0-9]+ $(top_label_re "$WORK/report" "$m") +4000 .* count \(?c11_threads\.c:$(line_of C11_COUNTS)\)?$" "$WORK/report"
expect_grep "use: the two orders of a and b are a POTENTIAL DEADLOCK" \
	'^POTENTIAL DEADLOCK: 2 mutexes' "$WORK/report"
expect_grep "use: ... taken at the program's lines" \
	"use\+0x[0-9a-f]+ \(tests/c11_threads\.c:$(line_of C11_B_THEN_A)" "$WORK/report"
waits=$(awk '/condition waits/ { for (i = 1; i <= NF; i++) if ($i == "condition" && $(i + 1) ~ /^waits/) print $(i + 2) }' \
	"$WORK/report" | tr -d ';' | sort -n | tail -n 1)
[ "${waits:-0}" -ge 1 ] && pass "use: the consumer's cnd_waits are counted ($waits)" ||
	fail "use: no condition waits counted"
expect_eq "use: nothing on stderr" "$(cat "$WORK/err")" ""

# ---- a library of the program that defines the C11 names itself -----------
# (a threads shim such as tinycthread, on mutexes of its own, no pthread
# mutex): its functions answer, as without the library -- ours, taking its
# mutex for glibc's, would read and write it as a pthread mutex.
CC=${CC:-cc}
cat >"$WORK/shim.c" <<'EOC'
struct shim_mtx { int magic, locked, locks; };
int mtx_init(struct shim_mtx *m, int type) { (void)type; m->magic = 0x5117; m->locked = m->locks = 0; return 0; }
int mtx_lock(struct shim_mtx *m) { if (m->magic != 0x5117 || m->locked) return 2; m->locked = 1; m->locks++; return 0; }
int mtx_trylock(struct shim_mtx *m) { return m->locked ? 1 : mtx_lock(m); }
int mtx_timedlock(struct shim_mtx *m, const void *t) { (void)t; return mtx_lock(m); }
int mtx_unlock(struct shim_mtx *m) { if (!m->locked) return 2; m->locked = 0; return 0; }
void mtx_destroy(struct shim_mtx *m) { m->magic = 0; }
int cnd_wait(void *c, struct shim_mtx *m) { (void)c; (void)m; return 0; }
int cnd_timedwait(void *c, struct shim_mtx *m, const void *t) { (void)c; (void)m; (void)t; return 4; }
EOC
cat >"$WORK/useshim.c" <<'EOC'
#include <stdio.h>
struct shim_mtx { int magic, locked, locks; };
int mtx_init(struct shim_mtx *, int); int mtx_lock(struct shim_mtx *);
int mtx_trylock(struct shim_mtx *); int mtx_unlock(struct shim_mtx *);
void mtx_destroy(struct shim_mtx *); int cnd_timedwait(void *, struct shim_mtx *, const void *);
int main(void)
{
	struct shim_mtx m;
	int a = mtx_init(&m, 0), b = mtx_lock(&m), c = mtx_trylock(&m), d = mtx_unlock(&m);
	int e = mtx_unlock(&m), f = cnd_timedwait(NULL, &m, NULL);
	printf("%d %d %d %d %d %d, %d locks, magic %x\n", a, b, c, d, e, f, m.locks, m.magic);
	mtx_destroy(&m);
	return 0;
}
EOC
if "$CC" -shared -fPIC -o "$WORK/libshim.so" "$WORK/shim.c" &&
   "$CC" -o "$WORK/useshim" "$WORK/useshim.c" -L"$WORK" -lshim -Wl,-rpath,"$WORK"; then
	"$WORK/useshim" >"$WORK/shim.bare" 2>&1
	run_with "$WORK/shim.out" "$WORK/shim.err" "$WORK/useshim"
	expect_eq "a C11 shim library: its own functions answer, as without the library" \
		"$(cat "$WORK/shim.out")" "$(cat "$WORK/shim.bare")"
	expect_eq "a C11 shim library: what they answer" "$(cat "$WORK/shim.bare")" \
		"0 0 1 0 2 4, 1 locks, magic 5117"
	expect_eq "a C11 shim library: nothing on stderr" "$(cat "$WORK/shim.err")" ""
else
	fail "cannot build the C11 shim library with $CC"
fi
finish
