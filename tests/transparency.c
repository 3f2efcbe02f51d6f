/* transparency.c - proof that mutexstat never changes what a program sees.
 *
 * Calls every function the library wraps (pthread_mutex_lock, trylock,
 * timedlock, clocklock, unlock, init, destroy, pthread_cond_wait,
 * timedwait, clockwait) on every kind of mutex glibc has: normal, default,
 * errorcheck, recursive, adaptive, robust, process-shared, priority-inherit,
 * priority-protect, and the statically initialised ones that never pass
 * through pthread_mutex_init.  Each kind goes through the same scenes:
 * free, held by the caller, held by another thread, contended, condition
 * waits, destroyed and used again; robust kinds also lose their owner
 * (a thread, or a forked child, that exits holding them) and end up not
 * recoverable.  Then: misuse of a normal mutex, init twice, a thread
 * cancelled in a condition wait, a process-shared mutex across fork (the
 * child finds it held; a robust one's owner process dies, before the parent
 * locks it and while the parent waits for it), a fork child unlocking each
 * kind of mutex its thread locked before the fork (the pthread_atfork
 * pattern), a robust priority-protect mutex (glibc refuses it), and a
 * robust priority-inherit mutex whose owner died, locked and waited on
 * with invalid deadlines.
 *
 * One line per call:
 *
 *   <kind>.<scene> <function> rc=<NAME> errno=<NAME>
 *
 * NAME is strerrorname_np() of the value, 0, or the number itself.  errno
 * is set to 12345 before every call, so "errno=12345" means the call left
 * errno alone.  Calls made on a helper thread are stored and printed by the
 * main thread once the helper has finished, so the output order never
 * depends on scheduling.  "<kind>.<scene> usable ..." lines say whether the
 * mutex still works afterwards.
 *
 * tests/transparency.sh runs this with and without LD_PRELOAD=libmutexstat.so
 * and wants the same bytes.  Nothing printed may depend on timing: a
 * deadline is either already past (a held mutex times out at once) or a
 * minute away (someone is certain to let go first); helpers move one step at
 * a time on semaphores.  Skipped on purpose: relocking a held normal mutex
 * (it never returns) and EAGAIN (needs 2^32 recursive levels). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "deadline.h"

#define SENTINEL 12345
#define BAD_CLOCK ((clockid_t)CLOCK_PROCESS_CPUTIME_ID)

/* ---- printing ---------------------------------------------------------- */

static const char *kind_name = "-";

static const char *name_of(int v)
{
	static char buf[4][16];
	static int next;
	const char *n = v ? strerrorname_np(v) : "0";
	if (n)
		return n;
	char *b = buf[next++ % 4];
	snprintf(b, sizeof buf[0], "%d", v);
	return b;
}

static void show(const char *scene, const char *fn, int rc, int err)
{
	printf("%s.%s %s rc=%s errno=%s\n", kind_name, scene, fn, name_of(rc),
	       name_of(err));
}

/* CALL(scene, function, args...): call it with errno set to the sentinel,
 * print the line, and give back the return value. */
