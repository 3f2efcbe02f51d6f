/* order.h - lock-order edges and the inversions among them.
 *
 * When a thread takes (or blocks on) B while holding A, the edge A->B is
 * recorded once per pair of mutex lives, with the thread, where A was
 * taken, B's stack and the other mutexes held then (possible gates), in
 * the lock-order graph (lockgraph.h).  A new edge is searched for the
 * cycle it closes there and then: a cycle is an inversion that could
 * deadlock even if this run did not, kept as a finding (findings.h) that
 * outlives its mutexes.  Edges of a mutex life that ended (destroy, init
 * again) close nothing. */
#ifndef MUTEXSTAT_ORDER_H
#define MUTEXSTAT_ORDER_H

#include "core/table.h"
#include "core/thread.h"
#include "core/thread_pool.h"
#include "analysis/lockgraph.h"
#include "analysis/edge_window.h"

#include <stdint.h>

/* The thread (record ts) takes or waits for mutex `key` (record r, life
 * birth) at `caller`; note an edge from each mutex it holds.  Cheap when
 * the edges are known (the thread's cache). */
void ms_order_note(struct ms_thread *t, struct ms_tstate *ts, uint32_t r,
		   uintptr_t key, uintptr_t caller);
/* The same, for a caller that asked ms_order_known() already (missed),
 * with the acquisition counted: the first of a mutex initialised in the
 * hold of the one taken last makes a new mutex's edge (lockgraph.h). */
void ms_order_missed(struct ms_thread *t, struct ms_tstate *ts, uint32_t r,
		     uintptr_t key, uintptr_t caller);
/* ms_order_note for a lock taken in read mode (read 1) or not. */
void ms_order_note_mode(struct ms_thread *t, struct ms_tstate *ts, uint32_t r,
			uintptr_t key, uintptr_t caller, int read);

/* Whether a cycle of these edges could deadlock, by their modes and their
 * locks' kinds: each thread's wanted lock must conflict with the mode the
 * next thread holds it in (a read of a reader-preferring read-write lock
 * held for read does not wait).  Report time and at a new edge. */
int ms_order_cycle_can_block(const struct ms_lg_edge *const *path, size_t n);
/* ... with path[0] taken in one of first_modes (its modes' bits; 0: any
 * of path[0]'s modes) */
int ms_order_cycle_can_block_as(const struct ms_lg_edge *const *path, size_t n,
				uint32_t first_modes);

/* Whether entry e of an edge cache is edge a->b, made since the last life
 * in an edge ended (gen). */
static inline __attribute__((always_inline)) int
ms_edge_entry_is(const struct ms_edge_entry *e, uint32_t a, uint32_t b, uint32_t gen)
{
	return e->a == a && e->b == b && e->gen == gen;
}

/* A held lock's key in the edge caches (ms_edge_key): its read bit, bit
 * 0 of its mode, on top. */
static inline __attribute__((always_inline)) uint32_t ms_edge_key_held(const struct ms_held *h)
{
	return h->rec | h->mode << 31;
}

/* The locks thread ts holds besides the top one (a gate, if it takes an
 * edge now), a bit each, the read mode apart: a thread that took an edge
 * under G and takes it again without G, or with G read where it was
 * written, must not find it known -- the gate is gone (a GUARDED
 * INVERSION that can deadlock).  Two locks on one bit: a take holding the
 * one may be taken as holding the other, a gate lost once in 32 pairs. */
static inline __attribute__((always_inline)) uint32_t ms_gate_sig(const struct ms_tstate *ts)
{
	uint32_t sig = 0;
	for (uint32_t i = 0; i + 1 < ts->nheld && i < MS_HELD_MAX; i++)
		sig |= 1u << ((ms_edge_key_held(&ts->held[i]) * 0x9e3779b1u) >> 27);
	return sig;
}

/* ... and taken then with no lock held that is not held now by thread ts
 * (whose gates ms_gate_sig says; an edge taken with none is known to any).
 * alone, a constant: 1 when ts holds no lock but the top, so has no gate
 * (ms_gate_sig would be 0) -- no loop over the held set in line. */
