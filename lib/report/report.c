/* report.c - the text report: a summary line, the top mutexes, mutexes
 * still held, misuse, then each top mutex's detail and recent operations.
 *
 * It only reads the table (with relaxed loads: a report taken while threads
 * run is a consistent-enough snapshot, and exact once they have stopped),
 * writes through fmt.c with no allocation except the top list, and keeps
 * lines within 120 columns. */
#define _GNU_SOURCE
#include "report/kinds.h"
#include "report/report.h"
#include "glibc/loader_lock.h"
#include "report/lines.h"
#include "report/top_table.h"
#include "report/suppress.h"
#include "glibc/glibc_fast.h"
#include "analysis/blame.h"
#include "record/record.h"
#include "stacks/site.h"
#include "report/report_stacks.h"
#include "report/report_hist.h"
#include "analysis/findings.h"
#include "analysis/misuse.h"
#include "report/findings_text.h"
#include "analysis/waitfor.h"
#include "core/forked.h"
#include "base/clock.h"
#include "base/fmt.h"
#include "base/options.h"
#include "base/output.h"
#include "report/report_lock.h"
#include "analysis/robust.h"
#include "report/cond_waits_text.h"
#include "report/robust_text.h"
#include "stacks/stack.h"
#include "stacks/symbols.h"
#include "core/table.h"
#include "core/thread.h"
#include "core/thread_pool.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The top list: the report's best lines (lines.h), and what the header
 * counts of all of them. */
struct top {
	struct ms_line *lines;
	size_t n, cap, offered; /* offered: lines that could be listed */
	uint64_t live, used, held, misused, timed;
	/* read holds: of the threads here, and rwlocks held by readers that
	 * exited (held counts the locks held by one thread: a mutex, a write) */
	uint64_t reads_held;
	uint64_t idle; /* live, not used, not held, not waited for: no line */
	uint32_t classes; /* the kinds of the locks listed (1 << class) */
};

static void top_offer(struct top *t, const struct ms_line *l)
{
	t->offered++;
	ms_lines_offer(t->lines, sizeof *t->lines, &t->n, t->cap, l);
}

static int is_used(const struct ms_line *l)
{
	uint64_t e = 0;
	for (int i = 0; i < MS_E_COUNT; i++)
		e += l->errors[i];
	for (int i = 0; i < MS_M_COUNT; i++)
		e += l->misuse[i];
	return l->acquisitions || l->trylock_busy || l->timeouts || e;
}

static void collect(uintptr_t key, uint32_t r, void *arg)
{
	struct top *t = arg;
	struct ms_line l;
	ms_line_from_record(&l, key, r);
	t->live++;
	t->classes |= 1u << ms_lock_class(LOAD(&ms_rec(r)->flags));
	uint32_t gone_tid;
	if (LOAD(&ms_rec(r)->owner) & MS_HELD)
		t->held++;
	else if (ms_waitfor_exited_readers(r, &gone_tid, NULL))
		t->reads_held++;
	for (int i = 0; i < MS_M_COUNT; i++)
		if (l.misuse[i]) {
			t->misused++;
			break;
		}
	if (l.timed)
		t->timed++;
	if (!is_used(&l)) {
		/* held, it is in use: the held lines say so.  Waited for in
		 * its first lock, it gets a line, which says who waits: the
		 * findings name only waits whose holder is known (not one for
		 * a process-shared spin lock that another process holds) */
		uint32_t flags = LOAD(&ms_rec(r)->flags);
		int waited = (flags & MS_F_COLD) && (uint32_t)LOAD(&ms_table.cold[r].waiting);
		if (!waited) {
			if (!(LOAD(&ms_rec(r)->owner) & MS_HELD))
				t->idle++;
			return;
		}
	}
	t->used++;
	top_offer(t, &l);
}

/* ---- pieces of text -------------------------------------------------- */

#define WIDTH 120
/* A program's name in the summary line: a longer one ends in "..." */
#define PROGRAM_COLS 40

/* "1 mutex", "2 mutexes" */
static const char *plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* Ended lives that were never locked: they are summed under site 0. */
static uint64_t ended_never_locked(void)
{
	for (uint32_t i = 0; i < LOAD(&ms_table.nsites); i++) {
		struct ms_site sv;
		ms_table_site(i, &sv);
		if (!sv.site)
			return sv.acquisitions ? 0 : sv.mutexes;
	}
	return 0;
}

int ms_report_loaded_late;

static const char loaded_late_note[] =
	"  loaded after libc.so.6 (by dlopen): calls that find glibc's pthread functions "
	"first are not recorded\n";

/* The start-up's notes (base/output.h), each a line of the heading,
 * broken between words before WIDTH. */
static void print_kept_notes(struct ms_fmt *f)
{
	const char *p = ms_output_kept();
	while (*p) {
		const char *end = strchrnul(p, '\n'); /* the last, being written */
		size_t col = 0;
		while (p < end) {
			const char *w = p;
			while (w < end && *w != ' ')
				w++;
			size_t n = (size_t)(w - p);
			if (!col)
				col = 2, ms_fmt(f, "  ");
			else if (col + 1 + n > WIDTH)
				col = 4, ms_fmt(f, "\n    ");
			else
				col++, ms_fmt(f, " ");
			ms_fmt(f, "%.*s", (int)n, p);
			col += n;
			p = w < end ? w + 1 : w;
		}
		ms_fmt(f, "\n");
		p = *end ? end + 1 : end;
	}
}

/* With the time of the last mutexstat_reset() (ms_duration's %s) since
 * the start, `since`; without one, `none`. */
static void print_reset(struct ms_fmt *f, const char *since, const char *none)
{
	uint64_t reset = LOAD(&ms_api_reset_ticks), start = ms_clock_start_ticks();
	char at[16];
	if (reset > start)
		ms_fmt(f, since, ms_duration(at, ms_ticks_to_ns(reset - start)));
	else
		ms_fmt(f, "%s", none);
}

/* Kinds of lock left out (MUTEXSTAT_TRACK): without this line "locked no
 * mutexes", and no finding through them, would read as none there. */
static void print_untracked_kinds(struct ms_fmt *f)
{
	static const char *const names[MS_CLASS_COUNT] = { "mutexes", "read-write locks",
							   "spin locks" };
	uint64_t left = ~ms_opt.track & ((1u << MS_CLASS_COUNT) - 1);
	if (!left)
		return;
	ms_fmt(f, "  not recorded (MUTEXSTAT_TRACK):");
	for (unsigned c = 0, n = 0; c < MS_CLASS_COUNT; c++)
		if (left & (1u << c))
			ms_fmt(f, "%s %s", n++ ? "," : "", names[c]);
	ms_fmt(f, "\n");
}

/* Threads whose id the system refused (a seccomp filter): their calls
 * are in no number of the report (core/thread.c). */
static void print_unfollowed_threads(struct ms_fmt *f)
{
	uint64_t n = ms_threads_without_tid();
	if (n)
		ms_fmt(f, "  %llu thread%s not followed: the system refused %s id (gettid; a "
			  "seccomp filter?)\n",
		       (unsigned long long)n, n == 1 ? " was" : "s were", n == 1 ? "its" : "their");
}