#define CALL(scene, fn, ...)                                               \
	({                                                                 \
		errno = SENTINEL;                                          \
		int rc_ = fn(__VA_ARGS__);                                 \
		int err_ = errno;                                          \
		show(scene, #fn, rc_, err_);                               \
		rc_;                                                       \
	})

/* A call made by another thread, kept until the main thread prints it. */
struct call {
	const char *fn;
	int rc, err;
};

struct step {
	pthread_mutex_t *m;
	pthread_cond_t *c;
	volatile int *flag;
	sem_t *locked, *go; /* for a thread that dies when told to */
	int n;
	struct call calls[6];
};

#define KEEP(s, fn, ...)                                                   \
	({                                                                 \
		errno = SENTINEL;                                          \
		int rc_ = fn(__VA_ARGS__);                                 \
		int err_ = errno;                                          \
		if ((s)->n < 6)                                            \
			(s)->calls[(s)->n++] = (struct call){ #fn, rc_, err_ }; \
		rc_;                                                       \
	})

static void show_kept(const char *scene, struct step *s)
{
	for (int i = 0; i < s->n; i++)
		show(scene, s->calls[i].fn, s->calls[i].rc, s->calls[i].err);
	s->n = 0;
}

static void usable(const char *scene, pthread_mutex_t *m)
{
	int t = pthread_mutex_trylock(m);
	int u = t ? -1 : pthread_mutex_unlock(m);
	printf("%s.%s usable trylock=%s unlock=%s\n", kind_name, scene,
	       name_of(t), t ? "-" : name_of(u));
}

static void sem_take(sem_t *s)
{
	while (sem_wait(s) != 0 && errno == EINTR)
		;
}

/* ---- deadlines ---------------------------------------------------------- */

/* Already over: a held mutex or an unsignalled condition times out now. */
static struct timespec past_ts[2];
/* A minute away: only used when another thread is certain to let go. */
static struct timespec future_ts[2];
static const struct timespec bad_nsec = { 1, 1000000000 };
static const struct timespec neg_nsec = { 1, -1 };

static void set_deadlines(void)
{
	past_ts[0] = deadline_in(CLOCK_REALTIME, -20);
	past_ts[1] = deadline_in(CLOCK_MONOTONIC, -20);
	future_ts[0] = deadline_in(CLOCK_REALTIME, 60000);
	future_ts[1] = deadline_in(CLOCK_MONOTONIC, 60000);
}

#define PAST_RT (&past_ts[0])
#define PAST_MONO (&past_ts[1])
#define SOON_RT (&future_ts[0])
#define SOON_MONO (&future_ts[1])

/* ---- the helper thread: one step at a time ------------------------------ */

static struct helper {
	pthread_t thread;
	sem_t go, done;
	void (*fn)(struct step *);
	struct step *step;
} helper;

static void *helper_main(void *arg)
{
	(void)arg;
	for (;;) {
		sem_take(&helper.go);
		if (!helper.fn)
			return NULL;
		helper.fn(helper.step);
		sem_post(&helper.done);
	}
}

/* Start fn on the helper and return at once; helper_wait() to finish. */
static void helper_start(void (*fn)(struct step *), struct step *s)
{
	helper.fn = fn;
	helper.step = s;
	sem_post(&helper.go);
}

static void helper_wait(void)
{
	sem_take(&helper.done);
}

static void on_helper(void (*fn)(struct step *), struct step *s)
{
	helper_start(fn, s);
	helper_wait();
}

static void h_lock(struct step *s) { KEEP(s, pthread_mutex_lock, s->m); }
static void h_unlock(struct step *s) { KEEP(s, pthread_mutex_unlock, s->m); }
static void h_trylock(struct step *s) { KEEP(s, pthread_mutex_trylock, s->m); }

/* Take the mutex (which waits for the main thread's condition wait to let
 * it go), raise the flag, signal, let go. */
static void h_signal(struct step *s)
{
	KEEP(s, pthread_mutex_lock, s->m);
	*s->flag = 1;
	KEEP(s, pthread_cond_signal, s->c);
	KEEP(s, pthread_mutex_unlock, s->m);
}

/* ---- threads that die holding a robust mutex ----------------------------- */

static void *die_holding(void *arg)
{
	struct step *s = arg;
	KEEP(s, pthread_mutex_lock, s->m);
	if (s->go) {
		sem_post(s->locked);
		sem_take(s->go);
	}
	return NULL;
}

static void *hold_until_told(void *arg)
{
	struct step *s = arg;
	KEEP(s, pthread_mutex_lock, s->m);
	sem_post(s->locked);
	sem_take(s->go);
	KEEP(s, pthread_mutex_unlock, s->m);
	return NULL;
}

static void *die_after_signal(void *arg)
{
	struct step *s = arg;
	KEEP(s, pthread_mutex_lock, s->m);
	*s->flag = 1;
	KEEP(s, pthread_cond_signal, s->c);
	return NULL; /* still holding */
}

static void owner_dies(const char *scene, pthread_mutex_t *m)
{
	struct step s = { .m = m };
	pthread_t t;
	pthread_create(&t, NULL, die_holding, &s);
	pthread_join(t, NULL);
	show_kept(scene, &s);
}

/* ---- the kinds ------------------------------------------------------------ */

enum { BY_INIT, BY_STATIC };

struct kind {
	const char *name;
	int type;      /* PTHREAD_MUTEX_NORMAL, _ERRORCHECK, _RECURSIVE, ... */
	int robust, pshared, protocol;
	int how;       /* BY_INIT (with attributes, NULL if type < 0) or BY_STATIC */
	pthread_mutex_t *m;
};

static pthread_mutex_t static_normal = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t static_recursive = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static pthread_mutex_t static_errorcheck = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
static pthread_mutex_t static_adaptive = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP;

/* glibc checks the owner on unlock (EPERM otherwise) for these. */
static int checks_owner(const struct kind *k)
{
	return k->type == PTHREAD_MUTEX_ERRORCHECK ||
	       k->type == PTHREAD_MUTEX_RECURSIVE || k->robust ||
	       k->protocol == PTHREAD_PRIO_INHERIT;
}

static void make_attr(const struct kind *k, pthread_mutexattr_t *a)
{
	pthread_mutexattr_init(a);
	if (k->type >= 0)
		pthread_mutexattr_settype(a, k->type);
	if (k->robust)
		pthread_mutexattr_setrobust(a, PTHREAD_MUTEX_ROBUST);
	if (k->pshared)
		pthread_mutexattr_setpshared(a, PTHREAD_PROCESS_SHARED);
	if (k->protocol != PTHREAD_PRIO_NONE)
		pthread_mutexattr_setprotocol(a, k->protocol);
	/* ceiling 0: glibc refuses it (EINVAL) and keeps the lowest
	 * SCHED_FIFO priority, 1, which an unprivileged SCHED_OTHER thread
	 * cannot take: its first lock of such a mutex fails with EINVAL,
	 * later ones succeed (glibc's own bookkeeping; printed as it is) */
	if (k->protocol == PTHREAD_PRIO_PROTECT)
		CALL("attr", pthread_mutexattr_setprioceiling, a, 0);
}

/* (Re)initialise the kind's mutex the way a program would. */
static int init_kind(const char *scene, const struct kind *k)
{
	if (k->how == BY_STATIC) {
		/* what the initializer put there: init with the same type */
		pthread_mutexattr_t a;
		pthread_mutexattr_init(&a);
		pthread_mutexattr_settype(&a, k->type);
		int rc = CALL(scene, pthread_mutex_init, k->m, &a);
		pthread_mutexattr_destroy(&a);
		return rc;
	}
	if (k->type < 0)
		return CALL(scene, pthread_mutex_init, k->m, NULL);
	pthread_mutexattr_t a;
	make_attr(k, &a);
	int rc = CALL(scene, pthread_mutex_init, k->m, &a);
	pthread_mutexattr_destroy(&a);
	return rc;
}

/* ---- the scenes ----------------------------------------------------------- */

/* Nobody holds it: every way of locking succeeds; bad clocks are refused. */
static int scene_free(const struct kind *k)
{
	pthread_mutex_t *m = k->m;
	int rc = CALL("free", pthread_mutex_lock, m);
	if (rc != 0) /* a thread's first priority-protect lock fails */
		rc = CALL("free-again", pthread_mutex_lock, m);
	if (rc != 0) {
		printf("%s.free cannot be locked: later scenes skipped\n",
		       kind_name);
		/* what glibc answers here is its business (for a
		 * priority-protect mutex it depends on the calls before);
		 * whatever is taken is let go at once */
		if (CALL("free", pthread_mutex_trylock, m) == 0)
			CALL("free", pthread_mutex_unlock, m);
		if (CALL("free", pthread_mutex_timedlock, m, SOON_RT) == 0)
			CALL("free", pthread_mutex_unlock, m);
		if (CALL("free", pthread_mutex_clocklock, m, CLOCK_MONOTONIC, SOON_MONO) == 0)
			CALL("free", pthread_mutex_unlock, m);
		if (CALL("free-bad-clock", pthread_mutex_clocklock, m, BAD_CLOCK, SOON_MONO) == 0)
			CALL("free-bad-clock", pthread_mutex_unlock, m);
		return -1;
	}
	CALL("free", pthread_mutex_unlock, m);
	if (CALL("free", pthread_mutex_trylock, m) == 0)
		CALL("free", pthread_mutex_unlock, m);
	if (CALL("free", pthread_mutex_timedlock, m, SOON_RT) == 0)
		CALL("free", pthread_mutex_unlock, m);
	/* never blocks, so glibc never looks at the bad deadline */
	if (CALL("free-bad-nsec", pthread_mutex_timedlock, m, &bad_nsec) == 0)
		CALL("free-bad-nsec", pthread_mutex_unlock, m);
	if (CALL("free", pthread_mutex_clocklock, m, CLOCK_MONOTONIC, SOON_MONO) == 0)
		CALL("free", pthread_mutex_unlock, m);
	if (CALL("free", pthread_mutex_clocklock, m, CLOCK_REALTIME, SOON_RT) == 0)
		CALL("free", pthread_mutex_unlock, m);
	/* glibc refuses the clock before it touches the mutex */
	if (CALL("free-bad-clock", pthread_mutex_clocklock, m, BAD_CLOCK, SOON_MONO) == 0)
		CALL("free-bad-clock", pthread_mutex_unlock, m);
	if (CALL("free-bad-clock", pthread_mutex_clocklock, m, (clockid_t)4242, SOON_MONO) == 0)
		CALL("free-bad-clock", pthread_mutex_unlock, m);
	usable("free", m);
	return 0;
}

/* The caller holds it and asks again. */
static void scene_self(const struct kind *k)
{
	pthread_mutex_t *m = k->m;
	int levels = 0;
	if (CALL("self", pthread_mutex_lock, m) == 0)
		levels++;
	if (CALL("self", pthread_mutex_trylock, m) == 0)
		levels++;
	if (k->type == PTHREAD_MUTEX_ERRORCHECK || k->type == PTHREAD_MUTEX_RECURSIVE) {
		/* EDEADLK, or one more level */
		if (CALL("self", pthread_mutex_lock, m) == 0)
			levels++;
	}
	/* a normal mutex waits for itself until the deadline: already past */
	if (CALL("self-past", pthread_mutex_timedlock, m, PAST_RT) == 0)
		levels++;
	if (CALL("self-past", pthread_mutex_clocklock, m, CLOCK_MONOTONIC, PAST_MONO) == 0)
		levels++;
	if (CALL("self-past", pthread_mutex_clocklock, m, CLOCK_REALTIME, PAST_RT) == 0)
		levels++;
	if (CALL("self-bad-clock", pthread_mutex_clocklock, m, BAD_CLOCK, PAST_MONO) == 0)
		levels++;
	if (k->type == PTHREAD_MUTEX_ERRORCHECK || k->type == PTHREAD_MUTEX_RECURSIVE) {
		/* normal kinds would wait on the bad deadline: EINVAL, but
		 * only errorcheck and recursive answer before that */
		if (CALL("self-bad-nsec", pthread_mutex_timedlock, m, &bad_nsec) == 0)
			levels++;
	}
	if (!k->robust) /* glibc does not refuse to destroy a held robust mutex */
		CALL("self-held", pthread_mutex_destroy, m);
	while (levels-- > 0)
		CALL("self", pthread_mutex_unlock, m);
	if (checks_owner(k))
		CALL("self-unlocked", pthread_mutex_unlock, m);
	usable("self", m);
}

/* Another thread holds it.  The helper tries twice (a thread's first
 * priority-protect lock fails, see make_attr); if it still cannot take it,
 * the scenes that need two threads are skipped: -1. */
static int scene_other(const struct kind *k)
{
	pthread_mutex_t *m = k->m;
	struct step s = { .m = m };
	on_helper(h_lock, &s);
	if (s.calls[0].rc != 0)
		on_helper(h_lock, &s);
	int held = s.calls[s.n - 1].rc == 0;
	show_kept("other", &s);
	if (!held) {
		printf("%s.other the helper cannot lock it: scenes with two "
		       "threads skipped\n", kind_name);
		return -1;
	}
	CALL("other", pthread_mutex_trylock, m);
	CALL("other-past", pthread_mutex_timedlock, m, PAST_RT);
	CALL("other-past", pthread_mutex_clocklock, m, CLOCK_MONOTONIC, PAST_MONO);
	CALL("other-past", pthread_mutex_clocklock, m, CLOCK_REALTIME, PAST_RT);
	CALL("other-bad-nsec", pthread_mutex_timedlock, m, &bad_nsec);
	CALL("other-neg-nsec", pthread_mutex_timedlock, m, &neg_nsec);
	CALL("other-bad-nsec", pthread_mutex_clocklock, m, CLOCK_MONOTONIC, &bad_nsec);
	CALL("other-bad-clock", pthread_mutex_clocklock, m, BAD_CLOCK, SOON_MONO);
	if (!k->robust)
		CALL("other-held", pthread_mutex_destroy, m);
	if (checks_owner(k)) {
		CALL("other-not-owner", pthread_mutex_unlock, m);
		pthread_cond_t c = PTHREAD_COND_INITIALIZER;
		CALL("other-not-owner", pthread_cond_wait, &c, m);
		CALL("other-not-owner", pthread_cond_timedwait, &c, m, SOON_RT);
		CALL("other-not-owner", pthread_cond_clockwait, &c, m,
		     CLOCK_MONOTONIC, SOON_MONO);
	}
	on_helper(h_unlock, &s);
	show_kept("other", &s);
	usable("other", m);
	return 0;
}

/* The caller has to wait for the helper to let go: whenever that happens,
 * the lock succeeds. */
static void scene_contended(const struct kind *k)
{
	pthread_mutex_t *m = k->m;
	struct step s = { .m = m };

	on_helper(h_lock, &s);
	helper_start(h_unlock, &s);
	if (CALL("contended", pthread_mutex_lock, m) == 0)
		CALL("contended", pthread_mutex_unlock, m);
	helper_wait();
	show_kept("contended-helper", &s);

	on_helper(h_lock, &s);
	helper_start(h_unlock, &s);
	if (CALL("contended", pthread_mutex_timedlock, m, SOON_RT) == 0)
		CALL("contended", pthread_mutex_unlock, m);
	helper_wait();
	show_kept("contended-helper", &s);

	on_helper(h_lock, &s);
	helper_start(h_unlock, &s);
	if (CALL("contended", pthread_mutex_clocklock, m, CLOCK_MONOTONIC, SOON_MONO) == 0)
		CALL("contended", pthread_mutex_unlock, m);
	helper_wait();
	show_kept("contended-helper", &s);
	usable("contended", m);
}

/* Condition waits: time out (and hold the mutex again), refuse bad
 * arguments, and be woken by the helper. */
static void scene_cond(const struct kind *k)
{
	pthread_mutex_t *m = k->m;
	pthread_cond_t c;
	pthread_cond_init(&c, NULL);

	CALL("cond", pthread_mutex_lock, m);
	CALL("cond-past", pthread_cond_timedwait, &c, m, PAST_RT);
	CALL("cond-past", pthread_cond_clockwait, &c, m, CLOCK_MONOTONIC, PAST_MONO);
	CALL("cond-past", pthread_cond_clockwait, &c, m, CLOCK_REALTIME, PAST_RT);
	CALL("cond-bad-nsec", pthread_cond_timedwait, &c, m, &bad_nsec);
	CALL("cond-bad-nsec", pthread_cond_clockwait, &c, m, CLOCK_MONOTONIC, &bad_nsec);
	CALL("cond-bad-clock", pthread_cond_clockwait, &c, m, BAD_CLOCK, SOON_MONO);
	/* still ours after all that: the helper cannot have it */
	struct step s = { .m = m, .c = &c };
	on_helper(h_trylock, &s);
	show_kept("cond-held-helper", &s);
	CALL("cond", pthread_mutex_unlock, m);

	/* woken: the last wait is the one that saw the flag raised */
	static const char *const how[] = { "wait", "timedwait", "clockwait" };
	for (int i = 0; i < 3; i++) {
		volatile int flag = 0;
		int rc = -1, err = 0;
		s = (struct step){ .m = m, .c = &c, .flag = &flag };
		CALL("cond-woken", pthread_mutex_lock, m);
		helper_start(h_signal, &s);
		while (!flag) {
			errno = SENTINEL;
			if (i == 0)
				rc = pthread_cond_wait(&c, m);
			else if (i == 1)
				rc = pthread_cond_timedwait(&c, m, SOON_RT);
			else
				rc = pthread_cond_clockwait(&c, m, CLOCK_MONOTONIC, SOON_MONO);
			err = errno;
		}
		char fn[32];
		snprintf(fn, sizeof fn, "pthread_cond_%s", how[i]);
		show("cond-woken", fn, rc, err);
		CALL("cond-woken", pthread_mutex_unlock, m);
		helper_wait();
		show_kept("cond-woken-helper", &s);
	}

	if (checks_owner(k)) {
		CALL("cond-not-held", pthread_cond_wait, &c, m);
		CALL("cond-not-held", pthread_cond_timedwait, &c, m, PAST_RT);
	}
	if (k->type == PTHREAD_MUTEX_RECURSIVE) {
		/* held twice: the wait lets go of one level, keeps the mutex */
		CALL("cond-twice", pthread_mutex_lock, m);
		CALL("cond-twice", pthread_mutex_lock, m);
		CALL("cond-twice", pthread_cond_timedwait, &c, m, PAST_RT);
		CALL("cond-twice", pthread_mutex_unlock, m);
		CALL("cond-twice", pthread_mutex_unlock, m);
		CALL("cond-twice", pthread_mutex_unlock, m);
	}
	pthread_cond_destroy(&c);
	usable("cond", m);
}

/* Robust kinds: the owner dies holding it. */
static void scene_owner_died(const struct kind *k)
{
	pthread_mutex_t *m = k->m;

	/* made consistent again, by each way of locking */
	owner_dies("died-lock", m);
	if (CALL("died-lock", pthread_mutex_lock, m) == EOWNERDEAD)
		CALL("died-lock", pthread_mutex_consistent, m);
	CALL("died-lock", pthread_mutex_unlock, m);
	owner_dies("died-trylock", m);
	if (CALL("died-trylock", pthread_mutex_trylock, m) == EOWNERDEAD)
		CALL("died-trylock", pthread_mutex_consistent, m);
	CALL("died-trylock", pthread_mutex_unlock, m);
	owner_dies("died-timedlock", m);
	if (CALL("died-timedlock", pthread_mutex_timedlock, m, SOON_RT) == EOWNERDEAD)
		CALL("died-timedlock", pthread_mutex_consistent, m);
	CALL("died-timedlock", pthread_mutex_unlock, m);
	owner_dies("died-clocklock", m);
	if (CALL("died-clocklock", pthread_mutex_clocklock, m, CLOCK_MONOTONIC, SOON_MONO) == EOWNERDEAD)
		CALL("died-clocklock", pthread_mutex_consistent, m);
	CALL("died-clocklock", pthread_mutex_unlock, m);
	usable("died", m);

	/* the owner dies while we wait for it, or just before: EOWNERDEAD
	 * either way */
	sem_t locked, go;
	sem_init(&locked, 0, 0);
	sem_init(&go, 0, 0);
	struct step s = { .m = m, .locked = &locked, .go = &go };
	pthread_t t;
	pthread_create(&t, NULL, die_holding, &s);
	sem_take(&locked);
	sem_post(&go);
	if (CALL("died-waiting", pthread_mutex_lock, m) == EOWNERDEAD)
		CALL("died-waiting", pthread_mutex_consistent, m);
	CALL("died-waiting", pthread_mutex_unlock, m);
	pthread_join(t, NULL);
	show_kept("died-waiting-owner", &s);
	sem_destroy(&locked);
	sem_destroy(&go);

	/* the owner dies after waking our condition wait */
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	volatile int flag = 0;
	int rc = -1, err = 0;
	s = (struct step){ .m = m, .c = &c, .flag = &flag };
	CALL("died-cond", pthread_mutex_lock, m);
	pthread_create(&t, NULL, die_after_signal, &s);
	while (!flag) {
		errno = SENTINEL;
		rc = pthread_cond_wait(&c, m);
		err = errno;
	}
	show("died-cond", "pthread_cond_wait", rc, err);
	if (rc == EOWNERDEAD)
		CALL("died-cond", pthread_mutex_consistent, m);
	CALL("died-cond", pthread_mutex_unlock, m);
	pthread_join(t, NULL);
	show_kept("died-cond-owner", &s);
	usable("died-cond", m);

	/* glibc destroys a robust mutex even while another thread holds it;
	 * that thread's unlock then finds it destroyed */
	sem_t locked2, go2;
	sem_init(&locked2, 0, 0);
	sem_init(&go2, 0, 0);
	s = (struct step){ .m = m, .locked = &locked2, .go = &go2 };
	pthread_create(&t, NULL, hold_until_told, &s);
	sem_take(&locked2);
	CALL("destroy-held", pthread_mutex_destroy, m);
	sem_post(&go2);
	pthread_join(t, NULL);
	show_kept("destroy-held-owner", &s);
	sem_destroy(&locked2);
	sem_destroy(&go2);
	init_kind("destroy-held-reinit", k);
	usable("destroy-held-reinit", m);
}

/* Robust kinds, let go without being made consistent: not recoverable for
 * good.  Run last, after every other kind: glibc's trylock of such a mutex
 * returns ENOTRECOVERABLE but leaves the lock word set, and glibc's unlock
 * of a mutex in that state can crash, so the order of these calls matters
 * and nothing after them should depend on this mutex. */
static void case_unrecoverable(const struct kind *k)
{
	pthread_mutex_t *m = k->m;
	kind_name = k->name;
	set_deadlines();
	init_kind("unrecoverable-init", k);
	owner_dies("unrecoverable", m);
	CALL("unrecoverable", pthread_mutex_lock, m);
	CALL("unrecoverable", pthread_mutex_unlock, m);
	CALL("unrecoverable", pthread_mutex_lock, m);
	CALL("unrecoverable", pthread_mutex_timedlock, m, PAST_RT);
	CALL("unrecoverable", pthread_mutex_clocklock, m, CLOCK_MONOTONIC, PAST_MONO);
	CALL("unrecoverable", pthread_mutex_lock, m);
	CALL("unrecoverable", pthread_mutex_unlock, m);
	CALL("unrecoverable", pthread_mutex_consistent, m);
	CALL("unrecoverable", pthread_mutex_trylock, m);
	CALL("unrecoverable", pthread_mutex_destroy, m);
	init_kind("unrecoverable-reinit", k);
	usable("unrecoverable-reinit", m);
	CALL("unrecoverable-reinit", pthread_mutex_destroy, m);
	fflush(stdout);
}

/* Destroyed, used anyway (glibc answers EINVAL), then set up again. */
static void scene_destroyed(const struct kind *k)
{
	pthread_mutex_t *m = k->m;
	CALL("destroyed", pthread_mutex_destroy, m);
	CALL("destroyed", pthread_mutex_lock, m);
	CALL("destroyed", pthread_mutex_trylock, m);
	CALL("destroyed", pthread_mutex_timedlock, m, PAST_RT);
	CALL("destroyed", pthread_mutex_clocklock, m, CLOCK_MONOTONIC, PAST_MONO);
	CALL("destroyed", pthread_mutex_unlock, m);
	CALL("destroyed", pthread_mutex_destroy, m);
	init_kind("reinit", k);
	usable("reinit", m);
	CALL("reinit", pthread_mutex_destroy, m);
}

static void run_kind(struct kind *k)
{
	kind_name = k->name;
	set_deadlines();
	if (k->how == BY_INIT)
		init_kind("init", k);
	if (scene_free(k) == 0) {
		scene_self(k);
		if (scene_other(k) == 0) {
			scene_contended(k);
			scene_cond(k);
			if (k->robust)
				scene_owner_died(k);
		}
	}
	scene_destroyed(k);
	fflush(stdout);
}

/* Run a case in a forked child with its own alarm, and say how the child
 * ended: a hang or a crash there shows as one line, and the rest of the
 * output is still compared. */
static void in_child(void (*fn)(const struct kind *), const struct kind *k)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		alarm(10);
		fn(k);
		fflush(stdout);
		_exit(0);
	}
	int status = -1;
	waitpid(pid, &status, 0);
	if (WIFEXITED(status))
		printf("%s.child exit status %d\n", k->name, WEXITSTATUS(status));
	else
		printf("%s.child killed by %s\n", k->name,
		       WIFSIGNALED(status) ? sigabbrev_np(WTERMSIG(status)) : "?");
	fflush(stdout);
}

