/* interpose_rw.c - the read-write and spin lock entry points.
 *
 * Each reads as the mutex ones do (interpose.c): pass through if we must
 * not record, find the lock's record, try it with glibc's trylock, and if
 * that fails -- a wait, a relock, an error -- let other_locks.c call the
 * function the program called.  A write hold and a spin lock's hold are
 * recorded as a mutex's (record.h); a read hold as one of several
 * (other_locks.c).  A spin lock's lock and unlock and a read or write
 * lock and its unlock first test for their plain case, in the lines they
 * read anyway, and do it inline (record.h, read_plain.h, write_plain.h).
 * The deadline of a timed or clock lock is checked by glibc before it
 * looks at the lock, so a bad one goes straight to glibc's call, as
 * without us, and is counted as its error. */
#define _GNU_SOURCE
#include "base/options.h"
#include "analysis/findings.h"
#include "glibc/real.h"
#include "glibc/real_rw.h"
#include "record/other_locks.h"
#include "record/read_plain.h"
#include "record/write_plain.h"
#include "runtime/dump.h"
#include "wrap/recording.h"

#include <errno.h>

#define CALLER ((uintptr_t)__builtin_return_address(0))

/* The record of lock l, of this class, for a recording thread; else
 * MS_REC_UNTRACKED (not recorded: that kind left out, or no room). */
static inline __attribute__((always_inline)) uint32_t
record_of_kind(struct ms_thread *t, const void *l, unsigned lock_class, uintptr_t caller)
{
	uint32_t r = ms_cache_find(t, (uintptr_t)l);
	if (unlikely(!r)) {
		if (!(ms_opt.track & (1u << lock_class)))
			return MS_REC_UNTRACKED;
		r = ms_cache2_find(t->ts, (uintptr_t)l);
		if (!r) {
			r = ms_table_find((uintptr_t)l);
			if (r == MS_REC_NONE)
				r = ms_first_use_of(t, l, lock_class, caller);
			if (!tracked(r))
				return MS_REC_UNTRACKED;
			*ms_cache2_entry(t->ts, (uintptr_t)l) = r;
		}
		ms_cache_fill(t, (uintptr_t)l, r);
	}
	if (unlikely(ms_lock_class(LOAD(&ms_rec(r)->flags)) != lock_class)) {
		/* memory that held another kind of lock */
		r = ms_first_use_of(t, l, lock_class, caller);
		if (!tracked(r))
			return MS_REC_UNTRACKED;
		ms_cache_fill(t, (uintptr_t)l, r);
	}
	return r;
}

/* A new life at l (after glibc's init said 0); pshared: a spin lock
 * made process-shared (glibc keeps no word of it: we do). */
static void born(struct ms_thread *t, const void *l, unsigned lock_class, int pshared,
		 uintptr_t caller)
{
	if (!(ms_opt.track & (1u << lock_class)))
		return;
	uint32_t r = ms_table_add((uintptr_t)l, 1, &t->clock);
	if (unlikely(t->finding_ended))
		ms_finding_life_ended_at(t, MS_ENDED_REINIT, caller);
	if (!tracked(r))
		return;
	/* an init that ends a life: a read of it may be held (glibc's init
	 * has cleared the lock: not known), which its reader drops at its
	 * next look (ms_other_destroyed) */
	if (!t->added_new && lock_class == MS_CLASS_RWLOCK)
		__atomic_fetch_add(&ms_unlocks_elsewhere, 1, __ATOMIC_RELEASE);
	if (lock_class == MS_CLASS_RWLOCK)
		ms_note_rwlock(r, l, 0);
	else
		ms_note_spin(r, pshared ? (uint32_t)MS_KIND_PSHARED << MS_F_KIND_SHIFT : 0);
	ms_table.init_stacks[r] = ms_site_stack(caller, LOAD(&ms_rec(r)->birth));
	ms_log_held(t, r, caller, MS_OP_INIT, 0, 0, 0);
}

