/* interval_lines.h - what one interval of MUTEXSTAT_INTERVAL holds for
 * the text and JSON files: each lock's numbers since the interval before.
 *
 * The table keeps numbers for the whole run; an interval's are those less
 * what the intervals before showed, kept here as bases: one per mutex life
 * (record and birth) and one per site line.  When a life ends its numbers
 * go to its site's line, and so does its base: the site's numbers in the
 * next interval are what the site gained less what its ended lives had
 * shown already.  So every acquisition, wait and hold is in one interval,
 * and a run's intervals add up to its whole-run report (the numbers that
 * add up: counts, totals, histograms; a maximum does not, and an
 * interval's is the highest bucket of its histogram).
 *
 * The stacks that waited and made others wait come from the blame lines,
 * with their own account of what was shown (blame.h, MS_BLAME_REPORT).
 *
 * Read by the report's thread alone (formats.c's files lock): the bases
 * are its memory, mapped on first use, and no lock of the program's is
 * taken.  While threads run, a life that ends while an interval is read
 * may show part of its numbers in the next interval instead: the whole
 * still adds up. */
#ifndef MUTEXSTAT_INTERVAL_LINES_H
#define MUTEXSTAT_INTERVAL_LINES_H

#include "report/lines.h"
#include "stacks/depot.h"

#include <stddef.h>
#include <stdint.h>

#define MS_IV_STACKS 5 /* stacks of each kind shown per line, as the report */

struct ms_iv_stack {
	ms_stack_id stack;
	uint64_t count, total; /* in the interval; ticks */
};

struct ms_iv_line {
	/* The interval's numbers, in the whole report's shape.  Maxima
	 * (wait_max, hold_max) are the upper bound of the highest bucket of
	 * the interval's histogram; waiters_max, waiting_now and readers_max
	 * are not kept (0). */
	struct ms_line l;
	uint64_t hist[MS_HIST_BUCKETS], hold_hist[MS_HIST_BUCKETS];
	uint64_t birth; /* the life's, 0 for a site line */
	/* [MS_BLAME_WAIT], [MS_BLAME_HOLD]: the best stacks by time, how
	 * many had any, and their total */
	struct ms_iv_stack stacks[2][MS_IV_STACKS];
	int nstacks[2], all_stacks[2];
	uint64_t stacks_total[2];
};

struct ms_iv {
	struct ms_iv_line *lines; /* ranked by MUTEXSTAT_SORT, best first */
	size_t n;                 /* at most MUTEXSTAT_TOP */
	size_t bytes;
	/* over every lock that did anything in the interval */
	uint64_t locks, acquisitions, contended, wait_ns, ended;
	/* findings (deadlocks, potential deadlocks, self-deadlocks, held at
	 * exit, stalls): all of the run's so far, and how many of them were
	 * first made in this interval */
	uint64_t findings, findings_new;
	int reset; /* mutexstat_reset() since the interval before: this one
		      holds what came after it */
};

/* Read the interval that ends now into iv; from here on its numbers count
 * as shown.  Between ms_blame_readers(1) and (-1) and
 * ms_clock_report_begin/end.  Returns 0, or -1 with no memory (iv empty:
 * the interval's numbers will be in the next one's). */
int ms_iv_take(struct ms_iv *iv);
void ms_iv_free(struct ms_iv *iv);

/* The first interval of a fork child starts at the fork, with its table
 * new: no base of the parent's is the child's. */
void ms_iv_after_fork_child(void);

#endif