/* ---- single cases ----------------------------------------------------------- */

/* A normal mutex does not check its owner: another thread's unlock lets it
 * go, and an unlock of an unlocked one succeeds, but leaves glibc's user
 * count one short, so destroy says EBUSY until it is set up again. */
static void case_normal_misuse(pthread_mutex_t *m)
{
	kind_name = "normal-misuse";
	struct step s = { .m = m };
	CALL("init", pthread_mutex_init, m, NULL);
	on_helper(h_lock, &s);
	show_kept("not-owner", &s);
	CALL("not-owner", pthread_mutex_unlock, m);
	usable("not-owner", m);
	CALL("unlocked", pthread_mutex_unlock, m);
	CALL("unlocked", pthread_mutex_destroy, m);
	CALL("unlocked", pthread_mutex_init, m, NULL);
	usable("unlocked", m);
	CALL("unlocked", pthread_mutex_destroy, m);
	fflush(stdout);
}

/* A mutex initialised twice without a destroy in between (glibc does not
 * mind while it is unlocked), and a static one set up again by init after
 * it has been used. */
static void case_init_twice(pthread_mutex_t *m)
{
	static pthread_mutex_t used = PTHREAD_MUTEX_INITIALIZER;
	kind_name = "init-twice";
	CALL("init", pthread_mutex_init, m, NULL);
	usable("init", m);
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	CALL("again-recursive", pthread_mutex_init, m, &a);
	CALL("again-recursive", pthread_mutex_lock, m);
	CALL("again-recursive", pthread_mutex_lock, m);
	CALL("again-recursive", pthread_mutex_unlock, m);
	CALL("again-recursive", pthread_mutex_unlock, m);
	usable("again-recursive", m);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	CALL("again-errorcheck", pthread_mutex_init, m, &a);
	CALL("again-errorcheck", pthread_mutex_lock, m);
	CALL("again-errorcheck", pthread_mutex_lock, m);
	CALL("again-errorcheck", pthread_mutex_unlock, m);
	CALL("again-errorcheck", pthread_mutex_unlock, m);
	CALL("again-errorcheck", pthread_mutex_destroy, m);

	CALL("static-used", pthread_mutex_lock, &used);
	CALL("static-used", pthread_mutex_unlock, &used);
	CALL("static-used", pthread_mutex_init, &used, &a);
	CALL("static-used", pthread_mutex_lock, &used);
	CALL("static-used", pthread_mutex_lock, &used);
	CALL("static-used", pthread_mutex_unlock, &used);
	CALL("static-used", pthread_mutex_destroy, &used);
	pthread_mutexattr_destroy(&a);
	fflush(stdout);
}

