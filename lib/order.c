/* order.c - lock-order edges (a uthash in the depot's memory, under its
 * lock) and the search for cycles among them at report time; see order.h. */
#define _GNU_SOURCE
#include "order.h"
#include "depot.h"
#include "internal.h"
#include "record.h"
#include "report_stacks.h"
#include "symbols.h"
#include "table.h"
#include "threads.h"

#include <string.h>
#include <sys/mman.h>

#include "depot_hash.h"

#define MAX_GATES 4

struct edge_key {
	uint64_t a_birth, b_birth;
	uint32_t a, b;
};

struct edge {
	struct edge_key k;
	uintptr_t a_key, b_key;
	uint32_t tid;
	uint32_t ngate;
	uintptr_t a_caller;
	ms_stack_id a_stack, b_stack;
	struct {
		uint32_t rec;
		uint64_t birth;
	} gate[MAX_GATES];
	struct edge *all_next;
	UT_hash_handle hh;
};

static struct edge *edges, *all_edges;
static uint64_t nedges, dropped;

/* Edges of lives that ended.  Such an edge can never be in a cycle again
 * (a cycle is searched among live mutexes' edges, and a new life of the
 * same record is a new key), but its memory was kept for ever: a program
 * that makes a mutex per request or per object and takes it under another
 * one spent MUTEXSTAT_STACK_MEMORY on dead edges -- 200 bytes each --
 * and then kept neither new edges (real inversions missed) nor new call
 * stacks.  So when the edges have doubled since the last look, those of
 * ended lives are taken out of the hash and the list, and their memory
 * holds the next ones.  Not while a report walks the list (searching:
 * it reads edges without the lock).  Under the depot's lock. */
#define SWEEP_MIN 4096
static struct edge *free_edges; /* linked by all_next */
static uint64_t sweep_at = SWEEP_MIN;
static uint32_t searching;
/* Always in the hash, never in the list: uthash frees its table when the
 * last element goes and makes a new one at the next add, and what uthash
 * frees stays spent (depot_hash.h). */
static struct edge sentinel;

static int alive(uint32_t r, uint64_t birth);

static void sweep(void)
{
	uint64_t live = 0;
	for (struct edge **p = &all_edges; *p;) {
		struct edge *e = *p;
		if (alive(e->k.a, e->k.a_birth) && alive(e->k.b, e->k.b_birth)) {
			live++;
			p = &e->all_next;
			continue;
		}
		if (!edges)
			break; /* never: the sentinel stays (for the analyzer) */
		*p = e->all_next;
		HASH_DELETE(hh, edges, e);
		e->all_next = free_edges;
		free_edges = e;
	}
	nedges = live;
	sweep_at = live * 2 > SWEEP_MIN ? live * 2 : SWEEP_MIN;
}

/* Memory for a new edge, zeroed; NULL when the budget is spent. */
static struct edge *edge_alloc(void)
{
	if (!edges) { /* the sentinel first (its key, record 0, is no mutex's) */
		oom = 0;
		HASH_ADD(hh, edges, k, sizeof sentinel.k, &sentinel);
		if (oom)
			edges = NULL;
	}
	if (!free_edges && !searching && nedges >= sweep_at)
		sweep();
	struct edge *e = free_edges;
	if (e)
		free_edges = e->all_next;
	else if (!(e = alloc(sizeof *e)) && !searching) {
		sweep(); /* the budget is spent: the dead ones' memory, if any */
		if ((e = free_edges) != NULL)
			free_edges = e->all_next;
	}
	if (e)
		memset(e, 0, sizeof *e);
	return e;
}

static void set_key(struct edge_key *k, const struct ms_held *a, uint32_t b,
		    uint64_t b_birth)
{
	memset(k, 0, sizeof *k);
	k->a = a->rec;
	k->a_birth = LOAD(&ms_rec(a->rec)->birth);
	k->b = b;
	k->b_birth = b_birth;
}

/* A known edge taken again (by a thread whose cache did not have it): its
 * gates are the mutexes held on every time it was taken, so keep those
 * this thread holds too.  Returns 1 if one was dropped.  Under the depot's
 * lock; the report reads the gates without it (an entry moved down while
 * it reads is one it may see twice: still a gate of the edge, or one that
 * was until now). */
