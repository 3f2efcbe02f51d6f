/* real.c - finding glibc's functions behind ours; see real.h. */
#define _GNU_SOURCE
#include "glibc/real.h"
#include "glibc/glibc_fast.h"
#include "base/environ.h"
#include "base/internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <gnu/lib-names.h>
#include <link.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

/* glibc's __pthread_mutex_* aliases, which we never interpose.  Since
 * glibc 2.34 they are compatibility symbols, so they are named with their
 * version explicitly. */
#if defined(__x86_64__)
#define GLIBC_BASE "GLIBC_2.2.5"
#define BOOT(ret, name, params)                                               \
	extern ret boot_##name params;                                        \
	__asm__(".symver boot_" #name ", __pthread_" #name "@" GLIBC_BASE)
BOOT(int, mutex_lock, (pthread_mutex_t *));
BOOT(int, mutex_trylock, (pthread_mutex_t *));
BOOT(int, mutex_unlock, (pthread_mutex_t *));
BOOT(int, mutex_init, (pthread_mutex_t *, const pthread_mutexattr_t *));
BOOT(int, mutex_destroy, (pthread_mutex_t *));
#else
#define boot_mutex_lock __pthread_mutex_lock
#define boot_mutex_trylock __pthread_mutex_trylock
#define boot_mutex_unlock __pthread_mutex_unlock
#define boot_mutex_init __pthread_mutex_init
#define boot_mutex_destroy __pthread_mutex_destroy
extern int __pthread_mutex_lock(pthread_mutex_t *);
extern int __pthread_mutex_trylock(pthread_mutex_t *);
extern int __pthread_mutex_unlock(pthread_mutex_t *);
extern int __pthread_mutex_init(pthread_mutex_t *, const pthread_mutexattr_t *);
extern int __pthread_mutex_destroy(pthread_mutex_t *);
#endif


static int missing_timedlock(pthread_mutex_t *m, const struct timespec *ts);
static int missing_consistent(pthread_mutex_t *m);
static int missing_thread_create(pthread_t *th, const pthread_attr_t *attr,
				 void *(*fn)(void *), void *arg);
static int missing_clocklock(pthread_mutex_t *m, clockid_t c,
			     const struct timespec *ts);
static int missing_cancel_type(int type, int *old);
static int missing_join(pthread_t th, void **ret);
static int missing_timedjoin(pthread_t th, void **ret, const struct timespec *ts);
static int missing_clockjoin(pthread_t th, void **ret, clockid_t c,
			     const struct timespec *ts);
static int missing_thread_create(pthread_t *th, const pthread_attr_t *attr,
				 void *(*fn)(void *), void *arg)
{
	ms_real_resolve();
	if (ms_real.thread_create == missing_thread_create)
		return ENOSYS;
	return ms_real.thread_create(th, attr, fn, arg);
}

/* _Fork before start-up, or on a glibc without it (then no program
 * calls it: a glibc that has it is what it links against). */
static pid_t missing_fork(void)
{
	void *p = ms_real_next("_Fork", NULL);
	if (!p) {
		errno = ENOSYS;
		return -1;
	}
	__atomic_store_n((void **)&ms_real.fork_bare, p, __ATOMIC_RELEASE);
	return ms_real.fork_bare();
}

static int missing_cond_wait(pthread_cond_t *c, pthread_mutex_t *m);
static int missing_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
				  const struct timespec *ts);
static int missing_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m,
				  clockid_t clock, const struct timespec *ts);
static int missing_cond_signal(pthread_cond_t *c);
static int missing_cond_broadcast(pthread_cond_t *c);

struct ms_real ms_real = {
	.mutex_lock = boot_mutex_lock,
	.mutex_trylock = boot_mutex_trylock,
	.mutex_unlock = boot_mutex_unlock,
	.mutex_timedlock = missing_timedlock,
	.mutex_clocklock = missing_clocklock,
	.mutex_init = boot_mutex_init,
	.mutex_destroy = boot_mutex_destroy,
	.cond_wait = missing_cond_wait,
	.cond_timedwait = missing_cond_timedwait,
	.cond_clockwait = missing_cond_clockwait,
	.cond_signal = missing_cond_signal,
	.cond_broadcast = missing_cond_broadcast,
	.mutex_consistent = missing_consistent,
	.thread_create = missing_thread_create,
	.cancel_type = missing_cancel_type,
	.thread_join = missing_join,
	.thread_timedjoin = missing_timedjoin,
	.thread_clockjoin = missing_clockjoin,
	.fork_bare = missing_fork,
	.lock_try = boot_mutex_trylock,
	.timedlock_try = boot_mutex_trylock,
	.clocklock_try = boot_mutex_trylock,
};

