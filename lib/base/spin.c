/* spin.c - our spin locks, which step aside for a fork; see spin.h. */
#define _GNU_SOURCE
#include "base/spin.h"
#include "base/internal.h"
#include "base/clock.h"

#include <errno.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

uint32_t ms_fork_in_progress;
__thread int ms_fork_holds_locks __attribute__((tls_model("initial-exec")));
uint32_t ms_fork_unsettled;

__thread uint32_t ms_spin_mine __attribute__((tls_model("initial-exec")));
__thread uint8_t ms_spin_marked __attribute__((tls_model("initial-exec")));
uint32_t ms_spin_blocked_holders;

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

static int *stuck_word;

void ms_spin_note_blocking_slow(void)
{
	if (ms_spin_marked)
		return;
	/* claimed first: a handler here that would mark the thread finds it
	 * marked (had it added first, each would have added one) */
	ms_spin_marked = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	ATOMIC_ADD(&ms_spin_blocked_holders, 1);
}

void ms_spin_unmark(void)
{
	ms_spin_marked = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	/* never below none: a fork child (from a handler here) starts the
	 * count at none, and this thread's part of it may not be in it */
	uint32_t n = __atomic_load_n(&ms_spin_blocked_holders, __ATOMIC_RELAXED);
	while (n && !__atomic_compare_exchange_n(&ms_spin_blocked_holders, &n, n - 1, 0,
						 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

void ms_spin_thread_exit(void)
{
	/* a thread that ends marked (a handler that blocked in our code
	 * ended it: pthread_exit, a cancellation) is a holder no more */
	if (ms_spin_marked)
		ms_spin_unmark();
}

void ms_spin_after_fork_child(void)
{
	STORE(&ms_fork_in_progress, 0);
	skipped = 0;
	stuck_word = NULL; /* its holder is the parent's thread, not here */
	/* the forking thread's locks are let go by zeroing them, and the
	 * parent's other threads are not here.  Its mark stays: a fork from a
	 * handler between the mark and its count adds that count after this,
	 * and its unmark takes it off (one that finds none takes none). */
	ms_spin_mine = 0;
	STORE(&ms_spin_blocked_holders, 0);
}

/* How long a waiter for one of our locks waits before it gives up.  Our
 * locks are held for microseconds (a search of the lock-order graph, the
 * longest, for milliseconds); a holder that keeps one for this long is
 * stopped in a signal handler of the program's that waits for a mutex --
 * whose holder may be this very waiter, in the library's bookkeeping of
 * that mutex.  Waiting on would hang both threads for ever; giving up
 * costs the waiter's call its record, counted.  A second leaves room for a
 * holder preempted on a loaded machine. */
#define GIVE_UP_NS 1000000000ull

/* The lock a waiter last gave up on, its holder still stopped (a
 * garbage collector's stop-the-world: a handler that parks its thread on
 * a semaphore, maybe inside our code, while another thread goes on
 * locking).  Later waiters for it give up after STUCK_GIVE_UP_NS, not a
 * second each: one stop of the world cost a second per lock call.  The
 * first waiter that gets it clears the mark; one that took it without a
 * wait does not, so a normal wait for it just after may give up early
 * (its call's record is lost, counted), only ever after such a stop. */
#define STUCK_GIVE_UP_NS 2000000ull

int ms_spin_lock_wait(int *word, int holding_one)
{
	uint64_t since = 0;
	for (unsigned spins = 0; !ms_spin_try(word); spins++) {
		int give_up = holding_one == MS_SPIN_LEAF ? 0
			      : holding_one ? __atomic_load_n(&ms_fork_in_progress, __ATOMIC_ACQUIRE) != 0
					    : spins >= 100 && !fork_may_wait();
		if (spins >= 100 && __atomic_load_n(&ms_spin_blocked_holders, __ATOMIC_RELAXED))
			give_up = 1; /* its holder may wait for us (spin.h) */
		if (!give_up && spins >= 100 && !(spins & 15)) {
			/* the clock's vDSO read: async-signal-safe, no call */
			uint64_t now = ms_mono_ns();
			if (!since)
				since = now;
			else if (now - since >= GIVE_UP_NS ||
				 (now - since >= STUCK_GIVE_UP_NS &&
				  __atomic_load_n(&stuck_word, __ATOMIC_RELAXED) == word)) {
				__atomic_store_n(&stuck_word, word, __ATOMIC_RELAXED);
				give_up = 1;
			}
		}
		if (give_up) {
			ms_spin_skipped_call();
			return 0;
		}
		if (spins < 100)
			__builtin_ia32_pause();
		else if (!since || ms_mono_ns() - since < 1000000)
			sched_yield();
		else {
			/* waited a millisecond: the holder is not about to
			 * let go, and spinning would take the CPU it needs.
			 * The system call itself: glibc's nanosleep is a
			 * cancellation point, and a thread cancelled here,
			 * inside a lock call that holds the program's mutex
			 * or our stripes, left them held for good. */
			struct timespec nap = { 0, 200000 };
			int saved = errno; /* EINTR: the program's */
			syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &nap, NULL);
			errno = saved;
		}
	}
	if (unlikely(__atomic_load_n(&stuck_word, __ATOMIC_RELAXED) == word))
		__atomic_store_n(&stuck_word, NULL, __ATOMIC_RELAXED);
	return 1;
}
