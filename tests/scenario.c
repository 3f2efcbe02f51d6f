/* scenario.c - small deterministic programs for the integration tests, one
 * per argument.  Each prints the addresses of the mutexes it uses, so a test
 * can find their lines in the report, and does things whose counts are
 * exact.  Threads are ordered with semaphores, never with sleeps alone.
 *
 *   baddeadline  a timedlock of a mutex another thread holds, its
 *             deadline's nanoseconds past a second: EINVAL, no wait
 *   exact     1003 acquisitions (3 by trylock), 2 trylock EBUSY, 1 timeout
 *   contend   5 contended acquisitions of one mutex, 10 in all, 9 owner changes
 *   timeouts  two 20 ms timedlocks of m1 that time out, then a lock that
 *             waits ~20 ms for it (from when it sleeps, as /proc says):
 *             1 contended acquisition, 2 timeouts
 *   condwait  a 100 ms condition wait: a condition wait, not contention
 *   held      exits while holding a mutex
 *   heldtimed a thread waits for m1 (asleep in its futex), gets it and
 *             holds it; the main thread exits 100 ms later: a hold that
 *             follows a wait is timed, so the report says for how long
 *   heldexited the same, but the thread exits holding m1 (joined), and
 *             main exits 100 ms later
 *   resethold a thread takes m1 (its holds are timed); main calls
 *             mutexstat_reset (found with dlsym) while it holds it, then
 *             waits for m1, and the holder lets go 20 ms after: the hold
 *             that began before the reset is not counted, main's own
 *             after its wait is (1 timed hold)
 *   exitwait  exits holding m1 while another thread waits for it (asleep in
 *             its futex, as /proc says, before exit is called)
 *   destroy   100 mutexes initialised, locked 3 times and destroyed at one
 *             site, and one mutex initialised twice
 *   endedwait a pool's mutex, named "ended pool", made on the heap twice
 *             (2 lives, first locked at one line); in each life a thread
 *             waits for it 3 times (asleep in its futex before main
 *             unlocks), then it is destroyed: 6 waits, 12 acquisitions;
 *             with "unnamed-last", the second life is not named
 *   many N    N mutexes initialised and locked once (for a full table)
 *   hang      two threads take m1 and m2 in opposite orders at the same
 *             moment: deadlocked, forever (prints "deadlocked" first)
 *   condhang  a thread waits for a condition while holding m2, which the
 *             thread that would signal it waits for: hung (prints "hung")
 *   holdsleep a thread takes m1 and sleeps in pause() for ever; the main
 *             thread waits for m1 (another prints "waiting" once it does)
 *   holdspin  the same, but the holder runs a loop for ever
 *   condbusy  the holder of m1 is in a condition wait (on m2), not asleep
 *             there: a handler of a signal it got in the wait runs a loop
 *             for ever; the main thread waits for m1 (another prints
 *             "waiting" once it does)
 *   hammer S [until-dump]  4 threads lock and unlock one mutex for S
 *             seconds (and, with until-dump, until MUTEXSTAT_OUTPUT.1, the
 *             first live dump, is there); prints the exact count (for
 *             signal storms)
 *   longnames two mutexes named with 63 bytes that differ only in the
 *             last, each waited for once (a thread asleep in its futex)
 *   longsite  2 mutexes made, locked once and destroyed in a function whose
 *             name is longer than a report line has room for
 *   passing S 32 threads pass m1 around for S seconds, each holding it
 *             200 us, then waiting 5 ms for a condition of its own, never
 *             with m1 held: always waits for m1, never a deadlock (prints
 *             "passing" when they run); with "held" last, each holds m1
 *             through a 1 ms condition wait of its own instead of the
 *             200 us (nobody signals it: it times out)
 *   signal P  sends SIGUSR1 to process P as fast as it can until P is gone;
 *             prints how many (run without the library)
 *   threads N N short-lived threads, 100 at a time, each locking m1 once
 *   onethread a process that never starts a thread: locks m1 10 times,
 *             prints how many threads it has and "ready", then waits for
 *             signals, locking m1 once after each; with "thread" last, it
 *             starts (and joins) a thread first
 *   recycle   one thread's lookup cache across lives: x locked 3 times and
 *             destroyed, y initialised (x's record is free) and locked 5
 *             times, x initialised again and locked twice; then two mutexes
 *             that share a cache entry, 1000 times each in turn and 100
 *             times nested
 *   sites N   N mutexes (at most 5120), each first locked at a call site
 *             of its own, once, and destroyed: N ended lives of N sites;
 *             a thread waits once for the last, N + 1 acquisitions
 *   waitsites N  a thread waits for m1 at each of the first N of those
 *             sites in turn: N waiting stacks of one wait each
 *   none      locks nothing */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <grp.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proc_wait.h"