#if defined(__x86_64__)
#define COND_VERSION "GLIBC_2.3.2"
#elif defined(__i386__)
#define COND_VERSION "GLIBC_2.3.2"
#else
#define COND_VERSION NULL
#endif

void *ms_real_next(const char *name, const char *version)
{
	void *p = NULL;
	int saved = errno;
	if (version)
		p = dlvsym(RTLD_NEXT, name, version);
	if (!p)
		p = dlsym(RTLD_NEXT, name);
	errno = saved;
	return p;
}

#define RESOLVE(field, name, version)                                    \
	do {                                                             \
		void *p_ = ms_real_next(name, version);                          \
		if (p_)                                                  \
			__atomic_store_n((void **)&ms_real.field, p_,    \
					 __ATOMIC_RELEASE);              \
		else                                                     \
			missing++;                                       \
	} while (0)

/* ---- another library behind us wrapping the lock calls -------------- */

/* m is held as glibc's trylock would find it (EBUSY): the slow path then
 * counts a wait and makes the program's call.  A recursive mutex this
 * thread holds is not: glibc takes it again at once. */
static int held_for_us(pthread_mutex_t *m)
{
	if (!mutex_locked(m))
		return 0;
	int kind = mutex_kind(m);
	/* a robust or priority-inherit mutex's lock word names its owner: with
	 * none (it died: only FUTEX_OWNER_DIED, FUTEX_WAITERS), glibc's lock
	 * answers EOWNERDEAD at once, as its trylock would -- no wait */
	if (kind != -1 && (kind & (MS_KIND_ROBUST | MS_KIND_PI)) &&
	    !((unsigned)LOAD(&m->__data.__lock) & FUTEX_TID_MASK))
		return 0;
	if (kind == -1 || (kind & MS_KIND_MASK) != PTHREAD_MUTEX_RECURSIVE)
		return 1;
	/* a system call, not our thread record: this layer sits below it,
	 * and only a recursive mutex held under another interposer comes here */
	return mutex_holder(m) != (int)syscall(SYS_gettid);
}

/* lock_try when the next pthread_mutex_lock is not glibc's: a look, then
 * that lock (which may still wait, if another thread took the mutex
 * since: that wait is not counted). */
static int foreign_lock_try(pthread_mutex_t *m)
{
	return held_for_us(m) ? EBUSY : ms_real.mutex_lock(m);
}

/* timedlock_try and clocklock_try then: the look alone. */
static int foreign_look(pthread_mutex_t *m)
{
	return held_for_us(m) ? EBUSY : MS_TRY_DIRECT;
}

/* Which loaded objects hold two addresses: the index of each in
 * dl_iterate_phdr's order, or -1.  An address is an object's if one of
 * its PT_LOAD segments holds it, as for dladdr -- whose search of the
 * object's symbols for a name, which we do not need, cost a million
 * instructions at each start-up. */
struct owners {
	uintptr_t fn, own;
	int fn_obj, own_obj, obj;
};

static int owners_of(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct owners *o = arg;
	(void)size;
	for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
		if (o->fn >= lo && o->fn < hi)
			o->fn_obj = o->obj;
		if (o->own >= lo && o->own < hi)
			o->own_obj = o->obj;
	}
	o->obj++;
	return o->fn_obj >= 0 && o->own_obj >= 0; /* both found: stop */
}

/* glibc's pthread_mutex_lock, found by libc's soname (once: libc stays). */
static void *glibc_lock_fn(void)
{
	static void *own;
	void *p = __atomic_load_n(&own, __ATOMIC_ACQUIRE);
	if (!p) {
		void *libc = dlopen(LIBC_SO, RTLD_LAZY | RTLD_NOLOAD);
		if (!libc)
			return NULL;
		p = dlsym(libc, "pthread_mutex_lock");
		dlclose(libc);
		__atomic_store_n(&own, p, __ATOMIC_RELEASE);
	}
	return p;
}