static int narrow_gates(struct edge *e, const struct ms_tstate *ts, uint32_t ai,
			uint32_t r)
{
	uint32_t n = LOAD(&e->ngate), out = 0;
	for (uint32_t g = 0; g < n; g++) {
		int held = 0;
		for (uint32_t i = 0; i < ts->nheld && !held; i++)
			held = i != ai && ts->held[i].rec != r &&
			       ts->held[i].rec == e->gate[g].rec &&
			       LOAD(&ms_rec(ts->held[i].rec)->birth) == e->gate[g].birth;
		if (held)
			e->gate[out++] = e->gate[g];
	}
	if (out == n)
		return 0;
	STORE(&e->ngate, out);
	return 1;
}

/* Returns 0 if the edge could not be looked at now (another thread is
 * forking): the thread tries again the next time. */
static int add_edge(struct ms_thread *t, struct ms_tstate *ts, uint32_t ai,
		    uint32_t r, uint64_t birth, uintptr_t key)
{
	const struct ms_held *a = &ts->held[ai];
	struct edge_key k;
	struct edge *e;
	set_key(&k, a, r, birth);
	if (!ms_depot_lock_for_update())
		return 0;
	HASH_FIND(hh, edges, &k, sizeof k, e);
	int narrowed = e && narrow_gates(e, ts, ai, r);
	ms_depot_unlock();
	if (e && narrowed) {
		/* this time the order was taken outside a gate of before: it
		 * is the one to show (a GUARDED INVERSION may now be none) */
		ms_stack_id b_now = ms_stack_here();
		ms_stack_id a_now = ms_depot_put(&a->caller, 1);
		if (ms_depot_lock_for_update()) {
			struct edge *still;
			/* still the edge: not swept meanwhile (lives ended) */
			HASH_FIND(hh, edges, &k, sizeof k, still);
			if (still == e) {
				STORE(&e->tid, t->tid);
				STORE(&e->a_caller, a->caller);
				STORE(&e->a_stack, a_now);
				STORE(&e->b_stack, b_now);
			}
			ms_depot_unlock();
		}
	}
	if (e)
		return 1;
	/* New: the stacks (B's now; A's as known for its call site), then
	 * insert (unless another thread did meanwhile). */
	ms_stack_id b_stack = ms_stack_here();
	/* A's acquisition was not captured: its call site only (a stack from
	 * another thread's path through that line would mislead). */
	ms_stack_id a_stack = ms_depot_put(&a->caller, 1);
	if (!ms_depot_lock_for_update())
		return 0;
	HASH_FIND(hh, edges, &k, sizeof k, e);
	if (!e && (e = edge_alloc()) != NULL) {
		e->k = k;
		e->a_key = ms_rec_key(a->rec);
		e->b_key = key;
		e->tid = t->tid;
		e->a_caller = a->caller;
		e->a_stack = a_stack;
		e->b_stack = b_stack;
		uint32_t n = ts->nheld;
		for (uint32_t i = 0; i < n && e->ngate < MAX_GATES; i++) {
			if (i == ai || ts->held[i].rec == r)
				continue;
			e->gate[e->ngate].rec = ts->held[i].rec;
			e->gate[e->ngate].birth = LOAD(&ms_rec(ts->held[i].rec)->birth);
			e->ngate++;
		}
		oom = 0;
		HASH_ADD(hh, edges, k, sizeof k, e);
		if (oom) {
			dropped++;
			e->all_next = free_edges; /* its memory, for the next */
			free_edges = e;
		} else {
			e->all_next = all_edges;
			__atomic_store_n(&all_edges, e, __ATOMIC_RELEASE);
			nedges++;
		}
	} else if (!e)
		dropped++;
	ms_depot_unlock();
	return 1;
}

static void flag_in_edge(uint32_t r)
{
	if (!(LOAD(&ms_rec(r)->flags) & MS_F_EDGE))
		__atomic_fetch_or(&ms_rec(r)->flags, MS_F_EDGE, __ATOMIC_SEQ_CST);
}

/* Entry e of the thread's edge cache becomes a->b of generation gen.  A
 * signal handler of this thread may ask the cache between the stores: its
 * `a` is 0 (no record) until the others are written, so it never matches
 * half of one edge and half of another. */
static void edge_cache_put(struct ms_tstate *ts, unsigned e, uint32_t a, uint32_t b,
			   uint32_t gen)
{
	ts->edge_cache[e].a = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	ts->edge_cache[e].b = b;
	ts->edge_cache[e].gen = gen;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	ts->edge_cache[e].a = a;
}

