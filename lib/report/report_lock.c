/* report_lock.c - waiting for a report under way; see report_lock.h. */
#include "report/report_lock.h"
#include "base/fmt.h"

#include <stdint.h>
#include <time.h>

#define STUCK_NS 5000000000ull /* as crash.c's wait for a report */

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int ms_report_lock_take(int *lock, int last, const int *stop)
{
	unsigned long seen = 0;
	uint64_t quiet_since = 0;
	for (unsigned spins = 0;; spins++) {
		if (stop && __atomic_load_n(stop, __ATOMIC_SEQ_CST))
			return -1;
		if (!__atomic_exchange_n(lock, 1, __ATOMIC_ACQUIRE))
			return 0;
		if (spins < 1000) { /* most reports end soon: no system call */
			__builtin_ia32_pause();
			continue;
		}
		if (last) {
			unsigned long p = __atomic_load_n(&ms_report_progress, __ATOMIC_RELAXED);
			uint64_t now = mono_ns();
			if (!quiet_since || p != seen ||
			    !__atomic_load_n(&ms_report_in_write, __ATOMIC_RELAXED)) {
				seen = p;
				quiet_since = now;
			} else if (now - quiet_since > STUCK_NS) {
				return -1;
			}
		}
		struct timespec nap = { 0, 1000000 };
		nanosleep(&nap, NULL);
	}
}

void ms_report_lock_give(int *lock)
{
	__atomic_store_n(lock, 0, __ATOMIC_RELEASE);
}
