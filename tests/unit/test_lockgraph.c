/* test_lockgraph.c - the lock-order graph on its own (lib/analysis/lockgraph.c):
 * the cycle a new edge closes, of 2 and of 30 mutexes; edges of lives that
 * ended close nothing (an address reused, both mutexes of an edge
 * destroyed); gates, and an unguarded way preferred to a shorter guarded
 * one; the search's bound; edges of ended lives swept so their memory is
 * used again.
 *
 * Mutex lives are made up: record r's life is births[r] (0: no mutex). */
#include "suites.h"

#include "analysis/lockgraph.h"

#include <string.h>

#define RECS 64

static uint64_t births[RECS];
static uint64_t life(uint32_t rec)
{
	return rec < RECS ? births[rec] : 0;
}

/* The graph's memory: a static arena (nothing to free, nothing leaked),
 * of which alloc_left bytes may be taken -- none of refuse_from bytes or
 * more while that is set -- each block followed by a guard of its own
 * (GUARD bytes of 0xa5, not counted in alloc_left) that guards_intact()
 * checks: a write past a block the graph asked for is caught. */
#define GUARD 16
#define MAX_GUARDS 65536
static _Alignas(16) char arena[8 << 20];
static size_t arena_used, alloc_left, refuse_from, allocs;
static size_t guard_at[MAX_GUARDS], nguards;
static void *alloc(size_t bytes)
{
	bytes = (bytes + 15) & ~(size_t)15;
	if (bytes > alloc_left || arena_used + bytes + GUARD > sizeof arena ||
	    (refuse_from && bytes >= refuse_from))
		return NULL;
	alloc_left -= bytes;
	void *p = arena + arena_used;
	arena_used += bytes;
	memset(arena + arena_used, 0xa5, GUARD);
	if (nguards < MAX_GUARDS)
		guard_at[nguards++] = arena_used;
	arena_used += GUARD;
	allocs++;
	return memset(p, 0, bytes);
}

static int guards_intact(void)
{
	for (size_t i = 0; i < nguards; i++)
		for (size_t k = 0; k < GUARD; k++)
			if ((unsigned char)arena[guard_at[i] + k] != 0xa5)
				return 0;
	return 1;
}

static struct ms_lg g;
static char search_mem[MS_LG_SEARCH_BYTES];

static void graph(size_t memory, size_t search_bytes)
{
	memset(births, 0, sizeof births);
	for (uint32_t r = 1; r < RECS; r++)
		births[r] = 100 + r;
	alloc_left = memory;
	arena_used = 0;
	refuse_from = 0;
	allocs = 0;
	nguards = 0;
	ms_lg_init(&g, alloc, life, search_bytes ? search_mem : NULL, search_bytes);
}

/* Edge a->b between the lives records a and b have now, with gates, those
 * of bits gate_read held for read. */
static const struct ms_lg_edge *edge_gr(uint32_t a, uint32_t b, const uint32_t *gates,
					uint32_t ngate, uint32_t gate_read)
{
	struct ms_lg_life gate_of[MS_LG_GATES];
	struct ms_lg_edge e = { .a = a, .b = b, .a_birth = births[a], .b_birth = births[b],
				.gate_read = gate_read, .gate = gate_of };
	for (uint32_t i = 0; i < ngate; i++)
		e.gate[e.ngate++] = (struct ms_lg_life){ gates[i], births[gates[i]] };
	const struct ms_lg_edge *x = ms_lg_add(&g, &e);
	ck_assert_ptr_nonnull(x);
	return x;
}

static const struct ms_lg_edge *edge_g(uint32_t a, uint32_t b, const uint32_t *gates,
				       uint32_t ngate)
{
	return edge_gr(a, b, gates, ngate, 0);
}

static const struct ms_lg_edge *edge(uint32_t a, uint32_t b)
{
	return edge_g(a, b, NULL, 0);
}

static const struct ms_lg_edge *const *path;
static struct ms_lg_life gate;
static int cut;

static size_t cycle(const struct ms_lg_edge *e)
{
	return ms_lg_cycle(&g, e, &path, &gate, &cut);
}

