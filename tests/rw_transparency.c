/* rw_transparency.c - proof that mutexstat never changes what a program
 * sees of its read-write locks and spin locks.
 *
 * Calls every pthread_rwlock_* and pthread_spin_* function through every
 * success and error path glibc has, on every kind of rwlock: default,
 * reader-preferring, "writer-preferring" (which glibc treats as
 * reader-preferring), writer-preferring non-recursive, process-shared, and
 * the statically initialised ones that never pass through
 * pthread_rwlock_init.  Each kind goes through the same scenes: free, held
 * for write by the caller (EDEADLK), held for read by the caller, held for
 * read and for write by another thread (EBUSY, ETIMEDOUT), contended, a
 * writer waiting while readers come (a reader-preferring lock lets them
 * in, a non-recursive one does not), eight readers at once, a read lock
 * let go by another thread, destroyed while held, destroyed and used again.
 * Invalid deadlines and clocks are tried free, held by the caller and held
 * by another thread: glibc refuses them before it looks at the lock; a
 * NULL deadline, which glibc takes as none, free and held by the caller.  Then
 * process-shared locks across fork (the child is refused, times out, and
 * waits with no deadline for its parent to let go: the holds its thread
 * inherited are the parent's, no self-deadlock), a private lock held
 * across fork, the unlock of a free rwlock (in a child: it breaks the
 * lock), spin locks of each kind through the same kind of scenes (and a
 * process-shared one the child spins on while the parent holds it), and
 * counters updated by several threads under a rwlock and a spin lock.
 *
 * One line per call:
 *
 *   <kind>.<scene> <function> rc=<NAME> errno=<NAME>
 *
 * NAME is strerrorname_np() of the value, 0, or the number itself.  errno
 * is set to 12345 before every call, so "errno=12345" means the call left
 * errno alone.  Calls made on other threads (or by a parent while its
 * child prints) are stored and printed by the main thread once the other
 * has finished, so the output order never depends on scheduling.
 *
 * tests/rw_transparency.sh runs this with and without
 * LD_PRELOAD=libmutexstat.so and wants the same bytes.  Nothing printed may
 * depend on timing: a deadline is already past, or a few milliseconds away
 * while another thread certainly holds the lock for as long (ETIMEDOUT
 * either way), or a minute away when someone is certain to let go first.
 * Where the outcome depends on a thread having got somewhere inside glibc
 * (a writer waiting, readers queued behind a writer), the main thread
 * waits for glibc's lock word to say so.  Skipped on purpose: wrlock and
 * rdlock that would wait for ever (a reader's wrlock, a spin lock taken
 * twice), the unlock of a write lock by a thread that is not the writer
 * (glibc takes it for a reader's unlock and breaks the lock), and EAGAIN
 * (needs 2^29 readers at once). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
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
#include "proc_wait.h"

#define SENTINEL 12345
#define BAD_CLOCK ((clockid_t)CLOCK_PROCESS_CPUTIME_ID)
#define NO_CLOCK ((clockid_t)12345)
/* NULL, passed where glibc's headers say nonnull: glibc takes it as no
 * deadline (volatile, so that the compiler cannot see it is NULL) */
static const struct timespec *volatile no_deadline;
#define SHORT_MS 10   /* a wait that must time out while another holds */
#define READERS 8

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

#define KEPT_MAX 8

struct step {
	pthread_rwlock_t *l;
	pthread_spinlock_t *s;
	int n;
	struct call calls[KEPT_MAX];
};

