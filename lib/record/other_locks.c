/* other_locks.c - read holds, waits, relocks and misuse of read-write and
 * spin locks; see other_locks.h.  What glibc keeps in a lock that we read:
 * an rwlock's writer (__cur_writer, the thread id glibc itself checks for
 * EDEADLK), its readers (__readers above its three flag bits) and kind
 * (__flags); a spin lock's word (real.h's ms_spin_held). */
#include "record/other_locks.h"
#include "record/read_plain.h"
#include "analysis/findings.h"
#include "base/clock.h"
#include "base/options.h"
#include "glibc/real.h"
#include "glibc/real_rw.h"
#include "stacks/site.h"
#include "stacks/stack.h"

#include <errno.h>

static void note_class(uint32_t r, uint32_t bits)
{
	if ((LOAD(&ms_rec(r)->flags) & bits) != bits)
		__atomic_fetch_or(&ms_rec(r)->flags, bits, __ATOMIC_RELAXED);
}

void ms_note_rwlock(uint32_t r, const pthread_rwlock_t *l, uint32_t extra)
{
	uint32_t kind = (LOAD(&l->__data.__flags) & 3) |
			(LOAD(&l->__data.__shared) ? MS_KIND_PSHARED : 0);
	note_class(r, (uint32_t)MS_CLASS_RWLOCK << MS_F_CLASS_SHIFT |
			      kind << MS_F_KIND_SHIFT | extra);
}

void ms_note_spin(uint32_t r, uint32_t extra)
{
	note_class(r, (uint32_t)MS_CLASS_SPIN << MS_F_CLASS_SHIFT | extra);
}

uint32_t ms_first_use_of(struct ms_thread *t, const void *lock, unsigned lock_class,
			 uintptr_t caller)
{
	/* (the kind left out: also where the memory held a lock of another
	 * kind, which record_of_kind found in the thread's cache) */
	if (!lock || ms_stack_helper_code(caller) || !(ms_opt.track & (1u << lock_class)))
		return MS_REC_UNTRACKED;
	uint32_t r = ms_table_add((uintptr_t)lock, 0, &t->clock);
	if (r == MS_REC_UNTRACKED || r == MS_REC_NONE)
		return MS_REC_UNTRACKED;
	uint32_t extra = t->added_new ? MS_F_STATIC : 0;
	uint32_t flags = LOAD(&ms_rec(r)->flags);
	if (!t->added_new && ms_lock_class(flags) != lock_class &&
	    (ms_rec_acquisitions(r) + LOAD(&ms_rec(r)->ops) ||
	     ms_lock_class(flags) != MS_CLASS_MUTEX)) {
		/* the memory held a lock of another kind, never destroyed:
		 * this one is a new life, first seen now (unless a thread
		 * that raced this one to a static lock's first use has noted
		 * its class: ms_life_renew looks under the table's lock).
		 * So too after a read-write or spin lock life whose calls all
		 * failed (none counted in ops): its class noted, this one's
		 * added to it would make a class of neither.  A mutex's
		 * class is none noted: a record made for a name alone keeps
		 * its name. */
		if ((r = ms_life_renew(t, (uintptr_t)lock, lock_class, caller)) == MS_REC_UNTRACKED)
			return MS_REC_UNTRACKED;
		extra = MS_F_STATIC;
	}
	if (lock_class == MS_CLASS_RWLOCK)
		ms_note_rwlock(r, lock, extra);
	else
		ms_note_spin(r, extra);
	return r;
}

/* ---- read holds ----------------------------------------------------------
 * Readers hold the lock together, so what a read writes of the lock's own
 * is written by several threads at once, each write a line that moves
 * between their CPUs where glibc's lock moves one.  A read of a lock with
 * a slot (ms_read_stats) writes one word of ours, its slot's read_ops --
 * its count and two positions of the reads' own history at once, its
 * entry's and its unlock's, which the held set keeps -- and that history's
 * line.  The record's line and the main history are the writers': a read
 * only reads them (its order, the first lock, whether holds are timed).
 * A lock whose life found no slot (the pool spent) counts its reads in the
 * record and writes them in the main history, as a writer.  Every other
 * number of a read is read, or written only when it changes (the most
 * readers at once, the first lock), or on the slow paths. */

/* Record r's slot, or NULL: none to be had in this life. */
static inline struct ms_read_stats *read_slot(uint32_t r, const struct ms_record *rec)
{
	if (unlikely(LOAD(&rec->flags) & MS_F_READS_SPENT))
		return NULL;
	return ms_reads(r);
}