/* A thread cancelled in a condition wait takes the mutex back before its
 * cleanup handler runs (so an errorcheck mutex lets the handler unlock it):
 * the cancellation unwinds through the library's wrapper. */
struct cancel_arg {
	pthread_mutex_t *m;
	pthread_cond_t *c;
	sem_t locked;
	int timed;
	struct step kept;
};

static void unlock_on_cancel(void *arg)
{
	struct cancel_arg *a = arg;
	KEEP(&a->kept, pthread_mutex_unlock, a->m);
}

static void *wait_until_cancelled(void *arg)
{
	struct cancel_arg *a = arg;
	KEEP(&a->kept, pthread_mutex_lock, a->m);
	sem_post(&a->locked);
	pthread_cleanup_push(unlock_on_cancel, a);
	for (;;) {
		if (a->timed)
			pthread_cond_clockwait(a->c, a->m, CLOCK_MONOTONIC, SOON_MONO);
		else
			pthread_cond_wait(a->c, a->m);
	}
	pthread_cleanup_pop(0);
	return NULL;
}

static void case_cancel(pthread_mutex_t *m)
{
	kind_name = "cancel";
	set_deadlines();
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	CALL("init", pthread_mutex_init, m, &a);
	pthread_mutexattr_destroy(&a);
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	static const char *const scene[] = { "cond-wait", "cond-clockwait" };
	for (int timed = 0; timed < 2; timed++) {
		struct cancel_arg arg = { .m = m, .c = &c, .timed = timed };
		sem_init(&arg.locked, 0, 0);
		pthread_t t;
		void *ret = NULL;
		pthread_create(&t, NULL, wait_until_cancelled, &arg);
		sem_take(&arg.locked);
		/* ours only once the waiter has let go in its wait */
		CALL(scene[timed], pthread_mutex_lock, m);
		CALL(scene[timed], pthread_mutex_unlock, m);
		pthread_cancel(t);
		pthread_join(t, &ret);
		char waiter[32];
		snprintf(waiter, sizeof waiter, "%s-waiter", scene[timed]);
		show_kept(waiter, &arg.kept);
		printf("%s.%s joined: %s\n", kind_name, scene[timed],
		       ret == PTHREAD_CANCELED ? "cancelled" : "returned");
		usable(scene[timed], m);
		sem_destroy(&arg.locked);
	}
	CALL("end", pthread_mutex_destroy, m);
	fflush(stdout);
}

