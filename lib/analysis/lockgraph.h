/* lockgraph.h - the lock-order graph: edges between mutex lives, and the
 * cycle a new edge closes.
 *
 * A node is one life of a mutex (record and birth), so a reused address is
 * another node.  An edge a->b says a thread took (or waited for) b while
 * holding a, with the other mutexes it held every time (its gates, at most
 * MS_LG_GATES); a cycle is guarded when one gate is on all its edges, held
 * exclusively on one at least (read holds of one rwlock do not exclude
 * each other).  (The search asks it of the new edge's gates: one the new
 * edge holds for read must be held exclusively on every other edge -- a
 * longer cycle with reads and writes of a gate on the others is taken as
 * unguarded, where it may not be.)
 * Pure data, unit-tested alone (tests/unit/test_lockgraph.c): memory from
 * the caller's allocator (ended lives swept into free lists), lives judged
 * by the caller's callback, no locks (the caller serialises all but the
 * readers), no stacks, no printing. */
#ifndef MUTEXSTAT_LOCKGRAPH_H
#define MUTEXSTAT_LOCKGRAPH_H

#include "base/ptr_index.h"

#include <stddef.h>
#include <stdint.h>

#define MS_LG_GATES 4

struct ms_lg_life {
	uint32_t rec;
	uint64_t birth;
};

struct ms_lg_edge {
	uint32_t a, b;             /* records */
	uint64_t a_birth, b_birth; /* their lives */
	uint32_t ngate;
	/* bit i: gate i held for read (a read-write lock's read), which
	 * other readers may hold at once: a cycle whose every edge holds its
	 * gate for read is not guarded by it */
	uint32_t gate_read;
	/* the gates, ngate of them (room for MS_LG_GATES), NULL if none: a
	 * proto's are the caller's; an edge of the graph's has them apart,
	 * where few edges have any (two locks nested have none) -- two cache
	 * lines an edge, not three, so ten thousand edges write two thirds
	 * of the pages they did */
	struct ms_lg_life *gate;
	/* what a finding shows of the edge (the caller's) */
	uintptr_t a_key, b_key;       /* the mutexes' addresses */
	uintptr_t a_caller, b_caller; /* where a was taken, where b was */
	uint32_t tid;                 /* the thread that took them so */
	uint32_t a_stack, b_stack;    /* depot ids, 0 none */
	/* the modes it was seen in: bit 2 * (a held for read) + (b taken
	 * for read) -- 1 for mutexes, write and spin locks (the caller's:
	 * the graph does not read it) */
	uint32_t modes;
	/* b was a mutex no thread had held yet: this was its life's first
	 * acquisition, without a wait (the caller's; a later take of the
	 * edge that is not clears it) */
	uint32_t b_new;
};

struct lg_node;
struct lg_edge;
struct lg_state;

struct ms_lg {
	/* the caller's: zeroed memory (NULL when spent), and the life a
	 * record has now (0: none) */
	void *(*alloc)(size_t bytes);
	uint64_t (*life)(uint32_t rec);
	/* search memory: MS_LG_SEARCH_BYTES, or less (shorter searches) */
	void *search;
	size_t search_bytes;
	/* the rest is the graph's */
	struct ms_ptr_index nodes, edges; /* by life, by (a, b) lives */
	struct lg_node *all_nodes, *free_nodes;
	struct ms_lg_life *free_gates; /* a free one's first bytes: the next */
	/* the node the last edge added leads from (NULL: none, or swept):
	 * a thread holding a lock takes many others under it */
	struct lg_node *last_from;
	struct lg_edge *all, *free_edges;
	uint64_t nedges, sweep_at, dropped;
	/* edges of ended lives are swept into the free lists each time the
	 * edges reach twice the live ones of the last sweep, or this many
	 * (ms_lg_init: 4096; a caller whose memory is small sets fewer) */
	uint64_t sweep_min;
	uint64_t searches, cut_short;
	/* edges added so far, and the last look-up that found nothing: its
	 * key, its hash and the adds before it (the same look-up with none
	 * since finds nothing again: a thread looks a new edge up twice,
	 * around its stacks, then adds it) */
	uint64_t adds;
	struct {
		uint32_t a, b; /* a 0: none */
		uint64_t a_birth, b_birth;
		uint32_t hash;
		uint64_t at; /* adds */
	} missed;
	uint32_t readers, stamp;
	const struct ms_lg_edge **path;
	size_t path_cap, states;
};

/* The search memory a graph wants: room for 65,536 states of the search. */
#define MS_LG_SEARCH_BYTES ((size_t)65536 * 40)

/* Set g up with these callbacks and search memory (may be NULL: then no
 * search finds anything, and each is counted cut short). */
void ms_lg_init(struct ms_lg *g, void *(*alloc)(size_t), uint64_t (*life)(uint32_t),
		void *search, size_t search_bytes);

/* The memory an edge takes, with a node of its own: for sweep_min (an
 * edge with gates takes a block of MS_LG_GATES more, which few have). */
size_t ms_lg_edge_bytes(void);

/* The edge between these two lives, NULL if none. */
struct ms_lg_edge *ms_lg_find(struct ms_lg *g, uint32_t a, uint64_t a_birth, uint32_t b,
			      uint64_t b_birth);

/* Add a copy of e, its gates too (e must not be there); returns it, NULL
 * if the memory is spent (counted in dropped).  Edges of ended lives are
 * swept first when the edges have doubled since the last sweep, or when
 * the memory is spent. */
struct ms_lg_edge *ms_lg_add(struct ms_lg *g, const struct ms_lg_edge *e);

/* The cycle edge e (one of g's, as ms_lg_add or ms_lg_find gave it)
 * closes, searched among the edges of live mutexes: the shortest one no
 * gate of e guards, else the shortest one, guarded.
 * Returns its length n, the edges in *path (path[0] is e, path[i].b is
 * path[i+1].a, the last back to e's a; valid until the next call), 0 if
 * none.  *gate is a gate on every edge of a guarded cycle, rec 0 if none.
 * A search that reaches its bound (the search memory) gives up: *cut is
 * set, and the closest guarded cycle it saw, if any, is returned. */
size_t ms_lg_cycle(struct ms_lg *g, const struct ms_lg_edge *e,
		   const struct ms_lg_edge *const **path, struct ms_lg_life *gate, int *cut);

/* Reading the edges without the caller's lock (report time): no sweep
 * between begin and end, so every edge read stays; edges added meanwhile
 * may or may not be seen.  begin/end under the caller's lock. */
const struct ms_lg_edge *ms_lg_read_begin(struct ms_lg *g);
const struct ms_lg_edge *ms_lg_read_next(const struct ms_lg_edge *e);
void ms_lg_read_end(struct ms_lg *g);

/* Whether both lives of edge e go on (under the lock, or while reading). */
int ms_lg_live(const struct ms_lg *g, const struct ms_lg_edge *e);

#endif
