/* cond_pool.c - a healthy thread pool busy with condition waits, for
 * tests/cond_pool.sh: live dumps of it must find no deadlock, name where
 * every holder took its mutex, and say no wait lasted longer than it did.
 *
 *   cond_pool N STOPFILE
 *
 * N workers (at most 64) each hold a mutex of their own, h[k], while they
 * wait for work on the queue's mutex q (a third of them with
 * pthread_cond_wait, a third with a 500 us timedwait, a third with a
 * 300 us clockwait, which time out and take q back all the time); two
 * producers fill the queue, signalling and now and then broadcasting (a
 * herd of workers taking q back at once); two checkers lock every h[k] in
 * turn, waiting behind workers in their condition waits.  It prints
 * "ready", runs until STOPFILE exists, then lets every thread end and
 * exits 0, so that every wait a dump saw has ended and is counted in the
 * exit report. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define MAX_WORKERS 64

static pthread_mutex_t q = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work = PTHREAD_COND_INITIALIZER, room = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t h[MAX_WORKERS];
static int items, workers;
static volatile int stop;

/* busy for us microseconds: a holder that works, not one that sleeps */
static void busy(long us)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000 + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

static void after(struct timespec *t, clockid_t clock, long ns)
{
	clock_gettime(clock, t);
	t->tv_nsec += ns;
	if (t->tv_nsec >= 1000000000) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000;
	}
}

static void wait_on(pthread_cond_t *c, int how)
{
	struct timespec t;
	int rc;
	if (how == 1) {
		after(&t, CLOCK_REALTIME, 500000);
		rc = pthread_cond_timedwait(c, &q, &t);
	} else if (how == 2) {
		after(&t, CLOCK_MONOTONIC, 300000);
		rc = pthread_cond_clockwait(c, &q, CLOCK_MONOTONIC, &t);
	} else
		rc = pthread_cond_wait(c, &q);
	if (rc && rc != ETIMEDOUT) {
		fprintf(stderr, "condition wait: %d\n", rc);
		exit(1);
	}
}

static void *worker(void *arg)
{
	int k = (int)(long)arg;
	while (!stop) {
		pthread_mutex_lock(&h[k]);
		pthread_mutex_lock(&q);
		while (!items && !stop)
			wait_on(&work, k % 3);
		if (items)
			items--;
		pthread_cond_signal(&room);
		busy(20);
		pthread_mutex_unlock(&q);
		busy(10);
		pthread_mutex_unlock(&h[k]);
	}
	return NULL;
}

static void *producer(void *arg)
{
	(void)arg;
	for (unsigned n = 0; !stop; n++) {
		pthread_mutex_lock(&q);
		while (items > 8 && !stop)
			wait_on(&room, 1 + (n & 1));
		items += 1 + n % 3;
		if (n % 7 == 0)
			pthread_cond_broadcast(&work);
		else
			pthread_cond_signal(&work);
		busy(15);
		pthread_mutex_unlock(&q);
	}
	return NULL;
}

static void *checker(void *arg)
{
	(void)arg;
	while (!stop)
		for (int k = 0; k < workers; k++) {
			pthread_mutex_lock(&h[k]);
			busy(5);
			pthread_mutex_unlock(&h[k]);
		}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3 || (workers = atoi(argv[1])) < 1 || workers > MAX_WORKERS) {
		fprintf(stderr, "usage: cond_pool N(1-%d) STOPFILE\n", MAX_WORKERS);
		return 2;
	}
	pthread_t t[MAX_WORKERS + 4];
	int n = 0;
	for (int k = 0; k < workers; k++)
		pthread_mutex_init(&h[k], NULL);
	for (long k = 0; k < workers; k++)
		pthread_create(&t[n++], NULL, worker, (void *)k);
	for (int k = 0; k < 2; k++) {
		pthread_create(&t[n++], NULL, producer, NULL);
		pthread_create(&t[n++], NULL, checker, NULL);
	}
	printf("ready\n");
	fflush(stdout);
	while (access(argv[2], F_OK) != 0)
		usleep(10000);
	pthread_mutex_lock(&q);
	stop = 1;
	pthread_cond_broadcast(&work);
	pthread_cond_broadcast(&room);
	pthread_mutex_unlock(&q);
	for (int k = 0; k < n; k++)
		pthread_join(t[k], NULL);
	printf("done\n");
	return 0;
}
