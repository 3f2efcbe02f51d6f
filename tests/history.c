/* history.c - the programs of tests/history.sh: each drives one mutex, m,
 * down chosen lock paths in an order fixed by semaphores (no pthread mutex
 * of the test's own, so m is the only mutex recorded), and prints what the
 * report's recent operations of m must then say.
 *
 * Thread A is main, thread B a helper that runs one step at a time when A
 * hands it one.  Every call of m sits on a line of its own marked H:name,
 * in a function that is never inlined and never ends in that call, so the
 * report's caller column is that function and that line.  Prints:
 *
 *   m 0x...      the mutex's address
 *   A tid, B tid the two threads
 *   and what the scenario measured (holds).
 *
 *   owners   uncontended changes of owner, by lock, trylock, timedlock and
 *            clocklock, between retakes by the same thread (the plain path)
 *   contended a busy trylock, a timedlock that times out, and a lock, a
 *            timedlock and a clocklock that each wait for the other thread
 *            (asleep in the futex before the holder lets go)
 *   sampled  one wait (so holds are timed), then 4,161 acquisitions in
 *            all, the last 64 of them past the first 4,096 and on every
 *            path: see sampled() below
 *   holds    one wait, then holds of known length: B 20 ms, A 20, 20, 50,
 *            50 ms; prints how long the holds could at most have lasted
 *            (from before each lock to after its unlock), summed, and the
 *            longest
 *
 * With "ended" after the scenario's name, m is destroyed at the end. */
#define _GNU_SOURCE
#include "proc_wait.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#undef CHECK /* proc_wait.h's: this one says what was wanted */

#define CHECK(call, want)                                                     \
	do {                                                                  \
		int rc_ = (call);                                             \
		if (rc_ != (want)) {                                          \
			fprintf(stderr, "%s:%d: %s = %d, want %d\n", __FILE__, \
				__LINE__, #call, rc_, want);                  \
			exit(3);                                              \
		}                                                             \
	} while (0)

static pthread_mutex_t m;

/* ---- thread B, one step at a time ----------------------------------- */

static sem_t b_go, b_done;
static void (*b_step)(void);
static pid_t a_tid, b_tid;

static void *b_main(void *arg)
{
	(void)arg;
	__atomic_store_n(&b_tid, gettid(), __ATOMIC_RELEASE);
	for (;;) {
		sem_wait(&b_go);
		if (!b_step)
			return NULL;
		b_step();
		sem_post(&b_done);
	}
}

/* B starts step; b_wait() waits for its end. */
static void b_start(void (*step)(void))
{
	b_step = step;
	sem_post(&b_go);
}

static void b_wait(void)
{
	sem_wait(&b_done);
}

static void on_b(void (*step)(void))
{
	b_start(step);
	b_wait();
}

static void print_tid(const char *who)
{
	printf("%s %d\n", who, (int)gettid());
}

/* The other thread sleeps in glibc's lock of m, where the library's clock
 * runs.  (Not glibc's mark of a waiter, __lock == 2: a timed lock that
 * timed out leaves it, and B's lock was then taken for waiting before B
 * had begun it -- its 50 ms wait measured 30 on a loaded machine.) */
static void until_waiter(void)
{
	pid_t other = gettid() == a_tid ? __atomic_load_n(&b_tid, __ATOMIC_ACQUIRE) : a_tid;
	while (!sleeps_on_futex(other, &m.__data.__lock))
		usleep(1000);
}

static struct timespec in_ms(long ms, clockid_t clock)
{
	struct timespec t;
	clock_gettime(clock, &t);
	t.tv_sec += ms / 1000;
	t.tv_nsec += (ms % 1000) * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	return t;
}

static long long now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* ---- the steps: each of m's calls on a line of its own ---------------- */

static NOINLINE void init_m(void)
{
	CHECK(pthread_mutex_init(&m, NULL), 0); /* H:init */
}

static NOINLINE void destroy_m(void)
{
	CHECK(pthread_mutex_destroy(&m), 0); /* H:destroy */
}

static NOINLINE void a_lock_unlock(void)
{
	CHECK(pthread_mutex_lock(&m), 0); /* H:a_lock */
	CHECK(pthread_mutex_unlock(&m), 0); /* H:a_unlock */
}

static NOINLINE void b_lock_unlock(void)
{
	CHECK(pthread_mutex_lock(&m), 0); /* H:b_lock */
	CHECK(pthread_mutex_unlock(&m), 0); /* H:b_unlock */
}

static NOINLINE void a_trylock_unlock(void)
{
	CHECK(pthread_mutex_trylock(&m), 0); /* H:a_trylock */
	CHECK(pthread_mutex_unlock(&m), 0); /* H:a_tryunlock */
}

static NOINLINE void b_trylock_unlock(void)
{
	CHECK(pthread_mutex_trylock(&m), 0); /* H:b_trylock */
	CHECK(pthread_mutex_unlock(&m), 0); /* H:b_tryunlock */
}

static NOINLINE void a_timedlock_unlock(void)
{
	struct timespec t = in_ms(60000, CLOCK_REALTIME);
	CHECK(pthread_mutex_timedlock(&m, &t), 0); /* H:a_timedlock */
	CHECK(pthread_mutex_unlock(&m), 0); /* H:a_timedunlock */
}

static NOINLINE void b_clocklock_unlock(void)
{
	struct timespec t = in_ms(60000, CLOCK_MONOTONIC);
	CHECK(pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &t), 0); /* H:b_clocklock */
	CHECK(pthread_mutex_unlock(&m), 0); /* H:b_clockunlock */
}

