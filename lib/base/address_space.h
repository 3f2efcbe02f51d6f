/* address_space.h - how much address space the process has mapped, and
 * what an address-space limit (ulimit -v, RLIMIT_AS) or a data-size limit
 * (ulimit -d, RLIMIT_DATA) leaves: the table's size at start-up and
 * libdw's use at report time depend on it. */
#ifndef MUTEXSTAT_ADDRESS_SPACE_H
#define MUTEXSTAT_ADDRESS_SPACE_H

#include <stdint.h>

/* Bytes mapped now (/proc/self/statm's first number, in pages); 0 if it
 * cannot be read. */
uint64_t ms_mapped_now(void);

/* Under an address-space limit, the bytes it leaves now; UINT64_MAX
 * without one. */
uint64_t ms_address_space_left(void);

/* The same for the data-size limit (ulimit -d, RLIMIT_DATA), which counts
 * every private writable map but the main stack -- the table and
 * call-stack memory, thread stacks, the heap -- as statm's sixth number
 * does (with the main stack: a little more). */
uint64_t ms_data_now(void);
uint64_t ms_data_left(void);

/* What either limit would leave once `more` bytes were mapped too
 * (UINT64_MAX without the limit). */
uint64_t ms_address_space_left_after(uint64_t more);
uint64_t ms_data_left_after(uint64_t more);

#endif