/* The records of the cycle in path, from its first edge's source. */
static void expect_records(size_t n, const uint32_t *recs)
{
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_eq(path[i]->a, recs[i]);
		ck_assert_uint_eq(path[i]->b, recs[(i + 1) % n]);
	}
}

START_TEST(test_lockgraph_two_cycle)
{
	graph(1 << 20, MS_LG_SEARCH_BYTES);
	const struct ms_lg_edge *ab = edge(1, 2);
	ck_assert_uint_eq(cycle(ab), 0);
	const struct ms_lg_edge *ba = edge(2, 1);
	ck_assert_uint_eq(cycle(ba), 2);
	ck_assert_ptr_eq(path[0], ba);
	ck_assert_ptr_eq(path[1], ab);
	ck_assert_uint_eq(gate.rec, 0);
	ck_assert_int_eq(cut, 0);
	ck_assert_ptr_eq(ms_lg_find(&g, 1, births[1], 2, births[2]), ab);
}
END_TEST

/* A look-up that found nothing, asked again: nothing while no edge was
 * added, the edge once it was (and any other edge added meanwhile makes
 * it look again); another life of a record is another key. */
START_TEST(test_lockgraph_find_again_sees_edges_added_since)
{
	graph(1 << 20, MS_LG_SEARCH_BYTES);
	ck_assert_ptr_null(ms_lg_find(&g, 1, births[1], 2, births[2]));
	ck_assert_ptr_null(ms_lg_find(&g, 1, births[1], 2, births[2]));
	const struct ms_lg_edge *ab = edge(1, 2);
	ck_assert_ptr_eq(ms_lg_find(&g, 1, births[1], 2, births[2]), ab);
	ck_assert_ptr_null(ms_lg_find(&g, 3, births[3], 4, births[4]));
	const struct ms_lg_edge *cd = edge(3, 4);
	ck_assert_ptr_eq(ms_lg_find(&g, 3, births[3], 4, births[4]), cd);
	ck_assert_ptr_null(ms_lg_find(&g, 5, births[5], 6, births[6]));
	const struct ms_lg_edge *ef = edge(1, 6); /* another edge meanwhile */
	ck_assert_ptr_null(ms_lg_find(&g, 5, births[5], 6, births[6]));
	ck_assert_ptr_eq(ms_lg_find(&g, 1, births[1], 6, births[6]), ef);
	ck_assert_ptr_null(ms_lg_find(&g, 1, births[1] + 1, 2, births[2]));
	ck_assert_ptr_null(ms_lg_find(&g, 1, births[1], 2, births[2] + 1));
	ck_assert_ptr_eq(ms_lg_find(&g, 1, births[1], 2, births[2]), ab);
	const struct ms_lg_edge *ef2 = edge(5, 6);
	ck_assert_ptr_eq(ms_lg_find(&g, 5, births[5], 6, births[6]), ef2);
	ck_assert_uint_eq(cycle(ef2), 0);
}
END_TEST

START_TEST(test_lockgraph_thirty_cycle)
{
	graph(1 << 20, MS_LG_SEARCH_BYTES);
	uint32_t ring[30];
	for (uint32_t i = 0; i < 30; i++)
		ring[i] = i + 1;
	for (uint32_t i = 0; i < 29; i++)
		ck_assert_uint_eq(cycle(edge(ring[i], ring[i + 1])), 0);
	const struct ms_lg_edge *last = edge(30, 1);
	ck_assert_uint_eq(cycle(last), 30);
	uint32_t from_30[30] = { 30 };
	for (uint32_t i = 1; i < 30; i++)
		from_30[i] = i;
	expect_records(30, from_30);
}
END_TEST

/* The shortest cycle: a chord makes a short way back. */
START_TEST(test_lockgraph_shortest)
{
	graph(1 << 20, MS_LG_SEARCH_BYTES);
	edge(2, 3);
	edge(3, 4);
	edge(4, 1);
	edge(2, 1); /* the chord */
	ck_assert_uint_eq(cycle(edge(1, 2)), 2);
	expect_records(2, (const uint32_t[]){ 1, 2 });
}
END_TEST

/* A->B of lives that both ended, then B->A of new lives at the same
 * records: no cycle. */
