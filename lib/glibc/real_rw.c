/* real_rw.c - glibc's read-write and spin lock functions behind ours.
 *
 * Found with dlsym(RTLD_NEXT) at start-up (ms_real_resolve calls
 * ms_real_rw_resolve).  A call that comes before -- from a constructor
 * that runs before ours, or while the loader resolves -- lands on a stub
 * that looks them all up first.  No program calls a function its glibc
 * lacks, so one still missing answers ENOSYS and is never reached. */
#define _GNU_SOURCE
#include "glibc/real.h"
#include "glibc/real_rw.h"
#include "base/internal.h"

#include <errno.h>

/* For each function: the stub (resolve, then call what was found, unless
 * that is the stub still) and its lookup. */
#define RW_FUNCTIONS(X)                                                           \
	X(init, "pthread_rwlock_init", (pthread_rwlock_t * l, const pthread_rwlockattr_t *a), (l, a)) \
	X(destroy, "pthread_rwlock_destroy", (pthread_rwlock_t * l), (l))                \
	X(rdlock, "pthread_rwlock_rdlock", (pthread_rwlock_t * l), (l))                  \
	X(tryrdlock, "pthread_rwlock_tryrdlock", (pthread_rwlock_t * l), (l))            \
	X(timedrdlock, "pthread_rwlock_timedrdlock",                                     \
	  (pthread_rwlock_t * l, const struct timespec *t), (l, t))                      \
	X(clockrdlock, "pthread_rwlock_clockrdlock",                                     \
	  (pthread_rwlock_t * l, clockid_t c, const struct timespec *t), (l, c, t))      \
	X(wrlock, "pthread_rwlock_wrlock", (pthread_rwlock_t * l), (l))                  \
	X(trywrlock, "pthread_rwlock_trywrlock", (pthread_rwlock_t * l), (l))            \
	X(timedwrlock, "pthread_rwlock_timedwrlock",                                     \
	  (pthread_rwlock_t * l, const struct timespec *t), (l, t))                      \
	X(clockwrlock, "pthread_rwlock_clockwrlock",                                     \
	  (pthread_rwlock_t * l, clockid_t c, const struct timespec *t), (l, c, t))      \
	X(unlock, "pthread_rwlock_unlock", (pthread_rwlock_t * l), (l))                  \
	X(spin_init, "pthread_spin_init", (pthread_spinlock_t * l, int p), (l, p))       \
	X(spin_destroy, "pthread_spin_destroy", (pthread_spinlock_t * l), (l))           \
	X(spin_lock, "pthread_spin_lock", (pthread_spinlock_t * l), (l))                 \
	X(spin_trylock, "pthread_spin_trylock", (pthread_spinlock_t * l), (l))           \
	X(spin_unlock, "pthread_spin_unlock", (pthread_spinlock_t * l), (l))

#define STUB(field, name, params, args)                          \
	static int stub_##field params                           \
	{                                                        \
		ms_real_rw_resolve();                            \
		if (ms_real_rw.field == stub_##field)            \
			return ENOSYS;                           \
		return ms_real_rw.field args;                    \
	}
RW_FUNCTIONS(STUB)

#define STUB_ENTRY(field, name, params, args) .field = stub_##field,
struct ms_real_rw ms_real_rw = { RW_FUNCTIONS(STUB_ENTRY) };

/* None is needed for the mutexes: a glibc without one (the clock locks
 * came in 2.30) has no program calling it, so none counts as missing. */
int ms_real_rw_resolve(void)
{
#define LOOK_UP(field, name, params, args)                                      \
	do {                                                                    \
		void *p_ = ms_real_next(name, NULL);                            \
		if (p_)                                                         \
			__atomic_store_n((void **)&ms_real_rw.field, p_, __ATOMIC_RELEASE); \
	} while (0);
	RW_FUNCTIONS(LOOK_UP)
#undef LOOK_UP
	return 0;
}
