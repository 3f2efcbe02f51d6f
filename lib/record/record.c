/* record.c - the slow paths of an operation: waiting, failing, misuse, and
 * hold times of mutexes that have made threads wait. */
#include "record/record.h"
#include "base/spin.h"
#include "stacks/site.h"
#include "base/clock.h"
#include "analysis/blame.h"
#include "stacks/depot.h"
#include "analysis/findings.h"
#include "analysis/misuse.h"
#include "core/forked.h"
#include "analysis/robust.h"
#include "base/options.h"
#include "stacks/stack.h"
#include "glibc/real.h"

#include <errno.h>
#include <sched.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The unlock of a mutex a sampled thread waits for: where the holder lets
 * go is what made it wait.  The holder numbers the release before it
 * unlocks, and captures and publishes its stack after, with the time it
 * let go; the waiter charges each hold it waited behind -- the time from
 * the release before (or its wait's start) to this one -- to the stack of
 * the unlock that ended it.  Charging the whole wait to the unlock that
 * let it in blamed the short holds of the waiters queued before it for the
 * one long hold they all waited behind (8 threads behind a 100 ms hold:
 * 87 % of the wait on their own 90 us holds). */
uint32_t ms_release_begin(uint32_t r)
{
	/* when it lets go: read before the unlock, so that no release after
	 * it, nor the end of the wait it ends, reads an earlier time (read
	 * after it, a holder preempted between the two published a time past
	 * the next ones') */
	ms_self.release_at = ms_ticks();
	return ATOMIC_ADD(&ms_cold(r)->release_seq, 1) + 1;
}

/* A publication, one word so that it is read whole: the release number's
 * low 12 bits (the slot is the number modulo MS_RELEASE_PUB: a reader 2048
 * numbered releases late would mistake one for another), the stack (22
 * bits: past them a stack is not named) and the time it let go, in units
 * of 2^PUB_SHIFT ticks, 30 bits of it (placed by the waiter's end: a wait
 * of more than 2^(29+PUB_SHIFT) ticks -- 183 s at 3 GHz -- is charged whole
 * to the unlock that let it in). */
#define PUB_SHIFT 10
#define PUB_TAG_BITS 12
#define PUB_STACK_BITS 22
#define PUB_TIME_BITS 30
#define PUB_TIME_MASK ((1ull << PUB_TIME_BITS) - 1)
#define PUB_STACK_MAX ((1u << PUB_STACK_BITS) - 1)
_Static_assert(PUB_TAG_BITS + PUB_STACK_BITS + PUB_TIME_BITS == 64, "one word");

static uint64_t pub_word(uint32_t seq, ms_stack_id id, uint64_t at)
{
	if (id > PUB_STACK_MAX)
		id = 0;
	return (uint64_t)seq << (64 - PUB_TAG_BITS) | (uint64_t)id << PUB_TIME_BITS |
	       ((at >> PUB_SHIFT) & PUB_TIME_MASK);
}

static ms_stack_id pub_stack(uint64_t v)
{
	return (ms_stack_id)(v >> PUB_TIME_BITS) & PUB_STACK_MAX;
}

/* Where word v is of release seq: 0 it is, < 0 not yet, > 0 overwritten. */
static int pub_age(uint64_t v, uint32_t seq)
{
	uint32_t d = ((uint32_t)(v >> (64 - PUB_TAG_BITS)) - seq) & ((1u << PUB_TAG_BITS) - 1);
	return d >= 1u << (PUB_TAG_BITS - 1) ? -1 : (int)d;
}

/* When release v let go, placed at or before `end`, less than
 * 2^(29+PUB_SHIFT) ticks before it (a time a little past it, another
 * CPU's clock, is `end`). */
static uint64_t pub_at(uint64_t v, uint64_t end)
{
	uint64_t e = end >> PUB_SHIFT, back = (e - v) & PUB_TIME_MASK;
	if (back >= 1ull << (PUB_TIME_BITS - 1))
		return end;
	return (e - back) << PUB_SHIFT;
}

_Static_assert(sizeof ms_self.pend_got / sizeof ms_self.pend_got[0] == MS_RELEASE_PUB,
	       "a pending blame holds one publication per slot");

int ms_blame_pickup(struct ms_thread *t)
{
	uint32_t r = t->pend_rec;
	/* (its cold part is there: it was waited for; looked at without
	 * ms_cold(), which may make one, in case its life ended) */
	if (!t->pend_todo || LOAD(&ms_rec(r)->birth) != t->pend_birth ||
	    !(__atomic_load_n(&ms_rec(r)->flags, __ATOMIC_ACQUIRE) & MS_F_COLD))
		return 0;
	/* a signal handler's sampled wait meanwhile would flush this blame
	 * and begin its own, into which this one's words went */
	ms_guard_enter(t);
	for (uint32_t i = 0; i < MS_RELEASE_PUB; i++) {
		if (!(t->pend_todo & 1u << i))
			continue;
		uint32_t seq = t->pend_last - i;
		uint64_t v = __atomic_load_n(&ms_table.cold[r].release_pub[seq % MS_RELEASE_PUB],
					     __ATOMIC_ACQUIRE);
		int age = pub_age(v, seq);
		if (age < 0)
			continue; /* not yet */
		/* a newer one: overwritten, the holder is not known */
		t->pend_got[i] = age == 0 ? v : 0;
		t->pend_todo &= ~(1u << i);
	}
	ms_guard_leave(t);
	return t->pend_todo != 0;
}

void ms_release_publish(uint32_t r, uint64_t birth, uint32_t seq)
{
	uint64_t at = ms_self.release_at; /* ms_release_begin's */
	ms_stack_id id = ms_stack_here();
	if (LOAD(&ms_rec(r)->birth) != birth)
		return; /* destroyed meanwhile: its record is another's now */
	__atomic_store_n(&ms_cold(r)->release_pub[seq % MS_RELEASE_PUB], pub_word(seq, id, at),
			 __ATOMIC_RELEASE);
}

/* The holds a wait was behind, by the stack of the unlock that ended
 * each (0: not known), merged by stack: each line counts the wait once. */
struct wait_parts {
	ms_stack_id stack[MS_RELEASE_PUB + 1];
	uint64_t ticks[MS_RELEASE_PUB + 1];
	unsigned n;
};

static void part_add(struct wait_parts *p, ms_stack_id stack, uint64_t ticks)
{
	for (unsigned i = 0; i < p->n; i++)
		if (p->stack[i] == stack) {
			p->ticks[i] += ticks;
			return;
		}
	p->stack[p->n] = stack;
	p->ticks[p->n++] = ticks;
}

/* Split t's pending wait, start to end, at the releases of it: each
 * release is charged from the release before it (or the start) to its
 * own time, the last one to the end as well (the woken waiter's way in).
 * A release not read (overwritten, or never published) leaves the time
 * to the next release read not attributed: whose hold it was is not
 * known.  A wait with no release numbered in it is not attributed; one
 * longer than the publications' clock reaches goes whole to the last. */
static void wait_split(const struct ms_thread *t, struct wait_parts *p)
{
	uint64_t end = t->pend_end, wait = t->pend_wait, at = end - wait;
	uint32_t n = t->pend_last ? t->pend_last - t->pend_first + 1 : 0;
	p->n = 0;
	if (!n) {
		part_add(p, 0, wait);
		return;
	}
	if (wait >> (PUB_TIME_BITS - 1 + PUB_SHIFT)) {
		part_add(p, pub_stack(t->pend_got[0]), wait);
		return;
	}
	int known = n <= MS_RELEASE_PUB; /* the ones before were overwritten */
	for (uint32_t i = n < MS_RELEASE_PUB ? n : MS_RELEASE_PUB; i-- > 0;) {
		uint64_t v = t->pend_got[i];
		if (!v) {
			known = 0;
			continue;
		}
		uint64_t when = pub_at(v, end);
		if (when < at) /* another CPU's clock, a little behind */
			when = at;
		if (when > end)
			when = end;
		part_add(p, known ? pub_stack(v) : 0, when - at);
		at = when;
		known = 1;
	}
	part_add(p, known ? pub_stack(t->pend_got[0]) : 0, end - at);
}

/* Charge a sampled wait: to the waiter's stack, and to the stacks of the
 * unlocks that ended the holds it waited behind (waiting a moment for the
 * last of them to publish). */
void ms_blame_flush(struct ms_thread *t)
{
	if (!t->pend)
		return;
	ms_guard_enter(t); /* a signal handler must not spin on our locks */
	uint32_t r = t->pend_rec;
	if (LOAD(&ms_rec(r)->birth) == t->pend_birth) {
		ms_blame_add(r, t->pend_birth, MS_BLAME_WAIT, t->pend_stack,
			     t->pend_wait);
		/* A holder publishes right after its unlock; its first
		 * capture on a thread can take a while (libunwind reads the
		 * unwind tables), so wait up to ~5 ms, yielding. */
		uint64_t give_up = ms_ticks() + ms_ticks_per_ms() * 5;
		for (unsigned spins = 0; ms_blame_pickup(t); spins++) {
			if (spins < 200)
				__builtin_ia32_pause();
			else if (ms_ticks() > give_up)
				break;
			else
				sched_yield();
		}
		struct wait_parts parts;
		wait_split(t, &parts);
		/* a release as the wait began (its time a little before the
		 * start) made it no longer: no wait in its line */
		for (unsigned i = 0; i < parts.n; i++)
			if (parts.ticks[i] || parts.n == 1)
				ms_blame_add(r, t->pend_birth, MS_BLAME_HOLD, parts.stack[i],
					     parts.ticks[i]);
	}
	t->pend = 0;
	ms_guard_leave(t);
}

/* The first acquisition of a mutex life. */
void ms_first_acquired(uint32_t r, uintptr_t caller)
{
	struct ms_record *rec = ms_rec(r);
	ms_first_acquired_at(rec, caller, ms_site_stack(caller, rec->birth));
}

/* The holder's byte of the record's flags: MS_F_HOLD_TIMED, which sends
 * the unlock to unlock_other() (interpose.c).  A flag left set by a
 * timed hold that never ended here (its thread ended holding the mutex,
 * or a fork child's parent thread) is cleared by the next release. */
void ms_hold_flag(uint32_t r, int on)
{
	uint8_t *byte = (uint8_t *)&ms_rec(r)->flags + 1;
	_Static_assert(MS_F_HOLD_TIMED == 1u << 8, "the second byte's first bit");
	__atomic_store_n(byte, (uint8_t)on, __ATOMIC_RELAXED);
}

static unsigned hist_bucket(uint64_t ticks);

/* A timed hold that began at `since` (the holder's held set kept it) ends;
 * the holder still holds the mutex, so no locked instruction is needed. */
void ms_hold_end(uint32_t r, uint64_t since)
{
	ms_hold_flag(r, 0);
	if (since < LOAD(&ms_reset_ticks))
		return; /* began before the numbers were reset */
	struct ms_cold *c = ms_cold(r);
	uint64_t held = ms_ticks() - since;
	SERIAL_ADD(&c->hold_total, held);
	SERIAL_ADD(&c->holds, 1);
	SERIAL_ADD(&c->hold_hist[hist_bucket(held)], 1);
	if (held > LOAD(&c->hold_max))
		STORE(&c->hold_max, held);
}

/* An entry by a thread that does not hold the mutex: the side ring.
 * Returns its order. */
static uint64_t log_other(struct ms_thread *t, uint32_t r, uintptr_t caller, unsigned op,
			  int err)
{
	struct ms_cold *c = ms_cold(r);
	struct ms_record *rec = ms_rec(r);
	struct ms_tstate *ts = t->ts;
	uint64_t seen = ms_mutex_order_racing(r, rec);
	uint64_t reads = ms_reads_newest_order(r); /* a read-write lock's readers' */
	if (reads > seen)
		seen = reads;
	uint64_t o;
	if (ts && ts->fail_rec == r && ts->fail_seen == seen && ts->fail_order == t->clock) {
		/* failed again on the same hold, having done nothing since: the
		 * same number, listed after the first failure by its place in
		 * the ring -- one more would put it after the holder's next
		 * operation (which takes the lock's order + 1 too), though it
		 * came before */
		o = t->clock;
	} else {
		o = (t->clock > seen ? t->clock : seen) + 1;
		/* after what this thread has seen, without a write to the
		 * holder's line */
		t->clock = o;
	}
	if (ts) { /* (a thread being set up has none yet) */
		ts->fail_rec = r;
		ts->fail_seen = seen;
		ts->fail_order = o;
	}
	uint32_t pos = ATOMIC_ADD(&c->fail_pos, 1);
	ms_op_write(&c->fail[pos % MS_FAIL_RING], &c->fail_ticks[pos % MS_FAIL_RING],
		    o, t->tid, caller, op, 0, err, ms_ticks());
	return o;
}

void ms_log_other(struct ms_thread *t, uint32_t r, uintptr_t caller,
		  unsigned op, int err)
{
	(void)log_other(t, r, caller, op, err);
}

/* The init or destroy that just ended a life a finding holds (the table
 * said so in t->finding_ended): say where (findings.c captures the stack
 * here). */
__attribute__((noinline)) void ms_finding_life_ended_at(struct ms_thread *t, int how,
							uintptr_t caller)
{
	uint32_t r = t->finding_ended;
	t->finding_ended = 0;
	int saved = errno;
	ms_findings_life_ended(r, t->finding_birth, how, caller);
	errno = saved;
}

void ms_count_error(uint32_t r, int err)
{
	ATOMIC_ADD(&ms_cold(r)->errors[ms_err_index(err)], 1);
}

void ms_misuse(struct ms_thread *t, uint32_t r, enum ms_misuse kind,
	       uintptr_t caller, unsigned op, int err)
{
	ATOMIC_ADD(&ms_cold(r)->misuse[kind], 1);
	/* Its stack, which the report shows: the call site alone would be a
	 * lock wrapper's for a program that has one.  A misuse is rare
	 * enough to pay for a capture (100-300 ns) each time. */
	uint32_t stack = ms_stack_here();
	struct ms_op_view v = {
		.state = 1, .tid = t->tid, .caller = caller, .op = op, .err = err,
	};
	v.order = log_other(t, r, caller, op, err);
	ms_misuse_keep(r, kind, &v, stack);
}

void ms_note_kind(uint32_t r, const pthread_mutex_t *m, uint32_t extra)
{
	uint32_t bits = ms_kind_kept(m) << MS_F_KIND_SHIFT | extra;
	/* a normal mutex from init adds nothing: no locked instruction */
	if ((LOAD(&ms_rec(r)->flags) & bits) != bits)
		__atomic_fetch_or(&ms_rec(r)->flags, bits, __ATOMIC_RELAXED);
}

/* First time we see this address in a lock, unlock or wait: a mutex set up
 * with PTHREAD_MUTEX_INITIALIZER, or one that was initialised before the
 * library started. */
uint32_t ms_first_use(struct ms_thread *t, pthread_mutex_t *m, uintptr_t caller)
{
	if (!m)
		return MS_REC_UNTRACKED; /* glibc will answer as it does */
	if (ms_stack_helper_code(caller))
		return MS_REC_UNTRACKED; /* libunwind's own lock (thread exit) */
	if (!(ms_opt.track & (1u << MS_CLASS_MUTEX)))
		return MS_REC_UNTRACKED; /* MUTEXSTAT_TRACK leaves mutexes out */
	uint32_t r = ms_table_add((uintptr_t)m, 0, &t->clock);
	if (r != MS_REC_UNTRACKED && r != MS_REC_NONE)
		/* STATIC only if the address was new to the table: a lookup
		 * may miss a known one while a removal moves it (table.h) */
		ms_note_kind(r, m, t->added_new ? MS_F_STATIC : 0);
	return r;
}

uint32_t ms_life_renew(struct ms_thread *t, uintptr_t key, unsigned lock_class,
		       uintptr_t caller)
{
	uint32_t r = ms_table_renew_as(key, lock_class, &t->clock);
	if (unlikely(t->finding_ended))
		ms_finding_life_ended_at(t, MS_ENDED_REUSED, caller);
	return r == MS_REC_NONE ? MS_REC_UNTRACKED : r;
}

uint32_t ms_first_use_again(struct ms_thread *t, pthread_mutex_t *m, uintptr_t caller)
{
	if (ms_stack_helper_code(caller) || !(ms_opt.track & (1u << MS_CLASS_MUTEX)))
		return MS_REC_UNTRACKED;
	int saved = errno;
	uint32_t r = ms_life_renew(t, (uintptr_t)m, MS_CLASS_MUTEX, caller);
	if (r != MS_REC_UNTRACKED)
		ms_note_kind(r, m, MS_F_STATIC);
	errno = saved;
	return r;
}

static unsigned hist_bucket(uint64_t ns)
{
	unsigned b = ns ? 64 - (unsigned)__builtin_clzll(ns) : 0;
	return b < MS_HIST_BUCKETS ? b : MS_HIST_BUCKETS - 1;
}

/* A wait that got the mutex: the waiter holds it now, so, like the lock
 * path's counters, these need no locked instructions -- every writer of
 * them holds the mutex. */
static void add_wait(uint32_t r, struct ms_cold *c, uint64_t waited)
{
	SERIAL_ADD(&c->wait_total, waited);
	if (waited > LOAD(&c->wait_max))
		STORE(&c->wait_max, waited);
	/* In ticks: converting needs the calibration, made at report time. */
	SERIAL_ADD(&c->hist[hist_bucket(waited)], 1);
	if (!(LOAD(&ms_rec(r)->flags) & MS_F_TIMED))
		__atomic_fetch_or(&ms_rec(r)->flags, MS_F_TIMED, __ATOMIC_RELAXED);
}

/* A read wait that got a read-write lock: other readers hold it too, so
 * every number is a locked add, to both modes' sums and the reads'. */
static void add_read_wait(uint32_t r, struct ms_cold *c, uint64_t waited)
{
	unsigned b = hist_bucket(waited);
	ATOMIC_ADD(&c->wait_total, waited);
	atomic_max_u64(&c->wait_max, waited);
	ATOMIC_ADD(&c->hist[b], 1);
	ATOMIC_ADD(&c->contended, 1);
	struct ms_read_stats *rd = ms_reads(r);
	if (rd) {
		ATOMIC_ADD(&rd->wait_total, waited);
		atomic_max_u64(&rd->wait_max, waited);
		ATOMIC_ADD(&rd->hist[b], 1);
		ATOMIC_ADD(&rd->contended, 1);
	}
	if (!(LOAD(&ms_rec(r)->flags) & MS_F_TIMED))
		__atomic_fetch_or(&ms_rec(r)->flags, MS_F_TIMED, __ATOMIC_RELAXED);
}

void ms_read_hold_end(uint32_t r, uint64_t since)
{
	if (since < LOAD(&ms_reset_ticks))
		return; /* began before the numbers were reset */
	struct ms_cold *c = ms_cold(r);
	uint64_t held = ms_ticks() - since;
	unsigned b = hist_bucket(held);
	ATOMIC_ADD(&c->hold_total, held);
	ATOMIC_ADD(&c->holds, 1);
	ATOMIC_ADD(&c->hold_hist[b], 1);
	atomic_max_u64(&c->hold_max, held);
	struct ms_read_stats *rd = ms_reads(r);
	if (rd) {
		ATOMIC_ADD(&rd->hold_total, held);
		ATOMIC_ADD(&rd->holds, 1);
		ATOMIC_ADD(&rd->hold_hist[b], 1);
		atomic_max_u64(&rd->hold_max, held);
	}
}

/* A wait that timed out: the thread does not hold the mutex. */
static void add_timeout_wait(struct ms_cold *c, uint64_t waited)
{
	ATOMIC_ADD(&c->timeout_wait_total, waited);
	ATOMIC_ADD(&c->timeout_waits, 1);
	atomic_max_u64(&c->timeout_wait_max, waited);
}

static int call_lock(pthread_mutex_t *m, unsigned op, clockid_t clock,
		     const struct timespec *abstime)
{
	switch (op) {
	case MS_OP_TIMEDLOCK:
		return ms_real.mutex_timedlock(m, abstime);
	case MS_OP_CLOCKLOCK:
		return ms_real.mutex_clocklock(m, clock, abstime);
	default:
		return ms_real.mutex_lock(m);
	}
}

/* After the wait or the relock: account for what glibc answered. */
static int finish(struct ms_thread *t, uint32_t r, pthread_mutex_t *m, int rc,
		  uintptr_t caller, unsigned op, int waited, uint64_t now)
{
	if (rc == 0 || rc == EOWNERDEAD) {
		if (waited)
			SERIAL_ADD(&ms_cold(r)->contended, 1);
		if (rc)
			ms_count_error(r, rc);
		ms_acquired(t, r, m, caller, op, waited, rc, now);
		return rc;
	}
	if (rc == ETIMEDOUT)
		ATOMIC_ADD(&ms_cold(r)->timeouts, 1);
	else
		ms_count_error(r, rc);
	if (rc == ENOTRECOVERABLE && op != MS_OP_UNLOCK)
		ms_robust_refused(r);
	if (rc == EINVAL && mutex_kind(m) == -1)
		ms_misuse(t, r, MS_M_USE_DESTROYED, caller, op, rc);
	else
		ms_log_other(t, r, caller, op, rc);
	return rc;
}

/* A timed or clock lock made with glibc's own call, not trylock first
 * (where the two would answer differently: mutex_pi_owner_died); it does
 * not wait for another thread. */
int ms_lock_direct(struct ms_thread *t, uint32_t r, pthread_mutex_t *m,
		   uintptr_t caller, unsigned op, clockid_t clock,
		   const struct timespec *abstime)
{
	int rc = call_lock(m, op, clock, abstime);
	int saved = errno;
	rc = finish(t, r, m, rc, caller, op, 0, 0);
	errno = saved;
	return rc;
}

/* trylock did not get the mutex for a lock, timedlock or clocklock. */
/* glibc's trylock, on a robust mutex that is not recoverable, answers
 * ENOTRECOVERABLE but leaves the lock word holding our tid; its lock (which
 * the program called) answers the same and leaves the word free.  Put the
 * word back as glibc's lock does: clear it and wake one waiter (robust
 * futexes are always shared). */
void ms_undo_unrecoverable_try(pthread_mutex_t *m)
{
	int *word = &m->__data.__lock;
	int tid = ms_self.tid ? (int)ms_self.tid : (int)syscall(SYS_gettid);
	if ((LOAD(word) & FUTEX_TID_MASK) != tid)
		return;
	__atomic_exchange_n(word, 0, __ATOMIC_RELEASE);
	syscall(SYS_futex, word, FUTEX_WAKE, 1, NULL, NULL, 0);
}

/* What a live dump reads: the thread waits for m (record r) since `since`,
 * from caller (its stack), with a deadline or not.  Until wait_rec is 0. */
static void wait_shown(struct ms_tstate *ts, uint32_t r, const void *m,
		       uintptr_t caller, uint32_t stack, int timed, uint64_t since, int read)
{
	ts->wait_read = (uint32_t)read;
	ts->wait_key = (uintptr_t)m;
	ts->wait_caller = caller;
	ts->wait_stack = stack;
	ts->wait_since = since;
	ts->wait_timed = (uint32_t)timed;
	__atomic_store_n(&ts->wait_rec, r, __ATOMIC_RELEASE);
}

/* One more waiter on c as a wait begins (one: 1, plus 1 << 32 for a
 * sampled wait), so that a live dump counts the waits under way, and
 * among the most at once.  Returns the count before. */
static uint64_t waiter_in(struct ms_cold *c, uint64_t one)
{
	uint64_t before = __atomic_fetch_add(&c->waiting, one, __ATOMIC_SEQ_CST);
	uint32_t waiters = (uint32_t)before + 1;
	if (waiters > LOAD(&c->waiters_max))
		atomic_max_u32(&c->waiters_max, waiters);
	return before;
}

/* wait_shown() for a thread that waits for a lock it holds itself: a
 * waiter as another thread's wait is (ms_wait_begin) -- not a sampled
 * one: no holder will let it in. */
static void self_wait_shown(struct ms_tstate *ts, uint32_t r, const void *m,
			    uintptr_t caller, uint32_t stack, int timed, int read)
{
	waiter_in(ms_cold(r), 1);
	wait_shown(ts, r, m, caller, stack, timed, ms_ticks(), read);
}

/* glibc's lock where it may block for long -- waiting for another thread,
 * or for ever for this one -- with the program's cancellation type: in
 * ms_lock_slow, asynchronous cancellation is deferred around it. */
static int call_lock_blocking(struct ms_thread *t, pthread_mutex_t *m, unsigned op,
			      clockid_t clock, const struct timespec *abstime)
{
	ms_async_resume(t);
	int rc = call_lock(m, op, clock, abstime);
	ms_async_defer(t);
	return rc;
}

/* A wait of a thread for a lock (record r) it holds itself. */
struct self_wait_ctx {
	struct ms_tstate *ts;
	uint32_t r;
};

/* That wait is over (it ended, timed out, or the thread was cancelled
 * there): one waiter less on r, whatever a signal handler's wait on this
 * thread did meanwhile to what the thread shows -- which is cleared only
 * if it still is this wait's. */
static void self_wait_over(void *arg)
{
	const struct self_wait_ctx *c = arg;
	__atomic_fetch_sub(&ms_cold(c->r)->waiting, 1, __ATOMIC_SEQ_CST);
	uint32_t shown = c->r;
	__atomic_compare_exchange_n(&c->ts->wait_rec, &shown, 0, 0, __ATOMIC_RELEASE,
				    __ATOMIC_RELAXED);
}

static MS_UNWOUND __attribute__((noinline)) int
self_wait(struct ms_thread *t, uint32_t r, pthread_mutex_t *m, unsigned op, clockid_t clock,
	  const struct timespec *abstime)
{
	int rc;
	struct self_wait_ctx c = { t->ts, r };
	pthread_cleanup_push(self_wait_over, &c);
	rc = call_lock_blocking(t, m, op, clock, abstime);
	pthread_cleanup_pop(1);
	return rc;
}

MS_UNWOUND int ms_wait_self(struct ms_wait *w, int kind, clockid_t clock,
			    const struct timespec *abstime)
{
	struct ms_tstate *ts = w->t->ts;
	uint32_t stack = ms_finding_self_deadlock(ts, w->r, (uintptr_t)w->lock,
						  (enum ms_self_kind)kind);
	self_wait_shown(ts, w->r, w->lock, w->caller, stack, ms_wait_has_deadline(w),
			ms_op_read_mode(w->op));
	int rc;
	struct self_wait_ctx c = { ts, w->r };
	pthread_cleanup_push(self_wait_over, &c);
	ms_async_resume(w->t);
	rc = w->call(w->lock, w->op, clock, abstime);
	ms_async_defer(w->t);
	pthread_cleanup_pop(1);
	if (rc == 0)
		ms_finding_self_released(ts, w->r); /* unlocked meanwhile */
	return rc;
}

/* The thread no longer waits: what ms_wait_begin set up, undone. */
static void wait_over(const struct ms_wait *w)
{
	struct ms_cold *c = ms_cold(w->r);
	const uint64_t one = 1 | (uint64_t)w->sampled << 32;
	__atomic_store_n(&w->t->ts->wait_rec, 0, __ATOMIC_RELEASE);
	uint64_t before = __atomic_fetch_sub(&c->waiting, one, __ATOMIC_SEQ_CST);
	if (w->sampled && before >> 32 == 1) {
		/* the last sampled waiter: holders need not capture any more,
		 * unless one came in meanwhile */
		__atomic_fetch_and(&ms_rec(w->r)->flags, ~MS_F_WAITERS, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&c->waiting, __ATOMIC_SEQ_CST) >> 32)
			__atomic_fetch_or(&ms_rec(w->r)->flags, MS_F_WAITERS,
					  __ATOMIC_SEQ_CST);
	}
}