#define KEEP(st, fn, ...)                                                  \
	({                                                                 \
		errno = SENTINEL;                                          \
		int rc_ = fn(__VA_ARGS__);                                 \
		int err_ = errno;                                          \
		if ((st)->n < KEPT_MAX)                                    \
			(st)->calls[(st)->n++] = (struct call){ #fn, rc_, err_ }; \
		rc_;                                                       \
	})

static void show_kept(const char *scene, struct step *s)
{
	for (int i = 0; i < s->n; i++)
		show(scene, s->calls[i].fn, s->calls[i].rc, s->calls[i].err);
	s->n = 0;
}

/* Whether the lock works afterwards: it can be taken for write, then for
 * read, by the caller. */
static void usable(const char *scene, pthread_rwlock_t *l)
{
	int w = pthread_rwlock_trywrlock(l);
	int wu = w ? -1 : pthread_rwlock_unlock(l);
	int r = pthread_rwlock_tryrdlock(l);
	int ru = r ? -1 : pthread_rwlock_unlock(l);
	printf("%s.%s usable trywrlock=%s unlock=%s tryrdlock=%s unlock=%s\n",
	       kind_name, scene, name_of(w), w ? "-" : name_of(wu),
	       name_of(r), r ? "-" : name_of(ru));
}

static void spin_usable(const char *scene, pthread_spinlock_t *s)
{
	int t = pthread_spin_trylock(s);
	int u = t ? -1 : pthread_spin_unlock(s);
	printf("%s.%s usable trylock=%s unlock=%s\n", kind_name, scene,
	       name_of(t), t ? "-" : name_of(u));
}

static void sem_take(sem_t *s)
{
	while (sem_wait(s) != 0 && errno == EINTR)
		;
}

/* ---- deadlines ---------------------------------------------------------- */

/* Already over: a held lock times out now. */
static struct timespec past_ts[2];
/* A minute away: only used when another thread is certain to let go. */
static struct timespec future_ts[2];
/* Invalid: glibc answers EINVAL before it looks at the lock. */
static const struct timespec bad_nsec = { 1, 1000000000 };
static const struct timespec neg_nsec = { 1, -1 };
/* Valid but before the epoch: glibc's futex wait times out at once. */
static const struct timespec neg_sec = { -1, 0 };

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

/* A deadline SHORT_MS from now on the clock: the call really waits in the
 * kernel, and times out.  A ring of them, so several can be arguments of
 * one line. */
static const struct timespec *in_short(clockid_t clock)
{
	static struct timespec ring[4];
	static int next;
	struct timespec *ts = &ring[next++ % 4];
	*ts = deadline_in(clock, SHORT_MS);
	return ts;
}

#define SHORT_RT in_short(CLOCK_REALTIME)
#define SHORT_MONO in_short(CLOCK_MONOTONIC)

/* ---- glibc's lock word ---------------------------------------------------- */

/* pthread_rwlock_t's __data.__readers (glibc's nptl/pthread_rwlock_common.c):
 * bit 0 a write phase, bit 1 a primary writer (holding, or waiting for the
 * readers to go), the number of readers (holding, or waiting for the write
 * phase to end) from bit 3.  Read only to know when another thread has got
 * far enough into glibc for the next call's answer to be certain. */
#define RW_WRPHASE 1u
#define RW_WRLOCKED 2u
#define RW_READER_SHIFT 3

static unsigned int rw_word(pthread_rwlock_t *l)
{
	return __atomic_load_n(&l->__data.__readers, __ATOMIC_ACQUIRE);
}

/* Until the word has a writer waiting for the readers to go: a read phase
 * with a primary writer. */
static void until_writer_waits(pthread_rwlock_t *l)
{
	while ((rw_word(l) & (RW_WRPHASE | RW_WRLOCKED)) != RW_WRLOCKED)
		sched_yield();
}

/* Until n readers are counted (holding or queued behind a writer). */
static void until_readers(pthread_rwlock_t *l, unsigned int n)
{
	while (rw_word(l) >> RW_READER_SHIFT != n)
		sched_yield();
}

/* And, at most a second, until thread tid sleeps in the kernel, so that
 * the waiting path is the one taken; the output does not depend on it. */
static void until_asleep(pid_t tid)
{
	for (int i = 0; i < 1000 && !sleeps_on_futex(tid, NULL); i++)
		usleep(1000);
}

/* The same for a forked child (its main thread), from its parent. */
static void until_child_asleep(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/syscall", (int)pid);
	for (int i = 0; i < 1000; i++) {
		long nr = -1;
		FILE *f = fopen(path, "r");
		if (f) {
			if (fscanf(f, "%ld", &nr) != 1)
				nr = -1;
			fclose(f);
		}
		if (nr == SYS_futex)
			return;
		usleep(1000);
	}
}

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

static void h_rdlock(struct step *s) { KEEP(s, pthread_rwlock_rdlock, s->l); }
static void h_wrlock(struct step *s) { KEEP(s, pthread_rwlock_wrlock, s->l); }
static void h_unlock(struct step *s) { KEEP(s, pthread_rwlock_unlock, s->l); }

/* A reader arriving while a writer waits: one more read lock, if glibc
 * lets it in, let go at once. */
static void h_tryrdlock(struct step *s)
{
	if (KEEP(s, pthread_rwlock_tryrdlock, s->l) == 0)
		KEEP(s, pthread_rwlock_unlock, s->l);
}

static void h_spin_lock(struct step *s) { KEEP(s, pthread_spin_lock, s->s); }
static void h_spin_unlock(struct step *s) { KEEP(s, pthread_spin_unlock, s->s); }

/* ---- the rwlock kinds ---------------------------------------------------- */

enum { BY_INIT, BY_STATIC };
#define ATTR_NONE (-1) /* pthread_rwlock_init(l, NULL) */

struct kind {
	const char *name;
	int kind;      /* ATTR_NONE or PTHREAD_RWLOCK_PREFER_* */
	int pshared;
	int how;       /* BY_INIT, or BY_STATIC (set up again with kind) */
	pthread_rwlock_t *l;
};

static pthread_rwlock_t static_default = PTHREAD_RWLOCK_INITIALIZER;
static pthread_rwlock_t static_nonrecursive =
	PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;

/* The kind that makes a reader wait for a waiting writer: a reader that
 * takes the lock a second time while a writer waits would wait for ever. */
static int nonrecursive(const struct kind *k)
{
	return k->kind == PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP;
}

/* (Re)initialise the kind's lock the way a program would. */
static int init_kind(const char *scene, const struct kind *k)
{
	if (k->kind == ATTR_NONE)
		return CALL(scene, pthread_rwlock_init, k->l, NULL);
	pthread_rwlockattr_t a;
	pthread_rwlockattr_init(&a);
	pthread_rwlockattr_setkind_np(&a, k->kind);
	if (k->pshared)
		pthread_rwlockattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	int rc = CALL(scene, pthread_rwlock_init, k->l, &a);
	pthread_rwlockattr_destroy(&a);
	return rc;
}

/* ---- the rwlock scenes ------------------------------------------------------ */

/* Nobody holds it: every way of locking succeeds, whatever the deadline
 * (already past, before the epoch: glibc has no reason to wait); invalid
 * deadlines and clocks are refused even so. */
static void scene_free(const struct kind *k)
{
	pthread_rwlock_t *l = k->l;
	static const char *const sc[] = { "free", "free-past", "free-neg-sec" };

	if (CALL("free", pthread_rwlock_rdlock, l) == 0)
		CALL("free", pthread_rwlock_unlock, l);
	if (CALL("free", pthread_rwlock_tryrdlock, l) == 0)
		CALL("free", pthread_rwlock_unlock, l);
	if (CALL("free", pthread_rwlock_wrlock, l) == 0)
		CALL("free", pthread_rwlock_unlock, l);
	if (CALL("free", pthread_rwlock_trywrlock, l) == 0)
		CALL("free", pthread_rwlock_unlock, l);
	for (int i = 0; i < 3; i++) {
		const struct timespec *rt = i == 0 ? SOON_RT : i == 1 ? PAST_RT : &neg_sec;
		const struct timespec *mono = i == 0 ? SOON_MONO : i == 1 ? PAST_MONO : &neg_sec;
		if (CALL(sc[i], pthread_rwlock_timedrdlock, l, rt) == 0)
			CALL(sc[i], pthread_rwlock_unlock, l);
		if (CALL(sc[i], pthread_rwlock_clockrdlock, l, CLOCK_MONOTONIC, mono) == 0)
			CALL(sc[i], pthread_rwlock_unlock, l);
		if (CALL(sc[i], pthread_rwlock_clockrdlock, l, CLOCK_REALTIME, rt) == 0)
			CALL(sc[i], pthread_rwlock_unlock, l);
		if (CALL(sc[i], pthread_rwlock_timedwrlock, l, rt) == 0)
			CALL(sc[i], pthread_rwlock_unlock, l);
		if (CALL(sc[i], pthread_rwlock_clockwrlock, l, CLOCK_MONOTONIC, mono) == 0)
			CALL(sc[i], pthread_rwlock_unlock, l);
		if (CALL(sc[i], pthread_rwlock_clockwrlock, l, CLOCK_REALTIME, rt) == 0)
			CALL(sc[i], pthread_rwlock_unlock, l);
	}
	/* free, and still EINVAL: glibc checks the deadline first */
	if (CALL("free-bad-nsec", pthread_rwlock_timedrdlock, l, &bad_nsec) == 0)
		CALL("free-bad-nsec", pthread_rwlock_unlock, l);
	if (CALL("free-neg-nsec", pthread_rwlock_timedrdlock, l, &neg_nsec) == 0)
		CALL("free-neg-nsec", pthread_rwlock_unlock, l);
	if (CALL("free-bad-nsec", pthread_rwlock_clockrdlock, l, CLOCK_MONOTONIC, &bad_nsec) == 0)
		CALL("free-bad-nsec", pthread_rwlock_unlock, l);
	if (CALL("free-bad-nsec", pthread_rwlock_timedwrlock, l, &bad_nsec) == 0)
		CALL("free-bad-nsec", pthread_rwlock_unlock, l);
	if (CALL("free-neg-nsec", pthread_rwlock_timedwrlock, l, &neg_nsec) == 0)
		CALL("free-neg-nsec", pthread_rwlock_unlock, l);
	if (CALL("free-neg-nsec", pthread_rwlock_clockwrlock, l, CLOCK_REALTIME, &neg_nsec) == 0)
		CALL("free-neg-nsec", pthread_rwlock_unlock, l);
	if (CALL("free-bad-clock", pthread_rwlock_clockrdlock, l, BAD_CLOCK, SOON_MONO) == 0)
		CALL("free-bad-clock", pthread_rwlock_unlock, l);
	if (CALL("free-bad-clock", pthread_rwlock_clockrdlock, l, NO_CLOCK, SOON_MONO) == 0)
		CALL("free-bad-clock", pthread_rwlock_unlock, l);
	if (CALL("free-bad-clock", pthread_rwlock_clockwrlock, l, BAD_CLOCK, SOON_MONO) == 0)
		CALL("free-bad-clock", pthread_rwlock_unlock, l);
	if (CALL("free-bad-clock", pthread_rwlock_clockwrlock, l, NO_CLOCK, SOON_MONO) == 0)
		CALL("free-bad-clock", pthread_rwlock_unlock, l);
	if (CALL("free-bad-clock", pthread_rwlock_clockwrlock, l, CLOCK_MONOTONIC_RAW, SOON_MONO) == 0)
		CALL("free-bad-clock", pthread_rwlock_unlock, l);
	/* no deadline at all: glibc takes NULL as none, whatever the clock */
	if (CALL("free-null", pthread_rwlock_timedrdlock, l, no_deadline) == 0)
		CALL("free-null", pthread_rwlock_unlock, l);
	if (CALL("free-null", pthread_rwlock_timedwrlock, l, no_deadline) == 0)
		CALL("free-null", pthread_rwlock_unlock, l);
	if (CALL("free-null", pthread_rwlock_clockrdlock, l, CLOCK_MONOTONIC, no_deadline) == 0)
		CALL("free-null", pthread_rwlock_unlock, l);
	if (CALL("free-null", pthread_rwlock_clockwrlock, l, CLOCK_REALTIME, no_deadline) == 0)
		CALL("free-null", pthread_rwlock_unlock, l);
	if (CALL("free-null-bad-clock", pthread_rwlock_clockrdlock, l, NO_CLOCK, no_deadline) == 0)
		CALL("free-null-bad-clock", pthread_rwlock_unlock, l);
	if (CALL("free-null-bad-clock", pthread_rwlock_clockwrlock, l, NO_CLOCK, no_deadline) == 0)
		CALL("free-null-bad-clock", pthread_rwlock_unlock, l);
	usable("free", l);
}

/* The caller holds it for write and asks again: EDEADLK from every
 * blocking form, read or write, whatever the deadline; EBUSY from the
 * trylocks (glibc does not look at the writer there); EINVAL still comes
 * first for an invalid deadline or clock. */
static void scene_self_write(const struct kind *k)
{
	pthread_rwlock_t *l = k->l;
	int levels = 0; /* each success (none expected) is let go below */

	if (CALL("self-write", pthread_rwlock_wrlock, l) != 0)
		return;
	levels += CALL("self-write", pthread_rwlock_rdlock, l) == 0;
	levels += CALL("self-write", pthread_rwlock_wrlock, l) == 0;
	levels += CALL("self-write", pthread_rwlock_tryrdlock, l) == 0;
	levels += CALL("self-write", pthread_rwlock_trywrlock, l) == 0;
	levels += CALL("self-write", pthread_rwlock_timedrdlock, l, SOON_RT) == 0;
	levels += CALL("self-write", pthread_rwlock_clockrdlock, l, CLOCK_MONOTONIC, SOON_MONO) == 0;
	levels += CALL("self-write", pthread_rwlock_timedwrlock, l, SOON_RT) == 0;
	levels += CALL("self-write", pthread_rwlock_clockwrlock, l, CLOCK_REALTIME, SOON_RT) == 0;
	levels += CALL("self-write-past", pthread_rwlock_timedrdlock, l, PAST_RT) == 0;
	levels += CALL("self-write-past", pthread_rwlock_clockwrlock, l, CLOCK_MONOTONIC, PAST_MONO) == 0;
	levels += CALL("self-write-neg-sec", pthread_rwlock_clockrdlock, l, CLOCK_REALTIME, &neg_sec) == 0;
	levels += CALL("self-write-bad-nsec", pthread_rwlock_timedrdlock, l, &bad_nsec) == 0;
	levels += CALL("self-write-bad-nsec", pthread_rwlock_timedwrlock, l, &bad_nsec) == 0;
	levels += CALL("self-write-neg-nsec", pthread_rwlock_clockwrlock, l, CLOCK_MONOTONIC, &neg_nsec) == 0;
	levels += CALL("self-write-bad-clock", pthread_rwlock_clockrdlock, l, BAD_CLOCK, SOON_MONO) == 0;
	levels += CALL("self-write-bad-clock", pthread_rwlock_clockwrlock, l, NO_CLOCK, SOON_MONO) == 0;
	levels += CALL("self-write-null", pthread_rwlock_timedwrlock, l, no_deadline) == 0;
	levels += CALL("self-write-null", pthread_rwlock_timedrdlock, l, no_deadline) == 0;
	levels += CALL("self-write-null-bad-clock", pthread_rwlock_clockwrlock, l, NO_CLOCK,
		       no_deadline) == 0;
	/* another thread's view: held for write */
	struct step s = { .l = l };
	on_helper(h_tryrdlock, &s);
	show_kept("self-write-helper", &s);
	while (levels-- > 0)
		CALL("self-write-extra", pthread_rwlock_unlock, l);
	CALL("self-write", pthread_rwlock_unlock, l);
	usable("self-write", l);
}

/* The caller holds it for read: more read locks, of every form, succeed
 * (nobody waits to write); its own write lock would wait for ever, so only
 * the forms that give up are tried. */
static void scene_self_read(const struct kind *k)
{
	pthread_rwlock_t *l = k->l;
	int levels = 0;

	levels += CALL("self-read", pthread_rwlock_rdlock, l) == 0;
	if (levels == 0)
		return;
	levels += CALL("self-read", pthread_rwlock_rdlock, l) == 0;
	levels += CALL("self-read", pthread_rwlock_tryrdlock, l) == 0;
	levels += CALL("self-read", pthread_rwlock_timedrdlock, l, SOON_RT) == 0;
	levels += CALL("self-read", pthread_rwlock_clockrdlock, l, CLOCK_MONOTONIC, SOON_MONO) == 0;
	levels += CALL("self-read-past", pthread_rwlock_clockrdlock, l, CLOCK_REALTIME, PAST_RT) == 0;
	levels += CALL("self-read", pthread_rwlock_trywrlock, l) == 0;
	levels += CALL("self-read-past", pthread_rwlock_timedwrlock, l, PAST_RT) == 0;
	levels += CALL("self-read-past", pthread_rwlock_clockwrlock, l, CLOCK_MONOTONIC, PAST_MONO) == 0;
	levels += CALL("self-read-short", pthread_rwlock_timedwrlock, l, SHORT_RT) == 0;
	levels += CALL("self-read-short", pthread_rwlock_clockwrlock, l, CLOCK_MONOTONIC, SHORT_MONO) == 0;
	levels += CALL("self-read-neg-sec", pthread_rwlock_timedwrlock, l, &neg_sec) == 0;
	levels += CALL("self-read-bad-nsec", pthread_rwlock_timedwrlock, l, &bad_nsec) == 0;
	levels += CALL("self-read-bad-nsec", pthread_rwlock_clockrdlock, l, CLOCK_MONOTONIC, &bad_nsec) == 0;
	levels += CALL("self-read-bad-clock", pthread_rwlock_clockwrlock, l, BAD_CLOCK, PAST_MONO) == 0;
	levels += CALL("self-read-bad-clock", pthread_rwlock_clockrdlock, l, NO_CLOCK, SOON_MONO) == 0;
	while (levels-- > 0)
		CALL("self-read", pthread_rwlock_unlock, l);
	usable("self-read", l);
}

/* Another thread holds it for read: the caller reads too, and its write
 * locks are refused (EBUSY) or time out -- already past, a few
 * milliseconds of waiting, or before the epoch. */
static void scene_other_read(const struct kind *k)
{
	pthread_rwlock_t *l = k->l;
	struct step s = { .l = l };

	on_helper(h_rdlock, &s);
	show_kept("other-read-helper", &s);
	if (CALL("other-read", pthread_rwlock_rdlock, l) == 0)
		CALL("other-read", pthread_rwlock_unlock, l);
	if (CALL("other-read", pthread_rwlock_tryrdlock, l) == 0)
		CALL("other-read", pthread_rwlock_unlock, l);
	if (CALL("other-read", pthread_rwlock_timedrdlock, l, PAST_RT) == 0)
		CALL("other-read", pthread_rwlock_unlock, l);
	if (CALL("other-read", pthread_rwlock_clockrdlock, l, CLOCK_MONOTONIC, SOON_MONO) == 0)
		CALL("other-read", pthread_rwlock_unlock, l);
	CALL("other-read", pthread_rwlock_trywrlock, l);
	CALL("other-read-past", pthread_rwlock_timedwrlock, l, PAST_RT);
	CALL("other-read-past", pthread_rwlock_clockwrlock, l, CLOCK_MONOTONIC, PAST_MONO);
	CALL("other-read-past", pthread_rwlock_clockwrlock, l, CLOCK_REALTIME, PAST_RT);
	CALL("other-read-short", pthread_rwlock_timedwrlock, l, SHORT_RT);
	CALL("other-read-short", pthread_rwlock_clockwrlock, l, CLOCK_MONOTONIC, SHORT_MONO);
	CALL("other-read-short", pthread_rwlock_clockwrlock, l, CLOCK_REALTIME, SHORT_RT);
	CALL("other-read-neg-sec", pthread_rwlock_timedwrlock, l, &neg_sec);
	CALL("other-read-bad-nsec", pthread_rwlock_timedwrlock, l, &bad_nsec);
	CALL("other-read-neg-nsec", pthread_rwlock_clockwrlock, l, CLOCK_MONOTONIC, &neg_nsec);
	CALL("other-read-bad-clock", pthread_rwlock_clockwrlock, l, BAD_CLOCK, SHORT_MONO);
	CALL("other-read-bad-clock", pthread_rwlock_clockwrlock, l, NO_CLOCK, SHORT_MONO);
	on_helper(h_unlock, &s);
	show_kept("other-read-helper", &s);
	usable("other-read", l);
}

/* Another thread holds it for write: every lock of the caller is refused
 * or times out; invalid deadlines are EINVAL, before any wait. */
static void scene_other_write(const struct kind *k)
{
	pthread_rwlock_t *l = k->l;
	struct step s = { .l = l };

	on_helper(h_wrlock, &s);
	show_kept("other-write-helper", &s);
	CALL("other-write", pthread_rwlock_tryrdlock, l);
	CALL("other-write", pthread_rwlock_trywrlock, l);
	CALL("other-write-past", pthread_rwlock_timedrdlock, l, PAST_RT);
	CALL("other-write-past", pthread_rwlock_clockrdlock, l, CLOCK_MONOTONIC, PAST_MONO);
	CALL("other-write-past", pthread_rwlock_clockrdlock, l, CLOCK_REALTIME, PAST_RT);
	CALL("other-write-past", pthread_rwlock_timedwrlock, l, PAST_RT);
	CALL("other-write-past", pthread_rwlock_clockwrlock, l, CLOCK_MONOTONIC, PAST_MONO);
	CALL("other-write-short", pthread_rwlock_timedrdlock, l, SHORT_RT);
	CALL("other-write-short", pthread_rwlock_clockrdlock, l, CLOCK_MONOTONIC, SHORT_MONO);
	CALL("other-write-short", pthread_rwlock_timedwrlock, l, SHORT_RT);
	CALL("other-write-short", pthread_rwlock_clockwrlock, l, CLOCK_MONOTONIC, SHORT_MONO);
	CALL("other-write-short", pthread_rwlock_clockwrlock, l, CLOCK_REALTIME, SHORT_RT);
	CALL("other-write-neg-sec", pthread_rwlock_timedrdlock, l, &neg_sec);
	CALL("other-write-neg-sec", pthread_rwlock_clockwrlock, l, CLOCK_MONOTONIC, &neg_sec);
	CALL("other-write-bad-nsec", pthread_rwlock_timedrdlock, l, &bad_nsec);
	CALL("other-write-neg-nsec", pthread_rwlock_clockrdlock, l, CLOCK_REALTIME, &neg_nsec);
	CALL("other-write-bad-nsec", pthread_rwlock_timedwrlock, l, &bad_nsec);
	CALL("other-write-bad-clock", pthread_rwlock_clockrdlock, l, BAD_CLOCK, SHORT_MONO);
	CALL("other-write-bad-clock", pthread_rwlock_clockwrlock, l, NO_CLOCK, SHORT_MONO);
	on_helper(h_unlock, &s);
	show_kept("other-write-helper", &s);
	usable("other-write", l);
}

/* The caller waits for the helper to let go: whenever that happens, the
 * lock succeeds.  Read after write, write after write, write after read. */
static void scene_contended(const struct kind *k)
{
	pthread_rwlock_t *l = k->l;
	struct step s = { .l = l };
	static const char *const sc[] = {
		"contended-rdlock", "contended-timedrdlock", "contended-clockrdlock",
		"contended-wrlock", "contended-timedwrlock", "contended-clockwrlock",
		"contended-after-read",
	};

	for (int i = 0; i < 7; i++) {
		on_helper(i < 6 ? h_wrlock : h_rdlock, &s);
		helper_start(h_unlock, &s);
		int rc;
		switch (i) {
		case 0: rc = CALL(sc[i], pthread_rwlock_rdlock, l); break;
		case 1: rc = CALL(sc[i], pthread_rwlock_timedrdlock, l, SOON_RT); break;
		case 2: rc = CALL(sc[i], pthread_rwlock_clockrdlock, l, CLOCK_MONOTONIC, SOON_MONO); break;
		case 3: rc = CALL(sc[i], pthread_rwlock_wrlock, l); break;
		case 4: rc = CALL(sc[i], pthread_rwlock_timedwrlock, l, SOON_RT); break;
		case 5: rc = CALL(sc[i], pthread_rwlock_clockwrlock, l, CLOCK_REALTIME, SOON_RT); break;
		default: rc = CALL(sc[i], pthread_rwlock_wrlock, l); break;
		}
		if (rc == 0)
			CALL(sc[i], pthread_rwlock_unlock, l);
		helper_wait();
		char name[48];
		snprintf(name, sizeof name, "%s-helper", sc[i]);
		show_kept(name, &s);
	}
	usable("contended", l);
}

/* A writer waits while the caller holds a read lock; then readers come.
 * glibc's reader-preferring kinds (the default, PREFER_READER and
 * PREFER_WRITER alike) let every reader in, the caller again too; the
 * non-recursive kind lets none in, the caller included, which would wait
 * for ever: it only tries forms that give up. */
struct waiter {
	pthread_rwlock_t *l;
	pid_t tid;
	int write;
	struct step s;
};

static void *wait_to_write(void *arg)
{
	struct waiter *w = arg;
	__atomic_store_n(&w->tid, gettid(), __ATOMIC_RELEASE);
	/* bounded: the main thread lets go well before a minute */
	if (KEEP(&w->s, pthread_rwlock_clockwrlock, w->l, CLOCK_MONOTONIC, SOON_MONO) == 0)
		KEEP(&w->s, pthread_rwlock_unlock, w->l);
	return NULL;
}

static void scene_writer_waits(const struct kind *k)
{
	pthread_rwlock_t *l = k->l;
	struct waiter w = { .l = l };
	struct step s = { .l = l };
	pthread_t t;

	if (CALL("writer-waits", pthread_rwlock_rdlock, l) != 0)
		return;
	pthread_create(&t, NULL, wait_to_write, &w);
	until_writer_waits(l);
	while (!__atomic_load_n(&w.tid, __ATOMIC_ACQUIRE))
		sched_yield();
	until_asleep(w.tid);
	on_helper(h_tryrdlock, &s);
	show_kept("writer-waits-new-reader", &s);
	CALL("writer-waits", pthread_rwlock_trywrlock, l);
	if (CALL("writer-waits", pthread_rwlock_tryrdlock, l) == 0)
		CALL("writer-waits", pthread_rwlock_unlock, l);
	if (nonrecursive(k)) {
		CALL("writer-waits-past", pthread_rwlock_timedrdlock, l, PAST_RT);
		CALL("writer-waits-short", pthread_rwlock_timedrdlock, l, SHORT_RT);
		CALL("writer-waits-short", pthread_rwlock_clockrdlock, l, CLOCK_MONOTONIC, SHORT_MONO);
	} else {
		if (CALL("writer-waits", pthread_rwlock_rdlock, l) == 0)
			CALL("writer-waits", pthread_rwlock_unlock, l);
		if (CALL("writer-waits", pthread_rwlock_timedrdlock, l, SOON_RT) == 0)
			CALL("writer-waits", pthread_rwlock_unlock, l);
		if (CALL("writer-waits", pthread_rwlock_clockrdlock, l, CLOCK_MONOTONIC, SOON_MONO) == 0)
			CALL("writer-waits", pthread_rwlock_unlock, l);
	}
	CALL("writer-waits-past", pthread_rwlock_timedwrlock, l, PAST_RT);
	/* the last reader lets go: the writer's turn */
	CALL("writer-waits", pthread_rwlock_unlock, l);
	pthread_join(t, NULL);
	show_kept("writer-waits-writer", &w.s);
	usable("writer-waits", l);
}

/* READERS threads hold it for read at once, each by another form; then
 * as many queue behind a writer and all get in when it lets go. */
struct reader {
	pthread_t thread;
	pthread_rwlock_t *l;
	int form;
	sem_t *held, *go;
	struct step s;
};

static void *read_and_hold(void *arg)
{
	struct reader *r = arg;
	int rc;
	switch (r->form) {
	case 0: rc = KEEP(&r->s, pthread_rwlock_rdlock, r->l); break;
	case 1: rc = KEEP(&r->s, pthread_rwlock_timedrdlock, r->l, SOON_RT); break;
	case 2: rc = KEEP(&r->s, pthread_rwlock_clockrdlock, r->l, CLOCK_MONOTONIC, SOON_MONO); break;
	case 3: rc = KEEP(&r->s, pthread_rwlock_clockrdlock, r->l, CLOCK_REALTIME, SOON_RT); break;
	default: rc = KEEP(&r->s, pthread_rwlock_tryrdlock, r->l); break;
	}
	sem_post(r->held);
	sem_take(r->go);
	if (rc == 0)
		KEEP(&r->s, pthread_rwlock_unlock, r->l);
	return NULL;
}

static void readers_round(pthread_rwlock_t *l, const char *scene, int queued)
{
	struct reader r[READERS];
	sem_t held, go;
	struct step s = { .l = l };
	char name[48];

	sem_init(&held, 0, 0);
	sem_init(&go, 0, 0);
	if (queued) {
		on_helper(h_wrlock, &s);
		snprintf(name, sizeof name, "%s-writer", scene);
		show_kept(name, &s);
	}
	for (int i = 0; i < READERS; i++) {
		/* queued: no tryrdlock (it would fail at once) */
		r[i] = (struct reader){ .l = l, .form = i % (queued ? 4 : 5),
					.held = &held, .go = &go };
		pthread_create(&r[i].thread, NULL, read_and_hold, &r[i]);
	}
	if (queued) {
		until_readers(l, READERS);
		on_helper(h_unlock, &s);
		snprintf(name, sizeof name, "%s-writer", scene);
		show_kept(name, &s);
	}
	for (int i = 0; i < READERS; i++)
		sem_take(&held);
	CALL(scene, pthread_rwlock_trywrlock, l);
	CALL(scene, pthread_rwlock_timedwrlock, l, PAST_RT);
	CALL(scene, pthread_rwlock_clockwrlock, l, CLOCK_MONOTONIC, SHORT_MONO);
	if (CALL(scene, pthread_rwlock_tryrdlock, l) == 0)
		CALL(scene, pthread_rwlock_unlock, l);
	for (int i = 0; i < READERS; i++)
		sem_post(&go);
	for (int i = 0; i < READERS; i++) {
		pthread_join(r[i].thread, NULL);
		snprintf(name, sizeof name, "%s-%d", scene, i);
		show_kept(name, &r[i].s);
	}
	sem_destroy(&held);
	sem_destroy(&go);
	usable(scene, l);
}

static void scene_readers(const struct kind *k)
{
	readers_round(k->l, "readers", 0);
	readers_round(k->l, "readers-queued", 1);
}

/* glibc does not know which thread reads: another thread's read lock let
 * go by the caller leaves the lock free.  (A write lock let go by another
 * thread is taken for a reader's unlock and breaks the lock: not tried.) */
static void scene_not_owner(const struct kind *k)
{
	pthread_rwlock_t *l = k->l;
	struct step s = { .l = l };

	on_helper(h_rdlock, &s);
	show_kept("not-owner-helper", &s);
	CALL("not-owner", pthread_rwlock_unlock, l);
	usable("not-owner", l);
}

/* glibc's destroy looks at nothing: a held lock is destroyed (0), still
 * held, and let go by its holder; a destroyed lock still works; init sets
 * it up again. */
static void scene_destroyed(const struct kind *k)
{
	pthread_rwlock_t *l = k->l;
	struct step s = { .l = l };

	on_helper(h_wrlock, &s);
	show_kept("destroy-held-helper", &s);
	CALL("destroy-held", pthread_rwlock_destroy, l);
	CALL("destroy-held", pthread_rwlock_tryrdlock, l);
	on_helper(h_unlock, &s);
	show_kept("destroy-held-helper", &s);
	init_kind("destroy-held-reinit", k);
	usable("destroy-held-reinit", l);

	if (CALL("destroy-reading", pthread_rwlock_rdlock, l) == 0) {
		CALL("destroy-reading", pthread_rwlock_destroy, l);
		CALL("destroy-reading", pthread_rwlock_unlock, l);
	}
	init_kind("destroy-reading-reinit", k);

	CALL("destroyed", pthread_rwlock_destroy, l);
	if (CALL("destroyed", pthread_rwlock_rdlock, l) == 0)
		CALL("destroyed", pthread_rwlock_unlock, l);
	if (CALL("destroyed", pthread_rwlock_trywrlock, l) == 0)
		CALL("destroyed", pthread_rwlock_unlock, l);
	CALL("destroyed", pthread_rwlock_destroy, l);
	init_kind("reinit", k);
	usable("reinit", l);
	/* init twice without a destroy between (glibc does not mind while
	 * it is free) */
	init_kind("init-twice", k);
	usable("init-twice", l);
}

static void run_kind(const struct kind *k)
{
	kind_name = k->name;
	set_deadlines();
	if (k->how == BY_INIT)
		init_kind("init", k);
	scene_free(k);
	scene_self_write(k);
	scene_self_read(k);
	scene_other_read(k);
	scene_other_write(k);
	scene_contended(k);
	scene_writer_waits(k);
	scene_readers(k);
	scene_not_owner(k);
	scene_destroyed(k);
	CALL("end", pthread_rwlock_destroy, k->l);
	fflush(stdout);
}

/* ---- attributes ------------------------------------------------------------- */

/* Not interposed, but a program's rwlocks are made from them: the kinds
 * and the values glibc refuses. */
static void case_attributes(void)
{
	pthread_rwlockattr_t a;
	int v = -1;
	kind_name = "attr";
	CALL("init", pthread_rwlockattr_init, &a);
	CALL("kind", pthread_rwlockattr_getkind_np, &a, &v);
	printf("attr.kind default %d\n", v);
	static const int kinds[] = { PTHREAD_RWLOCK_PREFER_READER_NP,
				     PTHREAD_RWLOCK_PREFER_WRITER_NP,
				     PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP, 7, -1 };
	for (int i = 0; i < 5; i++) {
		CALL("kind", pthread_rwlockattr_setkind_np, &a, kinds[i]);
		CALL("kind", pthread_rwlockattr_getkind_np, &a, &v);
		printf("attr.kind set %d got %d\n", kinds[i], v);
	}
	CALL("pshared", pthread_rwlockattr_setpshared, &a, PTHREAD_PROCESS_SHARED);
	CALL("pshared", pthread_rwlockattr_setpshared, &a, 7);
	CALL("pshared", pthread_rwlockattr_getpshared, &a, &v);
	printf("attr.pshared got %d\n", v);
	CALL("destroy", pthread_rwlockattr_destroy, &a);
	fflush(stdout);
}

/* ---- fork -------------------------------------------------------------------- */

/* Run fn in a forked child with its own alarm and say how the child
 * ended: a hang or a crash there shows as one line.  The parent prints
 * nothing while the child runs. */
static void in_child(const char *what, void (*fn)(void *), void *arg)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		alarm(10);
		fn(arg);
		fflush(stdout);
		_exit(0);
	}
	int status = -1;
	waitpid(pid, &status, 0);
	if (WIFEXITED(status))
		printf("%s.child exit status %d\n", what, WEXITSTATUS(status));
	else
		printf("%s.child killed by %s\n", what,
		       WIFSIGNALED(status) ? sigabbrev_np(WTERMSIG(status)) : "?");
	fflush(stdout);
}

