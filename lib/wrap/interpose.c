/* interpose.c - the pthread entry points we replace.  Each one reads top to
 * bottom: pass through if we must not record, find the mutex's record, call
 * glibc, record what happened.  The waiting, failing and misuse cases are in
 * record.c; the fast cases are inline in record.h.
 *
 * Locks try the mutex first (trylock): if it is free, nothing more is paid;
 * if it is not, this is a contention (or a relock by the owner), and only
 * then do we read the clock and call glibc's blocking function.  The names
 * on the lock path say which: acquired_* when the try got the mutex
 * (record.h's ms_acquired_plain is the whole of the common case),
 * lock_contended when it did not. */
#define _GNU_SOURCE
#include "base/clock.h"
#include "base/options.h"
#include "core/cond_signals.h"
#include "wrap/cond.h"
#include "analysis/findings.h"
#include "glibc/glibc_fast.h"
#include "runtime/dump.h"
#include "runtime/init.h"
#include "glibc/real.h"
#include "record/record.h"
#include "stacks/site.h"
#include "wrap/recording.h"

#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <threads.h>

#define CALLER ((uintptr_t)__builtin_return_address(0))

/* Past the first level of a recording thread's cache: the second level,
 * else the table (a tracked record found there goes into the second
 * level), else MS_REC_NONE or MS_REC_UNTRACKED. */
static inline __attribute__((always_inline)) uint32_t
record_past_first(struct ms_thread *t, uintptr_t m)
{
	uint32_t r = ms_cache2_find(t->ts, m);
	if (!r && tracked(r = ms_table_find(m)))
		*ms_cache2_entry(t->ts, m) = r;
	return r;
}

/* The record for m, adding it on first use; MS_REC_UNTRACKED if none.  A
 * tracked record found goes into the thread's cache. */
static inline __attribute__((always_inline)) uint32_t
record_of_at(struct ms_thread *t, pthread_mutex_t *m, uintptr_t caller)
{
	uint32_t r = ms_cache_find(t, (uintptr_t)m);
	if (!r) {
		r = record_past_first(t, (uintptr_t)m);
		if (unlikely(r == MS_REC_NONE) && tracked(r = ms_first_use(t, m, caller)))
			*ms_cache2_entry(t->ts, (uintptr_t)m) = r;
		if (tracked(r))
			ms_cache_fill(t, (uintptr_t)m, r);
	}
	if (unlikely(tracked(r) &&
		     ms_lock_class(LOAD(&ms_rec(r)->flags)) != MS_CLASS_MUTEX))
		r = ms_first_use_again(t, m, caller); /* memory of another kind of lock */
	return r;
}
#define record_of(t, m) record_of_at((t), (m), CALLER)

/* ... of a mutex this thread had last */
#define acquired_plain_lock(t, ts, rec, r, caller)                           \
	ms_acquired_plain((t), (t)->tid, (ts), (rec), (r), (caller), MS_OP_LOCK, \
			  ms_order_retaking(t))

/* The lock paths that are not the plain case, out of line so that the
 * plain one saves few registers. */

/* The try got a mutex the thread's cache knows, in none of the cases
 * below: ms_acquired() in full -- after a new life, if the record is of
 * another kind of lock (its memory held one, never destroyed). */
static __attribute__((noinline)) int acquired_full(struct ms_thread *t, uint32_t r,
						   pthread_mutex_t *m, uintptr_t caller)
{
	if (unlikely(ms_lock_class(LOAD(&ms_rec(r)->flags)) != MS_CLASS_MUTEX) &&
	    !tracked(r = ms_first_use_again(t, m, caller)))
		return 0;
	ms_acquired(t, r, m, caller, MS_OP_LOCK, 0, 0, 0);
	return 0;
}

/* The record's flags send this acquisition to acquired_full(): a hold to
 * time (of a mutex that has made a thread wait), or a record of another
 * kind of lock.  One test of the flags in the plain case. */
#define MS_F_NOT_PLAIN (MS_F_TIMED | MS_F_CLASS)
static inline int flags_not_plain(const struct ms_record *rec)
{
	uint32_t flags = rec->flags;
	return unlikely(flags & MS_F_NOT_PLAIN) &&
	       ((flags & MS_F_CLASS) || ms_hold_sampled(rec->acquisitions + 1));
}

/* A life's first acquisition whose call site shares no stack for it
 * (acquired_other_owner): the capture, out of line, so that the shared
 * case keeps nothing across a call. */
static __attribute__((noinline)) int acquired_first_captured(struct ms_thread *t, uint32_t r,
							     uintptr_t caller)
{
	struct ms_record *rec = ms_rec(r);
	ms_first_acquired_at(rec, caller, ms_site_capture(caller)); /* ms_site_stack's other case */
	ms_acquired_plain(t, t->tid, t->ts, rec, r, caller, MS_OP_LOCK,
			  ms_order_taking(t, r, rec));
	return 0;
}