/* The life at l ends (glibc's destroy said 0: it always does). */
static void ended(struct ms_thread *t, const void *l, uintptr_t caller)
{
	uint32_t r = ms_table_find((uintptr_t)l);
	if (tracked(r)) {
		int saved = errno;
		ms_other_destroyed(t, r, l, caller);
		errno = saved;
	}
	ms_table_remove((uintptr_t)l, caller);
	if (unlikely(t->finding_ended))
		ms_finding_life_ended_at(t, MS_ENDED_DESTROYED, caller);
}

/* Once the lock is free: publish this unlock's stack for the waiter it
 * lets in (seq), and charge this thread's own sampled wait, which waits
 * for its next unlock, as the mutex path does (record.c). */
static __attribute__((noinline)) void after_unlock(struct ms_thread *t, uint32_t r,
						   uint64_t birth, uint32_t seq)
{
	int saved = errno;
	if (seq)
		ms_release_publish(r, birth, seq);
	if (t->pend)
		ms_blame_flush(t);
	errno = saved;
}

/* ---- read-write locks ------------------------------------------------------ */

/* glibc refuses the deadline (or the clock) before it looks at the lock;
 * no deadline (NULL) is none, whatever the clock: a wait like any. */
static int deadline_refused(clockid_t clock, const struct timespec *abstime)
{
	/* glibc's headers declare abstime nonnull, and gcc took them at their
	 * word: the test below went, and a NULL deadline crashed here */
	__asm__("" : "+r"(abstime));
	return abstime && ((unsigned long)abstime->tv_nsec >= 1000000000UL ||
			   (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC));
}

/* Every read and write lock but the tries: the try first, then what it
 * got.  Timed ones name CLOCK_REALTIME, as glibc's do. */
static inline __attribute__((always_inline)) MS_UNWOUND int
rw_lock(pthread_rwlock_t *l, unsigned op, clockid_t clock, const struct timespec *abstime,
	uintptr_t caller)
{
	struct ms_thread *t = recording();
	uint32_t r;
	if (!t || (r = record_of_kind(t, l, MS_CLASS_RWLOCK, caller)) == MS_REC_UNTRACKED)
		return ms_rwlock_call(l, op, clock, abstime);
	if (ms_op_deadline(op) && deadline_refused(clock, abstime))
		return ms_rwlock_slow(t, r, l, EINVAL, caller, op, clock, abstime);
	int read = ms_op_read_mode(op);
	int rc = read ? ms_real_rw.tryrdlock(l) : ms_real_rw.trywrlock(l);
	if (likely(rc == 0)) {
		if (read)
			ms_read_acquired(t, r, l, caller, op, 0, 0);
		else {
			ms_write_counted(t, r);
			ms_acquired(t, r, l, caller, op, 0, 0, 0);
		}
		return 0;
	}
	if (rc == EBUSY)
		ms_dump_before_wait();
	return ms_rwlock_slow(t, r, l, rc, caller, op, clock, abstime);
}

static inline __attribute__((always_inline)) int rw_trylock(pthread_rwlock_t *l, int read,
							   uintptr_t caller)
{
	struct ms_thread *t = recording();
	uint32_t r;
	if (!t || (r = record_of_kind(t, l, MS_CLASS_RWLOCK, caller)) == MS_REC_UNTRACKED)
		return read ? ms_real_rw.tryrdlock(l) : ms_real_rw.trywrlock(l);
	int rc = read ? ms_real_rw.tryrdlock(l) : ms_real_rw.trywrlock(l);
	if (rc)
		return ms_rwlock_try_failed(t, r, rc, caller,
					    read ? MS_OP_TRYRDLOCK : MS_OP_TRYWRLOCK);
	if (read)
		ms_read_acquired(t, r, l, caller, MS_OP_TRYRDLOCK, 0, 0);
	else {
		SERIAL_ADD(&ms_cold(r)->trylock_ok, 1);
		ms_write_counted(t, r);
		ms_acquired(t, r, l, caller, MS_OP_TRYWRLOCK, 0, 0, 0);
	}
	return 0;
}

/* The thread's newest hold is a read of record r: the usual unlock. */
static inline int held_top_read(const struct ms_tstate *ts, uint32_t r)
{
	uint32_t n = ts->nheld;
	return n && n <= MS_HELD_MAX && ts->held[n - 1].rec == r &&
	       ts->held[n - 1].mode & MS_HELD_READ;
}