/* Process-shared: a forked child finds the parent's mutex held, and a child
 * that exits holding a robust one leaves it to the parent with
 * EOWNERDEAD. */
static void case_fork(pthread_mutex_t *m, int robust)
{
	kind_name = robust ? "pshared-robust-fork" : "pshared-fork";
	set_deadlines();
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	if (robust)
		pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	CALL("init", pthread_mutex_init, m, &a);
	pthread_mutexattr_destroy(&a);

	if (!robust)
		CALL("parent", pthread_mutex_lock, m);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		if (robust) {
			CALL("child", pthread_mutex_lock, m);
		} else {
			CALL("child", pthread_mutex_trylock, m);
			CALL("child-past", pthread_mutex_timedlock, m, PAST_RT);
			CALL("child-past", pthread_mutex_clocklock, m,
			     CLOCK_MONOTONIC, PAST_MONO);
		}
		fflush(stdout);
		_exit(0); /* holding it, if robust */
	}
	int status = -1;
	waitpid(pid, &status, 0);
	printf("%s.child exit status %d\n", kind_name,
	       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	if (robust) {
		if (CALL("parent", pthread_mutex_lock, m) == EOWNERDEAD)
			CALL("parent", pthread_mutex_consistent, m);
	}
	CALL("parent", pthread_mutex_unlock, m);
	usable("parent", m);
	CALL("parent", pthread_mutex_destroy, m);
	fflush(stdout);
}

