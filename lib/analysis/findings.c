/* findings.c - the findings kept for the report: lock-order cycles, self-
 * deadlocks, mutexes held at thread exit; see findings.h.
 *
 * All under one spin lock of ours, taken last (inside the depot's and the
 * table's): nothing here takes another lock or captures a stack.  Cycle
 * findings live in a mapped area of their own, touched only as findings
 * are made, so a program without any pays nothing. */
#define _GNU_SOURCE
#include "analysis/findings.h"
#include "stacks/depot.h"
#include "base/internal.h"
#include "stacks/site.h"
#include "analysis/robust.h"
#include "core/table.h"

#include <string.h>
#include <sys/mman.h>

#define MAX_FINDINGS 256
#define MAX_CYCLES 1024

struct self_deadlock {
	uint32_t tid, rec;
	uintptr_t key;
	uint64_t birth;
	const char *name;
	uint32_t flags;
	enum ms_self_kind kind;
	ms_stack_id first, relock;
	ms_stack_id wrapped; /* see ms_self_finding */
	uint64_t count, released;
	uint64_t other_lives; /* see ms_self_finding */
	int said;
};

struct held_exit {
	uint32_t tid;
	char name[16];
	uint32_t n;
	uint32_t kept; /* of them in held[]: the first 8 of its held set, whose
			  holds beyond the 64 followed are only counted */
	struct held_lock {
		uintptr_t key, caller;
		/* for a robust mutex, whose next owner may repair it: its
		 * life and ms_robust_mark() (0: not robust) */
		uint32_t rec, robust;
		uint64_t birth;
		uint32_t flags, read;
		uint32_t wrapped_stack; /* see ms_exit_finding */
	} held[8];
};

struct cycle {
	uint64_t sig;
	struct ms_cycle_finding f;
};

static int lock;
static struct self_deadlock selfs[MAX_FINDINGS];
static uint32_t nselfs;
/* Relocks glibc refused (a MISUSE) take at most half of selfs: a program
 * that relocks on purpose from many threads must leave room for a real
 * SELF-DEADLOCK.  Those past it are counted. */
static uint32_t nrefused, refused_dropped;
static struct held_exit exits[MAX_FINDINGS];
static uint32_t nexits, exits_dropped;
static struct ms_stall stall; /* the newest */
static uint32_t nstalls;
static struct cycle *cycles; /* [MAX_CYCLES], mapped at the first */
static uint32_t ncycles;
static uint64_t cycles_lost;

static void take(void)
{
	while (__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE))
		__builtin_ia32_pause();
}

static void give(void)
{
	__atomic_store_n(&lock, 0, __ATOMIC_RELEASE);
}

/* A fork child: the findings so far are the parent's (its report has
 * them); the child's start empty.  Its map stays, emptied. */
static void forget_all(void)
{
	nselfs = 0;
	nrefused = 0;
	refused_dropped = 0;
	nexits = 0;
	exits_dropped = 0;
	ncycles = 0;
	cycles_lost = 0;
	nstalls = 0;
}

void ms_findings_after_fork_child(void)
{
	lock = 0;
	forget_all();
}

void ms_findings_reset(void)
{
	take();
	forget_all();
	give();
}

/* ---- lock-order cycles ------------------------------------------------ */

/* What makes two cycles the same finding: each edge's code -- where its
 * first mutex was taken and the stack that took the second (its call site
 * if no stack) -- in the cycle's order, from any edge on (a sum over
 * neighbouring pairs). */
static uint64_t edge_code(const struct ms_lg_edge *e)
{
	uint64_t b = e->b_stack ? e->b_stack : e->b_caller;
	uint64_t h = (e->a_caller ^ (b << 1)) * 0x9e3779b97f4a7c15ull;
	return h ^ h >> 31;
}

static uint64_t cycle_sig(const struct ms_lg_edge *const *path, size_t n)
{
	uint64_t sig = n * 0xff51afd7ed558ccdull, first = edge_code(path[0]), prev = first;
	for (size_t i = 1; i <= n; i++) {
		uint64_t cur = i < n ? edge_code(path[i]) : first;
		uint64_t h = (prev * 31 + cur) * 0xc4ceb9fe1a85ec53ull;
		sig += h ^ h >> 29;
		prev = cur;
	}
	return sig;
}

