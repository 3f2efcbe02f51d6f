/* out_json.c - the report as one JSON document; see out_json.h.
 *
 * The same sources as the text report (report.c): the counters of each
 * live record read as from_record() reads them, the ended mutexes of each
 * first-lock site, the threads' records, and the findings.  Written
 * through json_writer.h.  Times are nanoseconds; addresses are
 * strings "0x..."; what is unknown is null. */
#define _GNU_SOURCE
#include "report/out_json.h"
#include "report/json_writer.h"
#include "report/interval_lines.h"
#include "report/lines.h"
#include "report/report_hist.h"
#include "report/span.h"
#include "report/suppress.h"
#include "report/kinds.h"
#include "report/out_modes.h"
#include "report/report.h"
#include "base/output.h"
#include "analysis/blame.h"
#include "base/clock.h"
#include "stacks/depot.h"
#include "analysis/findings.h"
#include "analysis/misuse.h"
#include "core/forked.h"
#include "base/fmt.h"
#include "base/internal.h"
#include "analysis/waitfor.h"
#include "stacks/where_now.h"
#include "base/options.h"
#include "analysis/order.h"
#include "record/record.h"
#include "stacks/site.h"
#include "report/report_stacks.h"
#include "analysis/robust.h"
#include "stacks/symbols.h"
#include "core/table.h"
#include "report/kinds.h"
#include "core/thread.h"
#include "core/thread_pool.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---- MUTEXSTAT_SUPPRESSIONS -------------------------------------------- */

/* While a finding is written, the function, source file and module of
 * each of its frames and the variables and names of its locks are what
 * the rules are matched against, as in the text report (suppress.h), in
 * its order: its "suppressed_by" is the first rule that matches one. */
static struct {
	const char *kind; /* the rules' name of the finding's kind; NULL none */
	int paused;       /* writing what the text report does not show */
	char rule[320];   /* KIND:PATTERN, a pattern up to 255 bytes */
} sup;

static void sup_begin(const char *kind)
{
	sup.kind = kind;
	sup.rule[0] = 0;
}

static void sup_word(const char *word)
{
	if (sup.kind && !sup.paused && word && *word && !sup.rule[0])
		(void)ms_suppress_rule_for(sup.kind, word, sup.rule, sizeof sup.rule);
}

/* The function, source file and module of frame fr. */
static void sup_frame(const struct ms_frame *fr)
{
	sup_word(fr->func);
	sup_word(fr->file);
	sup_word(fr->module);
}

/* A lock's name, cut as the text report prints it. */
static void sup_name(const char *name)
{
	char cut[40];
	if (name)
		sup_word(ms_name_cut(cut, sizeof cut, name, 30));
}

/* A lock's variable, cut as the text report prints it (kinds.h), where
 * a rule may match it: the look-up costs, and a report without rules has
 * no use for it. */
static void sup_variable(uintptr_t key)
{
	char var[200];
	if (sup.kind && !sup.paused && !sup.rule[0] && key && ms_suppress_any())
		sup_word(ms_lock_variable(var, sizeof var, key, 40));
}

/* A lock as the text report names it: its variable, then its name. */
static void sup_lock(uintptr_t key, const char *name)
{
	sup_variable(key);
	sup_name(name);
}

/* "suppressed_by", the last field of the finding's object. */
static void sup_end(struct ms_jw *j)
{
	ms_jw_str(j, "suppressed_by", sup.kind && sup.rule[0] ? sup.rule : NULL);
	sup.kind = NULL;
}

/* ---- code addresses and stacks ---------------------------------------- */

/* {address, function, offset, file, line, module}, unknown parts null;
 * the whole frame null for address 0. */
/* "symbol": the variable a lock is ("cache_lock", "accounts+0x18"), or
 * null for one on the heap or a stack (stacks/symbols.h). */
static void symbol_as(struct ms_jw *j, const char *field, uintptr_t key)
{
	char var[MS_VARIABLE_CAP];
	ms_jw_str(j, field, ms_lock_symbol(key, var, sizeof var) ? var : NULL);
}

static void symbol(struct ms_jw *j, uintptr_t key)
{
	symbol_as(j, "symbol", key);
}

static void frame(struct ms_jw *j, const char *key, uintptr_t a)
{
	if (!a || a == MS_SITE_OTHERS) { /* never locked, or sites past the limit */
		ms_jw_null(j, key);
		return;
	}
	struct ms_frame fr;
	int in_module = ms_symbolize_frame(a, 1, &fr) == 0;
	sup_frame(&fr);
	ms_jw_obj(j, key);
	ms_jw_addr(j, "address", a);
	ms_jw_str_or_null(j, "function", fr.func);
	if (in_module)
		ms_jw_num(j, "offset", fr.offset);
	else
		ms_jw_null(j, "offset");
	ms_jw_str_or_null(j, "file", fr.file);
	if (fr.line > 0)
		ms_jw_num(j, "line", (uint64_t)fr.line);
	else
		ms_jw_null(j, "line");
	ms_jw_str_or_null(j, "module", fr.module);
	ms_jw_obj_end(j);
}

/* The frames shown in the text report, innermost first, from frame
 * `first` on; null if the stack was not captured (or has no more). */
static void stack_from(struct ms_jw *j, const char *key, ms_stack_id id, int first)
{
	const uintptr_t *frames;
	int n = id ? ms_depot_get(id, &frames) : 0;
	int shown = n ? ms_stack_shown(frames, n) : 0;
	if (first >= shown) {
		ms_jw_null(j, key);
		return;
	}
	ms_jw_arr(j, key);
	for (int i = first; i < shown; i++)
		frame(j, NULL, frames[i]);
	ms_jw_arr_end(j);
}

static void stack(struct ms_jw *j, const char *key, ms_stack_id id)
{
	stack_from(j, key, id, 0);
}

/* Where a mutex was first locked or initialised: the call site's stack,
 * or, where that was taken for an earlier mutex (MS_SITE_SHARED), the site
 * alone -- the frames below it may be another mutex's. */
static void site_stack(struct ms_jw *j, const char *key, uint32_t id)
{
	const uintptr_t *frames;
	if (!(id & MS_SITE_SHARED) || !ms_depot_get(id & ~MS_SITE_SHARED, &frames)) {
		stack(j, key, id & ~MS_SITE_SHARED);
		return;
	}
	ms_jw_arr(j, key);
	frame(j, NULL, frames[0]);
	ms_jw_arr_end(j);
}

/* ---- counters ----------------------------------------------------------- */

static const char *const misuse_key[MS_M_COUNT] = {
	"unlock_unlocked", "unlock_not_owner", "destroy_locked", "use_destroyed",
	"cond_wait_not_held",
};

/* "errors": the count of each errno glibc answered (none: not listed) */
static void errors_obj(struct ms_jw *j, const uint64_t *e)
{
	ms_jw_obj(j, "errors");
	for (int i = 0; i < MS_E_COUNT; i++) {
		if (!e[i])
			continue;
		const char *name = i == MS_E_OTHER ? "other"
				   : strerrorname_np(ms_err_value((unsigned)i));
		ms_jw_num(j, name ? name : "other", e[i]);
	}
	ms_jw_obj_end(j);
}

/* "misuse": the count of each kind, all of them listed */
static void misuse_obj(struct ms_jw *j, const uint64_t *m)
{
	ms_jw_obj(j, "misuse");
	for (int i = 0; i < MS_M_COUNT; i++)
		ms_jw_num(j, misuse_key[i], m[i]);
	ms_jw_obj_end(j);
}

/* What became of a robust mutex whose owner died (robust.h); null if its
 * owner never died. */
static void owner_died(struct ms_jw *j, int died, const struct ms_robust_view *v)
{
	if (!died) {
		ms_jw_null(j, "owner_died");
		return;
	}
	ms_jw_obj(j, "owner_died");
	ms_jw_num(j, "times", v->died);
	ms_jw_num(j, "made_consistent", v->consistent);
	ms_jw_num(j, "unlocked_inconsistent", v->left);
	ms_jw_boolean(j, "not_recoverable", v->not_recoverable);
	frame(j, "last_eownerdead_at", v->last_at);
	ms_jw_obj_end(j);
}

/* Bucket i holds [2^(i-1), 2^i) ticks (bucket 0: 0 ticks); bounds in ns. */
static uint64_t bucket_lo(int i)
{
	return i <= 0 ? 0 : ms_ticks_to_ns(1ull << (i - 1 < 63 ? i - 1 : 63));
}

static uint64_t bucket_hi(int i)
{
	return ms_ticks_to_ns(1ull << (i < 63 ? i : 63));
}

static void hist32(struct ms_jw *j, const char *key, const uint32_t *h)
{
	ms_jw_arr(j, key);
	for (int i = 0; i < MS_HIST_BUCKETS; i++) {
		uint32_t n = LOAD(&h[i]);
		if (!n)
			continue;
		ms_jw_obj(j, NULL);
		ms_jw_num(j, "lo_ns", bucket_lo(i));
		ms_jw_num(j, "hi_ns", bucket_hi(i));
		ms_jw_num(j, "count", n);
		ms_jw_obj_end(j);
	}
	ms_jw_arr_end(j);
}

