/* fuzz_api.c - a randomized differential test of the mutex and condition
 * variable API: the same script of calls, from a seed, without and with
 * the library, must print the same lines.
 *
 *   tests/fuzz_api SEED [STEPS]
 *
 * The seed picks 1-3 worker threads, a few mutex slots and condition
 * variables, and a script of operations: every lock function with past,
 * future and invalid deadlines (tv_nsec < 0 or >= 1e9, NULL where glibc
 * never reads it), unlock, init with random attributes (every type, robust,
 * process-shared, priority-inherit, priority-protect with random
 * ceilings), static initialisers written over a slot (including over a
 * live mutex), destroy, consistent, condition waits with the right and the
 * wrong mutex, held or not, threads that exit holding mutexes (robust ones
 * then answer EOWNERDEAD), mutexes on the stack of a function that returns
 * without destroying them.  Only one thread runs at a time: the main
 * thread hands each operation to a worker and waits for it (semaphores),
 * so the order of calls is the same in both runs.  Two operations need two
 * threads at once, and are run so the result still does not depend on
 * timing: a lock that must wait (the main thread watches the lock word
 * until the waiter is queued, then the holder unlocks), and a condition
 * wait that a second worker signals once the mutex was let go.
 *
 * A call that could block for ever (a lock on a mutex someone else holds,
 * a normal mutex locked again by its owner) is made with a past deadline
 * instead; whether it could is read from glibc's own fields of the mutex
 * before the call, so both runs choose the same.
 *
 * One line per call: step, thread, operation and arguments, the return
 * value and errno (set to a sentinel before each call: "errno=-" means the
 * call left it alone), then glibc's fields of the mutex after the call --
 * the lock word, recursion count, owner (as a thread name: tids differ
 * between runs), users and kind.  On stderr, at the end, what the script
 * did that the report's MISUSE lines count, for tests/fuzz_api.sh to
 * compare. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "deadline.h"

#define SENTINEL 12345
#define NSLOT 5
#define NCOND 2
#define NWORKER 3
#define MAXNAMES 64
#define LINE 320

/* ---- the random script --------------------------------------------------- */

static uint64_t rng_state;

static uint32_t rnd(uint32_t n)
{
	/* splitmix64: the same numbers on every machine */
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return n ? (uint32_t)(z % n) : 0;
}

/* ---- threads by name ------------------------------------------------------ */

/* tids differ between runs: each thread that ever ran gets a name, T0 is
 * the main thread, and a tid is printed as its thread's name. */
static pid_t names[MAXNAMES];
static int nnames;

static int gettid_(void)
{
	return (int)syscall(SYS_gettid);
}

static void tid_name(int tid, char *buf, size_t n)
{
	if (tid == 0) {
		snprintf(buf, n, "0");
		return;
	}
	if (tid == 0x7fffffff) {
		snprintf(buf, n, "INCONSISTENT");
		return;
	}
	if (tid == 0x7ffffffe) {
		snprintf(buf, n, "NOTRECOVERABLE");
		return;
	}
	for (int i = 0; i < nnames; i++)
		if (names[i] == tid) {
			snprintf(buf, n, "T%d", i);
			return;
		}
	snprintf(buf, n, "?");
}

static int known_tid(unsigned tid)
{
	for (int i = 0; i < nnames; i++)
		if ((unsigned)names[i] == tid)
			return 1;
	return 0;
}

/* ---- printing -------------------------------------------------------------- */

static const char *err_name(int v)
{
	static char b[4][16];
	static int next;
	if (v == 0)
		return "0";
	if (v == SENTINEL)
		return "-";
	const char *n = strerrorname_np(v);
	if (n)
		return n;
	char *s = b[next++ % 4];
	snprintf(s, sizeof b[0], "%d", v);
	return s;
}

/* glibc's fields of m, tids as names.  The lock word of a robust or
 * priority-inherit mutex holds its owner's tid and two flags; that of a
 * priority-protect one the ceiling and a state. */
static void mutex_state(const pthread_mutex_t *m, char *buf, size_t n)
{
	int kind = m->__data.__kind;
	unsigned lock = (unsigned)m->__data.__lock;
	char own[32], lk[64];
	tid_name(m->__data.__owner, own, sizeof own);
	if ((kind != -1 && (kind & (16 | 32))) || (kind == -1 && known_tid(lock & 0x3fffffff))) {
		char t[32];
		tid_name((int)(lock & 0x3fffffff), t, sizeof t);
		snprintf(lk, sizeof lk, "%s%s%s", t, lock & 0x80000000u ? "+W" : "",
			 lock & 0x40000000u ? "+D" : "");
	} else if (kind != -1 && (kind & 64))
		snprintf(lk, sizeof lk, "c%u/%u", lock >> 19, lock & 0x7ffff);
	else
		snprintf(lk, sizeof lk, "%u", lock);
	snprintf(buf, n, "lock=%s cnt=%u own=%s nus=%u kind=%d", lk,
		 m->__data.__count, own, m->__data.__nusers, kind);
}

