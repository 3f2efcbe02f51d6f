/* deadlocks.c - the scenarios of tests/deadlocks.sh: ways of taking mutexes
 * whose lock-order verdict is known, one per argument.  Some must be
 * reported (an inversion that did not hang this time, a self-deadlock, a
 * thread that ended holding a mutex); the others must not be (a false
 * report is a bug): trylock back-off, recursive relocks, out-of-order
 * unlocks, condition waits, a mutex's new life after destroy or init.
 *
 * Nothing here deadlocks except self_relock, which tests/deadlocks.sh kills
 * once it sleeps in the kernel.  Threads take turns through semaphores and
 * joins (and, where a thread must be blocked in a lock, a poll of the lock
 * word), never through sleeps alone; semaphores and stdio take no pthread
 * mutex, so the only mutexes in the report are the scenario's own.  Each
 * scenario prints
 *
 *   mutex NAME ADDRESS     the mutexes it uses
 *   thread ROLE TID        the kernel thread id of each thread it starts
 *
 * so the test can find them in the report; each lock call whose line the
 * report should name carries a marker comment (grep -n finds its line),
 * and checks its result on that line, so the return address a stack holds
 * is on it too.  A scenario that finds glibc answering other than expected
 * exits 3.
 *
 *   static_abba         two threads, A then B and B then A (static
 *                       initialisers; the second lock waits)
 *   one_thread          one thread, A then B, later B then A
 *   new_link            ghostscript's ICC link cache: holding A (the cache),
 *                       make B (a link's mutex) and lock it, let go of A;
 *                       later take A holding B (B then A); every B new
 *   new_link_retaken    the same, then A then B again, B no longer new
 *   new_link_later_hold B made holding A, A let go and taken again, then B
 *                       first locked: another hold, not new
 *   new_link_ring       A, a new B, then C; A let go and taken holding C:
 *                       a ring of three by one thread through a new mutex
 *   ring N              N threads (2-64), thread i takes M[i] then M[i+1 mod N]
 *   one_ring N          one thread walks a ring of N mutexes hand over hand
 *                       (a log's ring of buffers: take the next, let go of
 *                       the current), twice round
 *   two_cycles          A/B inverted by two threads, B/C by two others, at
 *                       the same lines: one finding, closed twice
 *   two_inversions      A/B inverted at two lines, C/D at two others
 *   shared_helper       A/B inverted through pair_ab, C/D through pair_cd,
 *                       both calling one helper that takes the two mutexes
 *   wrapped_bystander   a function takes A, then B, one at a time, first;
 *                       then A/B inverted by wrapped_ab and wrapped_ba, every
 *                       lock through one wrapper
 *   gone_abba           thread "early" takes A then B and ends; then thread
 *                       "late" takes B then A (the finding names both)
 *   destroyed_abba      A/B inverted by two threads, then both destroyed
 *   lives N             N times: init A and B, A/B inverted by two threads,
 *                       destroy both (other mutexes each time, same code)
 *   ring_destroyed N    ring N, then every mutex of it destroyed
 *   unlocked_elsewhere  A locked by one thread, unlocked by another (misuse)
 *   self_relock         locks a normal mutex it holds: never returns
 *   self_released       the same, and another thread unlocks it (a
 *                       misuse) once it waits: the relock returns
 *   self_errorcheck     relocks an errorcheck mutex 3 times: EDEADLK
 *   self_crowded        200 errorcheck mutexes relocked (EDEADLK), then
 *                       a timed relock of a normal mutex: ETIMEDOUT
 *   self_died_errorcheck  a robust errorcheck mutex whose owner died, got
 *                       with EOWNERDEAD (its owner field reads
 *                       "inconsistent"), relocked twice: EDEADLK
 *   self_died_timed     the same of a normal robust mutex, relocked with a
 *                       timeout: ETIMEDOUT
 *   self_timed          timed relock of a normal mutex: ETIMEDOUT (after two
 *                       with deadlines glibc refuses: EINVAL, no wait)
 *   self_timed_signal   the same, a signal handler waiting for B inside it
 *   self_trylock        trylock of mutexes it holds: EBUSY, no finding
 *   recursive           recursive relocks, one while holding another mutex
 *   trylock_backoff     B then trylock A, backing off when A is busy
 *   trylock_then_lock   trylock A succeeds, then lock B; elsewhere B then A
 *   gate                G, then A, B in one thread and B, A in the other
 *   gate_partial        the same, but one thread does not take G
 *   unlock_out_of_order A, B, C let go as B, A, C in 4 threads at once
 *   condvar             producer/consumer, and a waiter under an outer mutex
 *   timed_inversion     B held, timedlock A (held elsewhere) times out
 *   clock_inversion     the same with pthread_mutex_clocklock
 *   reinit_destroy_swap A, B; destroy, init again; B, A
 *   reinit_init_swap    A, B; init again without destroy; B, A
 *   reinit_destroy_same A, B; destroy, init; A, B again; elsewhere B, A
 *   reinit_init_same    A, B; init again; A, B again; elsewhere B, A
 *   held_at_exit        threads that end holding mutexes (return, pthread_exit)
 *   many_held           65 mutexes held, let go oldest first, then another
 *   clean N             a consistent order in two threads; exits with N
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "proc_wait.h"

static void check_rc(int rc, int want, const char *call, int line)
{
	if (rc != want) {
		fprintf(stderr, "deadlocks.c:%d: %s = %s, want %s\n", line, call,
			rc ? strerror(rc) : "0", want ? strerror(want) : "0");
		exit(3);
	}
}
#undef CHECK /* proc_wait.h's: this file's takes the answer wanted */
#define CHECK(call, want) check_rc((call), (want), #call, __LINE__)
#define LOCK(m) CHECK(pthread_mutex_lock(m), 0)
#define UNLOCK(m) CHECK(pthread_mutex_unlock(m), 0)

static void say_mutex(const char *name, pthread_mutex_t *m)
{
	printf("mutex %s %p\n", name, (void *)m);
}

static void say_thread(const char *role)
{
	printf("thread %s %ld\n", role, (long)syscall(SYS_gettid));
}

static void say_thread_n(const char *role, int i)
{
	char name[32];
	snprintf(name, sizeof name, "%s%d", role, i);
	say_thread(name);
}

static void init_mutex(pthread_mutex_t *m, int type)
{
	pthread_mutexattr_t attr;
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, type);
	CHECK(pthread_mutex_init(m, &attr), 0);
	pthread_mutexattr_destroy(&attr);
}

/* An absolute deadline `ms` from now on `clock`. */
static struct timespec deadline(clockid_t clock, long ms)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	ts.tv_nsec += ms * 1000000;
	ts.tv_sec += ts.tv_nsec / 1000000000;
	ts.tv_nsec %= 1000000000;
	return ts;
}

/* glibc sets the lock word to 2 once a thread blocks in the kernel for it
 * (see examples/blame.c): wait for that, polling. */
static void wait_until_blocked(pthread_mutex_t *m)
{
	while (__atomic_load_n(&m->__data.__lock, __ATOMIC_RELAXED) != 2)
		usleep(100);
}

/* ---- taking turns -------------------------------------------------------
 * in_turns(n, job): n threads, all alive at once, run job(0), job(1), ...
 * job(n-1) one after another: thread i waits for turn[i], then passes the
 * turn on. */
#define MAX_TURNS 64
static sem_t turn[MAX_TURNS + 1];
static void (*turn_job)(int);

static void *take_turn(void *arg)
{
	int i = (int)(intptr_t)arg;
	sem_wait(&turn[i]);
	turn_job(i);
	sem_post(&turn[i + 1]);
	return NULL;
}

static void in_turns(int n, void (*job)(int))
{
	pthread_t tid[MAX_TURNS];
	turn_job = job;
	for (int i = 0; i <= n; i++)
		sem_init(&turn[i], 0, 0);
	for (int i = 0; i < n; i++)
		CHECK(pthread_create(&tid[i], NULL, take_turn, (void *)(intptr_t)i), 0);
	sem_post(&turn[0]);
	for (int i = 0; i < n; i++)
		CHECK(pthread_join(tid[i], NULL), 0);
	sem_wait(&turn[n]);
	for (int i = 0; i <= n; i++)
		sem_destroy(&turn[i]);
}

