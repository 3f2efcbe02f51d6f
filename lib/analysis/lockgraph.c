/* lockgraph.c - the lock-order graph and its cycle search; see lockgraph.h.
 *
 * Nodes (mutex lives) and edges sit in the caller's memory, found by two
 * indexes (base/ptr_index.h); each node lists the edges out of it and each
 * edge points at the node it leads to, so a search follows pointers.  The search is a
 * breadth-first walk from the new edge's target back to its source whose
 * states are (node, which of the new edge's gates some edge on the way
 * lacked): reaching the source with every gate missed somewhere is an
 * unguarded cycle, the shortest there is. */
#define _GNU_SOURCE
#include "analysis/lockgraph.h"

#include "base/word_hash.h" /* keys are whole 64-bit words */

#include <string.h>

struct lg_node {
	struct ms_lg_life k;  /* the life: record and birth */
	struct lg_edge *out;  /* edges from this life */
	uint32_t in;          /* edges to it */
	uint32_t stamp;       /* the search that saw it last, */
	uint16_t masks;       /* and the gate masks it reached it with */
	struct lg_node *free_next, *all_next;
};

struct lg_edge {
	struct ms_lg_edge e; /* first: an ms_lg_edge pointer is an lg_edge's */
	struct lg_node *from, *to;
	struct lg_edge *next_out, *all_next;
};

/* ---- the indexes' keys ---------------------------------------------------- */

static uint32_t node_hash(uint32_t rec, uint64_t birth)
{
	const uint64_t w[2] = { birth, rec };
	return ms_word_hash(w, sizeof w);
}

static int node_is(const void *item, const void *key)
{
	const struct ms_lg_life *n = item, *k = key; /* k first in a node */
	return n->rec == k->rec && n->birth == k->birth;
}

static uint32_t edge_hash(uint32_t a, uint64_t a_birth, uint32_t b, uint64_t b_birth)
{
	const uint64_t w[3] = { a_birth, b_birth, (uint64_t)a << 32 | b };
	return ms_word_hash(w, sizeof w);
}

static uint32_t edge_hash_of(const struct ms_lg_edge *e)
{
	return edge_hash(e->a, e->a_birth, e->b, e->b_birth);
}

static int edge_is(const void *item, const void *key)
{
	const struct ms_lg_edge *x = item, *k = key; /* e first in an edge */
	return x->a == k->a && x->b == k->b && x->a_birth == k->a_birth &&
	       x->b_birth == k->b_birth;
}

struct lg_state {
	struct lg_node *node;
	struct lg_edge *via; /* the edge that reached it (NULL: the start) */
	uint32_t parent;
	uint32_t mask;
};

#define SWEEP_MIN 4096
#define SCANS_PER_STATE 16 /* edges looked at per state, at most */

void ms_lg_init(struct ms_lg *g, void *(*alloc)(size_t), uint64_t (*life)(uint32_t),
		void *search, size_t search_bytes)
{
	memset(g, 0, sizeof *g);
	g->alloc = alloc;
	g->life = life;
	g->sweep_at = g->sweep_min = SWEEP_MIN;
	size_t per = sizeof(struct lg_state) + sizeof(const struct ms_lg_edge *);
	if (search && search_bytes >= 4 * per) {
		g->search = search;
		g->states = search_bytes / per;
		g->path = (const struct ms_lg_edge **)((struct lg_state *)search + g->states);
		g->path_cap = g->states;
	}
}

size_t ms_lg_edge_bytes(void)
{
	return sizeof(struct lg_edge) + sizeof(struct lg_node);
}

static int node_live(const struct ms_lg *g, const struct lg_node *n)
{
	return g->life((uint32_t)n->k.rec) == n->k.birth;
}

int ms_lg_live(const struct ms_lg *g, const struct ms_lg_edge *e)
{
	const struct lg_edge *x = (const struct lg_edge *)e;
	return node_live(g, x->from) && node_live(g, x->to);
}