int ms_glibc_owns(const void *fn)
{
	struct owners o = { (uintptr_t)fn, (uintptr_t)glibc_lock_fn(), -1, -1, 0 };
	if (!o.own)
		return -1;
	dl_iterate_phdr(owners_of, &o);
	if (o.fn_obj < 0 || o.own_obj < 0)
		return -1;
	return o.fn_obj == o.own_obj;
}

/* fn is glibc's own function (or nothing tells otherwise).  libc is
 * found by its soname, not by a function of it we call: a library in
 * front of us can wrap those too (ASan's runtime wraps __pthread_mutex_lock,
 * and took every lock here for another library's). */
static int in_glibc(void *fn)
{
	return ms_glibc_owns(fn) != 0;
}

/* glibc elides locks (the tunable glibc.elision.enable, on a CPU with
 * transactional memory): its first lock of a kind-0 mutex then marks it
 * for elision, which glibc_fast.h's steps must not skip.  Asked of the
 * functions behind us once they are known to be glibc's: the boot_*
 * aliases can be a sanitizer's wrappers, not ready this early. */
static int glibc_elides(void)
{
	pthread_mutex_t probe = PTHREAD_MUTEX_INITIALIZER;
	ms_real.mutex_lock(&probe);
	ms_real.mutex_unlock(&probe);
	return LOAD(&probe.__data.__kind) != 0;
}

/* glibc_fast.h's steps have no address of their own (always inline). */
static int fast_lock_step(pthread_mutex_t *m, uint32_t tid)
{
	return fast_lock(m, tid);
}

static void fast_unlock_step(pthread_mutex_t *m)
{
	fast_unlock(m);
}

void ms_fast_pair_ours(struct ms_fast_pair *p)
{
	p->lock = ms_real.mutex_lock;
	p->trylock = ms_real.mutex_trylock;
	p->unlock = ms_real.mutex_unlock;
	p->fast_lock = fast_lock_step;
	p->fast_unlock = fast_unlock_step;
}

/* valgrind's helgrind or drd watch the program's locking through glibc's
 * lock functions (they redirect them): glibc_fast.h's steps, which skip
 * those, would leave them blind and make every critical section a race.
 * Their preloaded part is in LD_PRELOAD. */
static int lock_checker_watches(void)
{
	const char *preload = ms_getenv("LD_PRELOAD");
	return preload && (strstr(preload, "vgpreload_helgrind") ||
			   strstr(preload, "vgpreload_drd"));
}

/* The program's lock tries glibc's own trylock first -- never the next
 * library's, so a wrapper of trylock behind us sees only the program's
 * trylocks -- unless the call it made is wrapped. */
static void choose_tries(void)
{
	int saved = errno;
	__atomic_store_n(&ms_real.lock_try,
			 in_glibc((void *)ms_real.mutex_lock) ? boot_mutex_trylock
							       : foreign_lock_try,
			 __ATOMIC_RELEASE);
	__atomic_store_n(&ms_real.timedlock_try,
			 in_glibc((void *)ms_real.mutex_timedlock) ? boot_mutex_trylock
								    : foreign_look,
			 __ATOMIC_RELEASE);
	__atomic_store_n(&ms_real.clocklock_try,
			 in_glibc((void *)ms_real.mutex_clocklock) ? boot_mutex_trylock
								    : foreign_look,
			 __ATOMIC_RELEASE);
	/* and last, glibc_fast.h's copy of glibc's private protocol still
	 * leaves what this glibc leaves */
	struct ms_fast_pair ours;
	ms_fast_pair_ours(&ours);
	int fast = in_glibc((void *)ms_real.mutex_lock) &&
		   in_glibc((void *)ms_real.mutex_unlock) && !glibc_elides() &&
		   !lock_checker_watches();
	if (fast) {
		ms_fast_verdict = ms_fast_compare(&ours);
		fast = ms_fast_verdict == MS_FAST_AGREE;
	}
	__atomic_store_n(&ms_fast_off, !fast, __ATOMIC_RELEASE);
	errno = saved;
}

