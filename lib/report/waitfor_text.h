/* waitfor_text.h - the DEADLOCK and WAIT CHAIN sections of the text
 * report. */
#ifndef MUTEXSTAT_WAITFOR_TEXT_H
#define MUTEXSTAT_WAITFOR_TEXT_H

#include "base/fmt.h"

#include <stdint.h>

/* Print DEADLOCK findings (wait-for cycles, waits on mutexes whose owner
 * has exited) and WAIT CHAIN lines from the current wait-for graph.
 * Returns the number of deadlocks. */
int ms_waitfor_print(struct ms_fmt *f);

/* Whether the last ms_waitfor_print printed a DEADLOCK ending at thread
 * tid's condition wait begun at since (ticks).  Under the report lock. */
int ms_waitfor_print_said_cond(uint32_t tid, uint64_t since);

#endif