/* ---- the mutexes ----------------------------------------------------------- */

static pthread_mutex_t slots[NSLOT];
static pthread_cond_t conds[NCOND];

/* What the report counts as misuse, as the script did it. */
static unsigned long exp_unlock_unlocked, exp_unlock_not_owner,
	exp_destroy_locked, exp_use_destroyed, exp_cond_not_held;
/* What the report counts as acquisitions: locks that took the mutex, and
 * condition waits (with a deadline and clock glibc accepts) after which
 * glibc says the caller holds the mutex -- its own, let go and taken back
 * (EOWNERDEAD too), one level of a recursive one, or one it did not hold
 * that glibc let go and gave it. */
static unsigned long exp_acquired;

static void count_lock(int rc)
{
	if (rc == 0 || rc == EOWNERDEAD)
		__atomic_fetch_add(&exp_acquired, 1, __ATOMIC_RELAXED);
}

static int is_pp(const pthread_mutex_t *m)
{
	return m->__data.__kind != -1 && (m->__data.__kind & 64);
}

static int is_locked(const pthread_mutex_t *m)
{
	unsigned lock = (unsigned)m->__data.__lock;
	if (is_pp(m))
		return (lock & 0x7ffff) != 0;
	return lock != 0;
}

/* Slots that have been robust: glibc links a locked robust mutex into its
 * owner's robust list through the mutex itself (destroyed or not), so
 * writing over one that a live thread holds breaks that list -- undefined
 * behaviour, which the script never does. */
static int was_robust[NSLOT];

static int worker_tid_alive(int tid);

static int in_robust_list(int s)
{
	unsigned lock = (unsigned)slots[s].__data.__lock;
	return was_robust[s] && !(lock & 0x40000000u) &&
	       worker_tid_alive((int)(lock & 0x3fffffff));
}

static void note_robust(int s)
{
	if (slots[s].__data.__kind != -1 && (slots[s].__data.__kind & 16))
		was_robust[s] = 1;
	else if (!in_robust_list(s))
		was_robust[s] = 0;
}

static int type_of(const pthread_mutex_t *m)
{
	return m->__data.__kind & 3;
}

static int is_robust(const pthread_mutex_t *m)
{
	return m->__data.__kind != -1 && (m->__data.__kind & 16);
}

static int is_pi(const pthread_mutex_t *m)
{
	return m->__data.__kind != -1 && (m->__data.__kind & 32);
}

/* The thread glibc's unlock takes for the holder. */
static int holder(const pthread_mutex_t *m)
{
	int owner = m->__data.__owner;
	if ((is_robust(m) || is_pi(m)) && (owner == 0x7fffffff || owner == 0))
		return (int)((unsigned)m->__data.__lock & 0x3fffffff);
	return owner;
}

/* The caller holds m as glibc's unlock sees it (a robust mutex whose
 * owner died: the lock word says who took it since). */
static int mine(const pthread_mutex_t *m)
{
	int owner = m->__data.__owner;
	if (is_robust(m) && owner == 0x7fffffff)
		owner = (int)((unsigned)m->__data.__lock & 0x3fffffff);
	return owner == gettid_() && is_locked(m);
}

/* What a condition wait found, for count_cond once it returned. */
struct cond_before {
	int valid;     /* a deadline and clock glibc accepts */
	int destroyed; /* glibc answers EINVAL */
	int held;      /* the caller's: let go (or one level of it) */
	int inner;     /* a level of a recursive mutex held more than once */
};

static struct cond_before cond_before(const pthread_mutex_t *m, int deadline_ok)
{
	struct cond_before b = { deadline_ok, m->__data.__kind == -1, 0, 0 };
	b.held = !b.destroyed && mine(m);
	b.inner = b.held && m->__data.__count > 1;
	return b;
}