void ms_order_note(struct ms_thread *t, struct ms_tstate *ts, uint32_t r,
		   uintptr_t key, uintptr_t caller)
{
	(void)caller;
	uint32_t misuse = __atomic_load_n(&ms_unlocks_elsewhere, __ATOMIC_ACQUIRE);
	if (unlikely(misuse != ts->pruned_at)) {
		/* some thread unlocked a mutex it did not hold: entries of
		 * this thread's set may be gone */
		ms_held_prune(ts);
		ts->pruned_at = misuse;
	}
	uint32_t n = ts->nheld;
	if (!n)
		return;
	for (uint32_t i = 0; i < n; i++)
		if (ts->held[i].rec == r)
			return; /* a recursive relock: no edge */
	/* Only from the mutex taken last (as lockdep does): those taken
	 * before it already have edges to it, so every order among them is
	 * in the graph as a path, and a thread holding twenty mutexes pays
	 * for one edge, not twenty. */
	if (ms_order_known(ts, r))
		return;
	uint32_t i = n - 1, a = ts->held[i].rec;
	/* Both records are flagged before gen is read: a life of either that
	 * ends from now on bumps gen (table.c), so the cached edge below is
	 * never trusted for a later life. */
	flag_in_edge(a);
	flag_in_edge(r);
	uint32_t gen = __atomic_load_n(&ms_table.gen, __ATOMIC_SEQ_CST);
	unsigned slot = ms_edge_slot(a, r);
	ms_guard_enter(t);
	int known = add_edge(t, ts, i, r, LOAD(&ms_rec(r)->birth), key);
	ms_guard_leave(t);
	if (!known)
		return;
	/* the newest in the slot itself (asked first), the one it held, if
	 * still good, in the partner */
	uint32_t had_a = ts->edge_cache[slot].a, had_b = ts->edge_cache[slot].b;
	if (had_a && /* not empty: records are 1 and up */
	    ms_edge_cached(ts, slot, had_a, had_b, gen))
		edge_cache_put(ts, slot ^ 1, had_a, had_b, gen);
	edge_cache_put(ts, slot, a, r, gen);
}

static uint64_t not_followed; /* ended; live ones are in the threads' records */

void ms_order_not_followed(uint32_t n)
{
	__atomic_fetch_add(&not_followed, n, __ATOMIC_RELAXED);
}

static void add_overflow(struct ms_tstate *ts, void *arg)
{
	*(uint64_t *)arg += LOAD(&ts->overflow);
}

void ms_order_after_fork_child(void)
{
	/* the parent's edges are of mutex lives the child does not have (its
	 * births are new); what it could not keep is counted anew */
	dropped = 0;
	not_followed = 0;
	searching = 0; /* the parent's report goes on there, not here */
}

void ms_order_after_reset(void)
{
	/* what ended before it; those held now are counted when they end */
	__atomic_store_n(&not_followed, 0, __ATOMIC_RELAXED);
}

void ms_order_stats(struct ms_order_stats *out)
{
	out->edges = LOAD(&nedges);
	out->dropped = LOAD(&dropped);
	out->not_followed = LOAD(&not_followed);
	ms_threads_each(add_overflow, &out->not_followed);
}

/* ---- cycles, at report time ------------------------------------------ */

static int alive(uint32_t r, uint64_t birth)
{
	const struct ms_record *rec = ms_rec(r);
	return LOAD(&rec->key) != 0 && LOAD(&rec->birth) == birth;
}

struct graph {
	struct edge **e;      /* live edges, sorted by source record */
	size_t n;
	uint32_t *first;      /* per record: index of its first outgoing edge+1 */
	int32_t *from;        /* BFS: edge index that reached a record, -1 */
	uint32_t *queue;
	size_t cap_recs;
};

static int by_source(const void *x, const void *y)
{
	const struct edge *a = *(struct edge *const *)x, *b = *(struct edge *const *)y;
	return a->k.a < b->k.a ? -1 : a->k.a > b->k.a;
}

static void *map(size_t bytes)
{
	void *p = mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	return p;
}

/* Shortest path of edges from record `start` back to record `goal`;
 * fills path (edge indices, in order) and returns its length, 0 if none. */