/* Two threads at once, each running its own function, for scenarios whose
 * threads take turns more than once (semaphores of their own). */
static void both(void *(*one)(void *), void *(*two)(void *))
{
	pthread_t t1, t2;
	CHECK(pthread_create(&t1, NULL, one, NULL), 0);
	CHECK(pthread_create(&t2, NULL, two, NULL), 0);
	CHECK(pthread_join(t1, NULL), 0);
	CHECK(pthread_join(t2, NULL), 0);
}

static pthread_mutex_t ma, mb, mc, md, mg;
static sem_t s1, s2, s3;

static void init_abcd(void)
{
	init_mutex(&ma, PTHREAD_MUTEX_NORMAL);
	init_mutex(&mb, PTHREAD_MUTEX_NORMAL);
	init_mutex(&mc, PTHREAD_MUTEX_NORMAL);
	init_mutex(&md, PTHREAD_MUTEX_NORMAL);
	say_mutex("A", &ma);
	say_mutex("B", &mb);
	say_mutex("C", &mc);
	say_mutex("D", &md);
	sem_init(&s1, 0, 0);
	sem_init(&s2, 0, 0);
	sem_init(&s3, 0, 0);
}

/* ---- static_abba: reported ---------------------------------------------
 * Thread 1 takes A then B and keeps A; thread 2 takes B and blocks on A
 * (so this edge comes from the waiting path) until thread 1 lets A go. */
static pthread_mutex_t sa = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t sb = PTHREAD_MUTEX_INITIALIZER;

static void *static_abba_1(void *arg)
{
	(void)arg;
	say_thread("t1");
	CHECK(pthread_mutex_lock(&sa), 0); /* STATIC_T1_A */
	CHECK(pthread_mutex_lock(&sb), 0); /* STATIC_T1_B */
	UNLOCK(&sb);
	sem_post(&s1);     /* thread 2 may take B, then wait for A */
	wait_until_blocked(&sa);
	UNLOCK(&sa);
	return NULL;
}

static void *static_abba_2(void *arg)
{
	(void)arg;
	sem_wait(&s1);
	say_thread("t2");
	CHECK(pthread_mutex_lock(&sb), 0); /* STATIC_T2_B */
	CHECK(pthread_mutex_lock(&sa), 0); /* STATIC_T2_A */
	UNLOCK(&sa);
	UNLOCK(&sb);
	return NULL;
}

static int static_abba(void)
{
	say_mutex("A", &sa);
	say_mutex("B", &sb);
	sem_init(&s1, 0, 0);
	both(static_abba_1, static_abba_2);
	return 0;
}

/* ---- one_thread: reported, with the one-thread note ------------------- */
static int one_thread(void)
{
	init_abcd();
	say_thread("main");
	for (int i = 0; i < 3; i++) {
		CHECK(pthread_mutex_lock(&ma), 0); /* ONE_AB_A */
		CHECK(pthread_mutex_lock(&mb), 0); /* ONE_AB_B */
		UNLOCK(&mb);
		UNLOCK(&ma);
	}
	CHECK(pthread_mutex_lock(&mb), 0); /* ONE_BA_B */
	CHECK(pthread_mutex_lock(&ma), 0); /* ONE_BA_A */
	UNLOCK(&ma);
	UNLOCK(&mb);
	return 0;
}

/* ---- a mutex made in a critical section (ghostscript's ICC links) -------
 * The cache's lock A is held while a link is made and its mutex B locked,
 * "owned by this thread until built"; the builder then takes A holding B.
 * A then B happens only on a B no other thread can reach yet. */
struct link {
	pthread_mutex_t lock;
	int valid;
};

static struct link *link_made(int lock_now)
{
	struct link *l = malloc(sizeof *l);
	if (!l)
		exit(2);
	CHECK(pthread_mutex_init(&l->lock, NULL), 0);
	l->valid = 0;
	if (lock_now)
		CHECK(pthread_mutex_lock(&l->lock), 0); /* NEW_LINK_B */
	return l;
}

static void link_built(struct link *l)
{
	CHECK(pthread_mutex_lock(&ma), 0); /* NEW_LINK_BA_A */
	l->valid = 1;
	UNLOCK(&l->lock);
	UNLOCK(&ma);
}

/* how: 0 as ghostscript, 1 then A then B once more (B not new), 2 B made in
 * an earlier hold of A */
static int new_link(int how)
{
	init_abcd();
	say_thread("main");
	struct link *l;
	CHECK(pthread_mutex_lock(&ma), 0); /* NEW_LINK_A */
	l = link_made(how != 2);
	say_mutex("L", &l->lock);
	if (how == 2) {
		UNLOCK(&ma);
		CHECK(pthread_mutex_lock(&ma), 0);
		CHECK(pthread_mutex_lock(&l->lock), 0); /* LATER_HOLD_B */
	}
	UNLOCK(&ma);
	link_built(l);
	if (how == 1) {
		CHECK(pthread_mutex_lock(&ma), 0); /* RETAKEN_A */
		CHECK(pthread_mutex_lock(&l->lock), 0); /* RETAKEN_B */
		UNLOCK(&l->lock);
		UNLOCK(&ma);
	}
	CHECK(pthread_mutex_destroy(&l->lock), 0);
	free(l);
	return 0;
}

static int new_link_ring(void)
{
	init_abcd();
	say_thread("main");
	CHECK(pthread_mutex_lock(&ma), 0);
	struct link *l = link_made(1); /* A -> L, L new */
	say_mutex("L", &l->lock);
	CHECK(pthread_mutex_lock(&mc), 0); /* L -> C */
	UNLOCK(&ma);
	CHECK(pthread_mutex_lock(&ma), 0); /* C -> A */
	UNLOCK(&ma);
	UNLOCK(&mc);
	UNLOCK(&l->lock);
	CHECK(pthread_mutex_destroy(&l->lock), 0);
	free(l);
	return 0;
}

/* ---- ring N: one finding of N mutexes --------------------------------- */
static pthread_mutex_t ring_m[MAX_TURNS];
static int ring_n;

static void ring_step(int i)
{
	say_thread_n("t", i);
	for (int round = 0; round < 2; round++) {
		CHECK(pthread_mutex_lock(&ring_m[i]), 0); /* RING_FIRST */
		CHECK(pthread_mutex_lock(&ring_m[(i + 1) % ring_n]), 0); /* RING_SECOND */
		UNLOCK(&ring_m[(i + 1) % ring_n]);
		UNLOCK(&ring_m[i]);
	}
}

/* The ring's n mutexes M0..Mn-1, made and named. */
static void ring_make(int n)
{
	ring_n = n;
	for (int i = 0; i < n; i++) {
		char name[16];
		snprintf(name, sizeof name, "M%d", i);
		init_mutex(&ring_m[i], PTHREAD_MUTEX_NORMAL);
		say_mutex(name, &ring_m[i]);
	}
}

static int ring(int n)
{
	ring_make(n);
	in_turns(n, ring_step);
	return 0;
}

/* ---- one_ring N: a ring one thread walks ------------------------------ */
static int one_ring(int n)
{
	ring_make(n);
	say_thread("main");
	CHECK(pthread_mutex_lock(&ring_m[0]), 0);
	for (int step = 0; step < 2 * n; step++) {
		CHECK(pthread_mutex_lock(&ring_m[(step + 1) % n]), 0); /* ONE_RING_NEXT */
		UNLOCK(&ring_m[step % n]);
	}
	UNLOCK(&ring_m[0]);
	return 0;
}

/* ---- two_cycles: one finding, closed twice --------------------------------
 * A/B inverted by threads 1 and 2, B/C by threads 3 and 4, all at the same
 * two lines: two cycles that share B, of one piece of code, so one
 * finding (as a transfer(from, to) that takes its locks in argument order
 * would make one for every pair of accounts). */
static void two_cycles_step(int i)
{
	say_thread_n("t", i + 1);
	pthread_mutex_t *first[] = { &ma, &mb, &mb, &mc };
	pthread_mutex_t *second[] = { &mb, &ma, &mc, &mb };
	CHECK(pthread_mutex_lock(first[i]), 0); /* TWO_FIRST */
	CHECK(pthread_mutex_lock(second[i]), 0); /* TWO_SECOND */
	UNLOCK(second[i]);
	UNLOCK(first[i]);
}