/* ... without a slot: past the newest entry of the main history, which
 * readers write too (one being written, or a position another reader
 * keeps for its unlock, reads 0 and is not waited for). */
static uint64_t reader_order_main(struct ms_thread *t, uint32_t r, const struct ms_record *rec,
				  uint32_t ops)
{
	uint64_t o = t->clock;
	if (ops) {
		const struct ms_op *e = ms_history_at(r, ops - 1);
		uint64_t last = __atomic_load_n(&e->stamp, __ATOMIC_ACQUIRE) >> MS_OP_TID_BITS;
		o = last > o ? last : o;
	} else if (LOAD(&rec->seq) > o)
		o = LOAD(&rec->seq);
	t->clock = ++o;
	return o;
}

static void main_entry(struct ms_thread *t, uint32_t r, uint32_t pos, uint64_t o,
		       uintptr_t caller, unsigned op, int waited, uint64_t ticks)
{
	struct ms_op *e = ms_history_at(r, pos);
	ms_op_write(e, ms_history_ticks(e), o, t->tid, caller, op, waited, 0, ticks);
}

/* A read hold begins: its numbers and lock order.  Returns the read's
 * number in its life, and in *rd_out the slot whose history has its
 * entries (NULL: the main history has them). */
static uint64_t read_begins(struct ms_thread *t, uint32_t r, struct ms_record *rec,
			    struct ms_read_stats **rd_out, const void *lock, uintptr_t caller,
			    unsigned op)
{
	/* glibc's count, read first, from the line its lock just wrote,
	 * before other readers take it back; the most is kept in the slot,
	 * which one reader alone never reads */
	uint32_t readers = ms_rw_readers(lock);
	struct ms_read_stats *rd = read_slot(r, rec);
	uint64_t n_acq = rd ? __atomic_add_fetch(&rd->read_ops, 2, __ATOMIC_RELAXED) / 2
			    : __atomic_add_fetch(&rec->acquisitions, 1, __ATOMIC_RELAXED);
	if (unlikely(!LOAD(&rec->first_caller)) ||
	    (readers > 1 && rd && readers > LOAD(&rd->readers_max)))
		ms_read_rare(rec, rd, readers, caller);
	if (unlikely(op == MS_OP_TRYRDLOCK)) { /* counted in both, as every number */
		ATOMIC_ADD(&ms_cold(r)->trylock_ok, 1);
		if (rd)
			ATOMIC_ADD(&rd->trylock_ok, 1);
	}
	struct ms_tstate *ts = t->ts;
	if (unlikely(ts->nheld) && !ms_op_try(op)) /* (a recursive read adds no edge: order.c) */
		ms_order_note_mode(t, ts, r, (uintptr_t)lock, caller, 1);
	*rd_out = rd;
	return n_acq;
}

void ms_read_acquired(struct ms_thread *t, uint32_t r, const void *lock, uintptr_t caller,
		      unsigned op, int waited, uint64_t ticks)
{
	struct ms_record *rec = ms_rec(r);
	struct ms_tstate *ts = t->ts;
	struct ms_read_stats *rd;
	uint64_t n_acq = read_begins(t, r, rec, &rd, lock, caller, op);
	uint32_t n = ts->nheld; /* the note prunes what others unlocked */
	uint32_t pos, mode;
	if (likely(rd)) {
		/* positions n_acq * 2 - 2 and - 1: its entry and its unlock's */
		uint64_t p = n_acq * 2 - 2;
		uint64_t o = ms_reader_order(t, rd);
		if (unlikely(n >= MS_HELD_MAX))
			/* not followed: its unlock takes a main position */
			__atomic_store_n(&ms_read_ring_at(rd, p + 1)->stamp, 0, __ATOMIC_RELAXED);
		ms_read_entry(t, rd, p, o, caller, op, waited, ticks);
		mode = ms_read_mode(rd, p + 1);
	} else {
		uint64_t o = reader_order_main(t, r, rec, LOAD(&rec->ops));
		if (likely(n < MS_HELD_MAX)) {
			pos = __atomic_fetch_add(&rec->ops, 2, __ATOMIC_RELAXED);
			/* the unlock's position reads empty until it is written */
			__atomic_store_n(&ms_history_at(r, pos + 1)->stamp, 0, __ATOMIC_RELAXED);
			main_entry(t, r, pos, o, caller, op, waited, ticks);
			mode = MS_HELD_READ | (pos + 1) << MS_HELD_POS_SHIFT;
		} else {
			pos = __atomic_fetch_add(&rec->ops, 1, __ATOMIC_RELAXED);
			main_entry(t, r, pos, o, caller, op, waited, ticks);
			mode = 0;
		}
	}
	if (likely(n < MS_HELD_MAX)) {
		volatile struct ms_held *h = ms_held_push(ts, n);
		h->rec = r;
		h->mode = mode;
		h->caller = caller;
		if (unlikely(LOAD(&rec->flags) & MS_F_TIMED) && ms_hold_sampled(n_acq))
			h->since = ms_ticks();
	} else
		ts->overflow++;
}

