/* order.c - lock-order edges, noted as threads take mutexes while holding
 * others, in the lock-order graph (lockgraph.c, in the depot's memory and
 * under its lock); each new edge is searched for the cycle it closes, and
 * a cycle becomes a finding (findings.c).  See order.h. */
#define _GNU_SOURCE
#include "analysis/order.h"
#include "stacks/depot.h"
#include "analysis/findings.h"
#include "base/internal.h"
#include "base/maps.h"
#include "base/pages.h"
#include "analysis/lockgraph.h"
#include "stacks/symbols.h"
#include "core/table.h"
#include "core/thread_pool.h"

#include <pthread.h>
#include <string.h>

static struct ms_lg graph; /* under the depot's lock */
static int graph_made;

/* A record's life now, 0 if it tracks no mutex (record 0 never does). */
static uint64_t life_of(uint32_t r)
{
	const struct ms_record *rec = ms_rec(r);
	return r && LOAD(&rec->key) ? LOAD(&rec->birth) : 0;
}

static void *graph_alloc(size_t bytes)
{
	return ms_depot_alloc(bytes);
}

/* The graph, at the first edge: a program that never nests maps nothing.
 * Under the depot's lock. */
static struct ms_lg *graph_here(void)
{
	if (!graph_made) {
		/* NULL: no search finds anything, each is cut short */
		void *search = ms_pages_map(MS_LG_SEARCH_BYTES);
		/* kept for the run, as the graph */
		ms_lg_init(&graph, graph_alloc, life_of, search, MS_LG_SEARCH_BYTES);
		/* the stacks' memory is the edges' too: the ended lives'
		 * edges are swept before they take a sixteenth of it */
		struct ms_depot_stats st;
		ms_depot_stats(&st);
		uint64_t fit = st.budget / 16 / ms_lg_edge_bytes();
		if (fit < graph.sweep_min)
			graph.sweep_at = graph.sweep_min = fit > 64 ? fit : 64;
		graph_made = 1;
	}
	return &graph;
}

/* Where held entry i's lock-order edge to record r (life b_birth) is: the
 * edge's key and gates (the other mutexes held), no stacks yet. */
static void edge_proto(struct ms_lg_edge *e, struct ms_lg_life gates[MS_LG_GATES],
		       const struct ms_tstate *ts, uint32_t ai, uint32_t r, uint64_t b_birth,
		       uintptr_t key, uintptr_t caller, int read)
{
	const struct ms_held *a = &ts->held[ai];
	memset(e, 0, sizeof *e);
	e->gate = gates;
	e->a = a->rec;
	e->a_birth = LOAD(&ms_rec(a->rec)->birth);
	e->b = r;
	e->b_birth = b_birth;
	e->a_key = ms_rec_key(a->rec);
	e->b_key = key;
	e->a_caller = a->caller;
	e->b_caller = caller;
	e->modes = 1u << (2 * (a->mode & MS_HELD_READ) + (uint32_t)read);
	for (uint32_t i = 0; i < ts->nheld && e->ngate < MS_LG_GATES; i++) {
		if (i == ai || ts->held[i].rec == r)
			continue;
		e->gate[e->ngate].rec = ts->held[i].rec;
		e->gate[e->ngate].birth = LOAD(&ms_rec(ts->held[i].rec)->birth);
		if (ts->held[i].mode & MS_HELD_READ)
			e->gate_read |= 1u << e->ngate;
		e->ngate++;
	}
}

/* A known edge taken again (by a thread whose cache did not have it): its
 * gates are the mutexes held on every time it was taken, so keep those
 * this thread holds too (proto's), held for read if either time was a
 * read.  Returns 1 if one was dropped or became a read.  Under the
 * depot's lock; readers of the graph read the gates without it (an entry
 * moved down while it reads is one it may see twice: still a gate of the
 * edge, or one that was until now; a read bit set before its entry moved
 * says read of the entry it moves onto: the weaker gate, for a moment). */
