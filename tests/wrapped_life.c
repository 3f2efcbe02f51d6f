/* wrapped_life.c - a mutex locked through a wrapper, whose life ends after
 * the wrapper is known to be one: interval files must count its numbers
 * once (tests/interval_text.sh).
 *
 *   wrapped_life   mutex A is locked 1000 times through wlock() from
 *                  first(); an interval later, mutex B 10 times through
 *                  wlock() from second() -- now wlock's line has two
 *                  callers, and the report names each wrapped mutex by
 *                  its caller -- then A is destroyed, its numbers going to
 *                  first()'s line.  An idle thread keeps the process
 *                  threaded (the dump thread writes the intervals). */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline)) void wlock(pthread_mutex_t *m)
{
	pthread_mutex_lock(m);
	__asm__ volatile("");
}

__attribute__((noinline)) void first(pthread_mutex_t *m)
{
	for (int i = 0; i < 1000; i++) {
		wlock(m);
		pthread_mutex_unlock(m);
	}
	__asm__ volatile("");
}

__attribute__((noinline)) void second(pthread_mutex_t *m)
{
	for (int i = 0; i < 10; i++) {
		wlock(m);
		pthread_mutex_unlock(m);
	}
	__asm__ volatile("");
}

static void *idle(void *arg)
{
	(void)arg;
	usleep(1200000);
	return NULL;
}

int main(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, idle, NULL))
		return 1;
	pthread_mutex_t *a = malloc(sizeof *a), *b = malloc(sizeof *b);
	if (!a || !b)
		return 1;
	pthread_mutex_init(a, NULL);
	first(a);
	usleep(500000); /* an interval of 0.3 s or more reads A alive */
	pthread_mutex_init(b, NULL);
	second(b);
	pthread_mutex_destroy(a);
	usleep(500000);
	pthread_join(t, NULL);
	pthread_mutex_destroy(b);
	free(a);
	free(b);
	return 0;
}
