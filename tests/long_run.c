/* long_run.c - the workloads of tests/long_run.sh: what a program that runs
 * for a long time does over and over, with the memory it should not cost.
 *
 *   threads N     N short threads, four alive at a time; each makes a
 *                 mutex of its own, and takes the program's global mutex
 *                 while holding it (a lock-order edge: the library takes a
 *                 stack, so libunwind sets the thread up and, as the thread
 *                 ends, locks a mutex of its own after the library's
 *                 thread-exit handler has run).  Prints the peak resident
 *                 memory after half of the threads and at the end.
 *   waits N       N mutexes one after another, each made to wait once:
 *                 main holds it until a helper thread sleeps in the
 *                 kernel on it (blame lines of a life that ends); then one
 *                 more wait, on the global mutex, at a new line, whose
 *                 stacks the report must still have.
 *   behind N FILE N threads wait for the global mutex, which main holds
 *                 while it sleeps (nanosleep, 20 ms at a time), until FILE
 *                 (a live dump's JSON) is complete; prints how many of its
 *                 sleeps a signal cut short (the dump asks main where it
 *                 is: that is one).
 *   lives N       one thread makes N mutexes one after another, each
 *                 locked while it holds the global mutex, then destroyed
 *                 (a new lock-order edge each, of a life that ends); then
 *                 takes two mutexes A and B both ways round, a real
 *                 inversion that the report must still find.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "proc_wait.h"

static pthread_mutex_t global = PTHREAD_MUTEX_INITIALIZER;
static long counted;

/* ---- threads: many short threads ------------------------------------------- */
static void *short_thread(void *arg)
{
	pthread_mutex_t own;
	CHECK(pthread_mutex_init(&own, NULL));
	CHECK(pthread_mutex_lock(&own));
	CHECK(pthread_mutex_lock(&global));
	counted++;
	CHECK(pthread_mutex_unlock(&global));
	CHECK(pthread_mutex_unlock(&own));
	CHECK(pthread_mutex_destroy(&own));
	return arg;
}

static int threads_main(long n)
{
	long half = -1;
	for (long i = 0; i < n; i += 4) {
		pthread_t t[4];
		for (int j = 0; j < 4; j++)
			CHECK(pthread_create(&t[j], NULL, short_thread, NULL));
		for (int j = 0; j < 4; j++)
			CHECK(pthread_join(t[j], NULL));
		if (half < 0 && i >= n / 2)
			half = status_kb("VmHWM");
	}
	long end = status_kb("VmHWM");
	printf("%ld threads, the global mutex taken %ld times\n", n, counted);
	printf("peak resident: %ld kB after half, %ld kB at the end: grew %ld kB\n",
	       half, end, end - half);
	return counted == n ? 0 : 1;
}

/* ---- waits: blame lines of mutexes that end ------------------------------------ */
static pthread_mutex_t *to_wait_on;
static int turn; /* 0 main's, 1 the helper's to lock, 2 it is on its way */
static pthread_mutex_t turn_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_cond = PTHREAD_COND_INITIALIZER;

static void set_turn(int t)
{
	CHECK(pthread_mutex_lock(&turn_lock));
	turn = t;
	CHECK(pthread_cond_broadcast(&turn_cond));
	CHECK(pthread_mutex_unlock(&turn_lock));
}

static void wait_turn(int t)
{
	CHECK(pthread_mutex_lock(&turn_lock));
	while (turn != t)
		CHECK(pthread_cond_wait(&turn_cond, &turn_lock));
	CHECK(pthread_mutex_unlock(&turn_lock));
}

/* glibc's lock word is 2 once a waiter sleeps in the kernel on it. */
static void until_waited_on(pthread_mutex_t *m)
{
	while (__atomic_load_n(&m->__data.__lock, __ATOMIC_ACQUIRE) != 2)
		sched_yield();
}

static long waits_left;

static void *waiter(void *arg)
{
	for (;;) {
		wait_turn(1);
		pthread_mutex_t *m = to_wait_on;
		if (!m)
			return arg;
		set_turn(2);
		CHECK(pthread_mutex_lock(m)); /* waits: main holds it */
		CHECK(pthread_mutex_unlock(m));
		set_turn(0);
	}
}

/* main holds m until the waiter sleeps on it, then lets go */
__attribute__((noinline)) static void make_wait(pthread_mutex_t *m)
{
	CHECK(pthread_mutex_lock(m));
	to_wait_on = m;
	set_turn(1);
	wait_turn(2);
	until_waited_on(m);
	CHECK(pthread_mutex_unlock(m));
	wait_turn(0);
}