static void header(struct ms_fmt *f, const struct top *t)
{
	char run[16];
	struct ms_table_counts tc;
	ms_table_counts(&tc);
	uint64_t untracked = tc.untracked_mutexes;
	uint64_t threads = ms_threads_seen();
	char who[128], counts[128], name[64];
	struct ms_fmt wf, cf;
	ms_fmt_init(&wf, who, sizeof who, -1);
	ms_fmt_init(&cf, counts, sizeof counts, -1);
	ms_fmt(&wf, "mutexstat: %s (pid %d) ran %s:",
	       ms_name_cut(name, sizeof name, ms_program_name(), PROGRAM_COLS), (int)getpid(),
	       ms_duration(run, ms_run_ns()));
	/* a program of mutexes alone reads as it always did; one with other
	 * kinds of lock counts locks (as the top table's heading does) */
	int locks = (t->classes & ~(1u << MS_CLASS_MUTEX)) != 0;
	ms_fmt(&cf, "%llu %s used %s, %llu %s tracked, ", (unsigned long long)threads,
	       plural(threads, "thread", "threads"), locks ? "locks" : "mutexes",
	       (unsigned long long)t->live,
	       locks ? plural(t->live, "lock", "locks") : plural(t->live, "mutex", "mutexes"));
	/* Calls that found no room in the index are of mutexes it does not
	 * hold, untracked ones it cannot count: the count is then a floor. */
	if (!tc.untracked_ops)
		ms_fmt(&cf, "%llu untracked", (unsigned long long)untracked);
	else if (untracked)
		ms_fmt(&cf, "more than %llu untracked", (unsigned long long)untracked);
	else
		ms_fmt(&cf, "some untracked");
	/* a long program name, big counts: the counts on a line of their own */
	ms_fmt(f, "%s%s%s\n", ms_fmt_str(&wf),
	       strlen(who) + 1 + strlen(counts) > WIDTH ? "\n  " : " ", ms_fmt_str(&cf));
	print_untracked_kinds(f);
	/* a report while the program runs reads like the exit report but for
	 * this line */
	if (!ms_report_writing_last)
		ms_fmt(f, "  %s\n", ms_report_occasion ? ms_report_occasion
				     : "a report while the program runs, not its last");
	char crash[200];
	ms_fmt(f, "%s", ms_crash_describe(crash, sizeof crash));
	if (ms_report_loaded_late)
		ms_fmt(f, "%s", loaded_late_note);
	print_kept_notes(f);
	if (ms_fast_verdict != MS_FAST_AGREE)
		ms_fmt(f, "  this glibc's mutex lock and unlock left a mutex otherwise than the "
			  "library's copy\n  of them (step %d of its start-up check): every call "
			  "goes through glibc's\n", (int)ms_fast_verdict);
	if (ms_fork_parent_pid())
		ms_fmt(f, "  forked from pid %d: the numbers start at the fork (what came "
			  "before is in the parent's report)\n", ms_fork_parent_pid());
	/* "ran" is the whole run's; the counts are the reset's on */
	print_reset(f, "  the numbers start at mutexstat_reset(), %s into the run (the counts "
		       "of threads and locks above do not)\n", "");
	uint64_t skipped = ms_spin_skipped_calls();
	if (skipped)
		ms_fmt(f, "  %llu %s while another thread was inside fork() or in a "
			  "signal handler that\n  interrupted the library: what %s needed "
			  "the library's locks for (a first use,\n  a destroy, a call stack, "
			  "a lock-order edge) was not recorded\n",
		       (unsigned long long)skipped, plural(skipped, "call came", "calls came"),
		       plural(skipped, "it", "they"));
	uint64_t lost = tc.untracked_ops;
	uint64_t ended = tc.untracked_ended;
	/* Each a line, or two where big counts would take it past WIDTH: a
	 * million untracked mutexes made 136 columns. */
	char full[160], more[160];
	struct ms_fmt ff, mf;
	ms_fmt_init(&ff, full, sizeof full, -1);
	ms_fmt_init(&mf, more, sizeof more, -1);
	/* untracked for want of the record pool's lock, whose holder was
	 * stopped (table.c): the table is not full */
	print_unfollowed_threads(f);
	uint64_t gave_up = LOAD(&ms_table.pool_gave_up);
	uint64_t not_had = untracked + ended;
	if (not_had && gave_up >= not_had) {
		ms_fmt(f, "  %llu %s not tracked: a thread stopped in a signal handler held the "
			  "library's lock of records\n",
		       (unsigned long long)not_had, not_had == 1 ? "mutex was" : "mutexes were");
		ended = untracked = 0;
	}
	uint64_t unsummed = LOAD(&ms_table.sites_gave_up);
	if (unsummed)
		ms_fmt(f, "  %llu ended %s summed in no line: a thread stopped in a signal handler "
			  "held the library's list of sites\n",
		       (unsigned long long)unsummed, unsummed == 1 ? "life is" : "lives are");
	if (ended || untracked) {
		/* Full once, with room again now: their numbers are in no line. */
		if (ended)
			ms_fmt(&ff, "  the table was full: %llu mutexes were not tracked, "
				    "%llu of them destroyed since",
			       (unsigned long long)untracked + ended, (unsigned long long)ended);
		else
			ms_fmt(&ff, "  the table is full: %llu mutexes were not tracked",
			       (unsigned long long)untracked);
		/* ... and the calls of mutexes the index had no room to hold;
		 * the advice then, or on the line after (ended ones) */
		ms_fmt(&ff, lost ? "," : ";");
		if (lost)
			ms_fmt(&mf, "and %llu calls were of mutexes it could not even count;",
			       (unsigned long long)lost);
		if (!ended)
			ms_fmt(&mf, "%sraise MUTEXSTAT_TABLE_SIZE (now %llu)", lost ? " " : "",
			       (unsigned long long)ms_opt.table_size);
	} else if (lost) {
		/* records to spare, but more addresses near one place of the
		 * index than a probe passes (tests/no_room.c) */
		ms_fmt(&ff, "  %llu calls found no room near their mutex's place in the index",
		       (unsigned long long)lost);
		ms_fmt(&mf, "(the table is not full: %llu of %llu records used); raise "
			    "MUTEXSTAT_TABLE_SIZE (now %llu) to spread it",
		       (unsigned long long)tc.live, (unsigned long long)ms_opt.table_size,
		       (unsigned long long)ms_opt.table_size);
	}
	if (ended || untracked || lost) {
		const char *a = ms_fmt_str(&ff), *b = ms_fmt_str(&mf);
		ms_fmt(f, "%s%s%s\n", a,
		       !*b ? "" : strlen(a) + 1 + strlen(b) > WIDTH ? "\n  " : " ", b);
	}
	if (ended)
		ms_fmt(f, "  their numbers are in no line of this report; raise "
			  "MUTEXSTAT_TABLE_SIZE (now %llu)\n",
		       (unsigned long long)ms_opt.table_size);
	uint64_t gone = tc.destroyed, reinit = tc.reinitialised;
	if (gone || reinit) {
		ms_fmt(f,
		       "  %llu %s destroyed and %llu initialised again: their "
		       "numbers are summed by first-lock site ('N ended')\n",
		       (unsigned long long)gone,
		       locks ? plural(gone, "lock", "locks") : plural(gone, "mutex", "mutexes"),
		       (unsigned long long)reinit);
		/* those never locked have no site, and no line unless they
		 * failed: sort --parallel's 81 destroyed showed 27 in lines */
		uint64_t unlocked = ended_never_locked();
		if (unlocked)
			ms_fmt(f, "  %llu of them %s never locked: no first-lock site, "
				  "so no line unless a call on %s failed\n",
			       (unsigned long long)unlocked, unlocked == 1 ? "was" : "were",
			       unlocked == 1 ? "it" : "one");
		/* past the sites kept, a line sums them all: say it is no site's */
		uint64_t others = ms_site_others_ended();
		if (others)
			ms_fmt(f, "  %llu of them %s first locked at sites past the %u kept: "
				  "one line sums them, \"other sites\"\n",
			       (unsigned long long)others, others == 1 ? "was" : "were",
			       MS_MAX_SITES);
	}
	/* the tracked count above less the table's rows: initialised (or
	 * named) and not locked, as many are -- or not since a reset */
	if (t->idle) {
		ms_fmt(f, "  %llu of the %s tracked %s not locked or tried", (unsigned long long)t->idle,
		       locks ? "locks" : "mutexes", t->idle == 1 ? "was" : "were");
		print_reset(f, " since mutexstat_reset(), %s into the run: no line\n", ": no line\n");
	}
	unsigned long long unloaded = ms_symbols_unloaded();
	if (unloaded)
		ms_fmt(f,
		       "  %llu %s unloaded during the run (dlclose): addresses in %s "
		       "code are shown as addresses,\n  or under the name of what "
		       "the program loaded at the same place later\n",
		       unloaded, unloaded == 1 ? "library was" : "libraries were",
		       unloaded == 1 ? "its" : "their");
	/* the table's noun: "lock" once other kinds are there */
	int mutexes_only = !(t->classes & ~(1u << MS_CLASS_MUTEX));
	const char *noun = mutexes_only ? "mutex" : "lock";
	/* timed from the end of a lock's first wait: not the hold that
	 * made it (whose start nothing read), nor, while no wait has ended,
	 * the holds of a deadlock's locks */
	if (t->timed)
		ms_fmt(f,
		       "  hold times: of the %llu %s%s that made a thread wait, after a wait "
		       "ended: the first %d holds, then 1 in %d\n",
		       (unsigned long long)t->timed, noun,
		       t->timed == 1 ? "" : mutexes_only ? "es" : "s", MS_HOLD_EXACT, MS_HOLD_SAMPLE);
	else
		ms_fmt(f, "  hold times: none timed (a %s's holds are, once a wait for it has "
			  "ended; none has)\n", noun);
	ms_report_stack_summary(f, noun);
	const char *why = ms_symbols_fallback_reason();
	if (why && ms_loader_busy()) /* dladdr would wait as dlopen does */
		ms_fmt(f, "  names: none, addresses only (%.60s; naming code needs "
			  "the dynamic linker's lock, which it holds)\n", why);
	else if (why) /* so that a report without a line number says why */
		ms_fmt(f, "  names: from dladdr (%.60s): exported functions and module "
			  "offsets, no source lines\n", why);
}

