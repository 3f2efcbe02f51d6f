/* stall.c - hangs that no mutex cycle explains, and programs that only
 * look like them, for tests/stall.sh (run with MUTEXSTAT_WATCHDOG=1):
 *
 *   lost        two workers wait on a condition nobody signals (the flag
 *               is set without a broadcast once both wait: "both wait");
 *               main joins the first: a STALL that nothing ends
 *   sem         a worker waits in sem_wait for a post that never comes,
 *               a second for a mutex the first holds; main joins them
 *   timed       a worker waits on a condition with a 3 s deadline, main
 *               joins it: no STALL (the deadline ends it), then "done"
 *   pool        workers idle on a condition while main sleeps 3 s, then
 *               wakes them: no STALL (main sleeps, it is not blocked)
 *   pshared     a worker waits on a process-shared semaphore that a child
 *               process posts after 3 s: no STALL (another process ends it)
 *   alarm       a worker waits on a condition; main waits in sem_wait for
 *               the post of a SIGALRM handler (alarm(3)), then wakes the
 *               worker: no STALL (the alarm's signal ends it)
 *   timer       the same with a POSIX timer (timer_create) for the alarm
 *   behind-one  a holder takes m and sleeps 2.5 s; five threads wait for m
 *               at one line: no STALL (the holder sleeps), one WAIT CHAIN
 *   alone       main, the only thread, waits on a condition nobody can
 *               signal: a STALL of one thread
 *   recursive   a recursive mutex taken twice, the second level in a
 *               helper that waits on a condition: the wait lets go of one
 *               level, so the producer, which would signal, waits for the
 *               mutex: one STALL (not a DEADLOCK beside it), and the mutex
 *               still locked at its outer level's line
 *   term        a daemon's shape: a worker idles on a condition; main waits
 *               in sem_wait for the post of its SIGTERM handler, then wakes
 *               the worker: a STALL with a caveat (the test sends SIGTERM
 *               once it is reported), which does not abort
 *   retake      a worker woken from its condition wait blocks taking m back,
 *               held by a second worker that sleeps in a condition wait
 *               nobody signals; main joins the first: a STALL, the first
 *               worker's wait one for m ("retaking" once it blocks)
 *   retake-held FILE  main takes m, wakes the worker in its condition wait
 *               and keeps m until FILE exists: the worker blocks taking m
 *               back ("retaking"), then "done"
 *   retake-late the same hang, but the worker is woken 3 s into the waits,
 *               by a thread that then ends (once it blocks: "retaking")
 *   retake-slow FILE  retake, but main sleeps until FILE exists instead of
 *               joining (no STALL), then signals the holder, which lets m
 *               go: the worker's retake ends, then "done"
 *
 * Prints "thread ROLE TID" and "cond/mutex NAME ADDRESS" lines first,
 * "done" at the end of the modes that end. */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proc_wait.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t other = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static sem_t sem, *shared_sem;
static pthread_cond_t c2 = PTHREAD_COND_INITIALIZER;
static int ready, waiting; /* waiting: threads in waiter()'s wait, under m */
static pid_t waiter_tid;   /* the last waiter() to start */

/* Until mutex x is held: glibc's lock word is not 0 (a sleep was not
 * enough on a loaded machine). */
static void until_held(pthread_mutex_t *x)
{
	while (!__atomic_load_n(&x->__data.__lock, __ATOMIC_RELAXED))
		usleep(1000);
}

static void say_thread(const char *role)
{
	printf("thread %s %ld\n", role, (long)syscall(SYS_gettid));
	fflush(stdout);
}