START_TEST(test_lockgraph_ended_edge_closes_nothing)
{
	graph(1 << 20, MS_LG_SEARCH_BYTES);
	const struct ms_lg_edge *ab = edge(1, 2);
	births[1] = 1000; /* destroyed, and a new mutex at the address */
	births[2] = 2000;
	ck_assert_int_eq(ms_lg_live(&g, ab), 0);
	ck_assert_uint_eq(cycle(edge(2, 1)), 0);
	/* nor with the lives gone altogether */
	births[1] = 0;
	births[2] = 0;
	graph(1 << 20, MS_LG_SEARCH_BYTES);
	edge(1, 2);
	births[1] = 0;
	ck_assert_uint_eq(cycle(edge(3, 2)), 0);
}
END_TEST

/* One address reused: A's first life took B; B then takes A's second
 * life: two lives, no cycle.  The same with A's second life taking B
 * again: now there is one. */
START_TEST(test_lockgraph_reused_address)
{
	graph(1 << 20, MS_LG_SEARCH_BYTES);
	edge(1, 2);
	births[1] = 5000;
	const struct ms_lg_edge *ba = edge(2, 1);
	ck_assert_uint_eq(cycle(ba), 0);
	const struct ms_lg_edge *ab = edge(1, 2);
	ck_assert_uint_eq(cycle(ab), 2);
	ck_assert_uint_eq(path[0]->a_birth, 5000);
	ck_assert_uint_eq(path[1]->b_birth, 5000);
}
END_TEST

START_TEST(test_lockgraph_gate)
{
	graph(1 << 20, MS_LG_SEARCH_BYTES);
	const uint32_t gs[] = { 9 };
	edge_g(1, 2, gs, 1);
	ck_assert_uint_eq(cycle(edge_g(2, 1, gs, 1)), 2);
	ck_assert_uint_eq(gate.rec, 9);
	ck_assert_uint_eq(gate.birth, births[9]);
	/* the other order without the gate: not guarded */
	graph(1 << 20, MS_LG_SEARCH_BYTES);
	edge_g(1, 2, gs, 1);
	ck_assert_uint_eq(cycle(edge(2, 1)), 2);
	ck_assert_uint_eq(gate.rec, 0);
	/* a gate of the new edge missing on the way back */
	graph(1 << 20, MS_LG_SEARCH_BYTES);
	edge(1, 2);
	ck_assert_uint_eq(cycle(edge_g(2, 1, gs, 1)), 2);
	ck_assert_uint_eq(gate.rec, 0);
	/* two gates on the new edge, one of them everywhere */
	graph(1 << 20, MS_LG_SEARCH_BYTES);
	const uint32_t two[] = { 8, 9 };
	edge_g(1, 2, gs, 1);
	edge_g(2, 3, two, 2);
	ck_assert_uint_eq(cycle(edge_g(3, 1, two, 2)), 3);
	ck_assert_uint_eq(gate.rec, 9);
	/* a gate of an ended life is no gate of the new one's */
	graph(1 << 20, MS_LG_SEARCH_BYTES);
	edge_g(1, 2, gs, 1);
	births[9] = 777;
	ck_assert_uint_eq(cycle(edge_g(2, 1, gs, 1)), 2);
	ck_assert_uint_eq(gate.rec, 0);
}
END_TEST

/* Edge a->b under one gate, held for read if read. */
static const struct ms_lg_edge *edge_r(uint32_t a, uint32_t b, uint32_t gate_rec, int read)
{
	return edge_gr(a, b, &gate_rec, 1, read ? 1 : 0);
}

/* A gate held for read: readers are inside it together, so it guards a
 * cycle only where one edge holds it exclusively. */
