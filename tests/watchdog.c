/* watchdog.c - programs that are slow but healthy, and one that really
 * deadlocks after being slow, for tests/watchdog.sh.
 *
 * Each healthy program makes a thread wait for a mutex until the watchdog
 * has written its report (the file named on the command line shows its
 * table of mutexes), then lets the wait end and exits 0, printing "done".
 * No timing: the slow part lasts exactly until the report exists.
 *
 *   slow FILE            a holder keeps the mutex (as if it slept, or did I/O)
 *   chain FILE           8 threads wait in a chain behind that holder
 *   cond FILE            the holder waits for a condition that a third
 *                        thread signals (a producer that is slow)
 *   cond-timed FILE      the same, the holder's wait with a deadline (60 s):
 *                        it ends by itself, so it is no DEADLOCK
 *   timed FILE           two threads in a cycle, one of them in a timed lock
 *                        that gives up and tries again
 *   slow-then-dead FILE  slow, then two threads lock A, B and B, A: a real
 *                        deadlock, forever
 *   retake FILE          a deadlock through a condition wait's retake: one
 *                        thread holds A and waits on M's condition; the
 *                        other takes M, signals, then locks A, and the
 *                        woken thread blocks taking M back -- forever
 *   retake-behind FILE   the same, and a third thread waiting behind it, for
 *                        a mutex the woken thread holds: a wait chain that
 *                        runs into the deadlock
 *   sleeper FILE         the holder sleeps (nanosleep, 100 ms at a time)
 *                        until the report; prints how many of its sleeps a
 *                        signal cut short (EINTR) */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proc_wait.h"

#define CHAIN 8

static const char *report;
static pthread_mutex_t m[CHAIN + 1];
static pthread_mutex_t cond_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int signalled;
static pthread_barrier_t both_hold, held; /* held: m[0] is taken */

/* The watchdog's report shows its table (its first lines are written;
 * the rest may still be on the way). */
static int reported(void)
{
	return file_has(report, "\nTop ");
}

static void until_reported(void)
{
	while (!reported())
		usleep(10000); /* EINTR (the dump asking where we are) is fine */
}

static void *slow_holder(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m[0]);
	pthread_barrier_wait(&held);
	until_reported();
	pthread_mutex_unlock(&m[0]);
	return NULL;
}

/* sleeper: a nanosleep cut short is the program's to see */
static int sleeps_cut;

static void *sleeping_holder(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m[0]);
	pthread_barrier_wait(&held);
	while (!reported()) {
		struct timespec t = { 0, 100000000 };
		if (nanosleep(&t, NULL) != 0 && errno == EINTR)
			sleeps_cut++;
	}
	pthread_mutex_unlock(&m[0]);
	return NULL;
}

/* Thread i holds m[i] and waits for m[i-1]. */
static void *chain_link(void *arg)
{
	long i = (long)arg;
	pthread_mutex_lock(&m[i]);
	pthread_mutex_lock(&m[i - 1]);
	pthread_mutex_unlock(&m[i - 1]);
	pthread_mutex_unlock(&m[i]);
	return NULL;
}

static void *cond_holder(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m[0]);
	pthread_barrier_wait(&held);
	pthread_mutex_lock(&cond_mutex);
	while (!signalled)
		pthread_cond_wait(&cond, &cond_mutex);
	pthread_mutex_unlock(&cond_mutex);
	pthread_mutex_unlock(&m[0]);
	return NULL;
}

static void *timed_cond_holder(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m[0]);
	pthread_barrier_wait(&held);
	pthread_mutex_lock(&cond_mutex);
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 60;
	while (!signalled)
		if (pthread_cond_timedwait(&cond, &cond_mutex, &until) == ETIMEDOUT)
			break;
	pthread_mutex_unlock(&cond_mutex);
	pthread_mutex_unlock(&m[0]);
	return NULL;
}

static void *signaller(void *arg)
{
	(void)arg;
	until_reported();
	pthread_mutex_lock(&cond_mutex);
	signalled = 1;
	pthread_cond_signal(&cond);
	pthread_mutex_unlock(&cond_mutex);
	return NULL;
}

/* Holds m[0], then tries m[1] (held by main) with a deadline, again and
 * again, until the report is written; then gives up, letting main in. */
static void *timed_retry(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m[0]);
	pthread_barrier_wait(&both_hold);
	for (;;) {
		struct timespec t;
		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_nsec += 100000000;
		if (t.tv_nsec >= 1000000000) {
			t.tv_sec++;
			t.tv_nsec -= 1000000000;
		}
		int rc = pthread_mutex_timedlock(&m[1], &t);
		if (rc == 0) {
			pthread_mutex_unlock(&m[1]);
			break;
		}
		if (reported())
			break;
	}
	pthread_mutex_unlock(&m[0]);
	return NULL;
}

static void *lock_ab(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m[0]);
	pthread_barrier_wait(&both_hold);
	pthread_mutex_lock(&m[1]); /* forever */
	return NULL;
}

