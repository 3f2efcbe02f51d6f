/* other_locks.h - what read-write and spin locks add to the lock path.
 *
 * Both are records in the same table as mutexes (their kind in the
 * record's flags: ms_lock_class), and their exclusive holds -- a write
 * lock, a spin lock -- are recorded as a mutex's (record.h's ms_acquired
 * and ms_released).  What is theirs alone is here: read holds, which many
 * threads have at once (so their numbers are locked adds), the waits and
 * relocks of both kinds, and misuse glibc does not answer. */
#ifndef MUTEXSTAT_OTHER_LOCKS_H
#define MUTEXSTAT_OTHER_LOCKS_H

#include "record/record.h"

#include <pthread.h>

/* Record r is lock `lock` of this class from now on (its first use or
 * init): its kind goes into the record's flags (extra: MS_F_STATIC). */
void ms_note_rwlock(uint32_t r, const pthread_rwlock_t *l, uint32_t extra);
void ms_note_spin(uint32_t r, uint32_t extra);

/* The first time a lock of this class is seen at this address (or the
 * address held another kind of lock, whose life ends): its record, or
 * MS_REC_UNTRACKED. */
uint32_t ms_first_use_of(struct ms_thread *t, const void *lock, unsigned lock_class,
			 uintptr_t caller);

/* A read hold begins (after glibc gave it) or ends (before glibc lets
 * go of l; returns ms_released's release number, if the release can let
 * a waiter in). */
void ms_read_acquired(struct ms_thread *t, uint32_t r, const void *lock, uintptr_t caller,
		      unsigned op, int waited, uint64_t ticks);
uint32_t ms_read_released(struct ms_thread *t, uint32_t r, const pthread_rwlock_t *l,
			  uintptr_t caller);
/* A write acquisition of record r's rwlock by thread t, counted by the
 * writer, whose clock goes past the reads' entries (before its own). */
void ms_write_counted(struct ms_thread *t, uint32_t r);
/* Whether this thread's held set has a read hold of r. */
int ms_holds_read(const struct ms_tstate *ts, uint32_t r);

/* The try of a read or write lock failed with rc: wait in glibc's call
 * for op, or answer as glibc does (a relock, a bad deadline, the reader
 * limit).  Returns glibc's answer; errno as glibc left it. */
MS_UNWOUND int ms_rwlock_slow(struct ms_thread *t, uint32_t r, pthread_rwlock_t *l, int rc,
			      uintptr_t caller, unsigned op, clockid_t clock,
			      const struct timespec *abstime);
/* glibc's rwlock call for op (a lock, not a try), untouched. */
int ms_rwlock_call(pthread_rwlock_t *l, unsigned op, clockid_t clock,
		   const struct timespec *abstime);
/* A read or write trylock answered rc (not 0). */
int ms_rwlock_try_failed(struct ms_thread *t, uint32_t r, int rc, uintptr_t caller,
			 unsigned op);
/* Whether this thread's unlock of read-write lock l (record r), which its
 * held set does not have, lets go of a read it took beyond the
 * MS_HELD_MAX followed (counted in its overflow): a reader glibc counts is
 * no other thread's we saw.  Before, such an unlock left the overflow
 * counted, and a thread that had read-locked 65 rwlocks and let go of
 * them all ended "holding" one. */
int ms_read_beyond_followed(struct ms_thread *t, uint32_t r, pthread_rwlock_t *l);
/* An unlock of a read-write lock (record r) this thread holds in neither
 * mode as far as we saw. */
int ms_rwlock_unlock_other(struct ms_thread *t, uint32_t r, pthread_rwlock_t *l,
			   uintptr_t caller);

/* The try of a spin lock failed: spin in glibc's lock. */
MS_UNWOUND int ms_spin_slow(struct ms_thread *t, uint32_t r, pthread_spinlock_t *s,
			    uintptr_t caller);
/* An unlock of a spin lock this thread does not hold (as we saw). */
int ms_spin_unlock_other(struct ms_thread *t, uint32_t r, pthread_spinlock_t *s,
			 uintptr_t caller);

/* The destroy of a read-write or spin lock that glibc let through (it
 * always does): misuse if it was held; the life ends. */
void ms_other_destroyed(struct ms_thread *t, uint32_t r, const void *lock,
			uintptr_t caller);

#endif
