/* contention.c - the demo: four threads share one hot mutex guarding a
 * counter, and do a little work while holding it, so they queue up.  A
 * second mutex is used by one thread only and never contended.
 *
 *   mutexstat ./examples/contention [threads] [iterations]
 *
 * Prints the final counter, which must be threads * iterations with or
 * without mutexstat. */
#include <pthread.h>
#include <unistd.h>
/* Thread functions are not static: the examples link with -rdynamic so
 * that the report can name them without debug information. */
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t hot = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t quiet = PTHREAD_MUTEX_INITIALIZER;
static long counter, quiet_counter;
static long iterations = 20000;

void work_while_holding(int first)
{
	volatile unsigned x = 0; /* a few hundred nanoseconds of work; a worker's */
	if (first) usleep(2000); /* first hold long, so the others queue behind it */
	for (int i = 0; i < 200; i++)
		x += (unsigned)i;
}

void *worker(void *start)
{
	pthread_barrier_wait(start);
	for (long i = 0; i < iterations; i++) {
		pthread_mutex_lock(&hot);
		counter++;
		work_while_holding(i == 0);
		pthread_mutex_unlock(&hot);
	}
	return NULL;
}

void *loner(void *arg)
{
	(void)arg;
	for (long i = 0; i < iterations; i++) {
		pthread_mutex_lock(&quiet);
		quiet_counter++;
		pthread_mutex_unlock(&quiet);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 4;
	if (argc > 2)
		iterations = atol(argv[2]);
	if (threads < 1 || threads > 256 || iterations < 1) {
		fprintf(stderr, "usage: contention [threads 1-256] [iterations]\n");
		return 2;
	}
	pthread_t tid[257];
	/* the workers start together: created one by one on a busy machine,
	 * each could finish before the next began, and none would wait */
	pthread_barrier_t start;
	pthread_barrier_init(&start, NULL, (unsigned)threads);
	for (int i = 0; i < threads; i++)
		pthread_create(&tid[i], NULL, worker, &start);
	pthread_create(&tid[threads], NULL, loner, NULL);
	for (int i = 0; i <= threads; i++)
		pthread_join(tid[i], NULL);
	printf("counter = %ld (expected %ld), quiet counter = %ld\n", counter,
	       threads * iterations, quiet_counter);
	return counter == threads * iterations ? 0 : 1;
}