static int two_cycles(void)
{
	init_abcd();
	in_turns(4, two_cycles_step);
	return 0;
}

/* ---- two_inversions: two findings -------------------------------------------
 * A/B inverted at lines of their own, C/D at two other pairs of lines. */
static void two_inversions_step(int i)
{
	say_thread_n("t", i + 1);
	if (i == 0) {
		LOCK(&ma); /* INV1_A */
		LOCK(&mb); /* INV1_B */
		UNLOCK(&mb);
		UNLOCK(&ma);
	} else if (i == 1) {
		LOCK(&mb); /* INV1_BACK_B */
		LOCK(&ma); /* INV1_BACK_A */
		UNLOCK(&ma);
		UNLOCK(&mb);
	} else if (i == 2) {
		LOCK(&mc); /* INV2_C */
		LOCK(&md); /* INV2_D */
		UNLOCK(&md);
		UNLOCK(&mc);
	} else {
		LOCK(&md); /* INV2_BACK_D */
		LOCK(&mc); /* INV2_BACK_C */
		UNLOCK(&mc);
		UNLOCK(&md);
	}
}

static int two_inversions(void)
{
	init_abcd();
	in_turns(4, two_inversions_step);
	return 0;
}

/* ---- ungated_later: one inversion, taken again another way ---------------
 * A -> B under gate G, then B -> A by the same thread (all by one
 * thread: one POTENTIAL DEADLOCK); then another thread takes A -> B
 * without G.  The same two mutex lives, the same inversion: still one
 * finding, now shown as two threads' (the surer way it deadlocks). */
static __attribute__((noinline)) void ungated_a_then_b(void)
{
	LOCK(&ma);
	LOCK(&mb); /* UNGATED_AB */
	UNLOCK(&mb);
	UNLOCK(&ma);
}

static __attribute__((noinline)) void ungated_pair_ab(pthread_mutex_t *x, pthread_mutex_t *y)
{
	LOCK(x);
	LOCK(y);
	UNLOCK(y);
	UNLOCK(x);
}

static void *ungated_thread(void *arg)
{
	ungated_a_then_b();
	return arg;
}

static int ungated_later(void)
{
	init_abcd();
	LOCK(&mg);
	ungated_a_then_b();
	UNLOCK(&mg);
	LOCK(&mb);
	LOCK(&ma); /* UNGATED_BA */
	UNLOCK(&ma);
	UNLOCK(&mb);
	pthread_t t;
	CHECK(pthread_create(&t, NULL, ungated_thread, NULL), 0);
	CHECK(pthread_join(t, NULL), 0);
	return 0;
}

/* ---- ungated_count: the same, after the code closed two pairs -------------
 * A -> B under G then B -> A, and C -> D under G then D -> C, at the same
 * code: one finding closed 2 times.  Another thread then takes A -> B
 * without G: a finding of its own, closed once there; the old one stays,
 * for C and D as much as for A and B. */
static __attribute__((noinline)) void gated_pair(pthread_mutex_t *x, pthread_mutex_t *y)
{
	LOCK(&mg);
	ungated_pair_ab(x, y);
	UNLOCK(&mg);
	LOCK(y);
	LOCK(x);
	UNLOCK(x);
	UNLOCK(y);
}

static void *ungated_ab_thread(void *arg)
{
	ungated_pair_ab(&ma, &mb);
	return arg;
}

static int ungated_count(void)
{
	init_abcd();
	pthread_mutex_t *pairs[2][2] = { { &ma, &mb }, { &mc, &md } };
	for (volatile int i = 0; i < 2; i++) /* one call site: the same code */
		gated_pair(pairs[i][0], pairs[i][1]);
	pthread_t t;
	CHECK(pthread_create(&t, NULL, ungated_ab_thread, NULL), 0);
	CHECK(pthread_join(t, NULL), 0);
	return 0;
}

/* ---- shared_helper: two findings whose first frame is one helper's --------
 * The rule each finding suggests must name its own caller of the helper:
 * one naming the helper would leave both out. */
static volatile int helper_calls;

static __attribute__((noinline)) void lock_pair(pthread_mutex_t *x, pthread_mutex_t *y)
{
	LOCK(x);
	LOCK(y); /* PAIR_SECOND */
	UNLOCK(y);
	UNLOCK(x);
	helper_calls++;
}

static __attribute__((noinline)) void pair_ab(int back)
{
	if (back)
		lock_pair(&mb, &ma);
	else
		lock_pair(&ma, &mb);
	helper_calls++; /* no tail call: pair_ab stays in the stack */
}

static __attribute__((noinline)) void pair_cd(int back)
{
	if (back)
		lock_pair(&md, &mc);
	else
		lock_pair(&mc, &md);
	helper_calls++;
}

static void shared_helper_step(int i)
{
	say_thread_n("t", i + 1);
	if (i < 2)
		pair_ab(i);
	else
		pair_cd(i - 2);
}

static int shared_helper(void)
{
	init_abcd();
	in_turns(4, shared_helper_step);
	return 0;
}

/* ---- wrapped_bystander: the first lock of A and B by code of no cycle -----
 * Every lock goes through lock_or_fail, a wrapper, so the finding's lock
 * lines show where each mutex was first locked past it: bystander, which
 * takes no part in the inversion.  The rule the finding suggests must name
 * code of the cycle, not bystander: that one would leave out nothing
 * bystander does wrong and every later cycle of A and B. */
static volatile int wrapped_calls;

static __attribute__((noinline)) void lock_or_fail(pthread_mutex_t *m)
{
	LOCK(m);
	wrapped_calls++;
}

static __attribute__((noinline)) void bystander(void)
{
	lock_or_fail(&ma);
	UNLOCK(&ma);
	lock_or_fail(&mb);
	UNLOCK(&mb);
	wrapped_calls++;
}

static __attribute__((noinline)) void wrapped_ab(void)
{
	lock_or_fail(&ma);
	lock_or_fail(&mb);
	UNLOCK(&mb);
	UNLOCK(&ma);
	wrapped_calls++;
}

static __attribute__((noinline)) void wrapped_ba(void)
{
	lock_or_fail(&mb);
	lock_or_fail(&ma);
	UNLOCK(&ma);
	UNLOCK(&mb);
	wrapped_calls++;
}

static void wrapped_step(int i)
{
	say_thread_n("t", i + 1);
	if (i == 0)
		wrapped_ab();
	else
		wrapped_ba();
}

static int wrapped_bystander(void)
{
	init_abcd();
	bystander();
	in_turns(2, wrapped_step);
	return 0;
}

/* ---- gone_abba: a finding's thread that ended before it was made ---------- */
static void *early(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "early");
	say_thread("early");
	LOCK(&ma);
	LOCK(&mb);
	UNLOCK(&mb);
	UNLOCK(&ma);
	return NULL;
}

static void *late(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "late");
	say_thread("late");
	LOCK(&mb);
	LOCK(&ma);
	UNLOCK(&ma);
	UNLOCK(&mb);
	return NULL;
}

static int gone_abba(void)
{
	pthread_t t;
	init_abcd();
	CHECK(pthread_create(&t, NULL, early, NULL), 0);
	CHECK(pthread_join(t, NULL), 0);
	CHECK(pthread_create(&t, NULL, late, NULL), 0);
	CHECK(pthread_join(t, NULL), 0);
	return 0;
}

/* ---- destroyed_abba, lives N: the finding outlives its mutexes -------------
 * Thread 1 takes A then B, thread 2 B then A, one after the other; then
 * main destroys both.  lives N does it N times, each time with mutexes
 * made anew (a clean shutdown of objects that each carry a lock). */
static pthread_mutex_t *life_a, *life_b;

static void lives_step(int i)
{
	if (i == 0) {
		LOCK(life_a); /* LIVES_T1_A */
		LOCK(life_b); /* LIVES_T1_B */
		UNLOCK(life_b);
		UNLOCK(life_a);
	} else {
		LOCK(life_b); /* LIVES_T2_B */
		LOCK(life_a); /* LIVES_T2_A */
		UNLOCK(life_a);
		UNLOCK(life_b);
	}
}