/* What a forked child and its parent share: in MAP_SHARED memory. */
struct shared {
	pthread_rwlock_t l;
	pthread_spinlock_t s;
	sem_t ready, go;
	struct step parent; /* the parent's calls while the child prints */
};

static struct shared *sh;

/* The parent holds the shared lock for write: the child is refused, and
 * times out; then it holds it for read: the child reads too.  At the end
 * each child waits, with no deadline, for the parent to let go: a read
 * lock while the parent writes, a write lock while it reads.  The child's
 * thread has the parent's thread's holds as they were at the fork, but the
 * lock is the parent's, not the child's: no deadlock (glibc's EDEADLK
 * check compares thread ids, and the child's is its own). */
static void child_sees_write(void *arg)
{
	(void)arg;
	pthread_rwlock_t *l = &sh->l;
	set_deadlines();
	CALL("child", pthread_rwlock_tryrdlock, l);
	CALL("child", pthread_rwlock_trywrlock, l);
	CALL("child-past", pthread_rwlock_timedrdlock, l, PAST_RT);
	CALL("child-past", pthread_rwlock_clockwrlock, l, CLOCK_MONOTONIC, PAST_MONO);
	CALL("child-short", pthread_rwlock_clockrdlock, l, CLOCK_MONOTONIC, SHORT_MONO);
	CALL("child-short", pthread_rwlock_timedwrlock, l, SHORT_RT);
	CALL("child-bad-nsec", pthread_rwlock_timedwrlock, l, &bad_nsec);
	fflush(stdout);
	sem_post(&sh->ready);
	if (CALL("child-waits", pthread_rwlock_rdlock, l) == 0)
		CALL("child-waits", pthread_rwlock_unlock, l);
}

