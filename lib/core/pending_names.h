/* pending_names.h - names given to locks the table has no record of yet.
 *
 * mutexstat_name_lock() names a lock by its address alone: a read-write
 * lock, a spin lock or a mutex that has not been initialised or used yet
 * has no record, and its kind is not known until it is.  Making a record
 * then would give it a kind, perhaps the wrong one, and track a lock
 * MUTEXSTAT_TRACK leaves out.  Instead the name waits here, and the record
 * the lock's init or first use makes takes it (table.c).  Both happen
 * under the address's home stripe lock, so a name and a record for one
 * address never miss each other; names of different addresses are put and
 * taken at once by slot claims. */
#ifndef MUTEXSTAT_PENDING_NAMES_H
#define MUTEXSTAT_PENDING_NAMES_H

#include <stdint.h>

#define MS_PENDING_NAMES 256

extern uint32_t ms_pending_names_n; /* names waiting: 0 most of the time */

/* Keep name (a kept copy, names.h) for address key, replacing one kept
 * before; NULL removes it.  0, or -1 if every slot is taken. */
int ms_pending_name_put(uintptr_t key, const char *name);

/* The name waiting for key, removed; NULL if none. */
const char *ms_pending_name_take(uintptr_t key);

static inline int ms_pending_names_any(void)
{
	return __atomic_load_n(&ms_pending_names_n, __ATOMIC_RELAXED) != 0;
}

#endif
