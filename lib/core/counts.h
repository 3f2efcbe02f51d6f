/* counts.h - a mutex's acquisitions and owner changes as the report shows
 * them: since its life began, or since the last mutexstat_reset().
 *
 * The holder of a mutex bumps both counters with plain stores (the mutex
 * serialises them; table.h), so a reset that zeroed them while another
 * thread held the mutex could lose its zero to that thread's increment
 * -- the whole run's count came back.  A reset while threads run writes
 * no counter: it keeps the value it read as the mutex's base (the
 * counters only grow, so that value was exact at one moment), and the
 * report shows the counter less its base.  A base belongs to the life it
 * was taken in (its birth); a new life starts from zero anyway. */
#ifndef MUTEXSTAT_COUNTS_H
#define MUTEXSTAT_COUNTS_H

#include <stdint.h>

uint64_t ms_rec_acquisitions(uint32_t r);
uint64_t ms_rec_owner_changes(uint32_t r);

/* mutexstat_reset(): every record's numbers back to zero, with bases for
 * the two counters (ms_table_reset zeroes them: for a process whose other
 * threads are gone, a fork child). */
void ms_table_reset_running(void);

#endif