static int lives(int n)
{
	for (int round = 0; round < n; round++) {
		/* on the heap, as objects' locks are: new addresses or old
		 * ones again, as malloc gives them */
		life_a = malloc(sizeof *life_a);
		life_b = malloc(sizeof *life_b);
		init_mutex(life_a, PTHREAD_MUTEX_NORMAL);
		init_mutex(life_b, PTHREAD_MUTEX_NORMAL);
		if (round == 0) {
			say_mutex("A", life_a);
			say_mutex("B", life_b);
		}
		in_turns(2, lives_step);
		CHECK(pthread_mutex_destroy(life_a), 0); /* LIVES_DESTROY_A */
		CHECK(pthread_mutex_destroy(life_b), 0); /* LIVES_DESTROY_B */
		free(life_a);
		free(life_b);
	}
	printf("%d rounds\n", n);
	return 0;
}

/* ---- ring_destroyed N: ring N, then its mutexes destroyed ------------------- */
static int ring_destroyed(int n)
{
	ring(n);
	for (int i = 0; i < n; i++)
		CHECK(pthread_mutex_destroy(&ring_m[i]), 0); /* RING_DESTROY */
	return 0;
}

/* ---- unlocked_elsewhere: a MISUSE, and no other finding ----------------------
 * Thread 1 locks A; thread 2 unlocks it (misuse: glibc lets a normal mutex
 * go); thread 1, holding nothing now, takes B and ends; thread 3 takes B
 * then A.  Thread 1 never held A and B at once, and ended holding nothing. */
static void unlocked_elsewhere_step(int i)
{
	say_thread_n("t", i + 1);
	if (i == 0) {
		LOCK(&ma);
		sem_post(&s2);
		sem_wait(&s1); /* thread 2 let A go */
		LOCK(&mb);
		UNLOCK(&mb);
	} else if (i == 1) {
		sem_wait(&s2);
		CHECK(pthread_mutex_unlock(&ma), 0); /* ELSEWHERE_UNLOCK */
		sem_post(&s1);
	} else {
		LOCK(&mb);
		LOCK(&ma);
		UNLOCK(&ma);
		UNLOCK(&mb);
	}
}

static void *unlocked_elsewhere_thread(void *arg)
{
	unlocked_elsewhere_step((int)(intptr_t)arg);
	return NULL;
}

static int unlocked_elsewhere(void)
{
	init_abcd();
	pthread_t t[3];
	/* threads 1 and 2 at once (they hand A over), then thread 3 */
	for (int i = 0; i < 2; i++)
		CHECK(pthread_create(&t[i], NULL, unlocked_elsewhere_thread, (void *)(intptr_t)i), 0);
	for (int i = 0; i < 2; i++)
		CHECK(pthread_join(t[i], NULL), 0);
	CHECK(pthread_create(&t[2], NULL, unlocked_elsewhere_thread, (void *)(intptr_t)2), 0);
	CHECK(pthread_join(t[2], NULL), 0);
	return 0;
}

/* ---- self-deadlocks ----------------------------------------------------- */
static int self_relock(void)
{
	init_abcd();
	say_thread("main");
	CHECK(pthread_mutex_lock(&ma), 0); /* SELF_FIRST */
	printf("relocking\n");
	fflush(stdout);
	CHECK(pthread_mutex_lock(&ma), 0); /* SELF_AGAIN */
	printf("the relock returned\n");
	return 1;
}

static void *unlock_when_waited(void *arg)
{
	wait_until_blocked(&ma);
	CHECK(pthread_mutex_unlock(&ma), 0); /* RELEASED_BY_OTHER */
	return arg;
}

static int self_released(void)
{
	init_abcd();
	say_thread("main");
	CHECK(pthread_mutex_lock(&ma), 0);
	pthread_t t;
	CHECK(pthread_create(&t, NULL, unlock_when_waited, NULL), 0);
	CHECK(pthread_mutex_lock(&ma), 0); /* RELEASED_AGAIN */
	UNLOCK(&ma);
	CHECK(pthread_join(t, NULL), 0);
	printf("the relock returned\n");
	return 0;
}

static int self_errorcheck(void)
{
	pthread_mutex_t e;
	init_mutex(&e, PTHREAD_MUTEX_ERRORCHECK);
	say_mutex("E", &e);
	say_thread("main");
	CHECK(pthread_mutex_lock(&e), 0); /* ERRCHECK_FIRST */
	for (int i = 0; i < 3; i++)
		CHECK(pthread_mutex_lock(&e), EDEADLK); /* ERRCHECK_AGAIN */
	UNLOCK(&e);
	printf("EDEADLK 3 times, and on\n");
	return 0;
}

/* self_crowded: 200 errorcheck mutexes (on the heap, all alive at once,
 * so that each relock is its own finding: those of later lives by the
 * same code would count on the first's) relocked once each, then a timed
 * relock of a normal mutex: the relocks refused take at most half the
 * findings' room, and the SELF-DEADLOCK after them is kept. */
static int self_crowded(void)
{
	init_abcd();
	say_thread("main");
	pthread_mutex_t *e[200];
	for (int i = 0; i < 200; i++) {
		e[i] = malloc(sizeof *e[i]);
		init_mutex(e[i], PTHREAD_MUTEX_ERRORCHECK);
		CHECK(pthread_mutex_lock(e[i]), 0);
		CHECK(pthread_mutex_lock(e[i]), EDEADLK);
		UNLOCK(e[i]);
	}
	for (int i = 0; i < 200; i++) {
		CHECK(pthread_mutex_destroy(e[i]), 0);
		free(e[i]);
	}
	CHECK(pthread_mutex_lock(&ma), 0);
	struct timespec until = deadline(CLOCK_REALTIME, 20);
	CHECK(pthread_mutex_timedlock(&ma, &until), ETIMEDOUT);
	UNLOCK(&ma);
	printf("200 EDEADLK, ETIMEDOUT, and on\n");
	return 0;
}

/* The same relock of an error-checking mutex that is robust or priority-
 * inheriting ("robust", "pi"): glibc's try answers EDEADLK itself. */
static int self_errorcheck_as(const char *how)
{
	pthread_mutex_t e;
	pthread_mutexattr_t attr;
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK);
	if (!strcmp(how, "robust"))
		pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
	else
		pthread_mutexattr_setprotocol(&attr, PTHREAD_PRIO_INHERIT);
	CHECK(pthread_mutex_init(&e, &attr), 0);
	pthread_mutexattr_destroy(&attr);
	say_mutex("E", &e);
	say_thread("main");
	CHECK(pthread_mutex_lock(&e), 0);
	for (int i = 0; i < 2; i++)
		CHECK(pthread_mutex_lock(&e), EDEADLK); /* ERRCHECK_AS_AGAIN */
	UNLOCK(&e);
	printf("EDEADLK 2 times, and on\n");
	return 0;
}

static void *die_holding(void *m)
{
	LOCK(m);
	return NULL; /* the thread ends holding it */
}

/* A robust mutex of `type` whose owner died, got by this thread: glibc
 * answers EOWNERDEAD, and its owner field reads "inconsistent" until
 * pthread_mutex_consistent(). */
static void got_after_death(pthread_mutex_t *m, int type)
{
	pthread_mutexattr_t attr;
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, type);
	pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
	CHECK(pthread_mutex_init(m, &attr), 0);
	pthread_mutexattr_destroy(&attr);
	say_mutex("E", m);
	say_thread("main");
	pthread_t t;
	CHECK(pthread_create(&t, NULL, die_holding, m), 0);
	CHECK(pthread_join(t, NULL), 0);
	CHECK(pthread_mutex_lock(m), EOWNERDEAD); /* DIED_FIRST */
}

/* Relocks before the repair: the thread holds it all the same. */
static int self_died(int timed)
{
	pthread_mutex_t e;
	got_after_death(&e, timed ? PTHREAD_MUTEX_NORMAL : PTHREAD_MUTEX_ERRORCHECK);
	if (timed) {
		struct timespec until = deadline(CLOCK_REALTIME, 50);
		CHECK(pthread_mutex_timedlock(&e, &until), ETIMEDOUT); /* DIED_TIMED_AGAIN */
	} else
		for (int i = 0; i < 2; i++)
			CHECK(pthread_mutex_lock(&e), EDEADLK); /* DIED_AGAIN */
	CHECK(pthread_mutex_consistent(&e), 0);
	UNLOCK(&e);
	printf("%s, and on\n", timed ? "ETIMEDOUT" : "EDEADLK 2 times");
	return 0;
}