/* The try got a mutex the thread's cache knows, but not the plainest
 * way: another thread had it last, or this thread holds others (lock
 * order), or this hold is one to time.  Another thread's mutex, taken
 * holding no other and not timed -- each turn of threads that take one
 * mutex by turns -- is the plain case and an owner change, here without
 * the registers acquired_full() saves. */
static __attribute__((noinline)) int acquired_other_owner(struct ms_thread *t, uint32_t r,
							  pthread_mutex_t *m,
							  uintptr_t caller)
{
	struct ms_record *rec = ms_rec(r);
	struct ms_tstate *ts = t->ts;
	uint32_t prev = rec->owner;
	/* t->tid_held: this thread holds it already (a recursive mutex) */
	if (ts->nheld || prev == t->tid_held || flags_not_plain(rec))
		return acquired_full(t, r, m, caller);
	/* prev 0: its life's first acquisition, which says where (what
	 * ms_acquired does for it, here without its saves and tests; a
	 * capture, rare, out of line: no call but a tail call here, so no
	 * register is saved on the first lock of every mutex life) */
	if (!prev) {
		if (!rec->first_caller) {
			uint32_t id = ms_site_shared(caller, rec->birth);
			if (unlikely(!id))
				return acquired_first_captured(t, r, caller);
			ms_first_acquired_at(rec, caller, id | MS_SITE_SHARED);
		}
	} else
		rec->owner_changes += prev != t->tid;
	ms_acquired_plain(t, t->tid, ts, rec, r, caller, MS_OP_LOCK,
			  ms_order_taking(t, r, rec));
	return 0;
}

/* As acquired_other_owner(), for a mutex that has made a thread wait: only
 * some of its holds are timed (one in MS_HOLD_SAMPLE, after the first
 * MS_HOLD_EXACT), and the others -- a hot mutex's fifteen in sixteen --
 * are plain.  (Or a record of another kind of lock: flags_not_plain.) */
static __attribute__((noinline)) int acquired_timed(struct ms_thread *t, uint32_t r,
						    pthread_mutex_t *m, uintptr_t caller)
{
	struct ms_record *rec = ms_rec(r);
	if (flags_not_plain(rec))
		return acquired_full(t, r, m, caller);
	acquired_plain_lock(t, t->ts, rec, r, caller);
	return 0;
}

static int acquired_nested_big(struct ms_thread *t, uint32_t r, pthread_mutex_t *m,
			       uintptr_t caller);

/* The try got a mutex while the thread holds others -- the inner lock of
 * nested ones -- the lock-order edge from the lock it took last known to
 * its cache, the mutex locked before (not its life's first acquisition),
 * not held by this thread already (a recursive mutex) and the hold not
 * timed: the plain case one entry higher in the held set, an owner change
 * counted if another thread had it last.  Else ms_acquired() in full.
 * alone (a constant): the thread holds one lock, so the edge's gates are
 * one test (ms_order_known_small_alone).  big (a constant, with alone): the
 * thread has the bigger cache, and its windows, which are given every edge
 * the small one is: asked instead of the small one, in a function of their
 * own (acquired_nested_big), so that a thread without them keeps no more
 * registers for them. */
static inline __attribute__((always_inline)) int
acquired_nested_as(struct ms_thread *t, uint32_t r, pthread_mutex_t *m, uintptr_t caller,
		   int alone, int big)
{
	struct ms_tstate *ts = t->ts;
	/* alone: acquired_nested read the count (a signal handler's locks
	 * meanwhile leave it as they found it) */
	uint32_t n = alone ? 1 : ts->nheld;
	if (unlikely(n >= MS_HELD_MAX))
		return acquired_full(t, r, m, caller);
	if (big) {
		if (!ms_order_known_big_alone(ts, r))
			return acquired_full(t, r, m, caller);
	} else if (alone) {
		if (unlikely(ts->edge_cache2 != NULL))
			return acquired_nested_big(t, r, m, caller);
		if (!ms_order_known_small_alone(ts, r))
			return acquired_full(t, r, m, caller);
	} else if (!ms_order_known(ts, r))
		return acquired_full(t, r, m, caller);
	/* the record past the probe: fewer registers kept across it */
	struct ms_record *rec = ms_rec(r);
	uint32_t tid = t->tid, prev = rec->owner;
	if (unlikely(rec->flags & MS_F_NOT_PLAIN))
		return acquired_full(t, r, m, caller);
	uint64_t o;
	if (likely(prev == tid))
		o = ms_order_retaking(t);
	else if (prev && prev != t->tid_held) {
		rec->owner_changes++;
		o = ms_order_taking(t, r, rec);
	} else
		return acquired_full(t, r, m, caller);
	volatile struct ms_held *h = ms_held_push(ts, n);
	h->rec = r;
	h->caller = caller; /* its since is 0 already (held[]) */
	rec->acquisitions++;
	rec->owner = t->tid_held;
	ms_log_rec(t, tid, r, rec, o, caller, MS_OP_LOCK, 0, 0, 0);
	return 0;
}

