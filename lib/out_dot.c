/* out_dot.c - the lock-order and wait-for graphs as DOT; see out_dot.h.
 *
 * The data are the text report's: the lock-order edges and the cycles
 * among them come from order.c (ms_order_each_edge runs the same search
 * as the POTENTIAL DEADLOCK findings), the waits from live.c
 * (ms_live_each_wait follows the same graph as the DEADLOCK findings).
 * One digraph, two clusters: `dot -Tsvg` renders only the first graph of
 * a file with several into a valid SVG, so both live in one.
 *
 * Labels are built with the library's formatter, then escaped for a DOT
 * string: quote and backslash escaped, a line break written as \n, other
 * control characters and bytes that are not UTF-8 (a mutex's name is the
 * program's) replaced, so dot never rejects the file. */
#define _GNU_SOURCE
#include "out_dot.h"
#include "output.h"
#include "depot.h"
#include "fmt.h"
#include "internal.h"
#include "live.h"
#include "order.h"
#include "symbols.h"
#include "table.h"
#include "thread.h"
#include "threads.h"

#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_WAITS 4096 /* as many as live.c follows */

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

/* A mutex: its name if the program gave one, else its address. */
static const char *mutex_label(char *out, size_t cap, uint32_t r, uintptr_t key)
{
	struct ms_fmt f;
	ms_fmt_init(&f, out, cap, -1);
	const char *name = ms_order_mutex_name(r);
	if (name)
		ms_fmt(&f, "\"%.60s\"", name);
	else
		ms_fmt(&f, "%p", (void *)key);
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

struct order_ctx {
	struct ms_fmt *f;
	uint8_t *shown; /* a bit per record: node written (NULL: write again) */
};

static void order_node(struct order_ctx *c, uint32_t r, uintptr_t key)
{
	if (c->shown) {
		if (c->shown[r / 8] & (1u << (r % 8)))
			return;
		c->shown[r / 8] |= (uint8_t)(1u << (r % 8));
	}
	char name[80], site[256], label[400];
	struct ms_fmt lf;
	ms_fmt_init(&lf, label, sizeof label, -1);
	ms_fmt(&lf, "%s\nfirst locked at %s", mutex_label(name, sizeof name, r, key),
	       ms_symbolize_short(LOAD(&ms_rec(r)->first_caller), site, sizeof site));
	ms_fmt(c->f, "\t\to%u [", r);
	put_label(c->f, ms_fmt_str(&lf));
	ms_fmt(c->f, "];\n");
}

static void order_edge(const struct ms_order_edge *e, void *arg)
{
	struct order_ctx *c = arg;
	order_node(c, e->a, e->a_key);
	order_node(c, e->b, e->b_key);
	char label[400], who[40], site[256];
	struct ms_fmt lf;
	ms_fmt_init(&lf, label, sizeof label, -1);
	const uintptr_t *frames;
	if (ms_depot_get(e->b_stack, &frames) > 0)
		ms_fmt(&lf, "%s\n", ms_symbolize_short(frames[0], site, sizeof site));
	ms_fmt(&lf, "%s", thread_label(who, sizeof who, e->tid));
	ms_fmt(c->f, "\t\to%u -> o%u [", e->a, e->b);
	put_label(c->f, ms_fmt_str(&lf));
	ms_fmt(c->f, "%s%s];\n", e->potential ? RED : "",
	       e->guarded ? ", style=dashed" : "");
}

static void lock_order(struct ms_fmt *f)
{
	ms_fmt(f, "\tsubgraph cluster_order {\n");
	ms_fmt(f, "\t\tlabel=\"lock order: A -> B, B taken while A was held\\n"
		  "red: POTENTIAL DEADLOCK; dashed: GUARDED INVERSION\";\n");
	size_t bytes = ((size_t)ms_table.capacity + 2 + 7) / 8;
	uint8_t *shown = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct order_ctx c = { f, shown == MAP_FAILED ? NULL : shown };
	int n = __atomic_load_n(&ms_table.ready, __ATOMIC_ACQUIRE)
			? ms_order_each_edge(order_edge, &c) : 0;
	if (n <= 0)
		ms_fmt(f, "\t\to_none [shape=plaintext, label=\"%s\"];\n",
		       n < 0 ? "(no memory to search the edges)"
			     : "no mutex was taken while holding another");
	if (c.shown)
		munmap(shown, bytes);
	ms_fmt(f, "\t}\n");
}

/* ---- the wait-for graph ---------------------------------------------- */

struct waits {
	struct ms_live_wait *w;
	int n, more;
};

static void keep_wait(const struct ms_live_wait *w, void *arg)
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
static int forever(const struct ms_live_wait *w)
{
	return w->cycle || w->owner_exited || w->owner_in_parent || w->cond_end;
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
	int n = ws.w == MAP_FAILED ? -1 : ms_live_each_wait(keep_wait, &ws);
	if (n <= 0)
		ms_fmt(f, "\t\tw_none [shape=plaintext, label=\"%s\"];\n",
		       n < 0 ? "(no memory to follow the waits)"
			     : "no thread waits for a mutex");
	char label[400], a[80], b[256];
	struct ms_fmt lf;
	for (int i = 0; n > 0 && i < ws.n; i++) {
		const struct ms_live_wait *w = &ws.w[i];
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
			ms_fmt(&lf, "held by");
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
		ms_fmt(&lf, "waits for %s\nat %s", ms_duration(d, w->waited_ns),
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
