/* count_contended.c - the bare count of contended acquisitions, for
 * bench/run's hot rows.
 *
 * A profiler that lengthens holds makes threads find a hot mutex taken
 * more often, and so makes the contention it reports.  To tell, the bench
 * compares the fraction of contended acquisitions with the library (its
 * own exact count, from its report) with the fraction without it.  Bare
 * glibc counts nothing, so this pass-through interposer counts it the way
 * the library does: pthread_mutex_lock tries first, and an acquisition is
 * contended when the try finds the mutex taken and the lock has to wait.
 * That try is what the library does too, so the two counts are of one
 * thing; it costs a call, and its runs are not the timed ones.
 *
 * At exit it prints "count_contended: contended=C" on stderr.  Only the
 * plain lock of a mutex and of a spin lock is counted: the hot rows use
 * nothing else. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

static int (*real_lock)(pthread_mutex_t *);
static int (*real_trylock)(pthread_mutex_t *);
static int (*real_spin_lock)(pthread_spinlock_t *);
static int (*real_spin_trylock)(pthread_spinlock_t *);
/* Counted per thread, outside the hold, and summed as each thread ends:
 * a shared counter would be one more line moving between the CPUs. */
static __thread unsigned long contended_here;
static unsigned long contended;
static pthread_key_t at_thread_exit;

static void add_thread(void *p)
{
	__atomic_fetch_add(&contended, *(unsigned long *)p, __ATOMIC_RELAXED);
}

__attribute__((constructor)) static void find_glibc(void)
{
	real_lock = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_mutex_lock");
	real_trylock = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_mutex_trylock");
	real_spin_lock = (int (*)(pthread_spinlock_t *))dlsym(RTLD_NEXT, "pthread_spin_lock");
	real_spin_trylock =
		(int (*)(pthread_spinlock_t *))dlsym(RTLD_NEXT, "pthread_spin_trylock");
	pthread_key_create(&at_thread_exit, add_thread);
}

/* A lock found taken: counted in this thread, whose count its exit adds. */
static void count_one(void)
{
	if (!contended_here++)
		pthread_setspecific(at_thread_exit, &contended_here);
}

int pthread_mutex_lock(pthread_mutex_t *m)
{
	int rc = real_trylock(m);
	if (rc != EBUSY)
		return rc;
	count_one();
	return real_lock(m);
}

int pthread_spin_lock(pthread_spinlock_t *s)
{
	int rc = real_spin_trylock(s);
	if (rc != EBUSY)
		return rc;
	count_one();
	return real_spin_lock(s);
}

__attribute__((destructor)) static void tell(void)
{
	/* the main thread's own, which no key destructor adds */
	if (pthread_getspecific(at_thread_exit))
		add_thread(&contended_here);
	fprintf(stderr, "count_contended: contended=%lu\n",
		__atomic_load_n(&contended, __ATOMIC_RELAXED));
}
