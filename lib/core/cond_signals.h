/* cond_signals.h - how often each condition variable was signalled or
 * broadcast, for the live dump's second look at a chain of waits that
 * ends at a thread asleep in a condition wait (analysis/waitfor.c): the
 * chain is a DEADLOCK only if nobody signalled that condition meanwhile.
 * A healthy pool whose producers signal all the time can leave one worker
 * asleep for longer than the look lasts (signals wake other waiters), and
 * that worker may hold a mutex others wait for.
 *
 * The counts are kept by the condition's address in a fixed array: no
 * table, nothing made, a load and a store per signal.  Two conditions
 * may share a count, and then one's signals count as the other's: that
 * can make a chain a WAIT CHAIN, never a DEADLOCK it is not.  Counted
 * in our pthread_cond_signal and _broadcast, and in C11's cnd_signal and
 * cnd_broadcast, whose glibc calls the pthread ones inside libc where we
 * would not see them (wrap/interpose.c). */
#ifndef MUTEXSTAT_COND_SIGNALS_H
#define MUTEXSTAT_COND_SIGNALS_H

#include <stdint.h>

#define MS_COND_SIGNAL_BITS 12 /* 4096 counts, 16 KiB */

extern uint32_t ms_cond_signal_counts[1u << MS_COND_SIGNAL_BITS];

static inline uint32_t *ms_cond_signal_count(uintptr_t cond)
{
	/* the top bits of a multiplicative hash: conditions 48 bytes apart,
	 * in an array or in objects, fall in different counts */
	uint64_t h = (uint64_t)cond * 0x9e3779b97f4a7c15ull;
	return &ms_cond_signal_counts[h >> (64 - MS_COND_SIGNAL_BITS)];
}

/* pthread_cond_signal or _broadcast on cond (before glibc's).  Not a
 * locked add (17 ns a signal against 1, doc/benchmark.md): programs
 * signal inside their hold, and only a change is asked for -- two signals
 * at once may count one, which still says it was signalled.  A signaller
 * stopped between its load and its store for as long as the look lasts
 * can store back the count the look began with, and its signal goes
 * unseen: a window of two instructions against the look's 100 ms, and a
 * signal that wakes the sleeper the look is about ends its wait anyway. */
static inline void ms_cond_signalled(const void *cond)
{
	uint32_t *n = ms_cond_signal_count((uintptr_t)cond);
	__atomic_store_n(n, __atomic_load_n(n, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}

/* The count now: compared with a later one, whether cond was signalled. */
static inline uint32_t ms_cond_signals(uintptr_t cond)
{
	return __atomic_load_n(ms_cond_signal_count(cond), __ATOMIC_RELAXED);
}

#endif