/* Mutex life (rec, birth) at key, as it is now; ended if it is not. */
static void describe(struct ms_finding_mutex *m, uint32_t rec, uint64_t birth, uintptr_t key)
{
	memset(m, 0, sizeof *m);
	m->key = key;
	m->rec = rec;
	m->birth = birth;
	const struct ms_record *r = ms_rec(rec);
	uint32_t flags = LOAD(&r->flags);
	m->flags = flags;
	m->first_caller = LOAD(&r->first_caller);
	m->first_stack = LOAD(&r->first_stack);
	m->init_stack = LOAD(&ms_table.init_stacks[rec]);
	if (flags & MS_F_COLD)
		m->name = LOAD(&ms_table.cold[rec].name);
	/* flagged before the life is looked at again: a life that ends from
	 * now on tells ms_findings_life_ended; one that ended before is
	 * marked here (where, unknown) */
	if (!(flags & MS_F_FINDING))
		__atomic_fetch_or(&ms_rec(rec)->flags, MS_F_FINDING, __ATOMIC_SEQ_CST);
	if (LOAD(&r->key) != key || LOAD(&r->birth) != birth) {
		m->ended = MS_ENDED_UNSEEN;
		m->name = NULL;
	}
}

static void describe_edge(struct ms_finding_edge *fe, const struct ms_lg_edge *e)
{
	memset(fe, 0, sizeof *fe);
	fe->tid = e->tid;
	fe->a_caller = e->a_caller;
	fe->b_caller = e->b_caller;
	fe->a_stack = e->a_stack;
	fe->b_stack = e->b_stack;
	fe->modes = LOAD(&e->modes);
	fe->b_new = LOAD(&e->b_new);
	if (e->tid == ms_self.tid)
		ms_own_thread_name(fe->thread_name);
	else
		ms_thread_name(e->tid, fe->thread_name);
}

/* Whether an edge of the cycle takes a new mutex (lockgraph.h's b_new). */
static int path_b_new(const struct ms_lg_edge *const *path, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (LOAD(&path[i]->b_new))
			return 1;
	return 0;
}

static void fill_cycle(struct ms_cycle_finding *f, const struct ms_lg_edge *const *path,
		       size_t n, const struct ms_lg_life *gate)
{
	f->n = (uint32_t)n;
	f->kept = n < MS_CYCLE_KEPT ? (uint32_t)n : MS_CYCLE_KEPT;
	f->guarded = gate->rec != 0;
	f->b_new = path_b_new(path, n);
	/* from its mutex of the smallest record on, as every report of the
	 * same cycle shows it */
	size_t lo = 0;
	for (size_t i = 1; i < n; i++)
		if (path[i]->a < path[lo]->a)
			lo = i;
	for (uint32_t i = 0; i < n; i++) {
		int s = ms_cycle_slot(f, i);
		if (s < 0)
			continue;
		const struct ms_lg_edge *e = path[(lo + i) % n];
		describe(&f->m[s], e->a, e->a_birth, e->a_key);
		describe_edge(&f->e[s], e);
	}
	memset(&f->gate, 0, sizeof f->gate);
	if (gate->rec)
		describe(&f->gate, gate->rec, gate->birth, LOAD(&ms_rec(gate->rec)->key));
}

static struct cycle *find_cycle(uint64_t sig)
{
	for (uint32_t i = 0; cycles && i < ncycles; i++)
		if (cycles[i].sig == sig)
			return &cycles[i];
	return NULL;
}

static int has_life(const struct ms_cycle_finding *f, const struct ms_finding_mutex *m)
{
	for (uint32_t i = 0; i < f->kept; i++)
		if (f->m[i].rec == m->rec && f->m[i].birth == m->birth)
			return 1;
	return 0;
}

/* How surely a cycle can deadlock: unguarded above guarded, then with no
 * edge to a new mutex above one with, then taken by several threads above
 * all by one (which needs as many threads as mutexes doing the same, each
 * at another step). */
static int strength(const struct ms_cycle_finding *f)
{
	int several = 0;
	for (uint32_t i = 1; i < f->kept; i++)
		several |= f->e[i].tid != f->e[0].tid;
	return (f->guarded ? 0 : 4) + (f->b_new ? 0 : 2) + several;
}