/* Not proc_wait.h's CHECK: this one names the answer wanted. */
#undef CHECK
#define CHECK(call, want)                                                     \
	do {                                                                  \
		int rc_ = (call);                                             \
		if (rc_ != (want)) {                                          \
			fprintf(stderr, "%s:%d: %s = %d, want %d\n", __FILE__, \
				__LINE__, #call, rc_, want);                  \
			exit(3);                                              \
		}                                                             \
	} while (0)

static pthread_mutex_t m1 = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t m2 = PTHREAD_MUTEX_INITIALIZER;
static sem_t go, done;

static void *hold_m2(void *arg)
{
	(void)arg;
	CHECK(pthread_mutex_lock(&m2), 0);
	sem_post(&go);
	sem_wait(&done);
	CHECK(pthread_mutex_unlock(&m2), 0);
	return NULL;
}

static int exact(void)
{
	for (int i = 0; i < 1000; i++) {
		CHECK(pthread_mutex_lock(&m1), 0);
		CHECK(pthread_mutex_unlock(&m1), 0);
	}
	for (int i = 0; i < 3; i++) {
		CHECK(pthread_mutex_trylock(&m1), 0);
		CHECK(pthread_mutex_unlock(&m1), 0);
	}
	pthread_t t;
	pthread_create(&t, NULL, hold_m2, NULL);
	sem_wait(&go);
	CHECK(pthread_mutex_trylock(&m2), EBUSY);
	CHECK(pthread_mutex_trylock(&m2), EBUSY);
	struct timespec past = { 0, 0 }; /* 1970: already expired */
	CHECK(pthread_mutex_timedlock(&m2, &past), ETIMEDOUT);
	sem_post(&done);
	pthread_join(t, NULL);
	printf("m1 %p\nm2 %p\n", (void *)&m1, (void *)&m2);
	return 0;
}

/* baddeadline: a timedlock of m2, held by another thread, with a deadline
 * glibc refuses (EINVAL) when it would wait: it does not wait */
static int baddeadline(void)
{
	pthread_t t;
	pthread_create(&t, NULL, hold_m2, NULL);
	sem_wait(&go);
	struct timespec bad = { 0, 2000000000L };
	CHECK(pthread_mutex_timedlock(&m2, &bad), EINVAL);
	sem_post(&done);
	pthread_join(t, NULL);
	printf("m2 %p\n", (void *)&m2);
	return 0;
}

/* Round i: the main thread takes m1, lets the helper block on it, holds on
 * for 20 ms, lets go; the helper gets it after waiting. */
static sem_t helper_ready, helper_done;

static void *contender(void *arg)
{
	(void)arg;
	for (int i = 0; i < 5; i++) {
		sem_wait(&go);
		sem_post(&helper_ready);
		CHECK(pthread_mutex_lock(&m1), 0);
		CHECK(pthread_mutex_unlock(&m1), 0);
		sem_post(&helper_done);
	}
	return NULL;
}

static int waiters_on(pthread_mutex_t *m)
{
	/* glibc marks a mutex with waiters by __lock == 2 */
	return __atomic_load_n(&m->__data.__lock, __ATOMIC_RELAXED) == 2;
}

/* longwait: a thread whose name is too long for a line first locks m1
 * and holds it until main waits for it: a contended site with that name
 * (the run summary's lines fit it, tests/run_summary.sh). */
static void *a_thread_whose_name_is_long_enough_to_take_the_run_summary_line_past_its_width(void *arg)
{
	(void)arg;
	CHECK(pthread_mutex_lock(&m1), 0);
	sem_post(&helper_ready);
	while (!waiters_on(&m1)) /* main is blocked in lock */
		usleep(1000);
	CHECK(pthread_mutex_unlock(&m1), 0);
	return NULL;
}

static int longwait(void)
{
	pthread_t t;
	pthread_create(&t, NULL,
		       a_thread_whose_name_is_long_enough_to_take_the_run_summary_line_past_its_width,
		       NULL);
	sem_wait(&helper_ready);
	CHECK(pthread_mutex_lock(&m1), 0);
	CHECK(pthread_mutex_unlock(&m1), 0);
	pthread_join(t, NULL);
	return 0;
}

/* shortholds N NS: longwait's one contended acquisition of m1 (the
 * holder's hold, begun before anyone waited, is not timed), then N pairs
 * alone, each holding m1 for at least NS ns (0: not a step between the
 * lock and the unlock).  With 0 the timed holds are a few ns long, and the
 * report says the library's work lengthens them; with 1000 it does not. */
static void hold_for(long ns)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < ns);
}

static int shortholds(long pairs, long ns)
{
	longwait();
	for (long i = 0; i < pairs; i++) {
		CHECK(pthread_mutex_lock(&m1), 0);
		if (ns)
			hold_for(ns);
		CHECK(pthread_mutex_unlock(&m1), 0);
	}
	printf("m1 %p\n", (void *)&m1);
	return 0;
}

/* contend [N]: then N pairs more on m1, alone: holds timed from the
 * first wait on, every one up to the 4096th acquisition and then one in
 * 16 (the report's count of timed holds is exact). */
static int contend(int alone)
{
	pthread_t t;
	pthread_create(&t, NULL, contender, NULL);
	for (int i = 0; i < 5; i++) {
		CHECK(pthread_mutex_lock(&m1), 0);
		sem_post(&go);
		sem_wait(&helper_ready);
		while (!waiters_on(&m1)) /* the helper is blocked in lock */
			usleep(1000);
		usleep(20000);
		CHECK(pthread_mutex_unlock(&m1), 0);
		sem_wait(&helper_done);
	}
	pthread_join(t, NULL);
	for (int i = 0; i < alone; i++) {
		CHECK(pthread_mutex_lock(&m1), 0);
		CHECK(pthread_mutex_unlock(&m1), 0);
	}
	printf("m1 %p\n", (void *)&m1);
	return 0;
}

/* byturns N [waited|nested|spin|spinwaited]: two threads take m3 by turns,
 * N times each, never at once (each waits on a semaphore, which is no
 * pthread mutex, for its turn): 2N acquisitions, 2N - 1 owner changes, no
 * contention.  With "waited", the second thread first waits once for the
 * first, so that the holds are timed from then on: every one to the
 * 4096th acquisition, then one in 16.  With "nested", each thread holds a
 * mutex of its own around its turns' locks of m3: the inner lock of
 * nested ones is an owner change at each turn too.  "spin" and
 * "spinwaited" take spin lock s3 instead of m3 (the spin lock's plain
 * path, interpose_rw.c's spin_acquired_other). */
static pthread_mutex_t m3 = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t outer_a = PTHREAD_MUTEX_INITIALIZER, outer_b = PTHREAD_MUTEX_INITIALIZER;
static pthread_spinlock_t s3;
static sem_t turn_a, turn_b;
static int turns_each, turns_nested, turns_spin;

static void turn_lock(void)
{
	if (turns_spin)
		CHECK(pthread_spin_lock(&s3), 0);
	else
		CHECK(pthread_mutex_lock(&m3), 0);
}

static void turn_unlock(void)
{
	if (turns_spin)
		CHECK(pthread_spin_unlock(&s3), 0);
	else
		CHECK(pthread_mutex_unlock(&m3), 0);
}

/* Whether the second thread waits for the turns' lock the first holds:
 * glibc marks a mutex slept on by __lock == 2, and a spin lock waited
 * for by its word below 0 on x86-64 (each waiter's `lock decl` from 0);
 * elsewhere a spin lock's waiters leave no mark, and 100 ms must do. */
static int turn_waited_for(void)
{
	if (!turns_spin)
		return waiters_on(&m3);
#if defined(__x86_64__)
	return __atomic_load_n((volatile int *)&s3, __ATOMIC_ACQUIRE) < 0;
#else
	usleep(100000);
	return 1;
#endif
}

/* One turn's lock and unlock of m3, inside outer if the turns nest. */
static void take_turn(pthread_mutex_t *outer)
{
	if (turns_nested)
		CHECK(pthread_mutex_lock(outer), 0);
	turn_lock();
	turn_unlock();
	if (turns_nested)
		CHECK(pthread_mutex_unlock(outer), 0);
}

