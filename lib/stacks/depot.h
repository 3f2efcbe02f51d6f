/* depot.h - every distinct call stack stored once, named by a number.
 *
 * Records, history entries and blame lines hold a stack's id (32 bits)
 * instead of its frames.  The depot lives in a fixed budget of memory
 * (MUTEXSTAT_STACK_MEMORY) mapped once; when it is spent, new stacks are
 * counted as dropped (id 0).  Lookups and inserts take a spin lock of ours,
 * never a pthread mutex, and never call malloc. */
#ifndef MUTEXSTAT_DEPOT_H
#define MUTEXSTAT_DEPOT_H

#include <stddef.h>
#include <stdint.h>

typedef uint32_t ms_stack_id; /* 0: no stack */

int ms_depot_init(size_t budget_bytes);
/* The address space ms_depot_init maps for that budget. */
size_t ms_depot_bytes(size_t budget_bytes);

/* The id of these frames, storing them if new; 0 if the budget is spent. */
ms_stack_id ms_depot_put(const uintptr_t *frames, int n);

/* The frames of an id (innermost first); returns their number, 0 if the id
 * is unknown. */
int ms_depot_get(ms_stack_id id, const uintptr_t **frames);

/* ms_depot_put's id for these frames, asking first whether they are stack
 * *last's (a caller's memory of the stack it put last): a stack keeps its
 * id, so that one needs neither the lock nor a look-up.  *last becomes the
 * id given, if any; any value it may have is safe (it is checked). */
ms_stack_id ms_depot_put_again(const uintptr_t *frames, int n, ms_stack_id *last);

/* Capture the calling thread's stack (MUTEXSTAT_FRAMES deep) and store it.
 * 0 if capture is unavailable or the budget is spent. */
ms_stack_id ms_stack_here(void);

struct ms_depot_stats {
	uint64_t stacks;   /* distinct stacks stored */
	uint64_t puts;     /* stacks offered */
	uint64_t dropped;  /* offered when the budget was spent */
	uint64_t used, budget; /* bytes */
};
void ms_depot_stats(struct ms_depot_stats *out);

/* Memory from the depot's budget for other stack-keyed tables (blame);
 * zeroed; NULL when spent.  Caller holds ms_depot_lock(). */
void *ms_depot_alloc(size_t bytes);
/* The same for a table of a caller's own (a thread's bigger cache of
 * lock-order edges), aligned to `align` (a power of two, 16 to 4096),
 * while what *taken counts stays within `most` bytes of the budget
 * (added to it, under the lock); NULL otherwise, or if the lock cannot
 * be taken now (ms_depot_lock_for_update): the caller maps its own.
 * Takes the depot's lock itself.  Past the arena's first 128 KiB the
 * memory may be in huge pages. */
void *ms_depot_alloc_within(size_t bytes, size_t align, size_t *taken, size_t most);
void ms_depot_lock(void);
/* The lock for a change made on a lock path: 0, not taken, if another
 * thread is inside fork() and this one must not wait (base/spin.h). */
int ms_depot_lock_for_update(void);
void ms_depot_unlock(void);
void ms_depot_after_fork_child(void);

#endif