static void child_sees_read(void *arg)
{
	(void)arg;
	pthread_rwlock_t *l = &sh->l;
	set_deadlines();
	if (CALL("child", pthread_rwlock_tryrdlock, l) == 0)
		CALL("child", pthread_rwlock_unlock, l);
	if (CALL("child", pthread_rwlock_clockrdlock, l, CLOCK_MONOTONIC, SOON_MONO) == 0)
		CALL("child", pthread_rwlock_unlock, l);
	CALL("child", pthread_rwlock_trywrlock, l);
	CALL("child-past", pthread_rwlock_timedwrlock, l, PAST_RT);
	fflush(stdout);
	sem_post(&sh->ready);
	if (CALL("child-waits", pthread_rwlock_wrlock, l) == 0)
		CALL("child-waits", pthread_rwlock_unlock, l);
}

/* Fork a child that runs fn; once it is about to wait (it posts
 * sh->ready) and sleeps in the kernel, the parent lets go of l.  The
 * parent's call is kept and printed after the child's lines. */
static void child_waits_for_parent(const char *scene, void (*fn)(void *),
				   pthread_rwlock_t *l)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		alarm(10);
		fn(NULL);
		fflush(stdout);
		_exit(0);
	}
	sem_take(&sh->ready);
	until_child_asleep(pid);
	sh->parent.n = 0;
	KEEP(&sh->parent, pthread_rwlock_unlock, l);
	int status = -1;
	waitpid(pid, &status, 0);
	show_kept(scene, &sh->parent);
	printf("%s.child exit status %d\n", kind_name,
	       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	fflush(stdout);
}