/* A robust process-shared mutex whose owner process dies while this one
 * waits for it: the child takes it, waits until the parent is blocked in
 * its lock (glibc's lock word then has FUTEX_WAITERS), and exits holding
 * it; the parent's lock returns EOWNERDEAD. */
static void case_fork_owner_dies_while_waiting(pthread_mutex_t *m)
{
	kind_name = "pshared-robust-fork-waiting";
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	CALL("init", pthread_mutex_init, m, &a);
	pthread_mutexattr_destroy(&a);
	volatile int *taken = (volatile int *)(m + 1); /* the next slot, unused */
	*taken = 0;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		CALL("child", pthread_mutex_lock, m);
		fflush(stdout);
		*taken = 1;
		while (!(__atomic_load_n(&m->__data.__lock, __ATOMIC_ACQUIRE) & 0x80000000))
			usleep(1000);
		_exit(0); /* holding it, with the parent waiting */
	}
	while (!*taken)
		usleep(1000);
	if (CALL("parent-waiting", pthread_mutex_lock, m) == EOWNERDEAD)
		CALL("parent-waiting", pthread_mutex_consistent, m);
	CALL("parent-waiting", pthread_mutex_unlock, m);
	int status = -1;
	waitpid(pid, &status, 0);
	printf("%s.child exit status %d\n", kind_name,
	       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	usable("parent", m);
	CALL("parent", pthread_mutex_destroy, m);
	fflush(stdout);
}