static void hist64(struct ms_jw *j, const char *key, const uint64_t *h)
{
	ms_jw_arr(j, key);
	for (int i = 0; i < MS_HIST_BUCKETS; i++) {
		if (!h[i])
			continue;
		ms_jw_obj(j, NULL);
		ms_jw_num(j, "lo_ns", bucket_lo(i));
		ms_jw_num(j, "hi_ns", bucket_hi(i));
		ms_jw_num(j, "count", h[i]);
		ms_jw_obj_end(j);
	}
	ms_jw_arr_end(j);
}

static void hold(struct ms_jw *j, uint64_t holds, uint64_t total_ticks,
		 uint64_t max_ticks)
{
	if (!holds) {
		ms_jw_null(j, "hold");
		return;
	}
	ms_jw_obj(j, "hold");
	ms_jw_num(j, "timed", holds);
	ms_jw_num(j, "total_ns", ms_ticks_to_ns(total_ticks));
	ms_jw_num(j, "mean_ns", ms_ticks_to_ns(total_ticks) / holds);
	ms_jw_num(j, "max_ns", ms_ticks_to_ns(max_ticks));
	ms_jw_obj_end(j);
}

/* The text's "short holds" line (lines.h): a lock that made threads wait
 * and whose holds the library's own work lengthens noticeably. */
static void short_holds(struct ms_jw *j, uint64_t contended, uint64_t holds,
			uint64_t total_ns)
{
	ms_jw_boolean(j, "short_holds", ms_holds_short(contended, holds, total_ns));
}

/* ---- a read-write lock's reads and writes ------------------------------ */

/* One mode's numbers, or both modes'.  Times in nanoseconds, so that the
 * writes' (both less the reads') and the reads' add up to the lock's to
 * the nanosecond.  A maximum of UNKNOWN is not known: a read's was the
 * longest, and the writes' is not kept apart. */
#define UNKNOWN UINT64_MAX
struct mode {
	uint64_t acquisitions, contended, trylock_ok, trylock_busy, timeouts;
	uint64_t wait_total, wait_max, holds, hold_total, hold_max;
	uint64_t hist[MS_HIST_BUCKETS], hold_hist[MS_HIST_BUCKETS];
};

static uint64_t ns(uint64_t ticks)
{
	return ms_ticks_to_ns(ticks);
}

static uint64_t less(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0; /* counters read while they move */
}

static void reads_mode(struct mode *m, const struct ms_site_reads *rd)
{
	*m = (struct mode){
		rd->acquisitions, rd->contended, rd->trylock_ok, rd->trylock_busy,
		rd->timeouts, ns(rd->wait_total), ns(rd->wait_max), rd->holds,
		ns(rd->hold_total), ns(rd->hold_max), { 0 }, { 0 },
	};
	memcpy(m->hist, rd->hist, sizeof m->hist);
	memcpy(m->hold_hist, rd->hold_hist, sizeof m->hold_hist);
}

/* The writes' maximum: both modes' if above the reads' (then a write's),
 * 0 without writes, else not known. */
static uint64_t writes_max(uint64_t writes, uint64_t all, uint64_t reads)
{
	return !writes ? 0 : all > reads ? all : UNKNOWN;
}

/* The writes: both modes' numbers less the reads'.  The wait total keeps
 * the waits that timed out, of both modes (not kept apart), so reads and
 * writes add up to the lock's wait_total_ns. */
static void writes_mode(struct mode *w, const struct mode *all, const struct mode *r)
{
	w->acquisitions = less(all->acquisitions, r->acquisitions);
	w->contended = less(all->contended, r->contended);
	w->trylock_ok = less(all->trylock_ok, r->trylock_ok);
	w->trylock_busy = less(all->trylock_busy, r->trylock_busy);
	w->timeouts = less(all->timeouts, r->timeouts);
	w->wait_total = less(all->wait_total, r->wait_total);
	w->wait_max = writes_max(w->contended, all->wait_max, r->wait_max);
	w->holds = less(all->holds, r->holds);
	w->hold_total = less(all->hold_total, r->hold_total);
	w->hold_max = writes_max(w->holds, all->hold_max, r->hold_max);
	for (int i = 0; i < MS_HIST_BUCKETS; i++) {
		w->hist[i] = less(all->hist[i], r->hist[i]);
		w->hold_hist[i] = less(all->hold_hist[i], r->hold_hist[i]);
	}
}

static void max_ns(struct ms_jw *j, const char *key, uint64_t v)
{
	if (v == UNKNOWN)
		ms_jw_null(j, key);
	else
		ms_jw_num(j, key, v);
}

static void hold_and_histograms(struct ms_jw *j, const struct mode *m);

/* One mode's fields, in the object the caller opened: the lock's names
 * for the same numbers. */
static void mode_fields(struct ms_jw *j, const struct mode *m)
{
	ms_jw_num(j, "acquisitions", m->acquisitions);
	ms_jw_num(j, "contended", m->contended);
	ms_jw_num(j, "trylock_ok", m->trylock_ok);
	ms_jw_num(j, "trylock_busy", m->trylock_busy);
	ms_jw_num(j, "timeouts", m->timeouts);
	ms_jw_num(j, "wait_total_ns", m->wait_total);
	max_ns(j, "wait_max_ns", m->wait_max);
	hold_and_histograms(j, m);
}

/* "hold" and "histograms" of a mode, or of a lock's interval. */
static void hold_and_histograms(struct ms_jw *j, const struct mode *m)
{
	if (m->holds) {
		ms_jw_obj(j, "hold");
		ms_jw_num(j, "timed", m->holds);
		ms_jw_num(j, "total_ns", m->hold_total);
		ms_jw_num(j, "mean_ns", m->hold_total / m->holds);
		max_ns(j, "max_ns", m->hold_max);
		ms_jw_obj_end(j);
	} else
		ms_jw_null(j, "hold");
	ms_jw_obj(j, "histograms");
	hist64(j, "wait", m->hist);
	hist64(j, "hold", m->hold_hist);
	ms_jw_obj_end(j);
}

/* Other locks have no "reads" and "writes". */
static void no_modes(struct ms_jw *j)
{
	ms_jw_null(j, "reads");
	ms_jw_null(j, "writes");
}

/* "reads" and "writes" of a read-write lock, or of a site line with
 * some.  readers_now: a live lock's, NULL ended.  readers_max null for
 * an interval's (the most at once is the run's, kept by no interval). */
static void modes(struct ms_jw *j, const struct mode *all, const struct ms_site_reads *rd,
		  const uint32_t *readers_now, int interval)
{
	struct mode r, w;
	reads_mode(&r, rd);
	writes_mode(&w, all, &r);
	ms_jw_obj(j, "reads");
	mode_fields(j, &r);
	if (interval)
		ms_jw_null(j, "readers_max");
	else
		ms_jw_num(j, "readers_max", ms_readers_max(rd));
	if (readers_now)
		ms_jw_num(j, "readers_now", *readers_now);
	else
		ms_jw_null(j, "readers_now");
	ms_jw_obj_end(j);
	ms_jw_obj(j, "writes");
	mode_fields(j, &w);
	/* write waits that began while readers held the lock */
	ms_jw_num(j, "behind_readers", rd->writes_behind_readers);
	ms_jw_num(j, "behind_readers_wait_ns", ms_ticks_to_ns(rd->writes_behind_readers_total));
	ms_jw_obj_end(j);
}

/* A live lock's reads and writes (z: its cold part, or zeros). */
static void live_modes(struct ms_jw *j, uint32_t r, uint32_t flags, const struct ms_cold *z)
{
	if (ms_lock_class(flags) != MS_CLASS_RWLOCK) {
		no_modes(j);
		return;
	}
	struct mode all = {
		ms_rec_acquisitions(r), LOAD(&z->contended), LOAD(&z->trylock_ok),
		LOAD(&z->trylock_busy), LOAD(&z->timeouts),
		ns(LOAD(&z->wait_total) + LOAD(&z->timeout_wait_total)), ns(LOAD(&z->wait_max)),
		LOAD(&z->holds), ns(LOAD(&z->hold_total)), ns(LOAD(&z->hold_max)), { 0 }, { 0 },
	};
	for (int i = 0; i < MS_HIST_BUCKETS; i++) {
		all.hist[i] = LOAD(&z->hist[i]);
		all.hold_hist[i] = LOAD(&z->hold_hist[i]);
	}
	struct ms_site_reads rd;
	ms_rw_reads_of(&rd, r);
	uint32_t now = ms_held_readers(r, 0);
	modes(j, &all, &rd, &now, 0);
}

