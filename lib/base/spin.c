/* spin.c - our spin locks, which step aside for a fork; see spin.h. */
#define _GNU_SOURCE
#include "base/spin.h"
#include "base/internal.h"

#include <sched.h>

uint32_t ms_fork_in_progress;
__thread int ms_fork_holds_locks __attribute__((tls_model("initial-exec")));
uint32_t ms_fork_unsettled;

static uint64_t skipped;
static int (*holds_mutexes)(void);

void ms_spin_init(int (*fn)(void))
{
	__atomic_store_n(&holds_mutexes, fn, __ATOMIC_RELEASE);
}

/* May the calling thread wait for a lock the forking thread holds? */
static int fork_may_wait(void)
{
	if (!__atomic_load_n(&ms_fork_in_progress, __ATOMIC_ACQUIRE) || ms_fork_holds_locks)
		return 1;
	int (*fn)(void) = __atomic_load_n(&holds_mutexes, __ATOMIC_ACQUIRE);
	return !fn || !fn();
}

void ms_spin_skipped_call(void)
{
	ATOMIC_ADD(&skipped, 1);
}

uint64_t ms_spin_skipped_calls(void)
{
	return LOAD(&skipped);
}

void ms_spin_after_fork_child(void)
{
	STORE(&ms_fork_in_progress, 0);
	skipped = 0;
}

int ms_spin_lock_wait(int *word, int holding_one)
{
	for (unsigned spins = 0; __atomic_exchange_n(word, 1, __ATOMIC_ACQUIRE);
	     spins++) {
		int give_up = holding_one
				      ? __atomic_load_n(&ms_fork_in_progress, __ATOMIC_ACQUIRE) != 0
				      : spins >= 100 && !fork_may_wait();
		if (give_up) {
			ms_spin_skipped_call();
			return 0;
		}
		if (spins < 100)
			__builtin_ia32_pause();
		else
			sched_yield();
	}
	return 1;
}
