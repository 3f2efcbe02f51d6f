/* wrap_lock.c - a small library of the kind other tools preload: it wraps
 * pthread_mutex_lock, trylock, timedlock, clocklock and unlock, passes each
 * call on with dlsym(RTLD_NEXT), and counts the calls made on the mutexes
 * the program asks it to watch (wrap_watch).  At exit it prints the counts
 * on stderr.  tests/other_preloads.sh preloads it beside the library, in
 * front of it and behind it: each wrapped call of the program must reach it
 * exactly once, and no call the program did not make. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static char *lo, *hi; /* the watched mutexes: [lo, hi) */
static long n_lock, n_trylock, n_timedlock, n_clocklock, n_unlock;

void wrap_watch(void *from, void *to)
{
	lo = from;
	hi = to;
}

static void count(const pthread_mutex_t *m, long *n)
{
	if ((const char *)m >= lo && (const char *)m < hi)
		__atomic_add_fetch(n, 1, __ATOMIC_RELAXED);
}

/* The next library's function of the same name (glibc's, or ours). */
#define NEXT(fn)                                                        \
	static __typeof__(fn) *next_;                                   \
	if (!next_)                                                     \
		next_ = (__typeof__(fn) *)dlsym(RTLD_NEXT, #fn)

int pthread_mutex_lock(pthread_mutex_t *m)
{
	NEXT(pthread_mutex_lock);
	count(m, &n_lock);
	return next_(m);
}

int pthread_mutex_trylock(pthread_mutex_t *m)
{
	NEXT(pthread_mutex_trylock);
	count(m, &n_trylock);
	return next_(m);
}

int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *ts)
{
	NEXT(pthread_mutex_timedlock);
	count(m, &n_timedlock);
	return next_(m, ts);
}

int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t c, const struct timespec *ts)
{
	NEXT(pthread_mutex_clocklock);
	count(m, &n_clocklock);
	return next_(m, c, ts);
}

int pthread_mutex_unlock(pthread_mutex_t *m)
{
	NEXT(pthread_mutex_unlock);
	count(m, &n_unlock);
	return next_(m);
}

__attribute__((destructor)) static void print_counts(void)
{
	char buf[200];
	int n = snprintf(buf, sizeof buf,
			 "wrap_lock: lock %ld trylock %ld timedlock %ld clocklock %ld unlock %ld\n",
			 n_lock, n_trylock, n_timedlock, n_clocklock, n_unlock);
	if (n > 0 && write(2, buf, (size_t)n) < 0)
		return;
}