static int retake_go;
static pid_t retake_behind_tid;

/* retake: holds m[0] (and m[2] if arg), then waits for a condition on m[1] */
static void *retake_waiter(void *arg)
{
	if (arg)
		pthread_mutex_lock(&m[2]);
	pthread_mutex_lock(&m[0]);
	pthread_mutex_lock(&m[1]);
	pthread_barrier_wait(&held);
	while (!retake_go)
		pthread_cond_wait(&cond, &m[1]); /* RETAKE_WAITS: woken, blocks taking m[1] back */
	pthread_mutex_unlock(&m[1]);
	pthread_mutex_unlock(&m[0]);
	if (arg)
		pthread_mutex_unlock(&m[2]);
	return NULL;
}

/* retake-behind: waits for m[2], which the woken thread holds */
static void *retake_behind(void *arg)
{
	(void)arg;
	__atomic_store_n(&retake_behind_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	pthread_mutex_lock(&m[2]); /* RETAKE_BEHIND: forever */
	return NULL;
}

static void slow(int links)
{
	pthread_t holder, t[CHAIN + 1];
	pthread_create(&holder, NULL, slow_holder, NULL);
	pthread_barrier_wait(&held);
	for (long i = 1; i <= links; i++)
		pthread_create(&t[i], NULL, chain_link, (void *)i);
	if (!links) { /* main waits itself */
		pthread_mutex_lock(&m[0]);
		pthread_mutex_unlock(&m[0]);
	}
	pthread_join(holder, NULL);
	for (long i = 1; i <= links; i++)
		pthread_join(t[i], NULL);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: watchdog slow|chain|cond|cond-timed|timed|retake|retake-behind|sleeper|slow-then-dead FILE\n");
		return 2;
	}
	report = argv[2];
	for (int i = 0; i <= CHAIN; i++)
		pthread_mutex_init(&m[i], NULL);
	pthread_barrier_init(&both_hold, NULL, 2);
	pthread_barrier_init(&held, NULL, 2);
	const char *mode = argv[1];
	if (!strcmp(mode, "slow")) {
		slow(0);
	} else if (!strcmp(mode, "chain")) {
		slow(CHAIN);
	} else if (!strcmp(mode, "cond") || !strcmp(mode, "cond-timed")) {
		pthread_t a, b;
		pthread_create(&a, NULL, !strcmp(mode, "cond") ? cond_holder : timed_cond_holder,
			       NULL);
		pthread_barrier_wait(&held);
		pthread_create(&b, NULL, signaller, NULL);
		pthread_mutex_lock(&m[0]); /* long: until the condition comes */
		pthread_mutex_unlock(&m[0]);
		pthread_join(a, NULL);
		pthread_join(b, NULL);
	} else if (!strcmp(mode, "timed")) {
		pthread_t a;
		pthread_create(&a, NULL, timed_retry, NULL);
		pthread_mutex_lock(&m[1]);
		pthread_barrier_wait(&both_hold);
		pthread_mutex_lock(&m[0]); /* long: until the report */
		pthread_mutex_unlock(&m[0]);
		pthread_mutex_unlock(&m[1]);
		pthread_join(a, NULL);
	} else if (!strcmp(mode, "retake") || !strcmp(mode, "retake-behind")) {
		pthread_t a, b;
		int behind = !strcmp(mode, "retake-behind");
		pthread_create(&a, NULL, retake_waiter, behind ? &m[2] : NULL);
		pthread_barrier_wait(&held);
		if (behind) { /* it waits before main's wait begins the watchdog's second */
			pthread_create(&b, NULL, retake_behind, NULL);
			pid_t tid;
			while (!(tid = __atomic_load_n(&retake_behind_tid, __ATOMIC_ACQUIRE)) ||
			       !sleeps_on_futex(tid, &m[2]))
				usleep(1000);
		}
		pthread_mutex_lock(&m[1]); /* free once the waiter waits */
		retake_go = 1;
		pthread_cond_signal(&cond);
		pthread_mutex_lock(&m[0]); /* RETAKE_BLOCKS: forever */
	} else if (!strcmp(mode, "sleeper")) {
		pthread_t a;
		pthread_create(&a, NULL, sleeping_holder, NULL);
		pthread_barrier_wait(&held);
		pthread_mutex_lock(&m[0]); /* long: until the report */
		pthread_mutex_unlock(&m[0]);
		pthread_join(a, NULL);
		printf("sleeps cut short: %d\n", sleeps_cut);
	} else if (!strcmp(mode, "slow-then-dead")) {
		slow(1);
		printf("slow part done\n");
		fflush(stdout);
		pthread_t a;
		pthread_create(&a, NULL, lock_ab, NULL);
		pthread_mutex_lock(&m[1]);
		pthread_barrier_wait(&both_hold);
		pthread_mutex_lock(&m[0]); /* forever */
	} else {
		fprintf(stderr, "watchdog: unknown mode %s\n", mode);
		return 2;
	}
	printf("done\n");
	return 0;
}
