/* condvar.c - condition waits on every kind of mutex, for tests/condvar.sh.
 * Each mode prints what glibc answered (the same with and without the
 * library) and what the report should then say.
 *
 *   robust-retake   main waits holding a robust mutex; a thread takes it,
 *                   signals and exits holding it: the retake answers
 *                   EOWNERDEAD; main makes it consistent, unlocks, locks
 *                   and unlocks it again (4 acquisitions)
 *   robust-left     a thread exits holding a robust mutex; main's lock
 *                   answers EOWNERDEAD, and main waits (a past deadline)
 *                   without making it consistent: glibc's release makes
 *                   it not recoverable, the retake answers ENOTRECOVERABLE,
 *                   so do the unlock (EPERM) and the lock after
 *   recursive-hang  main holds a recursive mutex twice and waits: glibc
 *                   lets one level go, so the mutex stays held, and the
 *                   thread that would signal blocks on it: hung (prints
 *                   "hung" once that thread sleeps on the mutex)
 *   not-held        waits on mutexes the thread does not hold: a normal
 *                   one nobody holds (glibc "lets it go", waits, and gives
 *                   it to the thread), an errorcheck one (EPERM, no wait),
 *                   a normal one another thread holds (glibc lets it go
 *                   and gives it to this thread), a destroyed one (EINVAL)
 *   storm N         N threads wait for a condition, 50 broadcasts wake
 *                   them all each time; prints the acquisitions made
 *   ended           3 mutexes made at one line, each waited with twice (a
 *                   past deadline) and destroyed: 6 condition waits in
 *                   their "ended" line
 *   bypassed        a mutex locked with glibc's own function (a pointer
 *                   from a handle to libc.so.6: the library does not see
 *                   it), then waited with: the retake is its first lock
 *   refused         calls glibc refuses (EINVAL) before it looks at the
 *                   mutex: condition waits with a deadline's nanoseconds
 *                   out of range or a clock it does not wait by, clock
 *                   locks by such clocks, free and held: 7 EINVAL */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t m;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static sem_t go;

static const char *err(int rc)
{
	return rc ? strerrorname_np(rc) : "0";
}

static void init_kind(pthread_mutex_t *mx, int type, int robust)
{
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, type);
	pthread_mutexattr_setrobust(&a, robust);
	pthread_mutex_init(mx, &a);
	pthread_mutexattr_destroy(&a);
}

static const struct timespec long_ago = { 1, 0 };

/* ---- robust-retake ------------------------------------------------------ */

static void *signal_and_die(void *arg)
{
	(void)arg;
	sem_wait(&go);
	pthread_mutex_lock(&m); /* free once main waits for the condition */
	pthread_cond_signal(&cond);
	return NULL; /* dies holding m */
}

static int robust_retake(void)
{
	pthread_t t;
	init_kind(&m, PTHREAD_MUTEX_NORMAL, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_lock(&m);
	sem_init(&go, 0, 0);
	pthread_create(&t, NULL, signal_and_die, NULL);
	sem_post(&go);
	int rc = pthread_cond_wait(&cond, &m); /* RETAKE_OWNERDEAD */
	printf("mutex %p cond_wait %s\n", (void *)&m, err(rc));
	pthread_join(t, NULL);
	printf("consistent %s\n", err(pthread_mutex_consistent(&m)));
	printf("unlock %s\n", err(pthread_mutex_unlock(&m)));
	printf("lock %s\n", err(pthread_mutex_lock(&m)));
	printf("unlock %s\n", err(pthread_mutex_unlock(&m)));
	return 0;
}

/* ---- robust-left -------------------------------------------------------- */

static void *lock_and_die(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	return NULL;
}

static int robust_left(void)
{
	pthread_t t;
	init_kind(&m, PTHREAD_MUTEX_NORMAL, PTHREAD_MUTEX_ROBUST);
	pthread_create(&t, NULL, lock_and_die, NULL);
	pthread_join(t, NULL);
	printf("lock %s\n", err(pthread_mutex_lock(&m)));
	printf("cond_timedwait %s\n", err(pthread_cond_timedwait(&cond, &m, &long_ago)));
	printf("unlock %s\n", err(pthread_mutex_unlock(&m)));
	printf("lock %s\n", err(pthread_mutex_lock(&m)));
	return 0;
}

/* ---- recursive-hang ----------------------------------------------------- */

static int ready;

static void *signaller(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m); /* RECURSIVE_BLOCKS: never returns */
	ready = 1;
	pthread_cond_signal(&cond);
	pthread_mutex_unlock(&m);
	return NULL;
}