static int self_timed(void)
{
	init_abcd();
	say_thread("main");
	CHECK(pthread_mutex_lock(&ma), 0); /* TIMED_FIRST */
	/* deadlines glibc refuses once it would wait: no wait, no finding */
	struct timespec bad = { 0, 2000000000L }, negative = { 0, -1 };
	CHECK(pthread_mutex_timedlock(&ma, &bad), EINVAL);
	CHECK(pthread_mutex_clocklock(&ma, CLOCK_MONOTONIC, &negative), EINVAL);
	struct timespec until = deadline(CLOCK_REALTIME, 50);
	CHECK(pthread_mutex_timedlock(&ma, &until), ETIMEDOUT); /* TIMED_AGAIN */
	UNLOCK(&ma);
	printf("ETIMEDOUT, and on\n");
	return 0;
}

/* self_timed, with a signal handler's wait inside the timed relock's: a
 * SIGALRM handler locks B, which a helper holds until the handler sleeps
 * on it.  Both waits are counted as waiters while they last, and neither
 * is left counted after (the relock's was, once the handler's wait had
 * cleared what the thread showed: "most waiters at once 1 (1 now)" at
 * exit). */
static void lock_b_in_handler(int sig)
{
	(void)sig;
	LOCK(&mb);
	UNLOCK(&mb);
}

static void *hold_b_until_waited(void *arg)
{
	(void)arg;
	LOCK(&mb);
	sem_post(&s1);
	/* glibc marks a mutex with a sleeping waiter by __lock == 2 */
	while (__atomic_load_n(&mb.__data.__lock, __ATOMIC_RELAXED) != 2)
		usleep(1000);
	UNLOCK(&mb);
	return NULL;
}

static int self_timed_signal(void)
{
	init_abcd();
	say_thread("main");
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = lock_b_in_handler;
	sigaction(SIGALRM, &sa, NULL);
	pthread_t t;
	CHECK(pthread_create(&t, NULL, hold_b_until_waited, NULL), 0);
	sem_wait(&s1);
	LOCK(&ma);
	ualarm(50000, 0);
	struct timespec until = deadline(CLOCK_REALTIME, 500);
	CHECK(pthread_mutex_timedlock(&ma, &until), ETIMEDOUT);
	UNLOCK(&ma);
	CHECK(pthread_join(t, NULL), 0);
	printf("ETIMEDOUT, and on\n");
	return 0;
}

static int self_trylock(void)
{
	pthread_mutex_t e;
	init_abcd();
	init_mutex(&e, PTHREAD_MUTEX_ERRORCHECK);
	say_mutex("E", &e);
	LOCK(&ma);
	CHECK(pthread_mutex_trylock(&ma), EBUSY);
	LOCK(&e);
	CHECK(pthread_mutex_trylock(&e), EBUSY);
	UNLOCK(&e);
	UNLOCK(&ma);
	return 0;
}

/* ---- recursive: no finding ---------------------------------------------
 * R, R again, B, then R a third time while holding B: that relock is no
 * B -> R order (R is held already), so with R -> B there is no cycle. */
static pthread_mutex_t mr;

static void recursive_step(int i)
{
	say_thread_n("t", i);
	LOCK(&mr);
	LOCK(&mr);
	LOCK(&mb);
	LOCK(&mr);
	UNLOCK(&mr);
	UNLOCK(&mb);
	UNLOCK(&mr);
	UNLOCK(&mr);
}

static int recursive(void)
{
	init_abcd();
	init_mutex(&mr, PTHREAD_MUTEX_RECURSIVE);
	say_mutex("R", &mr);
	in_turns(2, recursive_step);
	return 0;
}

/* ---- trylock_backoff: no finding ----------------------------------------
 * Thread 2 holds B and tries A while thread 1 holds A and waits for B: the
 * try fails, thread 2 backs off (lets B go), thread 1 goes on.  Thread 2
 * tries again later and this time gets A under B: a trylock cannot block,
 * so no B -> A order.  Then neither holds anything: thread 2 takes D (no
 * order into D: the failed try left nothing held), thread 1 D then A. */
static void *backoff_1(void *arg)
{
	(void)arg;
	say_thread("t1");
	sem_wait(&s1); /* thread 2 holds B */
	LOCK(&ma);
	sem_post(&s2); /* thread 2 may try A now */
	LOCK(&mb);     /* waits until thread 2 backs off */
	UNLOCK(&mb);
	UNLOCK(&ma);
	sem_post(&s3);
	sem_wait(&s1); /* thread 2 is done */
	LOCK(&md);
	LOCK(&ma);
	UNLOCK(&ma);
	UNLOCK(&md);
	return NULL;
}

static void *backoff_2(void *arg)
{
	(void)arg;
	say_thread("t2");
	LOCK(&mb);
	sem_post(&s1);
	sem_wait(&s2); /* thread 1 holds A, and will wait for B */
	CHECK(pthread_mutex_trylock(&ma), EBUSY);
	UNLOCK(&mb); /* back off */
	LOCK(&md);
	UNLOCK(&md);
	sem_wait(&s3); /* thread 1 is done with A and B */
	LOCK(&mb);
	CHECK(pthread_mutex_trylock(&ma), 0);
	UNLOCK(&ma);
	UNLOCK(&mb);
	sem_post(&s1);
	return NULL;
}

static int trylock_backoff(void)
{
	init_abcd();
	both(backoff_1, backoff_2);
	return 0;
}

/* ---- trylock_then_lock: reported ---------------------------------------
 * A mutex taken by trylock is held like any other: a lock of B under it is
 * the order A -> B. */
static void trylock_then_lock_step(int i)
{
	say_thread_n("t", i + 1);
	if (i == 0) {
		CHECK(pthread_mutex_lock(&mb), 0); /* TTL_T1_B */
		CHECK(pthread_mutex_lock(&ma), 0); /* TTL_T1_A */
		UNLOCK(&ma);
		UNLOCK(&mb);
	} else {
		CHECK(pthread_mutex_trylock(&ma), 0); /* TTL_T2_A */
		CHECK(pthread_mutex_lock(&mb), 0); /* TTL_T2_B */
		UNLOCK(&mb);
		UNLOCK(&ma);
	}
}

static int trylock_then_lock(void)
{
	init_abcd();
	in_turns(2, trylock_then_lock_step);
	return 0;
}

/* ---- gate, gate_partial --------------------------------------------------
 * Both threads take G first: the A/B inversion can never deadlock (guarded).
 * gate_partial: thread 2 skips G, and it can. */
static int gate_skipped;

static void gate_step(int i)
{
	say_thread_n("t", i + 1);
	int gated = !(i == 1 && gate_skipped);
	if (gated)
		CHECK(pthread_mutex_lock(&mg), 0); /* GATE_G */
	if (i == 0) {
		CHECK(pthread_mutex_lock(&ma), 0); /* GATE_T1_A */
		CHECK(pthread_mutex_lock(&mb), 0); /* GATE_T1_B */
	} else {
		CHECK(pthread_mutex_lock(&mb), 0); /* GATE_T2_B */
		CHECK(pthread_mutex_lock(&ma), 0); /* GATE_T2_A */
	}
	UNLOCK(&ma);
	UNLOCK(&mb);
	if (gated)
		UNLOCK(&mg);
}

static int gate(int skip)
{
	init_abcd();
	init_mutex(&mg, PTHREAD_MUTEX_NORMAL);
	say_mutex("G", &mg);
	gate_skipped = skip;
	in_turns(2, gate_step);
	return 0;
}

