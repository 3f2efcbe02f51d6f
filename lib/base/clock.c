/* clock.c - choose the tick source and convert ticks to nanoseconds. */
#include "base/clock.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

int ms_clock_use_tsc;
static uint64_t start_ticks, start_ns;  /* the calibration's base */
static uint64_t run_ticks, run_ns;      /* the run's start: the process's,
					   or the fork's in a fork child */
static uint64_t run_wall_ns;            /* the same moment by the wall clock */

static uint64_t wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CLOCK_MONOTONIC and the tick count of one moment.  The two reads are
 * apart by a few nanoseconds, unless the thread is preempted between them:
 * a pair apart by milliseconds, at either end of the calibration, put a
 * report's times several percent off on a loaded machine (a 50 ms wait
 * read 47.6).  So the clock is read between two tick counts, three times,
 * and the tightest bracket is kept, its middle tick standing for the
 * clock's moment. */
static void paired_now(uint64_t *ns, uint64_t *ticks)
{
	uint64_t best_width = UINT64_MAX, best_ns = 0, best_ticks = 0;
	for (int i = 0; i < 3; i++) {
		uint64_t before = ms_ticks();
		uint64_t n = ms_mono_ns();
		uint64_t width = ms_ticks() - before;
		if (width < best_width) {
			best_width = width;
			best_ns = n;
			best_ticks = before + width / 2;
		}
	}
	*ns = best_ns;
	*ticks = best_ticks;
}

static int tsc_is_invariant(void)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned a, b, c, d;
	if (__get_cpuid_max(0x80000000u, 0) < 0x80000007u)
		return 0;
	__cpuid(0x80000007u, a, b, c, d);
	(void)a; (void)b; (void)c;
	return (int)((d >> 8) & 1); /* "invariant TSC": constant rate, all cores */
#else
	return 0;
#endif
}

/* One report, one moment: while a thread writes a report, every format of
 * it (text, JSON, pprof, ...) reads the run's length and the tick rate
 * taken when it began, so the formats, written one after another, agree.
 * Per thread, and nested: a report on another thread (mutexstat_dump) has
 * its own. */
static __thread struct {
	unsigned depth;
	uint64_t ns;  /* CLOCK_MONOTONIC when the report began */
	uint64_t ticks; /* and the tick count */
	double ratio; /* ticks per ns, measured when the report first needs
			 it (0 until then: most short runs never read the
			 clock, and the measure may spin until 2 ms of run) */
} report_moment __attribute__((tls_model("initial-exec")));

static uint64_t ticks_per_ms_estimate; /* 0 until asked (ms_ticks_per_ms) */

void ms_clock_init(void)
{
	ms_clock_use_tsc = tsc_is_invariant();
	paired_now(&start_ns, &start_ticks);
	run_ns = start_ns;
	run_ticks = start_ticks;
	run_wall_ns = wall_ns();
}

/* A rough rate for timeouts, not for reported times: over the run so
 * far, measured when first asked -- a wait's timeout, long after
 * start-up -- where it used to spin 50 us in every process's start. */
uint64_t ms_ticks_per_ms(void)
{
	uint64_t rate = __atomic_load_n(&ticks_per_ms_estimate, __ATOMIC_RELAXED);
	if (rate)
		return rate;
	if (!ms_clock_use_tsc)
		rate = 1000000; /* ticks are ns */
	else {
		uint64_t n = ms_mono_ns(), t = ms_ticks();
		while (n - start_ns < 50000) { /* at least 50 us */
			n = ms_mono_ns();
			t = ms_ticks();
		}
		rate = (uint64_t)((double)(t - start_ticks) * 1e6 / (double)(n - start_ns));
		if (!rate)
			rate = 1;
	}
	__atomic_store_n(&ticks_per_ms_estimate, rate, __ATOMIC_RELAXED);
	return rate;
}

uint64_t ms_clock_start_ticks(void)
{
	return run_ticks;
}

uint64_t ms_run_ns(void)
{
	return (report_moment.depth ? report_moment.ns : ms_mono_ns()) - run_ns;
}

uint64_t ms_clock_now_ticks(void)
{
	return report_moment.depth ? report_moment.ticks : ms_ticks();
}

void ms_clock_after_fork_child(void)
{
	paired_now(&run_ns, &run_ticks); /* clock_gettime: async-signal-safe */
	run_wall_ns = wall_ns();
}

void ms_clock_run_start(uint64_t *mono_ns, uint64_t *real_ns)
{
	*mono_ns = run_ns;
	*real_ns = run_wall_ns;
}

static double measured_ticks_per_ns(void);

/* Ticks per nanosecond: during a report, one measure for all of it. */
static double ticks_per_ns(void)
{
	if (!ms_clock_use_tsc)
		return 1.0;
	if (!report_moment.depth)
		return measured_ticks_per_ns();
	if (report_moment.ratio == 0)
		report_moment.ratio = measured_ticks_per_ns();
	return report_moment.ratio;
}

/* Ticks per nanosecond measured over the run so far (and over at least
 * 2 ms, spinning if the run was shorter, so the ratio is good to ~0.1%). */
static double measured_ticks_per_ns(void)
{
	static double cached;
	static uint64_t cached_at;
	uint64_t ns = ms_mono_ns(), t;
	if (cached != 0 && ns - cached_at < 1000000000)
		return cached;
	while (ns - start_ns < 2000000) /* report time only */
		ns = ms_mono_ns();
	paired_now(&ns, &t);
	cached = (double)(t - start_ticks) / (double)(ns - start_ns);
	cached_at = ns;
	if (cached <= 0)
		cached = 1.0;
	return cached;
}

uint64_t ms_ticks_to_ns(uint64_t ticks)
{
	return (uint64_t)((double)ticks / ticks_per_ns() + 0.5);
}

void ms_clock_report_begin(void)
{
	if (!report_moment.depth) {
		/* the moment only: the rate may spin until 2 ms of run, so
		 * it is measured when the report first converts ticks,
		 * which most short runs' reports never do (doc/model.md,
		 * "Time") */
		paired_now(&report_moment.ns, &report_moment.ticks);
		report_moment.ratio = 0;
	}
	report_moment.depth++;
}

void ms_clock_report_end(void)
{
	if (report_moment.depth)
		report_moment.depth--;
}
