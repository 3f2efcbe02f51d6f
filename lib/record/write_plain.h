/* write_plain.h - a write hold's plain case, inline on the rwlock paths.
 *
 * A write lock of an rwlock is recorded as a mutex's lock (record.h's
 * ms_acquired), after ms_write_counted(), and its unlock as a mutex's
 * (ms_released) with ms_write_released().  Its plain case -- taken by a
 * thread that holds nothing, of a lock locked before, the hold not one of
 * the sampled timed ones; let go of from the top of the held set with no
 * waiter whose stack is sampled -- is the mutex's plain case
 * (ms_acquired_plain, ms_released_plain), inline in the entry points
 * (interpose_rw.c), as a spin lock's and a read's (read_plain.h) are.
 * Anything else takes those functions in full. */
#ifndef MUTEXSTAT_WRITE_PLAIN_H
#define MUTEXSTAT_WRITE_PLAIN_H

#include "record/read_plain.h"

/* Whether a write lock of a record whose flags are these, by a thread
 * whose held set is ts's, may be the plain case, as far as can be told
 * before the try: a read-write lock, the thread holding nothing. */
MS_HOT int ms_write_plain_before(const struct ms_tstate *ts, uint32_t flags)
{
	return (flags & MS_F_CLASS) == (uint32_t)MS_CLASS_RWLOCK << MS_F_CLASS_SHIFT &&
	       !ts->nheld;
}

/* Thread t got a write lock of record r (rec) from glibc's try, the plain
 * case before it (ms_write_plain_before), and ms_write_counted() has
 * counted it.  Returns 0 once it is recorded as ms_acquired() would: an
 * owner change counted if another thread had it last, an order past the
 * lock's newest entry (readers write entries without becoming its owner);
 * 1 before anything is written if the life is locked for the first time,
 * the record says t holds it already, or this hold is one to time:
 * ms_acquired() in full then. */
MS_HOT int ms_write_acquired_plain(struct ms_thread *t, struct ms_tstate *ts, uint32_t r,
				   struct ms_record *rec, uintptr_t caller)
{
	uint32_t tid = t->tid, prev = rec->owner;
	if (unlikely(!LOAD(&rec->first_caller)) || unlikely(prev == t->tid_held) ||
	    (unlikely(rec->flags & MS_F_TIMED) && ms_hold_sampled(rec->acquisitions + 1)))
		return 1;
	rec->owner_changes += prev && prev != tid; /* 0: none yet, or reads only */
	ms_acquired_plain(t, tid, ts, rec, r, caller, MS_OP_WRLOCK, ms_order_taking(t, r, rec));
	return 0;
}

/* A write unlock of record r's lock by thread t, now written: reads after
 * it are ordered after it (the slot keeps its order). */
MS_HOT void ms_write_released(const struct ms_thread *t, uint32_t r)
{
	struct ms_read_stats *rd = ms_reads_held(r, ~0u);
	if (rd)
		STORE(&rd->write_order, t->clock);
}

/* Thread t, which records, lets go of lock l, a write lock on top of its
 * held set (n, 0-based), in the plain case: record r (rec) is l's, held
 * by t by the record and by glibc's writer field, with no waiter whose
 * stack is sampled and no hold timed (ms_released_plain's conditions).
 * Returns 0 once the release is recorded, reads after it ordered after it
 * (ms_write_released); 1 before anything is done if it is not that case. */
MS_HOT int ms_write_released_plain(struct ms_thread *t, struct ms_tstate *ts, uint32_t n,
				   uint32_t r, const pthread_rwlock_t *l, uintptr_t caller)
{
	struct ms_record *rec = ms_rec(r);
	uint32_t flags = LOAD(&rec->flags);
	if (unlikely(LOAD(&rec->key) != (uintptr_t)l) || unlikely(rec->owner != t->tid_held) ||
	    unlikely((flags & (MS_F_CLASS | MS_F_WAITERS | MS_F_HOLD_TIMED)) !=
		     (uint32_t)MS_CLASS_RWLOCK << MS_F_CLASS_SHIFT) ||
	    unlikely(ms_rw_writer(l) != (int)t->tid))
		return 1;
	ms_released_plain(t, ts, n, r, rec, caller, MS_OP_WRUNLOCK);
	ms_write_released(t, r);
	return 0;
}

#endif
