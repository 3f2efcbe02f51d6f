/* live.h - the state of a running (or hung) program: which threads wait
 * for which mutexes held by whom, and the report on a signal or from the
 * watchdog, written by a thread of ours. */
#ifndef MUTEXSTAT_LIVE_H
#define MUTEXSTAT_LIVE_H

#include "fmt.h"

/* Install the dump signal's handler and start the dump thread (when
 * MUTEXSTAT_SIGNAL is not none, or the watchdog is on). */
int ms_live_init(void);

/* Print DEADLOCK findings (wait-for cycles, waits on mutexes whose owner
 * has exited) and WAIT CHAIN lines from the current wait-for graph.
 * Returns the number of deadlocks. */
int ms_live_print(struct ms_fmt *f);

#endif