static void count_cond(const pthread_mutex_t *m, struct cond_before b, int rc)
{
	if (!b.valid)
		return;
	if (b.destroyed) {
		if (rc == EINVAL)
			__atomic_fetch_add(&exp_use_destroyed, 1, __ATOMIC_RELAXED);
		return;
	}
	if (!b.held)
		__atomic_fetch_add(&exp_cond_not_held, 1, __ATOMIC_RELAXED);
	/* an inner level of a robust mutex not made consistent: glibc's
	 * unlock answers ENOTRECOVERABLE, and there is no wait */
	if (b.inner && rc == ENOTRECOVERABLE)
		return;
	if (mine(m))
		__atomic_fetch_add(&exp_acquired, 1, __ATOMIC_RELAXED);
}

/* A lock of m by thread tid returns at once: the mutex is free, its owner
 * died (robust), it is destroyed or not recoverable, or it is the caller's
 * and the kind answers a relock (errorcheck, recursive). */
static int lock_returns(const pthread_mutex_t *m, int tid)
{
	int kind = m->__data.__kind;
	if (kind == -1 || !is_locked(m))
		return 1;
	/* not recoverable: glibc's trylock leaves its caller's tid in the
	 * lock word, and a lock then waits for that thread */
	unsigned lock = (unsigned)m->__data.__lock;
	if ((is_robust(m)) && (lock & 0x40000000u))
		return 1;
	if (holder(m) == tid &&
	    (type_of(m) == PTHREAD_MUTEX_ERRORCHECK || type_of(m) == PTHREAD_MUTEX_RECURSIVE))
		return 1;
	return 0;
}

/* ---- deadlines -------------------------------------------------------------- */

enum { D_PAST, D_FUTURE, D_BAD, D_NEG, D_NULL, D_COUNT };
static const char *const deadline_name[D_COUNT] = { "past", "future", "nsec=1e9",
						     "nsec=-1", "NULL" };

struct deadline {
	struct timespec ts;
	const struct timespec *p;
};

static void make_deadline(struct deadline *d, int which, clockid_t clock)
{
	d->p = &d->ts;
	switch (which) {
	case D_PAST:
		d->ts = deadline_in(clock, -1000);
		break;
	case D_FUTURE:
		d->ts = deadline_in(clock, 60000);
		break;
	case D_BAD:
		d->ts = (struct timespec){ 1, 1000000000 };
		break;
	case D_NEG:
		d->ts = (struct timespec){ 1, -1 };
		break;
	default:
		d->p = NULL;
	}
}

/* ---- workers ------------------------------------------------------------------ */

struct op;
typedef void (*op_fn)(struct op *);

/* One operation, made by one worker; its line is kept until the main
 * thread prints it, so lines never mix. */
struct op {
	op_fn fn;
	int a, b, c, d; /* its arguments: slot, condition, deadline, ... */
	int racy;       /* a release another thread waits for: the mutex's
			   state after it depends on when the waiter runs */
	char line[LINE];
};

struct worker {
	pthread_t thread;
	sem_t go, done;
	struct op *op;
	int tid;
	int name;
	int alive;
	volatile int exit_now;
	int calling; /* it is about to make its operation's blocking call */
};

static struct worker workers[NWORKER];
static __thread struct worker *self_worker;
static int nworkers;
static int step;

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	self_worker = w;
	w->tid = gettid_();
	for (;;) {
		while (sem_wait(&w->go) != 0)
			;
		if (w->exit_now) {
			sem_post(&w->done);
			return NULL; /* holding whatever it holds */
		}
		w->op->fn(w->op);
		__atomic_store_n(&w->calling, 0, __ATOMIC_RELEASE);
		sem_post(&w->done);
	}
}

static void worker_start(int i)
{
	struct worker *w = &workers[i];
	sem_init(&w->go, 0, 0);
	sem_init(&w->done, 0, 0);
	w->exit_now = 0;
	w->tid = 0;
	pthread_create(&w->thread, NULL, worker_main, w);
	/* its tid, for names: the worker sets it first thing */
	while (!__atomic_load_n(&w->tid, __ATOMIC_ACQUIRE))
		sched_yield();
	if (nnames < MAXNAMES) {
		w->name = nnames;
		names[nnames++] = w->tid;
	}
	w->alive = 1;
}

static void run_begin(int i, struct op *op)
{
	workers[i].op = op;
	op->line[0] = 0;
	sem_post(&workers[i].go);
}

static void run_end(int i)
{
	while (sem_wait(&workers[i].done) != 0)
		;
}

static void run_on(int i, struct op *op)
{
	run_begin(i, op);
	run_end(i);
}

static void emit(struct op *op)
{
	printf("%s\n", op->line);
}