static int narrow_gates(struct ms_lg_edge *e, const struct ms_lg_edge *proto)
{
	uint32_t n = LOAD(&e->ngate), out = 0, was_read = LOAD(&e->gate_read), read = 0;
	for (uint32_t g = 0; g < n; g++) {
		int held = 0;
		uint32_t i;
		for (i = 0; i < proto->ngate && !held; i++)
			held = proto->gate[i].rec == e->gate[g].rec &&
			       proto->gate[i].birth == e->gate[g].birth;
		if (!held)
			continue;
		if ((was_read >> g | proto->gate_read >> (i - 1)) & 1)
			read |= 1u << out;
		e->gate[out++] = e->gate[g];
	}
	if (out == n && read == was_read)
		return 0;
	STORE(&e->gate_read, read | was_read);
	STORE(&e->ngate, out);
	STORE(&e->gate_read, read);
	return 1;
}

/* The cycle edge e closes, if it could deadlock, kept as a finding; with
 * `modes`, only if it could with e taken in those (0: any of e's).  Under
 * the depot's lock. */
static void search(struct ms_lg *g, const struct ms_lg_edge *e, uint32_t modes)
{
	const struct ms_lg_edge *const *path;
	struct ms_lg_life gate;
	int cut;
	size_t n = ms_lg_cycle(g, e, &path, &gate, &cut);
	if (n && ms_order_cycle_can_block_as(path, n, modes))
		ms_findings_cycle(path, n, &gate);
}

/* The fewest reads among an edge's modes (2 * a read + b read each): a
 * taker of the edge in fewer reads is the one its findings name, for a
 * cycle may block through its writes where its reads would not. */
static unsigned fewest_reads(uint32_t modes)
{
	unsigned fewest = 2;
	for (uint32_t c = 0; c < 4; c++)
		if ((modes & (1u << c)) && (unsigned)__builtin_popcount(c) < fewest)
			fewest = (unsigned)__builtin_popcount(c);
	return fewest;
}

/* Edge e's taker (thread, callers and stacks) to be from's. */
static void taker_set(struct ms_lg_edge *e, const struct ms_lg_edge *from)
{
	STORE(&e->tid, from->tid);
	STORE(&e->a_caller, from->a_caller);
	STORE(&e->b_caller, from->b_caller);
	STORE(&e->a_stack, from->a_stack);
	STORE(&e->b_stack, from->b_stack);
}

/* What add_edge found. */
enum { EDGE_UNSEEN, EDGE_KNOWN, EDGE_ADDED };

/* Returns EDGE_KNOWN for an edge already recorded (with no gate dropped),
 * EDGE_ADDED for one recorded now (or taken outside a gate of before),
 * EDGE_UNSEEN if it could not be looked at now (another thread is
 * forking): the thread tries again the next time. */