/* ---- gate_read, gate_read_write, gate_dropped, gate_weakened ---------------
 * An rwlock G as the gate.  gate_read: both threads hold G for read, and
 * readers are inside together: the inversion can deadlock.
 * gate_read_write: thread 1 writes G, thread 2 reads it: they exclude each
 * other, guarded.  gate_dropped: thread 1 takes A then B under G (a mutex),
 * then again without G; thread 2 takes B then A under G: thread 1's second
 * time can deadlock with thread 2 (the edge was in thread 1's cache, and
 * its second time was not looked at).  gate_weakened: the same, thread 1's
 * second time under G read where its first wrote G, thread 2 reading G.
 * gate_dropped_big, gate_weakened_big: the same, thread 1 having taken 400
 * other orders twice first (20 mutexes, each held while 20 others are
 * taken), which gives it the bigger cache of edges (order.c): its edges
 * are looked for there, gates and all.  gate_dropped_copied: the 400 taken
 * between thread 1's two times, so that the bigger cache is made with the
 * gated edge in the small one (copied there, with its gate). */
static pthread_rwlock_t gate_rw = PTHREAD_RWLOCK_INITIALIZER;
static int gate_how, gate_big;
enum { GATE_READ, GATE_READ_WRITE, GATE_DROPPED, GATE_WEAKENED };
#define WARM_LOCKS 20
static pthread_mutex_t warm_outer[WARM_LOCKS], warm_inner[WARM_LOCKS];

static void a_then_b(void);

/* With `gated`, A then B under G again after each of the 400: an edge the
 * small cache put out is remembered again at once, so it is there when
 * the bigger cache is made. */
static void warm_edges(int gated)
{
	for (int round = 0; round < 2; round++)
		for (int o = 0; o < WARM_LOCKS; o++) {
			for (int i = 0; i < WARM_LOCKS; i++) {
				CHECK(pthread_mutex_lock(&warm_outer[o]), 0);
				CHECK(pthread_mutex_lock(&warm_inner[i]), 0);
				UNLOCK(&warm_inner[i]);
				UNLOCK(&warm_outer[o]);
				if (gated) {
					CHECK(pthread_mutex_lock(&mg), 0);
					a_then_b();
					UNLOCK(&mg);
				}
			}
		}
}

static void gate_rw_lock(int read)
{
	if (read)
		CHECK(pthread_rwlock_rdlock(&gate_rw), 0);
	else
		CHECK(pthread_rwlock_wrlock(&gate_rw), 0);
}

static void a_then_b(void)
{
	CHECK(pthread_mutex_lock(&ma), 0); /* GATE_RW_A */
	CHECK(pthread_mutex_lock(&mb), 0); /* GATE_RW_B */
	UNLOCK(&mb);
	UNLOCK(&ma);
}

static void gate_rw_step(int i)
{
	say_thread_n("t", i + 1);
	if (i == 0) {
		if (gate_big == 1)
			warm_edges(0);
		if (gate_how == GATE_DROPPED) {
			CHECK(pthread_mutex_lock(&mg), 0);
			a_then_b();
			UNLOCK(&mg);
			if (gate_big == 2)
				warm_edges(1);
			a_then_b();
			return;
		}
		gate_rw_lock(gate_how == GATE_READ);
		a_then_b();
		CHECK(pthread_rwlock_unlock(&gate_rw), 0);
		if (gate_how == GATE_WEAKENED) {
			gate_rw_lock(1);
			a_then_b();
			CHECK(pthread_rwlock_unlock(&gate_rw), 0);
		}
		return;
	}
	if (gate_how == GATE_DROPPED)
		CHECK(pthread_mutex_lock(&mg), 0);
	else
		gate_rw_lock(1);
	CHECK(pthread_mutex_lock(&mb), 0); /* GATE_RW_T2_B */
	CHECK(pthread_mutex_lock(&ma), 0); /* GATE_RW_T2_A */
	UNLOCK(&ma);
	UNLOCK(&mb);
	if (gate_how == GATE_DROPPED)
		UNLOCK(&mg);
	else
		CHECK(pthread_rwlock_unlock(&gate_rw), 0);
}

static int gate_rw_run(int how, int big)
{
	init_abcd();
	init_mutex(&mg, PTHREAD_MUTEX_NORMAL);
	for (int i = 0; i < WARM_LOCKS; i++) {
		init_mutex(&warm_outer[i], PTHREAD_MUTEX_NORMAL);
		init_mutex(&warm_inner[i], PTHREAD_MUTEX_NORMAL);
	}
	gate_how = how;
	gate_big = big;
	in_turns(2, gate_rw_step);
	return 0;
}

/* ---- gate_broken: a guarded inversion, then its order without the gate ----
 * t1 takes A then B under G, t2 B then A under G: guarded.  t3 takes A then
 * B without G: a potential deadlock of the same two mutexes, closed once at
 * t3's code (it read "closed 2 times, by other mutexes each time at the
 * same code"). */
static void gate_broken_step(int i)
{
	say_thread_n("t", i + 1);
	if (i < 2)
		CHECK(pthread_mutex_lock(&mg), 0);
	if (i != 1) {
		CHECK(pthread_mutex_lock(&ma), 0);
		CHECK(pthread_mutex_lock(&mb), 0);
	} else {
		CHECK(pthread_mutex_lock(&mb), 0);
		CHECK(pthread_mutex_lock(&ma), 0);
	}
	UNLOCK(&ma);
	UNLOCK(&mb);
	if (i < 2)
		UNLOCK(&mg);
}

static int gate_broken(void)
{
	init_abcd();
	init_mutex(&mg, PTHREAD_MUTEX_NORMAL);
	in_turns(3, gate_broken_step);
	return 0;
}

/* ---- gate_two_pairs: the gated code closes one pair, another pair ungated
 * take_two() takes x then y, under G or not: A, B under G both ways (a
 * guarded inversion), then C, D both ways without G -- other mutexes
 * closed at the same code: "closed 2 times" (the count had stayed 1). */
static __attribute__((noinline)) void take_two(pthread_mutex_t *x, pthread_mutex_t *y)
{
	CHECK(pthread_mutex_lock(x), 0);
	CHECK(pthread_mutex_lock(y), 0);
	UNLOCK(y);
	UNLOCK(x);
}

static __attribute__((noinline)) void gate_on(pthread_mutex_t *g)
{
	if (g)
		CHECK(pthread_mutex_lock(g), 0);
}

static __attribute__((noinline)) void gate_off(pthread_mutex_t *g)
{
	if (g)
		UNLOCK(g);
}

static void two_pairs_step(int i)
{
	pthread_mutex_t *x[] = { &ma, &mb, &mc, &md }, *y[] = { &mb, &ma, &md, &mc };
	pthread_mutex_t *g = i < 2 ? &mg : NULL;
	gate_on(g);
	take_two(x[i], y[i]); /* one call site, gated or not */
	gate_off(g);
}

static int gate_two_pairs(void)
{
	init_abcd();
	init_mutex(&mg, PTHREAD_MUTEX_NORMAL);
	in_turns(4, two_pairs_step);
	return 0;
}

/* ---- self_chain: a thread waits behind one that relocked its mutex ------
 * The SELF-DEADLOCK is the one finding of the relock; the wait chain
 * behind it says so at exit (it said "waits in the DEADLOCK above", of a
 * DEADLOCK no longer printed). */
static int self_chain_tids[2];

