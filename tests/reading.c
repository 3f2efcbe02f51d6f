/* reading.c - small programs whose report tests/reading.sh reads line by
 * line, as a user would, one per argument.  Each prints the addresses of
 * its mutexes, so the test can find their lines; threads are ordered by
 * joins, never by sleeps.
 *
 *   tie       the main thread locks m1; a thread's trylock finds it busy
 *             (EBUSY) and the thread is joined; then main unlocks m1.  In
 *             m1's recent operations the busy trylock comes before the
 *             unlock.
 *   sites     first_lock() locks a mutex at one line for two callers:
 *             from_alpha() with m1, then from_beta() with m2 -- two mutexes
 *             first locked at the same line, from different functions.
 *   exited    a thread locks m1 and ends without unlocking it; main joins
 *             it and waits (for a live dump) or returns. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t m1 = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t m2 = PTHREAD_MUTEX_INITIALIZER;

static void *try_busy(void *arg)
{
	(void)arg;
	int rc = pthread_mutex_trylock(&m1);
	printf("trylock: %s\n", rc ? strerrorname_np(rc) : "0");
	return NULL;
}

static int tie(void)
{
	pthread_t t;
	pthread_mutex_lock(&m1);
	pthread_create(&t, NULL, try_busy, NULL);
	pthread_join(t, NULL);
	pthread_mutex_unlock(&m1);
	return 0;
}

/* Not inlined, so each caller is a frame of its own under the lock. */
__attribute__((noinline)) void first_lock(pthread_mutex_t *m)
{
	pthread_mutex_lock(m); /* FIRST_LOCK */
	pthread_mutex_unlock(m);
}

__attribute__((noinline)) void from_alpha(void)
{
	first_lock(&m1);
	__asm__ volatile("" ::: "memory"); /* not a tail call */
}

__attribute__((noinline)) void from_beta(void)
{
	first_lock(&m2);
	__asm__ volatile("" ::: "memory");
}

static int sites(void)
{
	from_alpha();
	from_beta();
	return 0;
}

static void *take_and_leave(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m1);
	return NULL;
}

static int exited(void)
{
	pthread_t t;
	pthread_create(&t, NULL, take_and_leave, NULL);
	pthread_join(t, NULL);
	return 0;
}

int main(int argc, char **argv)
{
	printf("m1 %p\nm2 %p\n", (void *)&m1, (void *)&m2);
	fflush(stdout);
	const char *what = argc > 1 ? argv[1] : "";
	if (!strcmp(what, "tie"))
		return tie();
	if (!strcmp(what, "sites"))
		return sites();
	if (!strcmp(what, "exited"))
		return exited();
	fprintf(stderr, "usage: reading tie|sites|exited\n");
	return 2;
}
