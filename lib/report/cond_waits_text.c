/* cond_waits_text.c - the long condition waits of a live dump; see
 * cond_waits_text.h. */
#include "report/cond_waits_text.h"
#include "report/waitfor_text.h"
#include "base/clock.h"
#include "base/internal.h"
#include "base/options.h"
#include "analysis/findings.h"
#include "analysis/order.h"
#include "analysis/stall.h"
#include "analysis/waitfor.h"
#include "core/table.h"
#include "report/kinds.h"
#include "core/thread_pool.h"
#include "stacks/symbols.h"

#include <string.h>

uint64_t ms_cond_waits_min_s(void)
{
	return ms_opt.watchdog ? ms_opt.watchdog : 1;
}

struct cond_ctx {
	struct ms_fmt *f;
	uint64_t now, min_ticks;
	unsigned listed;
};

/* Whether the watchdog's STALL shows thread tid in this condition wait
 * already (the report's findings list it, with that wait's stack). */
struct in_stall {
	uint32_t tid;
	uintptr_t cond;
	int found;
};

static void stall_has(const struct ms_stall *s, void *arg)
{
	struct in_stall *q = arg;
	for (uint32_t i = 0; i < s->shown; i++)
		if (s->t[i].tid == q->tid && s->t[i].kind == MS_STALL_COND &&
		    s->t[i].object == q->cond)
			q->found = 1;
}

static void one(struct ms_tstate *ts, void *arg)
{
	struct cond_ctx *c = arg;
	struct ms_cond_seen cw;
	if (!ms_cond_wait_read(ts, c->now, &cw) || c->now - cw.since < c->min_ticks)
		return;
	uintptr_t m = cw.mutex;
	struct in_stall q = { LOAD(&ts->tid), cw.cond, 0 };
	ms_findings_each_stall(stall_has, &q);
	/* signalled, blocked taking the mutex back: a wait for the mutex,
	 * which the wait-for lines show, not for the condition; and the end
	 * of a DEADLOCK above is a finding, not one of these */
	if (q.found || ms_waitfor_print_said_cond(q.tid, cw.since) ||
	    ms_waitfor_retaking(q.tid, m))
		return;
	if (!c->listed++)
		ms_fmt(c->f, "\nThreads in a condition wait for %llu s or more (no finding: an idle worker pool waits so too):\n",
		       (unsigned long long)ms_cond_waits_min_s());
	char name[16] = "", dur[16], at[200], head[64], objects[400];
	uint32_t tid = LOAD(&ts->tid);
	ms_thread_name(tid, name);
	uint32_t r = ms_table_find(m);
	const char *mname =
		r != MS_REC_NONE && r != MS_REC_UNTRACKED ? ms_order_mutex_name(r) : NULL;
	struct ms_fmt hf;
	ms_fmt_init(&hf, head, sizeof head, -1);
	ms_fmt(&hf, "  thread %u%s%s%s waits for ", tid, name[0] ? " \"" : "", name,
	       name[0] ? "\"" : "");
	const char *timed = cw.timed ? " with a deadline" : "";
	ms_duration(dur, ms_ticks_to_ns(c->now - cw.since));
	size_t used = strlen(head) + strlen(timed) + sizeof ", for " - 1 + strlen(dur);
	ms_fmt(c->f, "%s%s%s, for %s\n", ms_fmt_str(&hf),
	       ms_cond_wait_objects(objects, sizeof objects, (uintptr_t)cw.cond, m, mname,
				    ms_line_room(used)),
	       timed, dur);
	if (cw.caller)
		ms_fmt(c->f, "    waits at      %s\n", ms_symbolize(cw.caller, at, sizeof at));
}

void ms_cond_waits_print(struct ms_fmt *f, uint64_t now)
{
	struct cond_ctx c = { f, now, ms_cond_waits_min_s() * 1000 * ms_ticks_per_ms(), 0 };
	ms_threads_each(one, &c);
}
