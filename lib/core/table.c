/* table.c - creating, adding, removing and folding records; see table.h. */
#include "core/table.h"
#include "base/clock.h"
#include "base/fmt.h"
#include "base/pages.h"
#include "base/spin.h"
#include "core/pending_names.h"
#include "core/thread.h"
#include "glibc/loader_lock.h"

#include <stddef.h>
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>

/* What records[] is until the table is mapped (or if it cannot be): the
 * empty cache entry's record, so the lock path never needs to ask. */
static struct ms_record boot_records[1] = { { .key = MS_KEY_NO_MUTEX } };

struct ms_table ms_table = { .records = boot_records };

/* ---- the update locks: ours, spinning, never a pthread mutex -------- */

/* The index is cut into blocks of 256 slots, and each block is given one
 * of MS_STRIPES locks (stripes) by a hash of its number.  An address whose
 * home slot is in block b lives at most MS_MAX_PROBE (128) slots further
 * on, so adding it or finding it touches blocks b and b + 1 only; an
 * update takes b's lock, and a later block's only once it goes there (a
 * removal's shift may go on, up to MS_UPDATE_LOCKS blocks; reach()).
 * Threads that make and destroy mutexes in different places of memory --
 * their own stacks, their own heap arenas -- seldom wait for each other:
 * the hash scatters
 * blocks over the locks, however regularly thread stacks or arenas are
 * spaced.  The counters of adds and removals are kept per stripe, by its
 * lock's holder, so they cost no locked instruction and no shared line. */
static struct ms_stripe stripes[MS_STRIPES];

static unsigned stripe_of(uint64_t slot)
{
	uint64_t block = slot >> MS_STRIPE_SHIFT;
	return (unsigned)(((uint32_t)block * 0x9e3779b1u) >> 24) & (MS_STRIPES - 1);
}

/* The free records and the next never-used one, behind a lock of their
 * own; each thread keeps a few spares (thread.h) and comes here only
 * every MS_SPARE_BATCH adds or removals. */
static struct {
	int lock;
	uint32_t free_head;
} __attribute__((aligned(64))) pool;

static void spin_lock(int *word)
{
	for (unsigned spins = 0; !ms_spin_try(word); spins++) {
		if (spins < 100)
			__builtin_ia32_pause();
		else
			sched_yield(); /* the holder was preempted */
	}
}

static void spin_unlock(int *word)
{
	ms_spin_unlock(word);
}

/* Every update lock, for fork and for mutexstat_reset: no add or removal
 * is half done while they are held. */
void ms_table_lock(void)
{
	for (unsigned i = 0; i < MS_STRIPES; i++)
		spin_lock(&stripes[i].lock);
	spin_lock(&pool.lock);
	spin_lock(&ms_table.sites_lock);
	spin_lock(&ms_table.reads_lock);
}

void ms_table_unlock(void)
{
	spin_unlock(&ms_table.reads_lock);
	spin_unlock(&ms_table.sites_lock);
	spin_unlock(&pool.lock);
	for (unsigned i = MS_STRIPES; i-- > 0;)
		spin_unlock(&stripes[i].lock);
}

/* In a fork child, the parent's threads' spares are nobody's: every
 * record not in use goes back to the pool (all locks held), the forking
 * thread's too (ms_table_after_fork_child let go of them). */
void ms_table_reclaim_spares(void)
{
	struct ms_table *t = &ms_table;
	pool.free_head = 0;
	ms_self.nspare = 0;
	for (uint32_t r = t->next_unused; r-- > 1;)
		if (r <= t->capacity && !LOAD(&t->records[r].key)) {
			t->free_next[r] = pool.free_head;
			pool.free_head = r;
		}
}

void ms_table_after_fork_child(void)
{
	/* The forking thread's spares go back to the pool with every other
	 * free record when the child's table is settled, by whichever thread
	 * of the child makes the first call: if it kept them too, one record
	 * would be handed out twice. */
	ms_self.nspare = 0;
	for (unsigned i = 0; i < MS_STRIPES; i++)
		stripes[i].lock = 0;
	pool.lock = 0;
	ms_table.sites_lock = 0;
	ms_table.reads_lock = 0;
}

/* The stripes an update holds: its home block's, and those of the next
 * blocks once its probe or its removal's shift goes there. */
#define MS_UPDATE_LOCKS 4
struct ms_update_locks {
	unsigned n;                  /* stripes held: s[0..n) */
	unsigned s[MS_UPDATE_LOCKS];
	struct ms_stripe *home;      /* the home slot's: its counters */
	/* a removal's: the destroy's caller (0: an add, or an init that
	 * ends a life), for the hook that keeps the life's history */
	uintptr_t destroyed_at;
};

static int holds(const struct ms_update_locks *l, unsigned st)
{
	for (unsigned k = 0; k < l->n; k++)
		if (l->s[k] == st)
			return 1;
	return 0;
}

static int slot_locked(const struct ms_update_locks *l, uint64_t i)
{
	return holds(l, stripe_of(i));
}

/* Listing a stripe after taking it, and unlisting it before letting it go,
 * keeps what a signal handler on this thread reads (ms_self.upd_locks, for
 * a fork) to stripes this thread does hold. */
