/* jumped_out.c - a thread's signal handler siglongjmps out of a wait in a
 * pthread call, and the thread then ends by pthread_exit (tests/
 * jumped_out.sh).  glibc lets a program leave its own waits so; the
 * library's waits had linked a cleanup buffer into the thread's state
 * (pthread_cleanup_push without -fexceptions), which the jump left
 * pointing into a dead frame, and pthread_exit jumped there: SIGSEGV.
 *
 *   jumped_out MODE: cond (pthread_cond_wait), mutex (a held mutex's
 *   lock), join (pthread_join of a thread that does not end yet) or
 *   rwlock (a write lock of a read-held rwlock).
 *
 *   jumped_out watched: the main thread jumps out of its wait for x,
 *   which another thread holds, then takes y and sleeps 1.5 s; that
 *   thread waits for y meanwhile.  Under the watchdog the main thread's
 *   wait, left so, stays in the records: with the other's, a false
 *   DEADLOCK (or STALL), which MUTEXSTAT_ON_DEADLOCK=abort ended the
 *   program on. */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "proc_wait.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static sigjmp_buf out;
static const char *mode;
static int waiter_tid, sleeper_go;

static void jump(int sig)
{
	(void)sig;
	siglongjmp(out, 1);
}

static void *sleeper(void *arg)
{
	while (!__atomic_load_n(&sleeper_go, __ATOMIC_ACQUIRE))
		usleep(1000);
	return arg;
}

static void *waiter(void *arg)
{
	(void)arg;
	pthread_t s;
	if (!strcmp(mode, "join"))
		CHECK(pthread_create(&s, NULL, sleeper, NULL));
	__atomic_store_n(&waiter_tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
	if (sigsetjmp(out, 1) == 0) {
		if (!strcmp(mode, "cond")) {
			CHECK(pthread_mutex_lock(&m));
			pthread_cond_wait(&c, &m);
		} else if (!strcmp(mode, "mutex"))
			pthread_mutex_lock(&held);
		else if (!strcmp(mode, "join"))
			pthread_join(s, NULL);
		else if (!strcmp(mode, "rwlock"))
			pthread_rwlock_wrlock(&rw);
		printf("%s: returned\n", mode);
	} else
		printf("%s: jumped out\n", mode);
	if (!strcmp(mode, "cond")) /* glibc's wait took m back as it left */
		CHECK(pthread_mutex_unlock(&m));
	if (!strcmp(mode, "join")) {
		__atomic_store_n(&sleeper_go, 1, __ATOMIC_RELEASE);
		CHECK(pthread_join(s, NULL));
	}
	pthread_exit((void *)7);
}

static pthread_mutex_t x = PTHREAD_MUTEX_INITIALIZER, y = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t x_held;

static void *holds_x(void *arg)
{
	CHECK(pthread_mutex_lock(&x));
	pthread_barrier_wait(&x_held);
	usleep(500000);
	CHECK(pthread_mutex_lock(&y)); /* main holds it, asleep */
	CHECK(pthread_mutex_unlock(&y));
	CHECK(pthread_mutex_unlock(&x));
	return arg;
}

static int watched(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = jump;
	sigaction(SIGALRM, &sa, NULL);
	pthread_barrier_init(&x_held, NULL, 2);
	pthread_t t;
	CHECK(pthread_create(&t, NULL, holds_x, NULL));
	pthread_barrier_wait(&x_held);
	if (sigsetjmp(out, 1) == 0) {
		ualarm(200000, 0);
		pthread_mutex_lock(&x);
		printf("watched: returned\n");
	} else
		printf("watched: jumped out\n");
	CHECK(pthread_mutex_lock(&y));
	usleep(1500000);
	CHECK(pthread_mutex_unlock(&y));
	CHECK(pthread_join(t, NULL));
	printf("watched: done\n");
	return 0;
}

int main(int argc, char **argv)
{
	alarm(30);
	mode = argc > 1 ? argv[1] : "";
	if (!strcmp(mode, "watched")) {
		setvbuf(stdout, NULL, _IONBF, 0);
		return watched();
	}
	if (strcmp(mode, "cond") && strcmp(mode, "mutex") && strcmp(mode, "join") &&
	    strcmp(mode, "rwlock")) {
		fprintf(stderr, "usage: jumped_out cond|mutex|join|rwlock|watched\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IONBF, 0);
	CHECK(pthread_mutex_lock(&held));
	CHECK(pthread_rwlock_rdlock(&rw));
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = jump;
	sigaction(SIGUSR2, &sa, NULL);
	pthread_t t;
	CHECK(pthread_create(&t, NULL, waiter, NULL));
	int tid;
	while (!(tid = __atomic_load_n(&waiter_tid, __ATOMIC_ACQUIRE)) || !sleeps_on_futex(tid, NULL))
		usleep(1000);
	CHECK(pthread_kill(t, SIGUSR2));
	void *ret;
	CHECK(pthread_join(t, &ret));
	printf("%s: the thread ended with %ld\n", mode, (long)ret);
	CHECK(pthread_mutex_unlock(&held));
	CHECK(pthread_rwlock_unlock(&rw));
	return 0;
}