static void *waiter(void *arg)
{
	say_thread(arg);
	__atomic_store_n(&waiter_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	pthread_mutex_lock(&m);
	waiting++;
	while (!ready)
		pthread_cond_wait(&c, &m); /* STALL_COND */
	pthread_mutex_unlock(&m);
	return NULL;
}

static void *sem_waiter(void *arg)
{
	say_thread(arg);
	pthread_mutex_lock(&other);
	sem_wait(&sem); /* STALL_SEM */
	pthread_mutex_unlock(&other);
	return NULL;
}

static void *other_waiter(void *arg)
{
	say_thread(arg);
	until_held(&other); /* by the sem waiter */
	pthread_mutex_lock(&other); /* STALL_MUTEX */
	pthread_mutex_unlock(&other);
	return NULL;
}

static void *timed_waiter(void *arg)
{
	say_thread(arg);
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 3;
	pthread_mutex_lock(&m);
	while (!ready)
		if (pthread_cond_timedwait(&c, &m, &dl)) /* STALL_TIMED */
			break;
	pthread_mutex_unlock(&m);
	return NULL;
}

static void post_sem(int sig)
{
	(void)sig;
	sem_post(&sem);
}

/* Main waits in sem_wait for the alarm's handler, then lets w1 go. */
static void woken_by_alarm(int posix_timer)
{
	sem_init(&sem, 0, 0);
	signal(SIGALRM, post_sem);
	pthread_t t;
	pthread_create(&t, NULL, waiter, "w1");
	if (posix_timer) {
		timer_t id;
		struct sigevent ev;
		memset(&ev, 0, sizeof ev);
		ev.sigev_notify = SIGEV_SIGNAL;
		ev.sigev_signo = SIGALRM;
		struct itimerspec in3 = { { 0, 0 }, { 3, 0 } };
		if (timer_create(CLOCK_MONOTONIC, &ev, &id) || timer_settime(id, 0, &in3, NULL))
			exit(2);
	} else
		alarm(3);
	while (sem_wait(&sem)) /* STALL_ALARM */
		;
	pthread_mutex_lock(&m);
	ready = 1;
	pthread_cond_broadcast(&c);
	pthread_mutex_unlock(&m);
	pthread_join(t, NULL);
}

static void *sleeping_holder(void *arg)
{
	say_thread(arg);
	pthread_mutex_lock(&m);
	usleep(2500000); /* HOLDER_SLEEPS */
	pthread_mutex_unlock(&m);
	return NULL;
}

static void *m_waiter(void *arg)
{
	until_held(&m); /* by the holder */
	pthread_mutex_lock(&m); /* WAITERS_WAIT */
	pthread_mutex_unlock(&m);
	return arg;
}

static void behind_one(void)
{
	pthread_t h, t[5];
	pthread_create(&h, NULL, sleeping_holder, "holder");
	for (int i = 0; i < 5; i++)
		pthread_create(&t[i], NULL, m_waiter, NULL);
	for (int i = 0; i < 5; i++)
		pthread_join(t[i], NULL);
	pthread_join(h, NULL);
}

static void *shared_waiter(void *arg)
{
	say_thread(arg);
	sem_wait(shared_sem); /* STALL_SHARED */
	return NULL;
}

static void post_on_term(int sig)
{
	(void)sig;
	sem_post(&sem); /* async-signal-safe */
}

static void woken_by_term(void)
{
	pthread_t t;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = post_on_term;
	sigaction(SIGTERM, &sa, NULL);
	sem_init(&sem, 0, 0);
	pthread_create(&t, NULL, waiter, "w1");
	while (sem_wait(&sem)) /* STALL_TERM */
		;
	pthread_mutex_lock(&m);
	ready = 1;
	pthread_cond_broadcast(&c);
	pthread_mutex_unlock(&m);
	pthread_join(t, NULL);
}

static pthread_mutex_t rec_m;

static __attribute__((noinline)) void rec_inner(void)
{
	pthread_mutex_lock(&rec_m); /* RECURSIVE_INNER */
	while (!ready)
		pthread_cond_wait(&c, &rec_m); /* RECURSIVE_WAIT */
	pthread_mutex_unlock(&rec_m);
}

static void *rec_consumer(void *arg)
{
	say_thread(arg);
	pthread_mutex_lock(&rec_m); /* RECURSIVE_OUTER */
	rec_inner();
	pthread_mutex_unlock(&rec_m);
	return NULL;
}

static __attribute__((noinline)) void recursive_hang(void)
{
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&rec_m, &a);
	printf("mutex rec %p\n", (void *)&rec_m);
	pthread_t t;
	pthread_create(&t, NULL, rec_consumer, "consumer");
	/* the consumer in its condition wait, still holding a level */
	while (__atomic_load_n(&rec_m.__data.__count, __ATOMIC_RELAXED) != 1 ||
	       !__atomic_load_n(&c.__data.__wrefs, __ATOMIC_RELAXED))
		usleep(1000);
	pthread_mutex_lock(&rec_m); /* RECURSIVE_PRODUCER */
	ready = 1;
	pthread_cond_signal(&c);
	pthread_mutex_unlock(&rec_m);
	pthread_join(t, NULL);
}