static void list_stripe(struct ms_update_locks *l, unsigned st)
{
	l->s[l->n] = st;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	l->n++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static inline __attribute__((always_inline)) void release_all(struct ms_update_locks *l)
{
	unsigned n = l->n;
	l->n = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (likely(n == 1)) { /* the home block's alone: the usual update */
		spin_unlock(&stripes[l->s[0]].lock);
		return;
	}
	while (n-- > 0)
		spin_unlock(&stripes[l->s[n]].lock);
}

/* The update's probe or shift reaches slot i: take its block's stripe
 * too.  Stripes are waited for in ascending order only; a lower one is
 * tried once, and if it is taken, all are let go and taken again in
 * order.  1: held; 0: held, but the locks were let go meanwhile -- the
 * caller looks again; 2: this update holds as many stripes as it may (a
 * run longer than MS_UPDATE_LOCKS - 1 blocks); -1: not to be had (a fork,
 * base/spin.h), and no lock is held any more. */
static int reach(struct ms_update_locks *l, uint64_t i)
{
	unsigned st = stripe_of(i), top = 0;
	if (holds(l, st))
		return 1;
	if (l->n == MS_UPDATE_LOCKS)
		return 2;
	for (unsigned k = 0; k < l->n; k++)
		if (l->s[k] > top)
			top = l->s[k];
	if (st > top) {
		if (!ms_spin_lock_holding(&stripes[st].lock)) {
			release_all(l);
			return -1;
		}
		list_stripe(l, st);
		return 1;
	}
	if (ms_spin_try(&stripes[st].lock)) {
		list_stripe(l, st);
		return 1;
	}
	/* all again, in order: the wanted ones sorted (at most four) */
	unsigned want[MS_UPDATE_LOCKS], n = l->n + 1;
	for (unsigned k = 0; k < l->n; k++)
		want[k] = l->s[k];
	want[l->n] = st;
	for (unsigned x = 1; x < n; x++)
		for (unsigned y = x; y > 0 && want[y - 1] > want[y]; y--) {
			unsigned tmp = want[y];
			want[y] = want[y - 1];
			want[y - 1] = tmp;
		}
	release_all(l);
	for (unsigned k = 0; k < n; k++) {
		int got = k == 0 ? ms_spin_lock(&stripes[want[k]].lock)
				 : ms_spin_lock_holding(&stripes[want[k]].lock);
		if (!got) {
			release_all(l);
			return -1;
		}
		list_stripe(l, want[k]);
	}
	return 0;
}

/* The locks for an add or a removal at home slot `home`: 0 if a fork is
 * under way in another thread and this one, holding mutexes, must not wait
 * (base/spin.h), or if this thread is inside an update already -- a signal
 * handler that interrupted one, and would otherwise spin on a lock its own
 * thread holds.  Either way the call is left unrecorded.
 *
 * Marking the thread costs two stores; the alternative, the guard that
 * library code takes (thread.h), would empty the thread's lookup cache at
 * every init and destroy (doc/benchmark.md, the million mutexes). */
static inline __attribute__((always_inline)) int
lock_for_update(struct ms_update_locks *l, uint64_t home)
{
	struct ms_thread *self = &ms_self;
	if (self->in_update) {
		ms_spin_skipped_call();
		return 0;
	}
	ms_async_defer(self); /* until the update ends */
	unsigned st = stripe_of(home);
	l->n = 0;
	l->home = &stripes[st];
	l->destroyed_at = 0;
	self->upd_locks = l;
	self->in_update = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (ms_spin_lock(&stripes[st].lock)) {
		l->s[0] = st; /* list_stripe(), the list empty */
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		l->n = 1;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		return 1;
	}
	self->in_update = 0;
	ms_async_resume(self);
	return 0;
}

/* After reach() gave -1 (a fork: the skipped call is counted): no lock is
 * held. */
static void abandon_update(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	ms_self.in_update = 0;
	ms_async_resume(&ms_self);
}

static inline __attribute__((always_inline)) void
unlock_after_update(struct ms_update_locks *l)
{
	/* One stripe listed at the end of an update is its home's (reach()
	 * lists two or more, or none): let go of it without the list. */
	if (likely(l->n == 1)) {
		l->n = 0;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		spin_unlock(&l->home->lock);
	} else
		release_all(l);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	ms_self.in_update = 0;
	ms_async_resume(&ms_self);
}

/* For a fork from a signal handler that interrupted this thread's update:
 * every lock but the ones the update holds, each waited for a while only
 * (a thread holding one gives up its wait for a second during a fork,
 * base/spin.h, but a holder preempted for long is not waited for). */
static uint8_t taken_around[MS_STRIPES + 2];

static int lock_a_while(int *word)
{
	for (unsigned spins = 0; spins < (1u << 20); spins++) {
		if (ms_spin_try(word))
			return 1;
		__builtin_ia32_pause();
	}
	return 0;
}

void ms_table_lock_around_update(void)
{
	const struct ms_thread *self = &ms_self;
	const struct ms_update_locks *mine = self->upd_locks;
	for (unsigned i = 0; i < MS_STRIPES; i++)
		taken_around[i] = !holds(mine, i) && lock_a_while(&stripes[i].lock);
	taken_around[MS_STRIPES] = !self->upd_pool && lock_a_while(&pool.lock);
	taken_around[MS_STRIPES + 1] =
		!self->upd_sites && lock_a_while(&ms_table.sites_lock);
}

void ms_table_unlock_around_update(void)
{
	if (taken_around[MS_STRIPES + 1])
		spin_unlock(&ms_table.sites_lock);
	if (taken_around[MS_STRIPES])
		spin_unlock(&pool.lock);
	for (unsigned i = MS_STRIPES; i-- > 0;)
		if (taken_around[i])
			spin_unlock(&stripes[i].lock);
}

/* Threads' cached lock-order edges (thread_pool.h) name records; a life that
 * ends makes those of its record stale, and a life in a finding is told
 * to the thread that ended it.  Only records that are in an edge
 * (MS_F_EDGE, order.c) can be in a cache, so the lives of the many mutexes
 * never taken together with another end without touching this shared
 * word. */
static __attribute__((noinline)) void life_ends_told(struct ms_table *t, uint32_t r,
						     uint32_t flags)
{
	if (flags & MS_F_EDGE)
		__atomic_fetch_add(&t->gen, 1, __ATOMIC_SEQ_CST);
	if (unlikely(flags & MS_F_FINDING)) {
		/* the caller says where, once out of the table's locks */
		ms_self.finding_ended = r;
		ms_self.finding_birth = LOAD(&ms_rec(r)->birth);
	}
}

/* (flags: the record's, loaded once for this and fold) */
static inline __attribute__((always_inline)) void life_ends(struct ms_table *t, uint32_t r,
							     uint32_t flags)
{
	if (unlikely(flags & (MS_F_EDGE | MS_F_FINDING)))
		life_ends_told(t, r, flags);
}

void ms_table_counts(struct ms_table_counts *c)
{
	*c = (struct ms_table_counts){ 0 };
	for (unsigned i = 0; i < MS_STRIPES; i++) {
		const struct ms_stripe *s = &stripes[i];
		/* ended before made: both only grow, and made is never below
		 * ended, so the difference read is never negative; the base
		 * before ended, and never above it: a reset (all locks held,
		 * not this reader's) may move it up to ended meanwhile */
		uint64_t base = __atomic_load_n(&s->ended_base, __ATOMIC_ACQUIRE);
		uint64_t ended = __atomic_load_n(&s->ended, __ATOMIC_ACQUIRE);
		c->live += LOAD(&s->made) - ended;
		c->destroyed += (ended > base ? ended - base : 0) + LOAD(&s->untracked_ended);
		c->reinitialised += LOAD(&s->reinitialised);
		c->untracked_mutexes += LOAD(&s->untracked_mutexes);
		c->untracked_ended += LOAD(&s->untracked_ended);
		c->untracked_ops += LOAD(&s->untracked_ops);
	}
}

/* ---- set-up ---------------------------------------------------------- */

/* Records, their first history group and init stacks are handed out in
 * order: past their first 2 MiB -- some 32,000 mutexes' records, which a
 * program with a few thousand mutexes would otherwise round up to a huge
 * page -- they may take huge pages (pages.c). */
#define SMALL_PART ((size_t)2 << 20)

/* The index is first written where hashes land, which for an array of
 * mutexes is in order (ms_hash keeps neighbours together): page after page,
 * a page fault each.  A stretch of the index that has had INDEX_FILL_AT
 * inserts is made resident in one call.  By then the inserts of a program
 * whose mutexes land at random have touched nearly all of its pages (all
 * but 16 * (15/16)^64, a quarter of a page, on average), so this costs such
 * a program no memory; the counts stop there, and are read, not written,
 * after. */
#define INDEX_STRETCH 65536 /* bytes */
#define INDEX_FILL_AT 64

static size_t index_stretches(size_t cap)
{
	return (2 * cap * sizeof(uint64_t) + INDEX_STRETCH - 1) / INDEX_STRETCH;
}

/* Entries in the history: whole groups (a history shorter than a group
 * still takes a group's line per record). */
static size_t history_entries(size_t history_len, size_t cap)
{
	size_t groups = (history_len + MS_HISTORY_GROUP - 1) / MS_HISTORY_GROUP;
	return groups * MS_HISTORY_GROUP * (cap + 1);
}

/* Read-write locks' slots for a table of cap records. */
static size_t reads_slots(size_t cap)
{
	return cap / MS_READS_SHARE > 64 ? cap / MS_READS_SHARE : 64;
}

size_t ms_table_bytes(uint32_t capacity, uint32_t history_len)
{
	const struct ms_table *t = &ms_table;
	size_t cap = capacity;
	return MS_SITE_LINES * sizeof *t->sites +
	       reads_slots(cap) * (sizeof *t->reads + sizeof *t->reads_free +
				   history_len * (sizeof *t->read_ring +
						  sizeof *t->read_ring_ticks)) +
	       (cap + 1) * (sizeof *t->records + sizeof *t->cold +
			    sizeof *t->init_stacks + sizeof *t->free_next) +
	       2 * cap * (sizeof *t->slots + sizeof *t->untracked_keys) +
	       index_stretches(cap) * sizeof *t->index_fill +
	       history_entries(history_len, cap) *
		       (sizeof *t->history + sizeof *t->history_ticks);
}

static void unmap_all(struct ms_table *t, size_t cap, size_t hist)
{
	if (t->index_fill)
		munmap(t->index_fill, index_stretches(cap) * sizeof *t->index_fill);
	if (t->slots)
		munmap(t->slots, 2 * cap * sizeof *t->slots);
	if (t->untracked_keys)
		munmap(t->untracked_keys, 2 * cap * sizeof *t->untracked_keys);
	if (t->cold)
		munmap(t->cold, (cap + 1) * sizeof *t->cold);
	if (t->history)
		munmap(t->history, history_entries(hist, cap) * sizeof *t->history);
	if (t->history_ticks)
		munmap(t->history_ticks,
		       history_entries(hist, cap) * sizeof *t->history_ticks);
	if (t->init_stacks)
		munmap(t->init_stacks, (cap + 1) * sizeof *t->init_stacks);
	if (t->load_counts)
		munmap(t->load_counts, (cap + 1) * sizeof *t->load_counts);
	if (t->free_next)
		munmap(t->free_next, (cap + 1) * sizeof *t->free_next);
	if (t->reads)
		munmap(t->reads, reads_slots(cap) * sizeof *t->reads);
	if (t->reads_free)
		munmap(t->reads_free, reads_slots(cap) * sizeof *t->reads_free);
	if (t->read_ring)
		munmap(t->read_ring, reads_slots(cap) * hist * sizeof *t->read_ring);
	if (t->read_ring_ticks)
		munmap(t->read_ring_ticks, reads_slots(cap) * hist * sizeof *t->read_ring_ticks);
	t->read_ring = NULL;
	t->read_ring_ticks = NULL;
	t->reads = NULL;
	t->reads_free = NULL;
	t->slots = NULL;
	t->untracked_keys = NULL;
	t->index_fill = NULL;
	t->cold = NULL;
	t->history = NULL;
	t->history_ticks = NULL;
	t->init_stacks = NULL;
	t->load_counts = NULL;
	t->free_next = NULL;
}

/* Map the table for `capacity` mutexes (a power of two); if the address
 * space is limited, halve until it fits.  Returns the capacity obtained,
 * 0 if nothing could be mapped. */
int ms_table_init(uint32_t capacity, uint32_t history_len)
{
	struct ms_table *t = &ms_table;
	if (!t->sites)
		t->sites = ms_pages_map(MS_SITE_LINES * sizeof *t->sites);
	/* a slot's home is its 32-bit tag & index_mask (table.h): the index
	 * (twice the records) must fit in 32 bits; MUTEXSTAT_TABLE_SIZE's
	 * limit, 2^26, is far below */
	size_t first = capacity > (1u << 30) ? (1u << 30) : capacity;
	for (size_t cap = first; cap >= 64 && t->sites; cap /= 2) {
		/* records[] is published last: the lock path reads it
		 * without asking whether the table is ready */
		size_t rec_bytes = (cap + 1) * sizeof(struct ms_record);
		struct ms_record *records = ms_pages_map_filled_in_order(rec_bytes, rec_bytes, SMALL_PART);
		t->slots = ms_pages_map(2 * cap * sizeof *t->slots);
		t->untracked_keys = ms_pages_map(2 * cap * sizeof *t->untracked_keys);
		t->index_fill = ms_pages_map(index_stretches(cap) * sizeof *t->index_fill);
		t->cold = ms_pages_map((cap + 1) * sizeof *t->cold);
		size_t history_bytes = history_entries(history_len, cap) * sizeof *t->history;
		t->history = ms_pages_map_filled_in_order(
			history_bytes, (cap + 1) * MS_HISTORY_GROUP * sizeof *t->history, SMALL_PART);
		t->history_ticks =
			ms_pages_map(history_entries(history_len, cap) * sizeof *t->history_ticks);
		size_t init_bytes = (cap + 1) * sizeof *t->init_stacks;
		t->init_stacks = ms_pages_map_filled_in_order(init_bytes, init_bytes, SMALL_PART);
		t->free_next = ms_pages_map((cap + 1) * sizeof *t->free_next);
		t->reads = ms_pages_map(reads_slots(cap) * sizeof *t->reads);
		t->reads_free = ms_pages_map(reads_slots(cap) * sizeof *t->reads_free);
		t->read_ring = ms_pages_map(reads_slots(cap) * history_len * sizeof *t->read_ring);
		t->read_ring_ticks =
			ms_pages_map(reads_slots(cap) * history_len * sizeof *t->read_ring_ticks);
		if (t->slots && t->untracked_keys && t->index_fill && records && t->cold && t->history &&
		    t->history_ticks && t->init_stacks && t->free_next && t->reads &&
		    t->reads_free && t->read_ring && t->read_ring_ticks) {
			t->reads_cap = (uint32_t)reads_slots(cap);
			t->reads_next = t->reads_nfree = t->reads_spent = 0;
			records[0].key = MS_KEY_NO_MUTEX;
			__atomic_store_n(&t->records, records, __ATOMIC_RELEASE);
			t->capacity = (uint32_t)cap;
			t->index_mask = 2 * cap - 1;
			t->index_shift = (unsigned)__builtin_ctzll(2 * cap);
			t->history_len = history_len;
			t->history_mask = history_len - 1;
			for (size_t k = 0; k < history_len; k++)
				t->history_row[k] =
					t->history +
					k / MS_HISTORY_GROUP * (cap + 1) * MS_HISTORY_GROUP +
					k % MS_HISTORY_GROUP;
			t->next_unused = 1;
			/* zero already in a process's first table: 32 KiB
			 * written would be 8 page faults at every start-up */
			static int made_before;
			if (made_before)
				memset(stripes, 0, sizeof stripes);
			made_before = 1;
			pool.free_head = 0;
			ms_self.nspare = 0; /* (a test's table made again) */
			__atomic_store_n(&t->ready, 1, __ATOMIC_RELEASE);
			return (int)cap;
		}
		if (records)
			munmap(records, (cap + 1) * sizeof *records);
		unmap_all(t, cap, history_len);
	}
	return 0;
}

/* ---- records --------------------------------------------------------- */

/* Records are handed out in order, so a program making many mutexes
 * touches them page after page: the next POPULATE_RECORDS are made
 * resident in one call rather than one page fault each, with the first
 * group of history positions (init, lock, unlock: every mutex uses it) and
 * their init stacks.  That is 132 KiB per 1024 records; later groups stay
 * untouched until used. */
#define POPULATE_RECORDS 1024

/* Index slot i was just taken by an insert. */
static __attribute__((noinline)) void index_counted(struct ms_table *t, size_t stretch,
						    uint16_t *n)
{
	if (__atomic_add_fetch(n, 1, __ATOMIC_RELAXED) != INDEX_FILL_AT)
		return;
	size_t bytes = 2 * (size_t)t->capacity * sizeof *t->slots;
	size_t at = stretch * INDEX_STRETCH;
	ms_pages_populate((char *)t->slots + at,
			  bytes - at < INDEX_STRETCH ? bytes - at : INDEX_STRETCH);
}

static inline __attribute__((always_inline)) void index_filled(struct ms_table *t, uint64_t i)
{
	size_t stretch = i * sizeof *t->slots / INDEX_STRETCH;
	uint16_t *n = &t->index_fill[stretch];
	if (unlikely(LOAD(n) < INDEX_FILL_AT))
		index_counted(t, stretch, n);
}

static void populate_chunk(struct ms_table *t, uint32_t r)
{
	uint32_t n = POPULATE_RECORDS;
	if (n > t->capacity + 1 - r)
		n = t->capacity + 1 - r;
	ms_pages_populate(&t->records[r], n * sizeof t->records[0]);
	ms_pages_populate(&t->init_stacks[r], n * sizeof t->init_stacks[0]);
	ms_pages_populate(ms_history_at(r, 0), (size_t)n * MS_HISTORY_GROUP * sizeof(struct ms_op));
}

/* A thread's spare records (thread.h) are refilled from the pool and
 * given back to it MS_SPARE_BATCH at a time.  A spare never used before
 * carries MS_SPARE_FRESH: still zero, and perhaps not yet resident --
 * better written before it is read, or the kernel maps its page twice,
 * once to read and once to write. */
#define MS_SPARE_FRESH 0x80000000u
_Static_assert(MS_SPARE_BATCH * sizeof(uint32_t) == 64,
	       "a batch of fresh records is one line of init_stacks");

/* Few records never used are left: spares are taken and kept one at a
 * time, so that other threads' spares strand as few as possible of the
 * last records (a full table's report tells to raise the limit). */
static int scarce(const struct ms_table *t)
{
	return t->capacity - LOAD(&t->next_unused) < 16u * MS_SPARE * MS_SPARE_BATCH;
}

/* The locks of the pool and of the reads' slots are held for a few
 * instructions, yet a thread stopped there by a signal handler of the
 * program's (a garbage collector's stop-the-world parks every other thread
 * on a semaphore) holds one until it is let go -- while the thread that
 * stopped it goes on locking.  So a waiter gives up (base/spin.h: after a
 * second, or two milliseconds once a wait for that lock gave up) and does
 * without: no record for a new mutex (counted, pool_gave_up), no slot for
 * a read-write lock's reads, or a record or slot lost.  0 then.  Not for
 * a fork: these are taken last of all, and a fork's end lets them go.
 * (The site list's lock, taken once a new site, still waits.) */
static int part_lock(int *word)
{
	return ms_spin_lock_leaf(word);
}

static int pool_lock(struct ms_thread *self)
{
	if (!part_lock(&pool.lock))
		return 0;
	self->upd_pool = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return 1;
}

static void pool_unlock(struct ms_thread *self)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	self->upd_pool = 0;
	spin_unlock(&pool.lock);
}

