/* edge_window.h - a thread's windows of lock-order edges known recorded:
 * for a lock it holds, a bit per lock it may take under it.
 *
 * A thread that holds one lock while it takes many others in turn (a table
 * lock held while each connection's is taken) knows thousands of edges,
 * which its bigger cache (order.h) keeps in sets of four 16-byte entries,
 * each edge's set a line of its own: taking them round after round
 * streams that cache through the CPU's first-level cache, and puts out
 * the lines of the locks' records and histories, which the takes write.
 * Locks made together have neighbouring record numbers (table.c hands
 * them out in order), so the edges from one lock to such a group are a
 * few bits of one line: a window, per first lock (by its record number,
 * MS_EDGE_WINDOWS of them shared modulo that), of MS_WINDOW_BITS record
 * numbers from `base`, one bit an edge.
 *
 * A bit says what an entry of the caches says of an edge taken with no
 * gate -- recorded, not a new mutex's, as of the table's generation -- so
 * it covers any take of the edge (order.h's ms_edge_entry_covers).  Only
 * edges of two locks taken for writing are kept: a read mode's key has
 * its top bit (order.h's MS_EDGE_READ), which no window's first lock nor
 * range holds.  A window belongs to one first lock and one generation: a
 * life in an edge that ends (table.h's gen) makes every window stale, as
 * it makes every cache's entry.  Written only by the thread (its record's
 * next thread after it), asked by it and by its signal handlers: a window
 * taken for another lock has `a` 0 while it changes. */
#ifndef MUTEXSTAT_EDGE_WINDOW_H
#define MUTEXSTAT_EDGE_WINDOW_H

#include <stdint.h>
#include <string.h>

#define MS_EDGE_WINDOWS 256 /* windows of a thread, by the first lock's record */
#define MS_WINDOW_BITS 384  /* second locks a window spans */
#define MS_WINDOW_BEFORE 96 /* of them below the first second lock seen */

struct ms_edge_window {
	uint32_t a;    /* the first lock's key (order.h's ms_edge_key); 0 none */
	uint32_t gen;  /* the table's generation the bits are of */
	uint32_t base; /* the second lock's key of bit 0 */
	uint32_t unused;
	uint64_t bits[MS_WINDOW_BITS / 64];
} __attribute__((aligned(64)));
/* one line a window: a probe reads one */
_Static_assert(sizeof(struct ms_edge_window) == 64, "a window is a cache line");

/* Bytes of a thread's windows: after its bigger cache, in one block. */
#define MS_EDGE_WINDOWS_BYTES (MS_EDGE_WINDOWS * sizeof(struct ms_edge_window))

static inline struct ms_edge_window *ms_edge_window_of(struct ms_edge_window *w, uint32_t a)
{
	return &w[a & (MS_EDGE_WINDOWS - 1)];
}

/* Whether windows w know edge a->b of generation gen. */
static inline __attribute__((always_inline)) int
ms_edge_windowed(const struct ms_edge_window *windows, uint32_t a, uint32_t b, uint32_t gen)
{
	const struct ms_edge_window *w = &windows[a & (MS_EDGE_WINDOWS - 1)];
	uint32_t x = b - w->base;
	return w->a == a && w->gen == gen && x < MS_WINDOW_BITS &&
	       (w->bits[x / 64] >> (x % 64) & 1);
}

/* Windows w know edge a->b, recorded with no gate, of generation gen, from
 * now on -- if a window can hold it: a's window is taken for a (from any
 * other lock, or another generation) based around b; a b beyond its span
 * is left to the caches. */
static inline void ms_edge_window_put(struct ms_edge_window *windows, uint32_t a, uint32_t b,
				      uint32_t gen)
{
	struct ms_edge_window *w = ms_edge_window_of(windows, a);
	if (!a || (a | b) >> 31)
		return;
	if (w->a != a || w->gen != gen) {
		w->a = 0;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		w->gen = gen;
		w->base = b > MS_WINDOW_BEFORE ? b - MS_WINDOW_BEFORE : 0;
		memset(w->bits, 0, sizeof w->bits);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		w->a = a;
	}
	uint32_t x = b - w->base;
	if (x < MS_WINDOW_BITS)
		w->bits[x / 64] |= 1ull << (x % 64);
}

#endif
