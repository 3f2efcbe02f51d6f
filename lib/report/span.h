/* span.h - the stretch of the run a profile covers: the whole run, or one
 * interval of MUTEXSTAT_INTERVAL (report/interval.h). */
#ifndef MUTEXSTAT_SPAN_H
#define MUTEXSTAT_SPAN_H

#include <stdint.h>

/* An interval: its number (from 1), when it began (wall clock, ns since
 * the epoch) and how long it lasted.  A profile given one shows what
 * happened in it alone; given NULL, the whole run. */
struct ms_span {
	unsigned n;
	uint64_t start_ns, duration_ns;
};

#endif