START_TEST(test_lockgraph_read_gate)
{
	/* read on both edges: no guard */
	graph(1 << 20, MS_LG_SEARCH_BYTES);
	edge_r(1, 2, 9, 1);
	ck_assert_uint_eq(cycle(edge_r(2, 1, 9, 1)), 2);
	ck_assert_uint_eq(gate.rec, 0);
	/* written on the old edge, read on the new: guarded */
	graph(1 << 20, MS_LG_SEARCH_BYTES);
	edge_r(1, 2, 9, 0);
	ck_assert_uint_eq(cycle(edge_r(2, 1, 9, 1)), 2);
	ck_assert_uint_eq(gate.rec, 9);
	/* read on the old edge, written on the new: guarded */
	graph(1 << 20, MS_LG_SEARCH_BYTES);
	edge_r(1, 2, 9, 1);
	ck_assert_uint_eq(cycle(edge_r(2, 1, 9, 0)), 2);
	ck_assert_uint_eq(gate.rec, 9);
	/* a 3-cycle: read on the new edge, written on one other, read on the
	 * third -- guarded in truth, taken as unguarded (lockgraph.h) */
	graph(1 << 20, MS_LG_SEARCH_BYTES);
	edge_r(1, 2, 9, 0);
	edge_r(2, 3, 9, 1);
	ck_assert_uint_eq(cycle(edge_r(3, 1, 9, 1)), 3);
	ck_assert_uint_eq(gate.rec, 0);
}
END_TEST

/* A way back under the gate (2 edges) and a longer one without it: the
 * longer, unguarded cycle is the one found. */
START_TEST(test_lockgraph_unguarded_preferred)
{
	graph(1 << 20, MS_LG_SEARCH_BYTES);
	const uint32_t gs[] = { 9 };
	edge_g(2, 1, gs, 1);
	edge(2, 3);
	edge(3, 4);
	edge(4, 1);
	ck_assert_uint_eq(cycle(edge_g(1, 2, gs, 1)), 4);
	ck_assert_uint_eq(gate.rec, 0);
	expect_records(4, (const uint32_t[]){ 1, 2, 3, 4 });
}
END_TEST

/* A search whose memory is too small to reach the way back gives up and
 * says so; without search memory, every search does. */
START_TEST(test_lockgraph_bounded)
{
	/* room for 8 states: a ring of 20 is out of reach */
	graph(1 << 20, 8 * 40);
	for (uint32_t i = 1; i < 20; i++)
		edge(i, i + 1);
	ck_assert_uint_eq(cycle(edge(20, 1)), 0);
	ck_assert_int_eq(cut, 1);
	ck_assert_uint_eq(g.cut_short, 1);
	ck_assert_uint_eq(cycle(edge(3, 2)), 2); /* a short one is found */
	ck_assert_int_eq(cut, 0);
	graph(1 << 20, 0);
	edge(1, 2);
	ck_assert_uint_eq(cycle(edge(2, 1)), 0);
	ck_assert_int_eq(cut, 1);
}
END_TEST

/* Edges of ended lives are swept when the memory is spent, and their
 * memory holds new edges: 100,000 edges made, a few hundred live at once. */
/* The node the last edge led from, swept (its life ended) while an edge
 * from that life is added: the add looks it up anew, and the graph stays
 * whole through the sweeps after (one that kept the swept node would
 * have an edge from a node on the free list, cleared when taken again). */
START_TEST(test_lockgraph_swept_node_is_not_the_last_from)
{
	graph(1 << 20, MS_LG_SEARCH_BYTES);
	uint64_t old = births[1];
	edge(1, 2);
	births[1] = old + 1000; /* 1's life ends */
	g.sweep_at = 0; /* the next add sweeps first: 1->2 and 1's node go */
	struct ms_lg_edge from_old = { .a = 1, .a_birth = old, .b = 2, .b_birth = births[2] };
	const struct ms_lg_edge *x = ms_lg_add(&g, &from_old);
	ck_assert_ptr_nonnull(x);
	ck_assert_ptr_eq(ms_lg_find(&g, 1, old, 2, births[2]), x);
	edge(3, 4);
	from_old.b = 5;
	from_old.b_birth = births[5];
	ck_assert_ptr_nonnull(ms_lg_add(&g, &from_old));
	g.sweep_at = 0;
	edge(6, 7); /* sweeps both edges from 1's old life */
	ck_assert_ptr_null(ms_lg_find(&g, 1, old, 2, births[2]));
	ck_assert_ptr_null(ms_lg_find(&g, 1, old, 5, births[5]));
	ck_assert_uint_eq(g.nedges, 2);
	ck_assert_uint_eq(cycle(edge(4, 3)), 2);
}
END_TEST