static int add_edge(struct ms_thread *t, struct ms_tstate *ts, uint32_t ai,
		    uint32_t r, uint64_t birth, uintptr_t key, uintptr_t caller, int read,
		    int b_new)
{
	struct ms_lg_edge proto;
	struct ms_lg_life gates[MS_LG_GATES];
	edge_proto(&proto, gates, ts, ai, r, birth, key, caller, read);
	proto.tid = t->tid;
	proto.b_new = (uint32_t)b_new;
	if (!ms_depot_lock_for_update())
		return EDGE_UNSEEN;
	struct ms_lg *g = graph_here();
	struct ms_lg_edge *e = ms_lg_find(g, proto.a, proto.a_birth, r, birth);
	/* a read-write lock's edge in a mode not seen before may close a
	 * cycle the others could not */
	uint32_t old_modes = e ? LOAD(&e->modes) : 0;
	int new_mode = e && !(old_modes & proto.modes);
	if (new_mode)
		__atomic_fetch_or(&e->modes, proto.modes, __ATOMIC_RELAXED);
	int gates_dropped = e && narrow_gates(e, &proto);
	/* b taken under a once more, not new now: a cycle through the edge
	 * is no longer one only a new mutex made (findings.h) */
	int not_new = e && LOAD(&e->b_new) && !b_new;
	if (not_new)
		STORE(&e->b_new, 0);
	int narrowed = gates_dropped || new_mode || not_new;
	/* only the new mode is this thread's: a cycle that blocks only in
	 * the modes of before was found with their takers' stacks (a read
	 * taken where another thread wrote is no new deadlock) */
	uint32_t search_modes = gates_dropped ? 0 : proto.modes;
	ms_depot_unlock();
	if (e && !narrowed)
		return EDGE_KNOWN;
	/* New, or taken outside a gate of before (the time to show, and a
	 * GUARDED INVERSION may now be none): the stacks, B's now, A's call
	 * site only (its acquisition was not captured, and a stack from
	 * another thread's path through that line would mislead). */
	proto.b_stack = ms_stack_here();
	proto.a_stack = ms_depot_put_again(&proto.a_caller, 1, &t->last_site);
	if (!ms_depot_lock_for_update())
		return EDGE_UNSEEN;
	e = ms_lg_find(g, proto.a, proto.a_birth, r, birth);
	if (e && narrowed) {
		/* the search's finding, if any, names this thread; the edge
		 * keeps a taker in fewer reads (a writer) for later ones */
		struct ms_lg_edge was = *e;
		int keep_was = !gates_dropped && !not_new &&
			       fewest_reads(proto.modes) >= fewest_reads(old_modes);
		taker_set(e, &proto);
		search(g, e, search_modes);
		if (keep_was)
			taker_set(e, &was);
	} else if (!e && (e = ms_lg_add(g, &proto)) != NULL)
		search(g, e, 0);
	ms_depot_unlock();
	return EDGE_ADDED;
}

static void flag_in_edge(uint32_t r)
{
	if (!(LOAD(&ms_rec(r)->flags) & MS_F_EDGE))
		__atomic_fetch_or(&ms_rec(r)->flags, MS_F_EDGE, __ATOMIC_SEQ_CST);
}

/* Entry e of a thread's edge cache becomes a->b of generation gen.  A
 * signal handler of this thread may ask the cache between the stores: its
 * `a` is 0 (no record) until the others are written, so it never matches
 * half of one edge and half of another. */
static void edge_entry_put(struct ms_edge_entry *e, uint32_t a, uint32_t b, uint32_t gen,
			   uint32_t gates)
{
	e->a = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	e->b = b;
	e->gen = gen;
	e->gates = gates;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	e->a = a;
}

/* Whether entry e of an edge cache holds an edge of generation gen. */
static int edge_entry_good(const struct ms_edge_entry *e, uint32_t gen)
{
	return e->a && /* not empty: records are 1 and up */
	       ms_edge_entry_is(e, e->a, e->b, gen);
}

/* The thread knows edge a->b (of generation gen) from now on: the newest
 * in its slot of the small cache (asked first), the one the slot held, if
 * still good, in the partner.  Returns 1 if that put out a good edge. */
static int remember(struct ms_tstate *ts, uint32_t a, uint32_t b, uint32_t gen,
		    uint32_t gates)
{
	unsigned slot = ms_edge_slot(a, b);
	struct ms_edge_entry *e = ts->edge_cache;
	int put_out = 0;
	if (edge_entry_good(&e[slot], gen)) {
		put_out = edge_entry_good(&e[slot ^ 1], gen);
		edge_entry_put(&e[slot ^ 1], e[slot].a, e[slot].b, gen, e[slot].gates);
	}
	edge_entry_put(&e[slot], a, b, gen, gates);
	return put_out;
}

/* ... and in the bigger cache: an entry of its set that is empty or stale
 * (of an older generation), else the oldest of the set (its first: each
 * put moves the others up). */
