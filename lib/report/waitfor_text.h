/* waitfor_text.h - the DEADLOCK and WAIT CHAIN sections of the text
 * report. */
#ifndef MUTEXSTAT_WAITFOR_TEXT_H
#define MUTEXSTAT_WAITFOR_TEXT_H

#include "base/fmt.h"

/* Print DEADLOCK findings (wait-for cycles, waits on mutexes whose owner
 * has exited) and WAIT CHAIN lines from the current wait-for graph.
 * Returns the number of deadlocks. */
int ms_waitfor_print(struct ms_fmt *f);

#endif