static inline __attribute__((always_inline)) int
ms_edge_entry_covers(const struct ms_edge_entry *e, uint32_t a, uint32_t b, uint32_t gen,
		     const struct ms_tstate *ts, int alone)
{
	return ms_edge_entry_is(e, a, b, gen) &&
	       (likely(!e->gates) || (!alone && !(e->gates & ~ms_gate_sig(ts))));
}

/* ... entry e of the thread's small cache. */
static inline __attribute__((always_inline)) int
ms_edge_cached(const struct ms_tstate *ts, unsigned e, uint32_t a, uint32_t b,
	       uint32_t gen, int alone)
{
	return ms_edge_entry_covers(&ts->edge_cache[e], a, b, gen, ts, alone);
}

/* Taking record b while holding others: the edge from the one taken last
 * is in the thread's cache of edges already recorded (and not since made
 * stale by a mutex leaving the table), so ms_order_note() has nothing to
 * do.  Holding 1..MS_HELD_MAX.  Inline: the lock path asks it first.
 *
 * The cache is two-way: an edge may sit in its slot or the slot's partner
 * (slot ^ 1), so two edges a thread takes every time that share a slot do
 * not put each other out (one-way, a thread taking twenty mutexes in a row
 * had a pair that did in about half of all runs, and looked both up in
 * the graph, with its gates, every time). */
/* The key of a held or wanted lock in the edge caches: its record, with
 * the top bit for read mode (records stay below it), so that a read-write
 * lock's edge known in one mode is not taken as known in the other. */
#define MS_EDGE_READ 0x80000000u
static inline uint32_t ms_edge_key(uint32_t rec, uint32_t read)
{
	return rec | (read ? MS_EDGE_READ : 0);
}

/* The set of MS_EDGE_WAYS entries where edge a->b goes in the bigger
 * cache: a region per first mutex, b's record number on from there -- a
 * thread holding one mutex while it takes many others in turn (records
 * made one after another are numbered so) walks neighbouring sets, which
 * the CPU's prefetcher follows, where a hash of both was a cache miss
 * each. */
#define MS_EDGE_WAYS 4
static inline struct ms_edge_entry *ms_edge_set2(struct ms_edge_entry *big, uint32_t a,
						  uint32_t b)
{
	uint32_t set = (a * 0x9e3779b1u + b) & (MS_EDGE_CACHE2 / MS_EDGE_WAYS - 1);
	return big + (size_t)set * MS_EDGE_WAYS;
}

/* The windows of a thread with the bigger cache: after its entries. */
static inline struct ms_edge_window *ms_edge_windows(struct ms_edge_entry *big)
{
	return (struct ms_edge_window *)(big + MS_EDGE_CACHE2);
}

/* The bigger cache of a thread that takes more edges than the small one
 * holds (order.c makes it, big), after its windows, whose line for a is
 * the same for each lock taken under a in turn: a known edge of ten
 * thousand costs a look at a window or a probe of one set, not three
 * calls. */
static inline __attribute__((always_inline)) int
ms_edge_cached_big(const struct ms_tstate *ts, struct ms_edge_entry *big, uint32_t a,
		   uint32_t b, uint32_t gen, int alone)
{
	if (ms_edge_windowed(ms_edge_windows(big), a, b, gen))
		return 1;
	const struct ms_edge_entry *set = ms_edge_set2(big, a, b);
#pragma GCC unroll 4
	for (int w = 0; w < MS_EDGE_WAYS; w++)
		if (ms_edge_entry_covers(&set[w], a, b, gen, ts, alone))
			return 1;
	return 0;
}

