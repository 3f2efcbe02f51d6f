/* record.h - what one operation does to a mutex's record.
 *
 * ms_acquired() and ms_released() run on every lock and unlock that succeed
 * without waiting, so they are inline, touch only the record's line, the
 * history entry and the thread's TLS, and use no locked instruction: the
 * thread holding the mutex is the only one changing these fields.  Whatever
 * needs a clock, an atomic counter or the cold part lives in record.c. */
#ifndef MUTEXSTAT_RECORD_H
#define MUTEXSTAT_RECORD_H

#include "base/clock.h"
#include "analysis/order.h"
#include "core/table.h"
#include "core/thread.h"
#include "core/thread_pool.h"
#include "stacks/site.h"

void ms_hold_flag(uint32_t r, int on);
uint32_t ms_release_begin(uint32_t r);
void ms_release_publish(uint32_t r, uint64_t birth, uint32_t seq);
void ms_blame_flush(struct ms_thread *t);
/* Reads the publications of the releases a pending blame of t was behind
 * (record.c) that are there (or overwritten) into pend_got; returns
 * whether some are yet to come.  One look, no wait: called as soon as they
 * may be there -- as the wait ends, and before each release of t's (once
 * it lets go, others' releases can overwrite them while t captures its own
 * stack or waits to run). */
int ms_blame_pickup(struct ms_thread *t);
void ms_first_acquired(uint32_t r, uintptr_t caller);
/* Record rec's life was first locked at caller, with first-lock stack
 * `stack` (ms_site_stack's).  The stack before the caller: an interval
 * that reads the caller has the stack too, and so the life's site
 * (interval_lines.c). */
MS_HOT void ms_first_acquired_at(struct ms_record *rec, uintptr_t caller, uint32_t stack)
{
	rec->first_stack = stack;
	__atomic_store_n(&rec->first_caller, caller, __ATOMIC_RELEASE);
}
void ms_hold_end(uint32_t r, uint64_t since);

/* The next main-history entry of record r (rec), written by the mutex's
 * holder, thread t (tid), with order o, which becomes the mutex's (the
 * entry says it: ms_mutex_order) and the thread's.  The hot paths pass rec
 * and tid they have in registers: the compiler cannot tell that the
 * stores before do not change them. */
MS_HOT void ms_log_rec(struct ms_thread *t, uint32_t tid, uint32_t r,
		       struct ms_record *rec, uint64_t o, uintptr_t caller,
		       unsigned op, int waited, int err, uint64_t ticks)
{
	t->clock = o;
	uint32_t pos = rec->ops++;
	struct ms_op *e = ms_history_at(r, pos);
	ms_op_write(e, ms_history_ticks(e), o, tid, caller, op, waited, err,
		    ticks);
}

MS_HOT void ms_log_at(struct ms_thread *t, uint32_t r, uint64_t o,
		      uintptr_t caller, unsigned op, int waited, int err,
		      uint64_t ticks)
{
	ms_log_rec(t, t->tid, r, ms_rec(r), o, caller, op, waited, err, ticks);
}

/* The order of an operation that takes the mutex (or happens at init):
 * after everything this thread and the mutex have seen (a Lamport
 * clock). */
MS_HOT uint64_t ms_order_taking(const struct ms_thread *t, uint32_t r,
				const struct ms_record *rec)
{
	uint64_t seen = ms_mutex_order(r, rec);
	return (t->clock > seen ? t->clock : seen) + 1;
}

/* The order of an operation that takes a mutex this thread had last: the
 * thread's clock is past the mutex's already, as after its release, since
 * only a holder moves the mutex's order (a new life has no last holder; a
 * new thread's clock starts past the ended ones', thread.c). */
MS_HOT uint64_t ms_order_retaking(const struct ms_thread *t)
{
	return t->clock + 1;
}

MS_HOT void ms_log_held(struct ms_thread *t, uint32_t r, uintptr_t caller,
			unsigned op, int waited, int err, uint64_t ticks)
{
	ms_log_at(t, r, ms_order_taking(t, r, ms_rec(r)), caller, op, waited,
		  err, ticks);
}

/* An operation by the thread holding the mutex (a release, an inner
 * level): the thread's clock is past the mutex's already, because it took
 * the mutex and only a holder moves the mutex's order (a reset leaves it
 * where it is). */
MS_HOT void ms_log_holder(struct ms_thread *t, uint32_t r, uintptr_t caller,
			  unsigned op)
{
	ms_log_at(t, r, t->clock + 1, caller, op, 0, 0, 0);
}

/* What ms_acquired() comes down to when the thread holds no other lock
 * and does not time this hold: a few stores to the record, the thread's
 * held set and the history, in order o.  held[0].since is 0 already: an
 * entry's start is cleared as a timed hold leaves the held set.  The
 * plain case of a mutex's lock paths (interpose.c) and a spin lock's
 * (interpose_rw.c). */
