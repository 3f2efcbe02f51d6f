/* cancel.c - threads with a cancellation pending (deferred, the default)
 * call functions that are not cancellation points, for tests/cancel.sh:
 * with or without the library, the thread must go through them and be
 * cancelled only at the next cancellation point (pthread_testcancel).
 *
 *   cancel first      the thread's first lock of a mutex (the library
 *                     captures the call stack where a mutex is first used)
 *   cancel contended  a lock that waits for the main thread's mutex (the
 *                     library captures the waiter's and the holder's stacks)
 *
 * Prints whether the thread went through, and whether it was cancelled.
 *
 *   cancel edges     the thread, its cancel pending, locks G and a new
 *                    mutex in turn (a new lock-order edge each time) while
 *                    two threads make edges too, for 300 ms; then it meets
 *                    pthread_testcancel, and main locks G, within 3 s.
 *                    Waits for the library's lock of its edges that pass a
 *                    millisecond napped in glibc's nanosleep, a
 *                    cancellation point: cancelled there, the thread died
 *                    holding G.  Prints whether main got G.
 *
 * And a condition wait, which is a cancellation point: glibc takes the
 * mutex back before the thread's cleanup handlers run.  The handler checks
 * that it holds the mutex and returns without unlocking it, so the thread
 * ends holding it (the report must say so, and count the retake):
 *
 *   cancel condwait   pthread_cond_wait
 *   cancel timedwait  pthread_cond_timedwait (a deadline far away)
 *
 * Prints whether the handler ran holding the mutex, and whether the
 * thread was cancelled.
 *
 * And asynchronous cancellation, which may land at any instruction: the
 * threads below make theirs asynchronous and lock a mutex the main thread
 * holds; their cleanup handler unlocks it (glibc lets a normal mutex go
 * whoever unlocks it: the main thread's hold too).
 *
 *   cancel async-loop N  N rounds: three threads each take mutexes of
 *                        their own for the first time, then wait for the
 *                        main thread's; it cancels them after a delay that
 *                        varies from round to round, so that the cancels
 *                        land all along the way, then takes its mutex again.
 *   cancel async-ghost GO  one thread cancelled while it waits; its cleanup
 *                        handler unlocks the mutex, prints "cleaned" and
 *                        waits (the thread is alive, its wait over) until
 *                        the file GO exists; then the main thread takes the
 *                        mutex again.
 *
 * Each prints what it did, the same with or without the library. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sched.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "new_edges.h"

static pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t waited = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t cancelled; /* main has called pthread_cancel */
static const char *mode;
static volatile int got_through;
static volatile pid_t victim_tid;

/* Until the victim sleeps in the futex of m (its blocking lock). */
static void wait_until_blocked(pthread_mutex_t *m)
{
	char path[64], want[32], line[128];
	snprintf(path, sizeof path, "/proc/self/task/%d/syscall", (int)victim_tid);
	snprintf(want, sizeof want, "%d %p ", 202 /* futex */, (void *)m);
	for (;;) {
		FILE *f = fopen(path, "r");
		int found = f && fgets(line, sizeof line, f) && !strncmp(line, want, strlen(want));
		if (f)
			fclose(f);
		if (found)
			return;
		usleep(1000);
	}
}

static void *victim(void *arg)
{
	(void)arg;
	victim_tid = gettid();
	/* Let main cancel us while we cannot be, then keep it pending. */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	pthread_barrier_wait(&cancelled);
	pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
	if (!strcmp(mode, "first")) {
		pthread_mutex_lock(&fresh);
		pthread_mutex_unlock(&fresh);
	} else if (!strcmp(mode, "contended")) {
		pthread_mutex_lock(&held); /* main lets go after a while */
		pthread_mutex_unlock(&held);
	}
	got_through = 1;
	pthread_testcancel();
	return NULL; /* not reached: the cancellation is pending */
}

/* The cleanup handler of a cancelled condition wait: got_through if it
 * runs holding the mutex (a normal mutex's trylock by its owner: EBUSY). */
static void check_held(void *arg)
{
	(void)arg;
	got_through = pthread_mutex_trylock(&waited) == EBUSY;
}