static void *by_turns(void *arg)
{
	int waited = arg != NULL;
	if (waited) { /* m3 is held by the first thread: wait for it */
		sem_post(&turn_a);
		turn_lock();
		turn_unlock();
		sem_post(&turn_a); /* its wait is over: the turns begin */
	}
	for (int i = 0; i < turns_each; i++) {
		sem_wait(&turn_b);
		take_turn(&outer_b);
		sem_post(&turn_a);
	}
	return NULL;
}

static int byturns(int n, int waited)
{
	pthread_t t;
	turns_each = n;
	sem_init(&turn_a, 0, 0);
	sem_init(&turn_b, 0, 0);
	if (turns_spin)
		CHECK(pthread_spin_init(&s3, PTHREAD_PROCESS_PRIVATE), 0);
	if (waited)
		turn_lock();
	pthread_create(&t, NULL, by_turns, waited ? &m3 : NULL);
	if (waited) {
		sem_wait(&turn_a);
		while (!turn_waited_for()) /* the second thread is blocked */
			usleep(1000);
		turn_unlock();
		sem_wait(&turn_a); /* not the next lock: it has m3 first */
	}
	for (int i = 0; i < n; i++) {
		take_turn(&outer_a);
		sem_post(&turn_b);
		sem_wait(&turn_a);
	}
	pthread_join(t, NULL);
	if (turns_spin)
		printf("s3 %p\n", (void *)&s3);
	else
		printf("m3 %p\n", (void *)&m3);
	return 0;
}

/* timeouts: the helper holds m1 through the main thread's two timed
 * locks, and lets go 20 ms after the main thread sleeps in its lock (a
 * fixed 20 ms after it said it would lock let a main thread that was
 * slow to get there find m1 free on a loaded machine: no wait). */
static void *slow_holder(void *arg)
{
	(void)arg;
	CHECK(pthread_mutex_lock(&m1), 0);
	sem_post(&go);
	sem_wait(&done);
	while (!sleeps_on_futex(getpid(), &m1.__data.__lock))
		usleep(1000);
	usleep(20000);
	CHECK(pthread_mutex_unlock(&m1), 0);
	return NULL;
}

static int timeouts(void)
{
	pthread_t t;
	pthread_create(&t, NULL, slow_holder, NULL);
	sem_wait(&go);
	for (int i = 0; i < 2; i++) {
		struct timespec d;
		clock_gettime(CLOCK_REALTIME, &d);
		d.tv_nsec += 20000000;
		if (d.tv_nsec >= 1000000000) {
			d.tv_sec++;
			d.tv_nsec -= 1000000000;
		}
		CHECK(pthread_mutex_timedlock(&m1, &d), ETIMEDOUT);
	}
	sem_post(&done);
	CHECK(pthread_mutex_lock(&m1), 0);
	CHECK(pthread_mutex_unlock(&m1), 0);
	pthread_join(t, NULL);
	printf("m1 %p\n", (void *)&m1);
	return 0;
}

static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int flag;

static void *signaller(void *arg)
{
	(void)arg;
	/* main holds m1 until its condition wait lets it go (lock word 0) */
	while (__atomic_load_n(&m1.__data.__lock, __ATOMIC_RELAXED))
		usleep(1000);
	usleep(100000);
	CHECK(pthread_mutex_lock(&m1), 0);
	flag = 1;
	pthread_cond_signal(&cond);
	CHECK(pthread_mutex_unlock(&m1), 0);
	return NULL;
}

static int condwait(void)
{
	pthread_t t;
	CHECK(pthread_mutex_lock(&m1), 0);
	pthread_create(&t, NULL, signaller, NULL);
	while (!flag)
		CHECK(pthread_cond_wait(&cond, &m1), 0);
	CHECK(pthread_mutex_unlock(&m1), 0);
	pthread_join(t, NULL);
	printf("m1 %p\n", (void *)&m1);
	return 0;
}

static int held(void)
{
	CHECK(pthread_mutex_lock(&m1), 0);
	CHECK(pthread_mutex_lock(&m2), 0);
	CHECK(pthread_mutex_unlock(&m2), 0);
	printf("m1 %p\n", (void *)&m1);
	return 0; /* exits holding m1 */
}

static volatile pid_t waiter_tid;
static volatile int m1_taken;

static void *take_m1_after_wait(void *arg)
{
	waiter_tid = (pid_t)syscall(SYS_gettid);
	CHECK(pthread_mutex_lock(&m1), 0);
	m1_taken = 1;
	pause(); /* holding m1 until the process exits */
	return arg;
}

/* Lock m1, then start fn in a thread and return once that thread sleeps
 * in m1's futex: asleep there, not just asleep ('S' in /proc could be a
 * moment's sleep anywhere on the way to the lock). */
static pthread_t hold_m1_until_waited(void *(*fn)(void *))
{
	pthread_t t;
	CHECK(pthread_mutex_lock(&m1), 0);
	CHECK(pthread_create(&t, NULL, fn, NULL), 0);
	while (!waiter_tid || !sleeps_on_futex(waiter_tid, &m1.__data.__lock))
		sched_yield();
	return t;
}

static void *take_m1_after_wait_and_exit(void *arg)
{
	waiter_tid = (pid_t)syscall(SYS_gettid);
	CHECK(pthread_mutex_lock(&m1), 0);
	return arg; /* exits holding m1 */
}

static int heldexited(void)
{
	pthread_t t = hold_m1_until_waited(take_m1_after_wait_and_exit);
	CHECK(pthread_mutex_unlock(&m1), 0);
	CHECK(pthread_join(t, NULL), 0);
	usleep(100000);
	printf("m1 %p\n", (void *)&m1);
	return 0; /* m1 held by the exited thread for 100 ms or more */
}

static void *wait_for_m1_once(void *arg)
{
	waiter_tid = (pid_t)syscall(SYS_gettid);
	CHECK(pthread_mutex_lock(&m1), 0);
	CHECK(pthread_mutex_unlock(&m1), 0);
	return arg;
}

static pid_t main_tid;

/* Holds m1 until main waits for it, and 20 ms more. */
static void *hold_m1_until_main_waits(void *arg)
{
	CHECK(pthread_mutex_lock(&m1), 0);
	while (!sleeps_on_futex(main_tid, &m1.__data.__lock))
		usleep(1000);
	usleep(20000);
	CHECK(pthread_mutex_unlock(&m1), 0);
	return arg;
}