void ms_wait_begin(struct ms_wait *w)
{
	struct ms_thread *t = w->t;
	uint32_t r = w->r;
	/* a handler's wait that interrupted our bookkeeping (base/spin.h) */
	ms_spin_note_blocking();
	/* It blocks on B while holding A: that is an edge even if the wait
	 * times out. */
	if (t->ts->nheld)
		ms_order_note_mode(t, t->ts, r, (uintptr_t)w->lock, w->caller,
				   ms_op_read_mode(w->op));
	struct ms_cold *c = ms_cold(r);
	/* A sampled wait charges its time to the waiter's stack and to the
	 * stack of the unlock that lets it in, which the holder captures when
	 * it sees MS_F_WAITERS.  The capture comes before the clock starts. */
	uint32_t event = LOAD(&c->waiter_sample);
	STORE(&c->waiter_sample, event + 1);
	w->sampled = event < MS_STACK_EXACT || event % ms_opt.stack_sample == 0;
	w->mine = w->sampled ? ms_stack_here() : 0;
	/* read before the waiter shows: a release that sees it comes after */
	w->releases = __atomic_load_n(&c->release_seq, __ATOMIC_SEQ_CST);
	uint64_t before = waiter_in(c, 1 | (uint64_t)w->sampled << 32);
	if (w->sampled && before >> 32 == 0)
		__atomic_fetch_or(&ms_rec(r)->flags, MS_F_WAITERS, __ATOMIC_SEQ_CST);
	w->start = ms_ticks();
	wait_shown(t->ts, r, w->lock, w->caller, w->mine, ms_wait_has_deadline(w), w->start,
		   ms_op_read_mode(w->op));
}

