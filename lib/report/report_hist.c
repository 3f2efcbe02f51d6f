/* report_hist.c - histograms as rows of bars; see report_hist.h.
 *
 *   wait times (432 waits that got the mutex):
 *          1.02 µs ..   2.05 µs |@@@@@@@@@@@@                        102
 *          2.05 µs ..   4.10 µs |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@ 310
 *     p50 <= 4.1 µs  p90 <= 4.1 µs  p99 <= 7.77 µs  max 7.77 µs
 *
 * Two or more empty buckets in a row are one row, their ranges together
 * ("12.6 µs .. 12.9 ms | 0"): a hold histogram of fast holds and a few
 * slow ones would otherwise be mostly empty rows.  Buckets are powers of two of the tick count; their bounds are shown in
 * nanoseconds, converted with the run's calibration.  A percentile is its
 * bucket's upper bound, but never more than the largest time seen: the
 * bucket of the max reaches past it. */
#include "report/report_hist.h"
#include "base/clock.h"

#define BAR 36

static uint64_t bound_ns(int i)
{
	return i <= 0 ? 0 : ms_ticks_to_ns(1ull << (i < 63 ? i : 63));
}

uint64_t ms_hist_percentile_ns(const uint64_t *hist, int buckets, unsigned p)
{
	uint64_t total = 0, seen = 0;
	for (int i = 0; i < buckets; i++)
		total += hist[i];
	if (!total)
		return 0;
	uint64_t want = (total * p + 99) / 100; /* the p-th percent of waits */
	if (!want)
		want = 1;
	for (int i = 0; i < buckets; i++) {
		seen += hist[i];
		if (seen >= want)
			return bound_ns(i);
	}
	return bound_ns(buckets - 1);
}

void ms_hist_widen(uint64_t *out, const uint32_t *hist, int buckets)
{
	for (int i = 0; i < buckets; i++)
		out[i] = __atomic_load_n(&hist[i], __ATOMIC_RELAXED);
}

/* A percentile, capped at the max (0: no max known). */
static uint64_t at_most(uint64_t ns, uint64_t max_ns)
{
	return max_ns && ns > max_ns ? max_ns : ns;
}

static void hist_text(struct ms_fmt *f, const char *title, const uint64_t *hist,
		      int buckets, uint64_t max_ticks, int max_exact)
{
	int lo = -1, hi = -1;
	uint64_t total = 0, most = 0;
	for (int i = 0; i < buckets; i++) {
		if (!hist[i])
			continue;
		if (lo < 0)
			lo = i;
		hi = i;
		total += hist[i];
		if (hist[i] > most)
			most = hist[i];
	}
	if (lo < 0)
		return;
	ms_fmt(f, "  %s (%llu):\n", title, (unsigned long long)total);
	for (int i = lo; i <= hi; i++) {
		char a[16], b[16], bar[BAR + 1];
		int n = (int)((hist[i] * (uint64_t)BAR + most - 1) / most);
		for (int j = 0; j < BAR; j++)
			bar[j] = j < n ? '@' : ' ';
		bar[BAR] = 0;
		int from = i;
		while (!hist[i] && !hist[i + 1]) /* empty buckets: one row */
			i++;
		ms_fmt(f, "    %9s .. %9s |%s %llu\n", ms_duration(a, bound_ns(from - 1 < 0 ? 0 : from - 1)),
		       ms_duration(b, bound_ns(i)), bar, (unsigned long long)hist[i]);
	}
	char p50[16], p90[16], p99[16], mx[16];
	uint64_t max_ns = ms_ticks_to_ns(max_ticks);
	/* "<=": a percentile is its bucket's upper bound (up to twice the
	 * time it stands for), where "p50 4.1 µs" read as a time measured */
	ms_fmt(f, "    p50 <= %s  p90 <= %s  p99 <= %s  max %s%s\n",
	       ms_duration(p50, at_most(ms_hist_percentile_ns(hist, buckets, 50), max_ns)),
	       ms_duration(p90, at_most(ms_hist_percentile_ns(hist, buckets, 90), max_ns)),
	       ms_duration(p99, at_most(ms_hist_percentile_ns(hist, buckets, 99), max_ns)),
	       max_exact ? "" : "<= ", ms_duration(mx, max_ns));
}

void ms_report_hist(struct ms_fmt *f, const char *title, const uint64_t *hist,
		    int buckets, uint64_t max_ticks)
{
	hist_text(f, title, hist, buckets, max_ticks, 1);
}

void ms_report_hist_at_most(struct ms_fmt *f, const char *title, const uint64_t *hist,
			    int buckets, uint64_t max_ticks)
{
	hist_text(f, title, hist, buckets, max_ticks, 0);
}