static void spares_refill(struct ms_table *t, struct ms_thread *self)
{
	uint32_t want = scarce(t) ? 1 : MS_SPARE_BATCH, first = self->nspare;
	uint32_t chunk = 0; /* a chunk of records to make resident */
	if (!pool_lock(self)) {
		ATOMIC_ADD(&t->pool_gave_up, 1); /* one mutex untracked */
		return;
	}
	while (self->nspare < want) {
		uint32_t r = pool.free_head;
		if (r) {
			pool.free_head = t->free_next[r];
		} else if (t->next_unused <= t->capacity) {
			r = t->next_unused;
			/* a batch of never used records ends at a line of
			 * init_stacks: another thread's batch starts the next
			 * (10M lives on two threads took twice as long per life
			 * as on one while two batches shared that line) */
			if (self->nspare > first && r % MS_SPARE_BATCH == 0)
				break;
			STORE(&t->next_unused, r + 1);
			if (r % POPULATE_RECORDS == 0)
				chunk = r;
			r |= MS_SPARE_FRESH;
		} else
			break; /* full */
		self->spare[self->nspare++] = r;
	}
	pool_unlock(self);
	/* after the pool's lock, which every thread making a mutex takes: a
	 * first touch may take a while (a huge page the kernel compacts
	 * memory for).  A thread that uses a record of the chunk meanwhile
	 * faults its page in itself. */
	if (chunk)
		populate_chunk(t, chunk);
	/* record_alloc() takes the last first: reversed, the batch goes out
	 * in the order the pool gave it -- never used records ascending, a
	 * stream the CPU's prefetcher follows through the records and their
	 * history, where a zigzag in eights (a million mutexes made in a row)
	 * missed the cache at nearly every record */
	for (uint32_t i = first, j = self->nspare; i + 1 < j; i++, j--) {
		uint32_t x = self->spare[i];
		self->spare[i] = self->spare[j - 1];
		self->spare[j - 1] = x;
	}
}

/* Give back all but MS_SPARE_BATCH (all, with keep 0); 0 if the pool's
 * lock could not be had (the spares stay). */
static __attribute__((noinline)) int spares_return(struct ms_table *t,
						  struct ms_thread *self, uint32_t keep)
{
	if (!pool_lock(self))
		return 0;
	while (self->nspare > keep) {
		uint32_t r = self->spare[--self->nspare] & ~MS_SPARE_FRESH;
		t->free_next[r] = pool.free_head;
		pool.free_head = r;
	}
	pool_unlock(self);
	return 1;
}

/* A record for a new address, *fresh if never used; MS_REC_UNTRACKED when
 * the table is full.  A full table may still have a few records among
 * other threads' spares. */
static inline __attribute__((always_inline)) uint32_t spare_take(struct ms_thread *self,
								   int *fresh)
{
	uint32_t r = self->spare[--self->nspare];
	*fresh = (r & MS_SPARE_FRESH) != 0;
	return r & ~MS_SPARE_FRESH;
}

static uint32_t record_alloc(struct ms_table *t, int *fresh)
{
	struct ms_thread *self = &ms_self;
	if (!self->nspare)
		spares_refill(t, self);
	if (!self->nspare)
		return MS_REC_UNTRACKED;
	return spare_take(self, fresh);
}

static inline __attribute__((always_inline)) void record_free(struct ms_table *t,
								   uint32_t r)
{
	struct ms_thread *self = &ms_self;
	STORE(&ms_rec(r)->key, 0);
	if (self->nspare == MS_SPARE && !spares_return(t, self, MS_SPARE_BATCH))
		return; /* no room: the record is lost to the table */
	self->spare[self->nspare++] = r;
	if (scarce(t))
		(void)spares_return(t, self, 0); /* where any thread finds it */
}

/* A thread that ends gives its spares back. */
void ms_table_thread_exit(struct ms_thread *self)
{
	if (self->nspare && LOAD(&ms_table.ready))
		(void)spares_return(&ms_table, self, 0); /* or lost */
}

/* The modules loaded since start-up when record r's life begins, kept
 * once a module has been: the array is mapped then, so a program that
 * loads none pays no address space for it (tests/memory_limits.sh's 64
 * threads under ulimit -v had no 256 KiB to spare).  0 if mmap fails:
 * read as none since, fewer names, never a wrong one. */