static void *cond_victim(void *arg)
{
	(void)arg;
	struct timespec far;
	clock_gettime(CLOCK_REALTIME, &far);
	far.tv_sec += 3600;
	pthread_mutex_lock(&waited);
	pthread_cleanup_push(check_held, NULL);
	pthread_barrier_wait(&cancelled);
	for (;;) {
		if (!strcmp(mode, "condwait"))
			pthread_cond_wait(&never, &waited);
		else
			pthread_cond_timedwait(&never, &waited, &far);
	}
	pthread_cleanup_pop(0);
	return NULL;
}

static int cond_main(void)
{
	pthread_t t;
	pthread_barrier_init(&cancelled, NULL, 2);
	if (pthread_create(&t, NULL, cond_victim, NULL))
		return 2;
	pthread_barrier_wait(&cancelled);
	/* the victim lets the mutex go inside its wait, not before */
	pthread_mutex_lock(&waited);
	pthread_cancel(t);
	pthread_mutex_unlock(&waited);
	void *ret = NULL;
	pthread_join(t, &ret);
	printf("%s: cleanup ran holding the mutex: %s; %s\n", mode,
	       got_through ? "yes" : "no",
	       ret == PTHREAD_CANCELED ? "cancelled" : "not cancelled");
	return 0;
}

/* ---- asynchronous cancellation ------------------------------------------ */

#define VICTIMS 3
#define OWN 4
#define ROUNDS_MAX 2000
static pthread_mutex_t main_held = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t own[ROUNDS_MAX][VICTIMS][OWN]; /* each taken once */
static int started, cleanups;

static void unlock_main_held(void *arg)
{
	(void)arg;
	pthread_mutex_unlock(&main_held);
	__atomic_add_fetch(&cleanups, 1, __ATOMIC_ACQ_REL);
}

static void *async_victim(void *arg)
{
	pthread_mutex_t *mine = arg;
	pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
	__atomic_add_fetch(&started, 1, __ATOMIC_ACQ_REL);
	pthread_cleanup_push(unlock_main_held, NULL);
	for (int i = 0; i < OWN; i++) {
		pthread_mutex_lock(&mine[i]);
		pthread_mutex_unlock(&mine[i]);
	}
	pthread_mutex_lock(&main_held);
	/* another victim's cleanup let the main thread's hold go: keep it
	 * until cancelled (this cleanup handler lets it go then) */
	for (;;)
		pause();
	pthread_cleanup_pop(0);
	return NULL;
}

static void spin_us(unsigned us)
{
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	do
		clock_gettime(CLOCK_MONOTONIC, &now);
	while ((now.tv_sec - start.tv_sec) * 1000000 +
	       (now.tv_nsec - start.tv_nsec) / 1000 < us);
}

static int async_loop(int rounds)
{
	if (rounds < 1 || rounds > ROUNDS_MAX)
		return 2;
	unsigned seed = 1;
	int not_cancelled = 0;
	printf("async-loop: %d rounds of %d threads\n", rounds, VICTIMS);
	for (int round_no = 0; round_no < rounds; round_no++) {
		pthread_t t[VICTIMS];
		started = 0;
		cleanups = 0;
		pthread_mutex_lock(&main_held);
		for (int i = 0; i < VICTIMS; i++)
			if (pthread_create(&t[i], NULL, async_victim, own[round_no][i]))
				return 2;
		while (__atomic_load_n(&started, __ATOMIC_ACQUIRE) < VICTIMS)
			sched_yield();
		/* 0 to 255 us, spun (a sleep takes longer): the cancels land
		 * from the victims' first steps to their wait */
		seed = seed * 1103515245 + 12345;
		spin_us(seed >> 16 & 255);
		for (int i = 0; i < VICTIMS; i++)
			pthread_cancel(t[i]);
		for (int i = 0; i < VICTIMS; i++) {
			void *ret = NULL;
			pthread_join(t[i], &ret);
			not_cancelled += ret != PTHREAD_CANCELED;
		}
		if (!__atomic_load_n(&cleanups, __ATOMIC_ACQUIRE))
			pthread_mutex_unlock(&main_held); /* no cleanup let it go */
		pthread_mutex_lock(&main_held);
		pthread_mutex_unlock(&main_held);
	}
	printf("async-loop: %d cancelled, %d not; the mutex taken again after each "
	       "round\n", rounds * VICTIMS - not_cancelled, not_cancelled);
	return 0;
}