/* Until the waiter (w1) sleeps in futex on m's lock word: woken from its
 * condition wait, blocked taking m back. */
static void until_retaking(void)
{
	pid_t tid;
	unsigned long word;
	while (!(tid = __atomic_load_n(&waiter_tid, __ATOMIC_ACQUIRE)) ||
	       proc_syscall(tid, &word) != SYS_futex || word != (unsigned long)&m)
		usleep(1000);
	printf("retaking\n");
}

/* Until the waiter is in its condition wait: it counted itself under m,
 * and lets m go only by waiting.  Returns with m held. */
static void until_waiting(void)
{
	for (;;) {
		pthread_mutex_lock(&m); /* UNTIL_WAITING */
		if (waiting)
			return;
		pthread_mutex_unlock(&m);
		usleep(1000);
	}
}

static int holding, let_go; /* under other */

/* retake: takes m, free while the waiter waits, and keeps it through a
 * condition wait that only retake-slow signals */
static void *cond_holder(void *arg)
{
	say_thread(arg);
	pthread_mutex_lock(&m); /* RETAKE_HOLDER_LOCKS */
	pthread_mutex_lock(&other);
	holding = 1;
	while (!let_go)
		pthread_cond_wait(&c2, &other); /* RETAKE_HOLDER_WAITS */
	pthread_mutex_unlock(&other);
	pthread_mutex_unlock(&m);
	return NULL;
}

/* The waiter (t[0]) in its condition wait on c, and the holder (t[1])
 * holding m in its condition wait on c2. */
static void cond_holder_over_waiter(pthread_t t[2])
{
	pthread_create(&t[0], NULL, waiter, "w1");
	until_waiting();
	ready = 1; /* once woken, the waiter returns (with m) */
	pthread_mutex_unlock(&m);
	pthread_create(&t[1], NULL, cond_holder, "holder");
	for (;;) { /* the holder in its condition wait: it let other go */
		pthread_mutex_lock(&other);
		if (holding)
			break;
		pthread_mutex_unlock(&other);
		usleep(1000);
	}
	pthread_mutex_unlock(&other);
}

/* The waiter (t[0]) blocked taking m back from the holder (t[1]), which
 * sleeps in its condition wait on c2. */
static void retake_behind_cond_holder(pthread_t t[2])
{
	cond_holder_over_waiter(t);
	pthread_cond_signal(&c); /* the waiter wakes, and blocks on m */
	until_retaking();
}

/* retake-late: wakes the waiter after 3 s, and ends once it blocks */
static void *late_signaller(void *arg)
{
	say_thread(arg);
	sleep(3);
	pthread_cond_signal(&c);
	until_retaking();
	return NULL;
}

static __attribute__((noinline)) void retake_late(void)
{
	pthread_t t[2], late;
	cond_holder_over_waiter(t);
	pthread_create(&late, NULL, late_signaller, "late");
	pthread_detach(late);
	pthread_join(t[0], NULL); /* forever */
}

static __attribute__((noinline)) void retake_hang(void)
{
	pthread_t t[2];
	retake_behind_cond_holder(t);
	pthread_join(t[0], NULL); /* forever */
}

/* The same, main asleep (not blocked: no STALL) until file exists; then
 * the holder is let go, and with it m. */
static __attribute__((noinline)) void retake_slow(const char *file)
{
	pthread_t t[2];
	retake_behind_cond_holder(t);
	while (access(file, F_OK))
		usleep(10000);
	pthread_mutex_lock(&other);
	let_go = 1;
	pthread_cond_signal(&c2);
	pthread_mutex_unlock(&other);
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
}