/* A site line's, its ended lives' summed. */
static void site_modes(struct ms_jw *j, const struct ms_site *s)
{
	if (!(s->classes & (1u << MS_CLASS_RWLOCK))) {
		no_modes(j);
		return;
	}
	struct mode all = {
		s->acquisitions, s->contended, s->trylock_ok, s->trylock_busy, s->timeouts,
		ns(s->wait_total), ns(s->got_wait_max), s->holds, ns(s->hold_total),
		ns(s->hold_max), { 0 }, { 0 },
	};
	memcpy(all.hist, s->hist, sizeof all.hist);
	memcpy(all.hold_hist, s->hold_hist, sizeof all.hold_hist);
	modes(j, &all, &s->rd, NULL, 0);
}

/* ---- one live mutex ----------------------------------------------------- */

/* Who waited or who made them wait: the blame lines of a mutex life
 * (birth) or of a site line (0) in list; with the mode of each stack,
 * for a read-write lock's (calls, NULL for other locks: no "mode"). */
static void blame(struct ms_jw *j, const char *key, const struct ms_blame *list,
		  uint64_t birth, enum ms_blame_kind kind, const struct ms_out_calls *calls)
{
	struct ms_ns_parts parts = { 0, 0 };
	ms_jw_arr(j, key);
	for (const struct ms_blame *b = list; b; b = b->next) {
		if (b->birth != birth || b->kind != (uint32_t)kind)
			continue;
		ms_jw_obj(j, NULL);
		ms_jw_num(j, "count", LOAD(&b->count));
		uint64_t total_ns = ms_ns_part(&parts, LOAD(&b->total));
		ms_jw_num(j, "total_ns", total_ns);
		/* the total is rounded as the stacks' running sum is, up to
		 * 1 ns under its own: a stack of one wait read its max over it */
		uint64_t max_ns = ms_ticks_to_ns(LOAD(&b->max));
		ms_jw_num(j, "max_ns", max_ns < total_ns ? max_ns : total_ns);
		if (calls)
			ms_jw_str(j, "mode", ms_out_stack_mode(calls, b->stack));
		else
			ms_jw_null(j, "mode");
		stack(j, "stack", b->stack);
		ms_jw_obj_end(j);
	}
	ms_jw_arr_end(j);
}

/* Its recent operations, read as report.c's print_history reads them: a
 * live mutex's (r), or those a site line keeps of its newest life that
 * waited, failed or was named (site). */
static void history(struct ms_jw *j, uint32_t r, const struct ms_site *site)
{
	struct ms_op_view v[1024 + MS_FAIL_RING];
	uint32_t first, torn;
	uint32_t n = site ? ms_site_history_read(site, v, &first, &torn)
			  : ms_history_read(r, v, &first, &torn);
	uint64_t start = ms_clock_start_ticks();
	ms_jw_arr(j, "recent_operations");
	for (uint32_t i = first; i < n; i++) {
		ms_jw_obj(j, NULL);
		ms_jw_num(j, "order", v[i].order);
		ms_jw_num(j, "thread", v[i].tid);
		ms_jw_str(j, "op", ms_op_name(v[i].op));
		/* a read-write lock's: read or write; null for other locks,
		 * init, destroy, and an unlock whose mode was not known */
		ms_jw_str(j, "mode", ms_out_op_mode(v[i].op));
		if (v[i].err) {
			const char *e = strerrorname_np(v[i].err);
			ms_jw_str(j, "result", e ? e : "error");
		} else
			ms_jw_str(j, "result", "ok");
		ms_jw_boolean(j, "waited", v[i].waited);
		if (v[i].ticks && v[i].ticks > start)
			ms_jw_num(j, "time_ns", ms_ticks_to_ns(v[i].ticks - start));
		else
			ms_jw_null(j, "time_ns");
		frame(j, "caller", v[i].caller);
		ms_jw_obj_end(j);
	}
	ms_jw_arr_end(j);
	ms_jw_num(j, "recent_operations_torn", torn);
}

struct mutex_ctx {
	struct ms_jw *j;
	uint64_t live;
};

static void one_mutex(uintptr_t key, uint32_t r, void *arg)
{
	struct mutex_ctx *m = arg;
	struct ms_jw *j = m->j;
	const struct ms_record *rec = ms_rec(r);
	uint32_t flags = LOAD(&rec->flags);
	const struct ms_cold *c = (flags & MS_F_COLD) ? &ms_table.cold[r] : NULL;
	static const struct ms_cold zero;
	const struct ms_cold *z = c ? c : &zero;
	char kind[80];
	m->live++;
	ms_jw_obj(j, NULL);
	ms_jw_addr(j, "address", key);
	ms_jw_str(j, "name", c ? LOAD(&c->name) : NULL);
	symbol(j, key);
	ms_jw_str(j, "kind", ms_kind_name(kind, sizeof kind, flags));
	ms_jw_str(j, "lock", ms_out_lock_name(flags));
	uint32_t owner = LOAD(&rec->owner);
	if (owner & MS_HELD)
		ms_jw_num(j, "held_by", owner & ~MS_HELD);
	else
		ms_jw_null(j, "held_by");
	/* held since the fork by that thread of the parent (not in this
	 * process) */
	uint32_t parent_thread = ms_fork_orphan_owner(r);
	if (parent_thread && owner == (parent_thread | MS_HELD))
		ms_jw_num(j, "held_by_parent_thread", parent_thread);
	else
		ms_jw_null(j, "held_by_parent_thread");
	ms_jw_num(j, "acquisitions", ms_rec_acquisitions(r));
	ms_jw_num(j, "contended", LOAD(&z->contended));
	ms_jw_num(j, "owner_changes", ms_rec_owner_changes(r));
	ms_jw_num(j, "trylock_ok", LOAD(&z->trylock_ok));
	ms_jw_num(j, "trylock_busy", LOAD(&z->trylock_busy));
	ms_jw_num(j, "timeouts", LOAD(&z->timeouts));
	ms_jw_num(j, "condition_waits", LOAD(&z->cond_waits));
	ms_jw_num(j, "most_waiters", LOAD(&z->waiters_max));
	ms_jw_num(j, "waiting_now", (uint32_t)LOAD(&z->waiting));
	uint64_t errors[MS_E_COUNT];
	for (int i = 0; i < MS_E_COUNT; i++)
		errors[i] = LOAD(&z->errors[i]);
	errors_obj(j, errors);
	struct ms_robust_view rv;
	owner_died(j, ms_robust_view(r, &rv), &rv);
	uint64_t misuse[MS_M_COUNT];
	for (int i = 0; i < MS_M_COUNT; i++)
		misuse[i] = LOAD(&z->misuse[i]);
	misuse_obj(j, misuse);
	/* Wait times include waits that timed out, as in the text report. */
	uint64_t wmax = LOAD(&z->wait_max), tmax = LOAD(&z->timeout_wait_max);
	ms_jw_num(j, "wait_total_ns",
	    ms_ticks_to_ns(LOAD(&z->wait_total) + LOAD(&z->timeout_wait_total)));
	ms_jw_num(j, "wait_max_ns", ms_ticks_to_ns(wmax > tmax ? wmax : tmax));
	ms_jw_boolean(j, "hold_timed", (flags & MS_F_TIMED) != 0);
	hold(j, LOAD(&z->holds), LOAD(&z->hold_total), LOAD(&z->hold_max));
	short_holds(j, LOAD(&z->contended), LOAD(&z->holds), ms_ticks_to_ns(LOAD(&z->hold_total)));
	ms_jw_obj(j, "histograms");
	hist32(j, "wait", z->hist);
	hist32(j, "hold", z->hold_hist);
	ms_jw_obj_end(j);
	live_modes(j, r, flags, z);
	/* the site line its numbers go to when it ends: past a lock
	 * wrapper (compare keys live and ended locks by it alike) */
	uintptr_t first_caller = LOAD(&rec->first_caller);
	uint32_t first_stack = LOAD(&rec->first_stack);
	uintptr_t site = ms_table_site_of(first_caller, first_stack);
	frame(j, "first_locked_caller", first_caller);
	frame(j, "first_locked_site", site);
	ms_jw_boolean(j, "through_wrapper", site != first_caller);
	site_stack(j, "first_locked_at", first_stack);
	site_stack(j, "initialised_at", LOAD(&ms_table.init_stacks[r]));
	uint64_t birth = LOAD(&rec->birth);
	const struct ms_blame *lines = c ? ms_blame_of(r, birth) : NULL;
	struct ms_out_calls calls;
	int rwlock = lines && ms_lock_class(flags) == MS_CLASS_RWLOCK;
	if (rwlock)
		ms_out_calls_of(&calls, r, NULL);
	blame(j, "waiting_stacks", lines, birth, MS_BLAME_WAIT, rwlock ? &calls : NULL);
	blame(j, "holding_stacks", lines, birth, MS_BLAME_HOLD, rwlock ? &calls : NULL);
	history(j, r, NULL);
	ms_jw_obj_end(j);
}

/* ---- ended mutexes, by first-lock site ------------------------------- */

