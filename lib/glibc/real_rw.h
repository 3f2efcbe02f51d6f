/* real_rw.h - glibc's read-write and spin lock functions behind ours, and
 * what we read of their locks (real_rw.c; lib/glibc/README). */
#ifndef MUTEXSTAT_REAL_RW_H
#define MUTEXSTAT_REAL_RW_H

#include <pthread.h>
#include <time.h>

/* glibc's read-write and spin lock functions behind ours (real_rw.c).
 * Until resolved, each points at a function that resolves them all, then
 * calls glibc's. */
struct ms_real_rw {
	int (*init)(pthread_rwlock_t *, const pthread_rwlockattr_t *);
	int (*destroy)(pthread_rwlock_t *);
	int (*rdlock)(pthread_rwlock_t *);
	int (*tryrdlock)(pthread_rwlock_t *);
	int (*timedrdlock)(pthread_rwlock_t *, const struct timespec *);
	int (*clockrdlock)(pthread_rwlock_t *, clockid_t, const struct timespec *);
	int (*wrlock)(pthread_rwlock_t *);
	int (*trywrlock)(pthread_rwlock_t *);
	int (*timedwrlock)(pthread_rwlock_t *, const struct timespec *);
	int (*clockwrlock)(pthread_rwlock_t *, clockid_t, const struct timespec *);
	int (*unlock)(pthread_rwlock_t *);
	int (*spin_init)(pthread_spinlock_t *, int);
	int (*spin_destroy)(pthread_spinlock_t *);
	int (*spin_lock)(pthread_spinlock_t *);
	int (*spin_trylock)(pthread_spinlock_t *);
	int (*spin_unlock)(pthread_spinlock_t *);
};
extern struct ms_real_rw ms_real_rw;

/* glibc's __readers word of an rwlock: its count of readers above three
 * flag bits.  In a write phase (PTHREAD_RWLOCK_WRPHASE) the readers it
 * counts wait for the next read phase, and none holds the lock. */
#define MS_RW_READER_SHIFT 3 /* glibc's PTHREAD_RWLOCK_READER_SHIFT */
#define MS_RW_WRPHASE 1u     /* glibc's PTHREAD_RWLOCK_WRPHASE */
/* glibc refuses a read lock (EAGAIN) before the count reaches its top bit
 * (PTHREAD_RWLOCK_READER_OVERFLOW): a word with that bit set has counted
 * below zero, after an unlock of a read lock nobody held.  No reader
 * holds it then. */
#define MS_RW_BELOW_ZERO (1u << 31)
static inline unsigned ms_rw_word_readers(unsigned readers_word)
{
	return readers_word & MS_RW_BELOW_ZERO ? 0 : readers_word >> MS_RW_READER_SHIFT;
}
static inline unsigned ms_rw_word_holding(unsigned readers_word)
{
	return readers_word & MS_RW_WRPHASE ? 0 : ms_rw_word_readers(readers_word);
}

/* Whether glibc's spin lock word says held.  On x86 glibc's lock is a
 * `lock decl` of a word that is 1 when free (0 or below held); elsewhere
 * the generic lock's word is 0 when free. */
static inline int ms_spin_held(const pthread_spinlock_t *s)
{
#if defined(__x86_64__) || defined(__i386__)
	return __atomic_load_n(s, __ATOMIC_RELAXED) <= 0;
#else
	return __atomic_load_n(s, __ATOMIC_RELAXED) != 0;
#endif
}
/* Look them up; returns how many are missing (ms_real_resolve calls it). */
int ms_real_rw_resolve(void);

#endif
