/* address_space.h - how much address space the process has mapped, and
 * what an address-space limit (ulimit -v, RLIMIT_AS) leaves: the table's
 * size at start-up and libdw's use at report time depend on it. */
#ifndef MUTEXSTAT_ADDRESS_SPACE_H
#define MUTEXSTAT_ADDRESS_SPACE_H

#include <stdint.h>

/* Bytes mapped now (/proc/self/statm's first number, in pages); 0 if it
 * cannot be read. */
uint64_t ms_mapped_now(void);

/* Under an address-space limit, the bytes it leaves now; UINT64_MAX
 * without one. */
uint64_t ms_address_space_left(void);

#endif