static void *self_chain_relocks(void *arg)
{
	__atomic_store_n(&self_chain_tids[0], (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
	CHECK(pthread_mutex_lock(&ma), 0);
	CHECK(pthread_mutex_lock(&ma), 0); /* never returns */
	return arg;
}

static void *self_chain_behind(void *arg)
{
	__atomic_store_n(&self_chain_tids[1], (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
	CHECK(pthread_mutex_lock(&ma), 0); /* never returns */
	return arg;
}

/* until thread *tid (once known) sleeps in futex() on m */
static void self_chain_asleep(const int *tid, const pthread_mutex_t *m)
{
	int t;
	while (!(t = __atomic_load_n(tid, __ATOMIC_ACQUIRE)) || !sleeps_on_futex(t, m))
		usleep(1000);
}

static int self_chain(void)
{
	pthread_t a, b;
	init_abcd();
	CHECK(pthread_create(&a, NULL, self_chain_relocks, NULL), 0);
	self_chain_asleep(&self_chain_tids[0], &ma);
	CHECK(pthread_create(&b, NULL, self_chain_behind, NULL), 0);
	self_chain_asleep(&self_chain_tids[1], &ma);
	printf("thread relocker %d\nthread behind %d\n", self_chain_tids[0], self_chain_tids[1]);
	fflush(stdout);
	exit(0);
}

/* ---- unlock_out_of_order: no finding -------------------------------------
 * Always A before B before C; let go B, A, C.  Four threads at once, so
 * some locks wait.  Then, holding nothing, D then A: had an unlock left a
 * mutex in the held set, the lock of D would record X -> D and close a
 * cycle through D -> A. */
static sem_t start_line;

static void *unlock_out_of_order_thread(void *arg)
{
	(void)arg;
	sem_wait(&start_line);
	for (int i = 0; i < 2000; i++) {
		LOCK(&ma);
		LOCK(&mb);
		LOCK(&mc);
		UNLOCK(&mb);
		UNLOCK(&ma);
		UNLOCK(&mc);
	}
	LOCK(&md);
	LOCK(&ma);
	UNLOCK(&ma);
	UNLOCK(&md);
	return NULL;
}

static int unlock_out_of_order(void)
{
	pthread_t t[4];
	init_abcd();
	sem_init(&start_line, 0, 0);
	for (int i = 0; i < 4; i++)
		CHECK(pthread_create(&t[i], NULL, unlock_out_of_order_thread, NULL), 0);
	for (int i = 0; i < 4; i++)
		sem_post(&start_line);
	for (int i = 0; i < 4; i++)
		CHECK(pthread_join(t[i], NULL), 0);
	return 0;
}

/* ---- condvar: no finding ------------------------------------------------
 * A producer and a consumer on M (= A) and one condition; a waiter that
 * holds O (= C) around its wait on M, and a thread taking O then M too.
 * Afterwards, holding nothing, the consumer and the waiter take D, and the
 * main thread takes D then M: a condition wait that left M or O in a held
 * set would close a cycle through D. */
#define ITEMS 2000
static pthread_cond_t nonempty = PTHREAD_COND_INITIALIZER;
static pthread_cond_t flagged = PTHREAD_COND_INITIALIZER;
static int queued, consumed, flag;

static void *producer(void *arg)
{
	(void)arg;
	for (int i = 0; i < ITEMS; i++) {
		LOCK(&ma);
		queued++;
		CHECK(pthread_cond_signal(&nonempty), 0);
		UNLOCK(&ma);
	}
	return NULL;
}

static void *consumer(void *arg)
{
	(void)arg;
	while (consumed < ITEMS) {
		LOCK(&ma);
		while (queued == 0)
			CHECK(pthread_cond_wait(&nonempty, &ma), 0);
		queued--;
		consumed++;
		UNLOCK(&ma);
	}
	LOCK(&md);
	UNLOCK(&md);
	return NULL;
}

static void *outer_waiter(void *arg)
{
	(void)arg;
	LOCK(&mc);
	LOCK(&ma);
	sem_post(&s1); /* waiting (or about to: M is held till the wait) */
	while (!flag)
		CHECK(pthread_cond_wait(&flagged, &ma), 0);
	UNLOCK(&ma);
	UNLOCK(&mc);
	LOCK(&md);
	UNLOCK(&md);
	return NULL;
}

static void *outer_signaller(void *arg)
{
	(void)arg;
	sem_wait(&s1);
	LOCK(&ma);
	flag = 1;
	CHECK(pthread_cond_signal(&flagged), 0);
	UNLOCK(&ma);
	return NULL;
}

static int condvar(void)
{
	init_abcd();
	both(producer, consumer);
	both(outer_waiter, outer_signaller);
	LOCK(&mc); /* O then M, as the waiter */
	LOCK(&ma);
	UNLOCK(&ma);
	UNLOCK(&mc);
	LOCK(&md);
	LOCK(&ma);
	UNLOCK(&ma);
	UNLOCK(&md);
	printf("%d consumed\n", consumed);
	return consumed == ITEMS ? 0 : 1;
}

/* ---- timed_inversion, clock_inversion: reported --------------------------
 * Thread 1 took A then B earlier and holds A; thread 2 holds B and tries A
 * with a deadline: it times out (thread 1 keeps A until then), but the
 * order B -> A was tried.  Then thread 2, holding nothing (a timed-out lock
 * holds nothing), takes D; thread 1 takes D then A: only A/B is a cycle. */
static int use_clocklock;

static void *timed_1(void *arg)
{
	(void)arg;
	say_thread("t1");
	CHECK(pthread_mutex_lock(&ma), 0); /* TIMEDINV_T1_A */
	CHECK(pthread_mutex_lock(&mb), 0); /* TIMEDINV_T1_B */
	UNLOCK(&mb);
	sem_post(&s1); /* holding A */
	sem_wait(&s2); /* thread 2 timed out */
	UNLOCK(&ma);
	sem_wait(&s3);
	LOCK(&md);
	LOCK(&ma);
	UNLOCK(&ma);
	UNLOCK(&md);
	return NULL;
}

static void *timed_2(void *arg)
{
	(void)arg;
	sem_wait(&s1);
	say_thread("t2");
	CHECK(pthread_mutex_lock(&mb), 0); /* TIMEDINV_T2_B */
	if (use_clocklock) {
		struct timespec until = deadline(CLOCK_MONOTONIC, 50);
		CHECK(pthread_mutex_clocklock(&ma, CLOCK_MONOTONIC, &until), ETIMEDOUT); /* CLOCKINV_T2_A */
	} else {
		struct timespec until = deadline(CLOCK_REALTIME, 50);
		CHECK(pthread_mutex_timedlock(&ma, &until), ETIMEDOUT); /* TIMEDINV_T2_A */
	}
	UNLOCK(&mb);
	sem_post(&s2);
	LOCK(&md);
	UNLOCK(&md);
	sem_post(&s3);
	return NULL;
}

static int timed_inversion(int clock)
{
	init_abcd();
	use_clocklock = clock;
	both(timed_1, timed_2);
	return 0;
}

/* ---- reinit_*: a mutex's new life has no history --------------------------
 * Round 1 (thread 1): A then B.  Then destroy both and init them again at
 * the same addresses, or init them again without destroy: new mutexes.
 *   _swap: round 2 (thread 2) takes B then A: no cycle, the A -> B of the
 *          old lives is gone.
 *   _same: round 2 (thread 1 again) takes A then B, and thread 2 B then A:
 *          a cycle among the new lives, reported at round 2's lines.
 *   _windows: as destroy_same, thread 1 with the bigger cache of edges and
 *          its windows (warm_edges, then A then B three times), B destroyed
 *          before A so that the new lives get the old ones' records back:
 *          the windows' A -> B is of the old lives, and round 2's is new. */
static int reinit_destroy, reinit_same, reinit_windows;

static void reinit_step(int i)
{
	if (i == 0) {
		say_thread("t1");
		if (reinit_windows)
			warm_edges(0);
		for (int k = 0; k < (reinit_windows ? 3 : 1); k++) {
			CHECK(pthread_mutex_lock(&ma), 0); /* REINIT_1_A */
			CHECK(pthread_mutex_lock(&mb), 0); /* REINIT_1_B */
			UNLOCK(&mb);
			UNLOCK(&ma);
		}
		if (reinit_windows) {
			CHECK(pthread_mutex_destroy(&mb), 0);
			CHECK(pthread_mutex_destroy(&ma), 0);
		} else if (reinit_destroy) {
			CHECK(pthread_mutex_destroy(&ma), 0);
			CHECK(pthread_mutex_destroy(&mb), 0);
		}
		init_mutex(&ma, PTHREAD_MUTEX_NORMAL);
		init_mutex(&mb, PTHREAD_MUTEX_NORMAL);
		if (reinit_same) {
			CHECK(pthread_mutex_lock(&ma), 0); /* REINIT_2_A */
			CHECK(pthread_mutex_lock(&mb), 0); /* REINIT_2_B */
			UNLOCK(&mb);
			UNLOCK(&ma);
		}
	} else {
		say_thread("t2");
		CHECK(pthread_mutex_lock(&mb), 0); /* REINIT_T2_B */
		CHECK(pthread_mutex_lock(&ma), 0); /* REINIT_T2_A */
		UNLOCK(&ma);
		UNLOCK(&mb);
	}
}

static int reinit(int destroy, int same, int windows)
{
	init_abcd();
	for (int i = 0; windows && i < WARM_LOCKS; i++) {
		init_mutex(&warm_outer[i], PTHREAD_MUTEX_NORMAL);
		init_mutex(&warm_inner[i], PTHREAD_MUTEX_NORMAL);
	}
	reinit_destroy = destroy;
	reinit_same = same;
	reinit_windows = windows;
	in_turns(2, reinit_step);
	return 0;
}

/* ---- held_at_exit: two findings, one per thread ---------------------------
 * "keeper" returns holding A; "quitter" calls pthread_exit holding B and
 * the recursive R (locked twice: one mutex); "tidy" lets go of all it took.
 * They run one after another. */
static void *keeper(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "keeper");
	say_thread("keeper");
	CHECK(pthread_mutex_lock(&ma), 0); /* HELD_KEEPER_A */
	return NULL;
}

static void *quitter(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "quitter");
	say_thread("quitter");
	CHECK(pthread_mutex_lock(&mb), 0); /* HELD_QUITTER_B */
	CHECK(pthread_mutex_lock(&mr), 0); /* HELD_QUITTER_R */
	LOCK(&mr);
	fflush(stdout);
	pthread_exit(NULL);
}

static void *tidy(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "tidy");
	say_thread("tidy");
	LOCK(&mc);
	LOCK(&md);
	UNLOCK(&md);
	UNLOCK(&mc);
	return NULL;
}

static int held_at_exit(void)
{
	init_abcd();
	init_mutex(&mr, PTHREAD_MUTEX_RECURSIVE);
	say_mutex("R", &mr);
	void *(*jobs[])(void *) = { keeper, quitter, tidy };
	for (int i = 0; i < 3; i++) {
		pthread_t t;
		CHECK(pthread_create(&t, NULL, jobs[i], NULL), 0);
		CHECK(pthread_join(t, NULL), 0);
	}
	return 0;
}

/* ---- many_held: no finding -------------------------------------------------
 * Thread 1 holds 65 mutexes, one more than the library follows per thread
 * (MS_HELD_MAX), lets them all go oldest first, and then, holding nothing,
 * takes C.  Thread 2, later, takes C then M63.  No cycle (M63 was not
 * held when C was taken), and thread 1 ends holding nothing. */
#define MANY 65
static pthread_mutex_t many_m[MANY];

static void many_held_step(int i)
{
	say_thread_n("t", i + 1);
	if (i == 0) {
		for (int j = 0; j < MANY; j++)
			LOCK(&many_m[j]);
		for (int j = 0; j < MANY; j++)
			UNLOCK(&many_m[j]);
		LOCK(&mc);
		UNLOCK(&mc);
	} else {
		LOCK(&mc);
		LOCK(&many_m[63]);
		UNLOCK(&many_m[63]);
		UNLOCK(&mc);
	}
}

static int many_held(void)
{
	init_abcd();
	for (int j = 0; j < MANY; j++)
		init_mutex(&many_m[j], PTHREAD_MUTEX_NORMAL);
	say_mutex("M63", &many_m[63]);
	in_turns(2, many_held_step);
	return 0;
}

/* ---- clean N: no finding, exits with N ------------------------------------ */
static void clean_step(int i)
{
	say_thread_n("t", i + 1);
	LOCK(&ma);
	LOCK(&mb);
	UNLOCK(&mb);
	UNLOCK(&ma);
}

static int clean(int status)
{
	init_abcd();
	in_turns(2, clean_step);
	return status;
}

static int usage(void)
{
	fprintf(stderr, "usage: deadlocks SCENARIO (see tests/deadlocks.c)\n");
	return 2;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage();
	const char *s = argv[1];
	int n = argc > 2 ? atoi(argv[2]) : -1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(s, "static_abba")) return static_abba();
	if (!strcmp(s, "one_thread")) return one_thread();
	if (!strcmp(s, "new_link")) return new_link(0);
	if (!strcmp(s, "new_link_retaken")) return new_link(1);
	if (!strcmp(s, "new_link_later_hold")) return new_link(2);
	if (!strcmp(s, "new_link_ring")) return new_link_ring();
	if (!strcmp(s, "ring") && n >= 2 && n <= MAX_TURNS) return ring(n);
	if (!strcmp(s, "one_ring") && n >= 2 && n <= MAX_TURNS) return one_ring(n);
	if (!strcmp(s, "two_cycles")) return two_cycles();
	if (!strcmp(s, "two_inversions")) return two_inversions();
	if (!strcmp(s, "ungated_later")) return ungated_later();
	if (!strcmp(s, "ungated_count")) return ungated_count();
	if (!strcmp(s, "shared_helper")) return shared_helper();
	if (!strcmp(s, "wrapped_bystander")) return wrapped_bystander();
	if (!strcmp(s, "gone_abba")) return gone_abba();
	if (!strcmp(s, "destroyed_abba")) return lives(1);
	if (!strcmp(s, "lives") && n >= 1) return lives(n);
	if (!strcmp(s, "ring_destroyed") && n >= 2 && n <= MAX_TURNS) return ring_destroyed(n);
	if (!strcmp(s, "unlocked_elsewhere")) return unlocked_elsewhere();
	if (!strcmp(s, "self_relock")) return self_relock();
	if (!strcmp(s, "self_released")) return self_released();
	if (!strcmp(s, "self_errorcheck")) return self_errorcheck();
	if (!strcmp(s, "self_crowded")) return self_crowded();
	if (!strncmp(s, "self_errorcheck_", 16)) return self_errorcheck_as(s + 16);
	if (!strcmp(s, "self_timed")) return self_timed();
	if (!strcmp(s, "self_died_errorcheck")) return self_died(0);
	if (!strcmp(s, "self_died_timed")) return self_died(1);
	if (!strcmp(s, "self_timed_signal")) return self_timed_signal();
	if (!strcmp(s, "self_trylock")) return self_trylock();
	if (!strcmp(s, "recursive")) return recursive();
	if (!strcmp(s, "trylock_backoff")) return trylock_backoff();
	if (!strcmp(s, "trylock_then_lock")) return trylock_then_lock();
	if (!strcmp(s, "gate")) return gate(0);
	if (!strcmp(s, "gate_partial")) return gate(1);
	if (!strcmp(s, "gate_broken")) return gate_broken();
	if (!strcmp(s, "gate_two_pairs")) return gate_two_pairs();
	if (!strcmp(s, "self_chain")) return self_chain();
	if (!strcmp(s, "gate_read")) return gate_rw_run(GATE_READ, 0);
	if (!strcmp(s, "gate_read_write")) return gate_rw_run(GATE_READ_WRITE, 0);
	if (!strcmp(s, "gate_dropped")) return gate_rw_run(GATE_DROPPED, 0);
	if (!strcmp(s, "gate_dropped_big")) return gate_rw_run(GATE_DROPPED, 1);
	if (!strcmp(s, "gate_dropped_copied")) return gate_rw_run(GATE_DROPPED, 2);
	if (!strcmp(s, "gate_weakened")) return gate_rw_run(GATE_WEAKENED, 0);
	if (!strcmp(s, "gate_weakened_big")) return gate_rw_run(GATE_WEAKENED, 1);
	if (!strcmp(s, "unlock_out_of_order")) return unlock_out_of_order();
	if (!strcmp(s, "condvar")) return condvar();
	if (!strcmp(s, "timed_inversion")) return timed_inversion(0);
	if (!strcmp(s, "clock_inversion")) return timed_inversion(1);
	if (!strcmp(s, "reinit_destroy_swap")) return reinit(1, 0, 0);
	if (!strcmp(s, "reinit_init_swap")) return reinit(0, 0, 0);
	if (!strcmp(s, "reinit_destroy_same")) return reinit(1, 1, 0);
	if (!strcmp(s, "reinit_init_same")) return reinit(0, 1, 0);
	if (!strcmp(s, "reinit_windows_same")) return reinit(1, 1, 1);
	if (!strcmp(s, "held_at_exit")) return held_at_exit();
	if (!strcmp(s, "many_held")) return many_held();
	if (!strcmp(s, "clean") && n >= 0 && n <= 255) return clean(n);
	return usage();
}
