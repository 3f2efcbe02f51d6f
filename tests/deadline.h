/* deadline.h - absolute deadlines for the test programs that compare
 * timed calls with glibc's (transparency.c, fuzz_api.c). */
#ifndef MUTEXSTAT_TESTS_DEADLINE_H
#define MUTEXSTAT_TESTS_DEADLINE_H

#include <time.h>

/* The time on `clock` ms milliseconds from now (in the past if negative). */
static inline struct timespec deadline_in(clockid_t clock, long ms)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	long long ns = ts.tv_nsec + ms * 1000000LL;
	ts.tv_sec += ns / 1000000000;
	ns %= 1000000000;
	if (ns < 0) {
		ns += 1000000000;
		ts.tv_sec--;
	}
	ts.tv_nsec = ns;
	return ts;
}

#endif
