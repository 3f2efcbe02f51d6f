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

void ms_hold_flag(uint32_t r, int on);
uint32_t ms_release_begin(uint32_t r);
void ms_release_publish(uint32_t r, uint64_t birth, uint32_t seq);
void ms_blame_flush(struct ms_thread *t);
void ms_first_acquired(uint32_t r, uintptr_t caller);
void ms_hold_end(uint32_t r, uint64_t since);

#define MS_HOT static inline __attribute__((always_inline))

/* Where a call site's stack was captured: init and first-lock stacks
 * are shared by the mutexes of one call site once its first captures
 * agree (a program creating a million mutexes at one line pays for a few
 * captures, not a million).  Captures agree when they have the same
 * caller of the site's function (their second frame; deeper frames may
 * differ: a worker's function reached from main and from a thread is one
 * site).  A site whose captures name other callers is a wrapper --
 * uv_mutex_lock, a class's lock(), a C program's lock_or_die() -- called
 * from many places: each of its first MS_SITE_OWN mutexes gets a stack of
 * its own, so that the report says which caller each one had.  A site
 * taken as shared is captured again for one mutex life in 16, then 32,
 * 64 ... 1024 as those captures agree (picked by a hash of the life's
 * birth, which no loop makes periodic), so a wrapper whose first callers
 * happened to be one place is found later.  A capture that failed (a
 * fork under way, the depot full, no unwinder) says nothing of the site:
 * it is not counted, and an entry made from one is replaced by the next
 * good one.
 *
 * The lookup is inline, since every init and every first lock makes it;
 * the capture is not.  `check` is caller ^ id while the site's stack is
 * shared, and that ^ MS_SITE_CAPTURING while its captures go on (ids stay
 * below that bit, so no two entries' values alias); writers may race, and
 * `check` also ties an entry's caller to its id, so a reader never takes
 * one caller's id for another's. */
#define MS_SITE_CACHE 1024
#define MS_SITE_PROBE 4      /* agreeing captures before a site is shared */
#define MS_SITE_OWN 4096     /* stacks of their own at a site that varies */
#define MS_SITE_RECHECK_FIRST 15u   /* masks of the birth hash: 1 in 16 */
#define MS_SITE_RECHECK_LAST 1023u  /* ... to 1 in 1024 */
#define MS_SITE_VARIES 0x80000000u   /* in captures: a wrapper */
#define MS_SITE_FALLBACK 0x40000000u /* in captures: id is a failed capture's */
#define MS_SITE_CAPTURING 0x80000000u /* in check: not shared yet */
struct ms_site_entry {
	uintptr_t caller;
	uint32_t id, check;
	uint32_t captures; /* agreeing or not, | MS_SITE_VARIES, _FALLBACK */
	uint32_t recheck;  /* a shared site captures for lives whose birth
			      hash has none of these bits */
	uintptr_t second;  /* the first capture's second frame (0: none) */
};
extern struct ms_site_entry ms_site_cache[MS_SITE_CACHE];

static inline unsigned ms_site_slot(uintptr_t caller)
{
	return (unsigned)(caller >> 2) & (MS_SITE_CACHE - 1);
}

/* The stack to share at this call site for the mutex life born at
 * `birth` (ms_record), 0 if this life wants a capture. */
MS_HOT uint32_t ms_site_shared(uintptr_t caller, uint64_t birth)
{
	const struct ms_site_entry *e = &ms_site_cache[ms_site_slot(caller)];
	uint32_t id = LOAD(&e->id);
	if (LOAD(&e->caller) == caller && LOAD(&e->check) == ((uint32_t)caller ^ id) &&
	    ((uint32_t)((birth * 0x9e3779b97f4a7c15ull) >> 32) & LOAD(&e->recheck)))
		return id;
	return 0;
}

uint32_t ms_site_capture(uintptr_t caller);

/* In a first-lock or init stack: the stack is this call site's, captured
 * for an earlier mutex, so only its first frame is known to be this
 * mutex's (the report shows that one alone).  Depot ids stay below it. */
#define MS_SITE_SHARED 0x80000000u

/* The stack at this call site for the life born at `birth`: a capture's
 * id, or the site's shared one | MS_SITE_SHARED. */
MS_HOT uint32_t ms_site_stack(uintptr_t caller, uint64_t birth)
{
	uint32_t id = ms_site_shared(caller, birth);
	return likely(id) ? id | MS_SITE_SHARED : ms_site_capture(caller);
}

/* Just the call site, as a one-frame stack (never captures: report time,
 * and a self-deadlock's "taken at"). */
uint32_t ms_site_stack_known(uintptr_t caller);

/* Where a life first locked at `site` with first-lock stack `id` is
 * shown and summed once it ends: the site, or, for a wrapper's (a site
 * whose captures differed, as far as its cache entry still says) life
 * with a stack of its own, the wrapper's caller. */
uintptr_t ms_site_beyond_wrapper(uintptr_t site, uint32_t id);

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
		if (unlikely(n) && op != MS_OP_TRYLOCK && !ms_order_known(ts, r)) {
			ms_order_missed(t, ts, r, (uintptr_t)m, caller);
			n = ts->nheld; /* the note prunes what others unlocked */
		}
		if (likely(n < MS_HELD_MAX)) {
			ts->held[n].rec = r;
			ts->held[n].caller = caller;
			ts->held[n].since = 0;
			ts->nheld = n + 1;
			/* hold times, of mutexes that made a thread wait:
			 * the first MS_HOLD_EXACT, then one in MS_HOLD_SAMPLE.
			 * The start stays in this thread's held set and the
			 * flag in the record's line, which the holder has
			 * already: timing a hold writes no other line. */
			if (unlikely(rec->flags & MS_F_TIMED) && ms_hold_sampled(n_acq)) {
				ts->held[n].since = ms_ticks();
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
	ms_log_held(t, r, caller, op, waited, err, ticks);
}

/* The thread is about to let go of the mutex (the last level of it).
 * Returns a release number if a sampled waiter waits: the caller then
 * calls ms_release_publish() once the mutex is free, so the capture of
 * its stack never lengthens the critical section. */
MS_HOT uint32_t ms_released(struct ms_thread *t, uint32_t r, uintptr_t caller,
			    unsigned op)
{
	struct ms_record *rec = ms_rec(r);
	struct ms_tstate *ts = t->ts;
	uint32_t seq = 0, n = ts->nheld;
	uint64_t since; /* of a timed hold, else 0 */
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
	if (unlikely(rec->flags & MS_F_WAITERS))
		seq = ms_release_begin(r);
	ms_log_holder(t, r, caller, op);
	return seq;
}

/* Slow paths, in record.c. */
uint32_t ms_first_use(struct ms_thread *t, pthread_mutex_t *m,
		      uintptr_t caller);
void ms_undo_unrecoverable_try(pthread_mutex_t *m);
void ms_note_kind(uint32_t r, const pthread_mutex_t *m, uint32_t extra);
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
/* For the report: the newest operation of r's current life that made a
 * misuse of this kind, from the side ring; 0 if none is left. */
int ms_misuse_last(uint32_t r, enum ms_misuse kind, struct ms_op_view *out);
void ms_count_error(uint32_t r, int err);
void ms_misuse(struct ms_thread *t, uint32_t r, enum ms_misuse kind,
	       uintptr_t caller, unsigned op, int err);

#endif
