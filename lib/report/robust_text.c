/* robust_text.c - the OWNER DIED findings and the robust note in a
 * mutex's section of the text report, from analysis/robust.h's views. */
#include "report/robust_text.h"
#include "analysis/robust.h"
#include "base/internal.h"
#include "core/table.h"
#include "report/kinds.h"
#include "report/lines.h"
#include "stacks/symbols.h"

#include <string.h>

static const char *times(uint64_t n)
{
	return n == 1 ? "time" : "times";
}

static void print_finding(uintptr_t key, uint32_t r, uintptr_t site,
			  const struct ms_robust_view *v, void *arg)
{
	struct ms_fmt *f = arg;
	char where[256];
	if (key) {
		const char *name = LOAD(&ms_table.cold[r].name);
		char head[48], tail[96], names[160];
		struct ms_fmt hf, tf;
		ms_fmt_init(&hf, head, sizeof head, -1);
		ms_fmt(&hf, "OWNER DIED: mutex %p", (void *)key);
		ms_fmt_init(&tf, tail, sizeof tail, -1);
		ms_fmt(&tf, " (robust): its owner died holding it, %llu %s",
		       (unsigned long long)v->died, times(v->died));
		struct ms_names_room room = { 40, 30, ms_line_room(strlen(head) + strlen(tail)), 0 };
		ms_fmt(f, "\n%s%s%s\n", ms_fmt_str(&hf),
		       ms_lock_names(names, sizeof names, key, name, &room), ms_fmt_str(&tf));
		ms_fmt(f, "  the next lock returned EOWNERDEAD%s%s\n",
		       v->last_at ? ", last at " : "",
		       v->last_at ? ms_symbolize(v->last_at, where, sizeof where) : "");
	} else
		ms_fmt(f, "\nOWNER DIED: on robust mutexes now ended, first locked at %s: "
			  "the next lock got EOWNERDEAD, %llu %s\n",
		       ms_site_name(site, where, sizeof where, 0), (unsigned long long)v->died,
		       times(v->died));
	ms_fmt(f, "  made consistent again (pthread_mutex_consistent): %u %s; "
		  "unlocked without that: %u %s\n",
	       v->consistent, times(v->consistent), v->left, times(v->left));
	ms_fmt(f, "  NOT RECOVERABLE: unlocked while inconsistent, it can never be "
		  "locked again; %llu %s since returned ENOTRECOVERABLE\n",
	       (unsigned long long)v->refused, v->refused == 1 ? "lock" : "locks");
}

int ms_robust_print(struct ms_fmt *f)
{
	return ms_robust_each_finding(print_finding, f);
}

/* The note in the mutex's section: an owner death made consistent is the
 * correct use of a robust mutex, no finding. */
static void print_note(struct ms_fmt *f, const struct ms_robust_view *v)
{
	ms_fmt(f, "  owner died: %llu %s; made consistent again (pthread_mutex_consistent): "
		  "%u %s",
	       (unsigned long long)v->died, times(v->died), v->consistent,
	       times(v->consistent));
	if (v->left)
		ms_fmt(f, "; unlocked without that: %u %s", v->left, times(v->left));
	else if (v->consistent && !v->refused)
		ms_fmt(f, " -- repaired, no finding");
	ms_fmt(f, "\n");
	if (v->not_recoverable)
		ms_fmt(f, "    NOT RECOVERABLE: the OWNER DIED finding above\n");
	if (v->last_at) {
		char where[256];
		ms_fmt(f, "    the next lock returned EOWNERDEAD, last at %s\n",
		       ms_symbolize(v->last_at, where, sizeof where));
	}
}

void ms_robust_note(struct ms_fmt *f, uint32_t r)
{
	struct ms_robust_view v;
	if (ms_robust_view(r, &v))
		print_note(f, &v);
}

void ms_robust_site_note(struct ms_fmt *f, uintptr_t site, const uint64_t *errors)
{
	struct ms_robust_view v;
	if (ms_robust_site_view(site, errors, &v))
		print_note(f, &v);
}