static __attribute__((noinline)) void retake_held(const char *file)
{
	pthread_t t;
	pthread_create(&t, NULL, waiter, "w1");
	until_waiting(); /* m held from here */
	ready = 1;
	pthread_cond_signal(&c);
	until_retaking();
	while (access(file, F_OK))
		usleep(10000);
	pthread_mutex_unlock(&m);
	pthread_join(t, NULL);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	pthread_t t[2];
	setvbuf(stdout, NULL, _IOLBF, 0);
	say_thread("main");
	printf("cond c %p\ncond c2 %p\nmutex m %p\nmutex other %p\n", (void *)&c, (void *)&c2,
	       (void *)&m, (void *)&other);
	if (!strcmp(mode, "lost")) {
		pthread_create(&t[0], NULL, waiter, "w1");
		pthread_create(&t[1], NULL, waiter, "w2");
		/* both in their wait: each counted itself under m, and let m
		 * go only by waiting */
		for (;;) {
			pthread_mutex_lock(&m);
			if (waiting == 2)
				break;
			pthread_mutex_unlock(&m);
			usleep(1000);
		}
		printf("both wait\n");
		ready = 1; /* and no broadcast: the waiters sleep on */
		pthread_mutex_unlock(&m);
		pthread_join(t[0], NULL); /* STALL_JOIN */
	} else if (!strcmp(mode, "sem")) {
		sem_init(&sem, 0, 0);
		pthread_create(&t[0], NULL, sem_waiter, "w1");
		pthread_create(&t[1], NULL, other_waiter, "w2");
		pthread_join(t[0], NULL); /* STALL_JOIN_SEM */
	} else if (!strcmp(mode, "timed")) {
		pthread_create(&t[0], NULL, timed_waiter, "w1");
		pthread_join(t[0], NULL);
	} else if (!strcmp(mode, "pool")) {
		pthread_create(&t[0], NULL, waiter, "w1");
		pthread_create(&t[1], NULL, waiter, "w2");
		sleep(3);
		pthread_mutex_lock(&m);
		ready = 1;
		pthread_cond_broadcast(&c);
		pthread_mutex_unlock(&m);
		pthread_join(t[0], NULL);
		pthread_join(t[1], NULL);
	} else if (!strcmp(mode, "pshared")) {
		shared_sem = mmap(NULL, sizeof *shared_sem, PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		sem_init(shared_sem, 1, 0);
		pid_t pid = fork();
		if (pid == 0) {
			sleep(3);
			sem_post(shared_sem);
			_exit(0);
		}
		pthread_create(&t[0], NULL, shared_waiter, "w1");
		pthread_join(t[0], NULL);
		waitpid(pid, NULL, 0);
	} else if (!strcmp(mode, "behind-one")) {
		behind_one();
	} else if (!strcmp(mode, "alone")) {
		pthread_mutex_lock(&m);
		while (!ready)
			pthread_cond_wait(&c, &m); /* STALL_ALONE */
		pthread_mutex_unlock(&m);
	} else if (!strcmp(mode, "alarm") || !strcmp(mode, "timer")) {
		woken_by_alarm(!strcmp(mode, "timer"));
	} else if (!strcmp(mode, "recursive")) {
		recursive_hang();
	} else if (!strcmp(mode, "term")) {
		woken_by_term();
	} else if (!strcmp(mode, "retake")) {
		retake_hang();
	} else if (!strcmp(mode, "retake-late")) {
		retake_late();
	} else if (!strcmp(mode, "retake-held") && argc > 2) {
		retake_held(argv[2]);
	} else if (!strcmp(mode, "retake-slow") && argc > 2) {
		retake_slow(argv[2]);
	} else {
		fprintf(stderr, "usage: stall lost|sem|timed|pool|pshared|alarm|timer|term|"
				"behind-one|alone|recursive|retake|retake-late|\n"
				"             retake-held FILE|retake-slow FILE\n");
		return 2;
	}
	printf("done\n");
	return 0;
}
