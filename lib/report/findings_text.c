/* findings_text.c - the findings section that opens the text report, and
 * the line a self-deadlock gets on stderr as it happens; read from the
 * findings' enumerators (findings.h), as the JSON and DOT writers do. */
#define _GNU_SOURCE
#include "report/findings_text.h"
#include "analysis/findings.h"
#include "base/internal.h"
#include "analysis/waitfor.h"
#include "report/waitfor_text.h"
#include "analysis/order.h"
#include "report/kinds.h"
#include "report/report_stacks.h"
#include "analysis/robust.h"
#include "report/robust_text.h"
#include "report/suppress.h"
#include "stacks/program_frame.h"
#include "stacks/site.h"
#include "stacks/symbols.h"
#include "core/table.h"
#include "core/thread_pool.h"

#include <string.h>

/* ---- lock-order cycles ------------------------------------------------ */

static void letter(char *out, uint32_t i)
{
	if (i < 26) {
		out[0] = (char)('A' + i);
		out[1] = 0;
	} else {
		struct ms_fmt f;
		ms_fmt_init(&f, out, 8, -1);
		ms_fmt(&f, "M%u", i + 1);
	}
}

#define SHOW_EDGES 8 /* longer cycles: the first 6 and the last 2 */
/* a site after a lock's names: "func (file.c:61)" at least, which its
 * variable and name give way for */
#define SITE_LEAST 30

/* head, then a code address, in 120 columns: cut by ms_symbol_fit, so
 * that the line number stays (a cut inside it read as another line). */
static void print_site(struct ms_fmt *f, const char *head, uintptr_t caller)
{
	size_t used = strlen(head), room = used < 100 ? 120 - used : 20;
	char site[256];
	ms_symbolize(caller, site, sizeof site);
	ms_fmt(f, "%s%s\n", head, ms_symbol_fit(site, room));
}

/* "  A   mutex 0x55.. "name", first locked at ..." and, for a life that
 * ended, where. */
static void print_mutex(struct ms_fmt *f, const char *label, const struct ms_finding_mutex *m,
			const char *what, int module)
{
	char head[208], names[160];
	struct ms_fmt hf;
	ms_fmt_init(&hf, head, sizeof head, -1);
	ms_fmt(&hf, "  %-3s %s %p", label, ms_lock_noun(m->flags), (void *)m->key);
	/* the site keeps SITE_LEAST columns at least */
	struct ms_names_room room = { 40, 30, ms_line_room(strlen(head) + strlen(what) +
							   sizeof ", first locked at " - 1 +
							   SITE_LEAST), module };
	ms_fmt(&hf, "%s, %sfirst locked at ",
	       ms_lock_names(names, sizeof names, m->key, m->name, &room), what);
	print_site(f, ms_fmt_str(&hf), m->first_caller);
	/* first locked in a lock wrapper, which every lock taken through it
	 * shares: the line that called it (the suggested rule names it) */
	uintptr_t past = ms_program_frame(ms_site_beyond_wrapper(m->first_caller, m->first_stack),
					  m->first_stack); /* and std::lock_guard's at -O0 */
	if (m->first_caller && past != m->first_caller)
		print_site(f, "        " MS_WRAPPER_CALLERS "  ", past);
	if (m->ended == MS_ENDED_DESTROYED)
		print_site(f, "        destroyed at ", m->ended_at);
	else if (m->ended == MS_ENDED_REINIT)
		print_site(f, "        initialised again at ", m->ended_at);
	else if (m->ended == MS_ENDED_REUSED)
		print_site(f, "        its memory used as another kind of lock at ", m->ended_at);
	else if (m->ended)
		ms_fmt(f, "        ended before the cycle was seen whole\n");
}

