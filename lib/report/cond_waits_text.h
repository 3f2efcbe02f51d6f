/* cond_waits_text.h - the threads in a condition wait now, in a live
 * dump's text: a hang through a lost wakeup has no mutex wait to show. */
#ifndef MUTEXSTAT_COND_WAITS_TEXT_H
#define MUTEXSTAT_COND_WAITS_TEXT_H

#include "base/fmt.h"

#include <stdint.h>

/* The seconds a condition wait lasts before a live dump lists it:
 * MUTEXSTAT_WATCHDOG's, else 1. */
uint64_t ms_cond_waits_min_s(void);

/* Under its heading ("Threads in a condition wait for N s or more"), each
 * thread whose condition wait has lasted ms_cond_waits_min_s() or more at
 * now (ticks), with the condition, its mutex, how long and where -- unless
 * the watchdog's STALL shows that wait, or a DEADLOCK the report printed
 * ends at it (ms_waitfor_print_said_cond).  Not a finding: a worker pool
 * idles so. */
void ms_cond_waits_print(struct ms_fmt *f, uint64_t now);

#endif