/* The mode of the unlock is the one this thread holds: glibc's writer
 * field says if it is the writer, its held set if it is a reader. */
static inline __attribute__((always_inline)) int rw_unlock(pthread_rwlock_t *l, uintptr_t caller)
{
	struct ms_thread *t = recording();
	uint32_t r;
	if (!t || (r = record_of_kind(t, l, MS_CLASS_RWLOCK, caller)) == MS_REC_UNTRACKED)
		return ms_real_rw.unlock(l);
	uint32_t seq;
	if (LOAD(&l->__data.__cur_writer) == (int)t->tid) {
		seq = ms_released(t, r, NULL, caller, MS_OP_WRUNLOCK);
		ms_write_released(t, r);
	} else if ((likely(held_top_read(t->ts, r)) &&
		    !ms_read_hold_ended(r, t->ts->held[t->ts->nheld - 1].mode)) ||
		   ms_holds_read(t->ts, r) || ms_read_beyond_followed(t, r, l))
		seq = ms_read_released(t, r, l, caller);
	else
		return ms_rwlock_unlock_other(t, r, l, caller);
	uint64_t birth = LOAD(&ms_rec(r)->birth);
	int rc = ms_real_rw.unlock(l);
	if (unlikely(seq | t->pend))
		after_unlock(t, r, birth, seq);
	return rc;
}

MS_EXPORT int pthread_rwlock_init(pthread_rwlock_t *l, const pthread_rwlockattr_t *attr)
{
	int rc = ms_real_rw.init(l, attr);
	struct ms_thread *t;
	if (rc == 0 && (t = recording()))
		born(t, l, MS_CLASS_RWLOCK, 0, CALLER);
	return rc;
}

MS_EXPORT int pthread_rwlock_destroy(pthread_rwlock_t *l)
{
	struct ms_thread *t = recording();
	int rc = ms_real_rw.destroy(l);
	if (rc == 0 && t)
		ended(t, l, CALLER);
	return rc;
}

/* A read or write lock (op) that is not the plain case below. */
static MS_UNWOUND __attribute__((noinline)) int rwlock_other(pthread_rwlock_t *l, unsigned op,
							      uintptr_t caller)
{
	return rw_lock(l, op, CLOCK_REALTIME, NULL, caller);
}

/* The try did not get a read or write lock (op) of the plain case: a wait,
 * a relock (glibc's call then answers EDEADLK), or an error. */
static MS_UNWOUND __attribute__((noinline)) int rwlock_busy(struct ms_thread *t, uint32_t r,
							     pthread_rwlock_t *l, int rc,
							     unsigned op, uintptr_t caller)
{
	if (rc == EBUSY)
		ms_dump_before_wait();
	return ms_rwlock_slow(t, r, l, rc, caller, op, CLOCK_REALTIME, NULL);
}

/* The plain case: an rwlock the first level of the thread's cache knows (a
 * hit means the thread records), read by a thread that holds nothing, its
 * life not out of slots for its reads, and glibc's try gets it:
 * read_plain.h's, without a call into the library.  A busy try waits in
 * ms_rwlock_slow(), a life without a slot or never locked yet takes
 * ms_read_acquired() after the try, anything else rw_lock(). */
MS_EXPORT MS_UNWOUND int pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
	struct ms_thread *t = &ms_self;
	uint32_t r = t->cache[ms_cache_slot(l)];
	struct ms_record *rec = ms_rec(r);
	struct ms_tstate *ts = t->ts;
	if (unlikely(LOAD(&rec->key) != (uintptr_t)l) ||
	    unlikely(!ms_read_plain_before(ts, LOAD(&rec->flags))))
		return rwlock_other(l, MS_OP_RDLOCK, CALLER);
	int rc = ms_real_rw.tryrdlock(l);
	if (unlikely(rc))
		return rwlock_busy(t, r, l, rc, MS_OP_RDLOCK, CALLER);
	if (unlikely(ms_read_acquired_plain(t, ts, r, rec, l, CALLER)))
		ms_read_acquired(t, r, l, CALLER, MS_OP_RDLOCK, 0, 0);
	return 0;
}