START_TEST(test_lockgraph_sweep_reuses)
{
	graph(256 * 1024, MS_LG_SEARCH_BYTES);
	for (uint32_t i = 0; i < 100000; i++) {
		births[3] = 10000 + i; /* a new life each time */
		const struct ms_lg_edge *e = edge(1, 3);
		ck_assert_uint_eq(cycle(e), 0);
	}
	ck_assert_uint_eq(g.dropped, 0);
	ck_assert_uint_le(g.nedges, 8192);
	/* and a cycle is still found */
	ck_assert_uint_eq(cycle(edge(3, 1)), 2);
}
END_TEST

/* An edge keeps its gates apart from the caller's (whose array may be
 * gone), and the gates of swept edges serve new ones: lives of a mutex
 * taken under a gate, alternately two, in memory that holds a few
 * thousand, none dropped, and each edge's gates its own. */
START_TEST(test_lockgraph_gates_kept_and_reused)
{
	graph(256 * 1024, MS_LG_SEARCH_BYTES);
	struct ms_lg_life mine[MS_LG_GATES] = { { 9, 0 } };
	mine[0].birth = births[9];
	struct ms_lg_edge e = { .a = 6, .b = 7, .a_birth = births[6], .b_birth = births[7],
				.ngate = 1, .gate = mine };
	const struct ms_lg_edge *x = ms_lg_add(&g, &e);
	ck_assert_ptr_nonnull(x);
	ck_assert_ptr_ne(x->gate, mine);
	mine[0].rec = 8;
	ck_assert_uint_eq(x->gate[0].rec, 9);
	ck_assert_uint_eq(x->gate[0].birth, births[9]);
	const struct ms_lg_edge *plain = edge(4, 5);
	ck_assert_ptr_null(plain->gate);
	const uint32_t g8[] = { 8 }, g89[] = { 8, 9 };
	for (uint32_t i = 0; i < 20000; i++) {
		births[3] = 10000 + i; /* a new life each time */
		const struct ms_lg_edge *y = i % 2 ? edge_g(1, 3, g8, 1) : edge_g(1, 3, g89, 2);
		ck_assert_uint_eq(y->ngate, i % 2 ? 1 : 2);
		ck_assert_uint_eq(y->gate[0].rec, 8);
	}
	ck_assert_uint_eq(g.dropped, 0);
	const struct ms_lg_edge *last = ms_lg_find(&g, 1, births[1], 3, births[3]);
	ck_assert_ptr_nonnull(last);
	ck_assert_uint_eq(last->ngate, 1);
	ck_assert_uint_eq(last->gate[0].rec, 8);
	/* the first edge's gate survived the sweeps, and guards its cycle */
	ck_assert_uint_eq(cycle(edge_g(7, 6, g89 + 1, 1)), 2);
	ck_assert_uint_eq(gate.rec, 9);
	/* so does the last one's */
	ck_assert_uint_eq(cycle(edge_g(3, 1, g8, 1)), 2);
	ck_assert_uint_eq(gate.rec, 8);
	/* every block of gates had room for the most an edge has */
	const uint32_t g4[] = { 8, 9, 10, 11 };
	for (uint32_t i = 0; i < 64; i++) {
		births[3] = 50000 + i;
		edge_g(1, 3, i % 2 ? g4 : g8, i % 2 ? 4 : 1);
	}
	ck_assert_int_eq(guards_intact(), 1);
}
END_TEST

/* An edge the memory cannot hold, its gates' block taken already: the
 * block goes back to be used again, not lost -- tried twice, then
 * another such edge, and one block was ever taken. */
START_TEST(test_lockgraph_gates_back_when_the_edge_fails)
{
	graph(1 << 20, MS_LG_SEARCH_BYTES);
	edge(1, 2); /* the nodes and the indexes are there */
	const uint32_t g9[] = { 9 };
	struct ms_lg_life gates[MS_LG_GATES] = { { 9, 0 } };
	gates[0].birth = births[9];
	struct ms_lg_edge e = { .a = 2, .b = 1, .a_birth = births[2], .b_birth = births[1],
				.ngate = 1, .gate = gates };
	refuse_from = sizeof(struct ms_lg_edge) + 16; /* an edge, not its gates */
	size_t before = allocs;
	ck_assert_ptr_null(ms_lg_add(&g, &e));
	ck_assert_ptr_null(ms_lg_add(&g, &e));
	ck_assert_uint_eq(allocs - before, 1);
	ck_assert_uint_eq(g.dropped, 2);
	refuse_from = 0;
	const struct ms_lg_edge *x = edge_g(2, 1, g9, 1);
	ck_assert_uint_eq(allocs - before, 2); /* the edge; its gates the block back */
	ck_assert_uint_eq(x->gate[0].rec, 9);
	ck_assert_int_eq(guards_intact(), 1);
}
END_TEST

