/* read_plain.c - the rare step of a read hold: see read_plain.h. */
#include "record/read_plain.h"
#include "stacks/site.h"

/* Out of line: the plain case calls it on a read that finds more readers
 * than ever, or the first of a life (ms_read_acquired), and the lock path
 * keeps its registers. */
__attribute__((noinline)) void ms_read_rare(struct ms_record *rec, struct ms_read_stats *rd,
					   uint32_t readers, uintptr_t caller)
{
	if (rd && readers > LOAD(&rd->readers_max))
		atomic_max_u32(&rd->readers_max, readers);
	uintptr_t none = 0;
	if (!LOAD(&rec->first_caller) &&
	    __atomic_compare_exchange_n(&rec->first_caller, &none, caller, 0, __ATOMIC_RELAXED,
					__ATOMIC_RELAXED))
		STORE(&rec->first_stack, ms_site_stack(caller, LOAD(&rec->birth)));
}
