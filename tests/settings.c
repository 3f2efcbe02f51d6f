/* settings.c - programs for tests/settings.sh, which runs them under the
 * settings at their limits and in combination.
 *
 *   settings ranked N LEVELS  N mutexes, in one array; mutex i is locked
 *                             1 + i * LEVELS / N times, so each later mutex
 *                             ranks as high as every one before it, or
 *                             higher (the worst order for a top list)
 *   settings threads N        N threads each lock one shared mutex 1000
 *                             times; prints how many threads it could
 *                             start and the count it reached
 *   settings alive N          the same, with each thread started only once
 *                             the one before runs, and every one waiting
 *                             (on a condition) until the program has
 *                             started all it could: all are alive at once */
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

static pthread_cond_t go_cond = PTHREAD_COND_INITIALIZER;
static pthread_cond_t running_cond = PTHREAD_COND_INITIALIZER;
static int go, running;

static void *waiting_worker(void *arg)
{
	pthread_mutex_lock(&shared);
	running++;
	pthread_cond_signal(&running_cond);
	while (!go)
		pthread_cond_wait(&go_cond, &shared);
	pthread_mutex_unlock(&shared);
	return worker(arg);
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

static int threads(int n, void *(*fn)(void *))
{
	pthread_t t[64];
	int started = 0;
	if (n < 1 || n > 64)
		return 2;
	int waiting = fn == waiting_worker;
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[started], NULL, fn, NULL) == 0 && ++started && waiting) {
			pthread_mutex_lock(&shared);
			while (running < started)
				pthread_cond_wait(&running_cond, &shared);
			pthread_mutex_unlock(&shared);
		}
	if (waiting) {
		pthread_mutex_lock(&shared);
		go = 1;
		pthread_cond_broadcast(&go_cond);
		pthread_mutex_unlock(&shared);
	}
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
		return threads(atoi(argv[2]), worker);
	if (argc == 3 && !strcmp(argv[1], "alive"))
		return threads(atoi(argv[2]), waiting_worker);
	fprintf(stderr, "usage: settings ranked N LEVELS | settings threads N | settings alive N\n");
	return 2;
}