/* Memory spent with every life going on: the edge is dropped, counted. */
START_TEST(test_lockgraph_memory_spent)
{
	graph(4096, MS_LG_SEARCH_BYTES);
	struct ms_lg_edge e = { .a = 1, .b = 2, .a_birth = births[1], .b_birth = births[2] };
	uint32_t added = 0;
	for (uint32_t b = 2; b < RECS; b++) {
		e.b = b;
		e.b_birth = births[b];
		added += ms_lg_add(&g, &e) != NULL;
	}
	ck_assert_uint_gt(added, 0);
	ck_assert_uint_lt(added, RECS - 2);
	ck_assert_uint_eq(g.dropped, RECS - 2 - added);
	/* with gates, whose memory runs out too */
	graph(4096, MS_LG_SEARCH_BYTES);
	struct ms_lg_life gates[MS_LG_GATES] = { { 1, 0 } };
	e.a = RECS - 1;
	e.a_birth = births[RECS - 1];
	e.ngate = 1;
	e.gate = gates;
	added = 0;
	for (uint32_t b = 2; b < RECS - 1; b++) {
		e.b = b;
		e.b_birth = births[b];
		const struct ms_lg_edge *x = ms_lg_add(&g, &e);
		added += x != NULL;
		if (x)
			ck_assert_uint_eq(x->gate[0].rec, 1);
	}
	ck_assert_uint_gt(added, 0);
	ck_assert_uint_lt(added, RECS - 3);
	ck_assert_uint_eq(g.dropped, RECS - 3 - added);
}
END_TEST

/* The readers' walk sees every edge, and nothing is swept meanwhile. */
START_TEST(test_lockgraph_read)
{
	graph(1 << 20, MS_LG_SEARCH_BYTES);
	edge(1, 2);
	edge(2, 3);
	edge(3, 1);
	births[2] = 0;
	unsigned n = 0, live = 0;
	for (const struct ms_lg_edge *e = ms_lg_read_begin(&g); e; e = ms_lg_read_next(e)) {
		n++;
		live += ms_lg_live(&g, e);
	}
	ms_lg_read_end(&g);
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(live, 1);
}
END_TEST

Suite *lockgraph_suite(void)
{
	Suite *s = suite_create("lockgraph");
	TCase *tc = tcase_create("cycles");
	tcase_add_test(tc, test_lockgraph_two_cycle);
	tcase_add_test(tc, test_lockgraph_find_again_sees_edges_added_since);
	tcase_add_test(tc, test_lockgraph_thirty_cycle);
	tcase_add_test(tc, test_lockgraph_shortest);
	tcase_add_test(tc, test_lockgraph_ended_edge_closes_nothing);
	tcase_add_test(tc, test_lockgraph_reused_address);
	tcase_add_test(tc, test_lockgraph_gate);
	tcase_add_test(tc, test_lockgraph_read_gate);
	tcase_add_test(tc, test_lockgraph_unguarded_preferred);
	tcase_add_test(tc, test_lockgraph_bounded);
	tcase_add_test(tc, test_lockgraph_swept_node_is_not_the_last_from);
	tcase_add_test(tc, test_lockgraph_sweep_reuses);
	/* the sweep's 100,000 edges take ~4 s under the sanitizers, Check's
	 * default limit: a loaded machine passed it */
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_lockgraph_memory_spent);
	tcase_add_test(tc, test_lockgraph_gates_kept_and_reused);
	tcase_add_test(tc, test_lockgraph_gates_back_when_the_edge_fails);
	tcase_add_test(tc, test_lockgraph_read);
	suite_add_tcase(s, tc);
	return s;
}