static void remember2(struct ms_tstate *ts, uint32_t a, uint32_t b, uint32_t gen,
		      uint32_t gates)
{
	if (!gates)
		ms_edge_window_put(ms_edge_windows(ts->edge_cache2), a, b, gen);
	struct ms_edge_entry *set = ms_edge_set2(ts->edge_cache2, a, b);
	int w = 0;
	while (w < MS_EDGE_WAYS && set[w].a && set[w].gen == gen)
		w++;
	if (w == MS_EDGE_WAYS) {
		for (w = 0; w < MS_EDGE_WAYS - 1; w++)
			edge_entry_put(&set[w], set[w + 1].a, set[w + 1].b, set[w + 1].gen,
				       set[w + 1].gates);
		w = MS_EDGE_WAYS - 1;
	}
	edge_entry_put(&set[w], a, b, gen, gates);
}

/* Memory for a bigger cache, made resident: its sets are where edges
 * hash to, each page read (a fault) and then written (another) as the
 * thread first meets an edge of it -- 128 faults, a millisecond on a
 * virtual machine.  From the depot's arena while the caches there take
 * at most an eighth of it (thirty threads' at the default budget,
 * windows and all; the rest for stacks and edges), as the edges' memory
 * is: past its first part the arena has huge pages, where a first write
 * costs nothing more (a page made resident costs 5 us at it on such a
 * machine: doc/benchmark.md, "The first write to a page"); else pages
 * of its own.  Aligned to its sets: a set of four entries is one cache
 * line, which a probe reads (ms_edge_cached_big). */
static void *big_cache_memory(size_t bytes)
{
	static size_t in_arena; /* under the depot's lock */
	struct ms_depot_stats st;
	ms_depot_stats(&st);
	void *p = ms_depot_alloc_within(bytes, MS_EDGE_WAYS * sizeof(struct ms_edge_entry),
					&in_arena, st.budget / 8);
	if (!p && (p = ms_pages_map(bytes)) != NULL)
		ms_pages_populate(p, bytes);
	return p;
}

/* A thread that keeps missing edges that are known: its bigger cache,
 * with the small one's good edges in it -- once it is there,
 * ms_order_known() asks it alone.  (Inside the guard: no handler's lock
 * on this thread looks at the caches meanwhile.) */
static void big_cache(struct ms_tstate *ts)
{
	/* the windows after the entries, on a line of their own */
	_Static_assert(MS_EDGE_CACHE2 * sizeof(struct ms_edge_entry) % 64 == 0,
		       "the windows start at a line");
	void *p = big_cache_memory(MS_EDGE_CACHE2 * sizeof(struct ms_edge_entry) +
				   MS_EDGE_WINDOWS_BYTES);
	if (!p)
		return;
	__atomic_store_n(&ts->edge_cache2, p, __ATOMIC_RELEASE);
	uint32_t gen = __atomic_load_n(&ms_table.gen, __ATOMIC_SEQ_CST);
	for (unsigned i = 0; i < MS_EDGE_CACHE; i++) {
		const struct ms_edge_entry *e = &ts->edge_cache[i];
		if (edge_entry_good(e, gen))
			remember2(ts, e->a, e->b, gen, e->gates);
	}
}

/* The order of thread tid's entry at history position pos of record r,
 * if it is operation op (0: any taking of a lock) by that thread; else 0. */
static uint64_t own_entry(uint32_t r, uint32_t pos, uint32_t tid, unsigned op)
{
	const struct ms_op *e = ms_history_at(r, pos);
	uint64_t stamp = __atomic_load_n(&e->stamp, __ATOMIC_ACQUIRE);
	unsigned what = (unsigned)(LOAD(&e->what) >> 48) & 31;
	if (!stamp || (stamp & ((1u << MS_OP_TID_BITS) - 1)) != (tid & ((1u << MS_OP_TID_BITS) - 1)))
		return 0;
	int taking = what == MS_OP_LOCK || what == MS_OP_TRYLOCK || what == MS_OP_TIMEDLOCK ||
		     what == MS_OP_CLOCKLOCK || what == MS_OP_COND_REACQUIRE;
	return (op ? what == op : taking) ? stamp >> MS_OP_TID_BITS : 0;
}