static size_t find_path(struct graph *g, uint32_t start, uint32_t goal,
			size_t *path, size_t max)
{
	size_t head = 0, tail = 0;
	for (size_t i = 0; i < g->n; i++) {
		g->from[g->e[i]->k.a] = -2; /* unvisited */
		g->from[g->e[i]->k.b] = -2;
	}
	g->from[start] = -1;
	g->queue[tail++] = start;
	while (head < tail) {
		uint32_t u = g->queue[head++];
		if (u == goal)
			break;
		for (uint32_t i = g->first[u]; i && i <= g->n && g->e[i - 1]->k.a == u; i++) {
			uint32_t v = g->e[i - 1]->k.b;
			if (g->from[v] != -2)
				continue;
			g->from[v] = (int32_t)(i - 1);
			g->queue[tail++] = v;
		}
	}
	if (g->from[goal] == -2)
		return 0;
	size_t len = 0;
	for (uint32_t v = goal; g->from[v] >= 0 && len < max;
	     v = g->e[g->from[v]]->k.a)
		path[len++] = (size_t)g->from[v];
	for (size_t i = 0; i < len / 2; i++) { /* reverse: start first */
		size_t x = path[i];
		path[i] = path[len - 1 - i];
		path[len - 1 - i] = x;
	}
	return len;
}

/* A gate: a mutex held on every edge of the cycle. */
static int gate_of(struct edge **cyc, size_t n, uint32_t *rec, uint64_t *birth)
{
	for (uint32_t g = 0; g < cyc[0]->ngate; g++) {
		int everywhere = 1;
		for (size_t i = 1; i < n && everywhere; i++) {
			int here = 0;
			for (uint32_t h = 0; h < cyc[i]->ngate; h++)
				here |= cyc[i]->gate[h].rec == cyc[0]->gate[g].rec &&
					cyc[i]->gate[h].birth == cyc[0]->gate[g].birth;
			everywhere = here;
		}
		if (everywhere) {
			*rec = cyc[0]->gate[g].rec;
			*birth = cyc[0]->gate[g].birth;
			return 1;
		}
	}
	return 0;
}

static const char *mutex_name(uint32_t r)
{
	if (!(LOAD(&ms_rec(r)->flags) & MS_F_COLD))
		return NULL;
	return LOAD(&ms_table.cold[r].name);
}

static void letter(char *out, size_t i)
{
	if (i < 26) {
		out[0] = (char)('A' + i);
		out[1] = 0;
	} else {
		struct ms_fmt f;
		ms_fmt_init(&f, out, 8, -1);
		ms_fmt(&f, "M%zu", i + 1);
	}
}

#define SHOW_EDGES 8 /* longer cycles: the first 6 and the last 2 */

/* head, then where the mutex was first locked, in 120 columns: cut by
 * ms_symbol_fit, so that the line number stays (a cut inside it read as
 * another line). */
static void print_site(struct ms_fmt *f, const char *head, uintptr_t caller)
{
	size_t used = strlen(head), room = used < 100 ? 120 - used : 20;
	char site[256];
	ms_symbolize(caller, site, sizeof site);
	ms_fmt(f, "%s%s\n", head, ms_symbol_fit(site, room));
}

int ms_order_maybe_reused(uint32_t r, uintptr_t key)
{
	struct ms_frame fr;
	return (LOAD(&ms_rec(r)->flags) & MS_F_STATIC) &&
	       ms_symbolize_frame(key, 0, &fr) != 0;
}

static void print_reuse_note(struct ms_fmt *f, struct edge **cyc, size_t n)
{
	char name[8];
	size_t count = 0;
	for (size_t i = 0; i < n; i++) {
		if (!ms_order_maybe_reused(cyc[i]->k.a, cyc[i]->a_key))
			continue;
		letter(name, i);
		if (count++ == 0)
			ms_fmt(f, "  note: ");
		else if (count <= 4)
			ms_fmt(f, ", ");
		if (count <= 4)
			ms_fmt(f, "%s", name);
	}
	if (!count)
		return;
	ms_fmt(f, "%s: no init or destroy seen, on the heap or a stack (a C++ std::mutex?): objects "
		  "that had\n", count > 4 ? ", ..." : "");
	ms_fmt(f, "        %s earlier in the run are the same mutex%s here: the orders may be of "
		  "different objects\n", count > 1 ? "their addresses" : "its address",
	       count > 1 ? "es" : "");
}