/* The top table's "first locked at": the first-lock call site, or, for a
 * live mutex first locked in a wrapper with a stack of its own, the
 * wrapper's caller (stacks/site.h) -- the detail section shows both.  An ended
 * line's key is already that. */
struct held_ctx {
	struct ms_fmt *f;
	uint64_t now;
	int listed; /* the heading is written with the first entry: in a live
		       dump the mutexes counted held may all be free by now */
	int locks; /* a program with other kinds: "Locks", as the header says */
};

static void held_heading(struct held_ctx *h)
{
	if (!h->listed++)
		ms_fmt(h->f, h->locks ? "\nLocks still held:\n" : "\nMutexes still locked:\n");
}

struct alive {
	uint32_t tid;
	int found;
};

static void is_tid(struct ms_tstate *ts, void *arg)
{
	struct alive *a = arg;
	if (LOAD(&ts->tid) == a->tid)
		a->found = 1;
}

/* A thread of ours that holds a mutex has a record until it ends (its
 * HELD AT THREAD EXIT gives the record back), but a key destructor that
 * runs after ours (libunwind's locks a mutex) can make it a new one, kept:
 * the kernel says too whether the thread is still there. */
static int thread_alive(uint32_t tid)
{
	struct alive a = { tid, 0 };
	ms_threads_each(is_tid, &a);
	if (!a.found)
		return 0;
	char path[48];
	struct ms_fmt f;
	ms_fmt_init(&f, path, sizeof path, -1);
	ms_fmt(&f, "/proc/self/task/%u", tid);
	int saved = errno;
	int gone = access(ms_fmt_str(&f), F_OK) != 0 && errno == ENOENT &&
		   access("/proc/self/task", F_OK) == 0;
	errno = saved;
	return !gone;
}

/* The threads that hold a read-write lock for read, from their held sets. */
struct readers_ctx {
	struct ms_fmt *f;
	uint32_t r, n;
};

static void reader_named(struct ms_tstate *ts, void *arg)
{
	struct readers_ctx *q = arg;
	uint32_t n = LOAD(&ts->nheld);
	n = n < MS_HELD_MAX ? n : MS_HELD_MAX;
	for (uint32_t i = 0; i < n; i++)
		if (LOAD(&ts->held[i].rec) == q->r && ms_held_read_live(q->r, LOAD(&ts->held[i].mode))) {
			char site[200];
			if (q->n++ < 8)
				ms_fmt(q->f, "\n    thread %u, taken at %s", LOAD(&ts->tid),
				       ms_symbol_fit((char *)ms_symbolize(LOAD(&ts->held[i].caller),
									  site, sizeof site), 80));
			return;
		}
}

/* Readers that exited holding record r's rwlock: the last one to exit,
 * where it took it, and how many others did (analysis/waitfor.h). */
static void print_exited_readers(struct ms_fmt *f, uint32_t r, uint32_t n, uint32_t tid,
				 uintptr_t at)
{
	char site[200];
	/* in a fork child, those of the parent's threads are among them */
	int parents = ms_fork_orphan_held_by(r, tid);
	uint32_t of_parent = ms_fork_orphan_reads(r);
	uint32_t more_parent = of_parent > (uint32_t)parents ? of_parent - parents : 0;
	if (more_parent > n - 1)
		more_parent = n - 1;
	if (parents) /* as a mutex held since the fork */
		ms_fmt(f, "\n    thread %u of the parent, pid %d (not here)", tid,
		       ms_fork_parent_pid());
	else
		ms_fmt(f, "\n    thread %u (exited)", tid);
	if (at)
		ms_fmt(f, ", taken at %s",
		       ms_symbol_fit((char *)ms_symbolize(at, site, sizeof site), 80));
	if (more_parent)
		ms_fmt(f, "\n    and %u more %s of the parent (not here)", more_parent,
		       plural(more_parent, "thread", "threads"));
	if (n - 1 > more_parent)
		ms_fmt(f, "\n    and %u more %s that exited", n - 1 - more_parent,
		       plural(n - 1 - more_parent, "reader", "readers"));
}

static void print_read_held(struct held_ctx *h, uintptr_t key, uint32_t r)
{
	uint32_t gone_tid = 0;
	uintptr_t gone_at = 0;
	uint32_t gone = ms_waitfor_exited_readers(r, &gone_tid, &gone_at);
	if (!gone && !ms_held_readers(r, 0))
		return;
	held_heading(h);
	ms_fmt(h->f, "  rwlock %p", (void *)key);
	ms_fmt_lock_variable(h->f, key, 40);
	ms_fmt(h->f, " held for read by");
	struct readers_ctx q = { h->f, r, 0 };
	ms_threads_each(reader_named, &q);
	if (q.n > 8)
		ms_fmt(h->f, "\n    and %u more", q.n - 8);
	if (gone)
		print_exited_readers(h->f, r, gone, gone_tid, gone_at);
	ms_fmt(h->f, "\n");
}