/* Each kind locked by this thread, then fork: the child's thread unlocks
 * it (as a pthread_atfork child handler does) -- glibc lets a normal one
 * go, and refuses (EPERM) the kinds that check their owner by thread id,
 * since the child's thread has a new one. */
static void case_fork_child_unlocks(struct kind *kinds, int n)
{
	for (int i = 0; i < n; i++) {
		struct kind *k = &kinds[i];
		if (k->protocol == PTHREAD_PRIO_PROTECT || k->how == BY_STATIC)
			continue; /* priority-protect: a first lock may fail; static: done */
		kind_name = k->name;
		init_kind("fork-unlock-init", k);
		if (CALL("fork-unlock", pthread_mutex_lock, k->m) != 0)
			continue;
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			alarm(10);
			CALL("fork-unlock-child", pthread_mutex_unlock, k->m);
			CALL("fork-unlock-child", pthread_mutex_trylock, k->m);
			fflush(stdout);
			_exit(0);
		}
		int status = -1;
		waitpid(pid, &status, 0);
		printf("%s.fork-unlock child exit status %d\n", kind_name,
		       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		CALL("fork-unlock", pthread_mutex_unlock, k->m);
		usable("fork-unlock", k->m);
		fflush(stdout);
	}
}

/* glibc does not support robust priority-protect mutexes: init refuses. */
static void case_pp_robust(pthread_mutex_t *m)
{
	kind_name = "pp-robust";
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_PROTECT);
	CALL("init", pthread_mutex_init, m, &a);
	pthread_mutexattr_destroy(&a);
	fflush(stdout);
}

/* A robust priority-inherit mutex whose owner died: glibc's timed and
 * clock locks have the kernel check the deadline before they take it
 * (EINVAL for an invalid one, the mutex left as it was), where its trylock
 * would take it (EOWNERDEAD).  Then condition waits with an invalid
 * deadline, which glibc refuses before it lets the mutex go. */
static void case_pi_robust_bad_deadline(pthread_mutex_t *m)
{
	kind_name = "pi-robust-dead-bad-deadline";
	set_deadlines();
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT);
	CALL("init", pthread_mutex_init, m, &a);
	pthread_mutexattr_destroy(&a);
	owner_dies("dies", m);
	CALL("dead", pthread_mutex_timedlock, m, &bad_nsec);
	CALL("dead", pthread_mutex_timedlock, m, &neg_nsec);
	CALL("dead", pthread_mutex_clocklock, m, CLOCK_MONOTONIC, &bad_nsec);
	CALL("dead", pthread_mutex_clocklock, m, CLOCK_REALTIME, &neg_nsec);
	if (CALL("dead", pthread_mutex_timedlock, m, PAST_RT) == EOWNERDEAD)
		CALL("dead", pthread_mutex_consistent, m);
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	CALL("held", pthread_cond_timedwait, &c, m, &bad_nsec);
	CALL("held", pthread_cond_clockwait, &c, m, CLOCK_MONOTONIC, &neg_nsec);
	CALL("held", pthread_mutex_unlock, m);
	usable("held", m);
	CALL("done", pthread_mutex_destroy, m);
	fflush(stdout);
}

/* ---- glibc's own fields --------------------------------------------------- */

/* The library takes and lets go of a free normal mutex itself, as glibc
 * would (lib/glibc/glibc_fast.h): what glibc keeps in the mutex must be what
 * glibc would have left, in a process of one thread (glibc's plain
 * stores) and of several (its atomic steps), and when a thread waits in
 * the kernel (lock word 2) as the holder lets go. */
static pid_t fields_waiter;

static void fields_line(char *out, size_t n, const char *scene,
			const char *step, const pthread_mutex_t *m)
{
	int owner = m->__data.__owner;
	const char *who = owner == 0 ? "0" : owner == gettid() ? "self"
			  : owner == fields_waiter ? "waiter" : "another";
	snprintf(out, n, "fields.%s %s lock=%d count=%u owner=%s nusers=%u kind=%d",
		 scene, step, m->__data.__lock, m->__data.__count, who,
		 m->__data.__nusers, m->__data.__kind);
}

static void show_fields(const char *scene, const char *step,
			const pthread_mutex_t *m)
{
	char line[160];
	fields_line(line, sizeof line, scene, step, m);
	puts(line);
}

static void fields_steps(const char *scene, pthread_mutex_t *m)
{
	kind_name = scene;
	show_fields(scene, "free", m);
	CALL("fields", pthread_mutex_lock, m);
	show_fields(scene, "locked", m);
	CALL("fields", pthread_mutex_trylock, m);
	CALL("fields", pthread_mutex_destroy, m);
	show_fields(scene, "refused", m);
	CALL("fields", pthread_mutex_unlock, m);
	show_fields(scene, "unlocked", m);
	CALL("fields", pthread_mutex_trylock, m);
	show_fields(scene, "trylocked", m);
	CALL("fields", pthread_mutex_unlock, m);
	show_fields(scene, "again", m);
}

static char fields_taken[160]; /* the waiter's line, printed after it ends */

static void *fields_wait(void *arg)
{
	pthread_mutex_t *m = arg;
	fields_waiter = gettid();
	pthread_mutex_lock(m); /* the main thread holds it: a wait */
	fields_line(fields_taken, sizeof fields_taken, "waited", "taken", m);
	pthread_mutex_unlock(m);
	return NULL;
}

/* A thread asleep in the kernel for m: m's lock word says so (2). */
static void fields_waited(pthread_mutex_t *m)
{
	pthread_t t;
	pthread_mutex_lock(m);
	__atomic_store_n(&fields_waiter, 0, __ATOMIC_SEQ_CST);
	pthread_create(&t, NULL, fields_wait, m);
	while (__atomic_load_n(&m->__data.__lock, __ATOMIC_SEQ_CST) != 2)
		sched_yield();
	show_fields("waited", "holder", m);
	kind_name = "waited";
	CALL("fields", pthread_mutex_unlock, m);
	pthread_join(t, NULL);
	puts(fields_taken);
	show_fields("waited", "joined", m);
}

