/* clock.h - timestamps for wait and hold times.
 *
 * The library reads a clock only where a thread waits (or on mutexes that
 * have made a thread wait, for their hold times), never on the free path.
 * On x86-64 with an invariant TSC a timestamp is one rdtsc, cheaper than
 * clock_gettime (doc/model.md has both costs); ticks become nanoseconds at
 * report time, calibrated against CLOCK_MONOTONIC over the whole run. */
#ifndef MUTEXSTAT_CLOCK_H
#define MUTEXSTAT_CLOCK_H

#include <stdint.h>
#include <time.h>

extern int ms_clock_use_tsc;

static inline uint64_t ms_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t ms_ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
	if (__builtin_expect(ms_clock_use_tsc, 1))
		return __builtin_ia32_rdtsc();
#endif
	return ms_mono_ns();
}

void ms_clock_init(void);
/* A rough rate, measured at the first call, for timeouts on slow paths. */
uint64_t ms_ticks_per_ms(void);
/* Ticks to nanoseconds, and the run's start and length. */
/* Calibrated at report time (it may spin for up to 2 ms early in a run):
 * never call these on a lock path. */
uint64_t ms_ticks_to_ns(uint64_t ticks);

/* Parts of a total (a lock's waits by stack), each in ns: rounded as their
 * running sum is, so that they add up to the total's ns as the lock states
 * it, not 1 ns over or under it for every other part rounded on its own.
 * Start from { 0, 0 }. */
struct ms_ns_parts {
	uint64_t ticks, ns; /* of the parts so far */
};
static inline uint64_t ms_ns_part(struct ms_ns_parts *p, uint64_t ticks)
{
	p->ticks += ticks;
	uint64_t upto = ms_ticks_to_ns(p->ticks);
	uint64_t ns = upto > p->ns ? upto - p->ns : 0;
	p->ns += ns;
	return ns;
}
uint64_t ms_clock_start_ticks(void);
uint64_t ms_run_ns(void);
/* When the run began: CLOCK_MONOTONIC and CLOCK_REALTIME, in ns. */
void ms_clock_run_start(uint64_t *mono_ns, uint64_t *real_ns);
/* Around a report: until the matching end, this thread's ms_run_ns and
 * ms_ticks_to_ns answer for the moment the (outermost) report began, so
 * all its formats carry the same numbers.  They nest. */
void ms_clock_report_begin(void);
/* The ticks of that moment (of now, outside a report): "for 1.04 s so far"
 * counts to where the report's "ran" does, not to when its line is written. */
uint64_t ms_clock_now_ticks(void);
void ms_clock_report_end(void);
/* A fork child's run starts at the fork. */
void ms_clock_after_fork_child(void);

#endif