static int resethold(void)
{
	void (*reset)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "mutexstat_reset");
	pthread_t t = hold_m1_until_waited(wait_for_m1_once);
	CHECK(pthread_mutex_unlock(&m1), 0); /* m1 has made a thread wait */
	CHECK(pthread_join(t, NULL), 0);
	main_tid = (pid_t)syscall(SYS_gettid);
	CHECK(pthread_create(&t, NULL, hold_m1_until_main_waits, NULL), 0);
	while (!__atomic_load_n(&m1.__data.__lock, __ATOMIC_RELAXED))
		usleep(1000); /* the holder has m1 */
	if (reset)
		reset(); /* while that timed hold is under way */
	CHECK(pthread_mutex_lock(&m1), 0); /* waits for the rest of it */
	CHECK(pthread_mutex_unlock(&m1), 0);
	CHECK(pthread_join(t, NULL), 0);
	printf("m1 %p\n", (void *)&m1);
	return 0;
}

/* m1 makes a thread wait, so its holds are timed, and is destroyed: the
 * header's count of such mutexes includes its ended line. */
static int waitedended(void)
{
	pthread_t t = hold_m1_until_waited(wait_for_m1_once);
	CHECK(pthread_mutex_unlock(&m1), 0);
	CHECK(pthread_join(t, NULL), 0);
	CHECK(pthread_mutex_destroy(&m1), 0);
	return 0;
}

static int heldtimed(void)
{
	hold_m1_until_waited(take_m1_after_wait);
	CHECK(pthread_mutex_unlock(&m1), 0);
	while (!m1_taken)
		sched_yield();
	usleep(100000);
	printf("m1 %p\n", (void *)&m1);
	exit(0); /* m1 held by the thread for 100 ms or more */
}

static void *wait_for_m1(void *arg)
{
	waiter_tid = (pid_t)syscall(SYS_gettid);
	pthread_mutex_lock(&m1); /* until the process exits */
	return arg;
}

static int exitwait(void)
{
	hold_m1_until_waited(wait_for_m1);
	printf("exiting\n");
	exit(0); /* holding m1, the waiter still waiting */
}

static __attribute__((noinline)) void use_once(pthread_mutex_t *m)
{
	CHECK(pthread_mutex_init(m, NULL), 0);
	for (int i = 0; i < 3; i++) {
		CHECK(pthread_mutex_lock(m), 0);
		CHECK(pthread_mutex_unlock(m), 0);
	}
	CHECK(pthread_mutex_destroy(m), 0);
}

static int destroy(void)
{
	pthread_mutex_t *ms = calloc(100, sizeof *ms);
	for (int i = 0; i < 100; i++)
		use_once(&ms[i]);
	/* initialised twice without destroy: the first life is folded */
	CHECK(pthread_mutex_init(&m2, NULL), 0);
	CHECK(pthread_mutex_lock(&m2), 0);
	CHECK(pthread_mutex_unlock(&m2), 0);
	CHECK(pthread_mutex_init(&m2, NULL), 0);
	CHECK(pthread_mutex_lock(&m2), 0);
	CHECK(pthread_mutex_unlock(&m2), 0);
	CHECK(pthread_mutex_lock(&m2), 0);
	CHECK(pthread_mutex_unlock(&m2), 0);
	printf("m2 %p\n", (void *)&m2);
	free(ms);
	return 0;
}

/* endedwait: a mutex of a pool, made on the heap, named, and destroyed
 * when done; each life makes a thread wait for it 3 times, from one line,
 * let in by one unlock line. */
static pthread_mutex_t *pool;
static volatile pid_t pool_waiter;

static void *wait_for_pool(void *arg)
{
	pool_waiter = (pid_t)syscall(SYS_gettid);
	CHECK(pthread_mutex_lock(pool), 0); /* ENDED_WAITS */
	CHECK(pthread_mutex_unlock(pool), 0);
	return arg;
}

static __attribute__((noinline)) void pool_life(int named)
{
	int (*name)(const pthread_mutex_t *, const char *) =
		(int (*)(const pthread_mutex_t *, const char *))dlsym(RTLD_DEFAULT, "mutexstat_name");
	pool = malloc(sizeof *pool);
	CHECK(pthread_mutex_init(pool, NULL), 0); /* ENDED_INIT */
	if (name && named)
		name(pool, "ended pool");
	for (int i = 0; i < 3; i++) {
		pthread_t t;
		pool_waiter = 0;
		CHECK(pthread_mutex_lock(pool), 0); /* ENDED_HOLDS */
		CHECK(pthread_create(&t, NULL, wait_for_pool, NULL), 0);
		while (!pool_waiter || !sleeps_on_futex(pool_waiter, &pool->__data.__lock))
			sched_yield();
		CHECK(pthread_mutex_unlock(pool), 0); /* ENDED_LETS_IN */
		CHECK(pthread_join(t, NULL), 0);
	}
	CHECK(pthread_mutex_destroy(pool), 0);
	free(pool);
}

static volatile int pool_lives = 2; /* not unrolled: one call line */

/* unnamed_last: the last life is not named (the line shows no name) */
static int endedwait(int unnamed_last)
{
	for (int life = 0; life < pool_lives; life++)
		pool_life(!unnamed_last || life < pool_lives - 1); /* ENDED_LIVES */
	return 0;
}

/* longnames: two names as long as a name is kept, the same but for their
 * last byte; each mutex waited for once. */
static pthread_mutex_t long_named[2] = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER };
static volatile pid_t long_waiter;

static void *wait_for_long_named(void *arg)
{
	long_waiter = (pid_t)syscall(SYS_gettid);
	CHECK(pthread_mutex_lock(arg), 0);
	CHECK(pthread_mutex_unlock(arg), 0);
	return NULL;
}

static int longnames(void)
{
	int (*name)(const pthread_mutex_t *, const char *) =
		(int (*)(const pthread_mutex_t *, const char *))dlsym(RTLD_DEFAULT, "mutexstat_name");
	for (int i = 0; i < 2; i++) {
		pthread_mutex_t *m = &long_named[i];
		char n[64];
		snprintf(n, sizeof n, "%062d%c", 0, 'A' + i);
		if (name)
			name(m, n);
		pthread_t t;
		long_waiter = 0;
		CHECK(pthread_mutex_lock(m), 0);
		CHECK(pthread_create(&t, NULL, wait_for_long_named, m), 0);
		while (!long_waiter || !sleeps_on_futex(long_waiter, &m->__data.__lock))
			sched_yield();
		CHECK(pthread_mutex_unlock(m), 0);
		CHECK(pthread_join(t, NULL), 0);
	}
	return 0;
}