/* The child holds it for write while the parent is refused. */
static void child_holds_write(void *arg)
{
	(void)arg;
	pthread_rwlock_t *l = &sh->l;
	CALL("child-holds", pthread_rwlock_wrlock, l);
	fflush(stdout);
	sem_post(&sh->ready);
	sem_take(&sh->go);
	CALL("child-holds", pthread_rwlock_unlock, l);
}

static void case_fork_shared(int kind)
{
	pthread_rwlock_t *l = &sh->l;
	struct kind k = { kind == PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP
			  ? "fork-shared-nonrecursive" : "fork-shared",
			  kind, 1, BY_INIT, l };
	kind_name = k.name;
	set_deadlines();
	init_kind("init", &k);

	CALL("parent-write", pthread_rwlock_wrlock, l);
	child_waits_for_parent("parent-write", child_sees_write, l);
	CALL("parent-read", pthread_rwlock_rdlock, l);
	child_waits_for_parent("parent-read", child_sees_read, l);

	int status = -1;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		alarm(10);
		child_holds_write(NULL);
		fflush(stdout);
		_exit(0);
	}
	sem_take(&sh->ready);
	set_deadlines();
	CALL("parent-refused", pthread_rwlock_tryrdlock, l);
	CALL("parent-refused", pthread_rwlock_trywrlock, l);
	CALL("parent-refused-past", pthread_rwlock_timedrdlock, l, PAST_RT);
	CALL("parent-refused-short", pthread_rwlock_clockwrlock, l, CLOCK_MONOTONIC, SHORT_MONO);
	CALL("parent-refused-neg-nsec", pthread_rwlock_clockrdlock, l, CLOCK_MONOTONIC, &neg_nsec);
	fflush(stdout);
	sem_post(&sh->go);
	waitpid(pid, &status, 0);
	printf("%s.child exit status %d\n", k.name,
	       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	usable("parent", l);
	CALL("end", pthread_rwlock_destroy, l);
	fflush(stdout);
}

