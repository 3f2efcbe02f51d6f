/* interval_text.c - one interval as text; see interval_text.h. */
#define _GNU_SOURCE
#include "report/interval_text.h"
#include "analysis/blame.h"
#include "base/clock.h"
#include "base/fmt.h"
#include "base/internal.h"
#include "base/options.h"
#include "base/output.h"
#include "report/kinds.h"
#include "report/report_stacks.h"
#include "report/top_table.h"
#include "report/lines.h"
#include "stacks/symbols.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#define WIDTH 120

static void header(struct ms_fmt *f, const struct ms_iv *iv, const struct ms_span *sp)
{
	uint64_t run_mono, run_wall;
	ms_clock_run_start(&run_mono, &run_wall);
	uint64_t from = sp->start_ns > run_wall ? sp->start_ns - run_wall : 0;
	char d[16], a[16], b[16], w[16];
	ms_fmt(f, "mutexstat: %s (pid %d) interval %u: %s, from %s to %s into the run\n",
	       ms_program_name(), (int)getpid(), sp->n, ms_duration(d, sp->duration_ns),
	       ms_duration(a, from), ms_duration(b, from + sp->duration_ns));
	if (iv->reset)
		ms_fmt(f, "  mutexstat_reset() was called in it: only what came after the "
			  "reset is here\n");
	/* contended, in tenths of a percent of the acquisitions, rounded;
	 * some that round to none are "<0.1 %", not a 0.0 beside a count */
	uint64_t permille = iv->acquisitions
				    ? (iv->contended * 1000 + iv->acquisitions / 2) / iv->acquisitions
				    : 0;
	char share[24];
	struct ms_fmt sf;
	ms_fmt_init(&sf, share, sizeof share, -1);
	if (iv->contended && !permille)
		ms_fmt(&sf, "<0.1");
	else
		ms_fmt(&sf, "%llu.%llu", (unsigned long long)(permille / 10),
		       (unsigned long long)(permille % 10));
	ms_fmt(f, "  %llu %s of %llu %s, %llu contended (%s %%), %s waited",
	       (unsigned long long)iv->acquisitions,
	       iv->acquisitions == 1 ? "acquisition" : "acquisitions",
	       (unsigned long long)iv->locks, iv->locks == 1 ? "lock" : "locks",
	       (unsigned long long)iv->contended, ms_fmt_str(&sf), ms_duration(w, iv->wait_ns));
	if (iv->ended)
		ms_fmt(f, "; %llu ended", (unsigned long long)iv->ended);
	ms_fmt(f, "\n");
	/* the dump signal MUTEXSTAT_SIGNAL chose, if any */
	static const char *const dump_by[] = { ", or a dump with kill -USR1,",
					       ", or a dump with kill -USR2,", "" };
	if (iv->findings)
		ms_fmt(f, "  findings: %llu new in this interval, %llu in the run so far (the "
			  "exit report%s tells them)\n",
		       (unsigned long long)iv->findings_new, (unsigned long long)iv->findings,
		       dump_by[ms_opt.signal < 2 ? ms_opt.signal : 2]);
}

/* The interval's stacks of one kind for a line, best (most time) first. */
static void section(struct ms_fmt *f, const struct ms_iv_line *o, int kind,
		    const char *title, const char *what)
{
	int n = o->nstacks[kind], all = o->all_stacks[kind];
	if (!n)
		return;
	ms_report_blame_head(f, title, all, what, "mean");
	for (int i = 0; i < n; i++) {
		const struct ms_iv_stack *s = &o->stacks[kind][i];
		ms_report_blame_row(f, (unsigned)kind, s->count, s->total, s->total / s->count,
				    o->stacks_total[kind], s->stack);
	}
	if (all > n)
		ms_fmt(f, "  (%d more stacks)\n", all - n);
}

static void detail(struct ms_fmt *f, size_t rank, const struct ms_iv_line *o)
{
	const struct ms_line *l = &o->l;
	if (!o->nstacks[MS_BLAME_WAIT] && !o->nstacks[MS_BLAME_HOLD])
		return;
	char site[256];
	if (l->ended)
		ms_fmt(f, "\n#%zu mutexes that ended, first locked %s %s\n", rank,
		       l->wrapped && l->key != MS_SITE_OTHERS ? "by a wrapper called at" : "at",
		       ms_symbol_fit((char *)ms_site_name(l->key, site, sizeof site, 0), WIDTH - 60));
	else {
		char head[48], names[160];
		struct ms_fmt hf;
		ms_fmt_init(&hf, head, sizeof head, -1);
		ms_fmt(&hf, "#%zu %s %p", rank, ms_lock_noun(LOAD(&ms_rec(l->r)->flags)),
		       (void *)l->key);
		struct ms_names_room room = { 60, 40, ms_line_room(strlen(head)), 0 };
		ms_fmt(f, "\n%s%s\n", ms_fmt_str(&hf),
		       ms_lock_names(names, sizeof names, l->key, l->name, &room));
	}
	section(f, o, MS_BLAME_WAIT, "who waited: the stacks of the threads that waited",
		"waited");
	section(f, o, MS_BLAME_HOLD,
		"who made them wait: the unlocks that ended the holds they waited behind", "caused");
}

int ms_write_interval_text(int fd, const struct ms_iv *iv, const struct ms_span *sp)
{
	char buf[8192];
	struct ms_fmt f;
	ms_fmt_init(&f, buf, sizeof buf, fd);
	header(&f, iv, sp);
	if (!iv->n)
		ms_fmt(&f, "\nNo lock was used in this interval.\n");
	else {
		ms_top_table(&f, iv->lines, sizeof *iv->lines, iv->n, " in this interval", 0);
		/* (a maximum does not add up from one interval to the next) */
		ms_fmt(&f, "  wait max and hold max: the upper bound of the interval's longest "
			   "histogram bucket\n");
	}
	for (size_t i = 0; i < iv->n; i++)
		detail(&f, i + 1, &iv->lines[i]);
	ms_fmt_flush(&f);
	if (f.failed)
		errno = f.failed;
	return f.failed ? -1 : 0;
}