/* longsite: a first-lock site too long for the end of its report line. */
static void __attribute__((noinline))
a_function_whose_name_is_long_enough_to_fill_most_of_a_report_line_on_its_own_if_printed_whole(void)
{
	for (int i = 0; i < 2; i++) {
		pthread_mutex_t m;
		CHECK(pthread_mutex_init(&m, NULL), 0);
		CHECK(pthread_mutex_lock(&m), 0); /* LONG_SITE */
		CHECK(pthread_mutex_unlock(&m), 0);
		CHECK(pthread_mutex_destroy(&m), 0);
	}
}

/* sites: a lock call at each of 5120 lines of one switch, made by macros
 * (a generated program of 5120 functions took 20 s to compile).  Each
 * case stores its own number after its call: no two share their code. */
static volatile int site_taken;
#define SITE(i)                             \
	case (i):                           \
		err = pthread_mutex_lock(m); \
		site_taken = (i);           \
		break;
#define SITES4(i) SITE(i) SITE((i) + 1) SITE((i) + 2) SITE((i) + 3)
#define SITES16(i) SITES4(i) SITES4((i) + 4) SITES4((i) + 8) SITES4((i) + 12)
#define SITES64(i) SITES16(i) SITES16((i) + 16) SITES16((i) + 32) SITES16((i) + 48)
#define SITES256(i) SITES64(i) SITES64((i) + 64) SITES64((i) + 128) SITES64((i) + 192)
#define SITES1024(i) SITES256(i) SITES256((i) + 256) SITES256((i) + 512) SITES256((i) + 768)
#define NSITES 5120
/* GCC takes 25 s to optimise the switch (clang 1 s): not there */
#if defined(__GNUC__) && !defined(__clang__)
#define SITES_UNOPTIMISED __attribute__((noinline, optimize("O0")))
#else
#define SITES_UNOPTIMISED __attribute__((noinline))
#endif

static int SITES_UNOPTIMISED lock_at_site(int i, pthread_mutex_t *m)
{
	int err = EINVAL;
	switch (i) {
		SITES1024(0) SITES1024(1024) SITES1024(2048) SITES1024(3072) SITES1024(4096)
	}
	return err;
}

/* The last life is locked again by a thread that waits (asleep in its
 * futex before it is unlocked): a wait, with its stack, for the site line
 * it ends in. */
static int sites(int n)
{
	n = n < NSITES ? n : NSITES;
	for (int i = 0; i < n; i++) {
		pthread_mutex_t m;
		pthread_t t;
		CHECK(pthread_mutex_init(&m, NULL), 0);
		CHECK(lock_at_site(i, &m), 0);
		if (i == n - 1) {
			pool = &m;
			pool_waiter = 0;
			CHECK(pthread_create(&t, NULL, wait_for_pool, NULL), 0);
			while (!pool_waiter || !sleeps_on_futex(pool_waiter, &m.__data.__lock))
				sched_yield();
		}
		CHECK(pthread_mutex_unlock(&m), 0);
		if (i == n - 1)
			CHECK(pthread_join(t, NULL), 0);
		CHECK(pthread_mutex_destroy(&m), 0);
	}
	printf("%d sites\n", n);
	return 0;
}

/* waitsites N: a thread waits for m1 at site i (asleep in its futex
 * before main unlocks), for each of the first N: N stacks of one wait. */
static volatile int wait_site;

static void *wait_at_site(void *arg)
{
	pool_waiter = (pid_t)syscall(SYS_gettid);
	CHECK(lock_at_site(wait_site, &m1), 0);
	CHECK(pthread_mutex_unlock(&m1), 0);
	return arg;
}

static int waitsites(int n)
{
	n = n < NSITES ? n : NSITES;
	for (int i = 0; i < n; i++) {
		pthread_t t;
		CHECK(pthread_mutex_lock(&m1), 0);
		pool_waiter = 0;
		wait_site = i;
		CHECK(pthread_create(&t, NULL, wait_at_site, NULL), 0);
		while (!pool_waiter || !sleeps_on_futex(pool_waiter, &m1.__data.__lock))
			sched_yield();
		CHECK(pthread_mutex_unlock(&m1), 0);
		CHECK(pthread_join(t, NULL), 0);
	}
	printf("%d waits\n", n);
	return 0;
}

static void lock_times(pthread_mutex_t *m, int n)
{
	for (int i = 0; i < n; i++) {
		CHECK(pthread_mutex_lock(m), 0);
		CHECK(pthread_mutex_unlock(m), 0);
	}
}

static int recycle(void)
{
	static pthread_mutex_t x, y;
	CHECK(pthread_mutex_init(&x, NULL), 0);
	lock_times(&x, 3);
	CHECK(pthread_mutex_destroy(&x), 0);
	CHECK(pthread_mutex_init(&y, NULL), 0);
	lock_times(&y, 5);
	CHECK(pthread_mutex_init(&x, NULL), 0);
	lock_times(&x, 2);
	/* 16 mutexes apart: 640 bytes, the same entry of a 16-entry cache
	 * indexed by address bits 3..6 */
	static pthread_mutex_t row[17];
	pthread_mutex_t *p = &row[0], *q = &row[16];
	CHECK(pthread_mutex_init(p, NULL), 0);
	CHECK(pthread_mutex_init(q, NULL), 0);
	for (int i = 0; i < 1000; i++) {
		lock_times(p, 1);
		lock_times(q, 1);
	}
	for (int i = 0; i < 100; i++) {
		CHECK(pthread_mutex_lock(p), 0);
		CHECK(pthread_mutex_lock(q), 0);
		CHECK(pthread_mutex_unlock(q), 0);
		CHECK(pthread_mutex_unlock(p), 0);
	}
	printf("x %p\ny %p\np %p\nq %p\n", (void *)&x, (void *)&y, (void *)p,
	       (void *)q);
	return 0;
}

/* turns: more mutexes in turn than the first level of a thread's lookup
 * cache holds (16), one of them given a new life half-way (at the same
 * address: the life's numbers start from zero, whatever the caches hold),
 * and two that share an entry of both levels (8 KiB apart: address bits
 * 3..12). */