/* Mutex r, at its first acquisition (not waited for) under mutex a, the
 * one the thread took last, was initialised by this thread in this same
 * hold of a: its history's only entry is that init, and a's newest is the
 * taking of this hold, older.  No other thread can have had r, and it
 * can have reached none but through what a guards.  (Anything else the
 * thread did to a since -- a relock, a condition wait -- reads as another
 * hold: not new, the surer way to err.) */
static int made_in_this_hold(const struct ms_thread *t, uint32_t a, uint32_t r)
{
	const struct ms_record *ra = ms_rec(a), *rb = ms_rec(r);
	uint32_t a_ops = LOAD(&ra->ops);
	if (LOAD(&rb->ops) != 1 || !a_ops)
		return 0;
	uint64_t init = own_entry(r, 0, t->tid, MS_OP_INIT);
	uint64_t taken = own_entry(a, a_ops - 1, t->tid, 0);
	return init && taken && taken < init;
}

/* not_cached's how: NOTE_READ for a read; NOTE_B_NEW for an acquisition
 * counted already, which may be a new mutex's first (made_in_this_hold).
 * (Six arguments at most: the callers' calls stay jumps, and a stack
 * captured below has no frame of theirs to walk.) */
#define NOTE_READ 1u
#define NOTE_B_NEW 2u

/* Whether held-set entry h is a hold of thread t's: a read (no owner to
 * ask), or a lock whose record says t holds it -- not the top a signal
 * handler sees while the thread it interrupted has raised the count but
 * not yet written the entry (ms_held_push), a lock it let go of before. */
static int held_by(const struct ms_thread *t, const struct ms_held *h)
{
	return (h->mode & MS_HELD_READ) || LOAD(&ms_rec(h->rec)->owner) == t->tid_held;
}

/* The edge is in neither cache (ms_order_known): the graph is asked. */
static __attribute__((noinline)) void
not_cached(struct ms_thread *t, struct ms_tstate *ts, uint32_t r, uintptr_t key,
	   uintptr_t caller, unsigned how)
{
	int read = (how & NOTE_READ) != 0, b_new = (how & NOTE_B_NEW) != 0;
	uint32_t n = ts->nheld, a;
	/* The caller saw locks held, but a signal handler on this thread may
	 * have let them go since (a trylock and an unlock in the handler of a
	 * lock the thread was taking): no lock, no edge.  (n - 1 below was
	 * then read as the held set's 4-billionth entry: a crash.) */
	if (unlikely(!n || n > MS_HELD_MAX))
		return;
	uint32_t misuse = __atomic_load_n(&ms_unlocks_elsewhere, __ATOMIC_ACQUIRE);
	if (unlikely(misuse != ts->pruned_at)) {
		/* some thread unlocked a mutex it did not hold: entries of
		 * this thread's set may be gone */
		ms_held_prune(ts);
		ts->pruned_at = misuse;
		n = ts->nheld;
		if (!n || ms_order_known(ts, ms_edge_key(r, read)))
			return;
	}
	for (uint32_t i = 0; i < n; i++)
		if (ts->held[i].rec == r)
			return; /* a recursive relock: no edge */
	/* Only from the mutex taken last (as lockdep does): those taken
	 * before it already have edges to it, so every order among them is
	 * in the graph as a path, and a thread holding twenty mutexes pays
	 * for one edge, not twenty. */
	uint32_t i = n - 1;
	/* a signal handler's lock while the thread it interrupted writes
	 * its new top (ms_held_push): that entry is an older hold's still
	 * (an edge the handler's lock may miss, never one that is false) */
	if (unlikely(!held_by(t, &ts->held[i])))
		return;
	a = ms_edge_key(ts->held[i].rec, ts->held[i].mode & MS_HELD_READ);
	/* the first acquisition: no thread had it before (one that had it
	 * and let it go counted its own before the try that got it) --
	 * without a wait, which another holder would have made the second */
	b_new = b_new && LOAD(&ms_rec(r)->acquisitions) == 1 &&
		ms_lock_class(LOAD(&ms_rec(r)->flags)) == MS_CLASS_MUTEX &&
		made_in_this_hold(t, ts->held[i].rec, r);
	/* Both records are flagged before gen is read: a life of either that
	 * ends from now on bumps gen (table.c), so the cached edge below is
	 * never trusted for a later life. */
	flag_in_edge(ts->held[i].rec);
	flag_in_edge(r);
	uint32_t gen = __atomic_load_n(&ms_table.gen, __ATOMIC_SEQ_CST);
	ms_guard_enter(t);
	int known = add_edge(t, ts, i, r, LOAD(&ms_rec(r)->birth), key, caller, read, b_new);
	if (known == EDGE_KNOWN && !ts->edge_cache2 && ++ts->edge_misses == MS_EDGE_MISSES)
		big_cache(ts);
	/* remembered inside the guard: a signal handler's lock on this thread
	 * meanwhile is not recorded, so it writes no entry of the caches
	 * between this one's stores -- which could leave one entry with this
	 * edge's `a` and the handler's `b`, an edge taken as known that no
	 * graph holds (a lost inversion) */
	/* An edge to a new mutex is not remembered: its next take, which
	 * is not of a new mutex, goes to the graph and says so there. */
	if (known && !b_new) {
		uint32_t b = ms_edge_key(r, read), gates = ms_gate_sig(ts);
		int put_out = remember(ts, a, b, gen, gates);
		if (ts->edge_cache2)
			remember2(ts, a, b, gen, gates);
		/* A thread whose edges put others out of its small cache gets
		 * the bigger one too: counting the known edges it missed
		 * alone, a thread adding ten thousand new ones made it only
		 * as it took them again, and looked each up in the graph
		 * twice.  (Not for each edge added: a thread taking a few
		 * hundred once, a server's thread of its connections' locks,
		 * would pay 256 KiB for nothing.) */
		else if (put_out && ++ts->edge_misses == MS_EDGE_MISSES)
			big_cache(ts);
	}
	ms_guard_leave(t);
}

