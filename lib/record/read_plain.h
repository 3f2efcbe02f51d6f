/* read_plain.h - a read hold's plain case, inline on the rwlock paths.
 *
 * Most reads of a program's rwlock are alike: taken at once, by a thread
 * that holds no other lock (so no lock-order edge), of a lock with a slot
 * for its reads (table.h's ms_read_stats), which no thread waits for as
 * it lets go.  The lock and unlock entry points (interpose_rw.c) test for
 * that in the lines they read anyway and then do here, without a call,
 * what other_locks.c's ms_read_acquired() and ms_read_released() do in
 * that case; anything else takes those functions, which share the
 * helpers below.  A read pair cost 468 instructions through them (78
 * bare): see doc/benchmark.md. */
#ifndef MUTEXSTAT_READ_PLAIN_H
#define MUTEXSTAT_READ_PLAIN_H

#include "record/record.h"
#include "glibc/real_rw.h"

#include <pthread.h>

/* How many read rwlock l now, as glibc counts them: in a write phase,
 * those waiting to (ms_rw_readers_holding). */
MS_HOT uint32_t ms_rw_readers(const pthread_rwlock_t *l)
{
	return LOAD(&l->__data.__readers) >> MS_RW_READER_SHIFT;
}

/* How many hold l for read now (glibc/real_rw.h). */
MS_HOT uint32_t ms_rw_readers_holding(const pthread_rwlock_t *l)
{
	return ms_rw_word_holding(LOAD(&l->__data.__readers));
}

/* The thread id of l's writer (0: none), which glibc itself checks for
 * EDEADLK. */
MS_HOT int ms_rw_writer(const pthread_rwlock_t *l)
{
	return LOAD(&l->__data.__cur_writer);
}

/* The order of a reader's entry: past the last write unlock's (a read
 * taken after it is ordered after it; the slot keeps it, beside the words
 * every read reads) and this thread's clock. */
MS_HOT uint64_t ms_reader_order(struct ms_thread *t, const struct ms_read_stats *rd)
{
	uint64_t seen = LOAD(&rd->write_order);
	uint64_t o = (t->clock > seen ? t->clock : seen) + 1;
	t->clock = o;
	return o;
}

/* Entry pos of slot rd's reads' history. */
MS_HOT void ms_read_entry(const struct ms_thread *t, const struct ms_read_stats *rd,
			  uint64_t pos, uint64_t o, uintptr_t caller, unsigned op,
			  int waited, uint64_t ticks)
{
	struct ms_op *e = ms_read_ring_at(rd, pos);
	ms_op_write(e, ms_read_ring_ticks(e), o, t->tid, caller, op, waited, 0, ticks);
}

/* The held set's mode of a read whose unlock takes position pos of slot
 * rd's history (MS_HELD_RING: see thread.h). */
MS_HOT uint32_t ms_read_mode(const struct ms_read_stats *rd, uint64_t pos)
{
	return MS_HELD_READ | MS_HELD_RING |
	       (uint32_t)(pos & ms_table.history_mask) << MS_HELD_POS_SHIFT |
	       (LOAD(&rd->taken) & ((1u << MS_HELD_LIFE_BITS) - 1)) << MS_HELD_LIFE_SHIFT;
}

/* The first read of a life, or one that finds more readers than ever
 * (rd may be NULL: a life without a slot). */
void ms_read_rare(struct ms_record *rec, struct ms_read_stats *rd, uint32_t readers,
		  uintptr_t caller);

/* Whether a read lock of a record whose flags are these, by a thread
 * whose held set is ts's, is the plain case as far as can be told before
 * the try: a read-write lock whose life has not run out of slots for its
 * reads, the thread holding nothing. */
MS_HOT int ms_read_plain_before(const struct ms_tstate *ts, uint32_t flags)
{
	return (flags & (MS_F_CLASS | MS_F_READS_SPENT)) ==
		       (uint32_t)MS_CLASS_RWLOCK << MS_F_CLASS_SHIFT &&
	       !ts->nheld;
}