static int turns(void)
{
	static pthread_mutex_t ring[40];
	static _Alignas(64) char apart[8192 + sizeof(pthread_mutex_t)];
	pthread_mutex_t *u = (pthread_mutex_t *)apart,
			*v = (pthread_mutex_t *)(apart + 8192);
	for (int j = 0; j < 40; j++)
		CHECK(pthread_mutex_init(&ring[j], NULL), 0);
	for (int round = 0; round < 100; round++) {
		if (round == 50) {
			CHECK(pthread_mutex_destroy(&ring[7]), 0);
			CHECK(pthread_mutex_init(&ring[7], NULL), 0);
		}
		for (int j = 0; j < 40; j++)
			lock_times(&ring[j], 1);
	}
	CHECK(pthread_mutex_init(u, NULL), 0);
	CHECK(pthread_mutex_init(v, NULL), 0);
	for (int i = 0; i < 1000; i++) {
		lock_times(u, 1);
		lock_times(v, 1);
	}
	printf("ring0 %p\nring7 %p\nring39 %p\nu %p\nv %p\n", (void *)&ring[0],
	       (void *)&ring[7], (void *)&ring[39], (void *)u, (void *)v);
	return 0;
}

static int many(int n)
{
	pthread_mutex_t *ms = calloc((size_t)n, sizeof *ms);
	for (int i = 0; i < n; i++) {
		CHECK(pthread_mutex_init(&ms[i], NULL), 0);
		CHECK(pthread_mutex_lock(&ms[i]), 0);
		CHECK(pthread_mutex_unlock(&ms[i]), 0);
	}
	printf("%d mutexes locked\n", n);
	free(ms); /* without pthread_mutex_destroy, as many programs do */
	return 0;
}

static pthread_barrier_t both;

static void *hang_one(void *arg)
{
	(void)arg;
	CHECK(pthread_mutex_lock(&m1), 0); /* HANG_ONE_FIRST */
	pthread_barrier_wait(&both);
	CHECK(pthread_mutex_lock(&m2), 0); /* HANG_ONE_WAITS */
	return NULL;
}

static void *hang_two(void *arg)
{
	(void)arg;
	CHECK(pthread_mutex_lock(&m2), 0); /* HANG_TWO_FIRST */
	pthread_barrier_wait(&both);
	CHECK(pthread_mutex_lock(&m1), 0); /* HANG_TWO_WAITS */
	return NULL;
}

static int hang(void)
{
	pthread_t a, b;
	pthread_barrier_init(&both, NULL, 2);
	pthread_create(&a, NULL, hang_one, NULL);
	pthread_create(&b, NULL, hang_two, NULL);
	/* both threads are past the barrier and blocked when both mutexes
	 * have a waiter (glibc's lock word 2) */
	while (!waiters_on(&m1) || !waiters_on(&m2))
		usleep(1000);
	printf("deadlocked\n");
	fflush(stdout);
	pthread_join(a, NULL);
	return 0;
}

static volatile pid_t sleeper_tid;

static void *holder_sleeps(void *arg)
{
	(void)arg;
	sleeper_tid = (pid_t)syscall(SYS_gettid);
	CHECK(pthread_mutex_lock(&m1), 0);
	sem_post(&go);
	for (;;)
		pause(); /* HOLDSLEEP_PAUSES */
	return NULL;
}

static volatile unsigned long spins;

/* It says it holds m1 from inside its loop, a thousand turns in: posted
 * before the loop, a holder preempted on its way out of sem_post was
 * found there, at the line of the post (1 run in some hundreds of the
 * sanitized build on a loaded machine). */
static void *holder_spins(void *arg)
{
	(void)arg;
	CHECK(pthread_mutex_lock(&m1), 0);
	for (;;)
		if (++spins == 1000) sem_post(&go); /* HOLDSPIN_RUNS */
	return NULL;
}

/* Says "waiting" once the main thread is blocked on m1 (glibc's lock word
 * shows a waiter) and a sleeping holder is in pause(), where the dump
 * must find it. */
static void *holdsleep_watch(void *arg)
{
	(void)arg;
	while (!waiters_on(&m1)
#ifdef SYS_pause
	       || (sleeper_tid && proc_syscall(sleeper_tid, NULL) != SYS_pause)
#endif
	)
		usleep(1000);
	printf("waiting\n");
	fflush(stdout);
	return NULL;
}

static int holdsleep(void *(*holder)(void *))
{
	pthread_t t, w;
	pthread_create(&t, NULL, holder, NULL);
	sem_wait(&go);
	pthread_create(&w, NULL, holdsleep_watch, NULL);
	CHECK(pthread_mutex_lock(&m1), 0); /* never returns */
	return 0;
}

static int cond_ready;

static void *cond_waiter(void *arg)
{
	(void)arg;
	CHECK(pthread_mutex_lock(&m2), 0);
	CHECK(pthread_mutex_lock(&m1), 0);
	sem_post(&go); /* about to wait for the condition */
	while (!cond_ready)
		pthread_cond_wait(&cond, &m1); /* CONDHANG_WAITS */
	CHECK(pthread_mutex_unlock(&m1), 0);
	CHECK(pthread_mutex_unlock(&m2), 0);
	return NULL;
}

static void *cond_signaller(void *arg)
{
	(void)arg;
	sem_wait(&go);
	CHECK(pthread_mutex_lock(&m2), 0); /* CONDHANG_BLOCKS */
	CHECK(pthread_mutex_lock(&m1), 0);
	cond_ready = 1;
	pthread_cond_signal(&cond);
	CHECK(pthread_mutex_unlock(&m1), 0);
	CHECK(pthread_mutex_unlock(&m2), 0);
	return NULL;
}

static int condhang(void)
{
	pthread_t a, b;
	pthread_create(&a, NULL, cond_waiter, NULL);
	pthread_create(&b, NULL, cond_signaller, NULL);
	/* hung once the signaller waits for m2 and the waiter is in its
	 * condition wait: it has let m1 go (a 20 ms sleep of the signaller
	 * was to see to that) */
	while (!waiters_on(&m2) || __atomic_load_n(&m1.__data.__lock, __ATOMIC_RELAXED))
		usleep(1000);
	printf("hung\n");
	fflush(stdout);
	pthread_join(a, NULL);
	return 0;
}