static void print_cycle(struct ms_fmt *f, struct edge **cyc, size_t n, int guarded,
			uint32_t grec, uint64_t gbirth)
{
	char name[8];
	(void)gbirth;
	int one_thread = 1;
	for (size_t i = 1; i < n; i++)
		one_thread &= cyc[i]->tid == cyc[0]->tid;
	if (guarded)
		ms_fmt(f, "GUARDED INVERSION: %zu mutexes taken in a cycle of orders, "
			  "always under one more mutex: cannot deadlock\n", n);
	else
		ms_fmt(f, "POTENTIAL DEADLOCK: %zu mutexes taken in a cycle of orders%s\n",
		       n, one_thread ? " (all by one thread: two threads doing the "
				      "same would deadlock)" : "");
	ms_fmt(f, "  order: ");
	for (size_t i = 0; i < n; i++) {
		if (n > 16 && i == 12) { /* keep the line within 120 columns */
			ms_fmt(f, "... -> ");
			i = n - 3;
			continue;
		}
		letter(name, i);
		ms_fmt(f, "%s -> ", name);
	}
	ms_fmt(f, "A\n");
	for (size_t i = 0; i < n; i++) {
		letter(name, i);
		const char *nm = mutex_name(cyc[i]->k.a);
		char head[128];
		struct ms_fmt hf;
		ms_fmt_init(&hf, head, sizeof head, -1);
		char cut[40];
		ms_fmt(&hf, "  %-3s mutex %p%s%s%s, first locked at ", name,
		       (void *)cyc[i]->a_key, nm ? " \"" : "", ms_name_cut(cut, sizeof cut, nm, 30),
		       nm ? "\"" : "");
		print_site(f, ms_fmt_str(&hf), LOAD(&ms_rec(cyc[i]->k.a)->first_caller));
	}
	print_reuse_note(f, cyc, n);
	if (guarded) {
		const char *nm = mutex_name(grec);
		char head[128];
		struct ms_fmt hf;
		ms_fmt_init(&hf, head, sizeof head, -1);
		/* its address, as the top table and the JSON's gate have it */
		char cut[40];
		ms_fmt(&hf, "  gate: mutex %p%s%s%s, held on every edge, first locked at ",
		       (void *)ms_rec_key(grec), nm ? " \"" : "", ms_name_cut(cut, sizeof cut, nm, 30),
		       nm ? "\"" : "");
		print_site(f, ms_fmt_str(&hf), LOAD(&ms_rec(grec)->first_caller));
	}
	for (size_t i = 0; i < n; i++) {
		if (n > SHOW_EDGES && i == SHOW_EDGES - 2) {
			ms_fmt(f, "  ... %zu more edges ...\n", n - SHOW_EDGES);
			i = n - 3;
			continue;
		}
		char an[8], bn[8];
		letter(an, i);
		letter(bn, (i + 1) % n);
		char tn[16];
		ms_thread_name(cyc[i]->tid, tn);
		ms_fmt(f, "  thread %u%s%s%s took %s, then %s:\n", cyc[i]->tid,
		       tn[0] ? " \"" : "", tn, tn[0] ? "\"" : "", an, bn);
		ms_fmt(f, "    %-3s at  ", an);
		ms_report_stack(f, cyc[i]->a_stack, 12);
		ms_fmt(f, "    %-3s at  ", bn);
		ms_report_stack(f, cyc[i]->b_stack, 12);
	}
}

/* The cycle search, shared by the text findings (ms_order_print) and the
 * edge iterator (ms_order_each_edge): the live edges sorted by source, and
 * for each edge the shortest path back to its source -- potential cycles
 * first, then guarded ones -- each cycle reported once, rotated to start
 * at its smallest record (when it has at most 64 edges). */
struct search {
	struct graph g;
	uint64_t total;       /* edges recorded, live or not: the arrays' size */
	size_t recs;
	size_t *path, *idx;   /* idx: the cycle's edges as indices into g.e */
	struct edge **cyc;
	uint64_t *seen;
	int walking;          /* counted in `searching` (no sweep meanwhile) */
};

#define MAX_CYCLES 4096

/* fn gets the cycle's n edges (cyc) and their indices in the search's g.e
 * (idx); for a guarded cycle, the gate. */
typedef void cycle_fn(struct edge **cyc, const size_t *idx, size_t n, int guarded,
		      uint32_t grec, uint64_t gbirth, void *arg);

