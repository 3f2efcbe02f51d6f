/* blame.h - who waits and who makes them wait, per mutex and call stack.
 *
 * A waiter that gets the mutex charges its wait to its own stack (a
 * "waiting" line) and, split at the releases it waited through, to the
 * stacks of the unlocks that ended the holds it waited behind ("holding"
 * lines, record.c): each hold is charged the part of the wait it took.  Lines are kept
 * per mutex life, in the depot's memory; when the life ends they are added
 * to its first-lock site's line (table.h), which keeps one line per kind
 * and stack. */
#ifndef MUTEXSTAT_BLAME_H
#define MUTEXSTAT_BLAME_H

#include "stacks/depot.h"

#include <stdint.h>

enum ms_blame_kind { MS_BLAME_WAIT, MS_BLAME_HOLD };

/* The formats that write interval files of the lines, each keeping its
 * own account of what it showed (one may be asked for, not another).
 * The text and JSON files share one: both are written from the same
 * reading of an interval (report/interval_lines.h). */
enum ms_blame_format { MS_BLAME_PPROF, MS_BLAME_FOLDED, MS_BLAME_REPORT, MS_BLAME_FORMATS };

struct ms_blame {
	struct ms_blame *next;   /* the mutex's next line */
	uint32_t rec;            /* record and life of the mutex */
	uint64_t birth;
	uint32_t kind;
	ms_stack_id stack;
	uint64_t count, total, max; /* waits; ticks */
	/* of count and total, what each format's interval profiles have
	 * shown so far (ms_blame_since) */
	uint64_t shown[MS_BLAME_FORMATS][2];
	void *hh_next;           /* hash chain (blame.c) */
};

/* Charge one wait of `ticks` to (mutex, kind, stack).  Returns 0, -1 when
 * the depot's memory is spent (the wait then stays counted in the mutex's
 * totals only). */
int ms_blame_add(uint32_t rec, uint64_t birth, enum ms_blame_kind kind,
		 ms_stack_id stack, uint64_t ticks);

/* The first line of a mutex life (then ->next); lines of both kinds.
 * Between ms_blame_readers(1) and ms_blame_readers(-1) (a report).  A
 * site line's list (struct ms_site's blame) is read the same way; its
 * lines have birth 0. */
const struct ms_blame *ms_blame_of(uint32_t rec, uint64_t birth);

/* Record rec's life ends (table.c, before the record can be reused), its
 * numbers going to site line number `site`, whose lines *site_lines
 * heads: each of the life's lines is added to the site's of the same kind
 * and stack (made if new), and its memory goes to new lines -- unless a
 * report is reading lines: those stay put, spent.  With the depot's lock
 * held. */
void ms_blame_life_ends(uint32_t rec, uint32_t site, void **site_lines);

/* The site lines are about to be emptied (a reset): their blame lines
 * (each site's list, sites[0..n)) go to new lines, and are not found
 * again by a line made later for a site of the same number.  With the
 * depot's lock held. */
struct ms_site;
void ms_blame_sites_reset(struct ms_site *sites, uint32_t n);

/* A format's interval profile's share of line b (MUTEXSTAT_INTERVAL):
 * its waits and ticks since that format's previous interval took its
 * share, which from now on counts as shown.  A life that ends hands what
 * was shown of its lines to its site's, so each wait is in one interval
 * of each format: the profiles of a run add up to its whole.  A
 * report's, between ms_blame_readers(1) and (-1); one report at a time
 * (formats.c). */
void ms_blame_since(struct ms_blame *b, enum ms_blame_format format, uint64_t *count,
		    uint64_t *total);

/* Whether any line of list of life `birth` (0: a site's) has waits that
 * format has not shown yet.  Read without the depot's lock, as a hint: a
 * line only grows, and what is shown is taken with the lock. */
int ms_blame_unshown(const struct ms_blame *list, uint64_t birth,
		     enum ms_blame_format format);

/* Whether a report is reading lines now (ms_blame_readers); with the
 * depot's lock held. */
int ms_blame_reading(void);

/* A report begins (+1) or ends (-1) reading lines. */
void ms_blame_readers(int delta);
void ms_blame_after_fork_child(void);


/* Calls fn(line, its blame lines, arg) for each site line that has blame
 * lines (ended lives that made threads wait); a report's, between
 * ms_blame_readers(1) and (-1). */
void ms_blame_each_site(void (*fn)(const struct ms_site *s,
				   const struct ms_blame *lines, void *arg),
			void *arg);

#endif
