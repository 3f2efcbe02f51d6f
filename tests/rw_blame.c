/* tests/rw_blame.c - who made a writer wait behind readers: never an
 * unlock from before its wait began.
 *
 * Each round: a thread waits to write while the main thread holds the
 * lock to write, and the main thread's unlock (W_UNLOCK) lets it in; then
 * two readers hold the lock while another thread waits to write, and both
 * leave at once (a barrier just before their unlocks, R_UNLOCK).  Two
 * readers leaving together may each count the other and neither number
 * its release: that wait is then not attributed, but was charged to
 * W_UNLOCK, the release numbered before it (about 1 round in 10).  So
 * W_UNLOCK must be charged exactly one wait a round. */
#define _GNU_SOURCE
#include "proc_wait.h"

#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define ROUNDS 100

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_barrier_t leave;
static pid_t waiter_tid;

static void *writer(void *arg)
{
	(void)arg;
	__atomic_store_n(&waiter_tid, gettid(), __ATOMIC_RELEASE);
	CHECK(pthread_rwlock_wrlock(&rw)); /* W_LOCK */
	CHECK(pthread_rwlock_unlock(&rw));
	return NULL;
}

static int ready;

static void *reader(void *arg)
{
	pthread_barrier_t *held = arg;
	CHECK(pthread_rwlock_rdlock(&rw));
	pthread_barrier_wait(held);  /* both hold it */
	pthread_barrier_wait(&leave); /* the writer waits: */
	/* leave together, both running (a barrier's wake-ups are apart) */
	__atomic_add_fetch(&ready, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&ready, __ATOMIC_SEQ_CST) % 2)
		;
	CHECK(pthread_rwlock_unlock(&rw)); /* R_UNLOCK */
	return NULL;
}

/* Starts a writer and returns once it sleeps in its wait. */
static pthread_t writer_waiting(void)
{
	pthread_t t;
	__atomic_store_n(&waiter_tid, 0, __ATOMIC_RELEASE);
	CHECK(pthread_create(&t, NULL, writer, NULL));
	pid_t tid;
	while (!(tid = __atomic_load_n(&waiter_tid, __ATOMIC_ACQUIRE)) ||
	       !sleeps_on_futex(tid, NULL))
		usleep(200);
	return t;
}

int main(void)
{
	pthread_barrier_t held;
	CHECK(pthread_barrier_init(&held, NULL, 3));
	CHECK(pthread_barrier_init(&leave, NULL, 3));
	for (int round = 0; round < ROUNDS; round++) {
		CHECK(pthread_rwlock_wrlock(&rw));
		pthread_t w = writer_waiting();
		CHECK(pthread_rwlock_unlock(&rw)); /* W_UNLOCK */
		CHECK(pthread_join(w, NULL));

		pthread_t r1, r2;
		CHECK(pthread_create(&r1, NULL, reader, &held));
		CHECK(pthread_create(&r2, NULL, reader, &held));
		pthread_barrier_wait(&held);
		w = writer_waiting();
		pthread_barrier_wait(&leave);
		CHECK(pthread_join(r1, NULL));
		CHECK(pthread_join(r2, NULL));
		CHECK(pthread_join(w, NULL));
	}
	printf("%d rounds\n", ROUNDS);
	return 0;
}