static void search_end(struct search *s)
{
	struct graph *g = &s->g;
	size_t total = s->total, recs = s->recs;
	if (s->walking) {
		ms_depot_lock();
		searching--;
		ms_depot_unlock();
	}
	if (g->e) munmap(g->e, total * sizeof(struct edge *));
	if (g->first) munmap(g->first, recs * sizeof *g->first);
	if (g->from) munmap(g->from, recs * sizeof *g->from);
	if (g->queue) munmap(g->queue, recs * sizeof *g->queue);
	if (s->path) munmap(s->path, total * sizeof *s->path);
	if (s->idx) munmap(s->idx, (total + 1) * sizeof *s->idx);
	if (s->cyc) munmap(s->cyc, (total + 1) * sizeof(struct edge *));
	if (s->seen) munmap(s->seen, MAX_CYCLES * sizeof *s->seen);
	memset(s, 0, sizeof *s);
}

/* The graph of live edges; 0 when there are none or no memory (then
 * search_end is still safe to call). */
static int search_begin(struct search *s)
{
	memset(s, 0, sizeof *s);
	ms_depot_lock();
	uint64_t total = nedges;
	struct edge *list = all_edges;
	if (total) {
		searching++; /* the list stays as it is (sweep) */
		s->walking = 1;
	}
	ms_depot_unlock();
	if (!total)
		return 0;
	struct graph *g = &s->g;
	s->total = total;
	s->recs = ms_table.capacity + 2;
	g->e = map(total * sizeof(struct edge *));
	g->first = map(s->recs * sizeof *g->first);
	g->from = map(s->recs * sizeof *g->from);
	g->queue = map(s->recs * sizeof *g->queue);
	s->path = map(total * sizeof *s->path);
	s->idx = map((total + 1) * sizeof *s->idx);
	s->cyc = map((total + 1) * sizeof(struct edge *));
	s->seen = map(MAX_CYCLES * sizeof *s->seen);
	if (!g->e || !g->first || !g->from || !g->queue || !s->path || !s->idx ||
	    !s->cyc || !s->seen)
		return 0;
	for (struct edge *e = list; e && g->n < total; e = e->all_next)
		if (alive(e->k.a, e->k.a_birth) && alive(e->k.b, e->k.b_birth) &&
		    e->k.a != e->k.b)
			g->e[g->n++] = e;
	qsort(g->e, g->n, sizeof(struct edge *), by_source);
	for (size_t i = g->n; i-- > 0;)
		g->first[g->e[i]->k.a] = (uint32_t)(i + 1);
	return 1;
}

static void search_cycles(struct search *s, cycle_fn *fn, void *arg)
{
	struct graph *g = &s->g;
	struct edge **cyc = s->cyc;
	size_t *idx = s->idx;
	size_t nseen = 0;
	for (int pass = 0; pass < 2; pass++) /* potential first, then guarded */
		for (size_t i = 0; i < g->n && nseen < MAX_CYCLES; i++) {
			struct edge *e = g->e[i];
			size_t len = find_path(g, e->k.b, e->k.a, s->path, s->total);
			if (!len)
				continue;
			/* the cycle: e, then the path back; start it at its
			 * smallest record so each cycle is seen once */
			size_t n = 0;
			idx[n] = i;
			cyc[n++] = e;
			for (size_t j = 0; j < len; j++) {
				idx[n] = s->path[j];
				cyc[n++] = g->e[s->path[j]];
			}
			uint64_t sig = 1469598103934665603ull, sum = 0;
			for (size_t j = 0; j < n; j++)
				sum += (uint64_t)(uintptr_t)cyc[j] * 0x9e3779b97f4a7c15ull;
			sig ^= sum;
			int dup = 0;
			for (size_t j = 0; j < nseen && !dup; j++)
				dup = s->seen[j] == sig;
			if (dup)
				continue;
			uint32_t grec = 0;
			uint64_t gbirth = 0;
			int guarded = gate_of(cyc, n, &grec, &gbirth);
			if (guarded != pass)
				continue;
			s->seen[nseen++] = sig;
			size_t lo = 0;
			for (size_t j = 1; j < n; j++)
				if (cyc[j]->k.a < cyc[lo]->k.a)
					lo = j;
			if (n <= 64) {
				struct edge *tmp[64];
				size_t tmp_idx[64];
				for (size_t j = 0; j < n; j++) {
					tmp[j] = cyc[(lo + j) % n];
					tmp_idx[j] = idx[(lo + j) % n];
				}
				memcpy(cyc, tmp, n * sizeof(struct edge *));
				memcpy(idx, tmp_idx, n * sizeof *idx);
			}
			fn(cyc, idx, n, guarded, grec, gbirth, arg);
		}
}