/* The line of a call, with m's state after it. */
static void say(struct op *op, const char *what, int rc, int err,
		const pthread_mutex_t *m)
{
	char me[32], st[160];
	tid_name(gettid_(), me, sizeof me);
	st[0] = 0;
	if (m && op->racy)
		snprintf(st, sizeof st, "(a waiter takes it)");
	else if (m)
		mutex_state(m, st, sizeof st);
	size_t used = strlen(op->line);
	snprintf(op->line + used, LINE - used, "%s%d %s %s rc=%s errno=%s%s%s",
		 used ? "\n" : "", step, me, what, err_name(rc), err_name(err),
		 m ? " | " : "", st);
}

static void calling(void)
{
	if (self_worker)
		__atomic_store_n(&self_worker->calling, 1, __ATOMIC_RELEASE);
}

#define CALL(op, m, what, fn, ...)                                          \
	({                                                                  \
		calling();                                                  \
		errno = SENTINEL;                                           \
		int rc_ = fn(__VA_ARGS__);                                  \
		int err_ = errno;                                           \
		say(op, what, rc_, err_, m);                                \
		rc_;                                                        \
	})

/* ---- the operations ------------------------------------------------------------ */

static void count_unlock_misuse(const pthread_mutex_t *m)
{
	if (m->__data.__kind == -1)
		return; /* glibc says EINVAL: use of a destroyed mutex, counted there */
	if (!is_locked(m))
		exp_unlock_unlocked++;
	else if (holder(m) != gettid_())
		exp_unlock_not_owner++;
}

static void op_lock(struct op *op)
{
	pthread_mutex_t *m = &slots[op->a];
	char what[64];
	int rc;
	clockid_t clock = op->c ? CLOCK_MONOTONIC : CLOCK_REALTIME;
	struct deadline d;
	make_deadline(&d, op->b, clock);
	int destroyed = m->__data.__kind == -1;
	switch (op->d) {
	case 0:
		snprintf(what, sizeof what, "lock m%d", op->a);
		rc = CALL(op, m, what, pthread_mutex_lock, m);
		break;
	case 1:
		snprintf(what, sizeof what, "trylock m%d", op->a);
		rc = CALL(op, m, what, pthread_mutex_trylock, m);
		break;
	case 2:
		snprintf(what, sizeof what, "timedlock m%d %s", op->a, deadline_name[op->b]);
		rc = CALL(op, m, what, pthread_mutex_timedlock, m, d.p);
		break;
	default: {
		static const clockid_t clocks[] = { CLOCK_REALTIME, CLOCK_MONOTONIC,
						    CLOCK_PROCESS_CPUTIME_ID, 4242 };
		clockid_t ck = clocks[op->c];
		snprintf(what, sizeof what, "clocklock m%d clock=%d %s", op->a, (int)ck,
			 deadline_name[op->b]);
		rc = CALL(op, m, what, pthread_mutex_clocklock, m, ck, d.p);
		break;
	}
	}
	count_lock(rc);
	/* a clock glibc refuses is refused before the mutex is looked at */
	if (destroyed && rc == EINVAL && !(op->d == 3 && op->c >= 2))
		exp_use_destroyed++;
}

static void op_unlock(struct op *op)
{
	pthread_mutex_t *m = &slots[op->a];
	char what[32];
	snprintf(what, sizeof what, "unlock m%d", op->a);
	int destroyed = m->__data.__kind == -1;
	count_unlock_misuse(m);
	int rc = CALL(op, m, what, pthread_mutex_unlock, m);
	if (destroyed && rc == EINVAL)
		exp_use_destroyed++;
}

static void op_consistent(struct op *op)
{
	pthread_mutex_t *m = &slots[op->a];
	char what[32];
	snprintf(what, sizeof what, "consistent m%d", op->a);
	CALL(op, m, what, pthread_mutex_consistent, m);
}

static void op_destroy(struct op *op)
{
	pthread_mutex_t *m = &slots[op->a];
	char what[32];
	snprintf(what, sizeof what, "destroy m%d", op->a);
	int rc = CALL(op, m, what, pthread_mutex_destroy, m);
	if (rc == EBUSY)
		exp_destroy_locked++;
}

/* Random attributes: a (type 0-4, 4 = no attr), b (robust, pshared,
 * protocol bits), c (ceiling). */