static void *watch_hang(void *arg)
{
	(void)arg;
	/* glibc marks a mutex with waiters by __lock == 2 */
	while (__atomic_load_n(&m.__data.__lock, __ATOMIC_RELAXED) != 2)
		usleep(1000);
	printf("hung\n");
	fflush(stdout);
	return NULL;
}

static int recursive_hang(void)
{
	pthread_t t, w;
	init_kind(&m, PTHREAD_MUTEX_RECURSIVE, PTHREAD_MUTEX_STALLED);
	pthread_mutex_lock(&m);
	pthread_mutex_lock(&m);
	pthread_create(&t, NULL, signaller, NULL);
	pthread_create(&w, NULL, watch_hang, NULL);
	while (!ready)
		pthread_cond_wait(&cond, &m); /* RECURSIVE_WAITS */
	return 1; /* never */
}

/* ---- not-held ----------------------------------------------------------- */

static pthread_mutex_t stolen = PTHREAD_MUTEX_INITIALIZER;
static sem_t waited; /* main's wait on stolen is over */

static void *hold_stolen(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&stolen);
	sem_post(&go);
	sem_wait(&waited);
	return NULL;
}

static int not_held(void)
{
	static pthread_mutex_t plain = PTHREAD_MUTEX_INITIALIZER, errorcheck, gone;
	init_kind(&errorcheck, PTHREAD_MUTEX_ERRORCHECK, PTHREAD_MUTEX_STALLED);
	pthread_mutex_init(&gone, NULL);
	pthread_mutex_destroy(&gone);
	printf("mutexes: plain %p errorcheck %p another's %p destroyed %p\n", (void *)&plain,
	       (void *)&errorcheck, (void *)&stolen, (void *)&gone);

	int rc = pthread_cond_timedwait(&cond, &plain, &long_ago); /* NOT_HELD_PLAIN */
	printf("plain: %s, holds it: %d\n", err(rc), plain.__data.__owner == gettid());
	printf("plain unlock %s\n", err(pthread_mutex_unlock(&plain)));

	rc = pthread_cond_timedwait(&cond, &errorcheck, &long_ago); /* NOT_HELD_ERRORCHECK */
	printf("errorcheck: %s, holds it: %d\n", err(rc), errorcheck.__data.__owner == gettid());

	pthread_t t;
	sem_init(&go, 0, 0);
	sem_init(&waited, 0, 0);
	pthread_create(&t, NULL, hold_stolen, NULL);
	sem_wait(&go);
	rc = pthread_cond_timedwait(&cond, &stolen, &long_ago); /* NOT_HELD_OTHER */
	printf("another's: %s, holds it: %d\n", err(rc), stolen.__data.__owner == gettid());
	printf("another's unlock %s\n", err(pthread_mutex_unlock(&stolen)));
	sem_post(&waited);
	pthread_join(t, NULL);

	rc = pthread_cond_timedwait(&cond, &gone, &long_ago); /* NOT_HELD_DESTROYED */
	printf("destroyed: %s\n", err(rc));
	return 0;
}

/* ---- storm -------------------------------------------------------------- */

#define ROUNDS 50
static int nthreads, generation, arrived;
static unsigned long acquired; /* under m */
static pthread_cond_t all_here = PTHREAD_COND_INITIALIZER;

static void *storm_waiter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	acquired++;
	for (int g = 0; g < ROUNDS; g++) {
		if (++arrived == nthreads)
			pthread_cond_signal(&all_here);
		while (generation == g) {
			pthread_cond_wait(&cond, &m);
			acquired++;
		}
	}
	pthread_mutex_unlock(&m);
	return NULL;
}