static NOINLINE void a_lock(void)
{
	CHECK(pthread_mutex_lock(&m), 0); /* H:a_lock_only */
}

static NOINLINE void a_unlock(void)
{
	CHECK(pthread_mutex_unlock(&m), 0); /* H:a_unlock_only */
}

static NOINLINE void b_lock(void)
{
	CHECK(pthread_mutex_lock(&m), 0); /* H:b_lock_only */
}

static NOINLINE void b_trylock_busy(void)
{
	CHECK(pthread_mutex_trylock(&m), EBUSY); /* H:b_trylock_busy */
}

static NOINLINE void b_timedlock_timeout(void)
{
	struct timespec t = in_ms(20, CLOCK_REALTIME);
	CHECK(pthread_mutex_timedlock(&m, &t), ETIMEDOUT); /* H:b_timedlock_timeout */
}

/* B waits for m, then holds it 20 ms. */
static NOINLINE void b_wait_hold_20(void)
{
	CHECK(pthread_mutex_lock(&m), 0); /* H:b_lock_wait */
	usleep(20000);
	CHECK(pthread_mutex_unlock(&m), 0); /* H:b_unlock_wait */
}

static NOINLINE void a_timedlock_wait(void)
{
	struct timespec t = in_ms(60000, CLOCK_REALTIME);
	CHECK(pthread_mutex_timedlock(&m, &t), 0); /* H:a_timedlock_wait */
}

static NOINLINE void a_clocklock_wait(void)
{
	struct timespec t = in_ms(60000, CLOCK_MONOTONIC);
	CHECK(pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &t), 0); /* H:a_clocklock_wait */
}

static NOINLINE void a_relock(int times)
{
	for (int i = 0; i < times; i++) {
		CHECK(pthread_mutex_lock(&m), 0); /* H:a_relock */
		CHECK(pthread_mutex_unlock(&m), 0); /* H:a_reunlock */
	}
}

/* B lets go of m once A waits for it (asleep in the futex) and 30 ms
 * more have passed. */
static NOINLINE void b_unlock_after_waiter(void)
{
	until_waiter();
	usleep(30000);
	CHECK(pthread_mutex_unlock(&m), 0); /* H:b_unlock_after */
}

static void print_b_tid(void)
{
	print_tid("B");
}

/* ---- the scenarios -------------------------------------------------- */

static void owners(void)
{
	init_m();
	a_lock_unlock();           /* the first acquisition */
	on_b(b_lock_unlock);       /* owner change */
	a_lock_unlock();           /* owner change */
	on_b(b_lock_unlock);       /* owner change */
	a_lock_unlock();           /* owner change */
	a_lock_unlock();           /* retake */
	on_b(b_trylock_unlock);    /* owner change, by trylock */
	on_b(b_trylock_unlock);    /* retake, by trylock */
	a_timedlock_unlock();      /* owner change, by timedlock */
	on_b(b_clocklock_unlock);  /* owner change, by clocklock */
}