static void print_held(uintptr_t key, uint32_t r, void *arg)
{
	struct held_ctx *h = arg;
	const struct ms_record *rec = ms_rec(r);
	uint32_t owner = LOAD(&rec->owner);
	if (!(owner & MS_HELD)) {
		if (ms_lock_class(LOAD(&rec->flags)) == MS_CLASS_RWLOCK)
			print_read_held(h, key, r);
		return;
	}
	const struct ms_cold *c = (LOAD(&rec->flags) & MS_F_COLD) ? &ms_table.cold[r]
								   : NULL;
	char since[16], label[112];
	const char *name = c ? LOAD(&c->name) : NULL;
	struct ms_fmt lf;
	ms_fmt_init(&lf, label, sizeof label, -1);
	/* a lock of another kind says so, as an rwlock held for read does */
	uint32_t class = ms_lock_class(LOAD(&rec->flags));
	if (class != MS_CLASS_MUTEX)
		ms_fmt(&lf, "%s ", ms_lock_noun(LOAD(&rec->flags)));
	ms_fmt(&lf, "%p", (void *)key);
	ms_fmt_lock_variable(&lf, key, 30);
	if (name) {
		ms_fmt(&lf, " \"");
		ms_fmt_name(&lf, name, 30);
		ms_fmt(&lf, "\"");
	}
	uint32_t tid = owner & ~MS_HELD;
	held_heading(h);
	char rest[160];
	struct ms_fmt rf;
	ms_fmt_init(&rf, rest, sizeof rest, -1);
	if (ms_fork_orphan_held_by(r, tid))
		ms_fmt(&rf, "held since the fork by thread %u of the parent, pid %d (not here)",
		       tid, ms_fork_parent_pid());
	else
		ms_fmt(&rf, "held %sby thread %u%s", class == MS_CLASS_RWLOCK ? "for write " : "",
		       tid, thread_alive(tid) ? "" : " (exited)");
	/* a timed hold's start, which the holder's held set keeps (or the
	 * cold part, once the holder has exited); none from before a reset */
	uint64_t start = ms_held_since(tid, r);
	if (!start && c && LOAD(&c->exited_tid) == tid)
		start = LOAD(&c->exited_since);
	if (start < LOAD(&ms_reset_ticks))
		start = 0;
	if (start && h->now > start)
		ms_fmt(&rf, " for %s", ms_duration(since, ms_ticks_to_ns(h->now - start)));
	/* a named mutex held since a fork: what holds it on a line of its
	 * own, so that where it was taken fits the line too */
	size_t used = 2 + strlen(label) + 1 + strlen(rest);
	if (used + 20 + 11 > WIDTH) {
		ms_fmt(h->f, "  %s\n    %s", label, rest);
		used = 4 + strlen(rest);
	} else
		ms_fmt(h->f, "  %s %s", label, rest);
	used += 11; /* and ", taken at " */
	/* where it was taken: the holder's held set says (a recursive mutex's
	 * outermost level -- its history's newest lock entry was a relock's,
	 * which a condition wait may have let go of); else that entry */
	uintptr_t at = ms_held_taken_at(tid, r);
	if (!at)
		at = ms_table_last_taken_at(r);
	char site[200];
	if (at)
		ms_fmt(h->f, ", taken at %s",
		       ms_symbol_fit((char *)ms_symbolize(at, site, sizeof site),
			   used + 60 <= WIDTH ? 60 : WIDTH - used));
	ms_fmt(h->f, "\n");
	/* taken in a lock wrapper: who called it, as HELD AT THREAD EXIT
	 * says */
	ms_report_wrapper_callers(h->f, ms_site_wrapped_first_stack(r, at));
}

/* A misuse's heading, for a lock of this noun (ms_lock_noun). */
static void misuse_text(struct ms_fmt *f, int k, const char *noun)
{
	const char *an = noun[0] == 'r' ? "an" : "a"; /* "an rwlock" */
	switch (k) {
	case MS_M_UNLOCK_UNLOCKED:
		ms_fmt(f, "unlock of %s %s that is not locked", an, noun);
		break;
	case MS_M_UNLOCK_NOT_OWNER:
		ms_fmt(f, "unlock by a thread that does not hold it");
		break;
	case MS_M_DESTROY_LOCKED:
		ms_fmt(f, "destroy of a locked %s", noun);
		break;
	case MS_M_USE_DESTROYED:
		ms_fmt(f, "use of a destroyed %s", noun);
		break;
	default:
		ms_fmt(f, "condition wait on a mutex the thread does not hold");
	}
}

/* The noun of an ended line's locks: one kind's, or "lock". */
static const char *classes_noun(uint32_t classes, int plural_form)
{
	static const char *const nouns[2][4] = {
		{ "mutex", "rwlock", "spin lock", "lock" },
		{ "mutexes", "rwlocks", "spin locks", "locks" },
	};
	int i = classes == 1u << MS_CLASS_RWLOCK ? 1
		: classes == 1u << MS_CLASS_SPIN ? 2
		: classes & ~(1u << MS_CLASS_MUTEX) ? 3 : 0;
	return nouns[plural_form][i];
}

/* An unlock by a thread that does not hold it, in a fork child: the holder
 * may be a thread of the parent, or this thread under its old id. */
static void print_fork_context(struct ms_fmt *f, uint32_t r)
{
	uint32_t parent_thread = ms_fork_orphan_owner(r), mine = ms_fork_own_before(r);
	if (parent_thread)
		ms_fmt(f, "  it was locked when this process forked, by thread %u of the "
			  "parent (pid %d),\n  which this process does not have\n",
		       parent_thread, ms_fork_parent_pid());
	else if (mine)
		ms_fmt(f, "  this thread locked it before the fork, as thread %u of the "
			  "parent: glibc checks\n  the owner of this kind of mutex by thread "
			  "id, and in a fork child the thread has a new one\n", mine);
}

static void print_misuse(uintptr_t key, uint32_t r, void *arg)
{
	struct ms_fmt *f = arg;
	if (!(LOAD(&ms_rec(r)->flags) & MS_F_COLD))
		return;
	const struct ms_cold *c = &ms_table.cold[r];
	for (int k = 0; k < MS_M_COUNT; k++) {
		uint32_t n = LOAD(&c->misuse[k]);
		if (!n)
			continue;
		const char *name = LOAD(&c->name);
		const char *noun = ms_lock_noun(LOAD(&ms_rec(r)->flags));
		char head[128], names[160];
		struct ms_fmt hf;
		ms_fmt_init(&hf, head, sizeof head, -1);
		ms_fmt(&hf, "MISUSE: ");
		misuse_text(&hf, k, noun);
		ms_fmt(&hf, ": %s %p", noun, (void *)key);
		char tail[32]; /* ", 4294967295 times" */
		struct ms_fmt tf;
		ms_fmt_init(&tf, tail, sizeof tail, -1);
		ms_fmt(&tf, ", %u time%s", n, n == 1 ? "" : "s");
		const char *end = ms_fmt_str(&tf);
		struct ms_names_room room = { 40, 30, ms_line_room(strlen(head) + strlen(end)), 0 };
		ms_fmt(f, "%s%s%s\n", ms_fmt_str(&hf),
		       ms_lock_names(names, sizeof names, key, name, &room), end);
		struct ms_op_view v;
		uint32_t stack;
		if (ms_misuse_last(r, (enum ms_misuse)k, &v, &stack)) {
			const char *err = v.err ? strerrorname_np(v.err) : NULL;
			ms_fmt(f, "  last by thread %u, glibc returned %s, at:\n    ", v.tid,
			       err ? err : "0");
			ms_report_stack(f, stack ? stack : ms_site_stack_known(v.caller), 4);
		}
		if (k == MS_M_UNLOCK_NOT_OWNER)
			print_fork_context(f, r);
	}
}

static int site_misuse(void)
{
	for (uint32_t i = 0; i < ms_table.nsites; i++)
		for (int k = 0; k < MS_M_COUNT; k++)
			if (ms_table.sites[i].misuse[k])
				return 1;
	return 0;
}

static void print_site_misuse(struct ms_fmt *f)
{
	const struct ms_table *tb = &ms_table;
	for (uint32_t i = 0; i < tb->nsites; i++) {
		const struct ms_site *s = &tb->sites[i];
		for (int k = 0; k < MS_M_COUNT; k++) {
			if (!s->misuse[k])
				continue;
			char site[200];
			ms_fmt(f, "MISUSE: ");
			misuse_text(f, k, classes_noun(s->classes, 0));
			ms_fmt(f, ": %llu time%s on %s (now ended) ", (unsigned long long)s->misuse[k],
			       s->misuse[k] == 1 ? "" : "s", classes_noun(s->classes, 1));
			if (s->site)
				ms_fmt(f, "first locked at %s\n",
				       ms_symbol_fit((char *)ms_site_name(s->site, site, sizeof site, 0), 60));
			else
				ms_fmt(f, "never locked\n");
			/* where the newest was, as a live lock's says */
			uint64_t m = LOAD(&s->misuse_last[k]);
			if (ms_site_misuse_stack(m)) {
				int e = ms_site_misuse_err(m);
				const char *err = e ? strerrorname_np(e) : NULL;
				ms_fmt(f, "  last by thread %u, glibc returned %s, at:\n    ",
				       ms_site_misuse_tid(m), err ? err : "0");
				ms_report_stack(f, ms_site_misuse_stack(m), 4);
			}
		}
	}
}