MS_EXPORT int pthread_rwlock_tryrdlock(pthread_rwlock_t *l)
{
	return rw_trylock(l, 1, CALLER);
}

MS_EXPORT MS_UNWOUND int pthread_rwlock_timedrdlock(pthread_rwlock_t *l,
						    const struct timespec *abstime)
{
	return rw_lock(l, MS_OP_TIMEDRDLOCK, CLOCK_REALTIME, abstime, CALLER);
}

MS_EXPORT MS_UNWOUND int pthread_rwlock_clockrdlock(pthread_rwlock_t *l, clockid_t clock,
						    const struct timespec *abstime)
{
	return rw_lock(l, MS_OP_CLOCKRDLOCK, clock, abstime, CALLER);
}

/* The plain case: an rwlock the first level of the thread's cache knows,
 * written by a thread that holds nothing, and glibc's try gets it:
 * write_plain.h's after the writer's count; a life never locked yet, a
 * record that says the thread holds it already, or a hold to time takes
 * ms_acquired() after the try, a busy try waits in ms_rwlock_slow(),
 * anything else rw_lock(). */
MS_EXPORT MS_UNWOUND int pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
	struct ms_thread *t = &ms_self;
	uint32_t r = t->cache[ms_cache_slot(l)];
	struct ms_record *rec = ms_rec(r);
	struct ms_tstate *ts = t->ts;
	if (unlikely(LOAD(&rec->key) != (uintptr_t)l) ||
	    unlikely(!ms_write_plain_before(ts, LOAD(&rec->flags))))
		return rwlock_other(l, MS_OP_WRLOCK, CALLER);
	int rc = ms_real_rw.trywrlock(l);
	if (unlikely(rc))
		return rwlock_busy(t, r, l, rc, MS_OP_WRLOCK, CALLER);
	ms_write_counted(t, r);
	if (unlikely(ms_write_acquired_plain(t, ts, r, rec, CALLER)))
		ms_acquired(t, r, l, CALLER, MS_OP_WRLOCK, 0, 0, 0);
	return 0;
}

MS_EXPORT int pthread_rwlock_trywrlock(pthread_rwlock_t *l)
{
	return rw_trylock(l, 0, CALLER);
}

MS_EXPORT MS_UNWOUND int pthread_rwlock_timedwrlock(pthread_rwlock_t *l,
						    const struct timespec *abstime)
{
	return rw_lock(l, MS_OP_TIMEDWRLOCK, CLOCK_REALTIME, abstime, CALLER);
}

MS_EXPORT MS_UNWOUND int pthread_rwlock_clockwrlock(pthread_rwlock_t *l, clockid_t clock,
						    const struct timespec *abstime)
{
	return rw_lock(l, MS_OP_CLOCKWRLOCK, clock, abstime, CALLER);
}

/* An unlock that is not the plain case below. */
static __attribute__((noinline)) int unlock_other(pthread_rwlock_t *l, uintptr_t caller)
{
	return rw_unlock(l, caller);
}

/* The plain case: a recording thread lets go of the lock it took last, a
 * read (read_plain.h) or a write (write_plain.h), as they say; anything
 * else rw_unlock(). */
MS_EXPORT int pthread_rwlock_unlock(pthread_rwlock_t *l)
{
	struct ms_thread *t = &ms_self;
	if (likely(t->ok)) {
		struct ms_tstate *ts = t->ts;
		uint32_t n = ts->nheld - 1;
		if (likely(n < MS_HELD_MAX) &&
		    likely(ts->held[n].mode & MS_HELD_READ
				   ? !ms_read_released_plain(t, ts, n, l, CALLER)
				   : !ms_write_released_plain(t, ts, n, ts->held[n].rec, l, CALLER)))
			return ms_real_rw.unlock(l);
	}
	return unlock_other(l, CALLER);
}

/* ---- spin locks -------------------------------------------------------------- */