uint64_t ms_wait_end(struct ms_wait *w, int got)
{
	struct ms_thread *t = w->t;
	uint32_t r = w->r;
	struct ms_cold *c = ms_cold(r);
	uint64_t now = ms_ticks();
	wait_over(w);
	if (got) {
		if (ms_op_read_mode(w->op))
			add_read_wait(r, c, now - w->start);
		else
			add_wait(r, c, now - w->start);
		if (w->sampled) {
			/* charged after this thread's next unlock, outside the
			 * critical section (an earlier one still pending is
			 * charged now) */
			ms_blame_flush(t);
			t->pend_rec = r;
			t->pend_birth = LOAD(&ms_rec(r)->birth);
			t->pend_stack = w->mine;
			t->pend_wait = now - w->start;
			t->pend_end = now;
			/* the releases numbered during this wait: one from
			 * before it let another thread in (two readers leaving
			 * at once may both leave theirs unnumbered), and
			 * blaming it would name code that did not make this
			 * thread wait */
			uint32_t seq = LOAD(&c->release_seq), n = seq - w->releases;
			t->pend_first = w->releases + 1;
			t->pend_last = n ? seq : 0;
			n = n < MS_RELEASE_PUB ? n : MS_RELEASE_PUB;
			t->pend_todo = n ? (uint32_t)((1ull << n) - 1) : 0;
			memset(t->pend_got, 0, sizeof t->pend_got);
			t->pend = 1;
			ms_blame_pickup(t); /* the older ones are there */
			ms_ok_clear(t);
		}
	}
	return now;
}

