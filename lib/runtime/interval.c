/* interval.c - when interval files are written, and their numbers; see
 * interval.h.  The dump thread keeps the time (its wait's timeout); what
 * an interval holds is report/interval_lines.h's and the blame lines'
 * (blame.h, ms_blame_since), writing its files formats.c's. */
#define _GNU_SOURCE
#include "runtime/interval.h"
#include "base/clock.h"
#include "base/options.h"
#include "base/output.h"
#include "report/formats.h"
#include "report/report.h"
#include "report/report_lock.h"
#include "report/span.h"


static struct {
	int on;
	unsigned n;          /* intervals written */
	uint64_t mono_start; /* when the current one began (monotonic ns) */
	uint64_t wall_start; /* the same moment by the wall clock */
	uint64_t due;        /* when it ends (monotonic ns) */
} iv;

int ms_interval_init(void)
{
	iv.on = 0;
	if (!ms_opt_intervals())
		return 0;
	iv.on = 1;
	/* the first starts with the run, as the whole run's profile does */
	ms_clock_run_start(&iv.mono_start, &iv.wall_start);
	iv.due = iv.mono_start + ms_opt.interval_ms * 1000000u;
	return 1;
}

int ms_interval_on(void)
{
	return iv.on;
}

int ms_interval_timeout_ms(void)
{
	if (!__atomic_load_n(&iv.on, __ATOMIC_RELAXED))
		return -1;
	uint64_t now = ms_mono_ns();
	if (now >= iv.due)
		return 0;
	return (int)((iv.due - now + 999999) / 1000000);
}

/* The next interval ends an interval after this one was due, on the
 * beat; after a late one (a slow report, a stopped process) a whole
 * interval from now. */
static void next_due(uint64_t now)
{
	iv.due += ms_opt.interval_ms * 1000000u;
	if (iv.due <= now)
		iv.due = now + ms_opt.interval_ms * 1000000u;
}

/* One interval at a time: the dump thread's, or the exiting thread's
 * last one. */
static int writing;

/* Write the interval that ends now. */
static void write_interval(int last)
{
	if (ms_report_lock_take(&writing, last, NULL) != 0)
		return;
	if (!__atomic_load_n(&iv.on, __ATOMIC_RELAXED)) {
		ms_report_lock_give(&writing); /* the last was written meanwhile */
		return;
	}
	if (last)
		__atomic_store_n(&iv.on, 0, __ATOMIC_RELAXED); /* once */
	uint64_t now = ms_mono_ns();
	/* MUTEXSTAT_QUIET: a process that locked nothing writes nothing;
	 * its first file, if it comes to lock, covers the time from the start */
	if (ms_opt.quiet && !iv.n && ms_report_locked_nothing()) {
		next_due(now);
		ms_report_lock_give(&writing);
		return;
	}
	struct ms_span span = { iv.n + 1, iv.wall_start, now - iv.mono_start };
	int rc = ms_report_interval(&span, (unsigned)ms_opt.keep, last);
	if (rc > 0) { /* not written: the process is ending */
		next_due(now); /* (the dump thread's wait waits meanwhile) */
		ms_report_lock_give(&writing);
		return;
	}
	iv.n++;
	/* the next starts where this one ended, to the nanosecond: a time
	 * series without gaps or overlaps, however the wall clock is set
	 * meanwhile */
	iv.wall_start += now - iv.mono_start;
	iv.mono_start = now;
	/* due from when this one was written: a file that took longer than
	 * an interval to write is not followed by another at once */
	next_due(ms_mono_ns());
	if (rc < 0 && !last) {
		/* formats.c said which file and why; one failure stops the
		 * series rather than repeating it every interval */
		ms_output_note("mutexstat: no more interval files: this one could not "
			       "be written\n");
		__atomic_store_n(&iv.on, 0, __ATOMIC_RELAXED);
	}
	ms_report_lock_give(&writing);
}

void ms_interval_tick(void)
{
	if (__atomic_load_n(&iv.on, __ATOMIC_RELAXED) && ms_mono_ns() >= iv.due)
		write_interval(0);
}

void ms_interval_last(void)
{
	if (__atomic_load_n(&iv.on, __ATOMIC_RELAXED))
		write_interval(1);
}

void ms_interval_stop(void)
{
	__atomic_store_n(&iv.on, 0, __ATOMIC_RELAXED);
}

void ms_interval_after_fork_child(void)
{
	writing = 0; /* another thread's, in the parent */
	if (!iv.on)
		return;
	iv.n = 0;
	ms_clock_run_start(&iv.mono_start, &iv.wall_start);
	iv.due = iv.mono_start + ms_opt.interval_ms * 1000000u;
}