MS_EXPORT int pthread_spin_init(pthread_spinlock_t *s, int pshared)
{
	int rc = ms_real_rw.spin_init(s, pshared);
	struct ms_thread *t;
	if (rc == 0 && (t = recording()))
		born(t, (const void *)s, MS_CLASS_SPIN, pshared == PTHREAD_PROCESS_SHARED, CALLER);
	return rc;
}

MS_EXPORT int pthread_spin_destroy(pthread_spinlock_t *s)
{
	struct ms_thread *t = recording();
	int rc = ms_real_rw.spin_destroy(s);
	if (rc == 0 && t)
		ended(t, (const void *)s, CALLER);
	return rc;
}

/* The lock path of a spin lock the first level of the thread's cache does
 * not know: a lock new to it, one of more than it holds, or a call not
 * recorded.  Its record is found (or made, with whatever the first use
 * of a thread or of the library sets up) before the try: never while the
 * program's lock is held -- an allocator's, it may be. */
static MS_UNWOUND __attribute__((noinline)) int spin_lock_other(pthread_spinlock_t *s,
								uintptr_t caller)
{
	struct ms_thread *t = recording();
	uint32_t r;
	if (!t || (r = record_of_kind(t, (const void *)s, MS_CLASS_SPIN, caller)) ==
			  MS_REC_UNTRACKED)
		return ms_real_rw.spin_lock(s);
	if (likely(ms_real_rw.spin_trylock(s) == 0)) {
		ms_acquired(t, r, (const void *)s, caller, MS_OP_LOCK, 0, 0, 0);
		return 0;
	}
	ms_dump_before_wait();
	return ms_spin_slow(t, r, s, caller);
}

/* The try did not get a spin lock the cache knows: a wait, or its holder
 * spinning for it again. */
static MS_UNWOUND __attribute__((noinline)) int spin_lock_busy(struct ms_thread *t,
							       uint32_t r,
							       pthread_spinlock_t *s,
							       uintptr_t caller)
{
	ms_dump_before_wait();
	return ms_spin_slow(t, r, s, caller);
}

/* The try got spin lock s, in none of the plain case's conditions:
 * ms_acquired() in full, out of line so that the plain case saves few
 * registers. */
static __attribute__((noinline)) int spin_acquired_full(struct ms_thread *t, uint32_t r,
							pthread_spinlock_t *s, uintptr_t caller)
{
	ms_acquired(t, r, (const void *)s, caller, MS_OP_LOCK, 0, 0, 0);
	return 0;
}

/* The try got spin lock s, but not the plainest way: another thread had
 * it last, or it has made a thread wait (some holds timed).  Taken
 * holding no other lock and this hold not one to time -- each turn of two
 * threads on a hot spin lock, and the fifteen in sixteen holds of one
 * that made a thread wait -- it is the plain case still (an owner change
 * counted), as a mutex's (interpose.c, acquired_other_owner). */
static __attribute__((noinline)) int spin_acquired_other(struct ms_thread *t, uint32_t r,
							 pthread_spinlock_t *s, uintptr_t caller)
{
	struct ms_record *rec = ms_rec(r);
	struct ms_tstate *ts = t->ts;
	uint32_t prev = rec->owner, tid = t->tid;
	if (ts->nheld || !prev || prev == t->tid_held ||
	    ((rec->flags & MS_F_TIMED) && ms_hold_sampled(rec->acquisitions + 1)))
		return spin_acquired_full(t, r, s, caller);
	uint64_t o;
	if (prev == tid)
		o = ms_order_retaking(t);
	else {
		rec->owner_changes++;
		o = ms_order_taking(t, r, rec);
	}
	ms_acquired_plain(t, tid, ts, rec, r, caller, MS_OP_LOCK, o);
	return 0;
}

/* A spin lock's hold is short, so what the library does inside it is most
 * of it: the plain case -- a spin lock the first level of the thread's
 * cache knows (a hit means the thread records), free, taken by the thread
 * that had it last while it holds no other lock, its hold not timed -- is
 * the mutex's (interpose.c), without a call into the library; taken from
 * another thread, or with some holds timed, spin_acquired_other(). */