/* ---- per-mutex detail ------------------------------------------------ */

/* The recent operations of a live mutex (r) or of an ended line's newest
 * life that waited, failed or was named (site). */
static void print_history(struct ms_fmt *f, uint32_t r, const struct ms_site *site)
{
	struct ms_op_view v[1024 + MS_FAIL_RING];
	uint32_t first, torn;
	uint32_t n = site ? ms_site_history_read(site, v, &first, &torn)
			  : ms_history_read(r, v, &first, &torn);
	/* "at" is when, since the program started, for the operations that
	 * read a clock anyway (waits); a "time" column read as a duration.
	 * Most operations read none: a column of dashes only where no row of
	 * this list has a time would say nothing. */
	uint64_t start = ms_clock_start_ticks();
	int timed = 0;
	for (uint32_t i = first; i < n && !timed; i++)
		timed = v[i].ticks && v[i].ticks > start;
	if (site)
		ms_fmt(f, "  recent operations of the last of them that waited, failed or was "
			  "named, oldest first\n  (order = happened-before order across the "
			  "process%s):\n", timed ? "; at = t+time since start" : "");
	else
		ms_fmt(f, "  recent operations, oldest first (order = happened-before "
			  "order across the process%s):\n", timed ? "; at = t+time since start" : "");
	ms_fmt(f, "  %10s %8s  %-18s %-16s ", "order", "thread", "operation", "result");
	if (timed)
		ms_fmt(f, "%-10s ", "at");
	ms_fmt(f, "caller\n");
	for (uint32_t i = first; i < n; i++) {
		char res[32], when[16], where[256];
		struct ms_fmt rf;
		ms_fmt_init(&rf, res, sizeof res, -1);
		if (v[i].err) {
			const char *e = strerrorname_np(v[i].err);
			ms_fmt(&rf, "%s", e ? e : "error");
		} else
			ms_fmt(&rf, "ok");
		if (v[i].waited)
			ms_fmt(&rf, " after wait");
		if (v[i].ticks && v[i].ticks > start) {
			char d[16];
			ms_fmt_init(&rf, when, sizeof when, -1);
			/* "t+": a time, not the wait's length ("ok after wait
			 * 2.00 s" read as one, of a wait of 634 µs) */
			ms_fmt(&rf, "t+%s", ms_duration(d, ms_ticks_to_ns(v[i].ticks - start)));
		} else {
			when[0] = '-';
			when[1] = 0;
		}
		ms_fmt(f, "  %10llu %8u  %-18s %-16s ", (unsigned long long)v[i].order, v[i].tid,
		       ms_op_name(v[i].op), res);
		if (timed)
			ms_fmt(f, "%-10s ", when);
		ms_fmt(f, "%s\n", ms_symbol_fit((char *)ms_symbolize(v[i].caller, where, sizeof where),
						WIDTH - (timed ? 70 : 59)));
	}
	if (torn)
		ms_fmt(f, "  (%u entries were being overwritten while read)\n", torn);
	if (!n)
		ms_fmt(f, "  (none kept)\n");
}

struct longest {
	uint32_t r;
	uint64_t now, ticks;
};

static void wait_of(struct ms_tstate *ts, void *arg)
{
	struct longest *w = arg;
	uint64_t since = LOAD(&ts->wait_since);
	if (__atomic_load_n(&ts->wait_rec, __ATOMIC_ACQUIRE) == w->r && since &&
	    w->now > since && w->now - since > w->ticks)
		w->ticks = w->now - since;
}

/* The longest wait for record r under way as the report reads it, in
 * ticks (0: none seen): the totals count a wait once it has ended. */
static uint64_t longest_wait_now(uint32_t r)
{
	struct longest w = { r, ms_clock_now_ticks(), 0 };
	ms_threads_each(wait_of, &w);
	return w.ticks;
}

/* A write mode's histogram: both modes' less the reads'; and its maximum,
 * which is both modes' unless the reads' is that (then the upper bound of
 * its highest bucket, at most that, and *exact 0: printed "max <= "). */
static uint64_t writes_only(uint64_t *out, const uint64_t *all, const uint64_t *reads,
			    uint64_t all_max, uint64_t read_max, int *exact)
{
	int top = -1;
	*exact = 1;
	for (int i = 0; i < MS_HIST_BUCKETS; i++) {
		out[i] = all[i] > reads[i] ? all[i] - reads[i] : 0;
		if (out[i])
			top = i;
	}
	if (top < 0)
		return 0;
	if (all_max > read_max)
		return all_max;
	*exact = 0;
	uint64_t bound = top ? 1ull << top : 1;
	return bound < all_max ? bound : all_max;
}

/* A read-write lock's histograms, by mode (all: both modes'). */
static void print_mode_hists(struct ms_fmt *f, const struct ms_line *l, const uint64_t *wait,
			     uint64_t wait_max, const uint64_t *hold, uint64_t hold_max)
{
	uint64_t w[MS_HIST_BUCKETS];
	int exact;
	uint64_t m = writes_only(w, wait, l->rd.hist, wait_max, l->rd.wait_max, &exact);
	ms_report_hist(f, "read wait times, of read waits that got the rwlock", l->rd.hist,
		       MS_HIST_BUCKETS, l->rd.wait_max);
	(exact ? ms_report_hist : ms_report_hist_at_most)(
		f, "write wait times, of write waits that got the rwlock", w, MS_HIST_BUCKETS, m);
	m = writes_only(w, hold, l->rd.hold_hist, hold_max, l->rd.hold_max, &exact);
	ms_report_hist(f, "read hold times, of the read holds timed", l->rd.hold_hist,
		       MS_HIST_BUCKETS, l->rd.hold_max);
	(exact ? ms_report_hist : ms_report_hist_at_most)(
		f, "write hold times, of the write holds timed", w, MS_HIST_BUCKETS, m);
}

static int line_hists(const struct ms_line *l, uint64_t *wait, uint64_t *hold,
		      uint64_t *wait_max, uint64_t *hold_max);

/* The longest write hold, in ns, if the reads' is not the longest of all
 * (*exact 1); else the bound the write hold histogram gives (*exact 0),
 * so that the "held:" line and that histogram say the same. */
static uint64_t write_hold_max(const struct ms_line *l, uint64_t rd_max_ns, int *exact)
{
	*exact = l->hold_max > rd_max_ns;
	if (*exact)
		return l->hold_max;
	uint64_t wait[MS_HIST_BUCKETS], hold[MS_HIST_BUCKETS], w[MS_HIST_BUCKETS];
	uint64_t wait_max, hold_max;
	if (!line_hists(l, wait, hold, &wait_max, &hold_max))
		return l->hold_max;
	uint64_t m = writes_only(w, hold, l->rd.hold_hist, hold_max, l->rd.hold_max, exact);
	*exact = 0;
	uint64_t ns = ms_ticks_to_ns(m);
	return ns && ns < l->hold_max ? ns : l->hold_max;
}

