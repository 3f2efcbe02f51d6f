/* out_dot.c - the lock-order and wait-for graphs as DOT; see out_dot.h.
 *
 * The data are the text report's: the lock-order edges come from order.c,
 * the cycles among them from the findings (a finding whose mutexes ended
 * is drawn from what it keeps), the waits from waitfor.c
 * (ms_waitfor_each follows the same graph as the DEADLOCK findings).
 * One digraph, two clusters: `dot -Tsvg` renders only the first graph of
 * a file with several into a valid SVG, so both live in one.
 *
 * Labels are built with the library's formatter, then escaped for a DOT
 * string: quote and backslash escaped, a line break written as \n, other
 * control characters and bytes that are not UTF-8 (a mutex's name is the
 * program's) replaced, so dot never rejects the file. */
#define _GNU_SOURCE
#include "report/kinds.h"
#include "report/out_dot.h"
#include "report/out_modes.h"
#include "report/report.h"
#include "base/output.h"
#include "stacks/depot.h"
#include "analysis/findings.h"
#include "base/fmt.h"
#include "base/internal.h"
#include "analysis/waitfor.h"
#include "analysis/order.h"
#include "stacks/symbols.h"
#include "core/table.h"
#include "core/thread.h"
#include "core/thread_pool.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_WAITS 4096 /* as many as waitfor.c follows */

/* ---- DOT strings ------------------------------------------------------ */

