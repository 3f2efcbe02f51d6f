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
expect_grep "unlock by non-owner" '^MISUSE: unlock by a thread that does not hold it: mutex 0x[0-9a-f]+ <held_elsewhere>, 1 time$' "$WORK/report"
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

# ---- both kinds of bad unlock on one mutex: each names its own ----------
# Another thread's unlock (EPERM: not the owner), then the owner's unlock
# once too often (EPERM: not locked): both are unlocks that failed, and
# each MISUSE says where its own was.
CC=${CC:-cc}
cat >"$WORK/twokinds.c" <<'EOF'
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static pthread_mutex_t m;
static void *not_the_owner(void *arg)
{
	printf("other's unlock %d\n", pthread_mutex_unlock(&m));
	fprintf(stderr, "other thread %d\n", gettid());
	return arg;
}
/* usage: twokinds [N [destroy]]: the owner's unlocks of the unlocked
 * mutex (1), then its destroy */
int main(int argc, char **argv)
{
	int again = argc > 1 ? atoi(argv[1]) : 1;
	pthread_mutexattr_t a;
	pthread_t t;
	fprintf(stderr, "main %d\n", gettid());
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&m, &a);
	pthread_mutex_lock(&m);
	pthread_create(&t, NULL, not_the_owner, NULL);
	pthread_join(t, NULL);
	printf("owner's unlock %d\n", pthread_mutex_unlock(&m));
	for (int i = 0; i < again; i++)
		printf("owner's unlock again %d\n", pthread_mutex_unlock(&m));
	if (argc > 2)
		pthread_mutex_destroy(&m);
	return 0;
}
EOF
"$CC" -g $SAN_FLAGS -o "$WORK/twokinds" "$WORK/twokinds.c" -lpthread ||
	fail "cannot build twokinds.c"
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/twokinds.report" "$WORK/twokinds" \
	> "$WORK/twokinds.out" 2>/dev/null
expect_eq "two kinds: glibc's answers" "$(cat "$WORK/twokinds.out")" \
	"$(printf "other's unlock 1\nowner's unlock 0\nowner's unlock again 1")"
expect_eq "two kinds: the unlock by another thread, where it was" \
	"$(grep -A2 '^MISUSE: unlock by a thread that does not hold it' "$WORK/twokinds.report" | tail -1 |
	   sed 's/+0x.*//; s/^ *//')" not_the_owner
expect_eq "two kinds: the unlock of the unlocked mutex, where it was" \
	"$(grep -A2 '^MISUSE: unlock of a mutex that is not locked' "$WORK/twokinds.report" | tail -1 |
	   sed 's/+0x.*//; s/^ *//')" main

# The unlock by another thread, once the owner's 20 unlocks of the
# unlocked mutex pushed it out of the side ring (every failure's last 8):
# its "last by" named the owner's newest, a misuse of the other kind, and
# its rule and JSON followed; so did the site line once the mutex ended.
for ended in "" destroy; do
	what="two kinds, pushed out${ended:+, ended}"
	env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/evict" MUTEXSTAT_FORMAT=text,json \
		"$WORK/twokinds" 20 $ended > "$WORK/evict.out" 2> "$WORK/evict.err"
	other=$(sed -n 's/^other thread //p' "$WORK/evict.err")
	owner=$(sed -n 's/^main //p' "$WORK/evict.err")
	expect_eq "$what: the other thread's unlock, by whom and where" \
		"$(grep -A3 '^MISUSE: unlock by a thread that does not hold it' "$WORK/evict.txt" |
		   sed -n '2,4p' | sed 's/+0x.*//; s/^ *//; s/, glibc returned.*//' |
		   sed 's/ (a line of.*//' | paste -sd';' -)" \
		"last by thread $other;not_the_owner;to suppress it: misuse:^not_the_owner\$"
	expect_eq "$what: the owner's, where" \
		"$(grep -A2 '^MISUSE: unlock of a mutex that is not locked' "$WORK/evict.txt" |
		   sed -n 3p | sed 's/+0x.*//; s/^ *//')" main
	if command -v jq >/dev/null 2>&1; then
		expect_eq "$what: JSON, the same" \
			"$(jq -r '.findings[] | select(.kind == "misuse") |
				"\(.what) \(.count) \(.last.thread) \(.last.at[0].function)"' \
			   "$WORK/evict.json" | sort | paste -sd';' -)" \
			"unlock_not_owner 1 $other not_the_owner;unlock_unlocked 20 $owner main"
	fi