/* The line's reads and writes, for a read-write lock. */
static void print_modes(struct ms_fmt *f, const struct ms_line *l)
{
	if (!(l->classes & (1u << MS_CLASS_RWLOCK)))
		return;
	if (l->reads_unknown) {
		ms_fmt(f, "  reads and writes not told apart: every slot for rwlocks' reads was "
			  "taken (%u rwlocks at once)\n", LOAD(&ms_table.reads_cap));
		return;
	}
	const struct ms_site_reads *rd = &l->rd;
	char a[16], b[16], c[16], d[16];
	/* counters read while they move: never below zero */
	uint64_t writes = l->acquisitions > rd->acquisitions ? l->acquisitions - rd->acquisitions : 0;
	uint64_t wr_contended = l->contended > rd->contended ? l->contended - rd->contended : 0;
	uint64_t wr_holds = l->holds > rd->holds ? l->holds - rd->holds : 0;
	uint64_t rd_hold = ms_ticks_to_ns(rd->hold_total);
	uint64_t wr_hold = l->hold_total > rd_hold ? l->hold_total - rd_hold : 0;
	uint64_t rd_wait = ms_ticks_to_ns(rd->wait_total);
	ms_fmt(f, "  reads %llu (%llu contended, waited %s), writes %llu (%llu contended, "
		  "waited %s); most readers at once %llu\n",
	       (unsigned long long)rd->acquisitions, (unsigned long long)rd->contended,
	       ms_duration(a, rd_wait), (unsigned long long)writes,
	       (unsigned long long)wr_contended,
	       ms_duration(b, l->wait_total > rd_wait ? l->wait_total - rd_wait : 0),
	       (unsigned long long)ms_readers_max(rd));
	ms_fmt(f, "  tryrdlock %llu ok, %llu busy; trywrlock %llu ok, %llu busy; timed out: "
		  "reads %llu, writes %llu\n",
	       (unsigned long long)rd->trylock_ok, (unsigned long long)rd->trylock_busy,
	       (unsigned long long)(l->trylock_ok > rd->trylock_ok ? l->trylock_ok - rd->trylock_ok : 0),
	       (unsigned long long)(l->trylock_busy > rd->trylock_busy
					    ? l->trylock_busy - rd->trylock_busy : 0),
	       (unsigned long long)rd->timeouts,
	       (unsigned long long)(l->timeouts > rd->timeouts ? l->timeouts - rd->timeouts : 0));
	/* the holds' maximum is both modes': the writes' if above the reads' */
	uint64_t rd_max = ms_ticks_to_ns(rd->hold_max);
	int wr_exact = 1;
	uint64_t wr_max = wr_holds ? write_hold_max(l, rd_max, &wr_exact) : 0;
	char e[16];
	/* two lines: with a bound and µs in each, one made 138 columns */
	ms_fmt(f, "  held: reads avg %s max %s, writes avg %s max %s%s (of the holds timed)\n"
		  "  writers waited behind readers %llu time%s, %s\n",
	       rd->holds ? ms_duration(a, rd_hold / rd->holds) : "-",
	       rd->holds ? ms_duration(b, rd_max) : "-",
	       wr_holds ? ms_duration(c, wr_hold / (wr_holds ? wr_holds : 1)) : "-",
	       wr_holds && !wr_exact ? "<= " : "",
	       wr_holds ? ms_duration(d, wr_max) : "-",
	       (unsigned long long)rd->writes_behind_readers,
	       rd->writes_behind_readers == 1 ? "" : "s",
	       ms_duration(e, ms_ticks_to_ns(rd->writes_behind_readers_total)));
}

/* The wait and hold histograms of a live mutex or of an ended line, and
 * their maxima, in ticks; 0 if it has none (it never made a thread wait). */
static int line_hists(const struct ms_line *l, uint64_t *wait, uint64_t *hold,
		      uint64_t *wait_max, uint64_t *hold_max)
{
	if (l->ended) {
		const struct ms_site *s = l->site;
		for (int i = 0; i < MS_HIST_BUCKETS; i++) {
			wait[i] = LOAD(&s->hist[i]);
			hold[i] = LOAD(&s->hold_hist[i]);
		}
		*wait_max = LOAD(&s->got_wait_max);
		*hold_max = LOAD(&s->hold_max);
	} else if (LOAD(&ms_rec(l->r)->flags) & MS_F_COLD) {
		const struct ms_cold *c = &ms_table.cold[l->r];
		ms_hist_widen(wait, c->hist, MS_HIST_BUCKETS);
		ms_hist_widen(hold, c->hold_hist, MS_HIST_BUCKETS);
		*wait_max = LOAD(&c->wait_max);
		*hold_max = LOAD(&c->hold_max);
	} else
		return 0;
	return 1;
}

/* The wait and hold histograms of a live mutex or of an ended line. */
static void print_hists(struct ms_fmt *f, const struct ms_line *l)
{
	uint64_t wait[MS_HIST_BUCKETS], hold[MS_HIST_BUCKETS], wait_max, hold_max;
	if (!line_hists(l, wait, hold, &wait_max, &hold_max))
		return;
	if ((l->classes & (1u << MS_CLASS_RWLOCK)) && !l->reads_unknown) {
		print_mode_hists(f, l, wait, wait_max, hold, hold_max);
		return;
	}
	char label[64];
	struct ms_fmt lf;
	ms_fmt_init(&lf, label, sizeof label, -1);
	ms_fmt(&lf, "wait times, of waits that got the %s", classes_noun(l->classes, 0));
	ms_report_hist(f, label, wait, MS_HIST_BUCKETS, wait_max);
	ms_report_hist(f, "hold times, of the holds timed", hold, MS_HIST_BUCKETS, hold_max);
}

