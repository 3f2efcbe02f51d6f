/* cancel.c - threads with a cancellation pending (deferred, the default)
 * call functions that are not cancellation points, for tests/cancel.sh:
 * with or without the library, the thread must go through them and be
 * cancelled only at the next cancellation point (pthread_testcancel).
 *
 *   cancel first      the thread's first lock of a mutex (the library
 *                     captures the call stack where a mutex is first used)
 *   cancel contended  a lock that waits for the main thread's mutex (the
 *                     library captures the waiter's and the holder's stacks)
 *
 * Prints whether the thread went through, and whether it was cancelled.
 *
 * And a condition wait, which is a cancellation point: glibc takes the
 * mutex back before the thread's cleanup handlers run.  The handler checks
 * that it holds the mutex and returns without unlocking it, so the thread
 * ends holding it (the report must say so, and count the retake):
 *
 *   cancel condwait   pthread_cond_wait
 *   cancel timedwait  pthread_cond_timedwait (a deadline far away)
 *
 * Prints whether the handler ran holding the mutex, and whether the
 * thread was cancelled. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t waited = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t cancelled; /* main has called pthread_cancel */
static const char *mode;
static volatile int got_through;
static volatile pid_t victim_tid;

/* Until the victim sleeps in the futex of `held` (its blocking lock). */
static void wait_until_blocked(void)
{
	char path[64], want[32], line[128];
	snprintf(path, sizeof path, "/proc/self/task/%d/syscall", (int)victim_tid);
	snprintf(want, sizeof want, "%d %p ", 202 /* futex */, (void *)&held);
	for (;;) {
		FILE *f = fopen(path, "r");
		int found = f && fgets(line, sizeof line, f) && !strncmp(line, want, strlen(want));
		if (f)
			fclose(f);
		if (found)
			return;
		usleep(1000);
	}
}

static void *victim(void *arg)
{
	(void)arg;
	victim_tid = gettid();
	/* Let main cancel us while we cannot be, then keep it pending. */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	pthread_barrier_wait(&cancelled);
	pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
	if (!strcmp(mode, "first")) {
		pthread_mutex_lock(&fresh);
		pthread_mutex_unlock(&fresh);
	} else if (!strcmp(mode, "contended")) {
		pthread_mutex_lock(&held); /* main lets go after a while */
		pthread_mutex_unlock(&held);
	}
	got_through = 1;
	pthread_testcancel();
	return NULL; /* not reached: the cancellation is pending */
}

/* The cleanup handler of a cancelled condition wait: got_through if it
 * runs holding the mutex (a normal mutex's trylock by its owner: EBUSY). */
static void check_held(void *arg)
{
	(void)arg;
	got_through = pthread_mutex_trylock(&waited) == EBUSY;
}

static void *cond_victim(void *arg)
{
	(void)arg;
	struct timespec far;
	clock_gettime(CLOCK_REALTIME, &far);
	far.tv_sec += 3600;
	pthread_mutex_lock(&waited);
	pthread_cleanup_push(check_held, NULL);
	pthread_barrier_wait(&cancelled);
	for (;;) {
		if (!strcmp(mode, "condwait"))
			pthread_cond_wait(&never, &waited);
		else
			pthread_cond_timedwait(&never, &waited, &far);
	}
	pthread_cleanup_pop(0);
	return NULL;
}

static int cond_main(void)
{
	pthread_t t;
	pthread_barrier_init(&cancelled, NULL, 2);
	if (pthread_create(&t, NULL, cond_victim, NULL))
		return 2;
	pthread_barrier_wait(&cancelled);
	/* the victim lets the mutex go inside its wait, not before */
	pthread_mutex_lock(&waited);
	pthread_cancel(t);
	pthread_mutex_unlock(&waited);
	void *ret = NULL;
	pthread_join(t, &ret);
	printf("%s: cleanup ran holding the mutex: %s; %s\n", mode,
	       got_through ? "yes" : "no",
	       ret == PTHREAD_CANCELED ? "cancelled" : "not cancelled");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	mode = argv[1];
	if (!strcmp(mode, "condwait") || !strcmp(mode, "timedwait"))
		return cond_main();
	pthread_t t;
	pthread_barrier_init(&cancelled, NULL, 2);
	pthread_mutex_lock(&held);
	if (pthread_create(&t, NULL, victim, NULL))
		return 2;
	pthread_cancel(t);
	pthread_barrier_wait(&cancelled);
	if (!strcmp(mode, "contended"))
		wait_until_blocked();
	pthread_mutex_unlock(&held);
	void *ret = NULL;
	pthread_join(t, &ret);
	printf("%s: went through: %s; %s\n", mode, got_through ? "yes" : "no",
	       ret == PTHREAD_CANCELED ? "cancelled" : "not cancelled");
	return 0;
}