/* ... holding two or more */
static __attribute__((noinline)) int acquired_nested_many(struct ms_thread *t, uint32_t r,
							  pthread_mutex_t *m,
							  uintptr_t caller)
{
	return acquired_nested_as(t, r, m, caller, 0, 0);
}

/* ... holding one, the thread with the bigger cache (each of many locks
 * taken in turn under one) */
static __attribute__((noinline)) int acquired_nested_big(struct ms_thread *t, uint32_t r,
							 pthread_mutex_t *m, uintptr_t caller)
{
	return acquired_nested_as(t, r, m, caller, 1, 1);
}

/* ... holding one (B of A then B; each of many taken under one): the
 * edge's gates are one test, without the loops over the held set, so the
 * probe keeps fewer registers (four saved, not six).  The test of the
 * count comes before them: a deeper nest passes on with no saves. */
static __attribute__((noinline)) int acquired_nested(struct ms_thread *t, uint32_t r,
						     pthread_mutex_t *m, uintptr_t caller)
{
	if (unlikely(t->ts->nheld != 1))
		return acquired_nested_many(t, r, m, caller);
	return acquired_nested_as(t, r, m, caller, 1, 0);
}

/* The try got tracked mutex m (record r, rec; the thread's tid, loaded
 * once: the compiler cannot keep it across the lock's atomic step): the
 * plain case inline. */
static inline __attribute__((always_inline)) int
acquired_cached(struct ms_thread *t, uint32_t tid, uint32_t r,
		struct ms_record *rec, pthread_mutex_t *m, uintptr_t caller)
{
	struct ms_tstate *ts = t->ts;
	if (unlikely(ts->nheld)) /* its lock order */
		return acquired_nested(t, r, m, caller);
	if (unlikely(rec->owner != tid))
		return acquired_other_owner(t, r, m, caller);
	if (unlikely(rec->flags & MS_F_NOT_PLAIN))
		return acquired_timed(t, r, m, caller);
	ms_acquired_plain(t, tid, ts, rec, r, caller, MS_OP_LOCK,
			  ms_order_retaking(t));
	return 0;
}
#define acquired_record(t, r, m, caller) \
	acquired_cached((t), (t)->tid, (r), ms_rec(r), (m), (caller))

/* The try got the mutex, the call is not the plain case (not started,
 * library code on this thread, a blame pending) or the mutex is new. */
static __attribute__((noinline)) int acquired_first_use(pthread_mutex_t *m,
							uintptr_t caller)
{
	struct ms_thread *t = recording();
	uint32_t r;
	if (t && tracked(r = record_of_at(t, m, caller)))
		ms_acquired(t, r, m, caller, MS_OP_LOCK, 0, 0, 0);
	return 0;
}

/* The try got the mutex, but the first level of the thread's cache does
 * not know it: a mutex this thread has not used lately, or one of more
 * than MS_CACHE it takes in turn; the second level or the table has its
 * record. */
static inline __attribute__((always_inline)) int acquired_uncached(pthread_mutex_t *m,
								  uintptr_t caller)
{
	struct ms_thread *t = &ms_self;
	uint32_t r;
	if (unlikely(!t->ok) ||
	    unlikely(!tracked(r = record_past_first(t, (uintptr_t)m))))
		return acquired_first_use(m, caller);
	ms_cache_fill(t, (uintptr_t)m, r);
	return acquired_record(t, r, m, caller);
}

/* The try did not get the mutex: a wait, a relock, or an error.
 * MS_UNWOUND, as every frame from the entry point to the wait: a thread
 * cancelled asynchronously in the wait leaves them by unwinding. */
static MS_UNWOUND __attribute__((noinline)) int lock_contended(pthread_mutex_t *m, int rc,
							    uintptr_t caller)
{
	struct ms_thread *t = recording();
	uint32_t r;
	if (!t || (r = record_of_at(t, m, caller)) == MS_REC_UNTRACKED) {
		if (rc == ENOTRECOVERABLE)
			ms_undo_unrecoverable_try(m);
		return rc == EBUSY ? ms_real.mutex_lock(m) : rc;
	}
	ms_dump_before_wait();
	return ms_lock_slow(t, r, m, rc, caller, MS_OP_LOCK, 0, NULL);
}

/* The lock path of a mutex that is not the plain case below: a try
 * first -- glibc_fast.h's for a kind-0 mutex of a recording thread, else
 * glibc's trylock; if the mutex is free that is the whole of glibc's
 * work, and if it is not, this is a contention -- then the thread's cache
 * gives the record (no lock, no table probe), then acquired_record(). */
static MS_UNWOUND __attribute__((noinline)) int lock_other(pthread_mutex_t *m,
						uintptr_t caller)
{
	struct ms_thread *t = &ms_self;
	/* The library's start and this thread's record, before the try:
	 * either may call malloc -- the program's own maybe, whose first
	 * pthread call this is, under this very mutex (firefox's
	 * mozjemalloc: the thread waited for itself) */
	if (unlikely(!t->ok))
		(void)recording();
	int rc = likely(t->ok) && fast_kind(m) ? fast_lock(m, t->tid)
					       : ms_real.lock_try(m);
	if (unlikely(rc))
		return lock_contended(m, rc, caller);
	uint32_t r = t->cache[ms_cache_slot(m)];
	if (unlikely(LOAD(&ms_rec(r)->key) != (uintptr_t)m))
		return acquired_uncached(m, caller);
	return acquired_record(t, r, m, caller);
}