static void op_init(struct op *op)
{
	pthread_mutex_t *m = &slots[op->a];
	char what[128];
	static const char *const tn[] = { "normal", "recursive", "errorcheck", "adaptive",
					  "NULL" };
	int robust = op->b & 1, pshared = op->b >> 1 & 1, proto = op->b >> 2 & 3;
	static const char *const pn[] = { "none", "inherit", "protect", "bad" };
	if (op->a >= 0 && op->d == 4) {
		snprintf(what, sizeof what, "init m%d NULL", op->a);
		CALL(op, m, what, pthread_mutex_init, m, NULL);
		return;
	}
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	char w[64];
	snprintf(w, sizeof w, "settype %s", tn[op->d]);
	CALL(op, NULL, w, pthread_mutexattr_settype, &a, op->d);
	if (robust)
		CALL(op, NULL, "setrobust", pthread_mutexattr_setrobust, &a,
		     PTHREAD_MUTEX_ROBUST);
	if (pshared)
		CALL(op, NULL, "setpshared", pthread_mutexattr_setpshared, &a,
		     PTHREAD_PROCESS_SHARED);
	if (proto) {
		int p = proto == 1 ? PTHREAD_PRIO_INHERIT
				   : proto == 2 ? PTHREAD_PRIO_PROTECT : 7;
		snprintf(w, sizeof w, "setprotocol %s", pn[proto]);
		CALL(op, NULL, w, pthread_mutexattr_setprotocol, &a, p);
	}
	if (op->c >= 0) {
		snprintf(w, sizeof w, "setprioceiling %d", op->c);
		CALL(op, NULL, w, pthread_mutexattr_setprioceiling, &a, op->c);
	}
	snprintf(what, sizeof what, "init m%d", op->a);
	CALL(op, m, what, pthread_mutex_init, m, &a);
	pthread_mutexattr_destroy(&a);
}

/* A static initialiser written over the slot, whatever was there. */
static void op_static(struct op *op)
{
	static const pthread_mutex_t inits[] = {
		PTHREAD_MUTEX_INITIALIZER, PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP,
		PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP, PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP
	};
	static const char *const names_[] = { "PTHREAD_MUTEX_INITIALIZER",
					      "RECURSIVE_INITIALIZER_NP",
					      "ERRORCHECK_INITIALIZER_NP",
					      "ADAPTIVE_INITIALIZER_NP" };
	pthread_mutex_t *m = &slots[op->a];
	memcpy(m, &inits[op->b], sizeof *m);
	char what[64];
	snprintf(what, sizeof what, "m%d = %s", op->a, names_[op->b]);
	say(op, what, 0, SENTINEL, m);
}

/* A condition wait that returns by itself: a past deadline, an invalid
 * one, a bad clock.  b: deadline, c: condition, d: 0 timedwait,
 * 1 clockwait monotonic, 2 clockwait realtime, 3 clockwait bad clock. */
static void op_cond_timed(struct op *op)
{
	pthread_mutex_t *m = &slots[op->a];
	pthread_cond_t *c = &conds[op->c];
	char what[96];
	static const clockid_t clocks[] = { CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_REALTIME,
					    CLOCK_PROCESS_CPUTIME_ID };
	struct deadline d;
	make_deadline(&d, op->b, clocks[op->d]);
	struct cond_before b =
		cond_before(m, (op->b == D_PAST || op->b == D_FUTURE) && op->d != 3);
	int rc;
	if (op->d == 0) {
		snprintf(what, sizeof what, "cond_timedwait c%d m%d %s", op->c, op->a,
			 deadline_name[op->b]);
		rc = CALL(op, m, what, pthread_cond_timedwait, c, m, d.p);
	} else {
		snprintf(what, sizeof what, "cond_clockwait c%d m%d clock=%d %s", op->c,
			 op->a, (int)clocks[op->d], deadline_name[op->b]);
		rc = CALL(op, m, what, pthread_cond_clockwait, c, m, clocks[op->d], d.p);
	}
	count_cond(m, b, rc);
}

/* The waiting side of a condition handoff: d 0 wait, 1 timedwait future,
 * 2 clockwait future. */
static void op_cond_wait(struct op *op)
{
	pthread_mutex_t *m = &slots[op->a];
	pthread_cond_t *c = &conds[op->c];
	char what[96];
	struct deadline d;
	make_deadline(&d, D_FUTURE, op->d == 2 ? CLOCK_MONOTONIC : CLOCK_REALTIME);
	struct cond_before b = cond_before(m, 1);
	int rc;
	if (op->d == 0) {
		snprintf(what, sizeof what, "cond_wait c%d m%d", op->c, op->a);
		rc = CALL(op, m, what, pthread_cond_wait, c, m);
	} else if (op->d == 1) {
		snprintf(what, sizeof what, "cond_timedwait c%d m%d future", op->c, op->a);
		rc = CALL(op, m, what, pthread_cond_timedwait, c, m, d.p);
	} else {
		snprintf(what, sizeof what, "cond_clockwait c%d m%d mono future", op->c, op->a);
		rc = CALL(op, m, what, pthread_cond_clockwait, c, m, CLOCK_MONOTONIC, d.p);
	}
	count_cond(m, b, rc);
}