/* A timed-out wait: its time, apart from the waits that got the lock. */
void ms_wait_timed_out(uint32_t r, uint64_t waited)
{
	add_timeout_wait(ms_cold(r), waited);
	/* it made a thread wait, if in vain: its holds, which run into
	 * timeouts, are timed from now on (not by this thread: it does not
	 * hold it, so the bit is set with a locked instruction) */
	if (!(LOAD(&ms_rec(r)->flags) & MS_F_TIMED))
		__atomic_fetch_or(&ms_rec(r)->flags, MS_F_TIMED, __ATOMIC_RELAXED);
}

/* The thread was cancelled in the wait (asynchronous cancellation lands
 * anywhere) or just after it: the wait is over, and if glibc had given it
 * the mutex, that is an acquisition -- a cleanup handler of the program's
 * may unlock it next. */
static void lock_wait_cancelled(const struct ms_wait *w)
{
	int saved = errno;
	wait_over(w);
	pthread_mutex_t *m = w->lock;
	if (mutex_holder(m) == (int)w->t->tid) {
		/* a robust mutex's owner field reads "inconsistent" after a
		 * lock that got EOWNERDEAD */
		int rc = mutex_owner(m) == MS_OWNER_INCONSISTENT ? EOWNERDEAD : 0;
		finish(w->t, w->r, m, rc, w->caller, w->op, 1, ms_ticks());
	}
	errno = saved;
}