/* Thread t got a read of lock l (record r, rec) from glibc's try, the
 * plain case before it (ms_read_plain_before).  Returns 0 once it is
 * recorded -- its hold timed if the lock's are (MS_F_TIMED, read again
 * now, as ms_read_acquired does: a wait may have set it meanwhile) and
 * this one is sampled; 1 if the life gets no slot after all, or is locked
 * for the first time, before anything is counted: ms_read_acquired() in
 * full then. */
MS_HOT int ms_read_acquired_plain(struct ms_thread *t, struct ms_tstate *ts, uint32_t r,
				  struct ms_record *rec, const pthread_rwlock_t *l,
				  uintptr_t caller)
{
	/* glibc's count first, from the line its lock just wrote */
	uint32_t readers = ms_rw_readers(l);
	struct ms_read_stats *rd = ms_reads(r);
	if (unlikely(!rd) || unlikely(!LOAD(&rec->first_caller)))
		return 1;
	/* positions 2n - 2 and 2n - 1 for the life's nth read: its entry and
	 * its unlock's, side by side in a line */
	uint64_t p = __atomic_add_fetch(&rd->read_ops, 2, __ATOMIC_RELAXED) - 2;
	if (unlikely(readers > 1) && readers > LOAD(&rd->readers_max))
		ms_read_rare(rec, rd, readers, caller);
	ms_read_entry(t, rd, p, ms_reader_order(t, rd), caller, MS_OP_RDLOCK, 0, 0);
	uint32_t mode = ms_read_mode(rd, p + 1);
	volatile struct ms_held *h = ms_held_push(ts, 0);
	h->rec = r;
	h->mode = mode;
	h->caller = caller;
	if (unlikely(LOAD(&rec->flags) & MS_F_TIMED) && ms_hold_sampled(p / 2 + 1))
		h->since = ms_ticks();
	return 0;
}

/* Thread t, which records (its ok: so no blame is pending), lets go of
 * lock l, a read it took last (n: the top of its held set, 0-based), in
 * the plain case: its entries in the slot the read wrote in, still the
 * record's and not taken again since (ms_reads_held), no waiter whose
 * stack is sampled, t not l's writer, and the hold not one of the sampled
 * ones timed (the lock path's).  Returns 0 once the release is recorded
 * (glibc's unlock comes next); 1 before anything is done, if it is not
 * that case: ms_read_released() then. */
MS_HOT int ms_read_released_plain(struct ms_thread *t, struct ms_tstate *ts, uint32_t n,
				  const pthread_rwlock_t *l, uintptr_t caller)
{
	volatile struct ms_held *h = &ts->held[n];
	uint32_t r = h->rec, mode = h->mode;
	const struct ms_record *rec = ms_rec(r);
	uint32_t flags = LOAD(&rec->flags);
	if (unlikely(LOAD(&rec->key) != (uintptr_t)l) ||
	    unlikely((mode & (MS_HELD_READ | MS_HELD_RING)) != (MS_HELD_READ | MS_HELD_RING)) ||
	    unlikely((flags & (MS_F_CLASS | MS_F_WAITERS)) !=
		     (uint32_t)MS_CLASS_RWLOCK << MS_F_CLASS_SHIFT) ||
	    unlikely(h->since) || unlikely(ms_rw_writer(l) == (int)t->tid))
		return 1;
	const struct ms_read_stats *rd = ms_reads_held(r, mode >> MS_HELD_LIFE_SHIFT);
	if (unlikely(!rd))
		return 1;
	h->mode = 0; /* see held[]; since is 0 already */
	ts->nheld = n;
	uint64_t o = t->clock + 1; /* past its lock's entry, as a holder's */
	t->clock = o;
	ms_read_entry(t, rd, (mode >> MS_HELD_POS_SHIFT) & MS_HELD_RING_POS, o, caller,
		      MS_OP_RDUNLOCK, 0, 0);
	return 0;
}

#endif