struct print_ctx {
	struct ms_fmt *f;
	int found;
};

static void print_one(struct edge **cyc, const size_t *idx, size_t n, int guarded,
		      uint32_t grec, uint64_t gbirth, void *arg)
{
	struct print_ctx *p = arg;
	(void)idx;
	ms_fmt(p->f, "\n");
	print_cycle(p->f, cyc, n, guarded, grec, gbirth);
	if (!guarded)
		p->found++;
}

int ms_order_print(struct ms_fmt *f)
{
	struct search s;
	struct print_ctx p = { f, 0 };
	if (search_begin(&s))
		search_cycles(&s, print_one, &p);
	search_end(&s);
	return p.found;
}

/* ---- the edges, for graph outputs ------------------------------------ */

#define ON_POTENTIAL 1u
#define ON_GUARDED 2u

static void mark_one(struct edge **cyc, const size_t *idx, size_t n, int guarded,
		     uint32_t grec, uint64_t gbirth, void *arg)
{
	uint8_t *on = arg;
	(void)cyc;
	(void)grec;
	(void)gbirth;
	for (size_t j = 0; j < n; j++)
		on[idx[j]] |= guarded ? ON_GUARDED : ON_POTENTIAL;
}

int ms_order_each_edge(ms_order_edge_fn *fn, void *arg)
{
	struct search s;
	uint8_t *on = NULL;
	int n = -1;
	if (!search_begin(&s)) {
		n = s.total ? -1 : 0; /* no edges, or no memory */
		goto out;
	}
	on = map(s.g.n);
	if (!on)
		goto out;
	search_cycles(&s, mark_one, on);
	for (size_t i = 0; i < s.g.n; i++) {
		const struct edge *e = s.g.e[i];
		struct ms_order_edge oe = {
			.a = e->k.a, .b = e->k.b,
			.a_key = e->a_key, .b_key = e->b_key,
			.tid = e->tid,
			.a_caller = e->a_caller,
			.a_stack = e->a_stack, .b_stack = e->b_stack,
			.potential = !!(on[i] & ON_POTENTIAL),
			.guarded = !!(on[i] & ON_GUARDED),
		};
		fn(&oe, arg);
	}
	n = (int)s.g.n;
out:
	if (on)
		munmap(on, s.g.n ? s.g.n : 1);
	search_end(&s);
	return n;
}

const char *ms_order_mutex_name(uint32_t r)
{
	return mutex_name(r);
}

/* ---- the cycles, for the JSON output --------------------------------- */

struct cycle_ctx {
	ms_order_cycle_fn *fn;
	void *arg;
	struct ms_order_edge *out; /* room for every edge */
	int found;
};

static void each_cycle_one(struct edge **cyc, const size_t *idx, size_t n,
			   int guarded, uint32_t grec, uint64_t gbirth, void *arg)
{
	struct cycle_ctx *c = arg;
	(void)idx;
	(void)gbirth;
	for (size_t i = 0; i < n; i++) {
		const struct edge *e = cyc[i];
		c->out[i] = (struct ms_order_edge){
			.a = e->k.a, .b = e->k.b,
			.a_key = e->a_key, .b_key = e->b_key,
			.tid = e->tid,
			.a_caller = e->a_caller,
			.a_stack = e->a_stack, .b_stack = e->b_stack,
			.potential = !guarded, .guarded = guarded,
		};
	}
	struct ms_order_cycle oc = {
		.n = n, .edges = c->out, .guarded = guarded,
		.gate = guarded ? grec : 0,
		.gate_key = guarded ? ms_rec_key(grec) : 0,
	};
	c->fn(&oc, c->arg);
	c->found++;
}

int ms_order_each_cycle(ms_order_cycle_fn *fn, void *arg)
{
	struct search s;
	struct cycle_ctx c = { fn, arg, NULL, 0 };
	int n = -1;
	if (!search_begin(&s)) {
		n = s.total ? -1 : 0; /* no edges, or no memory */
		goto out;
	}
	c.out = map((s.total + 1) * sizeof *c.out);
	if (!c.out)
		goto out;
	search_cycles(&s, each_cycle_one, &c);
	n = c.found;
out:
	if (c.out)
		munmap(c.out, (s.total + 1) * sizeof *c.out);
	search_end(&s);
	return n;
}