/* The cleanup handler lets the mutex go, then the thread stays, its wait
 * over, until the file exists. */
static void unlock_and_stay(void *arg)
{
	pthread_mutex_unlock(&main_held);
	printf("cleaned\n");
	fflush(stdout);
	while (access(arg, F_OK) != 0)
		usleep(10000);
}

static void *ghost_victim(void *arg)
{
	victim_tid = gettid();
	pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
	pthread_cleanup_push(unlock_and_stay, arg);
	pthread_mutex_lock(&main_held);
	pthread_cleanup_pop(0);
	return NULL;
}

static int async_ghost(char *go)
{
	pthread_t t;
	pthread_mutex_lock(&main_held);
	if (pthread_create(&t, NULL, ghost_victim, go))
		return 2;
	while (!victim_tid)
		usleep(1000);
	wait_until_blocked(&main_held);
	pthread_cancel(t);
	void *ret = NULL;
	pthread_join(t, &ret);
	pthread_mutex_lock(&main_held);
	pthread_mutex_unlock(&main_held);
	printf("async-ghost: %s, the mutex taken again\n",
	       ret == PTHREAD_CANCELED ? "cancelled" : "not cancelled");
	return 0;
}

/* cancel edges */
static pthread_mutex_t edges_g = PTHREAD_MUTEX_INITIALIZER;
static volatile int edges_over;

static void *make_edges(void *arg)
{
	new_edge_pairs(&edges_over);
	return arg;
}

static void *edges_victim(void *arg)
{
	pthread_barrier_wait(&cancelled); /* the cancel is pending from here */
	while (!edges_over) {
		pthread_mutex_t y;
		pthread_mutex_init(&y, NULL);
		pthread_mutex_lock(&edges_g);
		pthread_mutex_lock(&y);
		pthread_mutex_unlock(&y);
		pthread_mutex_unlock(&edges_g);
		pthread_mutex_destroy(&y);
	}
	pthread_testcancel();
	return arg;
}

static int edges(void)
{
	pthread_t busy[2], t;
	pthread_barrier_init(&cancelled, NULL, 2);
	for (int i = 0; i < 2; i++)
		pthread_create(&busy[i], NULL, make_edges, NULL);
	pthread_create(&t, NULL, edges_victim, NULL);
	pthread_cancel(t);
	pthread_barrier_wait(&cancelled);
	usleep(300000);
	edges_over = 1;
	void *ret = NULL;
	pthread_join(t, &ret);
	for (int i = 0; i < 2; i++)
		pthread_join(busy[i], NULL);
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 3;
	int rc = pthread_mutex_timedlock(&edges_g, &until);
	printf("edges: %s; main's lock of G: %s\n",
	       ret == PTHREAD_CANCELED ? "cancelled" : "not cancelled",
	       rc == 0 ? "ok" : "timed out, G held by the cancelled thread");
	if (rc == 0)
		pthread_mutex_unlock(&edges_g);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		return 2;
	mode = argv[1];
	if (!strcmp(mode, "condwait") || !strcmp(mode, "timedwait"))
		return cond_main();
	if (!strcmp(mode, "async-loop") && argc > 2)
		return async_loop(atoi(argv[2]));
	if (!strcmp(mode, "async-ghost") && argc > 2)
		return async_ghost(argv[2]);
	if (!strcmp(mode, "edges"))
		return edges();
	pthread_t t;
	pthread_barrier_init(&cancelled, NULL, 2);
	pthread_mutex_lock(&held);
	if (pthread_create(&t, NULL, victim, NULL))
		return 2;
	pthread_cancel(t);
	pthread_barrier_wait(&cancelled);
	if (!strcmp(mode, "contended"))
		wait_until_blocked(&held);
	pthread_mutex_unlock(&held);
	void *ret = NULL;
	pthread_join(t, &ret);
	printf("%s: went through: %s; %s\n", mode, got_through ? "yes" : "no",
	       ret == PTHREAD_CANCELED ? "cancelled" : "not cancelled");
	return 0;
}