int ms_holds_read(const struct ms_tstate *ts, uint32_t r)
{
	for (uint32_t i = ts->nheld < MS_HELD_MAX ? ts->nheld : MS_HELD_MAX; i-- > 0;)
		if (ts->held[i].rec == r && ms_held_read_live(r, ts->held[i].mode))
			return 1;
	return 0;
}

uint32_t ms_read_released(struct ms_thread *t, uint32_t r, const pthread_rwlock_t *l,
			  uintptr_t caller)
{
	struct ms_tstate *ts = t->ts;
	struct ms_record *rec = ms_rec(r);
	uint32_t n = ts->nheld, mode = 0;
	uint64_t since;
	if (unlikely(t->pend))
		ms_blame_pickup(t);
	if (likely(n && n <= MS_HELD_MAX && ts->held[n - 1].rec == r)) {
		since = ts->held[n - 1].since;
		mode = ts->held[n - 1].mode;
		ts->held[n - 1].since = 0; /* see held[] */
		ts->held[n - 1].mode = 0;
		ts->nheld = n - 1;
	} else { /* out of order */
		for (uint32_t i = n < MS_HELD_MAX ? n : MS_HELD_MAX; i-- > 0;)
			if (ts->held[i].rec == r) {
				mode = ts->held[i].mode;
				break;
			}
		since = ms_held_remove(ts, r);
	}
	if (unlikely(since))
		ms_read_hold_end(r, since);
	/* Only the last reader out lets a waiter in: a writer waiting
	 * behind readers picks up the stack of the release numbered last
	 * before it got the lock.  The others take no number and capture
	 * no stack -- each read unlock did while a writer waited, the most
	 * of what a read cost then, and with four numbers a stack's
	 * publication was overwritten before its waiter read it.  Two
	 * readers leaving at once may each see the other: neither takes a
	 * number, and the waiter's wait is not attributed (ms_wait_end: a
	 * release numbered before its wait began let another thread in). */
	uint32_t seq = 0;
	if (unlikely(LOAD(&rec->flags) & MS_F_WAITERS) && ms_rw_readers(l) <= 1)
		seq = ms_release_begin(r);
	uint32_t pos = mode >> MS_HELD_POS_SHIFT;
	uint64_t o = t->clock + 1; /* past its lock's entry, as a holder's */
	t->clock = o;
	if (likely(mode & MS_HELD_RING)) {
		const struct ms_read_stats *rd = ms_reads_held(r, mode >> MS_HELD_LIFE_SHIFT);
		if (likely(rd)) {
			ms_read_entry(t, rd, pos & MS_HELD_RING_POS, o, caller,
				      MS_OP_RDUNLOCK, 0, 0);
			return seq;
		}
		pos = 0;
	}
	if (unlikely(!pos))
		pos = __atomic_fetch_add(&rec->ops, 1, __ATOMIC_RELAXED);
	main_entry(t, r, pos, o, caller, MS_OP_RDUNLOCK, 0, 0);
	return seq;
}

/* The newest order among the reads' entries, past which a writer's goes:
 * the writer holds the lock, so every read is over and its entries are
 * written.  Looked at only when reads came since the last writer's look
 * (a writer alone, or writers by turns, reads one word). */
static __attribute__((noinline)) void after_reads(struct ms_thread *t,
						  struct ms_read_stats *rd, uint64_t ops)
{
	uint64_t newest = ms_read_ring_newest(rd, ops);
	if (newest > t->clock)
		t->clock = newest;
	STORE(&rd->read_ops_seen, ops);
}

void ms_write_counted(struct ms_thread *t, uint32_t r)
{
	struct ms_read_stats *rd = read_slot(r, ms_rec(r));
	if (rd) {
		SERIAL_ADD(&rd->writes, 1);
		uint64_t ops = LOAD(&rd->read_ops);
		if (ops != LOAD(&rd->read_ops_seen))
			after_reads(t, rd, ops);
	}
}