static void ended(struct ms_jw *j)
{
	const struct ms_table *tb = &ms_table;
	ms_jw_arr(j, "ended");
	for (uint32_t i = 0; i < LOAD(&tb->nsites); i++) {
		struct ms_site sv;
		ms_table_site(i, &sv);
		const struct ms_site *s = &sv;
		ms_jw_obj(j, NULL);
		ms_jw_str(j, "name", s->name);
		ms_jw_str(j, "lock", ms_out_classes_name(s->classes));
		frame(j, "first_locked_at", s->site);
		/* the lives of the sites past the limit: first_locked_at null */
		ms_jw_boolean(j, "other_sites", s->site == MS_SITE_OTHERS);
		/* first_locked_at is the line that called a wrapper (stacks/site.h) */
		ms_jw_boolean(j, "through_wrapper", s->wrapped != 0 && s->site != MS_SITE_OTHERS);
		ms_jw_num(j, "mutexes", s->mutexes);
		ms_jw_num(j, "acquisitions", s->acquisitions);
		ms_jw_num(j, "contended", s->contended);
		ms_jw_num(j, "owner_changes", s->owner_changes);
		ms_jw_num(j, "trylock_ok", s->trylock_ok);
		ms_jw_num(j, "trylock_busy", s->trylock_busy);
		ms_jw_num(j, "timeouts", s->timeouts);
		ms_jw_num(j, "condition_waits", s->cond_waits);
		ms_jw_num(j, "most_waiters", s->waiters_max);
		errors_obj(j, s->errors);
		struct ms_robust_view rv;
		owner_died(j, ms_robust_site_view(s->site, s->errors, &rv), &rv);
		misuse_obj(j, s->misuse);
		ms_jw_num(j, "wait_total_ns", ms_ticks_to_ns(s->wait_total));
		ms_jw_num(j, "wait_max_ns", ms_ticks_to_ns(s->wait_max));
		hold(j, s->holds, s->hold_total, s->hold_max);
		short_holds(j, s->contended, s->holds, ms_ticks_to_ns(s->hold_total));
		ms_jw_obj(j, "histograms");
		hist64(j, "wait", s->hist);
		hist64(j, "hold", s->hold_hist);
		ms_jw_obj_end(j);
		site_modes(j, s);
		/* of the newest life that waited, failed or was named */
		site_stack(j, "first_locked_stack", s->first_stack);
		site_stack(j, "initialised_at", s->init_stack);
		struct ms_out_calls calls;
		int rwlock = s->blame && s->classes == 1u << MS_CLASS_RWLOCK;
		if (rwlock)
			ms_out_calls_of(&calls, 0, &tb->sites[i]);
		blame(j, "waiting_stacks", s->blame, 0, MS_BLAME_WAIT, rwlock ? &calls : NULL);
		blame(j, "holding_stacks", s->blame, 0, MS_BLAME_HOLD, rwlock ? &calls : NULL);
		history(j, 0, &tb->sites[i]);
		ms_jw_obj_end(j);
	}
	ms_jw_arr_end(j);
}

/* ---- threads -------------------------------------------------------------- */

struct thread_ctx {
	struct ms_jw *j;
	uint64_t now, start;
};

/* The mode a read-write lock (record r) is held or waited for in, read
 * (nonzero) or not; null for other locks, which have one mode. */
static void lock_mode(struct ms_jw *j, const char *key, uint32_t r, uint32_t read)
{
	if (ms_lock_class(LOAD(&ms_rec(r)->flags)) == MS_CLASS_RWLOCK)
		ms_jw_str(j, key, read ? "read" : "write");
	else
		ms_jw_null(j, key);
}

/* Whether thread tid, in condition wait cw, is blocked taking its mutex
 * back from another thread: a wait for that mutex (doc/model.md).  /proc
 * is read only for a mutex another thread holds. */
static int retake_blocked(uint32_t tid, const struct ms_cond_seen *cw)
{
	uint32_t r = ms_table_find(cw->mutex);
	if (r == MS_REC_NONE || r == MS_REC_UNTRACKED)
		return 0;
	uint32_t owner = LOAD(&ms_rec(r)->owner);
	return (owner & MS_HELD) && owner != (tid | MS_HELD) && ms_waitfor_retaking(tid, cw->mutex);
}

/* A thread's condition wait's retake, as its "waiting_for": the mutex,
 * and the condition wait's time and call ("retake": true). */
static void retake_waiting_for(struct thread_ctx *t, const struct ms_cond_seen *cw)
{
	struct ms_jw *j = t->j;
	ms_jw_obj(j, "waiting_for");
	ms_jw_addr(j, "mutex", cw->mutex);
	symbol(j, cw->mutex);
	ms_jw_null(j, "mode");
	ms_jw_num(j, "since_ns", cw->since > t->start ? ms_ticks_to_ns(cw->since - t->start) : 0);
	ms_jw_num(j, "waited_ns", ms_ticks_to_ns(t->now - cw->since));
	frame(j, "at", cw->caller);
	ms_jw_null(j, "stack");
	ms_jw_boolean(j, "retake", 1);
	ms_jw_obj_end(j);
}

static void one_thread(struct ms_tstate *ts, void *arg)
{
	struct thread_ctx *t = arg;
	struct ms_jw *j = t->j;
	char name[16];
	uint32_t tid = LOAD(&ts->tid);
	if (LOAD(&ts->join_only))
		return; /* a thread that used no mutex, only joined */
	ms_jw_obj(j, NULL);
	ms_jw_num(j, "tid", tid);
	ms_jw_str_or_null(j, "name", ms_thread_name(tid, name));
	ms_jw_arr(j, "held");
	uint32_t n = LOAD(&ts->nheld);
	if (n > MS_HELD_MAX)
		n = MS_HELD_MAX;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t r = LOAD(&ts->held[i].rec), mode = LOAD(&ts->held[i].mode);
		if ((mode & MS_HELD_READ) && ms_read_hold_ended(r, mode))
			continue; /* a read of a life that has ended: not held */
		ms_jw_obj(j, NULL);
		ms_jw_addr_or_null(j, "mutex", ms_rec_key(r));
		symbol(j, ms_rec_key(r));
		lock_mode(j, "mode", r, mode & MS_HELD_READ);
		frame(j, "at", LOAD(&ts->held[i].caller));
		ms_jw_obj_end(j);
	}
	ms_jw_arr_end(j);
	ms_jw_num(j, "held_not_followed", LOAD(&ts->overflow));
	uint32_t wait_rec = __atomic_load_n(&ts->wait_rec, __ATOMIC_ACQUIRE);
	uint64_t wait_since = LOAD(&ts->wait_since);
	struct ms_cond_seen cw;
	int in_cond = ms_cond_wait_read(ts, t->now, &cw);
	if (wait_rec && wait_since <= t->now) { /* not one begun after the moment */
		uint64_t since = wait_since;
		ms_jw_obj(j, "waiting_for");
		ms_jw_addr(j, "mutex", LOAD(&ts->wait_key));
		symbol(j, LOAD(&ts->wait_key));
		lock_mode(j, "mode", wait_rec, LOAD(&ts->wait_read));
		ms_jw_num(j, "since_ns", since > t->start ? ms_ticks_to_ns(since - t->start) : 0);
		ms_jw_num(j, "waited_ns", t->now > since ? ms_ticks_to_ns(t->now - since) : 0);
		frame(j, "at", LOAD(&ts->wait_caller));
		stack(j, "stack", LOAD(&ts->wait_stack));
		ms_jw_boolean(j, "retake", 0);
		ms_jw_obj_end(j);
	} else if (in_cond && retake_blocked(tid, &cw))
		retake_waiting_for(t, &cw);
	else
		ms_jw_null(j, "waiting_for");
	/* a condition wait under way, however long: a lost wakeup's hang has
	 * no mutex wait to show (waiting_for is then null) */
	if (in_cond) {
		ms_jw_obj(j, "condition_wait");
		ms_jw_addr(j, "condition", cw.cond);
		ms_jw_addr(j, "mutex", cw.mutex);
		symbol_as(j, "condition_symbol", cw.cond);
		symbol_as(j, "mutex_symbol", cw.mutex);
		ms_jw_boolean(j, "timed", cw.timed);
		ms_jw_num(j, "since_ns", cw.since > t->start ? ms_ticks_to_ns(cw.since - t->start) : 0);
		ms_jw_num(j, "waited_ns", ms_ticks_to_ns(t->now - cw.since));
		frame(j, "at", cw.caller);
		ms_jw_obj_end(j);
	} else
		ms_jw_null(j, "condition_wait");
	ms_jw_obj_end(j);
}

/* ---- findings ------------------------------------------------------------ */

/* Live waits (a live dump): the findings of the wait-for graph, grouped
 * as the text report groups them (ms_waitfor_each_finding).  A deadlock:
 * the waits around a cycle, or a chain of waits ending at a holder that
 * is gone or at a condition wait that lasted; a wait chain: the others,
 * with the thread at the chain's end and where that thread is now. */
struct live {
	struct ms_jw *j;
	/* the chain ends asked where they are, each once (as the text
	 * report does: a thousand chains may end at one holder) */
	struct {
		struct ms_tstate *ts;
		const uintptr_t *frames;
		int n;
	} asked[64];
	int nasked;
};