/* The lock path of a mutex the first level of the thread's cache does not
 * know but its second does -- a thread that takes more mutexes in turn
 * than the first level holds, as one holding a table's lock while it takes
 * each of a hundred others -- is the first level's, after a probe of the
 * second (a hit there means the thread records); else lock_other(). */
static MS_UNWOUND __attribute__((noinline)) int lock_second(pthread_mutex_t *m,
							   uintptr_t caller)
{
	struct ms_thread *t = &ms_self;
	if (unlikely(!t->ok) || unlikely(!fast_kind(m)))
		return lock_other(m, caller);
	uint32_t r = ms_cache2_find(t->ts, (uintptr_t)m);
	if (unlikely(!r))
		return lock_other(m, caller);
	ms_cache_fill(t, (uintptr_t)m, r);
	uint32_t tid = t->tid;
	int rc = fast_lock(m, tid);
	if (unlikely(rc))
		return lock_contended(m, rc, caller);
	return acquired_cached(t, tid, r, ms_rec(r), m, caller);
}

/* The lock path: a kind-0 mutex the first level of the thread's cache
 * knows (a hit means the thread records, so its tid is known) is taken
 * by glibc_fast.h's steps, which fail where glibc's trylock would; else
 * lock_other(). */
static inline __attribute__((always_inline)) MS_UNWOUND int mutex_lock(pthread_mutex_t *m)
{
	struct ms_thread *t = &ms_self;
	/* ms_cache_find(), spelled out: branching on the address check
	 * itself saves the select of 0 and a test */
	uint32_t r = t->cache[ms_cache_slot(m)];
	struct ms_record *rec = ms_rec(r);
	if (likely(LOAD(&rec->key) == (uintptr_t)m) && likely(fast_kind(m))) {
		uint32_t tid = t->tid;
		int rc = fast_lock(m, tid);
		if (unlikely(rc))
			return lock_contended(m, rc, CALLER);
		return acquired_cached(t, tid, r, rec, m, CALLER);
	}
	return lock_second(m, CALLER);
}

static inline __attribute__((always_inline)) int mutex_trylock(pthread_mutex_t *m)
{
	struct ms_thread *t = recording();
	uint32_t r;
	if (!t || (r = record_of(t, m)) == MS_REC_UNTRACKED)
		return ms_real.mutex_trylock(m);
	int rc = ms_real.mutex_trylock(m);
	if (likely(rc == 0)) {
		struct ms_record *rec = ms_rec(r);
		struct ms_tstate *ts = t->ts;
		SERIAL_ADD(&ms_cold(r)->trylock_ok, 1);
		/* the lock path's plain case (a trylock adds no lock-order
		 * edge, so only the held set's being empty matters) */
		if (likely(rec->owner == t->tid && !ts->nheld && !flags_not_plain(rec)))
			ms_acquired_plain(t, t->tid, ts, rec, r, CALLER, MS_OP_TRYLOCK,
					  ms_order_retaking(t));
		else
			ms_acquired(t, r, m, CALLER, MS_OP_TRYLOCK, 0, 0, 0);
		return 0;
	}
	return ms_trylock_failed(t, r, m, rc, CALLER);
}

static inline __attribute__((always_inline)) MS_UNWOUND int mutex_timedlock(pthread_mutex_t *m,
							   const struct timespec *abstime)
{
	struct ms_thread *t = recording();
	uint32_t r;
	if (!t || (r = record_of(t, m)) == MS_REC_UNTRACKED)
		return ms_real.mutex_timedlock(m, abstime);
	if (unlikely(mutex_pi_owner_died(m))) /* see there */
		return ms_lock_direct(t, r, m, CALLER, MS_OP_TIMEDLOCK,
				      CLOCK_REALTIME, abstime);
	int rc = ms_real.timedlock_try(m);
	if (rc == 0) {
		ms_acquired(t, r, m, CALLER, MS_OP_TIMEDLOCK, 0, 0, 0);
		return 0;
	}
	if (rc == MS_TRY_DIRECT) /* another library wraps it: real.h */
		return ms_lock_direct(t, r, m, CALLER, MS_OP_TIMEDLOCK,
				      CLOCK_REALTIME, abstime);
	ms_dump_before_wait();
	return ms_lock_slow(t, r, m, rc, CALLER, MS_OP_TIMEDLOCK,
			    CLOCK_REALTIME, abstime);
}

/* A call glibc refused before it looked at the mutex (EINVAL: a clock it
 * does not wait by, a condition wait's deadline out of range): nothing
 * was taken or let go, but an error was returned, which the mutex counts
 * as it does every other.  glibc's answer and errno stay as they were. */