MS_HOT void ms_acquired_plain(struct ms_thread *t, uint32_t tid,
			      struct ms_tstate *ts, struct ms_record *rec,
			      uint32_t r, uintptr_t caller, unsigned op,
			      uint64_t o)
{
	volatile struct ms_held *h = ms_held_push(ts, 0);
	h->rec = r;
	h->caller = caller;
	rec->acquisitions++;
	rec->owner = t->tid_held;
	ms_log_rec(t, tid, r, rec, o, caller, op, 0, 0, 0);
}

/* What ms_released() comes down to when the lock is the top of the
 * thread's held set (n, 0-based) and no waiter's stack is sampled and the
 * hold is not timed: the held set one shorter, the owner field's holder
 * bit off, the history entry (ms_log_holder's) of operation op.  The
 * plain case of a mutex's unlock path (interpose.c), a spin lock's
 * (interpose_rw.c) and a write lock's (write_plain.h). */
MS_HOT void ms_released_plain(struct ms_thread *t, struct ms_tstate *ts,
			      uint32_t n, uint32_t r, struct ms_record *rec,
			      uintptr_t caller, unsigned op)
{
	uint32_t tid = t->tid;
	ts->nheld = n;
	rec->owner = tid;
	ms_log_rec(t, tid, r, rec, t->clock + 1, caller, op, 0, 0, 0);
}

/* The thread now holds the mutex.  If it already did (a recursive
 * mutex), that is not an owner change and the hold goes on.  Otherwise the
 * mutex joins the thread's held set, after lock-order edges from the
 * mutexes already there (none for a trylock: it cannot block). */
MS_HOT void ms_acquired(struct ms_thread *t, uint32_t r, const void *m,
			uintptr_t caller, unsigned op, int waited, int err,
			uint64_t ticks)
{
	struct ms_record *rec = ms_rec(r);
	uint32_t prev = rec->owner;
	uint64_t n_acq = ++rec->acquisitions;
	if (likely(prev != t->tid_held)) {
		struct ms_tstate *ts = t->ts;
		uint32_t n = ts->nheld;
		if (unlikely(n) && !ms_op_try(op) && !ms_order_known(ts, r)) {
			ms_order_missed(t, ts, r, (uintptr_t)m, caller);
			n = ts->nheld; /* the note prunes what others unlocked */
		}
		if (likely(n < MS_HELD_MAX)) {
			volatile struct ms_held *h = ms_held_push(ts, n);
			h->rec = r;
			h->caller = caller; /* its since is 0 already (held[]) */
			/* hold times, of mutexes that made a thread wait:
			 * the first MS_HOLD_EXACT, then one in MS_HOLD_SAMPLE.
			 * The start stays in this thread's held set and the
			 * flag in the record's line, which the holder has
			 * already: timing a hold writes no other line. */
			if (unlikely(rec->flags & MS_F_TIMED) && ms_hold_sampled(n_acq)) {
				h->since = ms_ticks();
				ms_hold_flag(r, 1);
			}
		} else
			ts->overflow++;
	}
	if (unlikely(prev != t->tid)) {
		if (prev != t->tid_held) {
			if (prev)
				rec->owner_changes++;
			else if (!rec->first_caller)
				ms_first_acquired(r, caller);
		}
	}
	rec->owner = t->tid_held;
	/* A lock this thread let go of last: its clock is past the lock's
	 * already (ms_order_retaking), and the newest entry need not be read
	 * -- unless it is a read-write lock, whose readers write entries
	 * without becoming its owner. */
	uint64_t o = prev == t->tid && ms_lock_class(rec->flags) != MS_CLASS_RWLOCK
			     ? ms_order_retaking(t)
			     : ms_order_taking(t, r, rec);
	ms_log_at(t, r, o, caller, op, waited, err, ticks);
}

/* The thread is about to let go of the lock (the last level of it): m if
 * it is a mutex, else NULL.  Returns a release number if a sampled waiter
 * waits and this unlock may let it in: the caller then calls
 * ms_release_publish() once the lock is free, so the capture of its stack
 * never lengthens the critical section.  Of a mutex's unlocks only one
 * that wakes a sleeper lets a waiter in (mutex_unlock_lets_in): while the
 * woken one gets to run, other threads may take the mutex and let it go
 * many times, and each of those took a number and captured its stack --
 * 7,911 captures for 11 contention events in one program, whose newer
 * numbers overwrote the publication a waiter was to read. */
MS_HOT uint32_t ms_released(struct ms_thread *t, uint32_t r, const pthread_mutex_t *m,
			    uintptr_t caller, unsigned op)
{
	struct ms_record *rec = ms_rec(r);
	struct ms_tstate *ts = t->ts;
	uint32_t seq = 0, n = ts->nheld;
	uint64_t since; /* of a timed hold, else 0 */
	if (unlikely(t->pend))
		ms_blame_pickup(t);
	if (likely(n && n <= MS_HELD_MAX && ts->held[n - 1].rec == r)) {
		since = ts->held[n - 1].since;
		ts->held[n - 1].since = 0; /* for the lock path's plain case */
		ts->nheld = n - 1;
	} else /* out of order */
		since = ms_held_remove(ts, r);
	rec->owner = t->tid;
	if (unlikely(since))
		ms_hold_end(r, since);
	else if (unlikely(rec->flags & MS_F_HOLD_TIMED))
		ms_hold_flag(r, 0); /* stale: see ms_hold_flag() */
	if (unlikely(rec->flags & MS_F_WAITERS) && (!m || mutex_unlock_lets_in(m)))
		seq = ms_release_begin(r);
	ms_log_holder(t, r, caller, op);
	return seq;
}