/* The waking side: lock, unlock, signal or broadcast. */
static void op_cond_wake(struct op *op)
{
	pthread_mutex_t *m = &slots[op->a];
	pthread_cond_t *c = &conds[op->c];
	char what[64];
	snprintf(what, sizeof what, "lock m%d", op->a);
	int destroyed = m->__data.__kind == -1;
	int rc = CALL(op, m, what, pthread_mutex_lock, m);
	count_lock(rc);
	if (destroyed && rc == EINVAL)
		exp_use_destroyed++;
	if (rc == 0 || rc == EOWNERDEAD) {
		snprintf(what, sizeof what, "unlock m%d", op->a);
		CALL(op, m, what, pthread_mutex_unlock, m);
	}
	/* after the unlock: signalled while it is held, the waiter may or
	 * may not queue on the mutex before it is let go */
	snprintf(what, sizeof what, "%s c%d", op->d ? "broadcast" : "signal", op->c);
	if (op->d)
		CALL(op, NULL, what, pthread_cond_broadcast, c);
	else
		CALL(op, NULL, what, pthread_cond_signal, c);
}

/* A mutex on this function's stack, at a depth the script picks, left
 * as it is when the function returns: the next call at that depth makes
 * a new mutex at the same address. */
static __attribute__((noinline)) void stack_mutex(struct op *op, int depth)
{
	if (depth > 0) {
		volatile char pad[48];
		pad[0] = 0;
		stack_mutex(op, depth - 1);
		(void)pad[0];
		return;
	}
	pthread_mutex_t m;
	char what[64];
	if (op->b < 4) {
		pthread_mutexattr_t a;
		pthread_mutexattr_init(&a);
		pthread_mutexattr_settype(&a, op->b);
		if (op->c & 1)
			pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
		snprintf(what, sizeof what, "stack%d init type=%d robust=%d", op->a, op->b,
			 op->c & 1);
		CALL(op, &m, what, pthread_mutex_init, &m, &a);
		pthread_mutexattr_destroy(&a);
	} else {
		/* whatever the last function left here, then the initialiser */
		pthread_mutex_t init = PTHREAD_MUTEX_INITIALIZER;
		memcpy(&m, &init, sizeof m);
		snprintf(what, sizeof what, "stack%d = PTHREAD_MUTEX_INITIALIZER", op->a);
		say(op, what, 0, SENTINEL, &m);
	}
	snprintf(what, sizeof what, "stack%d lock", op->a);
	count_lock(CALL(op, &m, what, pthread_mutex_lock, &m));
	if (op->c & 2) {
		snprintf(what, sizeof what, "stack%d trylock", op->a);
		count_lock(CALL(op, &m, what, pthread_mutex_trylock, &m));
	}
	if (op->c & 4) {
		snprintf(what, sizeof what, "stack%d unlock", op->a);
		count_unlock_misuse(&m);
		CALL(op, &m, what, pthread_mutex_unlock, &m);
	}
	if (op->c & 8) {
		snprintf(what, sizeof what, "stack%d unlock", op->a);
		count_unlock_misuse(&m);
		CALL(op, &m, what, pthread_mutex_unlock, &m);
	}
	/* a robust mutex left locked on a dead stack breaks the thread's
	 * robust list: unlocked to the last level */
	while ((op->c & 1) && op->b < 4 && m.__data.__owner == gettid_()) {
		snprintf(what, sizeof what, "stack%d unlock", op->a);
		CALL(op, &m, what, pthread_mutex_unlock, &m);
	}
	/* returns without destroy, maybe still locked */
}

static void op_stack(struct op *op)
{
	stack_mutex(op, op->a);
}

/* ---- the scheduler ---------------------------------------------------------------- */

static int tid_of(int w)
{
	return workers[w].tid;
}

static int worker_tid_alive(int tid)
{
	for (int i = 0; i < nworkers; i++)
		if (workers[i].alive && workers[i].tid == tid)
			return 1;
	return 0;
}

/* Wait (at most ~5 s) until worker w sleeps in a futex call: it called
 * the lock function (w->calling), so that is the mutex's (or, with the
 * library, its condition wait's) futex.  glibc's lock word cannot tell:
 * a mutex retaken after a wait keeps its waiters flag. */
