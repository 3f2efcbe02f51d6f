/* report_hist.h - log2 histograms of wait and hold times in the text
 * report, with percentiles (like DTrace's quantize). */
#ifndef MUTEXSTAT_REPORT_HIST_H
#define MUTEXSTAT_REPORT_HIST_H

#include "base/fmt.h"

#include <stdint.h>

/* hist[i] counts times in [2^(i-1), 2^i) ticks; max is in ticks. */
void ms_report_hist(struct ms_fmt *f, const char *title, const uint64_t *hist,
		    int buckets, uint64_t max_ticks);
/* The same where max_ticks is a bound, not the maximum itself ("max <= ";
 * an rwlock's writes, whose maximum is known only when above the reads'). */
void ms_report_hist_at_most(struct ms_fmt *f, const char *title, const uint64_t *hist,
			    int buckets, uint64_t max_ticks);

/* p (0-100) of a histogram, as the upper bound of its bucket, in ns. */
uint64_t ms_hist_percentile_ns(const uint64_t *hist, int buckets, unsigned p);

/* A live mutex's histogram (32-bit counts) as an ended line's (64). */
void ms_hist_widen(uint64_t *out, const uint32_t *hist, int buckets);

#endif
