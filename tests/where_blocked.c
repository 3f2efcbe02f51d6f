/* where_blocked.c - a holder blocked in a system call, three calls deep, at
 * the end of a wait chain, for tests/where_blocked.sh: a live dump must show
 * where it is without sending it a signal (none of its calls cut short).
 *
 *   where_blocked poll|sleep|sigwait|join REPORT
 *
 * The holder takes the mutex, then waits in outer() -> middle() -> inner():
 * poll() on a pipe nobody writes, nanosleep(), sigtimedwait() for a
 * signal nobody sends, or pthread_timedjoin_np() of a thread that runs on
 * (a call of the library's: its frames are left out of where the holder
 * is), 100 ms at a time, until REPORT has a "Top" line;
 * another thread waits for the mutex meanwhile.  Both block SIGUSR1, so
 * kill -USR1 goes to the main thread.  Prints "ready" once the waiter
 * waits, then "calls cut short: N" (EINTR) at the end.  Built twice:
 * without frame pointers (-O2) and with them (-O0). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "deadline.h"
#include "proc_wait.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static const char *mode, *report;
static int pipe_fd[2], cut, steps;
static volatile int done;
static pid_t waiter_tid;
static pthread_t sleeper;
static int joined;

static void block_one(int sig)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, sig);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
}

/* One 100 ms wait of the mode's kind; 1 if a signal cut it short. */
static __attribute__((noinline)) int wait_once(void)
{
	if (!strcmp(mode, "poll")) {
		struct pollfd p = { pipe_fd[0], POLLIN, 0 };
		return poll(&p, 1, 100) < 0 && errno == EINTR; /* INNER_POLLS */
	}
	if (!strcmp(mode, "sleep")) {
		struct timespec t = { 0, 100000000 };
		return nanosleep(&t, NULL) != 0 && errno == EINTR; /* INNER_SLEEPS */
	}
	if (!strcmp(mode, "join")) {
		struct timespec dl = deadline_in(CLOCK_REALTIME, 100);
		int rc = pthread_timedjoin_np(sleeper, NULL, &dl); /* INNER_JOINS */
		joined |= rc == 0;
		return rc == EINTR;
	}
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR2);
	struct timespec t = { 0, 100000000 };
	return sigtimedwait(&s, NULL, &t) < 0 && errno == EINTR; /* INNER_SIGWAITS */
}

static __attribute__((noinline)) void inner(void)
{
	while (!done)
		cut += wait_once(); /* INNER_CALLS */
	steps++;
}

static __attribute__((noinline)) void middle(void)
{
	inner(); /* MIDDLE_CALLS */
	steps++;
}

static __attribute__((noinline)) void outer(void)
{
	middle(); /* OUTER_CALLS */
	steps++;
}

static void *holder(void *arg)
{
	block_one(SIGUSR1);
	if (!strcmp(mode, "sigwait"))
		block_one(SIGUSR2);
	pthread_mutex_lock(&m);
	pthread_barrier_wait(arg);
	outer();
	pthread_mutex_unlock(&m);
	return NULL;
}

static void *waiter(void *arg)
{
	(void)arg;
	block_one(SIGUSR1);
	waiter_tid = (pid_t)syscall(SYS_gettid);
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	return NULL;
}

static void nap(void)
{
	struct timespec t = { 0, 10000000 };
	nanosleep(&t, NULL);
}

/* The thread the holder joins in mode join: it runs until the end. */
static void *sleeps(void *arg)
{
	block_one(SIGUSR1);
	while (!done)
		nap();
	return arg;
}

int main(int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[1], "poll") && strcmp(argv[1], "sleep") &&
			  strcmp(argv[1], "sigwait") && strcmp(argv[1], "join"))) {
		fprintf(stderr, "usage: where_blocked poll|sleep|sigwait|join REPORT\n");
		return 2;
	}
	mode = argv[1];
	report = argv[2];
	if (pipe(pipe_fd) != 0)
		return 1;
	pthread_barrier_t held;
	pthread_barrier_init(&held, NULL, 2);
	pthread_t h, w;
	pthread_create(&sleeper, NULL, sleeps, NULL);
	pthread_create(&h, NULL, holder, &held);
	pthread_barrier_wait(&held);
	pthread_create(&w, NULL, waiter, NULL);
	for (int i = 0; i < 2000 && !(waiter_tid && sleeps_on_futex(waiter_tid, &m.__data.__lock)); i++)
		nap();
	printf("ready\n");
	fflush(stdout);
	for (int i = 0; i < 2000 && !file_has(report, "\nTop "); i++)
		nap();
	done = 1;
	pthread_join(h, NULL);
	pthread_join(w, NULL);
	if (!joined)
		pthread_join(sleeper, NULL);
	printf("calls cut short: %d\n", cut);
	return steps == 3 ? 0 : 1;
}