/* Where the thread of record ts is now: ms_where_now, once each. */
static int where_now_once(struct live *l, struct ms_tstate *ts, const uintptr_t **frames)
{
	for (int i = 0; i < l->nasked; i++)
		if (l->asked[i].ts == ts) {
			*frames = l->asked[i].frames;
			return l->asked[i].n;
		}
	int n = ms_where_now(ts, frames);
	if (l->nasked < 64) {
		l->asked[l->nasked].ts = ts;
		l->asked[l->nasked].frames = *frames;
		l->asked[l->nasked++].n = n;
	}
	return n;
}

/* How a read-write lock that a thread waits for is held, as the text
 * report's wait-for lines say it: "write" by held_by; "read" by held_by
 * and readers - 1 others (held_by 0: by readers none of which is known
 * here, the end's unseen_readers); "none" when no thread holds it and held_by is
 * a writer that waits ahead (a writer-preferring lock keeps readers
 * out).  null for other locks. */
static void held_for(struct ms_jw *j, const struct ms_waiter *w)
{
	const struct ms_record *rec = ms_rec(w->rec);
	if (ms_lock_class(LOAD(&rec->flags)) != MS_CLASS_RWLOCK) {
		ms_jw_null(j, "held_for");
		ms_jw_null(j, "readers");
		return;
	}
	if (LOAD(&rec->owner) == (w->owner | MS_HELD)) {
		ms_jw_str(j, "held_for", "write");
		ms_jw_num(j, "readers", 0);
		return;
	}
	/* with those that exited holding it, and those not known here */
	uint32_t gone_tid;
	uint32_t readers = ms_waitfor_readers(w->rec, w->tid) + w->unseen +
			   ms_waitfor_exited_readers(w->rec, &gone_tid, NULL);
	ms_jw_str(j, "held_for", readers ? "read" : "none");
	ms_jw_num(j, "readers", readers);
}

static void wait_thread(struct ms_jw *j, const struct ms_waiter *w, uint64_t now)
{
	ms_jw_obj(j, NULL);
	ms_jw_num(j, "thread", w->tid);
	ms_jw_addr(j, "waits_for", w->key);
	symbol(j, w->key);
	sup_variable(w->key);
	if (LOAD(&ms_rec(w->rec)->flags) & MS_F_COLD)
		sup_name(LOAD(&ms_table.cold[w->rec].name));
	ms_jw_str(j, "lock", ms_out_lock_name(LOAD(&ms_rec(w->rec)->flags)));
	lock_mode(j, "mode", w->rec, (uint32_t)w->read);
	ms_jw_num(j, "held_by", w->owner);
	held_for(j, w);
	ms_jw_num(j, "waited_ns", ms_ticks_to_ns(now > w->since ? now - w->since : 0));
	ms_jw_boolean(j, "timed", w->timed);
	/* blocked taking its mutex back inside a condition wait: "at" is the
	 * condition wait's call, waited_ns its time so far */
	ms_jw_boolean(j, "retake", w->retake);
	frame(j, "at", w->caller);
	stack(j, "stack", w->stack);
	frame(j, "owner_took_it_at", w->taken_at);
	/* a lock wrapper's line: where it was called for the lock's first
	 * lock (the text's "through a wrapper") */
	stack_from(j, "owner_wrapper_called_from",
		   ms_site_wrapped_first_stack(w->rec, w->taken_at), 1);
	ms_jw_obj_end(j);
}

/* The thread at the end of a wait chain: where it is now (as the text
 * report's "it is now at"), in another process, or in a deadlock that
 * the chain runs into. */
static void chain_end(struct live *l, const struct ms_waiter *w,
		      const struct ms_waitfor_finding *fd)
{
	struct ms_jw *j = l->j;
	const struct ms_waiter *last = &w[fd->last];
	ms_jw_obj(j, "end");
	if (fd->into >= 0) {
		ms_jw_num(j, "thread", w[fd->into].tid);
		ms_jw_boolean(j, "deadlocked", 1);
	} else if (last->foreign) {
		ms_jw_num(j, "thread", last->foreign);
		ms_jw_boolean(j, "other_process", 1);
	} else if (!last->owner && last->unseen) {
		/* readers not known here: glibc counts them, names none */
		ms_jw_null(j, "thread");
		ms_jw_num(j, "unseen_readers", last->unseen);
	} else {
		ms_jw_num(j, "thread", last->owner);
		const uintptr_t *frames = NULL;
		int n = fd->end && !fd->cond ? where_now_once(l, fd->end, &frames) : 0;
		if (n > 0) {
			ms_jw_arr(j, "now_at");
			int shown = ms_stack_shown(frames, n); /* as every stack */
			for (int i = 0; i < shown; i++)
				frame(j, NULL, frames[i]);
			ms_jw_arr_end(j);
		} else
			ms_jw_null(j, "now_at");
		ms_jw_str_or_null(j, "not_asked", ms_where_now_not_asked(n));
		if (fd->cond) {
			ms_jw_addr(j, "condition_mutex", fd->cond);
			symbol_as(j, "condition_mutex_symbol", fd->cond);
		}
	}
	ms_jw_obj_end(j);
}

static void live_finding(const struct ms_waiter *w, const struct ms_waitfor_finding *fd,
			 void *arg)
{
	struct live *l = arg;
	struct ms_jw *j = l->j;
	if (fd->kind == MS_WF_CYCLE && ms_waitfor_self_said(w, fd->first))
		return; /* its self-deadlock finding says it */
	if (fd->kind == MS_WF_COND && ms_findings_stall_has_cond_wait(w[fd->last].owner))
		return; /* its STALL says it (findings.h) */
	ms_jw_obj(j, NULL);
	if (fd->kind == MS_WF_CHAIN) {
		ms_jw_str(j, "kind", "wait-chain");
		sup_begin(NULL); /* no finding of its own */
	} else {
		ms_jw_str(j, "kind", "deadlock");
		sup_begin("deadlock");
		ms_jw_boolean(j, "owner_exited", fd->kind == MS_WF_EXITED || fd->kind == MS_WF_GONE);
		/* a thread of the parent held it when this process forked */
		ms_jw_boolean(j, "owner_in_parent", fd->kind == MS_WF_PARENT);
		/* the owner waits for a condition while holding this mutex: if
		 * a waiter is the one to signal it, nobody will */
		ms_jw_boolean(j, "condition_wait", fd->kind == MS_WF_COND);
		if (fd->kind == MS_WF_COND) {
			ms_jw_addr(j, "condition_mutex", fd->cond);
			symbol_as(j, "condition_mutex_symbol", fd->cond);
		}
	}
	ms_jw_arr(j, "threads");
	for (int i = 0; i < fd->nwaits; i++)
		wait_thread(j, &w[fd->waits[i]], fd->now);
	ms_jw_arr_end(j);
	if (fd->kind == MS_WF_CHAIN)
		chain_end(l, w, fd);
	sup_end(j);
	ms_jw_obj_end(j);
}

/* Both kinds, from one snapshot of the waits (its own copy: this may run
 * beside a text report, which has its own under the report lock). */
static int live_waits(struct ms_jw *j)
{
	size_t bytes = MS_WAITERS_MAX * (sizeof(struct ms_waiter) + sizeof(int));
	struct ms_waiter *w = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (w == MAP_FAILED)
		return 0;
	uint64_t now;
	int n = ms_waitfor_snapshot(w, &now);
	struct live l = { .j = j };
	ms_waitfor_each_finding(w, n, now, (int *)(void *)(w + MS_WAITERS_MAX), live_finding, &l);
	munmap(w, bytes);
	return n;
}

/* A relock glibc refused with EDEADLK: a misuse (findings_text.c) of one
 * thread at one lock, with the self-deadlock's stacks: where the lock was
 * taken and where it was relocked the first time (later ones count). */
static void refused_one(struct ms_jw *j, const struct ms_self_finding *s)
{
	ms_jw_str(j, "what", "relock_refused");
	ms_jw_num(j, "count", s->count);
	ms_jw_num(j, "other_lives", s->other_lives);
	ms_jw_num(j, "thread", s->tid);
	ms_jw_str(j, "result", "EDEADLK");
	stack(j, "taken_at", s->taken_stack);
	stack_from(j, "wrapper_called_from", s->wrapped_stack, 1);
	stack(j, "relocked_at", s->relock_stack);
}