/* ---- read-write locks: waits, relocks, failures ----------------------- */

int ms_rwlock_call(pthread_rwlock_t *l, unsigned op, clockid_t clock,
		   const struct timespec *abstime)
{
	switch (op) {
	case MS_OP_RDLOCK:
		return ms_real_rw.rdlock(l);
	case MS_OP_TIMEDRDLOCK:
		return ms_real_rw.timedrdlock(l, abstime);
	case MS_OP_CLOCKRDLOCK:
		return ms_real_rw.clockrdlock(l, clock, abstime);
	case MS_OP_TIMEDWRLOCK:
		return ms_real_rw.timedwrlock(l, abstime);
	case MS_OP_CLOCKWRLOCK:
		return ms_real_rw.clockwrlock(l, clock, abstime);
	default:
		return ms_real_rw.wrlock(l);
	}
}

static int call_rwlock(void *lock, unsigned op, clockid_t clock, const struct timespec *abstime)
{
	return ms_rwlock_call(lock, op, clock, abstime);
}

/* glibc answered a lock (not a try) with rc, after a wait or not. */
static int rw_finish(struct ms_thread *t, uint32_t r, pthread_rwlock_t *l, int rc,
		     uintptr_t caller, unsigned op, int waited, uint64_t now)
{
	int read = ms_op_read_mode(op);
	if (rc == 0) {
		if (read) /* the wait counted its contention (add_read_wait) */
			ms_read_acquired(t, r, l, caller, op, waited, now);
		else {
			if (waited)
				SERIAL_ADD(&ms_cold(r)->contended, 1);
			ms_write_counted(t, r);
			ms_acquired(t, r, l, caller, op, waited, 0, now);
		}
		return 0;
	}
	if (rc == ETIMEDOUT) {
		ATOMIC_ADD(&ms_cold(r)->timeouts, 1);
		struct ms_read_stats *rd = read ? ms_reads(r) : NULL;
		if (rd)
			ATOMIC_ADD(&rd->timeouts, 1);
	} else
		ms_count_error(r, rc);
	ms_log_other(t, r, caller, op, rc);
	return rc;
}

/* Cancelled in a write wait: glibc may have made it the writer. */
static void rw_wait_cancelled(const struct ms_wait *w)
{
	int saved = errno;
	ms_wait_cancelled(w);
	pthread_rwlock_t *l = w->lock;
	if (!ms_op_read_mode(w->op) && ms_rw_writer(l) == (int)w->t->tid)
		rw_finish(w->t, w->r, l, 0, w->caller, w->op, 1, ms_ticks());
	errno = saved;
}

MS_UNWOUND int ms_rwlock_slow(struct ms_thread *t, uint32_t r, pthread_rwlock_t *l, int rc,
			      uintptr_t caller, unsigned op, clockid_t clock,
			      const struct timespec *abstime)
{
	int saved = errno;
	ms_async_defer(t);
	struct ms_wait w = { .t = t, .r = r, .lock = l, .caller = caller, .op = op,
			     .call = call_rwlock, .cancelled = rw_wait_cancelled,
			     .no_deadline = !abstime };
	int read = ms_op_read_mode(op);
	if (rc != EBUSY) {
		/* the reader limit (EAGAIN): glibc's lock answers the same */
		errno = saved;
		rc = ms_rwlock_call(l, op, clock, abstime);
		saved = errno;
		rc = rw_finish(t, r, l, rc, caller, op, 0, 0);
	} else if (ms_rw_writer(l) == (int)t->tid) {
		/* the writer locks again: glibc refuses (EDEADLK), a MISUSE */
		errno = saved;
		rc = ms_rwlock_call(l, op, clock, abstime);
		saved = errno;
		if (rc == EDEADLK)
			ms_finding_self_deadlock(t->ts, r, (uintptr_t)l, MS_SELF_REFUSED);
		rc = rw_finish(t, r, l, rc, caller, op, 0, 0);
	} else if (!read && ms_holds_read(t->ts, r)) {
		/* a write lock by a reader waits for itself: for ever, or to
		 * the deadline */
		errno = saved;
		rc = ms_wait_self(&w, ms_wait_has_deadline(&w) ? MS_SELF_TIMEOUT : MS_SELF_FOREVER,
				  clock, abstime);
		saved = errno;
		rc = rw_finish(t, r, l, rc, caller, op, 0, 0);
	} else {
		/* a writer behind readers: how long they keep writers out */
		int behind_readers = !read && ms_rw_readers_holding(l);
		struct ms_read_stats *rd = behind_readers ? ms_reads(r) : NULL;
		ms_wait_begin(&w);
		errno = saved;
		rc = ms_wait_call(&w, clock, abstime);
		saved = errno;
		uint64_t now = ms_wait_end(&w, rc == 0);
		/* in the totals once it ends, as every wait is (a live dump
		 * of a writer stuck behind readers read "1 time, 0 ns"): its
		 * time, got or timed out */
		if (rd) {
			ATOMIC_ADD(&rd->writes_behind_readers, 1);
			ATOMIC_ADD(&rd->writes_behind_readers_total, now - w.start);
		}
		if (rc == ETIMEDOUT) {
			ms_wait_timed_out(r, now - w.start);
			struct ms_read_stats *rs = read ? ms_reads(r) : NULL;
			if (rs)
				ATOMIC_ADD(&rs->timeout_wait_total, now - w.start);
		}
		rc = rw_finish(t, r, l, rc, caller, op, 1, now);
	}
	ms_async_resume(t);
	errno = saved;
	return rc;
}

