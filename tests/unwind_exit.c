/* tests/unwind_exit.c - pthread_exit and pthread_cancel with cleanup
 * handlers, after threads have contended on shared mutexes, for
 * tests/unwind_safety.sh.
 *
 * glibc runs cleanup handlers by forced unwinding (_Unwind_ForcedUnwind from
 * libgcc_s).  The library captures call stacks with libunwind when a thread
 * has to wait for a mutex, and libunwind defines the same _Unwind_* ABI; if
 * its definitions ever won, thread exit and cancellation would unwind
 * through the wrong implementation.  Here 9 threads first take turns on 2
 * shared mutexes (waiting for each other, so the library captures stacks),
 * then end in one of these ways:
 *
 *   threads 0-3  pthread_exit from 1 to 4 calls deep, holding a shared
 *                mutex, with two cleanup handlers registered: one counts,
 *                the other unlocks the mutex;
 *   thread  4    returns normally after pthread_cleanup_pop(1) (the control);
 *   threads 5-6  cancelled (deferred) inside pthread_cond_wait -- the wait
 *                goes through the library's pthread_cond_wait, so the unwind
 *                crosses its frame -- with a cleanup handler that unlocks
 *                the mutex the wait took back;
 *   thread  7    cancelled inside read() on a pipe nobody writes to;
 *   thread  8    cancelled inside nanosleep().
 *
 * Main checks each join value (the pthread_exit value, 104, or
 * PTHREAD_CANCELED), the order in which each thread's cleanup handlers ran,
 * the guarded counters and that every mutex was left unlocked.  The output
 * depends on nothing but the program; "all results correct" and exit 0, or
 * what differs and exit 1. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define THREADS 9
#define EXITERS 4 /* threads 0-3 */
#define RETURNER 4
#define COND_WAITERS 2 /* threads 5-6 */
#define READER 7
#define SLEEPER 8
#define LOOPS 20000 /* even: each thread takes each mutex LOOPS / 2 times */
#define MUTEXES 2

static pthread_mutex_t shared[MUTEXES] = { PTHREAD_MUTEX_INITIALIZER,
					   PTHREAD_MUTEX_INITIALIZER };
static unsigned long guarded[MUTEXES]; /* guarded by shared[m] */

/* The cond waiters' mutex and condition; `go` is never set, so only
 * cancellation ends their wait.  main_cv tells main they are waiting. */
static pthread_mutex_t wait_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wait_cv = PTHREAD_COND_INITIALIZER;
static pthread_cond_t main_cv = PTHREAD_COND_INITIALIZER;
static int go, waiting, contended_done;

static pthread_barrier_t start;
static int pipe_fd[2];

/* What each thread's cleanup handlers did, in the order they ran; written
 * by the thread itself, read by main after the join. */
static char cleanup_log[THREADS][64];
static atomic_int cleanups_run;

static void log_step(int id, const char *step)
{
	char *log = cleanup_log[id];
	if (log[0])
		strncat(log, " ", sizeof cleanup_log[id] - strlen(log) - 1);
	strncat(log, step, sizeof cleanup_log[id] - strlen(log) - 1);
	atomic_fetch_add(&cleanups_run, 1);
}

struct unlock_arg {
	int id;
	pthread_mutex_t *mutex;
};

static void cleanup_unlock(void *p)
{
	struct unlock_arg *a = p;
	pthread_mutex_unlock(a->mutex);
	log_step(a->id, "unlock");
}

static void cleanup_count(void *p)
{
	log_step((int)(intptr_t)p, "count");
}

/* Every thread starts here: LOOPS short critical sections on the 2 shared
 * mutexes, alternating, all threads released together. */
static void contend(int id)
{
	pthread_barrier_wait(&start);
	for (int i = 0; i < LOOPS; i++) {
		int m = (id + i) % MUTEXES;
		pthread_mutex_lock(&shared[m]);
		unsigned long v = guarded[m];
		for (volatile int spin = 0; spin < 20; spin++)
			;
		guarded[m] = v + 1;
		pthread_mutex_unlock(&shared[m]);
	}
	pthread_mutex_lock(&wait_mutex);
	contended_done++;
	pthread_cond_signal(&main_cv);
	pthread_mutex_unlock(&wait_mutex);
}

/* depth calls down, then pthread_exit: the forced unwind passes each frame.
 * The call goes through a volatile pointer so it is neither inlined nor
 * seen as endless recursion, and the barrier after it keeps it from being
 * a tail call. */
static void exit_from(int id, int depth);
static void (*volatile exit_next)(int, int) = exit_from;

__attribute__((noinline)) static void exit_from(int id, int depth)
{
	if (depth <= 1)
		pthread_exit((void *)(intptr_t)(100 + id));
	exit_next(id, depth - 1);
	__asm__ volatile("" ::: "memory");
}

static void *exiter(void *p)
{
	int id = (int)(intptr_t)p;
	struct unlock_arg unlock = { id, &shared[id % MUTEXES] };
	contend(id);
	pthread_mutex_lock(unlock.mutex);
	pthread_cleanup_push(cleanup_unlock, &unlock);
	pthread_cleanup_push(cleanup_count, p);
	exit_from(id, 1 + id);
	pthread_cleanup_pop(0);
	pthread_cleanup_pop(0);
	return NULL;
}

static void *returner(void *p)
{
	int id = (int)(intptr_t)p;
	struct unlock_arg unlock = { id, &shared[id % MUTEXES] };
	contend(id);
	pthread_mutex_lock(unlock.mutex);
	pthread_cleanup_push(cleanup_unlock, &unlock);
	pthread_cleanup_pop(1);
	return (void *)(intptr_t)(100 + id);
}