/* A private rwlock held across fork: the child's copy is held by the
 * parent's thread, whose thread id is not the child's: the child's write
 * lock is no EDEADLK but a wait (only forms that give up are tried), and
 * its read locks join the parent's inherited one. */
static pthread_rwlock_t forked_private = PTHREAD_RWLOCK_INITIALIZER;

static void child_of_writer(void *arg)
{
	(void)arg;
	pthread_rwlock_t *l = &forked_private;
	set_deadlines();
	CALL("child", pthread_rwlock_tryrdlock, l);
	CALL("child", pthread_rwlock_trywrlock, l);
	CALL("child-past", pthread_rwlock_timedwrlock, l, PAST_RT);
	CALL("child-past", pthread_rwlock_clockrdlock, l, CLOCK_REALTIME, PAST_RT);
	CALL("child-short", pthread_rwlock_clockwrlock, l, CLOCK_MONOTONIC, SHORT_MONO);
	CALL("child-short", pthread_rwlock_timedrdlock, l, SHORT_RT);
}

static void child_of_reader(void *arg)
{
	(void)arg;
	pthread_rwlock_t *l = &forked_private;
	set_deadlines();
	if (CALL("child", pthread_rwlock_rdlock, l) == 0)
		CALL("child", pthread_rwlock_unlock, l);
	CALL("child", pthread_rwlock_trywrlock, l);
	CALL("child-short", pthread_rwlock_timedwrlock, l, SHORT_RT);
	/* the inherited read lock is the child's to let go (glibc counts
	 * readers, not which threads read) */
	CALL("child-inherited", pthread_rwlock_unlock, l);
	usable("child-inherited", l);
}

