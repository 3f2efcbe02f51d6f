/* lines.h - the lines a report ranks: a live mutex, or the ended lives of
 * a first-lock site summed, read from the table into one shape, and
 * ranked by MUTEXSTAT_SORT.  The text report's top table is made of them
 * (report.c), and so are the interval files' (interval_lines.h). */
#ifndef MUTEXSTAT_LINES_H
#define MUTEXSTAT_LINES_H

#include "core/table.h"

#include <stddef.h>
#include <stdint.h>

struct ms_line {
	uintptr_t key;        /* mutex address, or the site for destroyed */
	uint32_t r;           /* record, 0 for a site line */
	int ended;            /* a site line: lives that ended, summed */
	int wrapped;          /* ... at the line that called a wrapper */
	uint64_t mutexes;     /* destroyed mutexes summed in a site line */
	uint64_t acquisitions, contended, changes;
	uint64_t wait_total, wait_max, hold_total, hold_max, holds; /* ns */
	uint64_t trylock_ok, trylock_busy, timeouts, waiters_max, cond_waits;
	uint64_t waiting_now; /* threads in a wait for it as the report reads */
	uint64_t timeout_waits; /* timeouts after a wait, in wait_total */
	uint64_t errors[MS_E_COUNT], misuse[MS_M_COUNT];
	uintptr_t first_caller;
	const char *name;
	int timed;
	const struct ms_site *site; /* a site line's, in the table */
	uint32_t classes;           /* kinds of lock: 1 << ms_lock_class */
	int reads_unknown;          /* an rwlock whose reads were not told apart */
	struct ms_site_reads rd;    /* a read-write lock's reads (ticks) */
};

/* Whether a lock that made threads wait has holds so short that the
 * library's own work in each lengthens them noticeably: threads then find
 * it taken more often than they would without the library, and the report
 * says so beside its counts.  Two threads on one mutex (doc/limits.md,
 * "Short holds"), the holds as the library timed them: 40-90 ns, 4-9
 * times bare's contended count; 170-260 ns, about twice; 470-510 ns, 1.2
 * to 2 times; about 800 ns, 1.2 to 1.4 times.  Times in ns. */
#define MS_SHORT_HOLD_NS 500
static inline int ms_holds_short(uint64_t contended, uint64_t holds, uint64_t hold_total_ns)
{
	return contended && holds && hold_total_ns / holds < MS_SHORT_HOLD_NS;
}

/* Live mutex `key`, record r, as the report reads it now. */
void ms_line_from_record(struct ms_line *l, uintptr_t key, uint32_t r);

/* s: site line i as ms_table_site reads it. */
void ms_line_from_site(struct ms_line *l, const struct ms_site *s, uint32_t i);

/* Where the line's lock was first locked, as its site line will name it:
 * the caller of the wrapper it was locked through. */
uintptr_t ms_line_site(const struct ms_line *l);

/* What an ended line's site is called: ms_symbolize's name for it (with
 * `narrow`, ms_symbolize_short's), or, for the line that sums the lives
 * of the sites past MS_MAX_SITES, MS_SITE_OTHERS_TEXT.  Returns out. */
#define MS_SITE_OTHERS_TEXT "other sites (past the 4096 sites kept)"
_Static_assert(MS_MAX_SITES == 4096, "MS_SITE_OTHERS_TEXT says the limit");
const char *ms_site_name(uintptr_t site, char *out, size_t cap, int narrow);

/* The ended lives summed in that line: 0 while no site is past the limit. */
uint64_t ms_site_others_ended(void);

/* Whether a ranks before b: by MUTEXSTAT_SORT's number, then by
 * acquisitions, then by address. */
int ms_line_before(const struct ms_line *a, const struct ms_line *b);

/* The best `cap` lines offered, kept as a heap in lines[0..*n) with the
 * lowest ranked at its root: each line offered costs O(log cap) however
 * large MUTEXSTAT_TOP is (a list kept sorted by insertion cost O(top) per
 * mutex: 79 s for 200,000 mutexes and the top 100,000).  ms_lines_sort
 * then puts them in order, best first.  A line is `size` bytes (at most
 * 8 KB) that begin with its struct ms_line. */
void ms_lines_offer(void *lines, size_t size, size_t *n, size_t cap, const void *l);
void ms_lines_sort(void *lines, size_t size, size_t n);

#endif