struct ms_c11_next ms_c11_next;

/* The C11 functions behind ours: another library's if mtx_lock is not
 * glibc's (each of the others is then that library's too, or glibc's if
 * it lacks one: what the program's call would find without us). */
static void resolve_c11(void)
{
	void *lock = ms_real_next("mtx_lock", NULL);
	if (lock && !in_glibc(lock)) {
		struct ms_c11_next *n = &ms_c11_next;
		n->lock = (int (*)(void *))lock;
		n->init = (int (*)(void *, int))ms_real_next("mtx_init", NULL);
		n->trylock = (int (*)(void *))ms_real_next("mtx_trylock", NULL);
		n->timedlock = (int (*)(void *, const struct timespec *))ms_real_next("mtx_timedlock", NULL);
		n->unlock = (int (*)(void *))ms_real_next("mtx_unlock", NULL);
		n->destroy = (void (*)(void *))ms_real_next("mtx_destroy", NULL);
		n->cond_wait = (int (*)(void *, void *))ms_real_next("cnd_wait", NULL);
		n->cond_timedwait = (int (*)(void *, void *, const struct timespec *))ms_real_next("cnd_timedwait", NULL);
		n->cond_signal = (int (*)(void *))ms_real_next("cnd_signal", NULL);
		n->cond_broadcast = (int (*)(void *))ms_real_next("cnd_broadcast", NULL);
		__atomic_store_n(&n->other, 1, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&ms_c11_next.checked, 1, __ATOMIC_RELEASE);
}

int ms_c11_other(void)
{
	if (unlikely(!__atomic_load_n(&ms_c11_next.checked, __ATOMIC_ACQUIRE)))
		resolve_c11(); /* a C11 call before start-up: look now */
	return __atomic_load_n(&ms_c11_next.other, __ATOMIC_ACQUIRE);
}

int ms_real_resolve(void)
{
	int missing = 0;
	RESOLVE(mutex_lock, "pthread_mutex_lock", NULL);
	RESOLVE(mutex_trylock, "pthread_mutex_trylock", NULL);
	RESOLVE(mutex_unlock, "pthread_mutex_unlock", NULL);
	RESOLVE(mutex_timedlock, "pthread_mutex_timedlock", NULL);
	RESOLVE(mutex_clocklock, "pthread_mutex_clocklock", NULL);
	RESOLVE(mutex_init, "pthread_mutex_init", NULL);
	RESOLVE(mutex_destroy, "pthread_mutex_destroy", NULL);
	RESOLVE(cond_wait, "pthread_cond_wait", COND_VERSION);
	RESOLVE(cond_timedwait, "pthread_cond_timedwait", COND_VERSION);
	RESOLVE(cond_clockwait, "pthread_cond_clockwait", NULL);
	RESOLVE(cond_signal, "pthread_cond_signal", COND_VERSION);
	RESOLVE(cond_broadcast, "pthread_cond_broadcast", COND_VERSION);
	RESOLVE(mutex_consistent, "pthread_mutex_consistent", NULL);
	RESOLVE(thread_create, "pthread_create", NULL);
	RESOLVE(cancel_type, "pthread_setcanceltype", NULL);
	/* not missing without them: no program calls what its glibc lacks */
	void *join = ms_real_next("pthread_join", NULL);
	void *timedjoin = ms_real_next("pthread_timedjoin_np", NULL);
	void *clockjoin = ms_real_next("pthread_clockjoin_np", NULL);
	if (join)
		__atomic_store_n((void **)&ms_real.thread_join, join, __ATOMIC_RELEASE);
	if (timedjoin)
		__atomic_store_n((void **)&ms_real.thread_timedjoin, timedjoin, __ATOMIC_RELEASE);
	if (clockjoin)
		__atomic_store_n((void **)&ms_real.thread_clockjoin, clockjoin, __ATOMIC_RELEASE);
	__atomic_store_n((void **)&ms_real.exit_now, ms_real_next("_exit", NULL),
			 __ATOMIC_RELEASE);
	__atomic_store_n((void **)&ms_real.exit, ms_real_next("exit", NULL), __ATOMIC_RELEASE);
	__atomic_store_n((void **)&ms_real.exit_now_c99, ms_real_next("_Exit", NULL),
			 __ATOMIC_RELEASE);
	__atomic_store_n((void **)&ms_real.close, ms_real_next("close", NULL), __ATOMIC_RELEASE);
	__atomic_store_n((void **)&ms_real.dup2, ms_real_next("dup2", NULL), __ATOMIC_RELEASE);
	__atomic_store_n((void **)&ms_real.dup3, ms_real_next("dup3", NULL), __ATOMIC_RELEASE);
	__atomic_store_n((void **)&ms_real.close_range, ms_real_next("close_range", NULL),
			 __ATOMIC_RELEASE);
	__atomic_store_n((void **)&ms_real.closefrom, ms_real_next("closefrom", NULL),
			 __ATOMIC_RELEASE);
	void *bare = ms_real_next("_Fork", NULL); /* not missing without it */
	if (bare)
		__atomic_store_n((void **)&ms_real.fork_bare, bare, __ATOMIC_RELEASE);
	choose_tries();
	resolve_c11();
	return missing ? -1 : 0;
}

/* The functions without an always-available alias are resolved on first
 * use if a call comes before ms_real_resolve(). */
static int missing_timedlock(pthread_mutex_t *m, const struct timespec *ts)
{
	ms_real_resolve();
	if (ms_real.mutex_timedlock == missing_timedlock)
		return ENOSYS;
	return ms_real.mutex_timedlock(m, ts);
}

static int missing_clocklock(pthread_mutex_t *m, clockid_t c,
			     const struct timespec *ts)
{
	ms_real_resolve();
	if (ms_real.mutex_clocklock == missing_clocklock)
		return ENOSYS;
	return ms_real.mutex_clocklock(m, c, ts);
}

static int missing_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	ms_real_resolve();
	if (ms_real.cond_wait == missing_cond_wait)
		return ENOSYS;
	return ms_real.cond_wait(c, m);
}