/* fn for each self-deadlock (refused 0) or each relock refused (1). */
static void self_one(const struct ms_self_finding *s, struct ms_jw *j, int refused)
{
	if (refused != (s->kind == MS_SELF_REFUSED))
		return;
	ms_jw_obj(j, NULL);
	char kind[64];
	ms_jw_str(j, "kind", refused ? "misuse" : "self-deadlock");
	sup_begin(refused ? "misuse" : "self-deadlock");
	if (!refused)
		ms_jw_num(j, "thread", s->tid);
	ms_jw_addr(j, "mutex", s->key);
	if (refused)
		ms_jw_str(j, "name", s->name);
	symbol(j, s->key);
	sup_lock(s->key, s->name);
	/* an rwlock's: write-locked by a thread that holds it for read */
	ms_jw_str(j, "lock", ms_out_lock_name(s->flags));
	ms_jw_str(j, "mutex_kind", ms_kind_name(kind, sizeof kind, s->flags));
	if (refused) {
		refused_one(j, s);
	} else {
		ms_jw_boolean(j, "timeout", s->kind == MS_SELF_TIMEOUT);
		ms_jw_num(j, "count", s->count);
		ms_jw_num(j, "released", s->released);
		stack(j, "taken_at", s->taken_stack);
		stack_from(j, "wrapper_called_from", s->wrapped_stack, 1);
		stack(j, "relocked_at", s->relock_stack);
	}
	sup_end(j);
	ms_jw_obj_end(j);
}

static void self_deadlock_one(const struct ms_self_finding *s, void *arg)
{
	self_one(s, arg, 0);
}

static void relock_refused_one(const struct ms_self_finding *s, void *arg)
{
	self_one(s, arg, 1);
}

static const char *const ended_key[] = { NULL, "destroyed", "initialised-again",
					  "unseen", "reused" };

/* One mutex life of a cycle (or its gate), as the finding keeps it. */
static void cycle_mutex(struct ms_jw *j, const char *key, const struct ms_finding_mutex *m)
{
	char kind[64];
	ms_jw_obj(j, key);
	ms_jw_addr(j, "mutex", m->key);
	ms_jw_str(j, "name", m->name);
	symbol(j, m->key);
	sup_lock(m->key, m->name);
	ms_jw_str(j, "mutex_kind", ms_kind_name(kind, sizeof kind, m->flags));
	ms_jw_str(j, "lock", ms_out_lock_name(m->flags));
	frame(j, "first_locked_at", m->first_caller);
	/* the text shows the first lock's and the end's frame alone */
	sup.paused++;
	site_stack(j, "first_locked_stack", m->first_stack);
	site_stack(j, "initialised_at", m->init_stack);
	ms_jw_str(j, "ended", m->ended < 5 ? ended_key[m->ended] : NULL);
	stack(j, "ended_at", m->ended_stack);
	sup.paused--;
	if (sup.kind && m->ended_at) {
		struct ms_frame fr;
		(void)ms_symbolize_frame(m->ended_at, 1, &fr);
		sup_frame(&fr);
	}
	ms_jw_obj_end(j);
}

/* The modes an edge's read-write locks were taken in: "from_mode" held,
 * "to_mode" then taken ("read", "write", "read or write" for an order
 * seen both ways); null for a mutex or spin lock, and for a "to" not
 * kept (to_flags NULL). */
static void edge_modes(struct ms_jw *j, uint32_t modes, uint32_t from_flags,
		       const uint32_t *to_flags)
{
	if (ms_lock_class(from_flags) == MS_CLASS_RWLOCK)
		ms_jw_str(j, "from_mode", ms_out_edge_mode(modes, 0));
	else
		ms_jw_null(j, "from_mode");
	if (to_flags && ms_lock_class(*to_flags) == MS_CLASS_RWLOCK)
		ms_jw_str(j, "to_mode", ms_out_edge_mode(modes, 1));
	else
		ms_jw_null(j, "to_mode");
}

static void cycle_one(const struct ms_cycle_finding *c, void *arg)
{
	struct ms_jw *j = arg;
	ms_jw_obj(j, NULL);
	ms_jw_str(j, "kind", c->guarded ? "guarded-inversion" : "potential-deadlock");
	sup_begin(c->guarded ? "guarded-inversion" : "potential-deadlock");
	ms_jw_num(j, "count", c->count);
	ms_jw_num(j, "length", c->n);
	ms_jw_arr(j, "mutexes");
	for (uint32_t i = 0; i < c->kept; i++)
		ms_jw_addr(j, NULL, c->m[i].key);
	ms_jw_arr_end(j);
	/* the text report's note: no init seen, not static data */
	ms_jw_arr(j, "maybe_reused");
	for (uint32_t i = 0; i < c->kept; i++)
		if (ms_order_maybe_reused(c->m[i].flags, c->m[i].key,
					  c->m[i].first_caller))
			ms_jw_addr(j, NULL, c->m[i].key);
	ms_jw_arr_end(j);
	ms_jw_arr(j, "lives");
	for (uint32_t i = 0; i < c->kept; i++)
		cycle_mutex(j, NULL, &c->m[i]);
	ms_jw_arr_end(j);
	if (c->guarded)
		cycle_mutex(j, "gate", &c->gate);
	ms_jw_arr(j, "edges");
	for (uint32_t i = 0; i < c->kept; i++) {
		const struct ms_finding_edge *e = &c->e[i];
		ms_jw_obj(j, NULL);
		ms_jw_num(j, "thread", e->tid);
		ms_jw_str_or_null(j, "thread_name", e->thread_name);
		ms_jw_addr(j, "from", c->m[i].key);
		/* the next mutex, null where a long cycle's middle is not kept */
		int cut = c->n > c->kept && i + 1 == c->kept - MS_CYCLE_TAIL;
		ms_jw_addr_or_null(j, "to", cut ? 0 : c->m[(i + 1) % c->kept].key);
		edge_modes(j, e->modes, c->m[i].flags, cut ? NULL : &c->m[(i + 1) % c->kept].flags);
		stack(j, "from_at", e->a_stack);
		stack(j, "to_at", e->b_stack);
		/* "to" was taken for the first time in its life (the text's
		 * "B was new") */
		ms_jw_boolean(j, "to_was_new", e->b_new != 0);
		/* it holds "from" and waits for "to" now: a deadlock that happened */
		ms_jw_boolean(j, "waits_for_to", !cut && ms_finding_edge_waits(e->tid, &c->m[i],
								 &c->m[(i + 1) % c->kept]));
		ms_jw_obj_end(j);
	}
	ms_jw_arr_end(j);
	sup_end(j);
	ms_jw_obj_end(j);
}

static const char *const stall_kind[] = { "mutex", "condition", "join", "futex" };

/* The kind of lock a stalled thread waits for ("mutex", "rwlock",
 * "spin"); null for the other waits, and a lock no longer tracked. */
static void stall_lock(struct ms_jw *j, const struct ms_stall_thread *w)
{
	uint32_t r = w->kind == MS_STALL_MUTEX ? ms_table_find(w->object) : MS_REC_NONE;
	if (r != MS_REC_NONE && r != MS_REC_UNTRACKED)
		ms_jw_str(j, "lock", ms_out_lock_name(LOAD(&ms_rec(r)->flags)));
	else
		ms_jw_null(j, "lock");
}

static void stall_one(const struct ms_stall *s, void *arg)
{
	struct ms_jw *j = arg;
	ms_jw_obj(j, NULL);
	ms_jw_str(j, "kind", "stall");
	sup_begin("stall");
	ms_jw_num(j, "threads_blocked", s->n);
	ms_jw_num(j, "waited_ns", s->waited_ns);
	char sig[24];
	ms_jw_str_or_null(j, "handled_signal",
			  s->handled_signal ? ms_stall_signal_name(s->handled_signal, sig) : NULL);
	ms_jw_arr(j, "threads");
	for (uint32_t i = 0; i < s->shown; i++) {
		const struct ms_stall_thread *w = &s->t[i];
		ms_jw_obj(j, NULL);
		ms_jw_num(j, "thread", w->tid);
		ms_jw_str_or_null(j, "name", w->name);
		ms_jw_str(j, "waits_for", stall_kind[w->kind]);
		stall_lock(j, w);
		if (w->kind == MS_STALL_MUTEX || w->kind == MS_STALL_COND) {
			/* a condition's, then its mutex's, as the text prints them */
			sup_variable(w->object);
			if (w->kind == MS_STALL_COND)
				sup_variable(w->mutex);
			uint32_t r = ms_table_find(w->kind == MS_STALL_MUTEX ? w->object : w->mutex);
			if (r != MS_REC_NONE && r != MS_REC_UNTRACKED)
				sup_name(ms_order_mutex_name(r)); /* as the text names it */
		}
		ms_jw_addr(j, "object", w->object);
		ms_jw_addr_or_null(j, "mutex", w->kind == MS_STALL_COND ? w->mutex
					 : w->kind == MS_STALL_MUTEX ? w->object : 0);
		/* the variables the text names: a lock's, a condition's */
		int lock_wait = w->kind == MS_STALL_MUTEX || w->kind == MS_STALL_COND;
		symbol_as(j, "object_symbol", lock_wait ? w->object : 0);
		symbol_as(j, "mutex_symbol", w->kind == MS_STALL_COND ? w->mutex
					     : lock_wait ? w->object : 0);
		if (w->holder)
			ms_jw_num(j, w->kind == MS_STALL_JOIN ? "joins" : "held_by", w->holder);
		ms_jw_num(j, "waited_ns", w->waited_ns);
		/* a mutex wait that is a condition wait's retake: waited_ns and
		 * "at" are the condition wait's */
		ms_jw_boolean(j, "retake", w->retake);
		if (w->stack)
			stack(j, "at", w->stack);
		else
			frame(j, "at_caller", w->caller);
		ms_jw_obj_end(j);
	}
	ms_jw_arr_end(j);
	sup_end(j);
	ms_jw_obj_end(j);
}