done

# ---- the last misuse: its thread and its stack, of one call ---------------
# main unlocks an unlocked errorcheck mutex, then a thread does: a failure
# moves no mutex's order, so both had one order, and "last by thread" took
# main's entry beside the thread's stack.
cat >"$WORK/last_misuse.c" <<'EOF'
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
static pthread_mutex_t m;
static void *second_unlock(void *arg)
{
	printf("thread %d: unlock %d\n", gettid(), pthread_mutex_unlock(&m));
	return arg;
}
int main(void)
{
	pthread_mutexattr_t a;
	pthread_t t;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&m, &a);
	printf("main %d: unlock %d\n", gettid(), pthread_mutex_unlock(&m));
	pthread_create(&t, NULL, second_unlock, NULL);
	pthread_join(t, NULL);
	return 0;
}
EOF
"$CC" -g -o "$WORK/last_misuse" "$WORK/last_misuse.c" -lpthread || fail "cannot build last_misuse.c"
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/last_misuse.report" "$WORK/last_misuse" \
	> "$WORK/last_misuse.out" 2>&1
second=$(sed -n 's/^thread \([0-9]*\): .*/\1/p' "$WORK/last_misuse.out")
expect_grep "last misuse: counted twice" \
	'^MISUSE: unlock of a mutex that is not locked: mutex 0x[0-9a-f]+ <m>, 2 times$' "$WORK/last_misuse.report"
expect_eq "last misuse: the thread's, with its own stack" \
	"$(grep -A2 '^MISUSE: unlock of a mutex that is not locked' "$WORK/last_misuse.report" | sed -n '2,3p' |
	   sed 's/+0x.*//; s/^ *//; s/, glibc returned.*//' | paste -sd' ' -)" \
	"last by thread $second second_unlock"

# ---- one thread's two misuses in a row: the last is the second ------------
# A thread unlocks a mutex main holds from site_x, then from site_y, with
# nothing between: the two entries share an order (record.c), and the
# JSON's "last" named site_x's caller beside site_y's stack.
cat >"$WORK/two_in_a_row.c" <<'EOF'
#include <pthread.h>
#include <stdio.h>
static pthread_mutex_t m;
static pthread_barrier_t held, done;
__attribute__((noinline)) void site_x(void) { pthread_mutex_unlock(&m); __asm__ volatile(""); }
__attribute__((noinline)) void site_y(void) { pthread_mutex_unlock(&m); __asm__ volatile(""); }
static void *other(void *arg)
{
	pthread_barrier_wait(&held);
	site_x();
	site_y();
	pthread_barrier_wait(&done);
	return arg;
}
int main(void)
{
	pthread_mutexattr_t a;
	pthread_t t;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&m, &a);
	pthread_barrier_init(&held, NULL, 2);
	pthread_barrier_init(&done, NULL, 2);
	pthread_create(&t, NULL, other, NULL);
	pthread_mutex_lock(&m);
	pthread_barrier_wait(&held);
	pthread_barrier_wait(&done);
	pthread_mutex_unlock(&m);
	pthread_join(t, NULL);
	return 0;
}
EOF
"$CC" -g -o "$WORK/two_in_a_row" "$WORK/two_in_a_row.c" -lpthread || fail "cannot build two_in_a_row.c"
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_FORMAT=text,json MUTEXSTAT_OUTPUT="$WORK/two_in_a_row" \
	"$WORK/two_in_a_row" > "$WORK/two_in_a_row.out" 2>&1
expect_eq "two in a row: the last misuse's caller and stack are both site_y's (JSON)" \
	"$(jq -r '.findings[] | select(.kind == "misuse") | "\(.count) \(.last.caller.function) \(.last.at[0].function)"' \
		"$WORK/two_in_a_row.json")" "2 site_y site_y"