static void print_detail(struct ms_fmt *f, size_t rank, const struct ms_line *l)
{
	char site[256], a[16];
	if (l->ended) {
		/* the site gets what is left of the line */
		char head[128];
		struct ms_fmt hf;
		ms_fmt_init(&hf, head, sizeof head, -1);
		ms_fmt(&hf, "#%zu %llu %s that ended (destroyed or initialised again), "
			    "first locked %s ",
		       rank, (unsigned long long)l->mutexes, classes_noun(l->classes, l->mutexes != 1),
		       l->wrapped && l->key != MS_SITE_OTHERS ? "by a wrapper called at" : "at");
		size_t used = strlen(ms_fmt_str(&hf));
		char fitted[256];
		ms_site_name(l->key, site, sizeof site, 0);
		memcpy(fitted, site, sizeof fitted);
		ms_symbol_fit(fitted, used < WIDTH - 20 ? WIDTH - used : 20);
		/* a site that would lose part of its function's name at the
		 * line's end (C++) gets a line of its own */
		if (!memcmp(fitted, "..", 2) || strstr(fitted, "..."))
			ms_fmt(f, "\n%.*s\n    %s\n", (int)used - 1, head,
			       ms_symbol_fit(site, WIDTH - 4));
		else
			ms_fmt(f, "\n%s%s\n", head, fitted);
		if (l->name) { /* the name the newest of them that had one had */
			ms_fmt(f, "  named \"");
			ms_fmt_name(f, l->name, 100);
			ms_fmt(f, "\"\n");
		}
	} else {
		char kind[80], head[48], names[160];
		struct ms_fmt hf;
		ms_fmt_init(&hf, head, sizeof head, -1);
		ms_fmt(&hf, "#%zu %s %p", rank, ms_lock_noun(LOAD(&ms_rec(l->r)->flags)),
		       (void *)l->key);
		ms_kind_name(kind, sizeof kind, LOAD(&ms_rec(l->r)->flags));
		/* the variable and the name in what the rest leaves of 120 */
		struct ms_names_room room = { 60, 40, ms_line_room(strlen(head) + strlen(kind) + 3), 0 };
		/* where it was first locked: as a stack, further down */
		ms_fmt(f, "\n%s%s (%s)\n", ms_fmt_str(&hf),
		       ms_lock_names(names, sizeof names, l->key, l->name, &room), kind);
	}
	char counts[160], rest[96];
	struct ms_fmt cf, rf;
	ms_fmt_init(&cf, counts, sizeof counts, -1);
	/* what a kind of lock cannot do is not counted: a spin lock has no
	 * timed lock, and only a mutex goes with a condition variable */
	int timed = l->classes != 1u << MS_CLASS_SPIN;
	int conds = !l->classes || (l->classes & 1u << MS_CLASS_MUTEX);
	ms_fmt(&cf, "  trylock %llu ok, %llu busy; ", (unsigned long long)l->trylock_ok,
	       (unsigned long long)l->trylock_busy);
	if (timed)
		ms_fmt(&cf, "timed out %llu; ", (unsigned long long)l->timeouts);
	ms_fmt(&cf, "most waiters at once %llu", (unsigned long long)l->waiters_max);
	if (l->waiting_now) /* a dump while threads wait for it */
		ms_fmt(&cf, " (%llu now)", (unsigned long long)l->waiting_now);
	ms_fmt_init(&rf, rest, sizeof rest, -1);
	if (conds)
		ms_fmt(&rf, "condition waits %llu", (unsigned long long)l->cond_waits);
	/* wait_total holds the waits that timed out too: the mean is over
	 * them all, or it could exceed the maximum (an owner's relock that
	 * timed out waited for itself: no wait) */
	if (l->contended + l->timeout_waits)
		ms_fmt(&rf, "%smean wait %s", conds ? "; " : "",
		       ms_duration(a, l->wait_total / (l->contended + l->timeout_waits)));
	/* big counters (a GIL's millions of condition waits) make two lines */
	const char *c = ms_fmt_str(&cf), *r = ms_fmt_str(&rf);
	if (!*r)
		ms_fmt(f, "%s\n", c);
	else
		ms_fmt(f, "%s;%s%s\n", c, strlen(c) + 2 + strlen(r) > WIDTH ? "\n  " : " ", r);
	print_modes(f, l);
	if (ms_holds_short(l->contended, l->holds, l->hold_total))
		ms_fmt(f, "  short holds (%s on average): the library's own work lengthens each, so threads "
			  "find it taken\n  more often than they would without the library "
			  "(doc/limits.md, \"Short holds\")\n",
		       ms_duration(a, l->hold_total / l->holds));
	/* waits under way are in no total yet (a dump of a hang showed five
	 * threads stuck for a second on a mutex with "wait max 0 ns"): how
	 * long they have waited so far */
	uint64_t longest = l->waiting_now && !l->ended ? longest_wait_now(l->r) : 0;
	if (longest) {
		char d[16];
		ms_fmt(f, "  waiting now: %llu %s, the longest for %s so far (a wait is "
			  "in the totals once it ends)\n",
		       (unsigned long long)l->waiting_now,
		       plural(l->waiting_now, "thread", "threads"),
		       ms_duration(d, ms_ticks_to_ns(longest)));
	}
	int any = 0;
	for (int i = 0; i < MS_E_COUNT; i++) {
		if (!l->errors[i])
			continue;
		const char *e = i == MS_E_OTHER ? "other" : strerrorname_np(ms_err_value((unsigned)i));
		ms_fmt(f, "%s%s %llu", any ? ", " : "  errors returned: ", e,
		       (unsigned long long)l->errors[i]);
		any = 1;
	}
	if (any)
		ms_fmt(f, "\n");
	print_hists(f, l);
	if (l->ended)
		ms_robust_site_note(f, l->key, l->errors);
	else
		ms_robust_note(f, l->r);
	if (l->ended) {
		ms_report_site_stacks(f, l->site);
		if (LOAD(&l->site->history))
			print_history(f, 0, l->site);
		return;
	}
	ms_report_mutex_stacks(f, l->r);
	print_history(f, l->r, NULL);
}

/* ---- the whole report ------------------------------------------------ */

/* The MISUSE lines: the relocks glibc refused, then (misuse: there are
 * some) the misuse counted by lock and by site. */
static void print_misuse_all(struct ms_fmt *f, int misuse)
{
	if (!misuse && !ms_findings_print_refused(NULL))
		return;
	ms_fmt(f, "\n");
	ms_findings_print_refused(f);
	if (misuse) {
		ms_table_each(print_misuse, f);
		print_site_misuse(f);
	}
}

/* The findings (and, with misuse, the misuse) into f, less those
 * MUTEXSTAT_SUPPRESSIONS leaves out, and with say, what the rules did.
 * Returns the failing ones kept.  Each is printed into a scratch mapping
 * first (reserved, touched only as far as written), where the rules read
 * it whole. */
static int findings_kept(struct ms_fmt *f, int misuse, int say)
{
	const size_t cap = 64u << 20;
	char *text = mmap(NULL, cap, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	struct ms_fmt scratch;
	int failing;
	if (text == MAP_FAILED) { /* straight out, unfiltered */
		failing = ms_findings_print(f);
		print_misuse_all(f, misuse);
		return failing;
	}
	ms_fmt_init(&scratch, text, cap, -1);
	failing = ms_findings_print(&scratch);
	print_misuse_all(&scratch, misuse);
	ms_suppress_begin();
	failing -= ms_suppress_filter(ms_fmt_str(&scratch), f);
	if (say)
		ms_suppress_print(f);
	munmap(text, cap);
	return failing > 0 ? failing : 0;
}

/* The read holds in thread ts's held set, added to *arg: a read hold sets
 * no owner in its record, so collect() does not count its lock held. */
static void count_reads(struct ms_tstate *ts, void *arg)
{
	uint32_t n = LOAD(&ts->nheld);
	n = n < MS_HELD_MAX ? n : MS_HELD_MAX;
	for (uint32_t i = 0; i < n; i++)
		*(uint64_t *)arg += ms_held_read_live(LOAD(&ts->held[i].rec),
						       LOAD(&ts->held[i].mode));
}

/* The report's top table, ranked (its memory: munmap t->lines, the size
 * returned, once done). */
static size_t top_build(struct top *t)
{
	size_t bytes = (ms_opt.top * sizeof(struct ms_line) + 4095) & ~(size_t)4095;
	t->lines = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t->lines == MAP_FAILED) {
		t->lines = NULL;
		bytes = 0;
	}
	t->cap = t->lines ? ms_opt.top : 0;
	if (__atomic_load_n(&ms_table.ready, __ATOMIC_ACQUIRE)) {
		ms_threads_each(count_reads, &t->reads_held);
		ms_table_each(collect, t);
		for (uint32_t i = 0; i < LOAD(&ms_table.nsites); i++) {
			struct ms_line l;
			struct ms_site sv;
			ms_table_site(i, &sv);
			ms_line_from_site(&l, &sv, i);
			t->timed += sv.timed_mutexes; /* ended: in the header's count */
			if (is_used(&l)) {
				t->classes |= l.classes; /* and in its noun */
				top_offer(t, &l);
			}
		}
		ms_lines_sort(t->lines, sizeof *t->lines, t->n);
	}
	return bytes;
}

/* Every name the top table and the sections will print, looked up once
 * into a buffer nobody reads: the modules' symbols are read then. */
static void warm_names(const struct top *t)
{
	char buf[4096], site[256];
	struct ms_fmt scratch;
	ms_fmt_init(&scratch, buf, sizeof buf, -1);
	for (size_t i = 0; i < t->n; i++) {
		(void)ms_symbolize_short(ms_line_site(&t->lines[i]), site, sizeof site);
		print_detail(&scratch, i + 1, &t->lines[i]);
		scratch.len = 0;
	}
}

/* Nothing to report: no mutex used, held or misused, none destroyed, no
 * thread waiting in its first lock, no stall. */
static int nothing_locked(const struct top *t)
{
	struct ms_table_counts tc;
	ms_table_counts(&tc);
	return !t->n && !t->held && !t->reads_held && !t->misused && !tc.destroyed &&
	       !ms_waitfor_waiting() && !ms_findings_each_stall(NULL, NULL);
}