/* A wait for a lock of any kind, from its start to its end (record.c):
 * the caller fills t, r, lock, caller, op, call (glibc's blocking call
 * for op) and cancelled (what a cancellation in the wait leaves: at least
 * ms_wait_cancelled); ms_wait_begin notes the lock-order edge, the
 * waiters and the live dump's view, ms_wait_call blocks (asynchronous
 * cancellation as the program has it), ms_wait_end counts the wait if
 * got (by the mode of op) and returns the time. */
struct ms_wait {
	struct ms_thread *t;
	uint32_t r;
	void *lock;
	uintptr_t caller;
	unsigned op;
	int (*call)(void *lock, unsigned op, clockid_t clock, const struct timespec *abstime);
	void (*cancelled)(const struct ms_wait *w);
	int sampled;
	uint32_t mine; /* the waiter's stack, if sampled */
	uint32_t releases; /* the lock's numbered releases when it began */
	uint64_t start;
	int no_deadline; /* a timed op given none (NULL): glibc waits for ever */
};

/* Whether the wait gives up at a deadline. */
static inline int ms_wait_has_deadline(const struct ms_wait *w)
{
	return ms_op_deadline(w->op) && !w->no_deadline;
}
void ms_wait_begin(struct ms_wait *w);
MS_UNWOUND int ms_wait_call(struct ms_wait *w, clockid_t clock,
			    const struct timespec *abstime);
uint64_t ms_wait_end(struct ms_wait *w, int got);
void ms_wait_cancelled(const struct ms_wait *w);
void ms_wait_timed_out(uint32_t r, uint64_t waited);
/* A wait for a lock the thread holds itself, which never ends (or at its
 * deadline): the finding first, then glibc's call (kind: findings.h's
 * enum ms_self_kind). */
MS_UNWOUND int ms_wait_self(struct ms_wait *w, int kind, clockid_t clock,
			    const struct timespec *abstime);
/* A timed read hold of a read-write lock ends (record.c). */
void ms_read_hold_end(uint32_t r, uint64_t since);

/* Slow paths, in record.c. */
/* A mutex whose record is of another kind of lock: memory that held a
 * read-write or spin lock, never destroyed, used as a mutex with no init
 * (a static initialiser, a std::mutex).  That life ends, the mutex's
 * begins, first seen now; MS_REC_UNTRACKED if it is not recorded. */
uint32_t ms_first_use_again(struct ms_thread *t, pthread_mutex_t *m, uintptr_t caller);
/* The life of key's record, of another kind of lock, ends and one as
 * lock_class begins (ms_table_renew_as: not if another thread began it),
 * a finding that kept the old life told where; MS_REC_UNTRACKED if the
 * address has no record. */
uint32_t ms_life_renew(struct ms_thread *t, uintptr_t key, unsigned lock_class,
		       uintptr_t caller);
uint32_t ms_first_use(struct ms_thread *t, pthread_mutex_t *m,
		      uintptr_t caller);
void ms_undo_unrecoverable_try(pthread_mutex_t *m);
void ms_note_kind(uint32_t r, const pthread_mutex_t *m, uint32_t extra);
/* Mutex m's kind as the record keeps it (at MS_F_KIND_SHIFT); 0 for a
 * normal mutex, whose init then need not note it. */
static inline uint32_t ms_kind_kept(const pthread_mutex_t *m)
{
	return (uint32_t)mutex_kind(m) & 0x3ff;
}
int ms_lock_slow(struct ms_thread *t, uint32_t r, pthread_mutex_t *m, int rc,
		 uintptr_t caller, unsigned op, clockid_t clock,
		 const struct timespec *abstime);
int ms_lock_direct(struct ms_thread *t, uint32_t r, pthread_mutex_t *m,
		   uintptr_t caller, unsigned op, clockid_t clock,
		   const struct timespec *abstime);
int ms_trylock_failed(struct ms_thread *t, uint32_t r, pthread_mutex_t *m,
		      int rc, uintptr_t caller);
int ms_unlock_slow(struct ms_thread *t, uint32_t r, pthread_mutex_t *m,
		   uintptr_t caller);
void ms_log_other(struct ms_thread *t, uint32_t r, uintptr_t caller,
		  unsigned op, int err);
void ms_count_error(uint32_t r, int err);
/* An init or destroy ended a life a finding holds (t->finding_ended):
 * the finding learns where (MS_ENDED_*). */
void ms_finding_life_ended_at(struct ms_thread *t, int how, uintptr_t caller);
void ms_misuse(struct ms_thread *t, uint32_t r, enum ms_misuse kind,
	       uintptr_t caller, unsigned op, int err);

#endif