# ---- misuse of mutexes that ended: where it was ----------------------------
# A mutex destroyed while locked, then unlocked and destroyed for good; an
# errorcheck mutex on the heap unlocked unlocked, never locked, destroyed
# and freed.  Their MISUSE lines are by first-lock site; they said only
# that site ("first locked at ?" for the one never locked, with no rule to
# suppress it), not where the misuse was.
cat >"$WORK/ended_misuse.c" <<'EOF'
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
static void destroy_held(void)
{
	pthread_mutex_t m;
	pthread_mutex_init(&m, NULL);
	pthread_mutex_lock(&m);
	printf("destroy while locked %d\n", pthread_mutex_destroy(&m)); /* DESTROY_HELD */
	pthread_mutex_unlock(&m);
	pthread_mutex_destroy(&m);
}
static void unlock_never_locked(void)
{
	pthread_mutexattr_t a;
	pthread_mutex_t *m = malloc(sizeof *m);
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(m, &a);
	printf("unlock never locked %d\n", pthread_mutex_unlock(m)); /* UNLOCK_NEVER_LOCKED */
	pthread_mutex_destroy(m);
	free(m);
}
int main(void)
{
	destroy_held();
	unlock_never_locked();
	return 0;
}
EOF
"$CC" -g -O0 -o "$WORK/ended_misuse" "$WORK/ended_misuse.c" -lpthread || fail "cannot build ended_misuse.c"
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/ended_misuse" MUTEXSTAT_FORMAT=text,json \
	"$WORK/ended_misuse" > "$WORK/ended_misuse.out" 2>&1
line_in() { grep -n "/\* $1 \*/" "$WORK/ended_misuse.c" | cut -d: -f1; }
expect_grep "ended misuse: destroy of a locked mutex, by its first-lock site" \
	'^MISUSE: destroy of a locked mutex: 1 time on mutexes \(now ended\) first locked at destroy_held' \
	"$WORK/ended_misuse.txt"
expect_eq "ended misuse: ... and where the destroy was" \
	"$(grep -A2 '^MISUSE: destroy of a locked' "$WORK/ended_misuse.txt" | sed -n 3p | sed 's/^ *//; s/+0x[0-9a-f]* (.*ended_misuse\.c:/ /; s/,.*//')" \
	"destroy_held $(line_in DESTROY_HELD)"
expect_grep "ended misuse: the unlock of a mutex never locked" \
	'^MISUSE: unlock of a mutex that is not locked: 1 time on mutexes \(now ended\) never locked$' \
	"$WORK/ended_misuse.txt"
expect_eq "ended misuse: ... where it was, and a rule to leave it out" \
	"$(awk '/^MISUSE: unlock of a mutex that is not locked/ { on = 1; n = 0 } on && /^$/ { exit }
		on && (++n == 3 || /to suppress it/) { print }' "$WORK/ended_misuse.txt" |
	   sed 's/^ *//; s/+0x[0-9a-f]* (.*ended_misuse\.c:/ /; s/,.*//; s/ (a line of.*//' | paste -sd';' -)" \
	"unlock_never_locked $(line_in UNLOCK_NEVER_LOCKED);to suppress it: misuse:^unlock_never_locked\$"
if command -v jq >/dev/null 2>&1; then
	expect_eq "ended misuse: JSON, the same" \
		"$(jq -r '.findings[] | select(.kind == "misuse") | "\(.what) \(.ended_first_locked_at.function) \(.last.result) \(.last.at[0].function) \(.last.at[0].line)"' \
		   "$WORK/ended_misuse.json" | sort | paste -sd';' -)" \
		"destroy_locked destroy_held EBUSY destroy_held $(line_in DESTROY_HELD);unlock_unlocked null EPERM unlock_never_locked $(line_in UNLOCK_NEVER_LOCKED)"
fi

