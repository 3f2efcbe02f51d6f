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

void ms_findings_after_fork_child(void);

/* Print every finding (headings DEADLOCK:, POTENTIAL DEADLOCK:, ...).
 * Returns how many would fail a CI run (MUTEXSTAT_EXIT_CODE). */
int ms_findings_print(struct ms_fmt *f);

/* The kept self-deadlocks and held-at-exit findings, for the JSON output
 * (report time; a snapshot of each finding is passed to fn). */
struct ms_self_finding {
	uint32_t tid;
	uintptr_t key;         /* the mutex */
	enum ms_self_kind kind;
	uint32_t taken_stack;  /* depot ids: where it was first taken, */
	uint32_t relock_stack; /* and where relocked; 0 if not captured */
	uint64_t count;
};
void ms_findings_each_self(void (*fn)(const struct ms_self_finding *s, void *arg),
			   void *arg);

struct ms_exit_finding {
	uint32_t tid;
	const char *name;      /* as ps -L showed it, at exit */
	uint32_t n;            /* mutexes held at exit */
	uint32_t shown;        /* of them in key/caller (at most 8) */
	uintptr_t key[8], caller[8];
};
/* Returns how many more threads ended holding mutexes than were kept. */
uint32_t ms_findings_each_exit(void (*fn)(const struct ms_exit_finding *e, void *arg),
			       void *arg);

#endif
