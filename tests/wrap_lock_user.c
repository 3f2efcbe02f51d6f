/* wrap_lock_user.c - a program for tests/other_preloads.sh: known numbers
 * of each lock call on mutexes it asks tests/wrap_lock.c (preloaded) to
 * watch -- four threads contending for one mutex, trylocks that get and
 * that miss, timed and clock locks on a free and on a held mutex, a
 * recursive relock and an errorcheck relock -- and prints what each call
 * answered, which must not change under the library. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#define THREADS 4
#define ROUNDS 2000

static struct {
	pthread_mutex_t hot, busy, rec, check;
} w = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
	PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP, PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP };
static long total;
static pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER; /* not watched */
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int holding, release;

static void *worker(void *arg)
{
	for (int i = 0; i < ROUNDS; i++) {
		pthread_mutex_lock(&w.hot);
		total++;
		pthread_mutex_unlock(&w.hot);
	}
	return arg;
}

/* Holds w.busy until told to let go. */
static void *holder(void *arg)
{
	pthread_mutex_lock(&w.busy);
	pthread_mutex_lock(&gate);
	holding = 1;
	pthread_cond_broadcast(&cv);
	while (!release)
		pthread_cond_wait(&cv, &gate);
	pthread_mutex_unlock(&gate);
	pthread_mutex_unlock(&w.busy);
	return arg;
}

int main(void)
{
	void (*watch)(void *, void *) =
		(void (*)(void *, void *))dlsym(RTLD_DEFAULT, "wrap_watch");
	if (watch)
		watch(&w, (char *)&w + sizeof w);
	pthread_t t[THREADS], h;
	for (int i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	printf("hot: %ld\n", total);

	struct timespec past = { 0, 0 };
	int got = 0;
	for (int i = 0; i < 10; i++) { /* free: trylock, timedlock, clocklock get it */
		got += pthread_mutex_trylock(&w.busy) == 0 && pthread_mutex_unlock(&w.busy) == 0;
		got += pthread_mutex_timedlock(&w.busy, &past) == 0 && pthread_mutex_unlock(&w.busy) == 0;
		got += pthread_mutex_clocklock(&w.busy, CLOCK_MONOTONIC, &past) == 0 &&
		       pthread_mutex_unlock(&w.busy) == 0;
	}
	printf("free: %d of 30 got\n", got);

	pthread_create(&h, NULL, holder, NULL);
	pthread_mutex_lock(&gate);
	while (!holding)
		pthread_cond_wait(&cv, &gate);
	pthread_mutex_unlock(&gate);
	for (int i = 0; i < 10; i++) { /* held: each misses */
		int a = pthread_mutex_trylock(&w.busy);
		int b = pthread_mutex_timedlock(&w.busy, &past);
		int c = pthread_mutex_clocklock(&w.busy, CLOCK_MONOTONIC, &past);
		printf("held: trylock %d timedlock %d clocklock %d\n", a, b, c);
	}
	pthread_mutex_lock(&gate);
	release = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&gate);
	pthread_join(h, NULL);

	int r[5];
	r[0] = pthread_mutex_lock(&w.rec);
	r[1] = pthread_mutex_lock(&w.rec);
	r[2] = pthread_mutex_trylock(&w.rec);
	r[3] = pthread_mutex_unlock(&w.rec);
	r[4] = pthread_mutex_unlock(&w.rec);
	printf("recursive: %d %d %d %d %d %d\n", r[0], r[1], r[2], r[3], r[4],
	       pthread_mutex_unlock(&w.rec));
	r[0] = pthread_mutex_lock(&w.check);
	r[1] = pthread_mutex_lock(&w.check);
	r[2] = pthread_mutex_trylock(&w.check);
	r[3] = pthread_mutex_unlock(&w.check);
	r[4] = pthread_mutex_unlock(&w.check);
	printf("errorcheck: %d %d %d %d %d\n", r[0], r[1], r[2], r[3], r[4]);
	return 0;
}