static int storm(int n)
{
	pthread_t t[256];
	nthreads = n < 1 ? 1 : n > 256 ? 256 : n;
	pthread_mutex_init(&m, NULL);
	for (int i = 0; i < nthreads; i++)
		pthread_create(&t[i], NULL, storm_waiter, NULL);
	pthread_mutex_lock(&m);
	acquired++;
	for (int g = 0; g < ROUNDS; g++) {
		while (arrived < nthreads) {
			pthread_cond_wait(&all_here, &m);
			acquired++;
		}
		arrived = 0;
		generation++;
		pthread_cond_broadcast(&cond);
	}
	pthread_mutex_unlock(&m);
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	printf("mutex %p acquisitions %lu\n", (void *)&m, acquired);
	return 0;
}

/* ---- ended -------------------------------------------------------------- */

static int ended(void)
{
	for (int i = 0; i < 3; i++) {
		pthread_mutex_t mx;
		pthread_mutex_init(&mx, NULL);
		pthread_mutex_lock(&mx);
		pthread_cond_timedwait(&cond, &mx, &long_ago);
		pthread_cond_timedwait(&cond, &mx, &long_ago);
		pthread_mutex_unlock(&mx);
		pthread_mutex_destroy(&mx);
	}
	return 0;
}

/* ---- bypassed ----------------------------------------------------------- */

static int bypassed(void)
{
	static pthread_mutex_t mx = PTHREAD_MUTEX_INITIALIZER;
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	int (*lock)(pthread_mutex_t *) =
		libc ? (int (*)(pthread_mutex_t *))dlsym(libc, "pthread_mutex_lock") : NULL;
	if (!lock)
		return 1;
	lock(&mx);
	int rc = pthread_cond_timedwait(&cond, &mx, &long_ago); /* BYPASSED_WAIT */
	printf("mutex %p cond_timedwait %s\n", (void *)&mx, err(rc));
	printf("unlock %s\n", err(pthread_mutex_unlock(&mx)));
	return 0;
}

/* ---- refused ------------------------------------------------------------ */

static int refused(void)
{
	static pthread_mutex_t mx = PTHREAD_MUTEX_INITIALIZER;
	const struct timespec too_many_ns = { 1, 1000000000 }, negative_ns = { 1, -1 };
	printf("free clocklock clock 99 %s\n", err(pthread_mutex_clocklock(&mx, 99, &long_ago)));
	printf("free clocklock cputime %s\n",
	       err(pthread_mutex_clocklock(&mx, CLOCK_PROCESS_CPUTIME_ID, &long_ago)));
	pthread_mutex_lock(&mx);
	printf("cond_timedwait 1e9 ns %s\n", err(pthread_cond_timedwait(&cond, &mx, &too_many_ns)));
	printf("cond_timedwait -1 ns %s\n", err(pthread_cond_timedwait(&cond, &mx, &negative_ns)));
	printf("cond_clockwait clock 99 %s\n",
	       err(pthread_cond_clockwait(&cond, &mx, 99, &long_ago)));
	printf("cond_clockwait 1e9 ns %s\n",
	       err(pthread_cond_clockwait(&cond, &mx, CLOCK_MONOTONIC, &too_many_ns)));
	printf("held clocklock clock 99 %s\n", err(pthread_mutex_clocklock(&mx, 99, &long_ago)));
	printf("unlock %s\n", err(pthread_mutex_unlock(&mx)));
	printf("mutex %p\n", (void *)&mx);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	if (!strcmp(mode, "robust-retake"))
		return robust_retake();
	if (!strcmp(mode, "robust-left"))
		return robust_left();
	if (!strcmp(mode, "recursive-hang"))
		return recursive_hang();
	if (!strcmp(mode, "not-held"))
		return not_held();
	if (!strcmp(mode, "storm"))
		return storm(argc > 2 ? atoi(argv[2]) : 20);
	if (!strcmp(mode, "ended"))
		return ended();
	if (!strcmp(mode, "bypassed"))
		return bypassed();
	if (!strcmp(mode, "refused"))
		return refused();
	fprintf(stderr, "usage: condvar robust-retake|robust-left|recursive-hang|not-held|storm N|"
			"ended|bypassed|refused\n");
	return 2;
}
