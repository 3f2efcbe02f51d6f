/* real.h - glibc's own functions, behind the ones we interpose. */
#ifndef MUTEXSTAT_REAL_H
#define MUTEXSTAT_REAL_H

#include "glibc/glibc_fast.h"

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

struct ms_real {
	int (*mutex_lock)(pthread_mutex_t *);
	int (*mutex_trylock)(pthread_mutex_t *);
	int (*mutex_unlock)(pthread_mutex_t *);
	int (*mutex_timedlock)(pthread_mutex_t *, const struct timespec *);
	int (*mutex_clocklock)(pthread_mutex_t *, clockid_t,
			       const struct timespec *);
	int (*mutex_init)(pthread_mutex_t *, const pthread_mutexattr_t *);
	int (*mutex_destroy)(pthread_mutex_t *);
	int (*cond_wait)(pthread_cond_t *, pthread_mutex_t *);
	int (*cond_timedwait)(pthread_cond_t *, pthread_mutex_t *,
			      const struct timespec *);
	int (*cond_clockwait)(pthread_cond_t *, pthread_mutex_t *, clockid_t,
			      const struct timespec *);
	int (*cond_signal)(pthread_cond_t *);
	int (*cond_broadcast)(pthread_cond_t *);
	int (*mutex_consistent)(pthread_mutex_t *);
	int (*thread_create)(pthread_t *, const pthread_attr_t *,
			     void *(*)(void *), void *);
	int (*cancel_type)(int, int *); /* pthread_setcanceltype */
	int (*thread_join)(pthread_t, void **);
	int (*thread_timedjoin)(pthread_t, void **, const struct timespec *);
	int (*thread_clockjoin)(pthread_t, void **, clockid_t, const struct timespec *);
	pid_t (*fork_bare)(void); /* _Fork (glibc 2.34), or ENOSYS */
	/* _exit and _Exit behind us (glibc's, or a sanitizer's interceptor
	 * that checks at the end); NULL before start-up: the system call */
	void (*exit_now)(int);
	void (*exit)(int);
	void (*exit_now_c99)(int);
	/* The descriptor calls behind ours (interpose_process.c): the next
	 * library's (an fd tracker preloaded after us) or glibc's; NULL
	 * before start-up (then glibc's by its other names, or the system
	 * call) */
	int (*close)(int);
	int (*dup2)(int, int);
	int (*dup3)(int, int, int);
	int (*close_range)(unsigned, unsigned, int);
	void (*closefrom)(int);
	/* The first step of the program's lock, timedlock and clocklock:
	 * glibc's own trylock (0, or EBUSY and the slow path waits in the
	 * call the program made).  When another library behind us wraps
	 * that call, it must see it once per call of the program, and
	 * never a trylock the program did not make: then this is a look at
	 * the mutex -- EBUSY if it is held, else MS_TRY_DIRECT (make the
	 * program's call) -- or, for the lock, that look and then the next
	 * library's lock itself. */
	int (*lock_try)(pthread_mutex_t *);
	int (*timedlock_try)(pthread_mutex_t *);
	int (*clocklock_try)(pthread_mutex_t *);
};

/* C11's mtx_* and cnd_*wait behind ours.  glibc's are answered by our
 * own entry points (interpose.c), as the pthread calls glibc makes; but a
 * library of the program may define functions of those names itself (a
 * C11 threads shim such as tinycthread, for a C library without them),
 * on mutexes that are no pthread mutex: then `other` is set and every
 * call goes to that library's function, untouched. */
struct ms_c11_next {
	int checked; /* resolved (ms_real_resolve, or the first C11 call) */
	int other;
	int (*init)(void *, int);
	int (*lock)(void *);
	int (*trylock)(void *);
	int (*timedlock)(void *, const struct timespec *);
	int (*unlock)(void *);
	void (*destroy)(void *);
	int (*cond_wait)(void *, void *);
	int (*cond_timedwait)(void *, void *, const struct timespec *);
	int (*cond_signal)(void *);
	int (*cond_broadcast)(void *);
};
extern struct ms_c11_next ms_c11_next;
/* Whether the C11 calls go to another library (ms_c11_next). */
int ms_c11_other(void);

/* What a *_try answers for "not held: make the program's call now". */
#define MS_TRY_DIRECT (-1)

/* Until ms_real_resolve() has run, the mutex entries point at glibc's
 * exported __pthread_mutex_* aliases, which need no dlsym: so a mutex call
 * that arrives while dlsym itself is running (say, from an allocator that
 * locks inside malloc) still works. */
extern struct ms_real ms_real;

/* Look the functions up with dlsym(RTLD_NEXT) -- dlvsym for the condition
 * variable calls, whose default dlsym answer on x86-64 is the old
 * GLIBC_2.2.5 version.  Returns 0, or -1 if a function is missing. */
int ms_real_resolve(void);

/* Whether fn is code of glibc's libc (the loaded object that has glibc's
 * pthread_mutex_lock, found by libc's soname): 1 yes, 0 no, -1 not known
 * (libc not found, or fn in no loaded object).  It walks the loaded
 * objects (dl_iterate_phdr), so not in a fork child (loader_lock.h). */
int ms_glibc_owns(const void *fn);

/* dlvsym(RTLD_NEXT, name, version) if version, else (or if that fails)
 * dlsym(RTLD_NEXT, name); errno kept. */
void *ms_real_next(const char *name, const char *version);

/* glibc's functions behind ours (ms_real) and glibc_fast.h's steps, for
 * the self-test (glibc_fast.h). */
void ms_fast_pair_ours(struct ms_fast_pair *p);

#endif
