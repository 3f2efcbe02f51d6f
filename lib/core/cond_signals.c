/* cond_signals.c - the signal counts of cond_signals.h. */
#include "core/cond_signals.h"

uint32_t ms_cond_signal_counts[1u << MS_COND_SIGNAL_BITS];