static __attribute__((noinline)) int refused_before_mutex(pthread_mutex_t *m, int rc,
							  unsigned op, uintptr_t caller)
{
	struct ms_thread *t = recording();
	uint32_t r;
	if (rc == EINVAL && t && tracked(r = record_of_at(t, m, caller))) {
		int saved = errno;
		ms_count_error(r, rc);
		ms_log_other(t, r, caller, op, rc);
		errno = saved;
	}
	return rc;
}

MS_EXPORT MS_UNWOUND int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t clock,
				      const struct timespec *abstime)
{
	/* glibc refuses other clocks before it looks at the mutex. */
	if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
		return refused_before_mutex(m, ms_real.mutex_clocklock(m, clock, abstime),
					    MS_OP_CLOCKLOCK, CALLER);
	struct ms_thread *t = recording();
	uint32_t r;
	if (!t || (r = record_of(t, m)) == MS_REC_UNTRACKED)
		return ms_real.mutex_clocklock(m, clock, abstime);
	if (unlikely(mutex_pi_owner_died(m))) /* see there */
		return ms_lock_direct(t, r, m, CALLER, MS_OP_CLOCKLOCK, clock, abstime);
	int rc = ms_real.clocklock_try(m);
	if (rc == 0) {
		ms_acquired(t, r, m, CALLER, MS_OP_CLOCKLOCK, 0, 0, 0);
		return 0;
	}
	if (rc == MS_TRY_DIRECT) /* another library wraps it: real.h */
		return ms_lock_direct(t, r, m, CALLER, MS_OP_CLOCKLOCK, clock, abstime);
	ms_dump_before_wait();
	return ms_lock_slow(t, r, m, rc, CALLER, MS_OP_CLOCKLOCK, clock, abstime);
}

static __attribute__((noinline)) int unlock_entry_slow(pthread_mutex_t *m,
						       uintptr_t caller)
{
	struct ms_thread *t = recording();
	if (!t)
		return ms_real.mutex_unlock(m);
	uint32_t r = ms_cache_find(t, (uintptr_t)m);
	int rc = ms_unlock_slow(t, r ? r : ms_table_find((uintptr_t)m), m, caller);
	if (t->pend) {
		int saved = errno;
		ms_blame_flush(t);
		errno = saved;
	}
	return rc;
}

/* An unlock that is not the plain case below.  One that is but for a
 * timed hold ending (ms_released reads its start from the held set) is
 * done here; the rest -- a sampled thread waits, whose blame wants the
 * stack of this unlock captured once the mutex is free, an inner level,
 * misuse, an untracked mutex -- by unlock_entry_slow(). */
static __attribute__((noinline)) int unlock_other(pthread_mutex_t *m,
						  uintptr_t caller)
{
	struct ms_thread *t = &ms_self;
	if (!mutex_owned_once(m, t->unlock_word))
		return unlock_entry_slow(m, caller);
	struct ms_tstate *ts = t->ts;
	uint32_t n = ts->nheld - 1;
	uint32_t r = n < MS_HELD_MAX ? ts->held[n].rec : 0;
	if (!r || LOAD(&ms_rec(r)->key) != (uintptr_t)m ||
	    (LOAD(&ms_rec(r)->flags) & MS_F_WAITERS))
		return unlock_entry_slow(m, caller);
	uint64_t birth = LOAD(&ms_rec(r)->birth);
	/* a sampled waiter may come meanwhile: then seq is its release's */
	uint32_t seq = ms_released(t, r, m, caller, MS_OP_UNLOCK);
	int rc = 0;
	if (likely(fast_kind(m)))
		fast_unlock(m);
	else
		rc = ms_real.mutex_unlock(m);
	if (unlikely(seq)) {
		int saved = errno;
		ms_release_publish(r, birth, seq);
		errno = saved;
	}
	return rc;
}

/* The unlock path: a recording thread (unlock_word) letting go of its
 * last level (glibc's own fields say so) of the mutex it took last (the
 * top of its held set gives the record), whose current hold is not being
 * timed.  No call: a kind-0 mutex is let go by glibc_fast.h's steps,
 * another by a tail call to glibc. */
static inline __attribute__((always_inline)) int mutex_unlock(pthread_mutex_t *m)
{
	struct ms_thread *t = &ms_self;
	if (likely(mutex_owned_once(m, t->unlock_word))) {
		struct ms_tstate *ts = t->ts;
		uint32_t n = ts->nheld - 1;
		if (likely(n < MS_HELD_MAX)) {
			uint32_t r = ts->held[n].rec;
			struct ms_record *rec = ms_rec(r);
			if (likely(LOAD(&rec->key) == (uintptr_t)m &&
				   !(rec->flags & (MS_F_WAITERS | MS_F_HOLD_TIMED)))) {
				ms_released_plain(t, ts, n, r, rec, CALLER, MS_OP_UNLOCK);
				if (likely(fast_kind(m))) {
					fast_unlock(m);
					return 0;
				}
				return ms_real.mutex_unlock(m);
			}
		}
	}
	return unlock_other(m, CALLER);
}

