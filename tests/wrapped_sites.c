/* wrapped_sites.c - two mutexes on the heap, each locked by four threads
 * through one wrapper, lk(), from a function of its own (use_a, use_b):
 * the report names each by the wrapper's caller.  With "ended" they are
 * destroyed before the exit report, else they are alive in it.
 * tests/compare.sh compares the two: the same sites, neither new nor gone
 * (the JSON of a live mutex named the wrapper's line, of an ended one its
 * caller's). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t *a, *b;

__attribute__((noinline)) void lk(pthread_mutex_t *m)
{
	pthread_mutex_lock(m);
	__asm__ volatile("");
}

__attribute__((noinline)) void use_a(void)
{
	lk(a);
	usleep(100);
	pthread_mutex_unlock(a);
	__asm__ volatile("");
}

__attribute__((noinline)) void use_b(void)
{
	lk(b);
	usleep(100);
	pthread_mutex_unlock(b);
	__asm__ volatile("");
}

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 200; i++) {
		use_a();
		use_b();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	a = malloc(sizeof *a);
	b = malloc(sizeof *b);
	if (!a || !b)
		return 1;
	pthread_mutex_init(a, NULL);
	pthread_mutex_init(b, NULL);
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, worker, NULL))
			return 1;
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	if (argc > 1 && !strcmp(argv[1], "ended")) {
		pthread_mutex_destroy(a);
		pthread_mutex_destroy(b);
	}
	return 0;
}