static void exit_one(const struct ms_exit_finding *e, void *arg)
{
	struct ms_jw *j = arg;
	ms_jw_obj(j, NULL);
	ms_jw_str(j, "kind", "held-at-thread-exit");
	sup_begin("held-at-exit");
	ms_jw_num(j, "thread", e->tid);
	ms_jw_str_or_null(j, "name", e->name);
	ms_jw_num(j, "held", e->n);
	ms_jw_arr(j, "mutexes");
	for (uint32_t i = 0; i < e->shown; i++) {
		ms_jw_obj(j, NULL);
		ms_jw_addr_or_null(j, "mutex", e->key[i]);
		symbol(j, e->key[i]);
		sup_variable(e->key[i]);
		frame(j, "at", e->caller[i]);
		/* "at" is a wrapper's line: where it was called for the
		 * lock's first lock (the text's "through a wrapper") */
		stack_from(j, "wrapper_called_from", e->wrapped_stack[i], 1);
		ms_jw_obj_end(j);
	}
	ms_jw_arr_end(j);
	sup_end(j);
	ms_jw_obj_end(j);
}

static void owner_died_one(uintptr_t key, uint32_t r, uintptr_t site,
			   const struct ms_robust_view *v, void *arg)
{
	struct ms_jw *j = arg;
	ms_jw_obj(j, NULL);
	ms_jw_str(j, "kind", "owner-died");
	sup_begin("owner-died");
	if (key) {
		ms_jw_addr(j, "mutex", key);
		ms_jw_str(j, "name", LOAD(&ms_table.cold[r].name));
		symbol(j, key);
		sup_lock(key, LOAD(&ms_table.cold[r].name)); /* as the text's heading */
		ms_jw_null(j, "ended_first_locked_at");
	} else {
		ms_jw_null(j, "mutex");
		ms_jw_null(j, "name");
		frame(j, "ended_first_locked_at", site);
	}
	ms_jw_num(j, "times", v->died);
	ms_jw_num(j, "made_consistent", v->consistent);
	ms_jw_num(j, "unlocked_inconsistent", v->left);
	ms_jw_num(j, "refused", v->refused);
	frame(j, "last_eownerdead_at", v->last_at);
	sup_end(j);
	ms_jw_obj_end(j);
}

static void misuse_one(uintptr_t key, uint32_t r, void *arg)
{
	struct ms_jw *j = arg;
	if (!(LOAD(&ms_rec(r)->flags) & MS_F_COLD))
		return;
	const struct ms_cold *c = &ms_table.cold[r];
	for (int k = 0; k < MS_M_COUNT; k++) {
		uint32_t n = LOAD(&c->misuse[k]);
		if (!n)
			continue;
		ms_jw_obj(j, NULL);
		ms_jw_str(j, "kind", "misuse");
		sup_begin("misuse");
		ms_jw_addr(j, "mutex", key);
		ms_jw_str(j, "name", LOAD(&c->name));
		symbol(j, key);
		sup_lock(key, LOAD(&c->name));
		ms_jw_str(j, "what", misuse_key[k]);
		ms_jw_num(j, "count", n);
		struct ms_op_view v;
		uint32_t at;
		if (ms_misuse_last(r, (enum ms_misuse)k, &v, &at)) {
			const char *e = v.err ? strerrorname_np(v.err) : NULL;
			ms_jw_obj(j, "last");
			ms_jw_num(j, "thread", v.tid);
			ms_jw_str(j, "result", v.err ? (e ? e : "error") : "ok");
			sup.paused++; /* the text shows the stack below alone */
			frame(j, "caller", v.caller);
			sup.paused--;
			stack(j, "at", at ? at : ms_site_stack_known(v.caller));
			ms_jw_obj_end(j);
		} else
			ms_jw_null(j, "last");
		sup_end(j);
		ms_jw_obj_end(j);
	}
}

static void site_misuse(struct ms_jw *j)
{
	const struct ms_table *tb = &ms_table;
	for (uint32_t i = 0; i < LOAD(&tb->nsites); i++) {
		struct ms_site sv;
		ms_table_site(i, &sv);
		const struct ms_site *s = &sv;
		for (int k = 0; k < MS_M_COUNT; k++) {
			if (!s->misuse[k])
				continue;
			ms_jw_obj(j, NULL);
			ms_jw_str(j, "kind", "misuse");
			sup_begin("misuse");
			ms_jw_null(j, "mutex");
			ms_jw_str(j, "what", misuse_key[k]);
			ms_jw_num(j, "count", s->misuse[k]);
			frame(j, "ended_first_locked_at", s->site);
			ms_jw_boolean(j, "other_sites", s->site == MS_SITE_OTHERS);
			uint64_t m = s->misuse_last[k];
			if (ms_site_misuse_stack(m)) {
				int err = ms_site_misuse_err(m);
				const char *e = err ? strerrorname_np(err) : NULL;
				ms_jw_obj(j, "last");
				ms_jw_num(j, "thread", ms_site_misuse_tid(m));
				ms_jw_str(j, "result", err ? (e ? e : "error") : "ok");
				stack(j, "at", ms_site_misuse_stack(m));
				ms_jw_obj_end(j);
			} else
				ms_jw_null(j, "last");
			sup_end(j);
			ms_jw_obj_end(j);
		}
	}
}

static void findings(struct ms_jw *j)
{
	ms_jw_arr(j, "findings");
	live_waits(j);
	ms_findings_each_stall(stall_one, j);
	ms_findings_each_self(self_deadlock_one, j);
	ms_findings_each_cycle(cycle_one, j);
	uint32_t dropped = ms_findings_each_exit(exit_one, j);
	ms_robust_each_finding(owner_died_one, j);
	ms_findings_each_self(relock_refused_one, j);
	ms_table_each(misuse_one, j);
	site_misuse(j);
	ms_jw_arr_end(j);
	ms_jw_num(j, "held_at_exit_not_kept", dropped);
}

/* ---- the document --------------------------------------------------------- */

int ms_write_json(int fd)
{
	char buf[8192];
	struct ms_jw j;
	memset(&j, 0, sizeof j);
	memset(&sup, 0, sizeof sup); /* (a fork child's, made mid-finding) */
	ms_fmt_init(&j.f, buf, sizeof buf, fd);
	const struct ms_table *tb = &ms_table;
	int ready = __atomic_load_n(&tb->ready, __ATOMIC_ACQUIRE);

	ms_jw_obj(&j, NULL);
	ms_jw_num(&j, "version", 1);
	ms_jw_str(&j, "program", ms_program_name());
	ms_jw_num(&j, "pid", (uint64_t)getpid());
	/* a fork child: its numbers start at the fork */
	if (ms_fork_parent_pid())
		ms_jw_num(&j, "forked_from", (uint64_t)ms_fork_parent_pid());
	else
		ms_jw_null(&j, "forked_from");
	ms_jw_num(&j, "run_ns", ms_run_ns());
	ms_jw_num(&j, "threads_seen", ms_threads_seen());
	struct ms_table_counts tc;
	ms_table_counts(&tc);
	ms_jw_num(&j, "mutexes_untracked", tc.untracked_mutexes);
	ms_jw_num(&j, "calls_untracked", tc.untracked_ops);
	ms_jw_num(&j, "mutexes_untracked_destroyed", tc.untracked_ended);
	ms_jw_num(&j, "destroyed", tc.destroyed);
	ms_jw_num(&j, "reinitialised", tc.reinitialised);
	/* ended lives whose numbers no site line holds (the text's "summed
	 * in no line") */
	ms_jw_num(&j, "ended_not_summed", LOAD(&ms_table.sites_gave_up));
	/* ended lives of sites past the limit, in the "other_sites" line */
	ms_jw_num(&j, "ended_at_other_sites", ms_site_others_ended());
	/* names of code in them may be missing or wrong: symbols.h */
	ms_jw_num(&j, "libraries_unloaded", ms_symbols_unloaded());
	/* dlopen'ed after libc.so.6: the program's calls were not seen */
	ms_jw_boolean(&j, "loaded_late", ms_report_loaded_late);
	/* the kinds of lock MUTEXSTAT_TRACK left out: without them, no
	 * mutexes would read as none locked */
	ms_jw_arr(&j, "untracked_locks");
	for (unsigned c = 0; c < MS_CLASS_COUNT; c++)
		if (!(ms_opt.track & (1u << c)))
			ms_jw_str(&j, NULL, ms_out_class_name(c));
	ms_jw_arr_end(&j);
	/* what start-up said (base/output.h), a string each */
	ms_jw_arr(&j, "notes");
	for (const char *p = ms_output_kept(), *end; *p; p = *end ? end + 1 : end) {
		end = strchrnul(p, '\n'); /* the last, being written */
		char note[512];
		size_t n = (size_t)(end - p) < sizeof note ? (size_t)(end - p) : sizeof note - 1;
		memcpy(note, p, n);
		note[n] = 0;
		ms_jw_str(&j, NULL, note);
	}
	ms_jw_arr_end(&j);
	ms_jw_obj(&j, "hold_timing");
	ms_jw_num(&j, "exact_first", MS_HOLD_EXACT);
	ms_jw_num(&j, "sample_one_in", MS_HOLD_SAMPLE);
	ms_jw_obj_end(&j);
	int crashed = __atomic_load_n(&ms_crash.signal, __ATOMIC_ACQUIRE);
	if (crashed) { /* MUTEXSTAT_ON_CRASH: the signal the process dies of */
		ms_jw_obj(&j, "crash");
		ms_jw_str(&j, "signal", sigabbrev_np(crashed));
		ms_jw_num(&j, "tid", ms_crash.tid);
		if (ms_crash.sent) {
			ms_jw_null(&j, "address");
			ms_jw_num(&j, "sender_pid", (uint64_t)ms_crash.sender_pid);
		} else {
			ms_jw_addr(&j, "address", ms_crash.address);
			ms_jw_null(&j, "sender_pid");
		}
		ms_jw_obj_end(&j);
	} else
		ms_jw_null(&j, "crash");
	ms_jw_obj(&j, "stack_sampling");
	ms_jw_num(&j, "exact_first", MS_STACK_EXACT);
	ms_jw_num(&j, "sample_one_in", ms_opt.stack_sample);
	ms_jw_obj_end(&j);

	struct mutex_ctx m = { &j, 0 };
	ms_jw_arr(&j, "mutexes");
	if (ready)
		ms_table_each(one_mutex, &m);
	ms_jw_arr_end(&j);
	ms_jw_num(&j, "mutexes_tracked", m.live);
	if (ready)
		ended(&j);
	else {
		ms_jw_arr(&j, "ended");
		ms_jw_arr_end(&j);
	}

	struct thread_ctx t = { &j, ms_clock_now_ticks(), ms_clock_start_ticks() };
	ms_jw_arr(&j, "threads");
	ms_threads_each(one_thread, &t);
	ms_jw_arr_end(&j);

	if (ready)
		findings(&j);
	else {
		ms_jw_arr(&j, "findings");
		ms_jw_arr_end(&j);
	}
	ms_jw_obj_end(&j);
	ms_fmt(&j.f, "\n");
	ms_fmt_flush(&j.f);
	if (j.f.failed)
		errno = j.f.failed;
	return j.f.failed ? -1 : 0;
}