int main(void)
{
	alarm(60); /* a hang is a failure, not a stuck test run */
	setvbuf(stdout, NULL, _IOLBF, 0); /* a hang shows where it happened */
	/* one page shared with forked children holds every mutex */
	pthread_mutex_t *pool = mmap(NULL, 64 * sizeof(pthread_mutex_t),
				     PROT_READ | PROT_WRITE,
				     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (pool == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	/* before any thread, then with threads */
	static pthread_mutex_t alone = PTHREAD_MUTEX_INITIALIZER, several;
	fields_steps("one-thread", &alone);
	sem_init(&helper.go, 0, 0);
	sem_init(&helper.done, 0, 0);
	pthread_create(&helper.thread, NULL, helper_main, NULL);
	pthread_mutex_init(&several, NULL);
	fields_steps("threads", &several);
	fields_waited(&several);

	struct kind kinds[] = {
		{ "default", -1, 0, 0, PTHREAD_PRIO_NONE, BY_INIT, 0 },
		{ "normal", PTHREAD_MUTEX_NORMAL, 0, 0, PTHREAD_PRIO_NONE, BY_INIT, 0 },
		{ "errorcheck", PTHREAD_MUTEX_ERRORCHECK, 0, 0, PTHREAD_PRIO_NONE, BY_INIT, 0 },
		{ "recursive", PTHREAD_MUTEX_RECURSIVE, 0, 0, PTHREAD_PRIO_NONE, BY_INIT, 0 },
		{ "adaptive", PTHREAD_MUTEX_ADAPTIVE_NP, 0, 0, PTHREAD_PRIO_NONE, BY_INIT, 0 },
		{ "robust", PTHREAD_MUTEX_NORMAL, 1, 0, PTHREAD_PRIO_NONE, BY_INIT, 0 },
		{ "robust-errorcheck", PTHREAD_MUTEX_ERRORCHECK, 1, 0, PTHREAD_PRIO_NONE, BY_INIT, 0 },
		{ "robust-recursive", PTHREAD_MUTEX_RECURSIVE, 1, 0, PTHREAD_PRIO_NONE, BY_INIT, 0 },
		{ "pshared", PTHREAD_MUTEX_NORMAL, 0, 1, PTHREAD_PRIO_NONE, BY_INIT, 0 },
		{ "pshared-errorcheck", PTHREAD_MUTEX_ERRORCHECK, 0, 1, PTHREAD_PRIO_NONE, BY_INIT, 0 },
		{ "pi", PTHREAD_MUTEX_NORMAL, 0, 0, PTHREAD_PRIO_INHERIT, BY_INIT, 0 },
		{ "pi-errorcheck", PTHREAD_MUTEX_ERRORCHECK, 0, 0, PTHREAD_PRIO_INHERIT, BY_INIT, 0 },
		{ "pi-recursive", PTHREAD_MUTEX_RECURSIVE, 0, 0, PTHREAD_PRIO_INHERIT, BY_INIT, 0 },
		{ "pi-robust", PTHREAD_MUTEX_NORMAL, 1, 0, PTHREAD_PRIO_INHERIT, BY_INIT, 0 },
		{ "pp", PTHREAD_MUTEX_NORMAL, 0, 0, PTHREAD_PRIO_PROTECT, BY_INIT, 0 },
		{ "pp-errorcheck", PTHREAD_MUTEX_ERRORCHECK, 0, 0, PTHREAD_PRIO_PROTECT, BY_INIT, 0 },
		{ "pp-recursive", PTHREAD_MUTEX_RECURSIVE, 0, 0, PTHREAD_PRIO_PROTECT, BY_INIT, 0 },
		{ "pp-pshared", PTHREAD_MUTEX_NORMAL, 0, 1, PTHREAD_PRIO_PROTECT, BY_INIT, 0 },
		{ "pshared-recursive", PTHREAD_MUTEX_RECURSIVE, 0, 1, PTHREAD_PRIO_NONE, BY_INIT, 0 },
		{ "pshared-robust", PTHREAD_MUTEX_NORMAL, 1, 1, PTHREAD_PRIO_NONE, BY_INIT, 0 },
		{ "pshared-robust-errorcheck", PTHREAD_MUTEX_ERRORCHECK, 1, 1, PTHREAD_PRIO_NONE, BY_INIT, 0 },
		{ "pi-pshared", PTHREAD_MUTEX_NORMAL, 0, 1, PTHREAD_PRIO_INHERIT, BY_INIT, 0 },
		{ "pi-robust-errorcheck", PTHREAD_MUTEX_ERRORCHECK, 1, 0, PTHREAD_PRIO_INHERIT, BY_INIT, 0 },
		{ "static-normal", PTHREAD_MUTEX_NORMAL, 0, 0, PTHREAD_PRIO_NONE, BY_STATIC, &static_normal },
		{ "static-recursive", PTHREAD_MUTEX_RECURSIVE, 0, 0, PTHREAD_PRIO_NONE, BY_STATIC, &static_recursive },
		{ "static-errorcheck", PTHREAD_MUTEX_ERRORCHECK, 0, 0, PTHREAD_PRIO_NONE, BY_STATIC, &static_errorcheck },
		{ "static-adaptive", PTHREAD_MUTEX_ADAPTIVE_NP, 0, 0, PTHREAD_PRIO_NONE, BY_STATIC, &static_adaptive },
	};
	int n = (int)(sizeof kinds / sizeof kinds[0]);
	for (int i = 0; i < n; i++) {
		if (!kinds[i].m)
			kinds[i].m = &pool[i];
		run_kind(&kinds[i]);
	}
	case_normal_misuse(&pool[n]);
	case_init_twice(&pool[n + 1]);
	case_cancel(&pool[n + 2]);
	case_fork(&pool[n + 3], 0);
	case_fork(&pool[n + 4], 1);
	case_fork_owner_dies_while_waiting(&pool[n + 5]); /* and n + 6 */
	case_pp_robust(&pool[n + 7]);
	case_pi_robust_bad_deadline(&pool[n + 8]);
	case_fork_child_unlocks(kinds, n);
	for (int i = 0; i < n; i++) {
		if (kinds[i].robust)
			in_child(case_unrecoverable, &kinds[i]);
	}

	helper_start(NULL, NULL);
	pthread_join(helper.thread, NULL);
	printf("done\n");
	return 0;
}
