/* settings.c - programs for tests/settings.sh, which runs them under the
 * settings at their limits and in combination.
 *
 *   settings ranked N LEVELS  N mutexes, in one array; mutex i is locked
 *                             1 + i * LEVELS / N times, so each later mutex
 *                             ranks as high as every one before it, or
 *                             higher (the worst order for a top list)
 *   settings threads N        N threads each lock one shared mutex 1000
 *                             times; prints how many threads it could
 *                             start and the count it reached */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t shared = PTHREAD_MUTEX_INITIALIZER;
static long counter;

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 1000; i++) {
		pthread_mutex_lock(&shared);
		counter++;
		pthread_mutex_unlock(&shared);
	}
	return NULL;
}

static int ranked(long n, long levels)
{
	pthread_mutex_t *m = calloc((size_t)n, sizeof *m);
	if (!m)
		return 3;
	long locks = 0;
	for (long i = 0; i < n; i++) {
		pthread_mutex_init(&m[i], NULL);
		for (long k = 0; k <= i * levels / n; k++) {
			pthread_mutex_lock(&m[i]);
			pthread_mutex_unlock(&m[i]);
			locks++;
		}
	}
	printf("%ld mutexes, %ld locks\n", n, locks);
	free(m); /* not destroyed: live in the exit report */
	return 0;
}

static int threads(int n)
{
	pthread_t t[64];
	int started = 0;
	if (n < 1 || n > 64)
		return 2;
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[started], NULL, worker, NULL) == 0)
			started++;
	for (int i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	printf("%d of %d threads started, counter %ld\n", started, n, counter);
	return started == n ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "ranked") && atol(argv[2]) > 0 &&
	    atol(argv[3]) > 0)
		return ranked(atol(argv[2]), atol(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "threads"))
		return threads(atoi(argv[2]));
	fprintf(stderr, "usage: settings ranked N LEVELS | settings threads N\n");
	return 2;
}