int ms_rwlock_try_failed(struct ms_thread *t, uint32_t r, int rc, uintptr_t caller,
			 unsigned op)
{
	int saved = errno;
	if (rc == EBUSY) {
		ATOMIC_ADD(&ms_cold(r)->trylock_busy, 1);
		struct ms_read_stats *rd = op == MS_OP_TRYRDLOCK ? ms_reads(r) : NULL;
		if (rd)
			ATOMIC_ADD(&rd->trylock_busy, 1);
	} else
		ms_count_error(r, rc);
	ms_log_other(t, r, caller, op, rc);
	errno = saved;
	return rc;
}

/* How many read rwlock l, as ms_rw_readers, off the paths where a count
 * below zero matters: after an unlock of a read lock nobody held, glibc's
 * count is below zero, and no reader holds it (a later extra unlock is
 * one more misuse, a destroy no misuse). */
static uint32_t readers_counted(const pthread_rwlock_t *l)
{
	return ms_rw_word_readers(LOAD(&l->__data.__readers));
}

int ms_read_beyond_followed(struct ms_thread *t, uint32_t r, pthread_rwlock_t *l)
{
	if (likely(!t->ts->overflow))
		return 0;
	uint32_t readers = readers_counted(l);
	/* A reader we do not see may be another thread's hold beyond those
	 * it follows, and this unlock a misuse that ends it: counting it as
	 * this thread's then misses that MISUSE, and the other thread's
	 * HELD AT THREAD EXIT.  Not counting it whenever another thread
	 * holds that many reported every thread of a striped table whose
	 * threads each read more than 64 stripes at once as ending with
	 * holds it had let go of: the rare misuse is the one let go. */
	return readers && !ms_rw_writer(l) && readers > ms_held_reads(r, t->tid);
}

/* Whether record r's rwlock has at least n read holds of threads that
 * exited holding them (n > 0). */
static int exited_reads_at_least(uint32_t r, uint32_t n)
{
	return (__atomic_load_n(&ms_rec(r)->flags, __ATOMIC_ACQUIRE) & MS_F_COLD) &&
	       __atomic_load_n(&ms_table.cold[r].exited_reads, __ATOMIC_ACQUIRE) >= n;
}

/* One such hold ended by another thread's unlock. */
static void exited_read_ended(uint32_t r)
{
	uint32_t *n = &ms_cold(r)->exited_reads;
	uint32_t v = __atomic_load_n(n, __ATOMIC_ACQUIRE);
	while (v && !__atomic_compare_exchange_n(n, &v, v - 1, 0, __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE))
		;
}

