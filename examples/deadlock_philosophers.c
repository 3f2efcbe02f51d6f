/* deadlock_philosophers.c - five philosophers, five forks, three ways to
 * pick them up: a cycle of lock orders, the same cycle made safe by one
 * more lock, and no cycle at all.
 *
 *   mutexstat ./examples/deadlock_philosophers classic|waiter|ordered|hang
 *
 * Philosopher i eats with fork i (on the left) and fork i+1 mod 5 (on the
 * right); a fork is a mutex.
 *
 *   classic  each picks up the left fork, then the right one.  If all five
 *            picked up their left fork at once, each would wait for the
 *            right one forever.  This run seats them one at a time (with a
 *            semaphore, which mutexstat does not see), so it ends -- and
 *            mutexstat reports the forks taken in a cycle of orders:
 *            POTENTIAL DEADLOCK, 5 mutexes, one edge per philosopher.
 *   waiter   the same, all at once, but a waiter (one more mutex) lets one
 *            philosopher eat at a time.  The cycle is still there, but
 *            every edge of it is taken under the waiter, so it can never
 *            close: GUARDED INVERSION, cannot deadlock.  (Safe, and slow:
 *            one eater at a time.)
 *   ordered  each picks up the lower-numbered of its two forks first, so
 *            philosopher 4 picks up fork 0 before fork 4: no cycle,
 *            nothing reported, and they eat at the same time.
 *   hang     the classic way, all at once, each waiting until all five
 *            hold their left fork: they wait for each other forever.
 *            kill -USR1 <pid> (or MUTEXSTAT_WATCHDOG=1) shows the
 *            DEADLOCK: five threads, each waiting for the fork its
 *            neighbour took.
 *
 * Each philosopher prints its thread id, as the report names threads.  The
 * marker comments are for tests/deadlocks.sh. */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define N 5
#define MEALS 20

static pthread_mutex_t fork_[N];
static pthread_mutex_t waiter = PTHREAD_MUTEX_INITIALIZER;
static sem_t seat[N]; /* classic: philosopher i sits when seat[i] is posted */
static enum { CLASSIC, WAITER, ORDERED, HANG } way;
static pthread_barrier_t all_seated;
static int meals[N];

static void check(int rc, const char *func, const char *call)
{
	if (rc != 0) {
		fprintf(stderr, "deadlock_philosophers: %s: %s: %s\n", func, call,
			strerror(rc));
		exit(3);
	}
}
#define CHECK(call) check((call), __func__, #call)

static void eat(int i)
{
	meals[i]++; /* only philosopher i writes it */
}

/* Left, then right: a cycle of five orders. */
void eat_left_first(int i)
{
	pthread_mutex_t *left = &fork_[i], *right = &fork_[(i + 1) % N];
	CHECK(pthread_mutex_lock(left)); /* LEFT_FORK */
	CHECK(pthread_mutex_lock(right)); /* RIGHT_FORK */
	eat(i);
	CHECK(pthread_mutex_unlock(right));
	CHECK(pthread_mutex_unlock(left));
}

/* The same, under the waiter. */
void eat_with_waiter(int i)
{
	CHECK(pthread_mutex_lock(&waiter)); /* WAITER */
	eat_left_first(i);
	CHECK(pthread_mutex_unlock(&waiter));
}

/* The lower-numbered fork first: every philosopher agrees on one order. */
void eat_lower_first(int i)
{
	int a = i, b = (i + 1) % N;
	pthread_mutex_t *first = &fork_[a < b ? a : b], *second = &fork_[a < b ? b : a];
	CHECK(pthread_mutex_lock(first)); /* LOWER_FORK */
	CHECK(pthread_mutex_lock(second)); /* HIGHER_FORK */
	eat(i);
	CHECK(pthread_mutex_unlock(second));
	CHECK(pthread_mutex_unlock(first));
}

void *philosopher(void *arg)
{
	int i = (int)(intptr_t)arg;
	printf("philosopher %d is thread %ld\n", i, (long)syscall(SYS_gettid));
	for (int meal = 0; meal < MEALS; meal++)
		switch (way) {
		case CLASSIC: /* one at a time, round after round */
			sem_wait(&seat[i]);
			eat_left_first(i);
			sem_post(&seat[(i + 1) % N]);
			break;
		case WAITER:
			eat_with_waiter(i);
			break;
		case ORDERED:
			eat_lower_first(i);
			break;
		case HANG: {
			pthread_mutex_t *left = &fork_[i], *right = &fork_[(i + 1) % N];
			CHECK(pthread_mutex_lock(left)); /* HANG_LEFT */
			pthread_barrier_wait(&all_seated);
			CHECK(pthread_mutex_lock(right)); /* HANG_RIGHT: forever */
			break;
		}
		}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2 || (strcmp(argv[1], "classic") && strcmp(argv[1], "waiter") &&
			  strcmp(argv[1], "ordered") && strcmp(argv[1], "hang"))) {
		fprintf(stderr, "usage: deadlock_philosophers classic|waiter|ordered|hang\n");
		return 2;
	}
	way = !strcmp(argv[1], "classic") ? CLASSIC
	      : !strcmp(argv[1], "waiter") ? WAITER
	      : !strcmp(argv[1], "ordered") ? ORDERED : HANG;
	pthread_barrier_init(&all_seated, NULL, N);
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 0; i < N; i++) {
		CHECK(pthread_mutex_init(&fork_[i], NULL));
		printf("fork %d is mutex %p\n", i, (void *)&fork_[i]);
		sem_init(&seat[i], 0, 0);
	}
	printf("the waiter is mutex %p\n", (void *)&waiter);
	pthread_t t[N];
	for (int i = 0; i < N; i++)
		CHECK(pthread_create(&t[i], NULL, philosopher, (void *)(intptr_t)i));
	sem_post(&seat[0]);
	if (way == HANG) {
		/* every fork has a waiter (glibc's lock word 2): all stuck */
		for (int i = 0; i < N; i++)
			while (__atomic_load_n(&fork_[i].__data.__lock, __ATOMIC_RELAXED) != 2)
				usleep(1000);
		printf("all five wait for their right fork\n");
	}
	for (int i = 0; i < N; i++)
		pthread_join(t[i], NULL);
	int all = 0;
	for (int i = 0; i < N; i++)
		all += meals[i];
	printf("%d meals eaten\n", all);
	return all == N * MEALS ? 0 : 1;
}