static void *cond_waiter(void *p)
{
	int id = (int)(intptr_t)p;
	struct unlock_arg unlock = { id, &wait_mutex };
	contend(id);
	pthread_mutex_lock(&wait_mutex);
	pthread_cleanup_push(cleanup_unlock, &unlock);
	waiting++;
	pthread_cond_signal(&main_cv);
	while (!go)
		pthread_cond_wait(&wait_cv, &wait_mutex);
	pthread_cleanup_pop(1);
	return NULL;
}

static void *reader(void *p)
{
	int id = (int)(intptr_t)p;
	char c;
	contend(id);
	pthread_cleanup_push(cleanup_count, p);
	while (read(pipe_fd[0], &c, 1) != 0)
		;
	pthread_cleanup_pop(0);
	return NULL;
}

static void *sleeper(void *p)
{
	int id = (int)(intptr_t)p;
	contend(id);
	pthread_cleanup_push(cleanup_count, p);
	for (;;) {
		struct timespec ts = { 3600, 0 };
		nanosleep(&ts, NULL);
	}
	pthread_cleanup_pop(0);
	return NULL;
}

static int failures;

static void expect(int ok, const char *what, int id)
{
	if (!ok) {
		printf("WRONG: %s (thread %d)\n", what, id);
		failures++;
	}
}

int main(void)
{
	pthread_t th[THREADS];
	void *(*body[THREADS])(void *) = { exiter, exiter, exiter, exiter, returner,
					   cond_waiter, cond_waiter, reader, sleeper };
	const char *how[THREADS] = { "pthread_exit", "pthread_exit", "pthread_exit",
				     "pthread_exit", "return", "cancel in pthread_cond_wait",
				     "cancel in pthread_cond_wait", "cancel in read",
				     "cancel in nanosleep" };
	const char *want_log[THREADS] = { "count unlock", "count unlock", "count unlock",
					  "count unlock", "unlock",	  "unlock",
					  "unlock",	  "count",	  "count" };

	if (pipe(pipe_fd) != 0 || pthread_barrier_init(&start, NULL, THREADS) != 0) {
		perror("unwind_exit: setup");
		return 2;
	}
	for (int id = 0; id < THREADS; id++)
		if (pthread_create(&th[id], NULL, body[id], (void *)(intptr_t)id) != 0) {
			perror("unwind_exit: pthread_create");
			return 2;
		}

	/* Cancel only once every thread is past its contention loop and both
	 * cond waiters are inside pthread_cond_wait (they release wait_mutex
	 * only there).  The reader and the sleeper may not have reached read()
	 * or nanosleep() yet: deferred cancellation acts at the next one. */
	pthread_mutex_lock(&wait_mutex);
	while (contended_done < THREADS || waiting < COND_WAITERS)
		pthread_cond_wait(&main_cv, &wait_mutex);
	pthread_mutex_unlock(&wait_mutex);
	for (int id = RETURNER + 1; id < THREADS; id++)
		pthread_cancel(th[id]);

	printf("unwind_exit: %d threads x %d locks on %d shared mutexes\n", THREADS, LOOPS,
	       MUTEXES);
	for (int id = 0; id < THREADS; id++) {
		void *ret = NULL;
		int err = pthread_join(th[id], &ret);
		int cancelled = id > RETURNER;
		expect(err == 0, "pthread_join failed", id);
		if (cancelled)
			expect(ret == PTHREAD_CANCELED, "join value is not PTHREAD_CANCELED", id);
		else
			expect(ret == (void *)(intptr_t)(100 + id), "wrong join value", id);
		expect(strcmp(cleanup_log[id], want_log[id]) == 0,
		       "cleanup handlers did not run as registered", id);
		if (cancelled)
			printf("thread %d: %s -> %s, cleanup: %s\n", id, how[id],
			       ret == PTHREAD_CANCELED ? "PTHREAD_CANCELED" : "not cancelled",
			       cleanup_log[id]);
		else if (id < EXITERS)
			printf("thread %d: %s at depth %d -> %ld, cleanup: %s\n", id, how[id],
			       1 + id, (long)(intptr_t)ret, cleanup_log[id]);
		else
			printf("thread %d: %s -> %ld, cleanup: %s\n", id, how[id],
			       (long)(intptr_t)ret, cleanup_log[id]);
	}

	int run = atomic_load(&cleanups_run);
	printf("cleanup handlers run: %d\n", run);
	expect(run == 2 * EXITERS + 1 + COND_WAITERS + 2, "cleanup handler count", -1);
	for (int m = 0; m < MUTEXES; m++) {
		printf("mutex %d: %lu critical sections\n", m, guarded[m]);
		expect(guarded[m] == (unsigned long)THREADS * (LOOPS / MUTEXES),
		       "guarded counter", -1);
	}
	pthread_mutex_t *all[] = { &shared[0], &shared[1], &wait_mutex };
	int unlocked = 0;
	for (int m = 0; m < 3; m++)
		if (pthread_mutex_trylock(all[m]) == 0) {
			pthread_mutex_unlock(all[m]);
			unlocked++;
		}
	printf("mutexes left unlocked after the joins: %d of 3\n", unlocked);
	expect(unlocked == 3, "a mutex was left locked", -1);
	if (failures)
		return 1;
	printf("all results correct\n");
	return 0;
}