static void case_fork_private(void)
{
	pthread_rwlock_t *l = &forked_private;
	kind_name = "fork-private";
	CALL("parent-write", pthread_rwlock_wrlock, l);
	in_child("fork-private-writer", child_of_writer, NULL);
	kind_name = "fork-private";
	CALL("parent-write", pthread_rwlock_unlock, l);
	CALL("parent-read", pthread_rwlock_rdlock, l);
	in_child("fork-private-reader", child_of_reader, NULL);
	kind_name = "fork-private";
	CALL("parent-read", pthread_rwlock_unlock, l);
	usable("parent", l);
	fflush(stdout);
}

/* The unlock of a free rwlock: glibc takes it for a reader's unlock and
 * counts one reader less than none -- it answers 0 and the lock is broken
 * until it is set up again.  In a child, on a lock of its own. */
static void child_unlock_free(void *arg)
{
	(void)arg;
	pthread_rwlock_t l;
	CALL("init", pthread_rwlock_init, &l, NULL);
	CALL("free", pthread_rwlock_unlock, &l);
	CALL("reinit", pthread_rwlock_init, &l, NULL);
	usable("reinit", &l);
	CALL("end", pthread_rwlock_destroy, &l);
}

static void case_unlock_free(void)
{
	kind_name = "unlock-free";
	in_child("unlock-free", child_unlock_free, NULL);
}

/* ---- spin locks ---------------------------------------------------------------- */

/* glibc's spin lock is one word: init ignores its pshared argument (any
 * value, 0), destroy does nothing, unlock stores 0 whoever calls it. */
static void run_spin(const char *name, pthread_spinlock_t *s, int pshared)
{
	struct step st = { .s = s };
	kind_name = name;

	CALL("init", pthread_spin_init, s, pshared);
	if (CALL("free", pthread_spin_lock, s) == 0)
		CALL("free", pthread_spin_unlock, s);
	if (CALL("free", pthread_spin_trylock, s) == 0)
		CALL("free", pthread_spin_unlock, s);

	/* held by the caller: trylock refused (a second lock would spin for
	 * ever) */
	if (CALL("self", pthread_spin_lock, s) == 0) {
		CALL("self", pthread_spin_trylock, s);
		CALL("self", pthread_spin_unlock, s);
	}
	spin_usable("self", s);

	/* held by another thread */
	on_helper(h_spin_lock, &st);
	show_kept("other-helper", &st);
	CALL("other", pthread_spin_trylock, s);
	on_helper(h_spin_unlock, &st);
	show_kept("other-helper", &st);
	spin_usable("other", s);

	/* contended: the caller spins until the helper lets go */
	on_helper(h_spin_lock, &st);
	helper_start(h_spin_unlock, &st);
	if (CALL("contended", pthread_spin_lock, s) == 0)
		CALL("contended", pthread_spin_unlock, s);
	helper_wait();
	show_kept("contended-helper", &st);

	/* let go by a thread that does not hold it, and when free */
	on_helper(h_spin_lock, &st);
	show_kept("not-owner-helper", &st);
	CALL("not-owner", pthread_spin_unlock, s);
	spin_usable("not-owner", s);
	CALL("free-unlock", pthread_spin_unlock, s);
	spin_usable("free-unlock", s);

	/* destroyed (held, then free), used anyway, set up again */
	if (CALL("destroy-held", pthread_spin_lock, s) == 0) {
		CALL("destroy-held", pthread_spin_destroy, s);
		CALL("destroy-held", pthread_spin_unlock, s);
	}
	CALL("destroyed", pthread_spin_destroy, s);
	if (CALL("destroyed", pthread_spin_trylock, s) == 0)
		CALL("destroyed", pthread_spin_unlock, s);
	CALL("reinit", pthread_spin_init, s, pshared);
	spin_usable("reinit", s);
#if defined(__x86_64__) || defined(__i386__)
	/* a word glibc's lock takes (two `lock decl`s) but its trylock does
	 * not (it takes only free's 1): the library tries first, and must
	 * then wait in glibc's lock, not in a loop of tries */
	*(volatile int *)s = 2;
	if (CALL("odd-word", pthread_spin_lock, s) == 0)
		CALL("odd-word", pthread_spin_unlock, s);
	spin_usable("odd-word", s);
#endif
	CALL("end", pthread_spin_destroy, s);
	fflush(stdout);
}

/* A process-shared spin lock held by the parent: the child is refused,
 * then spins until the parent lets go. */
static void child_spins(void *arg)
{
	(void)arg;
	pthread_spinlock_t *s = &sh->s;
	CALL("child", pthread_spin_trylock, s);
	fflush(stdout);
	sem_post(&sh->ready);
	if (CALL("child-waits", pthread_spin_lock, s) == 0)
		CALL("child-waits", pthread_spin_unlock, s);
}

static void case_fork_spin(void)
{
	pthread_spinlock_t *s = &sh->s;
	kind_name = "fork-spin";
	CALL("init", pthread_spin_init, s, PTHREAD_PROCESS_SHARED);
	CALL("parent", pthread_spin_lock, s);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		alarm(10);
		child_spins(NULL);
		fflush(stdout);
		_exit(0);
	}
	sem_take(&sh->ready);
	/* a spinning child makes no system call to wait for: a tenth of a
	 * second, so that it is refused and spins (the output is the same if
	 * it is not: it takes the lock when the parent lets go) */
	usleep(100000);
	sh->parent.n = 0;
	KEEP(&sh->parent, pthread_spin_unlock, s);
	int status = -1;
	waitpid(pid, &status, 0);
	show_kept("parent", &sh->parent);
	printf("fork-spin.child exit status %d\n",
	       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	spin_usable("parent", s);
	CALL("end", pthread_spin_destroy, s);
	fflush(stdout);
}