static int missing_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
				  const struct timespec *ts)
{
	ms_real_resolve();
	if (ms_real.cond_timedwait == missing_cond_timedwait)
		return ENOSYS;
	return ms_real.cond_timedwait(c, m, ts);
}

static int missing_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m,
				  clockid_t clock, const struct timespec *ts)
{
	ms_real_resolve();
	if (ms_real.cond_clockwait == missing_cond_clockwait)
		return ENOSYS;
	return ms_real.cond_clockwait(c, m, clock, ts);
}

static int missing_cond_signal(pthread_cond_t *c)
{
	ms_real_resolve();
	if (ms_real.cond_signal == missing_cond_signal)
		return ENOSYS;
	return ms_real.cond_signal(c);
}

static int missing_cond_broadcast(pthread_cond_t *c)
{
	ms_real_resolve();
	if (ms_real.cond_broadcast == missing_cond_broadcast)
		return ENOSYS;
	return ms_real.cond_broadcast(c);
}

static int missing_join(pthread_t th, void **ret)
{
	ms_real_resolve();
	if (ms_real.thread_join == missing_join)
		return ENOSYS;
	return ms_real.thread_join(th, ret);
}

static int missing_timedjoin(pthread_t th, void **ret, const struct timespec *ts)
{
	ms_real_resolve();
	if (ms_real.thread_timedjoin == missing_timedjoin)
		return ENOSYS;
	return ms_real.thread_timedjoin(th, ret, ts);
}

static int missing_clockjoin(pthread_t th, void **ret, clockid_t c,
			     const struct timespec *ts)
{
	ms_real_resolve();
	if (ms_real.thread_clockjoin == missing_clockjoin)
		return ENOSYS;
	return ms_real.thread_clockjoin(th, ret, c, ts);
}

static int missing_cancel_type(int type, int *old)
{
	ms_real_resolve();
	if (ms_real.cancel_type == missing_cancel_type)
		return ENOSYS;
	return ms_real.cancel_type(type, old);
}

static int missing_consistent(pthread_mutex_t *m)
{
	ms_real_resolve();
	if (ms_real.mutex_consistent == missing_consistent)
		return ENOSYS;
	return ms_real.mutex_consistent(m);
}

