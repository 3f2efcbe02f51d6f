/* toolchains.c - one small threaded program that tests/toolchains.sh builds
 * with each compiler and flag set in turn (clang, sanitizers, ...).
 *
 *   toolchains [race]
 *
 * Four threads each lock one mutex 20,000 times around a shared counter,
 * which main prints (80000): under the library the report must count
 * exactly that many acquisitions, at the line marked below.  With "race"
 * each thread first writes one variable without the mutex: a data race
 * that ThreadSanitizer must report, with the library preloaded as without
 * it. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

enum { THREADS = 4, ROUNDS = 20000 };

static pthread_mutex_t counter_lock = PTHREAD_MUTEX_INITIALIZER;
static long counter;
static int race;
static volatile long unguarded;
static int arrived;

static void *worker(void *arg)
{
	(void)arg;
	if (race) {
		/* before the first lock: nothing orders these writes; the
		 * writers wait for each other (relaxed atomics order nothing
		 * for TSan) so none has ended when the next one writes */
		unguarded = unguarded + 1;
		__atomic_add_fetch(&arrived, 1, __ATOMIC_RELAXED);
		while (__atomic_load_n(&arrived, __ATOMIC_RELAXED) < THREADS)
			sched_yield();
	}
	for (int i = 0; i < ROUNDS; i++) {
		pthread_mutex_lock(&counter_lock); /* the lock line */
		counter++;
		pthread_mutex_unlock(&counter_lock);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[THREADS];
	race = argc > 1 && !strcmp(argv[1], "race");
	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, worker, NULL) != 0)
			return 1;
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	printf("%ld\n", counter);
	return 0;
}