/* condbusy: the handler runs in the holder's condition wait, for ever */
static volatile unsigned long busy_spins;

static void busy_handler(int sig)
{
	(void)sig;
	for (;;)
		busy_spins++; /* CONDBUSY_RUNS */
}

static void *cond_busy(void *arg)
{
	(void)arg;
	CHECK(pthread_mutex_lock(&m1), 0);
	CHECK(pthread_mutex_lock(&m2), 0);
	sem_post(&go);
	while (!cond_ready)
		pthread_cond_wait(&cond, &m2); /* CONDBUSY_WAITS */
	return NULL;
}

static int condbusy(void)
{
	pthread_t t, w;
	struct sigaction sa = { .sa_handler = busy_handler };
	sigaction(SIGUSR2, &sa, NULL);
	pthread_create(&t, NULL, cond_busy, NULL);
	sem_wait(&go);
	/* free once the holder's wait has let it go: the holder is in it */
	CHECK(pthread_mutex_lock(&m2), 0);
	CHECK(pthread_mutex_unlock(&m2), 0);
	pthread_kill(t, SIGUSR2);
	pthread_create(&w, NULL, holdsleep_watch, NULL);
	CHECK(pthread_mutex_lock(&m1), 0); /* never returns */
	return 0;
}

static volatile int hammer_stop;
static long hammered;

static void *hammer_thread(void *arg)
{
	long n = 0;
	(void)arg;
	while (!hammer_stop) {
		CHECK(pthread_mutex_lock(&m1), 0);
		hammered++;
		CHECK(pthread_mutex_unlock(&m1), 0);
		if (++n % 256 == 0)
			sched_yield(); /* leave the signal sender some CPU */
	}
	return (void *)n;
}

static int hammer(int seconds, int until_dump)
{
	pthread_t t[4];
	long total = 0;
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, hammer_thread, NULL);
	printf("hammering\n");
	fflush(stdout);
	/* S seconds, and until the first live dump's file is there (its
	 * thread may get the CPU late beside a storm of signals); each
	 * signal cuts a sleep short, so the clock says when */
	const char *out = until_dump ? getenv("MUTEXSTAT_OUTPUT") : NULL;
	char first[4096];
	snprintf(first, sizeof first, "%s.1", out ? out : "");
	time_t end = time(NULL) + seconds;
	while (time(NULL) < end ||
	       (out && access(first, F_OK) != 0 && time(NULL) < end + 30)) {
		struct timespec t = { 0, 10000000 };
		nanosleep(&t, NULL);
	}
	hammer_stop = 1;
	for (int i = 0; i < 4; i++) {
		void *n;
		pthread_join(t[i], &n);
		total += (long)n;
	}
	printf("%ld locks, counter %ld, %s\n", total, hammered,
	       total == hammered ? "exact" : "WRONG");
	printf("m1 %p\n", (void *)&m1);
	return total == hammered ? 0 : 1;
}

static void *lock_once(void *arg)
{
	(void)arg;
	CHECK(pthread_mutex_lock(&m1), 0);
	CHECK(pthread_mutex_unlock(&m1), 0);
	return NULL;
}

static int task_count(void)
{
	int n = 0;
	DIR *d = opendir("/proc/self/task");
	for (struct dirent *e; d && (e = readdir(d));)
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

static void *nothing(void *arg)
{
	*(pid_t *)arg = (pid_t)syscall(SYS_gettid);
	return NULL;
}

/* pthread_join returns once the kernel has cleared the thread's tid,
 * which can be before its task leaves /proc/self/task: wait for that
 * (up to 2 s), so the count below is the threads that remain. */
static void task_gone(pid_t tid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/self/task/%d", (int)tid);
	for (int i = 0; i < 400 && access(path, F_OK) == 0; i++) {
		struct timespec nap = { 0, 5000000 };
		nanosleep(&nap, NULL);
	}
}

static int onethread(int with_thread)
{
	if (with_thread) {
		pthread_t t;
		pid_t tid = 0;
		CHECK(pthread_create(&t, NULL, nothing, &tid), 0);
		pthread_join(t, NULL);
		task_gone(tid);
	}
	for (int i = 0; i < 10; i++) {
		CHECK(pthread_mutex_lock(&m1), 0);
		CHECK(pthread_mutex_unlock(&m1), 0);
	}
	printf("m1 %p\nthreads %d\nready\n", (void *)&m1, task_count());
	fflush(stdout);
	for (;;) {
		pause();
		CHECK(pthread_mutex_lock(&m1), 0);
		CHECK(pthread_mutex_unlock(&m1), 0);
	}
}

static int threads(int n)
{
	pthread_t t[100];
	for (int done = 0; done < n;) {
		int batch = n - done < 100 ? n - done : 100;
		for (int i = 0; i < batch; i++)
			CHECK(pthread_create(&t[i], NULL, lock_once, NULL), 0);
		for (int i = 0; i < batch; i++)
			pthread_join(t[i], NULL);
		done += batch;
	}
	printf("%d threads\nm1 %p\n", n, (void *)&m1);
	return 0;
}

/* passing: m1 goes from thread to thread; between its turns a thread waits
 * a while for a condition nobody signals, with no mutex but its own (or,
 * held, also during its turn, holding m1). */
static struct timespec passing_end;

/* A wait of N microseconds for a condition nobody signals. */
static void wait_unsignalled(pthread_mutex_t *own, pthread_cond_t *never, long us)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += us * 1000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	CHECK(pthread_mutex_lock(own), 0);
	int rc = pthread_cond_timedwait(never, own, &until);
	if (rc != 0) /* 0: a spurious wake-up */
		CHECK(rc, ETIMEDOUT);
	CHECK(pthread_mutex_unlock(own), 0);
}

static void *pass_m1(void *held)
{
	pthread_mutex_t own = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t never = PTHREAD_COND_INITIALIZER;
	for (;;) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > passing_end.tv_sec ||
		    (now.tv_sec == passing_end.tv_sec && now.tv_nsec >= passing_end.tv_nsec))
			return NULL;
		CHECK(pthread_mutex_lock(&m1), 0);
		if (held)
			wait_unsignalled(&own, &never, 1000);
		else
			usleep(200);
		CHECK(pthread_mutex_unlock(&m1), 0);
		wait_unsignalled(&own, &never, 5000);
	}
}