/* What the kind's cancellation handler does, after the wait is over. */
void ms_wait_cancelled(const struct ms_wait *w)
{
	wait_over(w);
}

static void wait_cancelled(void *arg)
{
	const struct ms_wait *w = arg;
	w->cancelled(w);
}

/* In a function of its own, as cond.c's: the cleanup handler's setjmp
 * would make the compiler wary of the caller's variables. */
MS_UNWOUND __attribute__((noinline)) int ms_wait_call(struct ms_wait *w, clockid_t clock,
						   const struct timespec *abstime)
{
	int rc;
	pthread_cleanup_push(wait_cancelled, w);
	ms_async_resume(w->t);
	rc = w->call(w->lock, w->op, clock, abstime);
	ms_async_defer(w->t);
	pthread_cleanup_pop(0);
	return rc;
}

static int call_mutex(void *m, unsigned op, clockid_t clock, const struct timespec *abstime)
{
	return call_lock(m, op, clock, abstime);
}

/* Whether this thread holds m, as glibc's relock finds it: the owner field,
 * or, of a robust mutex got with EOWNERDEAD and not yet made consistent
 * (its owner field reads "inconsistent"), the lock word. */
static int held_by(const pthread_mutex_t *m, uint32_t tid)
{
	int owner = mutex_owner(m);
	return owner == (int)tid || (owner == MS_OWNER_INCONSISTENT && mutex_holder(m) == (int)tid);
}