/* (ms_order_known() asked both caches first.) */
void ms_order_missed(struct ms_thread *t, struct ms_tstate *ts, uint32_t r,
		     uintptr_t key, uintptr_t caller)
{
	not_cached(t, ts, r, key, caller, NOTE_B_NEW);
}

void ms_order_note_mode(struct ms_thread *t, struct ms_tstate *ts, uint32_t r,
			uintptr_t key, uintptr_t caller, int read)
{
	if (ts->nheld && !ms_order_known(ts, ms_edge_key(r, read)))
		not_cached(t, ts, r, key, caller, read ? NOTE_READ : 0);
}

/* Whether a thread that wants lock r in mode want_read waits for one that
 * holds it in mode held_read. */
static int conflicts(uint32_t r, uint32_t want_read, uint32_t held_read)
{
	uint32_t flags = LOAD(&ms_rec(r)->flags);
	if (ms_lock_class(flags) != MS_CLASS_RWLOCK || !want_read || !held_read)
		return 1;
	/* two reads: only a writer-preferring lock makes the second wait,
	 * behind a writer that waits */
	return ms_rwlock_writer_first(flags);
}

/* An edge's modes (none known: exclusive, as a mutex's). */
static uint32_t modes_of(const struct ms_lg_edge *e)
{
	uint32_t m = LOAD(&e->modes);
	return m ? m : 1;
}

int ms_order_cycle_can_block(const struct ms_lg_edge *const *path, size_t n)
{
	return ms_order_cycle_can_block_as(path, n, 0);
}