int ms_report_locked_nothing(void)
{
	struct top t = { 0 };
	size_t bytes = top_build(&t);
	int nothing = nothing_locked(&t);
	if (t.lines)
		munmap(t.lines, bytes);
	return nothing;
}

void ms_report_each_top(void (*fn)(const struct ms_top_line *l, void *arg), void *arg)
{
	struct top t = { 0 };
	size_t bytes = top_build(&t);
	ms_symbols_begin();
	for (size_t i = 0; i < t.n; i++) {
		const struct ms_line *l = &t.lines[i];
		struct ms_top_line out = { .name = l->name, .wait_ns = l->wait_total,
					   .contended = l->contended,
					   .acquisitions = l->acquisitions };
		if (l->first_caller)
			ms_site_name(ms_line_site(l), out.site, sizeof out.site, 0);
		else
			strcpy(out.site, "(never locked)");
		fn(&out, arg);
	}
	ms_symbols_end();
	if (t.lines)
		munmap(t.lines, bytes);
}

static int report_lock;
int ms_report_failing;

__thread int ms_report_writing_last __attribute__((tls_model("initial-exec")));
__thread const char *ms_report_occasion __attribute__((tls_model("initial-exec")));
int ms_report_abandoned;

/* The child of a fork made while another thread wrote a report: that
 * thread is not in the child, and neither is its hold on the lock. */
void ms_report_text_after_fork_child(void)
{
	report_lock = 0;
	ms_report_abandoned = 0;
	ms_output_after_fork_child();
}

int ms_report(int fd)
{
	struct ms_thread *self = &ms_self;
	if (fd < 0)
		return -1;
	int cancel = ms_cancel_off(); /* writes, and symbols open files */
	ms_guard_enter(self);
	ms_blame_readers(1); /* the blame lines stay put (blame.c) */
	if (ms_report_lock_take(&report_lock, ms_report_writing_last, NULL) != 0) {
		__atomic_store_n(&ms_report_abandoned, 1, __ATOMIC_RELAXED);
		ms_blame_readers(-1);
		ms_guard_leave(self);
		ms_cancel_restore(cancel);
		return -1;
	}
	ms_stack_report_begin(); /* no fork meanwhile: stack.h */
	ms_clock_report_begin();
	ms_symbols_begin();
	int saved = errno;
	char buf[8192];
	errno = 0;
	struct ms_fmt f;
	ms_fmt_init(&f, buf, sizeof buf, fd);

	struct top t = { 0 };
	int failing = 0;
	size_t bytes = top_build(&t);
	if (!ms_report_writing_last && t.n) {
		/* A live dump names its code first, then reads the numbers
		 * it prints: the first lookup in a module reads its symbols
		 * (50 ms for libpython, 300 for libjvm), and the top table,
		 * read before that, and the sections, read after, disagreed
		 * by that much of a busy program's locking. */
		warm_names(&t);
		if (t.lines)
			munmap(t.lines, bytes);
		memset(&t, 0, sizeof t);
		bytes = top_build(&t);
	}

	/* one line for a program that locked nothing -- unless a thread is
	 * blocked in its first lock (a live dump of a hang) */
	if (nothing_locked(&t)) {
		char run[16], name[64];
		ms_fmt(&f, "mutexstat: %s (pid %d) ran %s and locked no mutexes",
		       ms_name_cut(name, sizeof name, ms_program_name(), PROGRAM_COLS),
		       (int)getpid(), ms_duration(run, ms_run_ns()));
		print_reset(&f, " since mutexstat_reset(), %s into the run\n", "\n");
		print_untracked_kinds(&f);
		print_unfollowed_threads(&f);
		if (ms_report_loaded_late)
			ms_fmt(&f, "%s", loaded_late_note);
		print_kept_notes(&f);
	} else {
		header(&f, &t);
		/* Findings first, each under a heading a script can grep. */
		failing = findings_kept(&f, t.misused || site_misuse(), 1);
		if (t.n) { /* none when the only thread waits in its first lock */
			ms_top_table(&f, t.lines, sizeof *t.lines, t.n, "", t.classes);
			/* under the table, apart: a script reads its rows up
			 * to the blank line */
			if (t.offered > t.n)
				ms_fmt(&f, "\n(%zu more not listed: MUTEXSTAT_TOP, the launcher's "
					   "--top)\n", t.offered - t.n);
		}
		if (t.held || t.reads_held) {
			struct held_ctx h = { &f, ms_clock_now_ticks(), 0,
					      (t.classes & ~(1u << MS_CLASS_MUTEX)) != 0 };
			ms_table_each(print_held, &h);
		}
		if (!ms_report_writing_last) /* a live dump */
			ms_cond_waits_print(&f, ms_clock_now_ticks());
		for (size_t i = 0; i < t.n; i++)
			print_detail(&f, i + 1, &t.lines[i]);
	}
	ms_fmt_flush(&f);
	__atomic_store_n(&ms_report_failing, failing, __ATOMIC_RELAXED);
	if (t.lines)
		munmap(t.lines, bytes);
	ms_symbols_end();
	ms_clock_report_end();
	ms_stack_report_end();
	errno = saved;
	ms_report_lock_give(&report_lock);
	ms_blame_readers(-1);
	ms_guard_leave(self);
	ms_cancel_restore(cancel);
	if (f.failed)
		errno = f.failed;
	return f.failed ? -1 : 0;
}

/* MUTEXSTAT_EXIT_CODE reads the count of failing findings that the last
 * text report left: with no text report at exit (MUTEXSTAT_FORMAT=json,
 * say) that was none -- exit status 0 over a POTENTIAL DEADLOCK -- or a
 * mutexstat_dump()'s from before the findings.  They are counted here,
 * printed nowhere. */
void ms_report_count_failing(void)
{
	char buf[256];
	struct ms_fmt f;
	ms_fmt_init(&f, buf, sizeof buf, -1);
	ms_guard_enter(&ms_self);
	if (ms_report_lock_take(&report_lock, 1, NULL) == 0) {
		ms_symbols_begin();
		int failing = findings_kept(&f, 0, 0);
		ms_symbols_end();
		__atomic_store_n(&ms_report_failing, failing, __ATOMIC_RELAXED);
		ms_report_lock_give(&report_lock);
	}
	ms_guard_leave(&ms_self);
}

int ms_report_findings_text(char *buf, size_t cap)
{
	struct ms_fmt f;
	ms_fmt_init(&f, buf, cap, -1);
	int failing = 0;
	ms_guard_enter(&ms_self);
	if (ms_report_lock_take(&report_lock, 1, NULL) == 0) {
		ms_symbols_begin();
		failing = findings_kept(&f, 1, 0);
		ms_symbols_end();
		ms_report_lock_give(&report_lock);
	}
	ms_guard_leave(&ms_self);
	ms_fmt_str(&f);
	return failing;
}

struct ms_crash ms_crash;

const char *ms_crash_describe(char *out, unsigned cap)
{
	struct ms_fmt f;
	ms_fmt_init(&f, out, cap, -1);
	int sig = __atomic_load_n(&ms_crash.signal, __ATOMIC_ACQUIRE);
	if (sig) {
		char name[16];
		ms_fmt(&f, "  crash: SIG%s ", sigabbrev_np(sig));
		if (!ms_crash.sent)
			ms_fmt(&f, "(a fault at address %p)", (void *)ms_crash.address);
		else if (ms_crash.sender_pid == (int)getpid())
			ms_fmt(&f, "(raised by the process itself)");
		else
			ms_fmt(&f, "(sent by pid %d)", ms_crash.sender_pid);
		ms_fmt(&f, " in thread %u \"%s\"; the usual effect follows\n",
		       ms_crash.tid, ms_thread_name(ms_crash.tid, name));
	}
	return ms_fmt_str(&f);
}