/* A closing of the cycle of finding f by the same code, guarded or not and
 * through a new mutex or not, shows it surer: without a gate, where f had
 * one or had a new mutex this one has not. */
static int surer_than(int guarded, int b_new, const struct ms_cycle_finding *f)
{
	return !guarded && (f->guarded || (f->b_new && !b_new));
}


/* A surer closing (made) of finding f's lives by other code is a finding
 * of its own where f's code closed the cycle for other mutexes too
 * ("closed N times": they would go with f's code) -- unless f was guarded
 * and made is not, which makes f a potential deadlock after all. */
static int stays_apart(const struct ms_cycle_finding *made, const struct ms_cycle_finding *f)
{
	return strength(made) > strength(f) && f->count > 1 && !(f->guarded && !made->guarded);
}

/* Whether findings f and g are of the same mutex lives. */
static int lives_equal(const struct ms_cycle_finding *f, const struct ms_cycle_finding *g)
{
	if (g->n != f->n || g->kept != f->kept)
		return 0;
	for (uint32_t k = 0; k < f->kept; k++)
		if (!has_life(g, &f->m[k]))
			return 0;
	return 1;
}

/* A finding of the same mutex lives as f, made by other code: one
 * inversion, whichever paths took it.  A guarded one that f, taken
 * without the gate, makes a potential deadlock after all; else one more
 * time the same. */
static struct cycle *same_lives(const struct ms_cycle_finding *f)
{
	for (uint32_t i = 0; cycles && i < ncycles; i++)
		if (lives_equal(f, &cycles[i].f))
			return &cycles[i];
	return NULL;
}

void ms_findings_cycle(const struct ms_lg_edge *const *path, size_t n,
		       const struct ms_lg_life *gate)
{
	uint64_t sig = cycle_sig(path, n);
	int b_new = path_b_new(path, n);
	take();
	struct cycle *c = find_cycle(sig);
	int upgrade = c && surer_than(gate->rec != 0, b_new, &c->f);
	if (c && !upgrade) /* (an upgrade counts below: of the same lives, no other) */
		__atomic_store_n(&c->f.count, c->f.count + 1, __ATOMIC_RELAXED);
	give();
	if (c && !upgrade)
		return;
	/* made outside our lock: it reads /proc for thread names */
	static struct ms_cycle_finding made; /* under the depot's lock */
	memset(&made, 0, sizeof made);
	fill_cycle(&made, path, n, gate);
	if (!cycles) { /* the first: the cycles' memory (the depot's lock is
			  held, so no other thread maps it meanwhile) */
		void *p = mmap(NULL, MAX_CYCLES * sizeof *cycles, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p != MAP_FAILED)
			__atomic_store_n(&cycles, p, __ATOMIC_RELEASE);
	}
	take();
	if ((c = find_cycle(sig)) != NULL) {
		/* a guarded one, found without its gate this time (or made
		 * meanwhile by another thread: same code, same finding) */
		if (surer_than(made.guarded, made.b_new, &c->f)) {
			/* the same closing, found unguarded now, is no other;
			 * other mutexes closed at that code are one more */
			made.count = c->f.count + !lives_equal(&c->f, &made);
			c->f = made;
		}
	} else if ((c = same_lives(&made)) != NULL && !stays_apart(&made, &c->f)) {
		/* one inversion, shown the surest way it can deadlock: the
		 * closing of other code, which counts from its own (these
		 * lives, closed once there; a guarded one's count was of the
		 * gated code's closings: "closed 2 times, by other mutexes each
		 * time at the same code" said so of one pair closed by two
		 * codes) */
		if (strength(&made) > strength(&c->f)) {
			made.count = 1;
			c->sig = sig;
			c->f = made;
		}
	} else if (cycles && ncycles < MAX_CYCLES) {
		c = &cycles[ncycles];
		c->sig = sig;
		made.count = 1;
		c->f = made;
		__atomic_store_n(&ncycles, ncycles + 1, __ATOMIC_RELEASE);
	} else
		cycles_lost++;
	give();
}

static void mark_ended(struct ms_finding_mutex *m, uint32_t rec, uint64_t birth, int how,
		       uintptr_t caller, uint32_t stack)
{
	if (m->rec != rec || m->birth != birth)
		return;
	m->ended = (uint32_t)how;
	m->ended_at = caller;
	m->ended_stack = stack;
}