static inline __attribute__((always_inline)) int mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *attr)
{
	int rc = ms_real.mutex_init(m, attr);
	struct ms_thread *t;
	if (rc || !(t = recording()) || !(ms_opt.track & (1u << MS_CLASS_MUTEX)))
		return rc;
	/* errno stays as glibc left it: what follows makes no system call
	 * but a stack capture's and the table's madvise, which keep it */
	uint32_t r = ms_table_add((uintptr_t)m, 1, &t->clock);
	if (unlikely(t->finding_ended))
		ms_finding_life_ended_at(t, MS_ENDED_REINIT, CALLER);
	if (r != MS_REC_UNTRACKED && r != MS_REC_NONE) {
		/* a normal mutex's kind adds no bits to the new life's */
		if (unlikely(ms_kind_kept(m)))
			ms_note_kind(r, m, 0);
		ms_table.init_stacks[r] = ms_site_stack(CALLER, LOAD(&ms_rec(r)->birth));
		/* the life the add began is ordered at the thread's clock
		 * (ms_table_add), and has no entry yet: this one comes next */
		ms_log_at(t, r, ms_order_retaking(t), CALLER, MS_OP_INIT, 0, 0, 0);
	}
	return rc;
}

/* The cases of a destroy that are not a plain life's end, out of line:
 * the plain one then keeps few registers across its calls. */
static __attribute__((noinline)) void destroy_held(struct ms_thread *t, pthread_mutex_t *m)
{
	/* glibc destroys a locked robust mutex too: this thread's hold of
	 * it ends with its life */
	ms_held_forget(t->ts, ms_table_find((uintptr_t)m));
}

static __attribute__((noinline)) int destroy_refused(struct ms_thread *t, pthread_mutex_t *m,
						     int rc, uintptr_t caller)
{
	uint32_t r;
	if (tracked(r = record_of_at(t, m, caller))) {
		/* glibc refused (EBUSY: it is locked); the mutex lives on */
		int saved = errno;
		ms_count_error(r, rc);
		ms_misuse(t, r, MS_M_DESTROY_LOCKED, caller, MS_OP_DESTROY, rc);
		errno = saved;
	}
	return rc;
}

static inline __attribute__((always_inline)) int mutex_destroy(pthread_mutex_t *m)
{
	struct ms_thread *t = recording();
	if (!t)
		return ms_real.mutex_destroy(m);
	int rc = ms_real.mutex_destroy(m);
	if (unlikely(rc))
		return destroy_refused(t, m, rc, CALLER);
	if (unlikely(t->ts->nheld))
		destroy_held(t, m);
	ms_table_remove((uintptr_t)m, CALLER); /* makes no system call */
	t = &ms_self; /* (the address again: fewer registers kept) */
	if (unlikely(t->finding_ended))
		ms_finding_life_ended_at(t, MS_ENDED_DESTROYED, CALLER);
	return 0;
}

/* glibc answers the wait with EINVAL before it looks at the mutex: an
 * invalid deadline.  Such a call has no release, no retake: only its
 * answer is counted. */
static inline int cond_refused(const struct timespec *abstime)
{
	return abstime && (unsigned long)abstime->tv_nsec >= 1000000000UL;
}

/* A condition wait lets the mutex go and takes it back before it returns.
 * The release ends the hold; the retake is an acquisition but never a
 * contention: glibc's wait for the condition and for the mutex are one
 * call, and the time is the condition's.  The plain case, the mutex held
 * by this thread at one level, is here; the others (a destroyed mutex,
 * one held at more levels, a robust one not made consistent, one the
 * thread does not hold) are in cond.c. */
#define COND_WAIT(how, clock, abstime)                                      \
	if (unlikely(cond_refused(abstime)))                                 \
		return refused_before_mutex(m, ms_cond_call(how, c, m, clock, abstime), \
					    MS_OP_COND_RELEASE, CALLER);     \
	struct ms_thread *t = recording();                                  \
	uint32_t r;                                                          \
	if (!t || (r = record_of(t, m)) == MS_REC_UNTRACKED)                 \
		return ms_cond_call(how, c, m, clock, abstime);              \
	struct ms_cond_wait cw_ = { t, r, m, CALLER };                       \
	if (unlikely(mutex_kind(m) == -1 ||                                  \
		     !mutex_owned_once(m, t->owned_once)))                   \
		return ms_cond_unusual(&cw_, c, how, clock, abstime);        \
	int saved = errno;                                                   \
	SERIAL_ADD(&ms_cold(r)->cond_waits, 1);                              \
	uint64_t birth_ = LOAD(&ms_rec(r)->birth);                            \
	uint32_t seq_ = ms_released(t, r, m, CALLER, MS_OP_COND_RELEASE);    \
	if (seq_) /* before the wait: it may be long */                      \
		ms_release_publish(r, birth_, seq_);                          \
	errno = saved;                                                       \
	int rc = ms_cond_wait_call(&cw_, c, how, clock, abstime);            \
	saved = errno;                                                       \
	ms_cond_retaken(&cw_, rc);                                           \
	errno = saved;                                                       \
	return rc

