/* internal.h - what every file of the library shares: branch hints, symbol
 * visibility, relaxed-atomic helpers and the glibc mutex fields we read.
 *
 * Everything in the library is hidden (-fvisibility=hidden) except the
 * interposed pthread_* entry points and the public mutexstat_* API, which
 * are marked MS_EXPORT. */
#ifndef MUTEXSTAT_INTERNAL_H
#define MUTEXSTAT_INTERNAL_H

#include <pthread.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MS_EXPORT __attribute__((visibility("default")))

/* For the entry points that are cancellation points (the condition waits),
 * and the lock path's frames over a wait that asynchronous cancellation
 * may end: pthread_cancel leaves their frame by unwinding past it (a
 * longjmp, in C), never through its epilogue.  Under AddressSanitizer
 * (configure --enable-sanitizers) the redzones of such a frame would stay
 * poisoned on the thread's stack, and ASan's own runtime trips over them
 * later (a CHECK failure in __asan_handle_no_return), so those frames are
 * not instrumented.  In a normal build this is nothing. */
#if defined(__SANITIZE_ADDRESS__)
#define MS_UNWOUND __attribute__((no_sanitize_address))
#else
#define MS_UNWOUND
#endif

/* A new thread's start, before the program's function: in a sanitized
 * build the program's ASan is in front of us (preloaded first), its
 * pthread_create hands us its own start function, and so our part runs
 * before ASan knows the thread -- on a reused stack whose shadow still
 * holds an earlier frame's redzones, where any instrumented store "over-
 * flows" (thread T-1).  There our part is not instrumented and makes no
 * libunwind block (made at the thread's first capture instead: ASan's
 * allocator takes no pthread mutex).  In a normal build this is nothing. */
#if defined(__SANITIZE_ADDRESS__)
#define MS_BEFORE_ASAN_THREAD __attribute__((no_sanitize_address))
#define MS_SANITIZED_BUILD 1
#else
#define MS_BEFORE_ASAN_THREAD
#define MS_SANITIZED_BUILD 0
#endif

/* Library code that reaches one of glibc's cancellation points -- read()
 * inside libunwind's stack walk, open() inside dlopen, a report's write()s
 * -- runs with cancellation disabled.  Otherwise a thread with a
 * cancellation pending would be cancelled inside pthread_mutex_lock or
 * pthread_mutex_unlock, which are no cancellation points for the program,
 * in the middle of our bookkeeping (tests/cancel.sh).  Re-enabling
 * does not act on a pending request (deferred cancellation, the default):
 * the program's next cancellation point does, as without the library. */
static inline int ms_cancel_off(void)
{
	int old = PTHREAD_CANCEL_DISABLE;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	return old;
}

static inline void ms_cancel_restore(int old)
{
	if (old == PTHREAD_CANCEL_ENABLE)
		pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
}
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* Relaxed atomics.  Counters that only the thread holding the mutex changes
 * are already serialised by that mutex, so they are bumped with a relaxed
 * load and store (plain instructions on x86) instead of a locked
 * read-modify-write; the report reads them with relaxed loads. */
#define LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define SERIAL_ADD(p, v) STORE((p), LOAD(p) + (v))
#define ATOMIC_ADD(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)
#define ATOMIC_SUB(p, v) __atomic_fetch_sub((p), (v), __ATOMIC_RELAXED)

static inline void atomic_max_u64(uint64_t *p, uint64_t v)
{
	uint64_t cur = LOAD(p);
	while (v > cur &&
	       !__atomic_compare_exchange_n(p, &cur, v, 1, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED))
		;
}

static inline void atomic_max_u32(uint32_t *p, uint32_t v)
{
	uint32_t cur = LOAD(p);
	while (v > cur &&
	       !__atomic_compare_exchange_n(p, &cur, v, 1, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED))
		;
}

/* glibc keeps the owner's tid, the recursion count and the kind in the
 * public layout of pthread_mutex_t (struct __pthread_mutex_s).  We read
 * them, to tell a relock from a contention and to recognise misuse
 * exactly as glibc sees it; only glibc_fast.h writes them, as glibc's own
 * lock and unlock of a normal mutex would. */
#define MS_KIND_MASK 3        /* PTHREAD_MUTEX_{NORMAL,RECURSIVE,ERRORCHECK,ADAPTIVE}_NP */
#define MS_KIND_ROBUST 16
#define MS_KIND_PI 32
#define MS_KIND_PP 64
#define MS_KIND_PSHARED 128
/* The kind a record keeps (low 10 bits of __kind) of a mutex first seen
 * destroyed: glibc's destroy sets __kind to -1, which no live mutex has
 * (every flag at once, priority-inherit and -protect together). */
#define MS_KIND_DESTROYED 0x3ff

static inline int mutex_owner(const pthread_mutex_t *m)
{
	return LOAD(&m->__data.__owner);
}

static inline int mutex_kind(const pthread_mutex_t *m)
{
	return LOAD(&m->__data.__kind);
}

/* The owner's word for mutex_owned_once(): tid in the high half (__owner),
 * 1 in the low half (__count, 0 or 1 at a mutex's outermost level). */
static inline uint64_t mutex_owned_once_word(uint32_t tid)
{
	return (uint64_t)tid << 32 | 1;
}

