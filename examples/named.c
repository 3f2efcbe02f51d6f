/* named.c - using the API of a directly linked libmutexstat:
 *
 *   cc named.c $(pkg-config --cflags --libs mutexstat) -lpthread
 *
 * Names two mutexes so the report says "queue" and "stats" instead of
 * addresses, takes a report on demand halfway (mutexstat_dump), starts the
 * numbers afresh (mutexstat_reset), and lets the exit report show the
 * second half only.  No LD_PRELOAD needed. */
#include <mutexstat.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static pthread_mutex_t queue = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t stats = PTHREAD_MUTEX_INITIALIZER;
static long items, counted;

void *worker(void *arg)
{
	long n = (long)arg;
	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&queue);
		items++;
		pthread_mutex_unlock(&queue);
		if (i % 10 == 0) {
			pthread_mutex_lock(&stats);
			counted++;
			pthread_mutex_unlock(&stats);
		}
	}
	return NULL;
}

static void run(long per_thread)
{
	pthread_t t[3];
	for (int i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, worker, (void *)per_thread);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
}

int main(void)
{
	mutexstat_name(&queue, "queue");
	mutexstat_name(&stats, "stats");

	run(1000);
	printf("first half: %ld items, %ld counted\n", items, counted);
	/* A report now, to stderr: 3000 queue locks so far. */
	mutexstat_dump(STDERR_FILENO);

	mutexstat_reset();
	run(500);
	printf("second half: %ld items, %ld counted\n", items, counted);
	/* The exit report shows 1500 queue locks: those after the reset. */
	return 0;
}