static int in_futex(int tid)
{
	char path[64], buf[64];
	snprintf(path, sizeof path, "/proc/self/task/%d/syscall", tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	int n = fgets(buf, sizeof buf, f) != NULL;
	fclose(f);
	return n && strncmp(buf, "202 ", 4) == 0; /* SYS_futex on x86-64 */
}

static int finished(int w)
{
	int v = 0;
	sem_getvalue(&workers[w].done, &v);
	return v > 0;
}

static int queued(int w)
{
	for (int i = 0; i < 5000 && !finished(w); i++) {
		if (__atomic_load_n(&workers[w].calling, __ATOMIC_ACQUIRE) &&
		    in_futex(workers[w].tid))
			return 1;
		usleep(1000);
	}
	return 0;
}

/* The worker that holds m, if a live worker does. */
static int holding_worker(const pthread_mutex_t *m)
{
	int h = holder(m);
	for (int i = 0; i < nworkers; i++)
		if (workers[i].alive && workers[i].tid == h)
			return i;
	return -1;
}

/* A slot worker w holds, if it holds one; else s. */
static int held_slot(int w, int s)
{
	int first = (int)rnd(NSLOT);
	for (int i = 0; i < NSLOT; i++) {
		int k = (first + i) % NSLOT;
		if (is_locked(&slots[k]) && holder(&slots[k]) == tid_of(w))
			return k;
	}
	return s;
}

static void one_step(void)
{
	struct op op = { 0 }, op2 = { 0 };
	int w = (int)rnd((uint32_t)nworkers);
	int s = (int)rnd(NSLOT);
	uint32_t pick = rnd(100);
	/* unlocks and condition waits mostly on a mutex the worker holds */
	if (pick >= 30 && pick < 50 && rnd(4))
		s = held_slot(w, s);
	if (pick >= 80 && pick < 88)
		s = held_slot(w, s);
	pthread_mutex_t *m = &slots[s];
	op.a = s;
	if (pick < 30) { /* a lock of some kind */
		op.fn = op_lock;
		op.d = (int)rnd(4);
		op.b = (int)rnd(D_COUNT);
		op.c = op.d == 3 ? (int)(rnd(10) < 8 ? rnd(2) : 2 + rnd(2)) : (int)rnd(2);
		int returns = lock_returns(m, tid_of(w));
		int h = holding_worker(m);
		int needs_wait = op.d == 0 || op.b == D_FUTURE || op.b == D_NULL;
		if (op.d == 1 || returns)
			needs_wait = 0;
		if (op.d == 3 && op.c >= 2)
			needs_wait = 0; /* glibc refuses the clock first */
		if (needs_wait && op.b == D_NULL && op.d >= 2) {
			op.b = D_PAST; /* glibc would read it */
		} else if (needs_wait && h >= 0 && h != w && m->__data.__count <= 1 &&
			   rnd(2)) {
			/* a real wait: w queues, the holder lets go */
			if (op.d >= 2)
				op.b = D_FUTURE;
			run_begin(w, &op);
			int q = queued(w), finished_early = !q && finished(w);
			op2.fn = op_unlock;
			op2.a = s;
			op2.racy = !finished_early;
			run_on(h, &op2);
			run_end(w);
			emit(&op2);
			emit(&op);
			if (!q && !finished_early)
				printf("%d (the waiter was not seen queued)\n", step);
			return;
		} else if (needs_wait) {
			if (op.d < 2)
				op.d = 2;
			op.b = D_PAST;
		}
		run_on(w, &op);
		emit(&op);
		return;
	}
	if (pick < 50) {
		op.fn = op_unlock;
		run_on(w, &op);
		emit(&op);
		return;
	}
	if (pick >= 50 && pick < 62 && in_robust_list(s))
		pick = 62; /* not over a robust mutex a thread holds: destroy it */
	if (pick < 58) {
		op.fn = op_init;
		op.d = (int)rnd(5);
		op.b = (int)rnd(16);
		op.c = rnd(3) ? -1 : (int)rnd(4) * 33 - 1;
		run_on(w, &op);
		emit(&op);
		return;
	}
	if (pick < 62) {
		op.fn = op_static;
		op.b = (int)rnd(4);
		run_on(w, &op);
		emit(&op);
		return;
	}
	if (pick < 67) {
		/* Not a mutex another live worker holds that glibc would
		 * destroy (a robust one, or one whose user count an earlier
		 * misuse broke): that worker's later unlock of the address is
		 * not always counted as misuse (doc/limits.md) */
		int h = holding_worker(m);
		op.fn = h >= 0 && h != w && (is_robust(m) || m->__data.__nusers == 0)
				 ? op_unlock : op_destroy;
		run_on(w, &op);
		emit(&op);
		return;
	}
	if (pick < 70) {
		op.fn = op_consistent;
		run_on(w, &op);
		emit(&op);
		return;
	}
	if (pick < 80) {
		op.fn = op_cond_timed;
		op.c = (int)rnd(NCOND);
		op.d = (int)rnd(4);
		op.b = (int)rnd(4); /* never the future: it would wait */
		if (op.b == D_FUTURE)
			op.b = D_PAST;
		run_on(w, &op);
		emit(&op);
		return;
	}
	if (pick < 88) {
		/* a condition handoff: w waits holding m (one level), another
		 * worker wakes it */
		int other = nworkers > 1 ? (w + 1 + (int)rnd((uint32_t)nworkers - 1)) % nworkers : -1;
		if (other < 0 || holder(m) != tid_of(w) || !is_locked(m) ||
		    m->__data.__kind == -1 ||
		    m->__data.__count > 1 || m->__data.__owner == 0x7fffffff) {
			/* not that: a timed wait that returns by itself */
			op.fn = op_cond_timed;
			op.c = (int)rnd(NCOND);
			op.d = (int)rnd(3);
			op.b = D_PAST;
			run_on(w, &op);
			emit(&op);
			return;
		}
		op.fn = op_cond_wait;
		op.c = (int)rnd(NCOND);
		op.d = (int)rnd(3);
		run_begin(w, &op);
		int released = 0, finished_early;
		for (int i = 0; i < 5000 && !(released = !is_locked(m)) && !finished(w); i++)
			usleep(1000);
		finished_early = !released && finished(w);
		op2.fn = op_cond_wake;
		op2.a = s;
		op2.c = op.c;
		op2.d = (int)rnd(2);
		run_on(other, &op2);
		run_end(w);
		emit(&op2);
		emit(&op);
		if (!released && !finished_early)
			printf("%d (the mutex was not seen released)\n", step);
		return;
	}
	if (pick < 95) {
		op.fn = op_stack;
		op.a = (int)rnd(3);
		op.b = (int)rnd(5);
		op.c = (int)rnd(16);
		run_on(w, &op);
		emit(&op);
		return;
	}
	/* a worker exits, holding whatever it holds; another takes its place */
	char me[32];
	tid_name(tid_of(w), me, sizeof me);
	workers[w].exit_now = 1;
	sem_post(&workers[w].go);
	run_end(w);
	pthread_join(workers[w].thread, NULL);
	workers[w].alive = 0;
	worker_start(w);
	char nw[32];
	tid_name(tid_of(w), nw, sizeof nw);
	printf("%d %s exits, %s takes its place\n", step, me, nw);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: fuzz_api SEED [STEPS]\n");
		return 2;
	}
	uint64_t seed = strtoull(argv[1], NULL, 0);
	int steps = argc > 2 ? atoi(argv[2]) : 60;
	rng_state = seed;
	alarm(120); /* a hang is a failure, not a stuck test run */
	setvbuf(stdout, NULL, _IOLBF, 0);
	names[nnames++] = gettid_();
	nworkers = 1 + (int)rnd(NWORKER);
	for (int i = 0; i < nworkers; i++)
		worker_start(i);
	for (int i = 0; i < NCOND; i++)
		pthread_cond_init(&conds[i], NULL);
	/* every slot starts as a mutex of some kind */
	for (int i = 0; i < NSLOT; i++) {
		struct op op = { .fn = op_init, .a = i, .d = (int)rnd(5), .b = (int)rnd(16),
				 .c = rnd(3) ? -1 : (int)rnd(4) * 33 - 1 };
		run_on(0, &op);
		emit(&op);
	}
	printf("seed %llu: %d workers\n", (unsigned long long)seed, nworkers);
	for (int i = 0; i < NSLOT; i++)
		note_robust(i);
	for (step = 1; step <= steps; step++) {
		one_step();
		for (int i = 0; i < NSLOT; i++)
			note_robust(i);
	}
	for (int i = 0; i < NSLOT; i++) {
		char st[160];
		mutex_state(&slots[i], st, sizeof st);
		printf("end m%d %s\n", i, st);
	}
	fprintf(stderr,
		"expected misuse: unlock-unlocked %lu unlock-not-owner %lu "
		"destroy-locked %lu use-destroyed %lu cond-not-held %lu\n",
		exp_unlock_unlocked, exp_unlock_not_owner, exp_destroy_locked,
		exp_use_destroyed, exp_cond_not_held);
	fprintf(stderr, "expected acquisitions %lu\n", exp_acquired);
	fflush(stdout);
	return 0;
}
