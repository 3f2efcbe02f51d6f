/* reset_running.c - mutexstat_reset() while threads run: the report after
 * it counts what came after it, exactly.
 *
 *   reset_running NT NB ROUNDS   NT threads take NB mutexes in turn (then
 *                                let go of all) ROUNDS times; meanwhile
 *                                main resets; then, after all have
 *                                stopped, ROUNDS times more: each of the
 *                                NB mutexes locked NT * ROUNDS times
 *                                since the reset, and with NB above 64
 *                                NT * ROUNDS * (NB - 64) acquisitions
 *                                made with 64 already held.
 * Linked with the library (include/mutexstat.h). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "mutexstat.h"
#include "proc_wait.h"

static int nt, nb, rounds;
static pthread_mutex_t *m;
static pthread_barrier_t before, after;

static void in_turn(void)
{
	for (int i = 0; i < nb; i++)
		CHECK(pthread_mutex_lock(&m[i]));
	for (int i = nb - 1; i >= 0; i--)
		CHECK(pthread_mutex_unlock(&m[i]));
}

static void *worker(void *arg)
{
	for (int r = 0; r < rounds; r++)
		in_turn();
	pthread_barrier_wait(&before);
	pthread_barrier_wait(&after); /* the reset is over */
	for (int r = 0; r < rounds; r++)
		in_turn();
	return arg;
}

int main(int argc, char **argv)
{
	nt = argc > 1 ? atoi(argv[1]) : 0;
	nb = argc > 2 ? atoi(argv[2]) : 0;
	rounds = argc > 3 ? atoi(argv[3]) : 0;
	if (nt < 1 || nt > 64 || nb < 1 || rounds < 1) {
		fprintf(stderr, "usage: reset_running NT NB ROUNDS\n");
		return 2;
	}
	m = calloc((size_t)nb, sizeof *m);
	for (int i = 0; i < nb; i++)
		CHECK(pthread_mutex_init(&m[i], NULL));
	CHECK(pthread_barrier_init(&before, NULL, (unsigned)nt + 1));
	CHECK(pthread_barrier_init(&after, NULL, (unsigned)nt + 1));
	pthread_t t[64];
	for (int i = 0; i < nt; i++)
		CHECK(pthread_create(&t[i], NULL, worker, NULL));
	mutexstat_reset(); /* while the threads take their turns */
	pthread_barrier_wait(&before);
	mutexstat_reset();
	pthread_barrier_wait(&after);
	for (int i = 0; i < nt; i++)
		CHECK(pthread_join(t[i], NULL));
	printf("%d mutexes, each locked %d times since the reset\n", nb, nt * rounds);
	return 0;
}