static void contended(void)
{
	init_m();
	a_lock();
	on_b(b_trylock_busy);
	on_b(b_timedlock_timeout); /* waits 20 ms */
	/* B waits 50 ms for A, then holds m 20 ms */
	b_start(b_wait_hold_20);
	until_waiter();
	usleep(50000);
	a_unlock();
	b_wait();
	/* A waits 30 ms for B, by timedlock */
	on_b(b_lock);
	b_start(b_unlock_after_waiter);
	a_timedlock_wait();
	b_wait();
	a_unlock();
	/* and by clocklock */
	on_b(b_lock);
	b_start(b_unlock_after_waiter);
	a_clocklock_wait();
	b_wait();
	a_unlock();
	a_trylock_unlock();
}

/* One wait: acquisitions 1 (A) and 2 (B); holds are timed from the 2nd to
 * the 4,096th, then 1 in 16: the 4,097th, 4,113th, 4,129th, 4,145th and
 * 4,161st.  Each path past the 4,096th meets a timed one and others. */
static void sampled(void)
{
	init_m();
	a_lock();
	b_start(b_lock_unlock);
	until_waiter();
	a_unlock();
	b_wait();
	a_relock(4142);         /* 3rd to 4,144th: relocks, 4,113th and 4,129th timed */
	on_b(b_lock_unlock);    /* 4,145th: an owner change, timed */
	on_b(b_lock_unlock);    /* a relock */
	a_relock(12);           /* 4,147th: an owner change, not timed; relocks */
	on_b(b_trylock_unlock); /* 4,159th: an owner change by trylock */
	on_b(b_trylock_unlock); /* a retake by trylock, */
	on_b(b_trylock_unlock); /* and one timed, the 4,161st */
}

/* The longest each timed hold can have lasted, summed, and the longest. */
static long long bound_total, bound_max;

static void bound_add(long long ns)
{
	bound_total += ns;
	if (ns > bound_max)
		bound_max = ns;
}

/* A hold of m by A lasting at least `ms`; at most from before its lock to
 * after its unlock. */
static NOINLINE void a_hold(long ms)
{
	long long t0 = now_ns();
	CHECK(pthread_mutex_lock(&m), 0); /* H:a_hold_lock */
	usleep(ms * 1000);
	CHECK(pthread_mutex_unlock(&m), 0); /* H:a_hold_unlock */
	bound_add(now_ns() - t0);
}

/* B's hold after its wait, 20 ms, began after A began to let go of m. */
static void holds(void)
{
	init_m();
	a_lock();
	b_start(b_wait_hold_20); /* B's hold is the first timed one */
	until_waiter();
	long long let_go = now_ns();
	a_unlock();
	b_wait();
	bound_add(now_ns() - let_go);
	a_hold(20);
	a_hold(20);
	a_hold(50);
	a_hold(50);
	printf("bound total %lld max %lld\n", bound_total, bound_max);
}

/* B's only wait times out: the holds after it are timed, 20 and 50 ms. */
static void timeouts(void)
{
	init_m();
	a_lock();
	on_b(b_timedlock_timeout);
	a_unlock();
	a_hold(20);
	a_hold(50);
	printf("bound total %lld max %lld\n", bound_total, bound_max);
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	void (*run)(void) = !strcmp(what, "owners")    ? owners
			    : !strcmp(what, "contended") ? contended
			    : !strcmp(what, "sampled")   ? sampled
			    : !strcmp(what, "holds")     ? holds
			    : !strcmp(what, "timeouts")  ? timeouts
							 : NULL;
	if (!run) {
		fprintf(stderr, "usage: history owners|contended|sampled|holds|timeouts\n");
		return 2;
	}
	pthread_t b;
	a_tid = gettid();
	sem_init(&b_go, 0, 0);
	sem_init(&b_done, 0, 0);
	pthread_create(&b, NULL, b_main, NULL);
	print_tid("A");
	on_b(print_b_tid);
	run();
	if (argc > 2 && !strcmp(argv[2], "ended"))
		destroy_m();
	b_start(NULL);
	pthread_join(b, NULL);
	printf("m %p\n", (void *)&m);
	return 0;
}