/* ---- counters: many threads, exact totals ------------------------------------- */

#define COUNT_THREADS 4
#define COUNT_LOOPS 3000

static struct counters {
	pthread_rwlock_t l;
	pthread_spinlock_t s;
	long a, b;       /* written together under the write lock */
	long torn;       /* reads that saw them differ: must stay 0 */
	long reads;
	long spun;       /* under the spin lock */
	int failed;      /* a lock call that did not return 0 */
} cnt;

static void note_rc(int rc)
{
	if (rc != 0)
		__atomic_fetch_add(&cnt.failed, 1, __ATOMIC_RELAXED);
}

static void *count_writer(void *arg)
{
	int form = (int)(long)arg;
	for (int i = 0; i < COUNT_LOOPS; i++) {
		struct timespec ts = deadline_in(form == 1 ? CLOCK_REALTIME : CLOCK_MONOTONIC, 60000);
		int rc;
		if (form == 0)
			rc = pthread_rwlock_wrlock(&cnt.l);
		else if (form == 1)
			rc = pthread_rwlock_timedwrlock(&cnt.l, &ts);
		else if (form == 2)
			rc = pthread_rwlock_clockwrlock(&cnt.l, CLOCK_MONOTONIC, &ts);
		else
			while ((rc = pthread_rwlock_trywrlock(&cnt.l)) == EBUSY)
				sched_yield();
		note_rc(rc);
		if (rc == 0) {
			cnt.a++;
			cnt.b++;
			note_rc(pthread_rwlock_unlock(&cnt.l));
		}
	}
	return NULL;
}

static void *count_reader(void *arg)
{
	int form = (int)(long)arg;
	for (int i = 0; i < COUNT_LOOPS; i++) {
		struct timespec ts = deadline_in(form == 1 ? CLOCK_REALTIME : CLOCK_MONOTONIC, 60000);
		int rc;
		if (form == 0)
			rc = pthread_rwlock_rdlock(&cnt.l);
		else if (form == 1)
			rc = pthread_rwlock_timedrdlock(&cnt.l, &ts);
		else if (form == 2)
			rc = pthread_rwlock_clockrdlock(&cnt.l, CLOCK_MONOTONIC, &ts);
		else
			while ((rc = pthread_rwlock_tryrdlock(&cnt.l)) == EBUSY)
				sched_yield();
		note_rc(rc);
		if (rc == 0) {
			if (cnt.a != cnt.b)
				__atomic_fetch_add(&cnt.torn, 1, __ATOMIC_RELAXED);
			__atomic_fetch_add(&cnt.reads, 1, __ATOMIC_RELAXED);
			note_rc(pthread_rwlock_unlock(&cnt.l));
		}
	}
	return NULL;
}

static void *count_spinner(void *arg)
{
	int form = (int)(long)arg;
	for (int i = 0; i < COUNT_LOOPS; i++) {
		int rc;
		if (form % 2 == 0)
			rc = pthread_spin_lock(&cnt.s);
		else
			while ((rc = pthread_spin_trylock(&cnt.s)) == EBUSY)
				sched_yield();
		note_rc(rc);
		if (rc == 0) {
			cnt.spun++;
			note_rc(pthread_spin_unlock(&cnt.s));
		}
	}
	return NULL;
}

static void case_counters(void)
{
	pthread_t t[3 * COUNT_THREADS];
	kind_name = "counters";
	CALL("init", pthread_rwlock_init, &cnt.l, NULL);
	CALL("init", pthread_spin_init, &cnt.s, PTHREAD_PROCESS_PRIVATE);
	for (int i = 0; i < COUNT_THREADS; i++) {
		pthread_create(&t[3 * i], NULL, count_writer, (void *)(long)i);
		pthread_create(&t[3 * i + 1], NULL, count_reader, (void *)(long)i);
		pthread_create(&t[3 * i + 2], NULL, count_spinner, (void *)(long)i);
	}
	for (int i = 0; i < 3 * COUNT_THREADS; i++)
		pthread_join(t[i], NULL);
	printf("counters.end writes a=%ld b=%ld reads=%ld torn=%ld spun=%ld failed=%d\n",
	       cnt.a, cnt.b, cnt.reads, cnt.torn, cnt.spun, cnt.failed);
	CALL("end", pthread_rwlock_destroy, &cnt.l);
	CALL("end", pthread_spin_destroy, &cnt.s);
	fflush(stdout);
}

int main(void)
{
	alarm(60); /* a hang is a failure, not a stuck test run */
	setvbuf(stdout, NULL, _IOLBF, 0); /* a hang shows where it happened */
	/* one region shared with forked children: the process-shared kinds'
	 * locks and what the fork cases share */
	size_t size = 16 * sizeof(pthread_rwlock_t) + sizeof(struct shared);
	char *region = mmap(NULL, size, PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	pthread_rwlock_t *pool = (pthread_rwlock_t *)region;
	sh = (struct shared *)(region + 16 * sizeof(pthread_rwlock_t));
	sem_init(&sh->ready, 1, 0);
	sem_init(&sh->go, 1, 0);

	sem_init(&helper.go, 0, 0);
	sem_init(&helper.done, 0, 0);
	pthread_create(&helper.thread, NULL, helper_main, NULL);

	case_attributes();
	struct kind kinds[] = {
		{ "default", ATTR_NONE, 0, BY_INIT, 0 },
		{ "prefer-reader", PTHREAD_RWLOCK_PREFER_READER_NP, 0, BY_INIT, 0 },
		{ "prefer-writer", PTHREAD_RWLOCK_PREFER_WRITER_NP, 0, BY_INIT, 0 },
		{ "writer-nonrecursive", PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP, 0, BY_INIT, 0 },
		{ "pshared", PTHREAD_RWLOCK_PREFER_READER_NP, 1, BY_INIT, 0 },
		{ "pshared-writer-nonrecursive", PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP, 1, BY_INIT, 0 },
		{ "static", PTHREAD_RWLOCK_PREFER_READER_NP, 0, BY_STATIC, &static_default },
		{ "static-writer-nonrecursive", PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP, 0, BY_STATIC,
		  &static_nonrecursive },
	};
	int n = (int)(sizeof kinds / sizeof kinds[0]);
	for (int i = 0; i < n; i++) {
		if (!kinds[i].l)
			kinds[i].l = &pool[i];
		run_kind(&kinds[i]);
	}
	case_fork_shared(PTHREAD_RWLOCK_PREFER_READER_NP);
	case_fork_shared(PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	case_fork_private();
	case_unlock_free();

	static pthread_spinlock_t spin_private, spin_odd;
	run_spin("spin-private", &spin_private, PTHREAD_PROCESS_PRIVATE);
	run_spin("spin-pshared", &sh->s, PTHREAD_PROCESS_SHARED);
	run_spin("spin-odd-pshared", &spin_odd, 42);
	case_fork_spin();
	case_counters();

	helper_start(NULL, NULL);
	pthread_join(helper.thread, NULL);
	printf("done\n");
	return 0;
}
