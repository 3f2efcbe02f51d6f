/* out_folded.c - the folded-stacks output; see out_folded.h.
 *
 * Each line starts with the mutex (its name, or its address) as the root
 * frame, so a flame graph splits the time by mutex first; then the stack
 * from the outermost frame shown to the innermost.  Sampled stacks carry
 * the waits they were charged; with MUTEXSTAT_STACK_SAMPLE=1 the values of
 * the wait file add up to the report's total wait.  Lives that ended are
 * in their site line's stacks, under a root of their own. */
#define _GNU_SOURCE
#include "report/out_folded.h"
#include "base/clock.h"
#include "stacks/depot.h"
#include "base/fmt.h"
#include "base/internal.h"
#include "report/report_stacks.h"
#include "stacks/symbols.h"
#include "core/table.h"

#include <errno.h>

struct ctx {
	struct ms_fmt *f;
	enum ms_blame_kind kind;
};

/* A frame name without the separators of the format. */
static void put_frame(struct ms_fmt *f, const char *name)
{
	for (const char *p = name; *p; p++)
		ms_fmt(f, "%c", *p == ';' ? ':' : *p == '\n' ? ' ' : *p);
}

/* The lines of the kind wanted in list (a mutex life's, birth, or a site
 * line's, 0), under root. */
static void stacks(struct ctx *c, const char *root, const struct ms_blame *list,
		   uint64_t birth)
{
	for (const struct ms_blame *b = list; b; b = b->next) {
		if (b->birth != birth || b->kind != (uint32_t)c->kind || !b->total)
			continue;
		put_frame(c->f, root);
		const uintptr_t *frames;
		int n = ms_depot_get(b->stack, &frames);
		if (!n)
			ms_fmt(c->f, ";[stack not captured]");
		for (int i = ms_stack_shown(frames, n) - 1; n && i >= 0; i--) {
			char where[256];
			ms_fmt(c->f, ";");
			put_frame(c->f, ms_symbolize_short(frames[i], where, sizeof where));
		}
		ms_fmt(c->f, " %llu\n", (unsigned long long)ms_ticks_to_ns(b->total));
	}
}

static void one_mutex(uintptr_t key, uint32_t r, void *arg)
{
	struct ctx *c = arg;
	uint64_t birth = LOAD(&ms_rec(r)->birth);
	const struct ms_blame *list = ms_blame_of(r, birth);
	if (!list)
		return;
	const char *name = LOAD(&ms_table.cold[r].name); /* a cold part: list */
	char root[96];
	struct ms_fmt rf;
	ms_fmt_init(&rf, root, sizeof root, -1);
	if (name)
		ms_fmt(&rf, "mutex %.60s", name);
	else
		ms_fmt(&rf, "mutex %p", (void *)key);
	stacks(c, ms_fmt_str(&rf), list, birth);
}

/* The lives that ended, by site line: "mutex NAME (ended)" for a line
 * whose lives were named, else "mutexes ended at SITE". */
static void one_site(const struct ms_site *s, const struct ms_blame *lines, void *arg)
{
	const char *name = LOAD(&s->name);
	char root[200], site[160];
	struct ms_fmt rf;
	ms_fmt_init(&rf, root, sizeof root, -1);
	if (name)
		ms_fmt(&rf, "mutex %.60s (ended)", name);
	else
		ms_fmt(&rf, "mutexes ended at %s", ms_symbolize_short(s->site, site, sizeof site));
	stacks(arg, ms_fmt_str(&rf), lines, 0);
}

int ms_write_folded(int fd, enum ms_blame_kind kind)
{
	char buf[8192];
	struct ms_fmt f;
	ms_fmt_init(&f, buf, sizeof buf, fd);
	struct ctx c = { &f, kind };
	ms_table_each(one_mutex, &c);
	ms_blame_each_site(one_site, &c);
	ms_fmt_flush(&f);
	if (f.failed)
		errno = f.failed;
	return f.failed ? -1 : 0;
}
