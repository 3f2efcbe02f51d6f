/* robust.h - robust mutexes whose owner died holding them.
 *
 * When the owner of a robust mutex dies -- a thread that exits, or a
 * process, for one shared between processes -- the next lock succeeds with
 * EOWNERDEAD.  The new owner either repairs what the mutex guards and calls
 * pthread_mutex_consistent(), or unlocks without doing so, after which the
 * mutex is not recoverable: every lock returns ENOTRECOVERABLE.  The
 * errors are counted with the mutex's other errors; this file counts the
 * two ways out (per mutex life).  A repair is the correct use of a robust
 * mutex: a note in the mutex's section of the report.  A mutex left not
 * recoverable is an OWNER DIED finding. */
#ifndef MUTEXSTAT_ROBUST_H
#define MUTEXSTAT_ROBUST_H


#include <stdint.h>

/* pthread_mutex_consistent() succeeded on record r. */
void ms_robust_made_consistent(uint32_t r);
/* Its holder unlocked record r while it was inconsistent: now it is not
 * recoverable. */
void ms_robust_left_inconsistent(uint32_t r);

/* A lock of record r's mutex returned ENOTRECOVERABLE (not an unlock's:
 * glibc answers so for an inner level of a recursive one not yet made
 * consistent, which stays recoverable). */
void ms_robust_refused(uint32_t r);

/* A thread ends holding record r's mutex: a mark for
 * ms_robust_recovered(), 0 if the mutex is not robust. */
uint32_t ms_robust_mark(uint32_t r);
/* Report time: whether that owner death of life (r, birth) was repaired
 * -- pthread_mutex_consistent() was called on the life after the mark
 * was taken -- so the thread's end holding it is no finding. */
int ms_robust_recovered(uint32_t r, uint64_t birth, uint32_t mark);

/* A mutex's owner deaths and their outcomes (report time). */
struct ms_robust_view {
	uint64_t died;        /* locks that returned EOWNERDEAD */
	uint64_t refused;     /* locks that returned ENOTRECOVERABLE */
	uint32_t consistent;  /* pthread_mutex_consistent() calls */
	uint32_t left;        /* unlocks while inconsistent */
	uintptr_t last_at;    /* the last lock that got EOWNERDEAD, 0 if unknown */
	int not_recoverable;  /* left or refused: a finding */
};
/* Live record r; 0 if its owner never died. */
int ms_robust_view(uint32_t r, struct ms_robust_view *out);
/* The ended lives of a site line (its errors, MS_E_COUNT of them). */
int ms_robust_site_view(uintptr_t site, const uint64_t *errors,
			struct ms_robust_view *out);

/* Each OWNER DIED finding -- a mutex left not recoverable -- with its
 * address and record, or for the ended lives of a first-lock site, key 0
 * and the site; returns how many (each fails a CI run). */
typedef void ms_robust_finding_fn(uintptr_t key, uint32_t r, uintptr_t site,
				  const struct ms_robust_view *v, void *arg);
int ms_robust_each_finding(ms_robust_finding_fn *fn, void *arg);

void ms_robust_after_fork_child(void);

#endif