void ms_findings_life_ended(uint32_t rec, uint64_t birth, int how, uintptr_t caller)
{
	/* the stack first, without our lock (it takes the depot's) */
	uint32_t stack = ms_stack_here();
	take();
	for (uint32_t i = 0; i < ncycles; i++) {
		struct ms_cycle_finding *f = &cycles[i].f;
		for (uint32_t k = 0; k < f->kept; k++)
			mark_ended(&f->m[k], rec, birth, how, caller, stack);
		mark_ended(&f->gate, rec, birth, how, caller, stack);
	}
	give();
}

int ms_findings_each_cycle(void (*fn)(const struct ms_cycle_finding *c, void *arg),
			   void *arg)
{
	/* one copy at a time, in our own memory (a report may run beside
	 * another: the JSON's beside the text's) */
	struct ms_cycle_finding *copy = mmap(NULL, sizeof *copy, PROT_READ | PROT_WRITE,
					     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (copy == MAP_FAILED)
		return 0;
	uint32_t n = __atomic_load_n(&ncycles, __ATOMIC_ACQUIRE), done = 0;
	for (int pass = 0; pass < 2; pass++) /* potential deadlocks first */
		for (uint32_t i = 0; i < n; i++) {
			take();
			*copy = cycles[i].f;
			give();
			if (copy->guarded != pass)
				continue;
			fn(copy, arg);
			done++;
		}
	munmap(copy, sizeof *copy);
	return (int)done;
}

void ms_findings_stats(struct ms_findings_stats *out)
{
	take();
	out->cycles = ncycles;
	out->cycles_lost = cycles_lost;
	give();
}

/* ---- stalls ----------------------------------------------------------- */

void ms_findings_stall(const struct ms_stall *s)
{
	take();
	stall = *s;
	nstalls++;
	give();
}

int ms_findings_stall_has_cond_wait(uint32_t tid)
{
	int found = 0;
	take();
	if (nstalls && !stall.handled_signal)
		for (uint32_t i = 0; i < stall.shown && !found; i++)
			found = stall.t[i].tid == tid && stall.t[i].kind == MS_STALL_COND;
	give();
	return found;
}

uint32_t ms_findings_each_stall(void (*fn)(const struct ms_stall *s, void *arg), void *arg)
{
	struct ms_stall copy;
	take();
	uint32_t n = nstalls;
	copy = stall;
	give();
	if (n && fn)
		fn(&copy, arg);
	return n;
}

/* ---- self-deadlocks and threads that exit holding mutexes ------------- */

void ms_finding_held_at_exit(const struct ms_tstate *ts)
{
	take();
	if (nexits < MAX_FINDINGS) {
		struct held_exit *h = &exits[nexits++];
		h->tid = ts->tid;
		ms_own_thread_name(h->name); /* the exiting thread's */
		uint32_t n = ts->nheld, kept = 0;
		h->n = ts->overflow;
		for (uint32_t i = 0; i < n; i++) {
			uint32_t r = ts->held[i].rec;
			uint32_t read = ts->held[i].mode & MS_HELD_READ;
			/* a lock destroyed while this thread held it (a
			 * MISUSE, said as one) is no lock any more: its record
			 * is empty, or another lock's, not held by this one */
			if (!ms_rec_key(r) ||
			    (!read && LOAD(&ms_rec(r)->owner) != (ts->tid | MS_HELD)) ||
			    (read && ms_read_hold_ended(r, ts->held[i].mode)))
				continue;
			h->n++;
			if (kept == 8)
				continue;
			struct held_lock *k = &h->held[kept++];
			k->key = ms_rec_key(r);
			k->caller = ts->held[i].caller;
			k->rec = r;
			k->birth = LOAD(&ms_rec(r)->birth);
			k->robust = ms_robust_mark(r);
			k->flags = LOAD(&ms_rec(r)->flags);
			k->read = read;
			k->wrapped_stack = ms_site_wrapped_first_stack(r, ts->held[i].caller);
		}
		h->kept = kept;
		if (!h->n)
			nexits--; /* nothing it held is there any more */
	} else
		exits_dropped++;
	give();
}

/* Whether a relock of the lock at key is one of a later life than the
 * one self-deadlock s was found on: the same address (two lives of one
 * address never overlap), and s's life over (destroyed, or its record
 * another lock's).  Locks alive together are each their own finding:
 * one at another address may have been made before s's ended. */
static int later_life(const struct self_deadlock *s, uintptr_t key)
{
	return s->key == key &&
	       (ms_rec_key(s->rec) != s->key || LOAD(&ms_rec(s->rec)->birth) != s->birth);
}

static uint32_t note_self(struct ms_tstate *ts, uint32_t rec, uintptr_t key,
			  enum ms_self_kind kind)
{
	uintptr_t first_caller = 0;
	uint32_t n = ts->nheld;
	for (uint32_t i = 0; i < n; i++)
		if (ts->held[i].rec == rec)
			first_caller = ts->held[i].caller;
	uint64_t birth = LOAD(&ms_rec(rec)->birth);
	take();
	for (uint32_t i = 0; i < nselfs; i++)
		if (selfs[i].rec == rec && selfs[i].birth == birth &&
		    selfs[i].tid == ts->tid && selfs[i].kind == kind) {
			selfs[i].count++;
			give();
			return 0;
		}
	give();
	const char *name = NULL;
	if (LOAD(&ms_rec(rec)->flags) & MS_F_COLD)
		name = LOAD(&ms_table.cold[rec].name);
	struct self_deadlock s = {
		.tid = ts->tid, .rec = rec, .key = key, .birth = birth, .name = name,
		.flags = LOAD(&ms_rec(rec)->flags), .kind = kind, .count = 1,
		.first = first_caller ? ms_site_stack_known(first_caller) : 0,
		.wrapped = ms_site_wrapped_first_stack(rec, first_caller),
		.relock = ms_stack_here(),
	};
	take();
	/* A refused relock hangs nothing, and a lock made anew in a loop
	 * (a new life at the same address each time: a local, or malloc's
	 * block again) is refused as often: the same thread and code on a
	 * later life counts on the first's line, where 128 identical ones
	 * and "of other locks: not kept" filled the report. */
	for (uint32_t i = 0; kind == MS_SELF_REFUSED && s.first && i < nselfs; i++)
		if (selfs[i].kind == kind && selfs[i].tid == s.tid && selfs[i].first == s.first &&
		    selfs[i].relock == s.relock &&
		    ms_lock_class(selfs[i].flags) == ms_lock_class(s.flags) &&
		    later_life(&selfs[i], s.key)) {
			selfs[i].count++;
			selfs[i].other_lives++;
			give();
			return s.relock;
		}
	if (kind == MS_SELF_REFUSED && nrefused >= MAX_FINDINGS / 2)
		refused_dropped++;
	else if (nselfs < MAX_FINDINGS) {
		selfs[nselfs++] = s;
		nrefused += kind == MS_SELF_REFUSED;
	}
	give();
	return s.relock;
}

static void (*announce)(void);

void ms_findings_on_self_deadlock(void (*fn)(void))
{
	__atomic_store_n(&announce, fn, __ATOMIC_RELEASE);
}

uint32_t ms_finding_self_deadlock(struct ms_tstate *ts, uint32_t rec, uintptr_t key,
				  enum ms_self_kind kind)
{
	uint32_t stack = note_self(ts, rec, key, kind);
	void (*fn)(void) = __atomic_load_n(&announce, __ATOMIC_ACQUIRE);
	if (kind == MS_SELF_FOREVER && fn)
		fn();
	return stack;
}

/* The mutexes h ended holding that are still a finding at report time:
 * not a robust one whose next owner made it consistent (robust.h).  Their
 * indexes in h->held go to shown[]; returns how many of the h->n. */
static uint32_t still_held(const struct held_exit *h, uint32_t shown[8], uint32_t *nshown)
{
	uint32_t n = h->n;
	*nshown = 0;
	for (uint32_t j = 0; j < h->kept; j++) {
		if (ms_robust_recovered(h->held[j].rec, h->held[j].birth, h->held[j].robust))
			n--;
		else
			shown[(*nshown)++] = j;
	}
	return n;
}

static struct ms_self_finding self_view(const struct self_deadlock *s)
{
	return (struct ms_self_finding){
		.tid = s->tid, .key = s->key, .name = s->name, .flags = s->flags, .kind = s->kind,
		.taken_stack = s->first, .relock_stack = s->relock, .count = s->count,
		.wrapped_stack = s->wrapped, .released = s->released,
		.other_lives = s->other_lives,
	};
}

/* fn for each self-deadlock, or (unsaid) for each that never returns and
 * was not said yet, which is then said. */
static void each_self(void (*fn)(const struct ms_self_finding *s, void *arg), void *arg,
		      int unsaid)
{
	take();
	uint32_t ns = nselfs;
	give();
	for (uint32_t i = 0; i < ns; i++) {
		take();
		int pick = !unsaid || (selfs[i].kind == MS_SELF_FOREVER && !selfs[i].said);
		if (unsaid)
			selfs[i].said = 1;
		struct ms_self_finding out = self_view(&selfs[i]);
		give();
		if (pick)
			fn(&out, arg);
	}
}

void ms_findings_each_self(void (*fn)(const struct ms_self_finding *s, void *arg),
			   void *arg)
{
	each_self(fn, arg, 0);
}

uint32_t ms_findings_refused_dropped(void)
{
	take();
	uint32_t n = refused_dropped;
	give();
	return n;
}

void ms_finding_self_released(const struct ms_tstate *ts, uint32_t rec)
{
	uint64_t birth = LOAD(&ms_rec(rec)->birth);
	take();
	for (uint32_t i = 0; i < nselfs; i++)
		if (selfs[i].tid == ts->tid && selfs[i].rec == rec && selfs[i].birth == birth &&
		    selfs[i].kind != MS_SELF_REFUSED && selfs[i].released < selfs[i].count) {
			selfs[i].released++;
			break;
		}
	give();
}

int ms_findings_self_waits(uint32_t tid, uint32_t rec)
{
	uint64_t birth = LOAD(&ms_rec(rec)->birth);
	int found = 0;
	take();
	for (uint32_t i = 0; i < nselfs && !found; i++)
		found = selfs[i].tid == tid && selfs[i].rec == rec && selfs[i].birth == birth &&
			selfs[i].kind != MS_SELF_REFUSED;
	give();
	return found;
}

void ms_findings_each_unsaid(void (*fn)(const struct ms_self_finding *s, void *arg),
			     void *arg)
{
	each_self(fn, arg, 1);
}

uint32_t ms_findings_each_exit(void (*fn)(const struct ms_exit_finding *e, void *arg),
			       void *arg)
{
	take();
	uint32_t ne = nexits, dropped = exits_dropped;
	give();
	for (uint32_t i = 0; i < ne; i++) {
		const struct held_exit *h = &exits[i];
		uint32_t shown[8];
		struct ms_exit_finding out = { .tid = h->tid, .name = h->name };
		out.n = still_held(h, shown, &out.shown);
		if (!out.n)
			continue;
		for (uint32_t k = 0; k < out.shown; k++) {
			out.key[k] = h->held[shown[k]].key;
			out.caller[k] = h->held[shown[k]].caller;
			out.flags[k] = h->held[shown[k]].flags;
			out.read[k] = (uint8_t)h->held[shown[k]].read;
			out.wrapped_stack[k] = h->held[shown[k]].wrapped_stack;
		}
		fn(&out, arg);
	}
	return dropped;
}

/* ---- an edge's thread now ------------------------------------------- */

struct waits_query {
	uint32_t tid, held, rec;
	uintptr_t key;
	int waits;
};

static void waits_in(struct ms_tstate *ts, void *arg)
{
	struct waits_query *q = arg;
	if (LOAD(&ts->tid) != q->tid || LOAD(&ts->wait_rec) != q->rec ||
	    LOAD(&ts->wait_key) != q->key)
		return;
	uint32_t n = LOAD(&ts->nheld);
	for (uint32_t i = 0; i < n && i < MS_HELD_MAX; i++)
		if (LOAD(&ts->held[i].rec) == q->held)
			q->waits = 1;
}

int ms_finding_edge_waits(uint32_t tid, const struct ms_finding_mutex *a,
			  const struct ms_finding_mutex *b)
{
	if (a->ended || b->ended || LOAD(&ms_rec(b->rec)->birth) != b->birth)
		return 0;
	struct waits_query q = { tid, a->rec, b->rec, b->key, 0 };
	ms_threads_each(waits_in, &q);
	return q.waits;
}