/* The length of a valid UTF-8 sequence at s, 0 if s does not start one. */
static int utf8_len(const unsigned char *s)
{
	int n = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;
	if (s[0] >= 0xf5)
		n = 0;
	for (int i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

/* s inside a DOT string (the quotes are the caller's). */
static void put_esc(struct ms_fmt *f, const char *s)
{
	char out[256];
	size_t o = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		if (o > sizeof out - 8) {
			out[o] = 0;
			ms_fmt(f, "%s", out);
			o = 0;
		}
		if (*p == '"' || *p == '\\') {
			out[o++] = '\\';
			out[o++] = (char)*p++;
		} else if (*p == '\n') {
			out[o++] = '\\';
			out[o++] = 'n';
			p++;
		} else if (*p < 0x20 || *p == 0x7f) {
			out[o++] = ' ';
			p++;
		} else if (*p < 0x80) {
			out[o++] = (char)*p++;
		} else {
			int n = utf8_len(p);
			if (!n) {
				out[o++] = '?';
				p++;
			} else
				while (n--)
					out[o++] = (char)*p++;
		}
	}
	out[o] = 0;
	ms_fmt(f, "%s", out);
}

/* `id [label="..."` -- the caller adds attributes and "];". */
static void put_label(struct ms_fmt *f, const char *label)
{
	ms_fmt(f, "label=\"");
	put_esc(f, label);
	ms_fmt(f, "\"");
}

/* A lock: its name if the program gave one, else its address; after
 * "rwlock " or "spin lock " if it is one (a mutex reads as it always did). */
static const char *mutex_label(char *out, size_t cap, uint32_t r, uintptr_t key)
{
	struct ms_fmt f;
	ms_fmt_init(&f, out, cap, -1);
	uint32_t flags = LOAD(&ms_rec(r)->flags);
	if (ms_lock_class(flags) != MS_CLASS_MUTEX)
		ms_fmt(&f, "%s ", ms_lock_noun(flags));
	const char *name = ms_order_mutex_name(r);
	char cut[64];
	if (name) /* "...", never a shorter name without a sign */
		ms_fmt(&f, "\"%s\"", ms_name_cut(cut, sizeof cut, name, 60));
	else {
		ms_fmt(&f, "%p", (void *)key);
		ms_fmt_lock_variable(&f, key, 60);
	}
	return ms_fmt_str(&f);
}

static const char *thread_label(char *out, size_t cap, uint32_t tid)
{
	char tn[16];
	struct ms_fmt f;
	ms_fmt_init(&f, out, cap, -1);
	ms_fmt(&f, "thread %u", tid);
	if (ms_thread_name(tid, tn)[0])
		ms_fmt(&f, " %s", tn);
	return ms_fmt_str(&f);
}

#define RED ", color=red, fontcolor=red, penwidth=2"

/* ---- the lock-order graph -------------------------------------------- */

/* An edge of a finding's cycle: from one mutex life to the next. */
struct found_edge {
	uint32_t a, b;
	uint64_t a_birth, b_birth;
	int guarded;
	uint32_t modes; /* lockgraph.h's: the modes it was taken in */
};

struct order_ctx {
	struct ms_fmt *f;
	uint8_t *shown; /* a bit per record: node written (NULL: write again) */
	struct found_edge *found; /* the findings' edges, sorted */
	size_t nfound, cap;
	int findings;   /* cycle findings seen */
};

static int by_lives(const void *x, const void *y)
{
	const struct found_edge *a = x, *b = y;
	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	if (a->b != b->b)
		return a->b < b->b ? -1 : 1;
	if (a->a_birth != b->a_birth)
		return a->a_birth < b->a_birth ? -1 : 1;
	return a->b_birth < b->b_birth ? -1 : a->b_birth > b->b_birth;
}

static void order_node(struct order_ctx *c, uint32_t r, uintptr_t key)
{
	if (c->shown) {
		if (c->shown[r / 8] & (1u << (r % 8)))
			return;
		c->shown[r / 8] |= (uint8_t)(1u << (r % 8));
	}
	char name[96], site[256], label[400];
	struct ms_fmt lf;
	ms_fmt_init(&lf, label, sizeof label, -1);
	ms_fmt(&lf, "%s\nfirst locked at %s", mutex_label(name, sizeof name, r, key),
	       ms_symbolize_short(LOAD(&ms_rec(r)->first_caller), site, sizeof site));
	ms_fmt(c->f, "\t\to%u [", r);
	put_label(c->f, ms_fmt_str(&lf));
	ms_fmt(c->f, "];\n");
}

/* The modes of an edge's read-write locks, a line of its label: "held for
 * write, taken for read" (each end that is an rwlock and whose mode is
 * known: a_mode, b_mode NULL not); "" if none. */
static const char *modes_line(char *out, size_t cap, const char *a_mode, const char *b_mode)
{
	struct ms_fmt f;
	ms_fmt_init(&f, out, cap, -1);
	if (a_mode)
		ms_fmt(&f, "\nheld for %s", a_mode);
	if (b_mode)
		ms_fmt(&f, "%staken for %s", a_mode ? ", " : "\n", b_mode);
	return ms_fmt_str(&f);
}

/* "B's first frame\nthread N name", an edge's label, then its modes line. */
static const char *edge_label(char *out, size_t cap, uint32_t b_stack, uint32_t tid,
			      const char *thread_name, const char *modes)
{
	char site[256];
	struct ms_fmt lf;
	ms_fmt_init(&lf, out, cap, -1);
	const uintptr_t *frames;
	if (ms_depot_get(b_stack, &frames) > 0)
		ms_fmt(&lf, "%s\n", ms_symbolize_short(frames[0], site, sizeof site));
	ms_fmt(&lf, "thread %u", tid);
	if (thread_name && thread_name[0])
		ms_fmt(&lf, " %s", thread_name);
	ms_fmt(&lf, "%s", modes);
	return ms_fmt_str(&lf);
}

/* The mode a live edge's end was in: the edge's, where a finding kept it
 * (modes nonzero); else the mode of the call that took the lock -- at
 * `caller`, or at the innermost frame of `stack` -- where its recent
 * operations tell it (out_modes.h): the edges the graph hands out do not
 * carry their modes (order.h's ms_order_edge).  NULL for a mutex or spin
 * lock, or a mode not known. */
static const char *live_end_mode(uint32_t r, uint32_t modes, int taken, uintptr_t caller,
				 uint32_t stack)
{
	if (ms_lock_class(LOAD(&ms_rec(r)->flags)) != MS_CLASS_RWLOCK)
		return NULL;
	if (modes)
		return ms_out_edge_mode(modes, taken);
	struct ms_out_calls calls;
	ms_out_calls_of(&calls, r, NULL);
	return caller ? ms_out_call_mode(&calls, caller) : ms_out_stack_mode(&calls, stack);
}

/* The mode of a kept finding's end (its lock's flags). */
static const char *found_end_mode(uint32_t flags, uint32_t modes, int taken)
{
	return ms_lock_class(flags) == MS_CLASS_RWLOCK ? ms_out_edge_mode(modes, taken) : NULL;
}

static void order_edge(const struct ms_order_edge *e, void *arg)
{
	struct order_ctx *c = arg;
	order_node(c, e->a, e->a_key);
	order_node(c, e->b, e->b_key);
	struct found_edge want = { e->a, e->b, e->a_birth, e->b_birth, 0, 0 };
	const struct found_edge *on = c->nfound ? bsearch(&want, c->found, c->nfound,
							  sizeof want, by_lives) : NULL;
	char label[400], tn[16], modes[80];
	uint32_t m = on ? on->modes : 0;
	ms_fmt(c->f, "\t\to%u -> o%u [", e->a, e->b);
	put_label(c->f, edge_label(label, sizeof label, e->b_stack, e->tid,
				   ms_thread_name(e->tid, tn),
				   modes_line(modes, sizeof modes,
					      live_end_mode(e->a, m, 0, e->a_caller, 0),
					      live_end_mode(e->b, m, 1, 0, e->b_stack))));
	ms_fmt(c->f, "%s%s];\n", on && !on->guarded ? RED : "",
	       on && on->guarded ? ", style=dashed" : "");
}

/* Whether mutex life m goes on now. */
static int life_goes_on(const struct ms_finding_mutex *m)
{
	return !m->ended && LOAD(&ms_rec(m->rec)->key) == m->key &&
	       LOAD(&ms_rec(m->rec)->birth) == m->birth;
}

/* The findings' edges, to mark the live ones. */
static void collect_found(const struct ms_cycle_finding *f, void *arg)
{
	struct order_ctx *c = arg;
	for (uint32_t i = 0; i < f->kept; i++) {
		uint32_t k = (i + 1) % f->kept;
		if (c->nfound == c->cap || (f->n > f->kept && k == f->kept - MS_CYCLE_TAIL))
			continue;
		c->found[c->nfound++] = (struct found_edge){
			f->m[i].rec, f->m[k].rec, f->m[i].birth, f->m[k].birth, f->guarded,
			f->e[i].modes,
		};
	}
}

/* A finding some of whose mutexes have ended: its cycle drawn apart, from
 * what it keeps (nodes f<finding>m<i>). */
static void draw_ended(const struct ms_cycle_finding *f, void *arg)
{
	struct order_ctx *c = arg;
	int id = c->findings++, all_live = 1;
	for (uint32_t i = 0; i < f->kept; i++)
		all_live &= life_goes_on(&f->m[i]);
	if (all_live)
		return; /* drawn with the live edges */
	for (uint32_t i = 0; i < f->kept; i++) {
		const struct ms_finding_mutex *m = &f->m[i];
		char site[256], label[400], cut[64];
		struct ms_fmt lf;
		ms_fmt_init(&lf, label, sizeof label, -1);
		if (ms_lock_class(m->flags) != MS_CLASS_MUTEX)
			ms_fmt(&lf, "%s ", ms_lock_noun(m->flags));
		if (m->name)
			ms_fmt(&lf, "\"%s\"", ms_name_cut(cut, sizeof cut, m->name, 60));
		else {
			ms_fmt(&lf, "%p", (void *)m->key);
			ms_fmt_lock_variable(&lf, m->key, 60);
		}
		ms_fmt(&lf, "%s\nfirst locked at %s", life_goes_on(m) ? "" : " (ended)",
		       ms_symbolize_short(m->first_caller, site, sizeof site));
		ms_fmt(c->f, "\t\tf%dm%u [", id, i);
		put_label(c->f, ms_fmt_str(&lf));
		ms_fmt(c->f, "];\n");
	}
	for (uint32_t i = 0; i < f->kept; i++) {
		uint32_t k = (i + 1) % f->kept;
		if (f->n > f->kept && k == f->kept - MS_CYCLE_TAIL)
			continue;
		char label[400], modes[80];
		uint32_t m = f->e[i].modes;
		ms_fmt(c->f, "\t\tf%dm%u -> f%dm%u [", id, i, id, k);
		put_label(c->f, edge_label(label, sizeof label, f->e[i].b_stack, f->e[i].tid,
					   f->e[i].thread_name,
					   modes_line(modes, sizeof modes,
						      found_end_mode(f->m[i].flags, m, 0),
						      found_end_mode(f->m[k].flags, m, 1))));
		ms_fmt(c->f, "%s];\n", f->guarded ? ", style=dashed" : RED);
	}
}

static void lock_order(struct ms_fmt *f)
{
	ms_fmt(f, "\tsubgraph cluster_order {\n");
	ms_fmt(f, "\t\tlabel=\"lock order: A -> B, B taken while A was held\\n"
		  "red: POTENTIAL DEADLOCK; dashed: GUARDED INVERSION\";\n");
	size_t bytes = ((size_t)ms_table.capacity + 2 + 7) / 8;
	uint8_t *shown = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t found_cap = 65536, found_bytes = found_cap * sizeof(struct found_edge);
	struct found_edge *found = mmap(NULL, found_bytes, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct order_ctx c = { f, shown == MAP_FAILED ? NULL : shown,
			       found == MAP_FAILED ? NULL : found, 0,
			       found == MAP_FAILED ? 0 : found_cap, 0 };
	int n = 0;
	if (__atomic_load_n(&ms_table.ready, __ATOMIC_ACQUIRE)) {
		ms_findings_each_cycle(collect_found, &c);
		qsort(c.found, c.nfound, sizeof *c.found, by_lives);
		n = ms_order_each_edge(order_edge, &c);
		ms_findings_each_cycle(draw_ended, &c);
	}
	if (n <= 0 && !c.findings)
		ms_fmt(f, "\t\to_none [shape=plaintext, label=\"%s\"];\n",
		       "no mutex was taken while holding another");
	if (c.shown)
		munmap(shown, bytes);
	if (c.found)
		munmap(found, found_bytes);
	ms_fmt(f, "\t}\n");
}

/* ---- the wait-for graph ---------------------------------------------- */

struct waits {
	struct ms_waitfor_wait *w;
	int n, more;
};

static void keep_wait(const struct ms_waitfor_wait *w, void *arg)
{
	struct waits *ws = arg;
	if (ws->n < MAX_WAITS)
		ws->w[ws->n++] = *w;
	else
		ws->more++;
}

static int is_waiter(const struct waits *ws, uint32_t tid)
{
	for (int i = 0; i < ws->n; i++)
		if (ws->w[i].tid == tid)
			return 1;
	return 0;
}

/* A wait (or a hold) in a DEADLOCK finding of the text report: on a
 * wait-for cycle, on a mutex whose owner has exited, or in a chain that
 * ends at a thread in a condition wait. */
static int forever(const struct ms_waitfor_wait *w)
{
	return w->cycle || w->owner_exited || w->owner_in_parent || w->cond_end;
}

/* Whether thread tid waits to read record r's read-write lock, from its
 * own record: the graph's waits do not carry their mode (waitfor.h's
 * ms_waitfor_wait).  Read a moment after the graph, as the text report's
 * held section reads the readers. */
struct wait_mode {
	uint32_t tid, r;
	int found, read;
};

static void wait_mode_of(struct ms_tstate *ts, void *arg)
{
	struct wait_mode *q = arg;
	if (LOAD(&ts->tid) == q->tid &&
	    __atomic_load_n(&ts->wait_rec, __ATOMIC_ACQUIRE) == q->r) {
		q->found = 1;
		q->read = (int)LOAD(&ts->wait_read);
	}
}

/* "waits", or for a read-write lock "waits to read", "waits to write"
 * ("waits" if the thread has stopped waiting since). */
static const char *waits_how(const struct ms_waitfor_wait *w)
{
	if (ms_lock_class(LOAD(&ms_rec(w->rec)->flags)) != MS_CLASS_RWLOCK)
		return "waits";
	struct wait_mode q = { w->tid, w->rec, 0, 0 };
	ms_threads_each(wait_mode_of, &q);
	return !q.found ? "waits" : q.read ? "waits to read" : "waits to write";
}

/* The first line of a "held by" edge: a read-write lock says how it is
 * held, as the text report's wait-for lines do -- for write, for read
 * by the owner and maybe other readers, or by nobody, with the owner a
 * writer that waits ahead (a writer-preferring lock keeps readers out). */
static void held_how(struct ms_fmt *f, const struct ms_waitfor_wait *w)
{
	const struct ms_record *rec = ms_rec(w->rec);
	if (ms_lock_class(LOAD(&rec->flags)) != MS_CLASS_RWLOCK) {
		ms_fmt(f, "held by");
		return;
	}
	if (LOAD(&rec->owner) == (w->owner | MS_HELD)) {
		ms_fmt(f, "held for write by");
		return;
	}
	uint32_t readers = ms_waitfor_readers(w->rec, w->tid);
	if (!readers)
		ms_fmt(f, "ahead: waits to write it");
	else if (readers == 1)
		ms_fmt(f, "held for read by");
	else
		ms_fmt(f, "held for read by (and %u other %s)", readers - 1,
		       readers == 2 ? "reader" : "readers");
}

static void wait_for(struct ms_fmt *f)
{
	ms_fmt(f, "\tsubgraph cluster_wait {\n");
	ms_fmt(f, "\t\tlabel=\"waiting now: thread -> the mutex it waits for -> "
		  "the thread holding it\\nred: DEADLOCK\";\n");
	struct waits ws = { 0 };
	size_t bytes = MAX_WAITS * sizeof *ws.w;
	ws.w = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	int n = ws.w == MAP_FAILED ? -1 : ms_waitfor_each(keep_wait, &ws);
	if (n <= 0)
		ms_fmt(f, "\t\tw_none [shape=plaintext, label=\"%s\"];\n",
		       n < 0 ? "(no memory to follow the waits)"
			     : "no thread waits for a mutex");
	char label[400], a[96], b[256];
	struct ms_fmt lf;
	for (int i = 0; n > 0 && i < ws.n; i++) {
		const struct ms_waitfor_wait *w = &ws.w[i];
		/* the waiting thread: waits for one mutex, so appears once */
		ms_fmt(f, "\t\twt%u [shape=box, ", w->tid);
		put_label(f, thread_label(a, sizeof a, w->tid));
		ms_fmt(f, "];\n");
		/* the mutex, its holder and the "held by" edge: once a mutex */
		int first = 1, red = 0;
		for (int j = 0; j < ws.n; j++)
			if (ws.w[j].rec == w->rec) {
				first &= j >= i;
				red |= forever(&ws.w[j]);
			}
		if (first) {
			ms_fmt(f, "\t\twm%u [", w->rec);
			put_label(f, mutex_label(a, sizeof a, w->rec, w->key));
			ms_fmt(f, "];\n");
		}
		if (first && w->owner) {
			int shown = is_waiter(&ws, w->owner);
			for (int j = 0; j < i && !shown; j++)
				shown = ws.w[j].owner == w->owner;
			if (!shown) { /* a holder not waiting for a mutex */
				ms_fmt_init(&lf, label, sizeof label, -1);
				ms_fmt(&lf, "%s", thread_label(a, sizeof a, w->owner));
				if (w->owner_exited)
					ms_fmt(&lf, "\nhas exited");
				else if (w->owner_in_parent)
					ms_fmt(&lf, "\nof the parent: held it at the fork");
				else if (w->owner_cond_key)
					ms_fmt(&lf, "\nwaits for a condition (mutex %p)",
					       (void *)w->owner_cond_key);
				else
					ms_fmt(&lf, "\nnot waiting for a mutex");
				ms_fmt(f, "\t\twt%u [shape=box, ", w->owner);
				put_label(f, ms_fmt_str(&lf));
				ms_fmt(f, "%s];\n", w->owner_exited || w->owner_in_parent
							    ? ", style=dashed" : "");
			}
			ms_fmt_init(&lf, label, sizeof label, -1);
			held_how(&lf, w);
			if (w->owner_caller)
				ms_fmt(&lf, "\ntaken at %s",
				       ms_symbolize_short(w->owner_caller, b, sizeof b));
			ms_fmt(f, "\t\twm%u -> wt%u [", w->rec, w->owner);
			put_label(f, ms_fmt_str(&lf));
			ms_fmt(f, "%s];\n", red ? RED : "");
		}
		char d[16];
		const uintptr_t *frames;
		uintptr_t at = ms_depot_get(w->stack, &frames) > 0 ? frames[0] : w->caller;
		ms_fmt_init(&lf, label, sizeof label, -1);
		ms_fmt(&lf, "%s for %s\nat %s", waits_how(w), ms_duration(d, w->waited_ns),
		       ms_symbolize_short(at, b, sizeof b));
		ms_fmt(f, "\t\twt%u -> wm%u [", w->tid, w->rec);
		put_label(f, ms_fmt_str(&lf));
		ms_fmt(f, "%s];\n", forever(w) ? RED : "");
	}
	if (ws.more)
		ms_fmt(f, "\t\tw_more [shape=plaintext, label=\"and %d more waits\"];\n",
		       ws.more);
	if (ws.w != MAP_FAILED)
		munmap(ws.w, bytes);
	ms_fmt(f, "\t}\n");
}

/* ---- the file -------------------------------------------------------- */

int ms_write_dot(int fd)
{
	struct ms_thread *self = &ms_self;
	if (fd < 0)
		return -1;
	ms_guard_enter(self);
	ms_symbols_begin();
	int saved = errno;
	char buf[8192], title[200];
	errno = 0;
	struct ms_fmt f, tf;
	ms_fmt_init(&f, buf, sizeof buf, fd);
	ms_fmt_init(&tf, title, sizeof title, -1);
	ms_fmt(&tf, "mutexstat: %s (pid %d)", ms_program_name(),
	       (int)getpid());
	ms_fmt(&f, "/* %s: the lock graphs.  View: dot -Tsvg FILE > graph.svg */\n",
	       ms_fmt_str(&tf));
	ms_fmt(&f, "digraph mutexstat {\n\tgraph [");
	put_label(&f, ms_fmt_str(&tf));
	ms_fmt(&f, ", labelloc=t, fontname=\"Helvetica\", fontsize=12];\n");
	ms_fmt(&f, "\tnode [fontname=\"Helvetica\", fontsize=10];\n");
	ms_fmt(&f, "\tedge [fontname=\"Helvetica\", fontsize=9];\n");
	lock_order(&f);
	wait_for(&f);
	ms_fmt(&f, "}\n");
	ms_fmt_flush(&f);
	ms_symbols_end();
	errno = saved;
	ms_guard_leave(self);
	if (f.failed)
		errno = f.failed;
	return f.failed ? -1 : 0;
}
