/* blame.h - who waits and who makes them wait, per mutex and call stack.
 *
 * A waiter that gets the mutex charges its wait to its own stack (a
 * "waiting" line) and to the stack of the unlock that let it in (a
 * "holding" line), as Go's mutex profile blames holders.  Lines are kept
 * per mutex life, in the depot's memory, and reused when the life ends. */
#ifndef MUTEXSTAT_BLAME_H
#define MUTEXSTAT_BLAME_H

#include "depot.h"

#include <stdint.h>

enum ms_blame_kind { MS_BLAME_WAIT, MS_BLAME_HOLD };

struct ms_blame {
	struct ms_blame *next;   /* the mutex's next line */
	uint32_t rec;            /* record and life of the mutex */
	uint64_t birth;
	uint32_t kind;
	ms_stack_id stack;
	uint64_t count, total, max; /* waits; ticks */
	void *hh_next;           /* hash chain (blame.c) */
};

/* Charge one wait of `ticks` to (mutex, kind, stack).  Returns 0, -1 when
 * the depot's memory is spent (the wait then stays counted in the mutex's
 * totals only). */
int ms_blame_add(uint32_t rec, uint64_t birth, enum ms_blame_kind kind,
		 ms_stack_id stack, uint64_t ticks);

/* The first line of a mutex life (then ->next); lines of both kinds.
 * Between ms_blame_readers(1) and ms_blame_readers(-1) (a report). */
const struct ms_blame *ms_blame_of(uint32_t rec, uint64_t birth);

/* Record rec's life ends (table.c, before the record can be reused): its
 * lines' memory goes to new lines, unless a report is reading lines. */
void ms_blame_life_ends(uint32_t rec);

/* A report begins (+1) or ends (-1) reading lines. */
void ms_blame_readers(int delta);
void ms_blame_after_fork_child(void);


#endif