static int waits_main(long n)
{
	pthread_t t;
	CHECK(pthread_create(&t, NULL, waiter, NULL));
	for (waits_left = n; waits_left > 0; waits_left--) {
		pthread_mutex_t *m = malloc(sizeof *m);
		if (!m)
			return 2;
		CHECK(pthread_mutex_init(m, NULL));
		make_wait(m);
		CHECK(pthread_mutex_destroy(m));
		free(m);
	}
	make_wait(&global);
	to_wait_on = NULL;
	set_turn(1);
	CHECK(pthread_join(t, NULL));
	printf("%ld mutexes waited for once each, then the global one\n", n);
	printf("global %p\n", (void *)&global);
	return 0;
}

/* ---- behind: many waiters, one holder ------------------------------------------ */
static pid_t *waiter_tids;
static int waiters_known;

static void *behind_one(void *arg)
{
	long i = (long)arg;
	waiter_tids[i] = (pid_t)syscall(SYS_gettid);
	__atomic_add_fetch(&waiters_known, 1, __ATOMIC_RELEASE);
	CHECK(pthread_mutex_lock(&global));
	CHECK(pthread_mutex_unlock(&global));
	return NULL;
}

/* FILE holds a whole JSON document (its closing brace on a line). */
static int complete(const char *file)
{
	char line[4096];
	int done = 0;
	FILE *f = fopen(file, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof line, f))
		done = !strcmp(line, "}\n");
	fclose(f);
	return done;
}

static int behind_main(long n, const char *file)
{
	pthread_t *t = calloc((size_t)n, sizeof *t);
	waiter_tids = calloc((size_t)n, sizeof *waiter_tids);
	if (!t || !waiter_tids)
		return 2;
	CHECK(pthread_mutex_lock(&global));
	for (long i = 0; i < n; i++)
		CHECK(pthread_create(&t[i], NULL, behind_one, (void *)i));
	while (__atomic_load_n(&waiters_known, __ATOMIC_ACQUIRE) < n)
		sched_yield();
	/* each asleep in global's futex (any futex could be one on the way) */
	for (long i = 0; i < n; i++)
		while (!sleeps_on_futex(waiter_tids[i], &global.__data.__lock))
			sched_yield();
	printf("%ld threads wait\n", n);
	fflush(stdout);
	int cut = 0;
	while (!complete(file)) {
		struct timespec ts = { 0, 20000000 };
		if (nanosleep(&ts, NULL) != 0 && errno == EINTR)
			cut++;
	}
	CHECK(pthread_mutex_unlock(&global));
	for (long i = 0; i < n; i++)
		CHECK(pthread_join(t[i], NULL));
	free(t);
	printf("sleeps cut short: %d\n", cut);
	return 0;
}

/* ---- lives: edges of mutexes that end ---------------------------------------- */
static pthread_mutex_t mutex_a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t mutex_b = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) static void a_then_b(void)
{
	CHECK(pthread_mutex_lock(&mutex_a));
	CHECK(pthread_mutex_lock(&mutex_b));
	CHECK(pthread_mutex_unlock(&mutex_b));
	CHECK(pthread_mutex_unlock(&mutex_a));
}

__attribute__((noinline)) static void b_then_a(void)
{
	CHECK(pthread_mutex_lock(&mutex_b));
	CHECK(pthread_mutex_lock(&mutex_a));
	CHECK(pthread_mutex_unlock(&mutex_a));
	CHECK(pthread_mutex_unlock(&mutex_b));
}

static int lives_main(long n)
{
	for (long i = 0; i < n; i++) {
		pthread_mutex_t *m = malloc(sizeof *m);
		if (!m)
			return 2;
		CHECK(pthread_mutex_init(m, NULL));
		CHECK(pthread_mutex_lock(&global));
		CHECK(pthread_mutex_lock(m));
		counted++;
		CHECK(pthread_mutex_unlock(m));
		CHECK(pthread_mutex_unlock(&global));
		CHECK(pthread_mutex_destroy(m));
		free(m);
	}
	a_then_b();
	b_then_a();
	printf("%ld lives under the global mutex, then A and B both ways\n", counted);
	printf("A %p\nB %p\n", (void *)&mutex_a, (void *)&mutex_b);
	return counted == n ? 0 : 1;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	long n = argc > 2 ? atol(argv[2]) : 0;
	if (!strcmp(mode, "threads") && n > 0)
		return threads_main(n);
	if (!strcmp(mode, "lives") && n > 0)
		return lives_main(n);
	if (!strcmp(mode, "waits") && n > 0)
		return waits_main(n);
	if (!strcmp(mode, "behind") && n > 0 && argc > 3)
		return behind_main(n, argv[3]);
	fprintf(stderr, "usage: long_run threads N | waits N | behind N FILE | lives N\n");
	return 2;
}