/* Whether e's key is the last look-up's that found nothing. */
static int missed_is(const struct ms_lg *g, const struct ms_lg_edge *e)
{
	return g->missed.a == e->a && g->missed.b == e->b && g->missed.a_birth == e->a_birth &&
	       g->missed.b_birth == e->b_birth && g->missed.a;
}

struct ms_lg_edge *ms_lg_find(struct ms_lg *g, uint32_t a, uint64_t a_birth, uint32_t b,
			      uint64_t b_birth)
{
	const struct ms_lg_edge k = { .a = a, .b = b, .a_birth = a_birth, .b_birth = b_birth };
	int again = missed_is(g, &k);
	if (again && g->missed.at == g->adds)
		return NULL;
	uint32_t hash = again ? g->missed.hash : edge_hash(a, a_birth, b, b_birth);
	struct ms_lg_edge *e = ms_ptr_index_find(&g->edges, hash, edge_is, &k);
	if (!e) {
		g->missed.a = a;
		g->missed.b = b;
		g->missed.a_birth = a_birth;
		g->missed.b_birth = b_birth;
		g->missed.hash = hash;
		g->missed.at = g->adds;
	}
	return e;
}

/* An edge's gates go to their free list (their first bytes: the next). */
static void gates_free(struct ms_lg *g, struct ms_lg_life *gates)
{
	if (!gates)
		return;
	*(struct ms_lg_life **)(void *)gates = g->free_gates;
	g->free_gates = gates;
}

/* Take edges and nodes of ended lives out of the tables; their memory
 * goes to the free lists.  Not while a reader walks the edges. */
static void sweep(struct ms_lg *g)
{
	uint64_t live = 0;
	for (struct lg_edge **p = &g->all; *p;) {
		struct lg_edge *x = *p;
		if (node_live(g, x->from) && node_live(g, x->to)) {
			live++;
			p = &x->all_next;
			continue;
		}
		*p = x->all_next;
		ms_ptr_index_remove(&g->edges, edge_hash_of(&x->e), x);
		struct lg_edge **o = &x->from->out;
		while (*o != x)
			o = &(*o)->next_out;
		*o = x->next_out;
		x->to->in--;
		gates_free(g, x->e.gate);
		x->all_next = g->free_edges;
		g->free_edges = x;
	}
	/* an ended life no edge is left at goes too (a life may have
	 * ended after its edges were looked at: they stay, and so does it) */
	for (struct lg_node **p = &g->all_nodes; *p;) {
		struct lg_node *n = *p;
		if (n->out || n->in || node_live(g, n)) {
			p = &n->all_next;
			continue;
		}
		*p = n->all_next;
		ms_ptr_index_remove(&g->nodes, node_hash(n->k.rec, n->k.birth), n);
		n->free_next = g->free_nodes;
		g->free_nodes = n;
	}
	g->nedges = live;
	g->sweep_at = live * 2 > g->sweep_min ? live * 2 : g->sweep_min;
	g->last_from = NULL;
}

/* Zeroed memory for a node or an edge: one of the free list's, or the
 * caller's (zeroed already: its first write is the caller's own). */
static void *take(struct ms_lg *g, void **free_list, size_t bytes, size_t next_offset)
{
	void *p = *free_list;
	if (!p)
		return g->alloc(bytes);
	*free_list = *(void **)((char *)p + next_offset);
	memset(p, 0, bytes);
	return p;
}

static struct lg_node *node_of(struct ms_lg *g, uint32_t rec, uint64_t birth, int make)
{
	const struct ms_lg_life k = { rec, birth };
	uint32_t hash = node_hash(rec, birth);
	struct lg_node *n = ms_ptr_index_find(&g->nodes, hash, node_is, &k);
	if (n || !make)
		return n;
	n = take(g, (void **)&g->free_nodes, sizeof *n, offsetof(struct lg_node, free_next));
	if (!n)
		return NULL;
	n->k = k;
	if (ms_ptr_index_add(&g->nodes, hash, n, g->alloc) != 0) {
		n->free_next = g->free_nodes;
		g->free_nodes = n;
		return NULL;
	}
	n->all_next = g->all_nodes;
	g->all_nodes = n;
	return n;
}

