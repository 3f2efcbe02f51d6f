/* out_folded.c - the folded-stacks output; see out_folded.h.
 *
 * Each line starts with the mutex (its name, or its address and the variable
 * it is: "mutex 0x55.. <cache_lock>") as the root
 * frame, so a flame graph splits the time by mutex first -- another kind
 * of lock named so: "rwlock 0x..", "spin lock 0x..".  A read-write lock's
 * next frame is the stack's mode, "[read]", "[write]" or "[mode not
 * known]" (out_modes.h), so its reads and writes split next.  Then the
 * stack from the outermost frame shown to the innermost.  Sampled stacks
 * carry the waits they were charged; with MUTEXSTAT_STACK_SAMPLE=1 the
 * values of the wait file add up to the report's total wait.  Lives that ended are
 * in their site line's stacks, under a root of their own. */
#define _GNU_SOURCE
#include "report/kinds.h"
#include "report/out_folded.h"
#include "report/out_modes.h"
#include "report/report.h"
#include "base/clock.h"
#include "stacks/depot.h"
#include "base/fmt.h"
#include "base/internal.h"
#include "report/report_stacks.h"
#include "report/lines.h"
#include "stacks/symbols.h"
#include "core/table.h"

#include <errno.h>

struct ctx {
	struct ms_fmt *f;
	enum ms_blame_kind kind;
	const struct ms_out_calls *calls; /* a read-write lock's, NULL others */
	const struct ms_span *span;       /* an interval's, NULL the run's */
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
	struct ms_ns_parts parts = { 0, 0 }; /* the lock's total, whole */
	for (const struct ms_blame *b = list; b; b = b->next) {
		if (b->birth != birth || b->kind != (uint32_t)c->kind)
			continue;
		uint64_t count, total = LOAD(&b->total);
		if (c->span) /* (the report's own lines: it takes their share) */
			ms_blame_since((struct ms_blame *)b, MS_BLAME_FOLDED, &count, &total);
		if (!total)
			continue;
		put_frame(c->f, root);
		if (c->calls) {
			const char *mode = ms_out_stack_mode(c->calls, b->stack);
			ms_fmt(c->f, ";[%s]", mode ? mode : "mode not known");
		}
		const uintptr_t *frames;
		int n = ms_depot_get(b->stack, &frames);
		if (!n) /* as the text report and pprof say it */
			ms_fmt(c->f, c->kind == MS_BLAME_HOLD
					     ? ";[not attributed: whose hold it was is not known]"
					     : ";[stack not captured]");
		for (int i = ms_stack_shown(frames, n) - 1; n && i >= 0; i--) {
			char where[256];
			ms_fmt(c->f, ";");
			put_frame(c->f, ms_symbolize_short(frames[i], where, sizeof where));
		}
		ms_fmt(c->f, " %llu\n", (unsigned long long)ms_ns_part(&parts, total));
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
	uint32_t flags = LOAD(&ms_rec(r)->flags);
	char root[180];
	struct ms_fmt rf;
	ms_fmt_init(&rf, root, sizeof root, -1);
	if (name) /* whole (at most 63 bytes): a cut could merge two locks */
		ms_fmt(&rf, "%s %s", ms_lock_noun(flags), name);
	else {
		ms_fmt(&rf, "%s %p", ms_lock_noun(flags), (void *)key);
		ms_fmt_lock_variable(&rf, key, 60);
	}
	struct ms_out_calls calls;
	c->calls = NULL;
	if (ms_lock_class(flags) == MS_CLASS_RWLOCK) {
		ms_out_calls_of(&calls, r, NULL);
		c->calls = &calls;
	}
	stacks(c, ms_fmt_str(&rf), list, birth);
	c->calls = NULL;
}

/* What the lives of a site line were: "mutex(es)", "rwlock(s)", "spin
 * lock(s)", or "lock(s)" of several kinds. */
static const char *site_noun(uint32_t classes, int plural)
{
	switch (classes) {
	case 0:
	case 1u << MS_CLASS_MUTEX: return plural ? "mutexes" : "mutex";
	case 1u << MS_CLASS_RWLOCK: return plural ? "rwlocks" : "rwlock";
	case 1u << MS_CLASS_SPIN: return plural ? "spin locks" : "spin lock";
	default: return plural ? "locks" : "lock";
	}
}

/* The lives that ended, by site line: "mutex NAME (ended)" for a line
 * whose lives were named, else "mutexes ended at SITE" ("rwlock NAME
 * (ended)", "rwlocks ended at SITE", ... for other kinds). */
static void one_site(const struct ms_site *s, const struct ms_blame *lines, void *arg)
{
	struct ctx *c = arg;
	const char *name = LOAD(&s->name);
	uint32_t classes = LOAD(&s->classes);
	char root[200], site[160];
	struct ms_fmt rf;
	ms_fmt_init(&rf, root, sizeof root, -1);
	if (name) /* whole, as above */
		ms_fmt(&rf, "%s %s (ended)", site_noun(classes, 0), name);
	else
		ms_fmt(&rf, "%s ended at %s", site_noun(classes, 1),
		       ms_site_name(s->site, site, sizeof site, 1));
	struct ms_out_calls calls;
	c->calls = NULL;
	if (classes == 1u << MS_CLASS_RWLOCK) {
		ms_out_calls_of(&calls, 0, s);
		c->calls = &calls;
	}
	stacks(c, ms_fmt_str(&rf), lines, 0);
	c->calls = NULL;
}

int ms_write_folded(int fd, enum ms_blame_kind kind, const struct ms_span *span)
{
	char buf[8192];
	struct ms_fmt f;
	ms_fmt_init(&f, buf, sizeof buf, fd);
	struct ctx c = { &f, kind, NULL, span };
	ms_table_each(one_mutex, &c);
	ms_blame_each_site(one_site, &c);
	ms_fmt_flush(&f);
	if (f.failed)
		errno = f.failed;
	return f.failed ? -1 : 0;
}