/* Asynchronous cancellation is deferred in here (thread.h) but in glibc's
 * lock; a thread cancelled there leaves by unwinding (MS_UNWOUND). */
MS_UNWOUND int ms_lock_slow(struct ms_thread *t, uint32_t r, pthread_mutex_t *m,
			    int rc, uintptr_t caller, unsigned op, clockid_t clock,
			    const struct timespec *abstime)
{
	int saved = errno;
	ms_async_defer(t);
	if (rc == ENOTRECOVERABLE)
		ms_undo_unrecoverable_try(m);
	/* a deadline glibc refuses (EINVAL) once it would wait: the call
	 * does not wait, for itself or anyone -- no waiter, nor, if the
	 * holder let go meanwhile, a contention */
	/* (a timed lock given no deadline waits for ever) */
	int timed = ms_op_deadline(op) && abstime;
	int refused = timed && (unsigned long)abstime->tv_nsec >= 1000000000UL;
	if (rc != EBUSY || refused || held_by(m, t->tid)) {
		/* Not a wait: a robust owner died (EOWNERDEAD, and we hold
		 * it), an error, a deadline refused, or the owner locking
		 * again, which glibc answers (EDEADLK) or which never
		 * returns. */
		if (rc == EBUSY) {
			int errorcheck = (mutex_kind(m) & MS_KIND_MASK) ==
					 PTHREAD_MUTEX_ERRORCHECK;
			if (!errorcheck && !refused) {
				/* it waits for itself: a finding before the
				 * wait, said at once if the wait never ends, and
				 * a wait live dumps and the watchdog see */
				uint32_t stack = ms_finding_self_deadlock(
					t->ts, r, (uintptr_t)m, timed ? MS_SELF_TIMEOUT : MS_SELF_FOREVER);
				self_wait_shown(t->ts, r, m, caller, stack, timed, 0);
			}
			errno = saved;
			rc = errorcheck || refused ? call_lock_blocking(t, m, op, clock, abstime)
						   : self_wait(t, r, m, op, clock, abstime);
			saved = errno; /* glibc's, as without us */
			if (!errorcheck && !refused && rc == 0)
				ms_finding_self_released(t->ts, r); /* unlocked meanwhile */
			if (errorcheck && rc == EDEADLK)
				ms_finding_self_deadlock(t->ts, r, (uintptr_t)m,
							 MS_SELF_REFUSED);
		} else if (rc == EDEADLK && held_by(m, t->tid))
			/* an error-checking robust, priority-inheriting or
			 * priority-protected mutex: glibc's try answers the
			 * relock itself */
			ms_finding_self_deadlock(t->ts, r, (uintptr_t)m, MS_SELF_REFUSED);
		rc = finish(t, r, m, rc, caller, op, 0, 0);
		ms_async_resume(t);
		errno = saved;
		return rc;
	}
	struct ms_wait w = { .t = t, .r = r, .lock = m, .caller = caller, .op = op,
			     .call = call_mutex, .cancelled = lock_wait_cancelled,
			     .no_deadline = !abstime };
	ms_wait_begin(&w);
	errno = saved;
	rc = ms_wait_call(&w, clock, abstime);
	saved = errno; /* glibc's (a priority-protect lock's may set it) */
	uint64_t now = ms_wait_end(&w, rc == 0 || rc == EOWNERDEAD);
	if (rc == ETIMEDOUT)
		ms_wait_timed_out(r, now - w.start);
	rc = finish(t, r, m, rc, caller, op, 1, now);
	ms_async_resume(t);
	errno = saved;
	return rc;
}