static inline __attribute__((always_inline)) MS_UNWOUND int cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	COND_WAIT(0, 0, NULL);
}

static inline __attribute__((always_inline)) MS_UNWOUND int cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
								  const struct timespec *abstime)
{
	COND_WAIT(1, 0, abstime);
}

MS_EXPORT MS_UNWOUND int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m,
				     clockid_t clock,
				     const struct timespec *abstime)
{
	if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
		return refused_before_mutex(m, ms_real.cond_clockwait(c, m, clock, abstime),
					    MS_OP_COND_RELEASE, CALLER);
	COND_WAIT(2, clock, abstime);
}

/* ---- thread joins ----------------------------------------------------------
 * A thread waiting to join another is blocked as surely as one waiting for
 * a mutex: the watchdog's STALL finding names the thread it waits for.
 * The join itself is glibc's, as the program called it.  A thread with no
 * record gets one (not counted as using mutexes until it does). */

static void join_over(void *arg)
{
	__atomic_store_n(&((struct ms_tstate *)arg)->join_target, 0, __ATOMIC_RELEASE);
}

/* how: 0 pthread_join, 1 pthread_timedjoin_np, 2 pthread_clockjoin_np */
static MS_UNWOUND __attribute__((noinline)) int
join_call(struct ms_tstate *ts, pthread_t th, void **ret, int how, clockid_t clock,
	  const struct timespec *abstime, uintptr_t caller)
{
	int rc;
	pthread_cleanup_push(join_over, ts); /* a join is a cancellation point */
	ts->join_caller = caller;
	ts->join_since = ms_ticks();
	ts->join_timed = how != 0;
	__atomic_store_n(&ts->join_target, (uintptr_t)th, __ATOMIC_RELEASE);
	rc = how == 0	? ms_real.thread_join(th, ret)
	     : how == 1 ? ms_real.thread_timedjoin(th, ret, abstime)
			: ms_real.thread_clockjoin(th, ret, clock, abstime);
	pthread_cleanup_pop(1);
	return rc;
}

/* The calling thread's record, made if need be; NULL: pass through. */
static struct ms_tstate *joiner(void)
{
	struct ms_thread *t = &ms_self;
	if (ms_start_lazily() || t->guard)
		return NULL;
	if (!t->ts) {
		int saved = errno;
		ms_guard_enter(t);
		t->ts = ms_tstate_new(t->tid ? t->tid : (uint32_t)syscall(SYS_gettid));
		if (t->ts)
			t->ts->join_only = 1;
		ms_guard_leave(t);
		errno = saved;
	}
	return t->ts;
}

MS_EXPORT MS_UNWOUND int pthread_join(pthread_t th, void **ret)
{
	struct ms_tstate *ts = joiner();
	if (!ts)
		return ms_real.thread_join(th, ret);
	return join_call(ts, th, ret, 0, 0, NULL, CALLER);
}

MS_EXPORT MS_UNWOUND int pthread_timedjoin_np(pthread_t th, void **ret,
					      const struct timespec *abstime)
{
	struct ms_tstate *ts = joiner();
	if (!ts)
		return ms_real.thread_timedjoin(th, ret, abstime);
	return join_call(ts, th, ret, 1, 0, abstime, CALLER);
}

MS_EXPORT MS_UNWOUND int pthread_clockjoin_np(pthread_t th, void **ret, clockid_t clock,
					      const struct timespec *abstime)
{
	struct ms_tstate *ts = joiner();
	if (!ts)
		return ms_real.thread_clockjoin(th, ret, clock, abstime);
	return join_call(ts, th, ret, 2, clock, abstime, CALLER);
}

/* ---- the entry points ------------------------------------------------------
 * The bodies above are inlined into each: CALLER (the return address) is
 * then the entry point's caller, the program's line. */

MS_EXPORT MS_UNWOUND int pthread_mutex_lock(pthread_mutex_t *m)
{
	return mutex_lock(m);
}

MS_EXPORT int pthread_mutex_trylock(pthread_mutex_t *m)
{
	return mutex_trylock(m);
}

MS_EXPORT MS_UNWOUND int pthread_mutex_timedlock(pthread_mutex_t *m,
				      const struct timespec *abstime)
{
	return mutex_timedlock(m, abstime);
}

MS_EXPORT int pthread_mutex_unlock(pthread_mutex_t *m)
{
	return mutex_unlock(m);
}

MS_EXPORT int pthread_mutex_init(pthread_mutex_t *m,
				 const pthread_mutexattr_t *attr)
{
	return mutex_init(m, attr);
}

MS_EXPORT int pthread_mutex_destroy(pthread_mutex_t *m)
{
	return mutex_destroy(m);
}

MS_EXPORT MS_UNWOUND int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	return cond_wait(c, m);
}