/* ---- one interval ------------------------------------------------------- */

static void interval_stacks(struct ms_jw *j, const char *key, const struct ms_iv_line *o,
			    int kind)
{
	struct ms_ns_parts parts = { 0, 0 };
	ms_jw_arr(j, key);
	for (int i = 0; i < o->nstacks[kind]; i++) {
		const struct ms_iv_stack *st = &o->stacks[kind][i];
		ms_jw_obj(j, NULL);
		ms_jw_num(j, "count", st->count);
		ms_jw_num(j, "total_ns", ms_ns_part(&parts, st->total));
		stack(j, "stack", st->stack);
		ms_jw_obj_end(j);
	}
	ms_jw_arr_end(j);
	char more[32];
	struct ms_fmt mf;
	ms_fmt_init(&mf, more, sizeof more, -1);
	ms_fmt(&mf, "%s_more", key);
	ms_jw_num(j, ms_fmt_str(&mf), (uint64_t)(o->all_stacks[kind] - o->nstacks[kind]));
}

static void interval_lock(struct ms_jw *j, const struct ms_iv_line *o)
{
	const struct ms_line *l = &o->l;
	ms_jw_obj(j, NULL);
	if (l->ended)
		ms_jw_null(j, "address");
	else
		ms_jw_addr(j, "address", l->key);
	ms_jw_str(j, "name", l->name);
	ms_jw_str(j, "lock", ms_out_classes_name(l->classes));
	/* a site line: the lives that ended there, and how many in this
	 * interval (its numbers are theirs not shown by an interval before) */
	ms_jw_boolean(j, "ended", l->ended);
	if (l->ended)
		ms_jw_num(j, "mutexes_ended", l->mutexes);
	else
		ms_jw_null(j, "mutexes_ended");
	frame(j, "first_locked_at", ms_line_site(l));
	ms_jw_boolean(j, "other_sites", l->ended && l->key == MS_SITE_OTHERS);
	ms_jw_boolean(j, "through_wrapper", l->wrapped != 0 && l->key != MS_SITE_OTHERS);
	ms_jw_num(j, "acquisitions", l->acquisitions);
	ms_jw_num(j, "contended", l->contended);
	ms_jw_num(j, "owner_changes", l->changes);
	ms_jw_num(j, "trylock_ok", l->trylock_ok);
	ms_jw_num(j, "trylock_busy", l->trylock_busy);
	ms_jw_num(j, "timeouts", l->timeouts);
	ms_jw_num(j, "condition_waits", l->cond_waits);
	errors_obj(j, l->errors);
	misuse_obj(j, l->misuse);
	ms_jw_num(j, "wait_total_ns", l->wait_total);
	/* of the waits that got the lock, from the interval's histogram: the
	 * upper bound of the bucket each falls in, at most the maximum */
	uint64_t p50 = ms_hist_percentile_ns(o->hist, MS_HIST_BUCKETS, 50);
	uint64_t p99 = ms_hist_percentile_ns(o->hist, MS_HIST_BUCKETS, 99);
	ms_jw_num(j, "wait_p50_ns", p50 < l->wait_max ? p50 : l->wait_max);
	ms_jw_num(j, "wait_p99_ns", p99 < l->wait_max ? p99 : l->wait_max);
	ms_jw_num(j, "wait_max_ns", l->wait_max);
	struct mode all = {
		l->acquisitions, l->contended, l->trylock_ok, l->trylock_busy,
		l->timeouts, l->wait_total, l->wait_max, l->holds, l->hold_total,
		l->hold_max, { 0 }, { 0 },
	};
	memcpy(all.hist, o->hist, sizeof all.hist);
	memcpy(all.hold_hist, o->hold_hist, sizeof all.hold_hist);
	hold_and_histograms(j, &all);
	short_holds(j, l->contended, l->holds, l->hold_total);
	if (l->classes & (1u << MS_CLASS_RWLOCK))
		modes(j, &all, &l->rd, NULL, 1);
	else
		no_modes(j);
	interval_stacks(j, "waiting_stacks", o, MS_BLAME_WAIT);
	interval_stacks(j, "holding_stacks", o, MS_BLAME_HOLD);
	ms_jw_obj_end(j);
}

int ms_write_interval_json(int fd, const struct ms_iv *iv, const struct ms_span *sp)
{
	char buf[8192];
	struct ms_jw j;
	memset(&j, 0, sizeof j);
	ms_fmt_init(&j.f, buf, sizeof buf, fd);
	ms_jw_obj(&j, NULL);
	ms_jw_num(&j, "version", 1);
	ms_jw_str(&j, "program", ms_program_name());
	ms_jw_num(&j, "pid", (uint64_t)getpid());
	if (ms_fork_parent_pid())
		ms_jw_num(&j, "forked_from", (uint64_t)ms_fork_parent_pid());
	else
		ms_jw_null(&j, "forked_from");
	ms_jw_obj(&j, "interval");
	ms_jw_num(&j, "number", sp->n);
	ms_jw_num(&j, "start_ns", sp->start_ns); /* since the epoch */
	ms_jw_num(&j, "duration_ns", sp->duration_ns);
	ms_jw_boolean(&j, "after_reset", iv->reset);
	ms_jw_obj_end(&j);
	ms_jw_obj(&j, "totals"); /* over every lock, not only those listed */
	ms_jw_num(&j, "locks", iv->locks);
	ms_jw_num(&j, "acquisitions", iv->acquisitions);
	ms_jw_num(&j, "contended", iv->contended);
	ms_jw_num(&j, "wait_total_ns", iv->wait_ns);
	ms_jw_num(&j, "mutexes_ended", iv->ended);
	ms_jw_obj_end(&j);
	ms_jw_obj(&j, "findings");
	ms_jw_num(&j, "new", iv->findings_new);
	ms_jw_num(&j, "total", iv->findings);
	ms_jw_obj_end(&j);
	ms_jw_arr(&j, "locks"); /* the top MUTEXSTAT_TOP, ranked by MUTEXSTAT_SORT */
	for (size_t i = 0; i < iv->n; i++)
		interval_lock(&j, &iv->lines[i]);
	ms_jw_arr_end(&j);
	ms_jw_obj_end(&j);
	ms_fmt(&j.f, "\n");
	ms_fmt_flush(&j.f);
	if (j.f.failed)
		errno = j.f.failed;
	return j.f.failed ? -1 : 0;
}
