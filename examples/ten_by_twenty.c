/* ten_by_twenty.c - the design's own check: 10 threads each lock 20 mutexes
 * in turn, then unlock all 20, 100 times.  The report must show those 20
 * mutexes with exactly 1000 acquisitions each: `mutexstat --top 20
 * ./ten_by_twenty` lists all 20 (the default top 10 lists 10, and says 10
 * more were not).  (One order, no deadlock; threads wait only where their
 * rounds overlap: on two CPUs, seldom.) */
#include <pthread.h>
#include <stdio.h>

#define THREADS 10
#define MUTEXES 20
#define ROUNDS 100

static pthread_mutex_t m[MUTEXES];

void *worker(void *arg)
{
	(void)arg;
	for (int round = 0; round < ROUNDS; round++) {
		for (int i = 0; i < MUTEXES; i++)
			pthread_mutex_lock(&m[i]);
		for (int i = MUTEXES - 1; i >= 0; i--)
			pthread_mutex_unlock(&m[i]);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS];
	for (int i = 0; i < MUTEXES; i++)
		pthread_mutex_init(&m[i], NULL);
	for (int i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	/* Not destroyed: a destroyed mutex's numbers are summed into its
	 * first-lock site's line, and here we want to see each of the 20. */
	printf("%d threads x %d mutexes x %d rounds done\n", THREADS, MUTEXES,
	       ROUNDS);
	return 0;
}