int ms_order_cycle_can_block_as(const struct ms_lg_edge *const *path, size_t n,
				uint32_t first_modes)
{
	/* Edge i: a thread holds path[i]->a in mode h_i and wants
	 * path[i]->b in mode w_i, one of the combinations in its modes; it
	 * waits if w_i conflicts with h_(i+1).  Try each combination of the
	 * first edge and carry the choices that can follow round the cycle. */
	uint32_t first = first_modes ? first_modes : modes_of(path[0]);
	for (uint32_t c0 = 0; c0 < 4; c0++) {
		if (!(first & (1u << c0)))
			continue;
		uint32_t can = 1u << c0; /* combinations edge i may take */
		for (size_t i = 1; i <= n && can; i++) {
			const struct ms_lg_edge *e = path[i % n];
			uint32_t next = 0;
			uint32_t allowed = i == n ? 1u << c0 : modes_of(e);
			for (uint32_t c = 0; c < 4; c++) {
				if (!(allowed & (1u << c)))
					continue;
				for (uint32_t p = 0; p < 4; p++)
					if ((can & (1u << p)) &&
					    conflicts(e->a, p & 1, c >> 1)) {
						next |= 1u << c;
						break;
					}
			}
			can = next;
		}
		if (can)
			return 1;
	}
	return 0;
}

void ms_order_note(struct ms_thread *t, struct ms_tstate *ts, uint32_t r,
		   uintptr_t key, uintptr_t caller)
{
	if (ts->nheld && !ms_order_known(ts, r))
		not_cached(t, ts, r, key, caller, 0);
}

void ms_order_after_fork_child(void)
{
	/* the parent's edges are of mutex lives the child does not have (its
	 * births are new); what it could not keep is counted anew */
	graph.dropped = 0;
	graph.searches = 0;
	graph.cut_short = 0;
	graph.readers = 0; /* the parent's report goes on there, not here */
}

void ms_order_stats(struct ms_order_stats *out)
{
	ms_depot_lock();
	out->edges = graph.nedges;
	out->dropped = graph.dropped;
	out->searches = graph.searches;
	out->cut_short = graph.cut_short;
	ms_depot_unlock();
	out->not_followed = ms_threads_not_followed();
}

/* ---- report time ------------------------------------------------------ */

int ms_order_maybe_reused(uint32_t flags, uintptr_t key, uintptr_t first_caller)
{
	struct ms_frame fr;
	struct ms_mapping m = { 0 };
	/* in no module: the heap or a stack (or memory unmapped since, a
	 * large block malloc gave back) -- unless the code that first locked
	 * it is unloaded since (dlclose): then it may have been that
	 * library's static data, which the report's own memory may have
	 * taken the place of.  Not a file's either (a process-shared mutex
	 * in a mapped file). */
	return (flags & MS_F_STATIC) && ms_symbolize_function(key, 0, &fr) != 0 &&
	       !(first_caller && !ms_symbols_code_loaded(first_caller)) &&
	       !(ms_maps_find(key, &m) && m.inode != 0);
}

const char *ms_order_mutex_name(uint32_t r)
{
	if (!(LOAD(&ms_rec(r)->flags) & MS_F_COLD))
		return NULL;
	return LOAD(&ms_table.cold[r].name);
}

int ms_order_each_edge(ms_order_edge_fn *fn, void *arg)
{
	ms_depot_lock();
	const struct ms_lg_edge *e = graph_made ? ms_lg_read_begin(&graph) : NULL;
	int reading = graph_made;
	ms_depot_unlock();
	int n = 0;
	for (; e; e = ms_lg_read_next(e)) {
		if (!ms_lg_live(&graph, e) || e->a == e->b)
			continue;
		struct ms_order_edge oe = {
			.a = e->a, .b = e->b, .a_birth = e->a_birth, .b_birth = e->b_birth,
			.a_key = e->a_key, .b_key = e->b_key,
			.tid = LOAD(&e->tid),
			.a_caller = LOAD(&e->a_caller),
			.a_stack = LOAD(&e->a_stack), .b_stack = LOAD(&e->b_stack),
		};
		fn(&oe, arg);
		n++;
	}
	if (reading) {
		ms_depot_lock();
		ms_lg_read_end(&graph);
		ms_depot_unlock();
	}
	return n;
}