static int passing(int seconds, int held)
{
	pthread_t t[32];
	clock_gettime(CLOCK_MONOTONIC, &passing_end);
	passing_end.tv_sec += seconds;
	for (int i = 0; i < 32; i++)
		CHECK(pthread_create(&t[i], NULL, pass_m1, held ? &m1 : NULL), 0);
	printf("m1 %p\npassing\n", (void *)&m1);
	fflush(stdout);
	for (int i = 0; i < 32; i++)
		pthread_join(t[i], NULL);
	return 0;
}

/* Signals until the process is gone.  Through a pidfd: with kill(pid) the
 * loop would go on at whatever process gets the pid next -- on a machine
 * whose pids wrap at 32768, another test's, running beside this one in
 * `make check -j2` (it got thousands of dumps it never asked for, and a
 * grep died of SIGUSR1). */
static int storm(pid_t pid)
{
	long sent = 0;
#ifdef SYS_pidfd_open
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd >= 0) {
		while (syscall(SYS_pidfd_send_signal, fd, SIGUSR1, NULL, 0) == 0)
			sent++;
		close(fd);
		printf("%ld signals\n", sent);
		return 0;
	}
#endif
	/* no pidfd (Linux before 5.3): the pid, with that risk */
	while (kill(pid, SIGUSR1) == 0)
		sent++;
	printf("%ld signals\n", sent);
	return 0;
}

/* A server's worker: forked by a root process, it becomes uid and gid
 * 65534 (nobody), as apache's workers become www-data, then locks a mutex
 * 1000 times and exits.  (Run as root; otherwise the worker says so and
 * exits 3.) */
static int worker_as_nobody(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		if (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0)
			_exit(3);
		lock_times(&m1, 1000);
		exit(0);
	}
	int status = 0;
	CHECK(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 4;
}

/* One thread: a mutex locked once, then "ready", then waits (no mutex
 * call) until the file `until` exists; with `lock_after`, one more lock
 * then, which starts the dump thread for the live dump asked meanwhile,
 * and waits for that dump (MUTEXSTAT_OUTPUT.1): a process that ends first
 * may end before the dump begins. */
static int one_thread_dump(const char *until, int lock_after)
{
	static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	printf("ready\n");
	fflush(stdout);
	while (access(until, F_OK) != 0)
		usleep(2000);
	if (lock_after) {
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
		const char *out = getenv("MUTEXSTAT_OUTPUT");
		char dump[4200];
		snprintf(dump, sizeof dump, "%s.1", out ? out : "");
		for (int i = 0; out && i < 10000 && !file_has(dump, "\nTop "); i++)
			usleep(2000);
	}
	return 0;
}

int main(int argc, char **argv)
{
	sem_init(&go, 0, 0);
	sem_init(&done, 0, 0);
	sem_init(&helper_ready, 0, 0);
	sem_init(&helper_done, 0, 0);
	const char *what = argc > 1 ? argv[1] : "";
	if (!strcmp(what, "baddeadline"))
		return baddeadline();
	if (!strcmp(what, "exact"))
		return exact();
	if (!strcmp(what, "onedump") && argc > 3)
		return one_thread_dump(argv[2], atoi(argv[3]));
	if (!strcmp(what, "timeouts"))
		return timeouts();
	if (!strcmp(what, "contend"))
		return contend(argc > 2 ? atoi(argv[2]) : 0);
	if (!strcmp(what, "condwait"))
		return condwait();
	if (!strcmp(what, "held"))
		return held();
	if (!strcmp(what, "exitwait"))
		return exitwait();
	if (!strcmp(what, "heldtimed"))
		return heldtimed();
	if (!strcmp(what, "heldexited"))
		return heldexited();
	if (!strcmp(what, "resethold"))
		return resethold();
	if (!strcmp(what, "waitedended"))
		return waitedended();
	if (!strcmp(what, "destroy"))
		return destroy();
	if (!strcmp(what, "longnames"))
		return longnames();
	if (!strcmp(what, "endedwait"))
		return endedwait(argc > 2 && !strcmp(argv[2], "unnamed-last"));
	if (!strcmp(what, "many") && argc > 2)
		return many(atoi(argv[2]));
	if (!strcmp(what, "hang"))
		return hang();
	if (!strcmp(what, "holdsleep"))
		return holdsleep(holder_sleeps);
	if (!strcmp(what, "holdspin"))
		return holdsleep(holder_spins);
	if (!strcmp(what, "condhang"))
		return condhang();
	if (!strcmp(what, "condbusy"))
		return condbusy();
	if (!strcmp(what, "hammer") && argc > 2)
		return hammer(atoi(argv[2]), argc > 3 && !strcmp(argv[3], "until-dump"));
	if (!strcmp(what, "threads") && argc > 2)
		return threads(atoi(argv[2]));
	if (!strcmp(what, "longsite")) {
		a_function_whose_name_is_long_enough_to_fill_most_of_a_report_line_on_its_own_if_printed_whole();
		return 0;
	}
	if (!strcmp(what, "longwait"))
		return longwait();
	if (!strcmp(what, "nobody"))
		return worker_as_nobody();
	if (!strcmp(what, "passing") && argc > 2)
		return passing(atoi(argv[2]), argc > 3 && !strcmp(argv[3], "held"));
	if (!strcmp(what, "signal") && argc > 2)
		return storm((pid_t)atoi(argv[2]));
	if (!strcmp(what, "onethread"))
		return onethread(argc > 2 && !strcmp(argv[2], "thread"));
	if (!strcmp(what, "turns"))
		return turns();
	if (!strcmp(what, "byturns") && argc > 2) {
		const char *how = argc > 3 ? argv[3] : "";
		turns_nested = !strcmp(how, "nested");
		turns_spin = !strncmp(how, "spin", 4);
		return byturns(atoi(argv[2]), !strcmp(how, "waited") || !strcmp(how, "spinwaited"));
	}
	if (!strcmp(what, "recycle"))
		return recycle();
	if (!strcmp(what, "sites") && argc > 2)
		return sites(atoi(argv[2]));
	if (!strcmp(what, "waitsites") && argc > 2)
		return waitsites(atoi(argv[2]));
	if (!strcmp(what, "shortholds") && argc > 3)
		return shortholds(atol(argv[2]), atol(argv[3]));
	if (!strcmp(what, "none"))
		return 0;
	fprintf(stderr, "usage: scenario exact|contend|condwait|held|destroy|recycle|many N|hang|"
			"hammer S|none\n");
	return 2;
}