/* The node edge e leads from, made if new: the last edge's, mostly. */
static struct lg_node *from_node(struct ms_lg *g, const struct ms_lg_edge *e)
{
	struct lg_node *n = g->last_from;
	if (n && n->k.rec == e->a && n->k.birth == e->a_birth)
		return n;
	return node_of(g, e->a, e->a_birth, 1);
}

struct ms_lg_edge *ms_lg_add(struct ms_lg *g, const struct ms_lg_edge *e)
{
	if (!g->free_edges && !g->readers && g->nedges >= g->sweep_at)
		sweep(g);
	struct lg_node *from = NULL, *to = NULL;
	struct lg_edge *x = NULL;
	uint32_t ngate = e->ngate < MS_LG_GATES ? e->ngate : MS_LG_GATES;
	for (int tries = 0; !x; tries++) {
		from = from_node(g, e);
		to = from ? node_of(g, e->b, e->b_birth, 1) : NULL;
		struct ms_lg_life *gates =
			to && ngate ? take(g, (void **)&g->free_gates,
					   MS_LG_GATES * sizeof *gates, 0)
				    : NULL;
		x = to && (gates || !ngate) ? take(g, (void **)&g->free_edges, sizeof *x,
						   offsetof(struct lg_edge, all_next))
					    : NULL;
		if (x) {
			x->e = *e;
			x->e.ngate = ngate;
			x->e.gate = gates;
			if (ngate)
				memcpy(gates, e->gate, ngate * sizeof *gates);
			uint32_t hash = missed_is(g, e) ? g->missed.hash : edge_hash_of(e);
			if (ms_ptr_index_add(&g->edges, hash, x, g->alloc) == 0)
				break;
			x->all_next = g->free_edges;
			g->free_edges = x;
			x = NULL;
		}
		gates_free(g, gates);
		if (tries || g->readers) {
			g->dropped++;
			return NULL;
		}
		sweep(g); /* the memory is spent: the ended lives', if any */
	}
	g->last_from = from;
	x->from = from;
	x->to = to;
	x->next_out = from->out;
	from->out = x;
	to->in++;
	x->all_next = g->all;
	__atomic_store_n(&g->all, x, __ATOMIC_RELEASE); /* readers see it whole */
	g->nedges++;
	g->adds++;
	return &x->e;
}

/* The bits of e's gates that edge x was taken without -- or held for
 * read, as e holds it: both may be inside at once. */
static uint32_t gates_missed(const struct ms_lg_edge *e, const struct ms_lg_edge *x)
{
	uint32_t missed = 0;
	uint32_t xn = __atomic_load_n(&x->ngate, __ATOMIC_RELAXED);
	uint32_t x_read = __atomic_load_n(&x->gate_read, __ATOMIC_RELAXED);
	for (uint32_t i = 0; i < e->ngate; i++) {
		int on = 0;
		for (uint32_t j = 0; j < xn && !on; j++)
			on = x->gate[j].rec == e->gate[i].rec && x->gate[j].birth == e->gate[i].birth &&
			     !(e->gate_read >> i & x_read >> j & 1);
		if (!on)
			missed |= 1u << i;
	}
	return missed;
}

/* Whether node n was reached with mask m, or one that missed more gates
 * (as good a way on). */
static int reached(const struct lg_node *n, uint32_t stamp, uint32_t m)
{
	if (n->stamp != stamp)
		return 0;
	for (uint32_t s = 0; s < 16; s++)
		if ((n->masks >> s & 1) && (s & m) == m)
			return 1;
	return 0;
}

static void mark(struct ms_lg *g, struct lg_node *n, uint32_t m)
{
	if (n->stamp != g->stamp) {
		n->stamp = g->stamp;
		n->masks = 0;
	}
	n->masks |= (uint16_t)(1u << m);
}