int ms_trylock_failed(struct ms_thread *t, uint32_t r, pthread_mutex_t *m,
		      int rc, uintptr_t caller)
{
	int saved = errno;
	if (rc == EBUSY) {
		ATOMIC_ADD(&ms_cold(r)->trylock_busy, 1);
		ms_log_other(t, r, caller, MS_OP_TRYLOCK, rc);
	} else
		rc = finish(t, r, m, rc, caller, MS_OP_TRYLOCK, 0, 0);
	errno = saved;
	return rc;
}

/* An unlock that is not the owner's last level (a recursive level, or
 * misuse, which glibc answers as it always does), or of an address not seen
 * before. */
int ms_unlock_slow(struct ms_thread *t, uint32_t r, pthread_mutex_t *m,
		   uintptr_t caller)
{
	int saved = errno, rc;
	if (r == MS_REC_NONE)
		r = ms_first_use(t, m, caller);
	if (r != MS_REC_UNTRACKED && r != MS_REC_NONE &&
	    ms_lock_class(LOAD(&ms_rec(r)->flags)) != MS_CLASS_MUTEX)
		r = ms_first_use_again(t, m, caller); /* memory of another kind of lock */
	if (r == MS_REC_UNTRACKED || r == MS_REC_NONE) {
		errno = saved;
		return ms_real.mutex_unlock(m);
	}
	/* glibc's owner as its unlock checks it: the lock word's for a robust
	 * mutex not yet made consistent; this thread for a mutex it locked
	 * before a fork (core/forked.c) */
	int owner = mutex_holder(m), locked = mutex_locked(m);
	int destroyed = mutex_kind(m) == -1; /* glibc answers EINVAL */
	if (unlikely(owner != (int)t->tid))
		owner = ms_fork_owner_for_unlock(t, r, m, owner);
	if (owner == (int)t->tid && locked && !destroyed) {
		if (LOAD(&m->__data.__count) > 1) {
			rc = ms_real.mutex_unlock(m); /* an inner level */
			saved = errno;
			if (rc == 0)
				ms_log_holder(t, r, caller, MS_OP_UNLOCK);
		} else {
			int inconsistent = mutex_owner(m) == MS_OWNER_INCONSISTENT;
			uint64_t birth = LOAD(&ms_rec(r)->birth);
			uint32_t seq = ms_released(t, r, m, caller, MS_OP_UNLOCK);
			if (unlikely(!LOAD(&ms_rec(r)->first_caller)))
				/* a hold whose lock we did not see (made with
				 * glibc's own function: through a handle to
				 * libc, from a library loaded RTLD_DEEPBIND,
				 * or before start-up): the next lock we see
				 * is still the first */
				STORE(&ms_rec(r)->owner, 0);
			rc = ms_real.mutex_unlock(m);
			saved = errno; /* glibc's: a priority-protect unlock may set it */
			if (seq)
				ms_release_publish(r, birth, seq);
			if (unlikely(inconsistent) && rc == 0)
				ms_robust_left_inconsistent(r); /* not recoverable now */
			errno = saved;
			return rc; /* the owner's unlock does not fail */
		}
		if (rc)
			finish(t, r, m, rc, caller, MS_OP_UNLOCK, 0, 0);
	} else {
		rc = ms_real.mutex_unlock(m);
		saved = errno;
		/* glibc says this thread does not hold it: nor does its set */
		ms_held_remove(t->ts, r);
		if (rc)
			ms_count_error(r, rc);
		ms_misuse(t, r, destroyed && rc == EINVAL ? MS_M_USE_DESTROYED
			  : locked ? MS_M_UNLOCK_NOT_OWNER : MS_M_UNLOCK_UNLOCKED,
			  caller, MS_OP_UNLOCK, rc);
		if (rc == 0) {
			/* glibc let it go (a normal mutex): it is free now, and
			 * its owner's held set is stale */
			struct ms_record *rec = ms_rec(r);
			STORE(&rec->owner, LOAD(&rec->owner) & ~MS_HELD);
			__atomic_fetch_add(&ms_unlocks_elsewhere, 1, __ATOMIC_RELEASE);
		}
	}
	errno = saved;
	return rc;
}