# ---- a robust mutex made consistent by a thread that does not hold it -----
# Its owner died; main locked it (EOWNERDEAD: main holds it).  Another
# thread calls pthread_mutex_consistent, which glibc lets through and which
# writes that thread into the owner field; glibc's unlock of a robust mutex
# goes by the lock word, which still names main: EPERM for the other thread,
# 0 for main.  The report took the owner field's word: the refused unlock
# read "ok" and main's real one a MISUSE.
cat >"$WORK/robust_other.c" <<'EOF'
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
static pthread_mutex_t m;
static void *dies_holding(void *arg)
{
	pthread_mutex_lock(&m);
	return arg;
}
static void *not_the_owner(void *arg)
{
	printf("other's consistent %d\n", pthread_mutex_consistent(&m));
	printf("other's unlock %d\n", pthread_mutex_unlock(&m));
	return arg;
}
int main(int argc, char **argv)
{
	pthread_mutexattr_t a;
	pthread_t t;
	(void)argv;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	if (argc > 1) /* "pi" */
		pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT);
	pthread_mutex_init(&m, &a);
	pthread_create(&t, NULL, dies_holding, NULL);
	pthread_join(t, NULL);
	printf("main's lock %d\n", pthread_mutex_lock(&m));
	pthread_create(&t, NULL, not_the_owner, NULL);
	pthread_join(t, NULL);
	printf("main's unlock %d\n", pthread_mutex_unlock(&m));
	return 0;
}
EOF
"$CC" -g -o "$WORK/robust_other" "$WORK/robust_other.c" -lpthread || fail "cannot build robust_other.c"
# (and a priority-inheriting one, whose unlock goes by the lock word too)
for pi in "" pi; do
	what="robust${pi:+ $pi}, another's consistent"
	"$WORK/robust_other" $pi >"$WORK/robust_other.bare" 2>&1
	env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/robust_other.report" "$WORK/robust_other" $pi \
		> "$WORK/robust_other.out" 2>&1
	expect_eq "$what: glibc's answers, as bare" "$(cat "$WORK/robust_other.out")" \
		"$(cat "$WORK/robust_other.bare")"
	expect_eq "$what: glibc refused the other's unlock" \
		"$(sed -n 's/^other.s unlock //p' "$WORK/robust_other.out")" 1
	expect_eq "$what: one MISUSE, the other thread's unlock" \
		"$(grep -c '^MISUSE:' "$WORK/robust_other.report") $(grep -A2 '^MISUSE: unlock by a thread that does not hold it' \
		   "$WORK/robust_other.report" | tail -1 | sed 's/+0x.*//; s/^ *//')" "1 not_the_owner"
	expect_grep "$what: its unlock refused in the history" \
		' unlock +EPERM .*not_the_owner ' "$WORK/robust_other.report"
done

# A robust mutex destroyed while another thread holds it (glibc returns 0),
# whose holder's unlock then fails (EINVAL) and who ends still holding it
# in its held set: the MISUSE says it all.  Its exit read "HELD AT THREAD
# EXIT ... mutex 0x0" (the life ended; in JSON "mutex": null).
cat >"$WORK/destroyed_held.c" <<'EOF'
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
static pthread_mutex_t m;
static int locked[2], go[2];
static void *holds(void *arg)
{
	(void)arg;
	char c = 0;
	pthread_mutex_lock(&m);
	if (write(locked[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
		return NULL;
	printf("holder's unlock %d\n", pthread_mutex_unlock(&m));
	return NULL;
}
int main(void)
{
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&m, &a);
	pthread_t t;
	char c = 0;
	if (pipe(locked) != 0 || pipe(go) != 0)
		return 2;
	pthread_create(&t, NULL, holds, NULL);
	if (read(locked[0], &c, 1) != 1)
		return 2;
	printf("destroy %d\n", pthread_mutex_destroy(&m));
	if (write(go[1], &c, 1) != 1)
		return 2;
	pthread_join(t, NULL);
	return 0;
}
EOF
"$CC" -g -o "$WORK/destroyed_held" "$WORK/destroyed_held.c" -lpthread || fail "cannot build destroyed_held.c"
timeout -s KILL 60 "$WORK/destroyed_held" >"$WORK/destroyed_held.bare" 2>&1
timeout -s KILL 60 env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/destroyed_held.report" \
	"$WORK/destroyed_held" \
	>"$WORK/destroyed_held.out" 2>&1
expect_eq "destroyed while held: glibc's answers, as bare" "$(cat "$WORK/destroyed_held.out")" \
	"$(cat "$WORK/destroyed_held.bare")"
expect_eq "destroyed while held: one MISUSE, no HELD AT THREAD EXIT" \
	"$(grep -c '^MISUSE:' "$WORK/destroyed_held.report") $(grep -c '^HELD AT THREAD EXIT' "$WORK/destroyed_held.report")" \
	"1 0"
expect_no_grep "destroyed while held: no lock 0x0" ' 0x0 ' "$WORK/destroyed_held.report"
finish