static void print_reuse_note(struct ms_fmt *f, const struct ms_cycle_finding *c)
{
	char name[8];
	uint32_t count = 0, rwlocks = 0;
	for (uint32_t i = 0; i < c->n; i++) {
		int s = ms_cycle_slot(c, i);
		if (s < 0 || !ms_order_maybe_reused(c->m[s].flags, c->m[s].key,
							 c->m[s].first_caller))
			continue;
		rwlocks += ms_lock_class(c->m[s].flags) == MS_CLASS_RWLOCK;
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
	/* std::shared_mutex is a pthread rwlock made so, as std::mutex is a
	 * mutex: name the one the note is about */
	int all_rw = rwlocks == count;
	ms_fmt(f, "%s: no init or destroy seen, on the heap or a stack (a C++ %s?): objects "
		  "that had\n", count > 4 ? ", ..." : "", all_rw ? "std::shared_mutex" : "std::mutex");
	ms_fmt(f, "        %s earlier in the run are the same %s here: the orders may be of "
		  "different objects\n", count > 1 ? "their addresses" : "its address",
	       all_rw ? (count > 1 ? "locks" : "lock") : (count > 1 ? "mutexes" : "mutex"));
}

/* A cycle of read holds alone can deadlock only through writer-preferring
 * rwlocks (analysis/order.c): one reader waits behind a writer that
 * waits for the other reader.  Without a word, "took A (read), then B
 * (read)" read as a cycle that cannot block. */
static void print_reads_note(struct ms_fmt *f, const struct ms_cycle_finding *c)
{
	if (c->kept != c->n)
		return;
	char which[MS_CYCLE_KEPT * 8 + 8] = "", name[8];
	struct ms_fmt w;
	ms_fmt_init(&w, which, sizeof which, -1);
	uint32_t count = 0;
	for (uint32_t i = 0; i < c->n; i++)
		if (c->e[i].modes != 1u << 3) /* held for read, taken for read */
			return;
	for (uint32_t i = 0; i < c->n; i++) {
		const struct ms_finding_mutex *m = &c->m[i];
		if (ms_lock_class(m->flags) == MS_CLASS_RWLOCK && ms_rwlock_writer_first(m->flags)) {
			letter(name, i);
			ms_fmt(&w, "%s%s", count++ ? ", " : "", name);
		}
	}
	if (count)
		ms_fmt(f, "  only reads, but %s %s writer-preferring: a read of %s waits while a writer "
			  "waits for %s,\n  so two threads reading in these orders deadlock once a "
			  "writer comes between them\n",
		       ms_fmt_str(&w), count > 1 ? "are" : "is", count > 1 ? "them" : "it",
		       count > 1 ? "them" : "it");
}

static void print_cycle(struct ms_fmt *f, const struct ms_cycle_finding *c)
{
	char name[8];
	uint32_t n = c->n;
	int one_thread = 1, all_mutexes = 1;
	for (uint32_t i = 1; i < c->kept; i++)
		one_thread &= c->e[i].tid == c->e[0].tid;
	for (uint32_t i = 0; i < c->kept; i++)
		all_mutexes &= ms_lock_class(c->m[i].flags) == MS_CLASS_MUTEX;
	const char *locks = all_mutexes ? "mutexes" : "locks";
	if (c->guarded)
		ms_fmt(f, "GUARDED INVERSION: %u %s taken in a cycle of orders, "
			  "always under one more %s: cannot deadlock\n", n, locks,
		       ms_lock_noun(c->gate.flags));
	else if (!one_thread)
		ms_fmt(f, "POTENTIAL DEADLOCK: %u %s taken in a cycle of orders\n", n, locks);
	else if (n == 2 && !c->b_new)
		ms_fmt(f, "POTENTIAL DEADLOCK: 2 %s taken in a cycle of orders (all by one "
			  "thread: two threads doing the same would deadlock)\n", locks);
	else if (c->b_new) /* as many doing the same would take new mutexes */
		ms_fmt(f, "POTENTIAL DEADLOCK: %u %s taken in a cycle of orders (all by one "
			  "thread)\n", n, locks);
	else /* a ring walked by one thread: two walking it need not meet (the
	      * why on a line of its own: the heading's 120 columns) */
		ms_fmt(f, "POTENTIAL DEADLOCK: %u %s taken in a cycle of orders (all by one "
			  "thread)\n  %u threads doing the same, each at another step, would "
			  "deadlock\n", n, locks, n);
	if (c->count > 1)
		ms_fmt(f, "  closed %llu times, by other mutexes each time at the same code "
			  "(the first time below)\n", (unsigned long long)c->count);
	ms_fmt(f, "  order: ");
	for (uint32_t i = 0; i < n; i++) {
		if (n > 16 && i == 12) { /* keep the line within 120 columns */
			ms_fmt(f, "... -> ");
			i = n - 3;
			continue;
		}
		letter(name, i);
		ms_fmt(f, "%s -> ", name);
	}
	ms_fmt(f, "A\n");
	/* two libraries' static `lock`: which is which */
	_Static_assert(MS_CYCLE_KEPT <= MS_ALIKE_MAX, "a cycle's locks compared");
	uintptr_t keys[MS_CYCLE_KEPT];
	unsigned char alike[MS_CYCLE_KEPT];
	for (uint32_t s = 0; s < c->kept; s++)
		keys[s] = c->m[s].key;
	ms_locks_alike(alike, keys, c->kept, 40);
	for (uint32_t i = 0; i < n; i++) {
		int s = ms_cycle_slot(c, i);
		if (s < 0) {
			ms_fmt(f, "  ... %u more mutexes ...\n", n - c->kept);
			i = n - MS_CYCLE_TAIL - 1;
			continue;
		}
		letter(name, i);
		print_mutex(f, name, &c->m[s], "", alike[s]);
	}
	print_reuse_note(f, c);
	print_reads_note(f, c);
	if (c->guarded)
		print_mutex(f, "gate:", &c->gate, "held on every edge, ", 0);
	for (uint32_t i = 0; i < n; i++) {
		if (n > SHOW_EDGES && i == SHOW_EDGES - 2) {
			ms_fmt(f, "  ... %u more edges ...\n", n - SHOW_EDGES);
			i = n - 3;
			continue;
		}
		const struct ms_finding_edge *e = &c->e[ms_cycle_slot(c, i)];
		char an[8], bn[8];
		letter(an, i);
		letter(bn, (i + 1) % n);
		int as = ms_cycle_slot(c, i), bs = ms_cycle_slot(c, (i + 1) % n);
		ms_fmt(f, "  thread %u%s%s%s took %s%s, then %s%s%s:\n", e->tid,
		       e->thread_name[0] ? " \"" : "", e->thread_name,
		       e->thread_name[0] ? "\"" : "", an,
		       as < 0 ? "" : ms_edge_mode_text(e->modes, 0, c->m[as].flags),
		       as >= 0 && bs >= 0 && ms_finding_edge_waits(e->tid, &c->m[as], &c->m[bs])
			       ? "waits for " : "", bn,
		       bs < 0 ? "" : ms_edge_mode_text(e->modes, 1, c->m[bs].flags));
		ms_fmt(f, "    %-3s at  ", an);
		ms_report_stack(f, e->a_stack, 12);
		ms_fmt(f, "    %-3s at  ", bn);
		ms_report_stack(f, e->b_stack, 12);
		if (e->b_new)
			ms_fmt(f, "    %s was new: no thread had locked it before. If none but this one "
				  "could reach it yet (an\n    object locked before it is published), "
				  "this order cannot deadlock\n", bn);
	}
}

struct cycles_ctx {
	struct ms_fmt *f;
	int potential;
};

static void print_one(const struct ms_cycle_finding *c, void *arg)
{
	struct cycles_ctx *p = arg;
	ms_fmt(p->f, "\n");
	print_cycle(p->f, c);
	if (!c->guarded)
		p->potential++;
}

/* ---- self-deadlocks and threads that exit holding mutexes ------------- */

static void print_self(struct ms_fmt *f, const struct ms_self_finding *s)
{
	unsigned lock_class = ms_lock_class(s->flags);
	const char *noun = ms_lock_noun(s->flags);
	const char *times = s->count == 1 ? "" : "s";
	/* waits that got the lock after all: an unlock it did not make let
	 * it go (another thread's, a MISUSE) -- not "forever" */
	int all_released = s->kind != MS_SELF_REFUSED && s->released == s->count;
	if (all_released)
		ms_fmt(f, "SELF-DEADLOCK: thread %u relocked %s it held, %llu time%s: it waited for "
			  "itself until another thread's unlock let it go\n", s->tid,
		       lock_class == MS_CLASS_RWLOCK ? "an rwlock (to write, reading it)"
		       : lock_class == MS_CLASS_SPIN ? "a spin lock" : "a mutex",
		       (unsigned long long)s->count, times);
	else if (s->kind == MS_SELF_REFUSED)
		ms_fmt(f, "MISUSE: relock refused: thread %u relocked %s it holds, %llu time%s; "
			  "glibc answered EDEADLK\n", s->tid,
		       lock_class == MS_CLASS_RWLOCK ? "an rwlock" : "an errorcheck mutex",
		       (unsigned long long)s->count, times);
	else if (lock_class == MS_CLASS_RWLOCK && s->kind == MS_SELF_TIMEOUT)
		/* (at most 120 columns with a 7-digit thread and count) */
		ms_fmt(f, "SELF-DEADLOCK: thread %u write-locked an rwlock it reads, with a "
			  "timeout, %llu time%s: it waited for itself until the deadline\n",
		       s->tid, (unsigned long long)s->count, times);
	else if (lock_class == MS_CLASS_RWLOCK)
		ms_fmt(f, "SELF-DEADLOCK: thread %u write-locks an rwlock it holds for read: it "
			  "waits for itself, forever\n", s->tid);
	else if (s->kind == MS_SELF_TIMEOUT)
		ms_fmt(f, "SELF-DEADLOCK: thread %u relocked a mutex it holds, with a "
			  "timeout, %llu time%s: it waited for itself until the deadline\n",
		       s->tid, (unsigned long long)s->count, times);
	else if (lock_class == MS_CLASS_SPIN)
		ms_fmt(f, "SELF-DEADLOCK: thread %u locks a spin lock it already holds: it "
			  "spins for ever\n", s->tid);
	else
		ms_fmt(f, "SELF-DEADLOCK: thread %u locks a mutex it already holds: it "
			  "waits for itself, forever\n", s->tid);
	if (s->released && !all_released)
		ms_fmt(f, "  %llu of these waits ended: another thread's unlock let it go\n",
		       (unsigned long long)s->released);
	char head[64], names[160];
	struct ms_fmt hf;
	ms_fmt_init(&hf, head, sizeof head, -1);
	ms_fmt(&hf, "  %s %p", noun, (void *)s->key);
	struct ms_names_room room = { 40, 30, ms_line_room(strlen(head)), 0 };
	ms_fmt(f, "%s%s\n", ms_fmt_str(&hf),
	       ms_lock_names(names, sizeof names, s->key, s->name, &room));
	if (s->other_lives)
		ms_fmt(f, "  (%llu of them by the same code on later lives of the lock at this "
			  "address: counted here)\n", (unsigned long long)s->other_lives);
	ms_fmt(f, "  taken at     ");
	ms_report_stack(f, s->taken_stack, 15);
	ms_report_wrapper_callers(f, s->wrapped_stack);
	ms_fmt(f, "  relocked at  ");
	ms_report_stack(f, s->relock_stack, 15);
}

struct self_ctx {
	struct ms_fmt *f;
	int n;
};

/* A relock that glibc refused with EDEADLK (an errorcheck mutex, an
 * rwlock locked again by its writer) hangs nothing: a MISUSE, among the
 * others (refused_one), and not failing.  Some programs relock on purpose
 * to ask glibc whether they hold a lock (Samba's tdb). */
static void self_one(const struct ms_self_finding *s, void *arg)
{
	struct self_ctx *p = arg;
	if (s->kind == MS_SELF_REFUSED)
		return;
	ms_fmt(p->f, "\n");
	print_self(p->f, s);
	p->n++;
}

static void refused_one(const struct ms_self_finding *s, void *arg)
{
	struct self_ctx *p = arg;
	if (s->kind != MS_SELF_REFUSED)
		return;
	if (p->f)
		print_self(p->f, s);
	p->n++;
}

int ms_findings_print_refused(struct ms_fmt *f)
{
	struct self_ctx refused = { f, 0 };
	ms_findings_each_self(refused_one, &refused);
	uint32_t dropped = ms_findings_refused_dropped();
	if (f && dropped && refused.n)
		ms_fmt(f, "  (and %u more relocks refused: not kept)\n", dropped);
	return refused.n;
}

static void exit_one(const struct ms_exit_finding *h, void *arg)
{
	struct ms_fmt *f = arg;
	int all_mutexes = h->shown > 0; /* none shown: of unknown kinds */
	for (uint32_t j = 0; j < h->shown; j++)
		all_mutexes &= ms_lock_class(h->flags[j]) == MS_CLASS_MUTEX;
	ms_fmt(f, "\nHELD AT THREAD EXIT: thread %u \"%.15s\" ended holding %u %s%s\n",
	       h->tid, h->name, h->n, all_mutexes ? "mutex" : "lock",
	       h->n == 1 ? "" : all_mutexes ? "es" : "s");
	for (uint32_t j = 0; j < h->shown; j++) {
		char where[256], var[48];
		ms_fmt(f, "  %s %p%s%s taken at %s\n", ms_lock_noun(h->flags[j]), (void *)h->key[j],
		       ms_lock_variable_tag(var, sizeof var, h->key[j], 40),
		       ms_lock_class(h->flags[j]) != MS_CLASS_RWLOCK ? ""
		       : h->read[j] ? " (read)" : " (write)",
		       ms_symbolize(h->caller[j], where, sizeof where));
		ms_report_wrapper_callers(f, h->wrapped_stack[j]);
	}
	/* (each was "mutex 0x0 taken at ?" where the thread's held set did
	 * not have it: a hold beyond the 64 it follows) */
	if (h->n > h->shown)
		ms_fmt(f, "  %s%u not shown: past the first 8, or taken beyond the 64 locks a "
			  "thread's held set follows\n", h->shown ? "and " : "", h->n - h->shown);
}

/* ---- stalls ----------------------------------------------------------- */

static void print_stall_thread(struct ms_fmt *f, const struct ms_stall_thread *w)
{
	char d[16], who[32] = "", head[64], names[400];
	const char *mname = NULL, *noun = "mutex";
	if (w->kind == MS_STALL_MUTEX || w->kind == MS_STALL_COND) {
		uint32_t r = ms_table_find(w->kind == MS_STALL_MUTEX ? w->object : w->mutex);
		if (r != MS_REC_NONE && r != MS_REC_UNTRACKED) {
			mname = ms_order_mutex_name(r);
			noun = ms_lock_noun(LOAD(&ms_rec(r)->flags));
		}
	}
	ms_duration(d, w->waited_ns);
	struct ms_fmt hf;
	ms_fmt_init(&hf, head, sizeof head, -1);
	ms_fmt(&hf, "  thread %u%s%s%s ", w->tid, w->name[0] ? " \"" : "", w->name,
	       w->name[0] ? "\"" : "");
	ms_fmt(f, "%s", ms_fmt_str(&hf));
	if (w->kind == MS_STALL_MUTEX && w->holder) {
		struct ms_fmt wf;
		ms_fmt_init(&wf, who, sizeof who, -1);
		ms_fmt(&wf, " held by thread %u", w->holder);
	}
	/* the lock's names in what the rest leaves of 120 columns */
	size_t used = strlen(head) + sizeof "waits for spin lock 0x0123456789ab" - 1 +
		      strlen(who) + sizeof ", for " - 1 + strlen(d);
	struct ms_names_room room = { 40, 30, ms_line_room(used), 0 };
	switch (w->kind) {
	case MS_STALL_MUTEX:
		/* a retake: as the wait-for lines say it, on two lines (120
		 * columns) */
		ms_fmt(f, w->retake ? "waits for %s %p%s%s again,\n    to return from its "
				      "condition wait (in it for %s)\n"
				    : "waits for %s %p%s%s, for %s\n",
		       noun, (void *)w->object,
		       ms_lock_names(names, sizeof names, w->object, mname, &room), who, d);
		break;
	case MS_STALL_COND:
		ms_fmt(f, "waits for %s, for %s\n",
		       ms_cond_wait_objects(names, sizeof names, w->object, w->mutex, mname,
					    ms_line_room(strlen(head) + 16 + strlen(d))),
		       d);
		break;
	case MS_STALL_JOIN:
		if (w->holder)
			ms_fmt(f, "waits to join thread %u, for %s\n", w->holder, d);
		else
			ms_fmt(f, "waits to join a thread (pthread_t %p), for %s\n",
			       (void *)w->object, d);
		break;
	case MS_STALL_FUTEX:
		/* what such a wait may be on a line of its own: 120 columns */
		ms_fmt(f, "sleeps in a futex wait on %p, for %s or more\n"
			  "    (sem_wait, a barrier, a lock the library does not see)\n",
		       (void *)w->object, d);
		break;
	}
	if (w->stack) {
		ms_fmt(f, "    waits at      ");
		ms_report_stack(f, w->stack, 18);
	} else if (w->caller) {
		char where[256];
		ms_fmt(f, "    waits at      %s\n", ms_symbolize(w->caller, where, sizeof where));
	}
}

struct stall_ctx {
	struct ms_fmt *f;
	int failing;
};

static void print_stall(const struct ms_stall *s, void *arg)
{
	struct stall_ctx *c = arg;
	struct ms_fmt *f = c->f;
	char d[16];
	ms_duration(d, s->waited_ns);
	/* under 120 columns with a thousand threads */
	if (s->n == 1)
		ms_fmt(f, "\nSTALL: the only thread blocked in a wait for %s or more, no mutex "
			  "operation meanwhile, nothing can wake it\n", d);
	else
		ms_fmt(f, "\nSTALL: all %u threads blocked in waits for %s or more, no mutex "
			  "operation meanwhile, none can wake another\n", s->n, d);
	for (uint32_t i = 0; i < s->shown; i++)
		print_stall_thread(f, &s->t[i]);
	if (s->n > s->shown)
		ms_fmt(f, "  ... %u more threads\n", s->n - s->shown);
	c->failing = !s->handled_signal;
	if (s->handled_signal) {
		char name[24];
		ms_fmt(f, MS_STALL_SIGNAL_CAVEAT "the program handles %s, whose handler may "
			  "wake a thread (sem_post\n  is async-signal-safe): not counted for "
			  "MUTEXSTAT_EXIT_CODE, no MUTEXSTAT_ON_DEADLOCK\n",
		       ms_stall_signal_name(s->handled_signal, name));
	}
}

int ms_findings_print(struct ms_fmt *f)
{
	int failing = ms_waitfor_print(f); /* live deadlocks first */
	struct stall_ctx stalls = { f, 0 };
	if (ms_findings_each_stall(print_stall, &stalls))
		failing += stalls.failing;
	struct self_ctx selfs = { f, 0 };
	ms_findings_each_self(self_one, &selfs);
	failing += selfs.n; /* every SELF-DEADLOCK heading */
	struct cycles_ctx cycles = { f, 0 };
	ms_findings_each_cycle(print_one, &cycles);
	failing += cycles.potential;
	uint32_t dropped = ms_findings_each_exit(exit_one, f);
	if (dropped)
		ms_fmt(f, "\n(%u more threads ended holding mutexes)\n", dropped);
	failing += ms_robust_print(f); /* those left not recoverable */
	return failing;
}

/* ---- as it happens ---------------------------------------------------- */

static void say_one(const struct ms_self_finding *s, void *arg)
{
	int fd = *(int *)arg;
	char buf[4096];
	struct ms_fmt f;
	ms_fmt_init(&f, buf, sizeof buf, fd);
	ms_fmt(&f, "mutexstat: ");
	print_self(&f, s);
	ms_fmt_flush(&f);
}

void ms_findings_say_unsaid(int fd)
{
	ms_findings_each_unsaid(say_one, &fd);
}
