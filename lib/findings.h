/* findings.h - what the deadlock analysis found, for the report's first
 * section: self-deadlocks, mutexes held when a thread exited, lock-order
 * inversions (potential and guarded), misuse. */
#ifndef MUTEXSTAT_FINDINGS_H
#define MUTEXSTAT_FINDINGS_H

#include "fmt.h"
#include "threads.h"

#include <pthread.h>
#include <stdint.h>

/* A thread exits with mutexes held (from its record, at thread exit). */
void ms_finding_held_at_exit(const struct ms_tstate *ts);

/* A thread relocks a mutex it holds.  `averted`: glibc answered EDEADLK
 * (errorcheck); otherwise the call will never return, so the finding is
 * also written out at once. */
enum ms_self_kind {
	MS_SELF_FOREVER,  /* lock: never returns; also written out at once */
	MS_SELF_TIMEOUT,  /* timed lock: waits for itself until its deadline */
	MS_SELF_AVERTED,  /* errorcheck: glibc answered EDEADLK */
};
void ms_finding_self_deadlock(struct ms_tstate *ts, uint32_t rec, uintptr_t key,
			      enum ms_self_kind kind);

/* Print every finding (headings DEADLOCK:, POTENTIAL DEADLOCK:, ...).
 * Returns how many would fail a CI run (MUTEXSTAT_EXIT_CODE). */
int ms_findings_print(struct ms_fmt *f);

#endif