/* glibc says thread `word` holds m at one level only (a normal mutex, or
 * a recursive one not taken again): __count and __owner are neighbours,
 * so one load tells both. */
static inline int mutex_owned_once(const pthread_mutex_t *m, uint64_t word)
{
	_Static_assert(__builtin_offsetof(struct __pthread_mutex_s, __owner) ==
			       __builtin_offsetof(struct __pthread_mutex_s, __count) + 4,
		       "glibc's __count and __owner are neighbours");
	uint64_t v;
	__builtin_memcpy(&v, &m->__data.__count, sizeof v);
	return (v | 1) == word;
}

/* The lock word of a priority-protect mutex holds its ceiling too
 * (glibc's PTHREAD_MUTEX_PRIO_CEILING_MASK), locked or not. */
#define MS_LOCK_CEILING_MASK 0xfff80000u

static inline int mutex_locked(const pthread_mutex_t *m)
{
	unsigned lock = (unsigned)LOAD(&m->__data.__lock);
	int kind = mutex_kind(m);
	if (kind != -1 && (kind & MS_KIND_PP))
		lock &= ~MS_LOCK_CEILING_MASK;
	return lock != 0;
}

/* Whether glibc's unlock of m, which this thread holds, may let in a
 * thread that waits for it: one asleep in the kernel, which the lock word
 * shows (2, or the futex's waiters bit for a robust or priority-inheriting
 * mutex) from the moment it goes to sleep until an unlock wakes it; or,
 * of an adaptive mutex, one that spins first, which the word does not
 * show.  A thread that finds the mutex free takes it without waiting. */
static inline int mutex_unlock_lets_in(const pthread_mutex_t *m)
{
	unsigned lock = (unsigned)LOAD(&m->__data.__lock);
	int kind = mutex_kind(m);
	if ((kind & MS_KIND_MASK) == PTHREAD_MUTEX_ADAPTIVE_NP)
		return 1;
	if (kind & (MS_KIND_ROBUST | MS_KIND_PI))
		return (lock & 0x80000000u) != 0; /* FUTEX_WAITERS */
	if (kind & MS_KIND_PP)
		lock &= ~MS_LOCK_CEILING_MASK;
	return lock > 1;
}

/* A robust mutex whose owner died is locked again by the thread that got
 * EOWNERDEAD, but its owner field reads "inconsistent" until
 * pthread_mutex_consistent(); its lock word has the holder's id, which is
 * what glibc's unlock checks.  Unlocked without being made consistent, it
 * becomes "not recoverable". */
#define MS_OWNER_INCONSISTENT 0x7fffffff
#define MS_OWNER_NOTRECOVERABLE 0x7ffffffe
#define MS_LOCK_TID_MASK 0x3fffffff /* FUTEX_TID_MASK */

/* The thread holding m as glibc's unlock sees it: the lock word of a
 * robust or priority-inheriting mutex (if recursive, only while its owner
 * field reads "inconsistent", after EOWNERDEAD) -- pthread_mutex_consistent
 * writes its caller into the owner field, whoever holds the mutex. */
static inline int mutex_holder(const pthread_mutex_t *m)
{
	int owner = mutex_owner(m), kind = mutex_kind(m);
	if (kind != -1 && (kind & (MS_KIND_ROBUST | MS_KIND_PI)) &&
	    ((kind & MS_KIND_MASK) != PTHREAD_MUTEX_RECURSIVE_NP || owner == MS_OWNER_INCONSISTENT))
		return LOAD(&m->__data.__lock) & MS_LOCK_TID_MASK;
	return owner;
}

/* A priority-inherit mutex whose owner died (the kernel's FUTEX_OWNER_DIED
 * in the lock word).  glibc's trylock takes a robust one (EOWNERDEAD), but
 * its timed and clock locks first have the kernel check the deadline:
 * EINVAL for an invalid one, and the mutex left as it was.  (On a mutex
 * that is not robust -- memory a dead thread's robust list still named
 * when it was made a new mutex -- glibc's trylock stops the program on an
 * assertion where its timed lock answers.) */
static inline int mutex_pi_owner_died(const pthread_mutex_t *m)
{
	int kind = mutex_kind(m);
	return kind != -1 && (kind & MS_KIND_PI) &&
	       (LOAD(&m->__data.__lock) & 0x40000000);
}

/* glibc's unlock refuses (EPERM) a thread that is not the owner for these
 * kinds; normal and adaptive mutexes (priority-protect or not) it lets go
 * whoever asks. */
static inline int mutex_unlock_checks_owner(const pthread_mutex_t *m)
{
	int kind = mutex_kind(m);
	int type = kind & MS_KIND_MASK;
	return type == PTHREAD_MUTEX_ERRORCHECK || type == PTHREAD_MUTEX_RECURSIVE ||
	       (kind & (MS_KIND_ROBUST | MS_KIND_PI));
}

/* For the hot path's helpers: inline even where gcc would not. */
#define MS_HOT static inline __attribute__((always_inline))

/* The process ends now, as glibc's _exit ends it: the library interposes
 * _exit (wrap/interpose_process.c), and its own ends must not go there. */
static inline __attribute__((noreturn)) void ms_exit_group(int status)
{
	for (;;)
		syscall(SYS_exit_group, status);
}

#endif
