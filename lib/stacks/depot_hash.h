/* depot_hash.h - uthash set up to take its memory from the stack depot's
 * budget (never malloc) and to survive running out of it.  Include it
 * instead of <uthash.h>, with the depot's lock held around every HASH_*
 * call; `oom` is set when an add could not grow the table (the element is
 * then not in it). */
#ifndef MUTEXSTAT_DEPOT_HASH_H
#define MUTEXSTAT_DEPOT_HASH_H

#include "stacks/depot.h"

static int oom;
static inline void *alloc(size_t bytes)
{
	return ms_depot_alloc(bytes);
}

#define uthash_malloc(sz) alloc(sz)
#define uthash_free(ptr, sz) ((void)(ptr), (void)(sz)) /* the budget is kept */
#define HASH_NONFATAL_OOM 1
#define uthash_nonfatal_oom(obj) (oom = 1)
#include <uthash.h>

#endif