MS_EXPORT MS_UNWOUND int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
				     const struct timespec *abstime)
{
	return cond_timedwait(c, m, abstime);
}

/* Signals and broadcasts: counted by condition (core/cond_signals.h), then
 * glibc's.  (A live dump calls a chain of waits ending at a thread asleep
 * in a condition wait a DEADLOCK only if nobody signals that condition.) */
MS_EXPORT int pthread_cond_signal(pthread_cond_t *c)
{
	ms_cond_signalled(c);
	return ms_real.cond_signal(c);
}

MS_EXPORT int pthread_cond_broadcast(pthread_cond_t *c)
{
	ms_cond_signalled(c);
	return ms_real.cond_broadcast(c);
}

/* ---- C11 threads ------------------------------------------------------------
 * glibc's mtx_* and cnd_* call its pthread functions inside libc, where no
 * interposer sees them: a C11 program's mutexes went unrecorded.  So they
 * are entry points too, each the pthread call glibc makes, with its answer
 * mapped to thrd_* as glibc maps it -- unless a library of the program
 * defines these names itself (real.h): then its functions answer. */

static int thrd_answer(int rc)
{
	switch (rc) {
	case 0:
		return thrd_success;
	case ENOMEM:
		return thrd_nomem;
	case ETIMEDOUT:
		return thrd_timedout;
	case EBUSY:
		return thrd_busy;
	default:
		return thrd_error;
	}
}

/* glibc's mutex of each C11 type: recursive if asked for with plain or
 * timed, a normal one for anything else. */
MS_EXPORT int mtx_init(mtx_t *mtx, int type)
{
	if (unlikely(ms_c11_other()))
		return ms_c11_next.init(mtx, type);
	pthread_mutexattr_t attr;
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, type == (mtx_plain | mtx_recursive) ||
					 type == (mtx_timed | mtx_recursive)
						 ? PTHREAD_MUTEX_RECURSIVE
						 : PTHREAD_MUTEX_NORMAL);
	return thrd_answer(mutex_init((pthread_mutex_t *)mtx, &attr));
}

MS_EXPORT MS_UNWOUND int mtx_lock(mtx_t *mtx)
{
	if (unlikely(ms_c11_other()))
		return ms_c11_next.lock(mtx);
	return thrd_answer(mutex_lock((pthread_mutex_t *)mtx));
}

MS_EXPORT int mtx_trylock(mtx_t *mtx)
{
	if (unlikely(ms_c11_other()))
		return ms_c11_next.trylock(mtx);
	return thrd_answer(mutex_trylock((pthread_mutex_t *)mtx));
}

MS_EXPORT MS_UNWOUND int mtx_timedlock(mtx_t *restrict mtx, const struct timespec *restrict abstime)
{
	if (unlikely(ms_c11_other()))
		return ms_c11_next.timedlock(mtx, abstime);
	return thrd_answer(mutex_timedlock((pthread_mutex_t *)mtx, abstime));
}

MS_EXPORT int mtx_unlock(mtx_t *mtx)
{
	if (unlikely(ms_c11_other()))
		return ms_c11_next.unlock(mtx);
	return thrd_answer(mutex_unlock((pthread_mutex_t *)mtx));
}

MS_EXPORT void mtx_destroy(mtx_t *mtx)
{
	if (unlikely(ms_c11_other())) {
		ms_c11_next.destroy(mtx);
		return;
	}
	(void)mutex_destroy((pthread_mutex_t *)mtx);
}

MS_EXPORT MS_UNWOUND int cnd_wait(cnd_t *cnd, mtx_t *mtx)
{
	if (unlikely(ms_c11_other()))
		return ms_c11_next.cond_wait(cnd, mtx);
	return thrd_answer(cond_wait((pthread_cond_t *)cnd, (pthread_mutex_t *)mtx));
}

/* glibc's cnd_signal and cnd_broadcast answer thrd_success, as the pthread
 * calls they make answer 0. */
MS_EXPORT int cnd_signal(cnd_t *cnd)
{
	if (unlikely(ms_c11_other()))
		return ms_c11_next.cond_signal(cnd);
	ms_cond_signalled(cnd);
	return thrd_answer(ms_real.cond_signal((pthread_cond_t *)cnd));
}

MS_EXPORT int cnd_broadcast(cnd_t *cnd)
{
	if (unlikely(ms_c11_other()))
		return ms_c11_next.cond_broadcast(cnd);
	ms_cond_signalled(cnd);
	return thrd_answer(ms_real.cond_broadcast((pthread_cond_t *)cnd));
}

MS_EXPORT MS_UNWOUND int cnd_timedwait(cnd_t *restrict cnd, mtx_t *restrict mtx,
				       const struct timespec *restrict abstime)
{
	if (unlikely(ms_c11_other()))
		return ms_c11_next.cond_timedwait(cnd, mtx, abstime);
	return thrd_answer(cond_timedwait((pthread_cond_t *)cnd, (pthread_mutex_t *)mtx,
					  abstime));
}