int ms_rwlock_unlock_other(struct ms_thread *t, uint32_t r, pthread_rwlock_t *l,
			   uintptr_t caller)
{
	/* Readers we did not see (held before start-up, or through glibc's
	 * own functions) may be this thread: misuse only when every reader
	 * glibc counts is one we saw, or there is none. */
	uint32_t readers = readers_counted(l);
	int writer = ms_rw_writer(l);
	uint32_t others = ms_held_reads(r, t->tid);
	int seen_all = readers <= others;
	/* readers beyond the live threads' holds that threads took and
	 * exited with (thread_pool.c): this unlock ends one of theirs */
	int of_exited = !writer && !seen_all && exited_reads_at_least(r, readers - others);
	int rc = ms_real_rw.unlock(l);
	int saved = errno;
	if (rc)
		ms_count_error(r, rc);
	if (!readers && !writer)
		ms_misuse(t, r, MS_M_UNLOCK_UNLOCKED, caller, MS_OP_UNLOCK, rc);
	else if (writer || seen_all || of_exited) {
		ms_misuse(t, r, MS_M_UNLOCK_NOT_OWNER, caller, MS_OP_UNLOCK, rc);
		/* It ended a reader's hold: one of the exited readers' where
		 * glibc counts none but theirs beyond the live holds (the
		 * wait-for graph believes one fewer), else a live reader's,
		 * whose exit drops one.  Counted as both, it also dropped the
		 * next thread's own read hold at its exit: no HELD AT THREAD
		 * EXIT, and the lock read as free while glibc counted it. */
		if (of_exited && !rc)
			exited_read_ended(r);
		else if (!writer && !rc)
			ATOMIC_ADD(&ms_cold(r)->reads_released, 1);
	}
	errno = saved;
	return rc;
}

/* ---- spin locks ------------------------------------------------------------ */

static int call_spin(void *lock, unsigned op, clockid_t clock, const struct timespec *abstime)
{
	(void)op, (void)clock, (void)abstime;
	return ms_real_rw.spin_lock(lock);
}

MS_UNWOUND int ms_spin_slow(struct ms_thread *t, uint32_t r, pthread_spinlock_t *s,
			    uintptr_t caller)
{
	int saved = errno, rc;
	ms_async_defer(t);
	struct ms_wait w = { .t = t, .r = r, .lock = (void *)s, .caller = caller,
			     .op = MS_OP_LOCK, .call = call_spin,
			     .cancelled = ms_wait_cancelled };
	if (LOAD(&ms_rec(r)->owner) == t->tid_held) {
		/* its holder spins for ever */
		errno = saved;
		rc = ms_wait_self(&w, MS_SELF_FOREVER, 0, NULL);
	} else {
		ms_wait_begin(&w);
		errno = saved;
		rc = ms_wait_call(&w, 0, NULL);
		saved = errno;
		uint64_t now = ms_wait_end(&w, rc == 0);
		if (rc == 0) {
			SERIAL_ADD(&ms_cold(r)->contended, 1);
			ms_acquired(t, r, (const void *)s, caller, MS_OP_LOCK, 1, 0, now);
		}
	}
	ms_async_resume(t);
	errno = saved;
	return rc;
}

int ms_spin_unlock_other(struct ms_thread *t, uint32_t r, pthread_spinlock_t *s,
			 uintptr_t caller)
{
	int locked = ms_spin_held(s);
	int rc = ms_real_rw.spin_unlock(s);
	int saved = errno;
	ms_held_remove(t->ts, r);
	ms_misuse(t, r, locked ? MS_M_UNLOCK_NOT_OWNER : MS_M_UNLOCK_UNLOCKED, caller,
		  MS_OP_UNLOCK, rc);
	if (locked) {
		/* glibc let it go: it is free now, and its holder's held set
		 * is stale */
		struct ms_record *rec = ms_rec(r);
		STORE(&rec->owner, LOAD(&rec->owner) & ~MS_HELD);
		__atomic_fetch_add(&ms_unlocks_elsewhere, 1, __ATOMIC_RELEASE);
	}
	errno = saved;
	return rc;
}

/* ---- both ------------------------------------------------------------------ */

void ms_other_destroyed(struct ms_thread *t, uint32_t r, const void *lock, uintptr_t caller)
{
	const struct ms_record *rec = ms_rec(r);
	int read = ms_lock_class(LOAD(&rec->flags)) == MS_CLASS_RWLOCK &&
		   readers_counted(lock);
	if ((LOAD(&rec->owner) & MS_HELD) || read)
		ms_misuse(t, r, MS_M_DESTROY_LOCKED, caller, MS_OP_DESTROY, 0);
	/* its readers' held sets keep a hold of a life that ends: each
	 * drops it at its next look (ms_read_hold_ended), before it makes a
	 * lock-order edge of it */
	if (read)
		__atomic_fetch_add(&ms_unlocks_elsewhere, 1, __ATOMIC_RELEASE);
	if (t->ts->nheld)
		ms_held_forget(t->ts, r);
}