MS_EXPORT MS_UNWOUND int pthread_spin_lock(pthread_spinlock_t *s)
{
	struct ms_thread *t = &ms_self;
	uint32_t r = t->cache[ms_cache_slot((const void *)s)];
	struct ms_record *rec = ms_rec(r);
	if (unlikely(LOAD(&rec->key) != (uintptr_t)s) ||
	    unlikely(ms_lock_class(LOAD(&rec->flags)) != MS_CLASS_SPIN))
		return spin_lock_other(s, CALLER);
	if (unlikely(ms_real_rw.spin_trylock(s) != 0))
		return spin_lock_busy(t, r, s, CALLER);
	uint32_t tid = t->tid;
	struct ms_tstate *ts = t->ts;
	if (unlikely(rec->owner != tid || ts->nheld || (rec->flags & MS_F_TIMED)))
		return spin_acquired_other(t, r, s, CALLER);
	ms_acquired_plain(t, tid, ts, rec, r, CALLER, MS_OP_LOCK, ms_order_retaking(t));
	return 0;
}

MS_EXPORT int pthread_spin_trylock(pthread_spinlock_t *s)
{
	struct ms_thread *t = recording();
	uint32_t r;
	if (!t || (r = record_of_kind(t, (const void *)s, MS_CLASS_SPIN, CALLER)) ==
			  MS_REC_UNTRACKED)
		return ms_real_rw.spin_trylock(s);
	int rc = ms_real_rw.spin_trylock(s);
	if (rc) {
		int saved = errno;
		ATOMIC_ADD(&ms_cold(r)->trylock_busy, 1);
		ms_log_other(t, r, CALLER, MS_OP_TRYLOCK, rc);
		errno = saved;
		return rc;
	}
	SERIAL_ADD(&ms_cold(r)->trylock_ok, 1);
	ms_acquired(t, r, (const void *)s, CALLER, MS_OP_TRYLOCK, 0, 0, 0);
	return 0;
}

/* The unlock path that is not the plain case below. */
static __attribute__((noinline)) int spin_unlock_other(pthread_spinlock_t *s, uintptr_t caller)
{
	struct ms_thread *t = recording();
	uint32_t r;
	if (!t || (r = record_of_kind(t, (const void *)s, MS_CLASS_SPIN, caller)) ==
			  MS_REC_UNTRACKED)
		return ms_real_rw.spin_unlock(s);
	if (unlikely(LOAD(&ms_rec(r)->owner) != t->tid_held))
		return ms_spin_unlock_other(t, r, s, caller);
	uint64_t birth = LOAD(&ms_rec(r)->birth);
	uint32_t seq = ms_released(t, r, NULL, caller, MS_OP_UNLOCK);
	int rc = ms_real_rw.spin_unlock(s);
	if (unlikely(seq | t->pend))
		after_unlock(t, r, birth, seq);
	return rc;
}

/* The plain case: a recording thread (ok: no blame pending either) lets
 * go of the lock it took last (the top of its held set), a spin lock (not
 * a mutex at that address let go of the wrong way), which it holds by
 * the record (not let go by another thread meanwhile), with no waiter
 * whose stack is sampled and its hold not timed: ms_released_plain, as
 * the mutex's unlock path. */
MS_EXPORT int pthread_spin_unlock(pthread_spinlock_t *s)
{
	struct ms_thread *t = &ms_self;
	if (likely(t->ok)) {
		struct ms_tstate *ts = t->ts;
		uint32_t n = ts->nheld - 1;
		if (likely(n < MS_HELD_MAX)) {
			uint32_t r = ts->held[n].rec;
			struct ms_record *rec = ms_rec(r);
			uint32_t flags = rec->flags;
			if (likely(LOAD(&rec->key) == (uintptr_t)s && rec->owner == t->tid_held &&
				   ms_lock_class(flags) == MS_CLASS_SPIN &&
				   !(flags & (MS_F_WAITERS | MS_F_HOLD_TIMED)))) {
				ms_released_plain(t, ts, n, r, rec, CALLER, MS_OP_UNLOCK);
				return ms_real_rw.spin_unlock(s);
			}
		}
	}
	return spin_unlock_other(s, CALLER);
}
