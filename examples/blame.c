/* blame.c - who waited, and who made them wait.
 *
 *   mutexstat ./examples/blame [rounds]
 *
 * One mutex, three threads.  hold_too_long() takes the mutex and does ~20
 * ms of slow work (a usleep) before letting go; waiter_one() and
 * waiter_two() each need the mutex for a moment and block behind it.  The
 * report's "who waited" section names the two waiters -- each at its own
 * lock line -- and "who made them wait" names hold_too_long's unlock: the
 * fix belongs in the holder (do the slow work outside the lock), not in
 * the waiters.
 *
 * Deterministic, for tests/stacks.sh: in each round the holder takes the
 * mutex once for each waiter, lets that waiter go for it, waits until glibc
 * shows it blocked (__lock == 2, see tests/scenario.c), holds on 20 ms and
 * unlocks.  So every round makes waiter_one wait exactly once and
 * waiter_two exactly once, each let in by hold_too_long's unlock: with R
 * rounds, 2R contended acquisitions, R charged to each waiter's stack and
 * all 2R to the holder's.  (The waiters are let in one at a time: had both
 * waited at once, the second's wait would be split between the holder's
 * hold and the first waiter's.)  Semaphores order the threads; sleeps only make the
 * waits long.
 *
 * The thread functions are not static, so the report can name them from
 * the exported symbols if the program is linked with -rdynamic; with
 * debug information and libdw it names them regardless, with their lines.
 * Each lock's result is checked on the lock's own line, so the instruction
 * after the call -- the return address a stack holds -- is on that line
 * too.  The marker comments are for tests/stacks.sh. */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HOLD_US 20000 /* the slow work done under the lock */

static pthread_mutex_t shared = PTHREAD_MUTEX_INITIALIZER;
static int rounds = 3;
static long work_done;          /* guarded by shared */
static sem_t your_turn[2], done[2];

static void check(int rc, const char *func, const char *call)
{
	if (rc != 0) {
		fprintf(stderr, "blame: %s: %s: %s\n", func, call,
			strerror(rc));
		exit(3);
	}
}
#define CHECK(call) check((call), __func__, #call)

/* glibc sets the lock word to 2 once a thread blocks in the kernel for it. */
static int someone_blocked(void)
{
	return __atomic_load_n(&shared.__data.__lock, __ATOMIC_RELAXED) == 2;
}

void slow_work(void)
{
	usleep(HOLD_US);
}

void hold_too_long(void)
{
	for (int round = 0; round < rounds; round++)
		for (int who = 0; who < 2; who++) {
			CHECK(pthread_mutex_lock(&shared));
			sem_post(&your_turn[who]); /* the waiter may try now */
			while (!someone_blocked()) /* ... and is blocked */
				usleep(100);
			slow_work(); /* the mistake: slow work under the lock */
			CHECK(pthread_mutex_unlock(&shared)); /* LET_GO */
			sem_wait(&done[who]);
		}
}

void waiter_one(void)
{
	for (int round = 0; round < rounds; round++) {
		sem_wait(&your_turn[0]);
		CHECK(pthread_mutex_lock(&shared)); /* WAIT_ONE */
		work_done++;
		CHECK(pthread_mutex_unlock(&shared));
		sem_post(&done[0]);
	}
}

void waiter_two(void)
{
	for (int round = 0; round < rounds; round++) {
		sem_wait(&your_turn[1]);
		CHECK(pthread_mutex_lock(&shared)); /* WAIT_TWO */
		work_done++;
		CHECK(pthread_mutex_unlock(&shared));
		sem_post(&done[1]);
	}
}

/* Each thread runs one job; this frame sits under the job's in every
 * stack (a second frame, so MUTEXSTAT_FRAMES has something to cut). */
void *run_job(void *job)
{
	((void (*)(void))job)();
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		rounds = atoi(argv[1]);
	if (argc > 2 || rounds < 1 || rounds > 1000) {
		fprintf(stderr, "usage: blame [rounds 1-1000]\n");
		return 2;
	}
	for (int i = 0; i < 2; i++) {
		sem_init(&your_turn[i], 0, 0);
		sem_init(&done[i], 0, 0);
	}
	void (*jobs[3])(void) = { hold_too_long, waiter_one, waiter_two };
	pthread_t tid[3];
	for (int i = 0; i < 3; i++)
		CHECK(pthread_create(&tid[i], NULL, run_job, (void *)jobs[i]));
	for (int i = 0; i < 3; i++)
		pthread_join(tid[i], NULL);
	printf("%d rounds: waiter_one and waiter_two waited %d times each, "
	       "%ld waits in all, each behind hold_too_long\n",
	       rounds, rounds, work_done);
	return work_done == 2L * rounds ? 0 : 1;
}