/* Path from the start to state s, then edge last, after e: into g->path. */
static size_t make_path(struct ms_lg *g, const struct ms_lg_edge *e,
			const struct lg_state *q, uint32_t s, struct lg_edge *last)
{
	size_t len = 1;
	for (uint32_t i = s; q[i].via; i = q[i].parent)
		len++;
	len++; /* e */
	if (len > g->path_cap)
		return 0;
	g->path[0] = e;
	g->path[len - 1] = &last->e;
	size_t at = len - 2;
	for (uint32_t i = s; q[i].via; i = q[i].parent)
		g->path[at--] = &q[i].via->e;
	return len;
}

static void new_stamp(struct ms_lg *g)
{
	if (++g->stamp == 0) { /* wrapped: no node may keep an old one */
		for (struct lg_node *n = g->all_nodes; n; n = n->all_next)
			n->stamp = 0;
		g->stamp = 1;
	}
}

size_t ms_lg_cycle(struct ms_lg *g, const struct ms_lg_edge *e,
		   const struct ms_lg_edge *const **path, struct ms_lg_life *gate, int *cut)
{
	*cut = 0;
	gate->rec = 0;
	gate->birth = 0;
	g->searches++;
	/* e is the graph's: its nodes stay while it is there (a sweep takes
	 * only nodes no edge leads from or to) */
	const struct lg_edge *ex = (const struct lg_edge *)e;
	struct lg_node *start = ex->to, *goal = ex->from;
	if (!start->out)
		return 0;
	if (!g->search) {
		g->cut_short++;
		*cut = 1;
		return 0;
	}
	struct lg_state *q = g->search;
	const uint32_t full = (1u << e->ngate) - 1;
	size_t head = 0, tail = 0, scans = 0, max_scans = g->states * SCANS_PER_STATE;
	long guarded_s = -1; /* the first guarded way back: its state, */
	struct lg_edge *guarded_last = NULL; /* and last edge */
	uint32_t guarded_mask = 0;
	new_stamp(g);
	mark(g, start, 0);
	q[tail++] = (struct lg_state){ start, NULL, 0, 0 };
	while (head < tail) {
		uint32_t s = (uint32_t)head++;
		for (struct lg_edge *x = q[s].node->out; x; x = x->next_out) {
			if (++scans > max_scans) {
				*cut = 1;
				goto out;
			}
			if (!node_live(g, x->to))
				continue;
			uint32_t m = q[s].mask | gates_missed(e, &x->e);
			if (x->to == goal) {
				if (m == full) {
					size_t n = make_path(g, e, q, s, x);
					*path = g->path;
					return n;
				}
				if (guarded_s < 0) {
					guarded_s = s;
					guarded_last = x;
					guarded_mask = m;
				}
				continue;
			}
			if (reached(x->to, g->stamp, m))
				continue;
			if (tail == g->states) {
				*cut = 1;
				goto out;
			}
			mark(g, x->to, m);
			q[tail++] = (struct lg_state){ x->to, x, s, m };
		}
	}
out:
	if (*cut)
		g->cut_short++;
	if (guarded_s < 0)
		return 0;
	for (uint32_t i = 0; i < e->ngate; i++)
		if (!(guarded_mask >> i & 1)) {
			*gate = e->gate[i];
			break;
		}
	size_t n = make_path(g, e, q, (uint32_t)guarded_s, guarded_last);
	*path = g->path;
	return n;
}

const struct ms_lg_edge *ms_lg_read_begin(struct ms_lg *g)
{
	g->readers++;
	struct lg_edge *x = __atomic_load_n(&g->all, __ATOMIC_ACQUIRE);
	return x ? &x->e : NULL;
}

const struct ms_lg_edge *ms_lg_read_next(const struct ms_lg_edge *e)
{
	const struct lg_edge *x = ((const struct lg_edge *)e)->all_next;
	return x ? &x->e : NULL;
}

void ms_lg_read_end(struct ms_lg *g)
{
	g->readers--;
}
