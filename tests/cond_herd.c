/* cond_herd.c - a thread asleep in a condition wait that is signalled all
 * the time, for tests/cond_pool.sh: live dumps must not call the threads
 * waiting behind it a DEADLOCK while the signals come, and must once they
 * stop.
 *
 *   cond_herd N QUIETFILE
 *
 * N threads wait on one condition for work that never comes, going back
 * to wait whenever a signal wakes them.  Then a holder takes mutex h and
 * waits on the same condition; a checker waits for h.  The main thread
 * signals the condition every 5 ms.  glibc wakes the waiters of the
 * older group first, and the holder waited last, so it sleeps through
 * about N signals -- longer than the dump's second look (100 ms) -- while
 * the others wake and wait again.  Once QUIETFILE exists the signals stop
 * and it prints "quiet": the holder sleeps for good, and the checker
 * waits behind it, while the main thread polls another condition with
 * the same mutex q, its timed waits taking q back every 20 ms -- which
 * says nothing of the holder's condition.  It prints "ready" when the
 * holder and the checker are in their waits, and exits 0 once QUIETFILE
 * is gone again. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t q = PTHREAD_MUTEX_INITIALIZER, h = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work = PTHREAD_COND_INITIALIZER, other = PTHREAD_COND_INITIALIZER;
static int waiting, holding;

static void *idle(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&q);
	waiting++;
	for (;;)
		pthread_cond_wait(&work, &q); /* work never comes */
	return NULL;
}

static void *holder(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&h);
	pthread_mutex_lock(&q);
	holding = 1;
	for (;;)
		pthread_cond_wait(&work, &q); /* HOLDER_WAITS */
	return NULL;
}

static void *checker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&h); /* CHECKER_WAITS */
	return NULL;
}

static void signal_work(void)
{
	pthread_mutex_lock(&q);
	pthread_cond_signal(&work);
	pthread_mutex_unlock(&q);
}

static int count(int *n)
{
	pthread_mutex_lock(&q);
	int v = *n;
	pthread_mutex_unlock(&q);
	return v;
}

int main(int argc, char **argv)
{
	int n = argc == 3 ? atoi(argv[1]) : 0;
	if (n < 1 || n > 500) {
		fprintf(stderr, "usage: cond_herd N(1-500) QUIETFILE\n");
		return 2;
	}
	pthread_t t;
	for (int i = 0; i < n; i++)
		pthread_create(&t, NULL, idle, NULL);
	while (count(&waiting) < n)
		usleep(1000);
	/* a first signal makes the idle threads the group that signals wake
	 * first; the holder, waiting after it, is in the next */
	signal_work();
	usleep(20000);
	pthread_create(&t, NULL, holder, NULL);
	while (!count(&holding))
		usleep(1000);
	pthread_create(&t, NULL, checker, NULL);
	/* glibc marks a mutex with waiters by __lock == 2 */
	while (__atomic_load_n(&h.__data.__lock, __ATOMIC_RELAXED) != 2)
		usleep(1000);
	printf("ready\n");
	fflush(stdout);
	struct timespec every = { 0, 5000000 };
	while (access(argv[2], F_OK) != 0) {
		signal_work();
		nanosleep(&every, NULL);
	}
	printf("quiet\n");
	fflush(stdout);
	pthread_mutex_lock(&q);
	while (access(argv[2], F_OK) == 0) {
		struct timespec at;
		clock_gettime(CLOCK_REALTIME, &at);
		at.tv_nsec += 20000000;
		if (at.tv_nsec >= 1000000000L) {
			at.tv_sec++;
			at.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&other, &q, &at); /* nobody signals it */
	}
	pthread_mutex_unlock(&q);
	return 0;
}