static __attribute__((noinline)) void load_counts_make(uint32_t r, uint16_t since)
{
	struct ms_table *t = &ms_table;
	size_t bytes = ((size_t)t->capacity + 1) * sizeof *t->load_counts;
	uint16_t *counts = NULL, *made = ms_pages_map(bytes);
	if (!made)
		return;
	if (!__atomic_compare_exchange_n(&t->load_counts, &counts, made, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		munmap(made, bytes); /* another thread's is there */
		made = counts;
	}
	STORE(&made[r], since);
}

static inline __attribute__((always_inline)) void record_load_count(uint32_t r)
{
	uint16_t *counts = __atomic_load_n(&ms_table.load_counts, __ATOMIC_ACQUIRE);
	uint16_t since = ms_loader_adds_short();
	if (likely(counts))
		STORE(&counts[r], since);
	else if (since)
		load_counts_make(r, since);
}

/* A new life: every number zero, the history older than `birth` stale.
 * The order keeps growing across lives so old entries stay older. */
static inline __attribute__((always_inline)) void
record_begin(uint32_t r, uint64_t *clock, int fresh)
{
	struct ms_record *rec = ms_rec(r);
	uint64_t seq = fresh ? 0 : ms_mutex_order(r, rec);
	uint64_t birth = (*clock > seq ? *clock : seq) + 1;
	STORE(&rec->seq, birth);
	*clock = birth;
	STORE(&rec->acquisitions, 0);
	STORE(&rec->owner_changes, 0);
	STORE(&rec->birth, birth);
	STORE(&rec->first_caller, 0);
	STORE(&rec->first_stack, 0);
	STORE(&ms_table.init_stacks[r], 0);
	record_load_count(r);
	STORE(&rec->owner, 0);
	STORE(&rec->flags, 0);
	/* The history restarts at position 0, so a life touches only the
	 * positions it uses; older entries are told apart by `birth`. */
	STORE(&rec->ops, 0);
}

struct ms_cold *ms_cold_slow(uint32_t r)
{
	struct ms_record *rec = ms_rec(r);
	struct ms_cold *c = &ms_table.cold[r];
	uint32_t f = __atomic_load_n(&rec->flags, __ATOMIC_ACQUIRE);
	for (unsigned spins = 0;; spins++) {
		if (f & MS_F_COLD)
			return c;
		if (!(f & MS_F_COLD_BUSY) &&
		    __atomic_compare_exchange_n(&rec->flags, &f, f | MS_F_COLD_BUSY,
						0, __ATOMIC_ACQUIRE,
						__ATOMIC_ACQUIRE)) {
			/* guarded: a signal handler on this thread must not
			 * wait for the zeroing it interrupted */
			ms_guard_enter(&ms_self);
			if (f & MS_F_WAITS_KEPT) {
				/* after a reset while threads ran: all but the
				 * waits under way, which their threads still
				 * take back when they end, and the read holds
				 * of threads that exited, which stay held */
				const size_t at = offsetof(struct ms_cold, waiting),
					     past = at + sizeof c->waiting;
				uint32_t exited_reads = c->exited_reads;
				uint32_t exited_reader = c->exited_reader;
				uintptr_t exited_read_at = c->exited_read_at;
				memset(c, 0, at);
				memset((char *)c + past, 0, sizeof *c - past);
				c->exited_reads = exited_reads;
				c->exited_reader = exited_reader;
				c->exited_read_at = exited_read_at;
				__atomic_fetch_and(&rec->flags, ~MS_F_WAITS_KEPT,
						   __ATOMIC_RELAXED);
			} else
				memset(c, 0, sizeof *c);
			__atomic_fetch_or(&rec->flags, MS_F_COLD, __ATOMIC_RELEASE);
			ms_guard_leave(&ms_self);
			return c;
		}
		if (spins > 100)
			sched_yield();
		f = __atomic_load_n(&rec->flags, __ATOMIC_ACQUIRE);
	}
}

/* ---- folding a life into its site ------------------------------------ */

static struct ms_table_hooks hooks;

void ms_table_set_hooks(const struct ms_table_hooks *h)
{
	hooks = *h;
}

/* The line of first-lock site `site`, made on first need.  Lines are
 * found through a hash index without a lock; a new one is made under the
 * sites lock.  Past MS_MAX_SITES the rest share the other sites' line,
 * made for the first of them and found without the lock.  NULL if
 * that lock's holder was stopped in the middle (a garbage collector's
 * stop-the-world parks threads anywhere): the lock is a leaf that gives
 * up (base/spin.h), where waiting hung the thread that stopped it. */
static uint32_t site_home(uintptr_t site)
{
	uint64_t k = (uint64_t)site * 0x9e3779b97f4a7c15ull;
	return (uint32_t)(k >> 40) & (MS_SITE_INDEX - 1);
}

static struct ms_site *site_find(const struct ms_table *t, uintptr_t site,
				 uint32_t *at)
{
	uint32_t i = site_home(site);
	for (;; i = (i + 1) & (MS_SITE_INDEX - 1)) {
		uint32_t n = __atomic_load_n(&t->site_index[i], __ATOMIC_ACQUIRE);
		if (!n)
			break;
		if (t->sites[n - 1].site == site)
			return &t->sites[n - 1];
	}
	*at = i;
	return NULL;
}

static struct ms_site *site_for(struct ms_table *t, uintptr_t site)
{
	uint32_t at;
	struct ms_site *s = site_find(t, site, &at);
	if (s)
		return s;
	if (__atomic_load_n(&t->nsites, __ATOMIC_ACQUIRE) == MS_SITE_LINES)
		return &t->sites[MS_MAX_SITES];
	struct ms_thread *self = &ms_self;
	if (!ms_spin_lock_leaf(&t->sites_lock))
		return NULL;
	self->upd_sites = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	s = site_find(t, site, &at); /* made meanwhile? */
	if (!s) {
		uint32_t n = t->nsites;
		if (n < MS_MAX_SITES) {
			s = &t->sites[n];
			s->site = site;
			__atomic_store_n(&t->site_index[at], n + 1, __ATOMIC_RELEASE);
			__atomic_store_n(&t->nsites, n + 1, __ATOMIC_RELEASE);
		} else {
			s = &t->sites[MS_MAX_SITES];
			s->site = MS_SITE_OTHERS;
			__atomic_store_n(&t->nsites, MS_SITE_LINES, __ATOMIC_RELEASE);
		}
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	self->upd_sites = 0;
	spin_unlock(&t->sites_lock);
	return s;
}

/* Adds of a life's numbers to its site's line, which other threads' lives
 * of the same site reach at the same time: relaxed atomic adds, and none
 * for a zero. */
#define SITE_ADD(field, v)                                  \
	do {                                                \
		uint64_t v_ = (v);                          \
		if (v_)                                     \
			ATOMIC_ADD(&s->field, v_);          \
	} while (0)
#define SITE_MAX(field, v) atomic_max_u64(&s->field, (v))

/* Add what stripe st holds to its site's line (its lock is held, or all
 * are). */
static void stripe_fold_flush(struct ms_table *t, struct ms_stripe *st)
{
	if (!st->fold_site)
		return;
	struct ms_site *s = &t->sites[st->fold_site - 1];
	STORE(&st->fold_site, 0);
	STORE(&st->fold_plain, 0);
	SITE_ADD(mutexes, st->fold_mutexes);
	SITE_ADD(acquisitions, st->fold_acquisitions);
	SITE_ADD(owner_changes, st->fold_owner_changes);
	STORE(&st->fold_mutexes, 0);
	STORE(&st->fold_acquisitions, 0);
	STORE(&st->fold_owner_changes, 0);
}

void ms_table_site(uint32_t i, struct ms_site *out)
{
	*out = ms_table.sites[i];
	for (unsigned k = 0; k < MS_STRIPES; k++) {
		const struct ms_stripe *st = &stripes[k];
		if (LOAD(&st->fold_site) != i + 1)
			continue;
		out->mutexes += LOAD(&st->fold_mutexes);
		out->acquisitions += LOAD(&st->fold_acquisitions);
		out->owner_changes += LOAD(&st->fold_owner_changes);
	}
}

/* What the newest life of site line s with a cold part leaves there
 * besides sums: its blame lines merged with the line's, and if it is kept
 * (it waited, failed or was named: life_kept) its name, its stacks and
 * its history. */
static void keep_newest_life(struct ms_table *t, uint32_t r, struct ms_site *s, int kept)
{
	if (kept) {
		/* its name too when it had none: an older life's beside this
		 * one's history and stacks would name the wrong lock */
		STORE(&s->name, LOAD(&t->cold[r].name));
		STORE(&s->first_stack, LOAD(&ms_rec(r)->first_stack));
		STORE(&s->init_stack, LOAD(&t->init_stacks[r]));
	}
	if (hooks.keep_life)
		hooks.keep_life(r, s, kept);
}

/* ---- read-write locks' reads: a pool of slots ------------------------ */

struct ms_read_stats *ms_reads_peek(uint32_t r)
{
	const struct ms_table *t = &ms_table;
	uint32_t flags = LOAD(&t->records[r].flags);
	if (!(flags & MS_F_COLD) || ms_lock_class(flags) != MS_CLASS_RWLOCK)
		return NULL;
	uint32_t slot = LOAD(&t->cold[r].reads);
	if (!slot || slot > t->reads_cap)
		return NULL;
	struct ms_read_stats *p = &t->reads[slot - 1];
	return LOAD(&p->rec) == r && LOAD(&p->birth) == LOAD(&ms_rec(r)->birth) ? p : NULL;
}

struct ms_read_stats *ms_reads_slow(uint32_t r)
{
	struct ms_table *t = &ms_table;
	/* A life that found none has its reads in the record's count: a
	 * slot freed later would count them as writes (reads are the count
	 * less the slot's writes), so it gets none for the rest of it. */
	if (LOAD(&ms_rec(r)->flags) & MS_F_READS_SPENT)
		return NULL;
	struct ms_cold *c = ms_cold(r);
	uint64_t birth = LOAD(&ms_rec(r)->birth);
	for (;;) {
		struct ms_read_stats *p = ms_reads_peek(r);
		if (p)
			return p;
		uint32_t seen = LOAD(&c->reads), slot = 0;
		/* guarded: a signal handler must not wait for this lock */
		ms_guard_enter(&ms_self);
		if (!part_lock(&t->reads_lock)) {
			ms_guard_leave(&ms_self);
			/* as spent: counted apart from writes, or not at all,
			 * for its whole life */
			__atomic_fetch_or(&ms_rec(r)->flags, MS_F_READS_SPENT, __ATOMIC_RELAXED);
			return NULL;
		}
		if (t->reads_nfree)
			slot = t->reads_free[--t->reads_nfree] + 1;
		else if (t->reads_next < t->reads_cap)
			slot = ++t->reads_next;
		spin_unlock(&t->reads_lock);
		ms_guard_leave(&ms_self);
		if (!slot) {
			if (!(LOAD(&ms_rec(r)->flags) & MS_F_READS_SPENT)) {
				__atomic_fetch_or(&ms_rec(r)->flags, MS_F_READS_SPENT,
						  __ATOMIC_RELAXED);
				ATOMIC_ADD(&t->reads_spent, 1);
			}
			return NULL;
		}
		p = &t->reads[slot - 1];
		/* all but its history's address, the slot's for good, and
		 * the count of its takings, which goes on */
		size_t kept = offsetof(struct ms_read_stats, rec);
		memset((char *)p + kept, 0, sizeof *p - kept);
		STORE(&p->ring, t->read_ring + (size_t)(slot - 1) * t->history_len);
		STORE(&p->taken, LOAD(&p->taken) + 1);
		/* a slot's history is an earlier life's: none of it is this one's */
		memset(p->ring, 0, t->history_len * sizeof *t->read_ring);
		p->write_order = ms_mutex_order_racing(r, ms_rec(r)); /* a writer may be at it */
		STORE(&p->birth, birth);
		__atomic_store_n(&p->rec, r, __ATOMIC_RELEASE);
		if (__atomic_compare_exchange_n(&c->reads, &seen, slot, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			return p;
		/* another thread gave it one meanwhile: this one back */
		STORE(&p->rec, 0);
		ms_guard_enter(&ms_self);
		if (part_lock(&t->reads_lock)) { /* or the slot is lost */
			t->reads_free[t->reads_nfree++] = slot - 1;
			spin_unlock(&t->reads_lock);
		}
		ms_guard_leave(&ms_self);
	}
}

/* Life r ends: its slot back to the pool (under its stripe's lock). */
static void reads_free(struct ms_table *t, uint32_t r)
{
	uint32_t slot = LOAD(&t->cold[r].reads);
	STORE(&t->cold[r].reads, 0);
	STORE(&t->reads[slot - 1].rec, 0);
	if (!part_lock(&t->reads_lock))
		return; /* the slot is lost */
	t->reads_free[t->reads_nfree++] = slot - 1;
	spin_unlock(&t->reads_lock);
}

/* A read-write lock life's reads, to its site's line. */
static void fold_reads(const struct ms_read_stats *c, uint64_t acquisitions,
		       struct ms_site *s)
{
	uint64_t writes = LOAD(&c->writes);
	SITE_ADD(rd.acquisitions, acquisitions > writes ? acquisitions - writes : 0);
	SITE_ADD(rd.contended, LOAD(&c->contended));
	SITE_ADD(rd.wait_total, LOAD(&c->wait_total) + LOAD(&c->timeout_wait_total));
	SITE_MAX(rd.wait_max, LOAD(&c->wait_max));
	SITE_ADD(rd.holds, LOAD(&c->holds));
	SITE_ADD(rd.hold_total, LOAD(&c->hold_total));
	SITE_MAX(rd.hold_max, LOAD(&c->hold_max));
	SITE_ADD(rd.trylock_ok, LOAD(&c->trylock_ok));
	SITE_ADD(rd.trylock_busy, LOAD(&c->trylock_busy));
	SITE_ADD(rd.timeouts, LOAD(&c->timeouts));
	SITE_ADD(rd.writes_behind_readers, LOAD(&c->writes_behind_readers));
	SITE_ADD(rd.writes_behind_readers_total, LOAD(&c->writes_behind_readers_total));
	SITE_MAX(rd.readers_max, LOAD(&c->readers_max));
	for (int i = 0; i < MS_HIST_BUCKETS; i++) {
		SITE_ADD(rd.hist[i], LOAD(&c->hist[i]));
		SITE_ADD(rd.hold_hist[i], LOAD(&c->hold_hist[i]));
	}
}

/* Whether an ended life's stacks and recent operations stay on its
 * site's line: it waited (for the lock, or in a condition wait), failed
 * (a busy try, a timeout, an error, a misuse) or was named, as the
 * report's heading of them says.  A life with a cold part for anything
 * else -- a try that got the lock, an rwlock's reads -- is counted only,
 * like one without. */
static int life_kept(const struct ms_cold *c)
{
	if (LOAD(&c->contended) || LOAD(&c->timeout_waits) || LOAD(&c->cond_waits) ||
	    LOAD(&c->trylock_busy) || LOAD(&c->timeouts) || LOAD(&c->name))
		return 1;
	for (int i = 0; i < MS_E_COUNT; i++)
		if (LOAD(&c->errors[i]))
			return 1;
	for (int i = 0; i < MS_M_COUNT; i++)
		if (LOAD(&c->misuse[i]))
			return 1;
	return 0;
}

/* The numbers of a life that waited, failed or was named (its cold part),
 * straight to its site's line s. */
static __attribute__((noinline)) void fold_cold(struct ms_table *t, uint32_t r,
						 struct ms_site *s)
{
	const struct ms_cold *c = &t->cold[r];
	SITE_ADD(contended, LOAD(&c->contended));
	SITE_ADD(wait_total, LOAD(&c->wait_total) + LOAD(&c->timeout_wait_total));
	SITE_MAX(wait_max, LOAD(&c->wait_max));
	SITE_MAX(wait_max, LOAD(&c->timeout_wait_max));
	SITE_MAX(got_wait_max, LOAD(&c->wait_max));
	SITE_ADD(hold_total, LOAD(&c->hold_total));
	SITE_MAX(hold_max, LOAD(&c->hold_max));
	SITE_ADD(holds, LOAD(&c->holds));
	SITE_ADD(trylock_ok, LOAD(&c->trylock_ok));
	SITE_ADD(trylock_busy, LOAD(&c->trylock_busy));
	SITE_ADD(timeouts, LOAD(&c->timeouts));
	SITE_ADD(timeout_waits, LOAD(&c->timeout_waits));
	SITE_ADD(cond_waits, LOAD(&c->cond_waits));
	SITE_MAX(waiters_max, LOAD(&c->waiters_max));
	int timed = (LOAD(&ms_rec(r)->flags) & MS_F_TIMED) != 0;
	SITE_ADD(timed_mutexes, timed);
	for (int i = 0; i < MS_E_COUNT; i++)
		SITE_ADD(errors[i], LOAD(&c->errors[i]));
	for (int i = 0; i < MS_M_COUNT; i++)
		SITE_ADD(misuse[i], LOAD(&c->misuse[i]));
	/* a wait that got the mutex makes its holds timed: a life not timed
	 * (named, failed) has empty histograms, not worth adding */
	for (int i = 0; timed && i < MS_HIST_BUCKETS; i++)
		SITE_ADD(hist[i], LOAD(&c->hist[i]));
	for (int i = 0; timed && i < MS_HIST_BUCKETS; i++)
		SITE_ADD(hold_hist[i], LOAD(&c->hold_hist[i]));
	struct ms_read_stats *rd = NULL;
	int kept = life_kept(c);
	if ((rd = ms_reads_peek(r)) != NULL) {
		kept |= LOAD(&rd->contended) || LOAD(&rd->trylock_busy) || LOAD(&rd->timeouts);
		fold_reads(rd, ms_rec_acquisitions(r), s);
	}
	keep_newest_life(t, r, s, kept); /* (the copy of its history reads the slot's) */
	if (rd)
		reads_free(t, r);
}

/* The site line of a life ending under stripe st that is not the site the
 * stripe sums now: the stripe's sums go to their line first. */
static __attribute__((noinline)) struct ms_site *
fold_other_site(struct ms_table *t, uintptr_t site, struct ms_stripe *st)
{
	struct ms_site *s = site_for(t, site);
	if (!s) {
		ATOMIC_ADD(&t->sites_gave_up, 1); /* the life is summed nowhere */
		return NULL;
	}
	uint32_t line = (uint32_t)(s - t->sites) + 1;
	if (LOAD(&st->fold_site) != line) { /* (the other sites' line stays) */
		stripe_fold_flush(t, st);
		STORE(&st->fold_site, line);
	}
	return s;
}

/* The bases of ms_table_reset_running (table.h): mapped at the first
 * reset while threads run, one per record, never freed (a fork child's
 * reset drops them: its counters are zeroed). */
struct count_base {
	uint64_t birth, acquisitions, owner_changes;
};
static struct count_base *bases;

static uint64_t less_base(uint32_t r, uint64_t v, int which)
{
	struct count_base *b = __atomic_load_n(&bases, __ATOMIC_ACQUIRE);
	if (!b || r > ms_table.capacity ||
	    __atomic_load_n(&b[r].birth, __ATOMIC_ACQUIRE) != LOAD(&ms_rec(r)->birth))
		return v;
	uint64_t base = which ? LOAD(&b[r].owner_changes) : LOAD(&b[r].acquisitions);
	return v > base ? v - base : 0;
}

uint64_t ms_reads_newest_order(uint32_t r)
{
	const struct ms_read_stats *rd = ms_reads_peek(r);
	return rd ? ms_read_ring_newest(rd, LOAD(&rd->read_ops)) : 0;
}

uint64_t ms_read_ring_newest(const struct ms_read_stats *rd, uint64_t ops)
{
	/* a read being written reads 0, as the main history's newest entry
	 * does for ms_mutex_order_racing */
	uint64_t newest = 0, n = ops < ms_table.history_len ? ops : ms_table.history_len;
	for (uint64_t i = 1; i <= n; i++) {
		uint64_t o = __atomic_load_n(&ms_read_ring_at(rd, ops - i)->stamp, __ATOMIC_ACQUIRE) >>
			     MS_OP_TID_BITS;
		if (o > newest)
			newest = o;
	}
	return newest;
}

uint64_t ms_rec_ring_reads(uint32_t r)
{
	const struct ms_read_stats *rd = ms_reads_peek(r);
	return rd ? LOAD(&rd->read_ops) / 2 : 0;
}

/* A reset leaves the reads of a slot out by itself: the new birth it
 * gives every life makes each slot stale, and the next read takes a new
 * one, from zero. */
uint64_t ms_rec_acquisitions(uint32_t r)
{
	return less_base(r, LOAD(&ms_rec(r)->acquisitions), 0) + ms_rec_ring_reads(r);
}

uint64_t ms_rec_owner_changes(uint32_t r)
{
	return less_base(r, LOAD(&ms_rec(r)->owner_changes), 1);
}

/* The site whose line a life's numbers go to when it ends: where it was
 * first locked, or the caller of the wrapper it was locked through. */
static inline __attribute__((always_inline)) uintptr_t
site_of(uintptr_t site, uint32_t first_stack, int *wrapped)
{
	*wrapped = 0;
	if (unlikely(first_stack && !(first_stack & MS_SITE_SHARED)) &&
	    hooks.site_beyond_wrapper) {
		uintptr_t beyond = hooks.site_beyond_wrapper(site, first_stack);
		*wrapped = beyond != site; /* a wrapper's life: its caller's line */
		site = beyond;
	}
	return site;
}

uintptr_t ms_table_site_of(uintptr_t first_caller, uint32_t first_stack)
{
	int wrapped;
	return site_of(first_caller, first_stack, &wrapped);
}

long ms_table_site_line(uintptr_t site)
{
	uint32_t at;
	const struct ms_site *s = site_find(&ms_table, site, &at);
	if (s)
		return s - ms_table.sites;
	/* past MS_MAX_SITES the rest share the other sites' line (site_for) */
	return LOAD(&ms_table.nsites) >= MS_MAX_SITES ? MS_MAX_SITES : -1;
}

/* fold() in full: a life of another kind of lock, or with a cold part, or
 * of a wrapper's site, or after a reset while threads ran, or of a site
 * the stripe does not sum now. */
static __attribute__((noinline)) void fold_full(struct ms_table *t, uint32_t r,
						struct ms_stripe *st)
{
	struct ms_record *rec = ms_rec(r);
	int wrapped;
	uintptr_t site = site_of(LOAD(&rec->first_caller), LOAD(&rec->first_stack), &wrapped);
	struct ms_site *s;
	if (likely(st->fold_site && t->sites[st->fold_site - 1].site == site))
		s = &t->sites[st->fold_site - 1]; /* the usual case: no lookup */
	else if (!(s = fold_other_site(t, site, st)))
		return;
	if (unlikely(wrapped) && !LOAD(&s->wrapped))
		STORE(&s->wrapped, 1);
	uint64_t acquisitions = LOAD(&rec->acquisitions);
	uint64_t owner_changes = LOAD(&rec->owner_changes);
	unsigned lock_class = ms_lock_class(LOAD(&rec->flags));
	if (unlikely(__atomic_load_n(&bases, __ATOMIC_ACQUIRE) != NULL)) {
		acquisitions = ms_rec_acquisitions(r); /* since a reset */
		owner_changes = ms_rec_owner_changes(r);
	} else if (unlikely(lock_class == MS_CLASS_RWLOCK))
		acquisitions += ms_rec_ring_reads(r);
	uint32_t class_bit = 1u << lock_class;
	if (unlikely(!(LOAD(&s->classes) & class_bit)))
		__atomic_fetch_or(&s->classes, class_bit, __ATOMIC_RELAXED);
	SERIAL_ADD(&st->fold_mutexes, 1);
	SERIAL_ADD(&st->fold_acquisitions, acquisitions);
	SERIAL_ADD(&st->fold_owner_changes, owner_changes);
	/* the next plain life of this site needs none of the above */
	if (st->fold_site && &t->sites[st->fold_site - 1] == s && s->site == site &&
	    (LOAD(&s->classes) & 1u << MS_CLASS_MUTEX))
		STORE(&st->fold_plain, site + 1);
	if (unlikely(LOAD(&rec->flags) & MS_F_COLD))
		fold_cold(t, r, s);
}

/* A life ends (its stripe st is locked; flags, its record's): its numbers
 * go to its site.  Inline, what most lives need: a mutex's life without a
 * cold part, first locked where no wrapper is known (a stack shared by
 * its site, or none), of the site whose line the stripe sums now, which
 * counts mutexes already -- three sums in the stripe.  The rest is
 * fold_full()'s. */
static inline __attribute__((always_inline)) void
fold(struct ms_table *t, uint32_t r, struct ms_stripe *st, uint32_t flags)
{
	const struct ms_record *rec = ms_rec(r);
	uintptr_t site = LOAD(&rec->first_caller);
	uint32_t first_stack = LOAD(&rec->first_stack);
	if (unlikely((flags & (MS_F_COLD | MS_F_CLASS)) ||
		     (first_stack && !(first_stack & MS_SITE_SHARED)) ||
		     LOAD(&st->fold_plain) != site + 1 ||
		     __atomic_load_n(&bases, __ATOMIC_ACQUIRE) != NULL)) {
		fold_full(t, r, st);
		return;
	}
	SERIAL_ADD(&st->fold_mutexes, 1);
	SERIAL_ADD(&st->fold_acquisitions, LOAD(&rec->acquisitions));
	SERIAL_ADD(&st->fold_owner_changes, LOAD(&rec->owner_changes));
}

/* ---- adding and removing addresses ----------------------------------- */

/* The name of a record that was named and did nothing else (no operation
 * in its history), or NULL. */
static const char *only_named(struct ms_table *t, uint32_t r)
{
	const struct ms_record *rec = ms_rec(r);
	if (!(LOAD(&rec->flags) & MS_F_COLD) || LOAD(&rec->ops) || LOAD(&rec->acquisitions) ||
	    LOAD(&rec->first_caller))
		return NULL;
	return LOAD(&t->cold[r].name);
}

/* The address in slot i, whose stripes' locks are held (or in a test):
 * its record's key, or the side array's for an untracked one;
 * MS_KEY_EMPTY or MS_KEY_TOMB if it has none. */
static inline __attribute__((always_inline)) uintptr_t slot_key(uint64_t i)
{
	const struct ms_table *t = &ms_table;
	uint64_t s = LOAD(&t->slots[i]);
	if (s == MS_SLOT_EMPTY)
		return MS_KEY_EMPTY;
	uint32_t r = ms_slot_rec(s);
	if (r == MS_REC_NONE)
		return MS_KEY_TOMB;
	return r == MS_REC_UNTRACKED ? LOAD(&t->untracked_keys[i])
				     : LOAD(&t->records[r].key);
}

uintptr_t ms_table_slot_key(uint64_t i)
{
	return slot_key(i);
}

/* Slot i, whose word the caller has loaded (s: its stripes' locks are
 * held, so it stays), holds `key` (hash's low bits `tag`): slot_key(i) ==
 * key, without loading the slot again.  The tag first: most slots of a
 * run are other addresses' homes. */
static inline __attribute__((always_inline)) int
slot_holds(const struct ms_table *t, uint64_t i, uint64_t s, uint32_t tag, uintptr_t key)
{
	if (ms_slot_tag(s) != tag)
		return 0;
	uint32_t r = ms_slot_rec(s);
	if (r == MS_REC_NONE) /* a tombstone, or an empty slot */
		return 0;
	return (r == MS_REC_UNTRACKED ? LOAD(&t->untracked_keys[i])
				      : LOAD(&t->records[r].key)) == key;
}

/* A new life for record r (spare, `fresh` if never used) at free slot
 * `at` (its stripes' locks held): numbers zero, address published, slot
 * filled.  Returns a name waiting for the address, to store once the
 * locks are let go, or NULL. */
static inline __attribute__((always_inline)) const char *
add_record(struct ms_table *t, struct ms_update_locks *l, uint64_t at, uintptr_t key,
	   uint64_t hash, uint32_t r, int fresh, int birth, uint64_t *clock)
{
	record_begin(r, clock, fresh);
	SERIAL_ADD(&l->home->made, 1);
	ms_self.added_new = 1;
	/* Publish the address before the slot: a lookup that sees the slot
	 * finds its address. */
	__atomic_store_n(&ms_rec(r)->key, key, __ATOMIC_RELEASE);
	/* A lock is most often taken soon after its init: into the first
	 * level of the thread's lookup cache, for its first lock's plain path
	 * (no probe of the index).  Not the second, whose pages a thread that
	 * uses few locks never touches. */
	if (birth)
		ms_cache_fill(&ms_self, key, r);
	__atomic_store_n(&t->slots[at], ms_slot_make(hash, r), __ATOMIC_RELEASE);
	index_filled(t, at);
	if (unlikely(ms_pending_names_any()))
		return ms_pending_name_take(key);
	return NULL;
}

/* ms_table_add, or with `naming` (mutexstat_name_lock): key's record if
 * it has one, else its name waits for the record its first use or init
 * makes (core/pending_names.h; *kept: 0, or -1 if it cannot) and the
 * answer is MS_REC_NONE.  A record made takes the name waiting for it,
 * under the same lock as the name is put.
 * add_locked() is this once the home stripe's lock is held (l): the probe
 * from the home slot on, to the locks let go. */
static inline __attribute__((always_inline)) uint32_t
add_locked(struct ms_update_locks *l, uintptr_t key, uint64_t hash, int birth,
	   uint64_t *clock, int naming, const char *name, int *kept, int as_class)
{
	struct ms_table *t = &ms_table;
	const uint32_t tag = (uint32_t)hash;
	uint64_t i = hash & t->index_mask;
	int64_t free_at = -1;
	uint32_t r = MS_REC_UNTRACKED;
	const char *waiting = NULL; /* a name for the record made */
	/* The home slot is read before it is written: a fresh page of the
	 * index may take two faults (once per 512 slots), where writing it
	 * first, unchanged, would take a locked instruction on every add
	 * (doc/internals.md, "Page faults"). */
	const uint64_t home = i;
	for (unsigned n = 0; n < MS_MAX_PROBE; n++, i = (i + 1) & t->index_mask) {
		if (n && !(i & (MS_STRIPE_BLOCK - 1))) {
			int got = reach(l, i);
			if (got < 0) {
				abandon_update();
				return MS_REC_UNTRACKED;
			}
			if (!got) { /* over, with both locks */
				i = home;
				n = 0;
				free_at = -1;
			}
		}
		uint64_t s = t->slots[i];
		/* the end of the run first: an add's usual slot, its home */
		if (s == MS_SLOT_EMPTY) {
			if (free_at < 0)
				free_at = (int64_t)i;
			break;
		}
		if (slot_holds(t, i, s, tag, key)) {
			r = ms_slot_rec(s);
			/* a new life as a kind of lock only if another thread has
			 * not begun it (as_class: ms_table_renew_as) */
			if (as_class >= 0 && r != MS_REC_UNTRACKED &&
			    ms_lock_class(LOAD(&ms_rec(r)->flags)) == (unsigned)as_class)
				goto out;
			if (birth && r != MS_REC_UNTRACKED) {
				/* init of a known address: the old life is over --
				 * unless all it did was take a name (mutexstat_name
				 * before pthread_mutex_init): this init is then the
				 * mutex's first, and the name stays */
				const char *name = only_named(t, r);
				uint32_t flags = LOAD(&ms_rec(r)->flags);
				if (!name) {
					fold(t, r, l->home, flags);
					SERIAL_ADD(&l->home->reinitialised, 1);
				}
				life_ends(t, r, flags);
				record_begin(r, clock, 0);
				ms_cache_fill(&ms_self, key, r); /* as a new one's, below */
				if (as_class > 0) /* the kind with the life, in one step */
					STORE(&ms_rec(r)->flags, (uint32_t)as_class << MS_F_CLASS_SHIFT);
				if (name)
					STORE(&ms_cold(r)->name, name);
			}
			goto out;
		}
		if (s == MS_SLOT_TOMB && free_at < 0)
			free_at = (int64_t)i;
	}
	if (free_at < 0) {
		/* No room near this address's home: leave it untracked. */
		if (!naming)
			SERIAL_ADD(&l->home->untracked_ops, 1);
		goto out;
	}
	if (naming) {
		*kept = ms_pending_name_put(key, name);
		r = MS_REC_NONE;
		goto out;
	}
	int fresh;
	r = record_alloc(t, &fresh);
	if (r != MS_REC_UNTRACKED) {
		waiting = add_record(t, l, (uint64_t)free_at, key, hash, r, fresh, birth, clock);
		goto out;
	}
	SERIAL_ADD(&l->home->untracked_mutexes, 1);
	ms_self.added_new = 1;
	__atomic_store_n(&t->untracked_keys[free_at], key, __ATOMIC_RELEASE);
	__atomic_store_n(&t->slots[free_at], ms_slot_make(hash, r), __ATOMIC_RELEASE);
	index_filled(t, (uint64_t)free_at);
out:
	unlock_after_update(l);
	if (unlikely(waiting != NULL))
		STORE(&ms_cold(r)->name, waiting);
	return r;
}

/* ms_table_add past its plain case: the probe, with the home stripe's
 * lock held.  Out of line, so that the plain case keeps few registers. */
static __attribute__((noinline)) uint32_t add_probed(struct ms_update_locks *l, uintptr_t key,
						      uint64_t hash, int birth, uint64_t *clock)
{
	return add_locked(l, key, hash, birth, clock, 0, NULL, NULL, -1);
}

static inline __attribute__((always_inline)) uint32_t
add_or_name(uintptr_t key, int birth, uint64_t *clock, int naming, const char *name,
	    int *kept, int as_class)
{
	const uint64_t hash = ms_hash(key);
	struct ms_update_locks l;
	ms_self.added_new = 0;
	if (!lock_for_update(&l, hash & ms_table.index_mask))
		return MS_REC_UNTRACKED; /* this call is not recorded */
	return add_locked(&l, key, hash, birth, clock, naming, name, kept, as_class);
}

/* The plain add: the home slot empty (an add's usual slot: the table is
 * kept sparse) and a spare record at hand -- what add_locked() does then,
 * with no call but the rare ones. */
uint32_t ms_table_add(uintptr_t key, int birth, uint64_t *clock)
{
	struct ms_table *t = &ms_table;
	struct ms_thread *self = &ms_self;
	const uint64_t hash = ms_hash(key);
	const uint64_t i = hash & t->index_mask;
	struct ms_update_locks l;
	self->added_new = 0;
	if (!lock_for_update(&l, i))
		return MS_REC_UNTRACKED; /* this call is not recorded */
	/* (the home slot read before it is written: add_locked()) */
	if (unlikely(t->slots[i] != MS_SLOT_EMPTY || !self->nspare))
		return add_probed(&l, key, hash, birth, clock);
	int fresh;
	uint32_t r = spare_take(self, &fresh); /* record_alloc()'s */
	const char *waiting = add_record(t, &l, i, key, hash, r, fresh, birth, clock);
	unlock_after_update(&l);
	if (unlikely(waiting != NULL))
		STORE(&ms_cold(r)->name, waiting);
	return r;
}

uint32_t ms_table_renew_as(uintptr_t key, unsigned lock_class, uint64_t *clock)
{
	return add_or_name(key, 1, clock, 0, NULL, NULL, (int)lock_class);
}

uint32_t ms_table_name_later(uintptr_t key, const char *name, uint64_t *clock, int *kept)
{
	*kept = 0;
	return add_or_name(key, 0, clock, 1, name, kept, -1);
}

/* Empty slot i (its stripes' locks are held), then move later members of
 * its probe run back into the hole wherever their home allows (Knuth's
 * algorithm R for linear probing), so no empty slot ever separates a key
 * from its home and tombstones do not pile up.  Lock-free readers may, for
 * an instant, see a moved key twice (same record: harmless) or miss it; a
 * miss only sends them to the insert path, which takes the locks and finds
 * the key.  A hole is marked MS_KEY_TOMB while it is being refilled, so
 * readers step over it.  A run that goes on into the next block takes
 * that block's lock too; one that goes on further still (a run longer
 * than a block: rare at the table's load) leaves its hole a tombstone,
 * which a later add may fill.  Returns -1 if the next block's lock could
 * not be had (a fork): the hole stays a tombstone and no lock is held. */
/* Whether slot i's run ends at the next slot, empty and in i's block
 * (under the same lock): then no key follows, none moves and no reader
 * has a hole to step over -- slot i is emptied at once. */
static inline __attribute__((always_inline)) int run_ends_after(const struct ms_table *t,
								 uint64_t i)
{
	uint64_t next = (i + 1) & t->index_mask;
	return (next & (MS_STRIPE_BLOCK - 1)) && t->slots[next] == MS_SLOT_EMPTY;
}

static int delete_at(struct ms_table *t, uint64_t i, struct ms_update_locks *l)
{
	const uint64_t mask = t->index_mask;
	if (likely(run_ends_after(t, i))) /* the usual case */
		goto emptied;
	__atomic_store_n(&t->slots[i], MS_SLOT_TOMB, __ATOMIC_RELEASE);
	uint64_t scanned = 0;
	for (uint64_t j = (i + 1) & mask;; j = (j + 1) & mask) {
		if (++scanned > mask)
			return 0; /* no empty slot anywhere: the hole stays a tombstone */
		/* a new block at each multiple of 256 only */
		if (!(j & (MS_STRIPE_BLOCK - 1)) && !slot_locked(l, j)) {
			int got = reach(l, j);
			if (got < 0)
				return -1;
			if (got == 2)
				return 0; /* the hole stays a tombstone */
			if (!got) {
				/* The locks were let go meanwhile: an add may
				 * have filled the hole (the run is whole again),
				 * or other removals moved keys; look again from
				 * the hole on. */
				if (LOAD(&t->slots[i]) != MS_SLOT_TOMB)
					return 0;
				j = i;
				scanned = 0;
				continue;
			}
		}
		uint64_t s = t->slots[j];
		if (s == MS_SLOT_EMPTY)
			break;
		if (s == MS_SLOT_TOMB)
			continue; /* another hole: nothing to move */
		uint64_t home = ms_slot_tag(s) & mask;
		/* k may move to the hole only if its home is not within (i, j] */
		int stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
		if (stays)
			continue;
		if (ms_slot_rec(s) == MS_REC_UNTRACKED) /* its address first */
			__atomic_store_n(&t->untracked_keys[i], t->untracked_keys[j],
					 __ATOMIC_RELEASE);
		__atomic_store_n(&t->slots[i], s, __ATOMIC_RELEASE);
		__atomic_store_n(&t->slots[j], MS_SLOT_TOMB, __ATOMIC_RELEASE);
		i = j;
	}
emptied:
	__atomic_store_n(&t->slots[i], MS_SLOT_EMPTY, __ATOMIC_RELEASE);
	/* Tombstones just before an empty slot guard no key (none lies
	 * between them and it): they become empty too, so a run that once
	 * reached further than its locks did shrinks again as it empties. */
	for (uint64_t p = (i - 1) & mask, n = 0;
	     n < mask && t->slots[p] == MS_SLOT_TOMB &&
	     ((p & (MS_STRIPE_BLOCK - 1)) != MS_STRIPE_BLOCK - 1 || slot_locked(l, p));
	     p = (p - 1) & mask, n++)
		__atomic_store_n(&t->slots[p], MS_SLOT_EMPTY, __ATOMIC_RELEASE);
	return 0;
}

/* A tracked record's life ends (its slot's stripes' locks held). */
static inline __attribute__((always_inline)) void
remove_record(struct ms_table *t, struct ms_update_locks *l, uint32_t r)
{
	uint32_t flags = LOAD(&ms_rec(r)->flags);
	fold(t, r, l->home, flags);
	life_ends(t, r, flags);
	record_free(t, r);
	SERIAL_ADD(&l->home->ended, 1);
}

/* ms_table_remove past its plain case: the probe from the home slot, with
 * its stripe's lock held (l), to the locks let go.  Out of line, so that
 * the plain case keeps few registers. */
static __attribute__((noinline)) void remove_probed(struct ms_update_locks *l, uintptr_t key,
						    uint64_t hash)
{
	struct ms_table *t = &ms_table;
	const uint32_t tag = (uint32_t)hash;
	uint64_t i = hash & t->index_mask;
	const uint64_t home = i;
	for (unsigned n = 0; n < MS_MAX_PROBE; n++, i = (i + 1) & t->index_mask) {
		if (n && !(i & (MS_STRIPE_BLOCK - 1))) {
			int got = reach(l, i);
			if (got < 0) {
				abandon_update();
				return;
			}
			if (!got) { /* over, with both locks */
				i = home;
				n = 0;
			}
		}
		uint64_t s = t->slots[i];
		if (s == MS_SLOT_EMPTY)
			break;
		if (!slot_holds(t, i, s, tag, key))
			continue;
		uint32_t r = ms_slot_rec(s);
		if (r != MS_REC_UNTRACKED)
			remove_record(t, l, r);
		else {
			SERIAL_ADD(&l->home->untracked_mutexes, -1);
			SERIAL_ADD(&l->home->untracked_ended, 1);
		}
		if (delete_at(t, i, l) < 0) {
			abandon_update();
			return;
		}
		break;
	}
	unlock_after_update(l);
}

/* The plain removal: the address at its home slot, tracked, the next
 * slot (in the same block) empty and the one before no tombstone --
 * what remove_probed() and delete_at() do then, with no call but the
 * rare ones. */
void ms_table_remove(uintptr_t key, uintptr_t caller)
{
	struct ms_table *t = &ms_table;
	const uint64_t hash = ms_hash(key);
	const uint64_t mask = t->index_mask, i = hash & mask;
	struct ms_update_locks l;

	if (!lock_for_update(&l, i))
		return; /* the life goes on; an init at this address ends it */
	l.destroyed_at = caller;
	uint64_t s = t->slots[i];
	if (unlikely(!slot_holds(t, i, s, (uint32_t)hash, key) ||
		     ms_slot_rec(s) == MS_REC_UNTRACKED || !run_ends_after(t, i) ||
		     t->slots[(i - 1) & mask] == MS_SLOT_TOMB)) {
		remove_probed(&l, key, hash);
		return;
	}
	remove_record(t, &l, ms_slot_rec(s));
	__atomic_store_n(&t->slots[i], MS_SLOT_EMPTY, __ATOMIC_RELEASE);
	unlock_after_update(&l);
}

uintptr_t ms_table_destroyed_at(void)
{
	const struct ms_thread *self = &ms_self;
	return self->in_update && self->upd_locks ? self->upd_locks->destroyed_at : 0;
}

uint64_t ms_reset_ticks;
uint64_t ms_reset_gen;

/* The site lines in use to zero (the rest were never touched, and writing
 * them would make 4 MB resident, in every fork child); their blame lines
 * go to new lines, and their history copies to the lines made next --
 * unless a report reads them.  All update locks held: no life ends. */
static void sites_empty(struct ms_table *t)
{
	int reading = hooks.sites_reset ? hooks.sites_reset(t->sites, t->nsites) : 0;
	for (uint32_t i = 0; i < t->nsites; i++) {
		struct ms_site_history *h = reading ? NULL : t->sites[i].history;
		memset(&t->sites[i], 0, sizeof t->sites[i]);
		if (h) {
			h->n = 0;
			t->sites[i].history = h;
		}
	}
}

static void reset_records(int running)
{
	struct ms_table *t = &ms_table;
	__atomic_fetch_add(&ms_reset_gen, 1, __ATOMIC_SEQ_CST); /* odd: under way */
	STORE(&ms_reset_ticks, ms_ticks());
	ms_table_lock();
	if (running && !bases && t->capacity) {
		void *p = mmap(NULL, ((size_t)t->capacity + 1) * sizeof *bases,
			       PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p != MAP_FAILED)
			__atomic_store_n(&bases, p, __ATOMIC_RELEASE);
	}
	if (!running && bases) {
		/* zeroed counters need no base; one left would match
		 * the birth the reset gives (the last operation's) */
		munmap(bases, ((size_t)t->capacity + 1) * sizeof *bases);
		bases = NULL;
	}
	for (uint32_t r = 1; r < t->next_unused && r <= t->capacity; r++) {
		if (!LOAD(&t->records[r].key))
			continue;
		/* Numbers to zero; what the mutex is stays: its owner (a held
		 * mutex stays held), name, kind and first-lock site. */
		struct ms_record *rec = ms_rec(r);
		uint32_t owner = LOAD(&rec->owner), flags = LOAD(&rec->flags);
		uintptr_t first = LOAD(&rec->first_caller);
		uint32_t first_stack = LOAD(&rec->first_stack);
		uint32_t init_stack = LOAD(&t->init_stacks[r]);
		uint16_t *counts = LOAD(&t->load_counts);
		uint16_t loads = counts ? LOAD(&counts[r]) : 0; /* the same memory */
		const char *name = (flags & MS_F_COLD) ? LOAD(&t->cold[r].name) : NULL;
		uint64_t clock = 0, seq = ms_mutex_order_racing(r, rec);
		if (running && bases) {
			/* no store a holder could undo, or undo its own: the
			 * counters' values are the bases, and the owner, the
			 * sites and the history position stay as they are (a
			 * new birth makes the older history stale) */
			STORE(&bases[r].acquisitions, LOAD(&rec->acquisitions));
			STORE(&bases[r].owner_changes, LOAD(&rec->owner_changes));
			__atomic_store_n(&bases[r].birth, seq, __ATOMIC_RELEASE);
			STORE(&rec->birth, seq);
			__atomic_fetch_and(&rec->flags, ~(MS_F_COLD | MS_F_COLD_BUSY | MS_F_TIMED),
					   __ATOMIC_SEQ_CST);
			/* a thread may be waiting for it: its count stays
			 * when the cold part is zeroed (ms_cold_slow) */
			__atomic_fetch_or(&rec->flags,
					  MS_F_EDGE | (flags & MS_F_COLD ? MS_F_WAITS_KEPT : 0),
					  __ATOMIC_SEQ_CST);
			if (name)
				STORE(&ms_cold(r)->name, name);
			continue;
		}
		record_begin(r, &clock, 0);
		/* The new life begins at the last operation, without moving
		 * the mutex's order: a holder's next operation (its unlock)
		 * counts on its own clock being past the mutex's. */
		STORE(&rec->seq, seq);
		STORE(&rec->birth, seq);
		STORE(&rec->owner, owner);
		STORE(&rec->first_caller, first);
		STORE(&rec->first_stack, first_stack);
		STORE(&t->init_stacks[r], init_stack);
		if (counts)
			STORE(&counts[r], loads);
		/* or, not a store: a flag another thread sets meanwhile stays;
		 * MS_F_EDGE always, since a thread may be caching an edge of
		 * this record right now (order.c) and its end must bump gen */
		__atomic_fetch_or(&rec->flags,
				  (flags & ~(MS_F_COLD | MS_F_COLD_BUSY | MS_F_TIMED | MS_F_WAITS_KEPT)) |
					  MS_F_EDGE,
				  __ATOMIC_SEQ_CST);
		if (name)
			STORE(&ms_cold(r)->name, name);
	}
	for (unsigned i = 0; i < MS_STRIPES; i++) {
		stripes[i].fold_site = 0;
		stripes[i].fold_plain = 0;
		stripes[i].fold_mutexes = 0;
		stripes[i].fold_acquisitions = 0;
		stripes[i].fold_owner_changes = 0;
	}
	sites_empty(t);
	memset(t->site_index, 0, sizeof t->site_index);
	t->nsites = 0;
	for (unsigned i = 0; i < MS_STRIPES; i++) {
		stripes[i].untracked_ops = 0;
		stripes[i].untracked_ended = 0;
		stripes[i].ended_base = stripes[i].ended;
		stripes[i].reinitialised = 0;
	}
	/* every life is new: lock-order edges threads know they recorded
	 * (their caches) belong to the old ones */
	__atomic_fetch_add(&t->gen, 1, __ATOMIC_SEQ_CST);
	/* every life is new: every slot of the reads' pool is stale */
	t->reads_next = t->reads_nfree = 0;
	ms_table_unlock();
	__atomic_fetch_add(&ms_reset_gen, 1, __ATOMIC_SEQ_CST); /* even: done */
}

uint64_t ms_api_reset_ticks;

void ms_table_reset(void)
{
	STORE(&ms_api_reset_ticks, 0); /* a fork's: the numbers start there */
	reset_records(0);
}

void ms_table_reset_running(void)
{
	reset_records(1);
	STORE(&ms_api_reset_ticks, LOAD(&ms_reset_ticks));
}


static void newer_take(const struct ms_op *e, const uint64_t *ticks, uint64_t *best,
		       uintptr_t *at)
{
	struct ms_op_view v;
	ms_op_read(e, ticks, &v);
	if (v.state == 1 && v.order > *best && v.op != MS_OP_UNLOCK &&
	    v.op != MS_OP_RDUNLOCK && v.op != MS_OP_WRUNLOCK && v.op != MS_OP_INIT &&
	    v.op != MS_OP_COND_RELEASE) {
		*best = v.order;
		*at = v.caller;
	}
}

uintptr_t ms_table_last_taken_at(uint32_t r)
{
	uint64_t best = 0;
	uintptr_t at = 0;
	for (uint32_t i = 0; i < ms_table.history_len; i++) {
		const struct ms_op *e = ms_history_at(r, i);
		newer_take(e, ms_history_ticks(e), &best, &at);
	}
	const struct ms_read_stats *rd = ms_reads_peek(r);
	for (uint32_t i = 0; rd && i < ms_table.history_len; i++) {
		const struct ms_op *e = ms_read_ring_at(rd, i);
		newer_take(e, ms_read_ring_ticks(e), &best, &at);
	}
	return at;
}

/* Walks the records in use (dense, from 1) rather than the index, which is
 * twice as large and mostly never touched: reading it would fault in
 * thousands of zero pages at every report. */
void ms_table_each(void (*fn)(uintptr_t, uint32_t, void *), void *arg)
{
	const struct ms_table *t = &ms_table;
	if (!__atomic_load_n(&t->ready, __ATOMIC_ACQUIRE))
		return;
	uint32_t end = LOAD(&t->next_unused);
	for (uint32_t r = 1; r < end && r <= t->capacity; r++) {
		uintptr_t k = __atomic_load_n(&t->records[r].key, __ATOMIC_ACQUIRE);
		if (k)
			fn(k, r, arg);
	}
}

/* ---- reading a record ------------------------------------------------ */

/* The views of one life's entries, at most `cap`: once full, a newer
 * entry takes the place of the oldest (the reads' history of a
 * read-write lock comes on top of the main one and the side ring). */
struct views {
	struct ms_op_view *v;
	uint32_t n, cap, torn;
	uint64_t birth;
};

static void take_view(struct views *c, const struct ms_op *e, const uint64_t *ticks)
{
	struct ms_op_view x;
	ms_op_read(e, ticks, &x);
	if (x.state == -1) {
		c->torn++;
		return;
	}
	if (x.state != 1 || x.order <= c->birth)
		return;
	if (c->n < c->cap) {
		c->v[c->n++] = x;
		return;
	}
	uint32_t oldest = 0;
	for (uint32_t i = 1; i < c->n; i++)
		if (c->v[i].order < c->v[oldest].order)
			oldest = i;
	if (x.order > c->v[oldest].order)
		c->v[oldest] = x;
}

/* The reads' history of record r's slot, if it has one. */
static void take_reads(struct views *c, uint32_t r)
{
	const struct ms_table *t = &ms_table;
	const struct ms_read_stats *rd = ms_reads_peek(r);
	if (!rd)
		return;
	for (uint32_t i = 0; i < t->history_len; i++) {
		const struct ms_op *e = ms_read_ring_at(rd, i);
		take_view(c, e, ms_read_ring_ticks(e));
	}
}

/* Views v[0..n) sorted by order (a stable insertion sort: at most
 * history_len + MS_FAIL_RING); *first is the first of the newest
 * history_len.  Returns n. */
static uint32_t in_order(const struct ms_table *t, struct ms_op_view *v, uint32_t n,
			 uint32_t *first)
{
	for (uint32_t i = 1; i < n; i++) {
		struct ms_op_view x = v[i];
		uint32_t j = i;
		while (j > 0 && x.order < v[j - 1].order) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = x;
	}
	*first = n > t->history_len ? n - t->history_len : 0;
	return n;
}

uint32_t ms_history_read(uint32_t r, struct ms_op_view *v, uint32_t *first,
			 uint32_t *torn)
{
	const struct ms_table *t = &ms_table;
	struct views c = { v, 0, t->history_len + MS_FAIL_RING, 0, LOAD(&ms_rec(r)->birth) };
	/* The side ring first: a failure takes the order after the mutex's,
	 * so one with the same number as a holder's entry read the mutex
	 * before that entry was made -- a trylock that found it busy, then
	 * the holder's unlock -- and the stable sort keeps it in front.
	 * Oldest first: a thread's failures on one hold share a number
	 * (record.c), and are listed as they were made. */
	if (LOAD(&ms_rec(r)->flags) & MS_F_COLD) {
		uint32_t next = LOAD(&t->cold[r].fail_pos);
		for (uint32_t i = 0; i < MS_FAIL_RING; i++) {
			uint32_t at = (next + i) % MS_FAIL_RING;
			take_view(&c, &t->cold[r].fail[at], &t->cold[r].fail_ticks[at]);
		}
	}
	for (uint32_t i = 0; i < t->history_len; i++) {
		const struct ms_op *e = ms_history_at(r, i);
		take_view(&c, e, ms_history_ticks(e));
	}
	take_reads(&c, r);
	*torn = c.torn;
	return in_order(t, v, c.n, first);
}

uint32_t ms_site_history_read(const struct ms_site *s, struct ms_op_view *v,
			      uint32_t *first, uint32_t *torn)
{
	const struct ms_site_history *h = __atomic_load_n(&s->history, __ATOMIC_ACQUIRE);
	*torn = 0;
	*first = 0;
	if (!h)
		return 0;
	struct views c = { v, 0, ms_table.history_len + MS_FAIL_RING, 0, h->birth };
	for (uint32_t i = 0; i < h->n && i < h->cap; i++)
		take_view(&c, &h->ops[i], &h->ticks[i]);
	*torn = c.torn;
	return in_order(&ms_table, v, c.n, first);
}

/* ---- errno kinds ----------------------------------------------------- */

static const int err_values[MS_E_COUNT] = {
	EINVAL, EAGAIN, EDEADLK, EPERM, EOWNERDEAD, ENOTRECOVERABLE, EBUSY, 0,
};

unsigned ms_err_index(int err)
{
	for (unsigned i = 0; i < MS_E_OTHER; i++)
		if (err_values[i] == err)
			return i;
	return MS_E_OTHER;
}

int ms_err_value(unsigned index)
{
	return index < MS_E_COUNT ? err_values[index] : 0;
}