static inline __attribute__((always_inline)) int
ms_order_known(const struct ms_tstate *ts, uint32_t b)
{
	uint32_t a = ms_edge_key_held(&ts->held[ts->nheld - 1]);
	unsigned s = ms_edge_slot(a, b);
	uint32_t gen = __atomic_load_n(&ms_table.gen, __ATOMIC_ACQUIRE);
	if (ms_edge_cached(ts, s, a, b, gen, 0))
		return 1;
	/* a thread with the bigger cache remembers every edge there too (the
	 * small cache's, when it was made, too): its set, not the partner
	 * (an edge its set of four put out goes to the graph, as one the
	 * small cache put out did) */
	struct ms_edge_entry *big = ts->edge_cache2;
	if (unlikely(big != NULL))
		return ms_edge_cached_big(ts, big, a, b, gen, 0);
	return ms_edge_cached(ts, s ^ 1, a, b, gen, 0);
}

/* ... for a thread that holds one lock (the top), in two: the check of an
 * edge's gates is one test, so that a caller keeps fewer registers (an
 * inner lock of two, or of one lock held while others are taken in turn).
 * For a thread without the bigger cache: the small cache's slot and its
 * partner. */
static inline __attribute__((always_inline)) int
ms_order_known_small_alone(const struct ms_tstate *ts, uint32_t b)
{
	uint32_t a = ms_edge_key_held(&ts->held[0]);
	unsigned s = ms_edge_slot(a, b);
	uint32_t gen = __atomic_load_n(&ms_table.gen, __ATOMIC_ACQUIRE);
	return ms_edge_cached(ts, s, a, b, gen, 1) || ms_edge_cached(ts, s ^ 1, a, b, gen, 1);
}

/* ... for a thread with the bigger cache: its windows, then that cache,
 * which are given every edge the small one is; not the small one, which
 * may still hold an edge they put out or could not hold (the acquisition
 * then takes the full path, which asks it: time, not a lost edge).  A lock
 * path that keeps few registers where a thread without them asks the
 * small cache. */
static inline __attribute__((always_inline)) int
ms_order_known_big_alone(const struct ms_tstate *ts, uint32_t b)
{
	uint32_t a = ms_edge_key_held(&ts->held[0]);
	uint32_t gen = __atomic_load_n(&ms_table.gen, __ATOMIC_ACQUIRE);
	return ms_edge_cached_big(ts, ts->edge_cache2, a, b, gen, 1);
}

/* One lock-order edge between live mutexes, for the graph outputs: the
 * thread took (or waited for) b while holding a. */
struct ms_order_edge {
	uint32_t a, b;            /* records */
	uint64_t a_birth, b_birth; /* their lives */
	uintptr_t a_key, b_key;   /* the mutexes' addresses */
	uint32_t tid;             /* the thread that first took them in this order */
	uintptr_t a_caller;       /* where it had taken a */
	uint32_t a_stack, b_stack; /* depot ids: a's call site, b's stack; 0 none */
};
typedef void ms_order_edge_fn(const struct ms_order_edge *e, void *arg);

/* Call fn for each edge between live mutexes.  Returns the number of
 * edges.  Report time only. */
int ms_order_each_edge(ms_order_edge_fn *fn, void *arg);

/* A mutex with these record flags at key, first locked at first_caller,
 * had no init seen and lies outside every module's static data and every
 * mapped file (the heap, a stack -- nor where a library unloaded since
 * had it): a C++ std::mutex, whose constructor
 * and destructor never call pthread, in memory that may have held other
 * objects before -- which are the same mutex to us, so a cycle through it
 * may join orders of different objects.  Report time only (it looks the
 * address up among the modules). */
int ms_order_maybe_reused(uint32_t flags, uintptr_t key, uintptr_t first_caller);

/* The name a program gave mutex record r (mutexstat_name), or NULL. */
const char *ms_order_mutex_name(uint32_t r);

void ms_order_after_fork_child(void);

struct ms_order_stats {
	uint64_t edges, dropped;
	uint64_t searches, cut_short; /* cycle searches, and those that gave up */
	/* Acquisitions made while their thread already held MS_HELD_MAX
	 * mutexes: counted, but no edge leads out of them. */
	uint64_t not_followed;
};
void ms_order_stats(struct ms_order_stats *out);

#endif
