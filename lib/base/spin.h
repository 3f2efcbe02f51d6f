/* spin.h - the library's own spin locks (the table's update locks, the
 * depot's), and what a fork under way means for them.
 *
 * Around fork() the forking thread holds these locks (runtime/fork.c), so
 * the child gets tables nobody was changing.  Meanwhile a thread that
 * holds mutexes of the program gives up instead of waiting: the forking
 * thread may be about to run another library's fork handler that needs
 * one of those mutexes.  A call that gives up is counted, and the report
 * says how many. */
#ifndef MUTEXSTAT_SPIN_H
#define MUTEXSTAT_SPIN_H

#include <stdint.h>
#include <sys/single_threaded.h>

/* Non-zero while some thread is inside fork() holding our locks. */
extern uint32_t ms_fork_in_progress;
/* The forking thread's own flag: 1 while it holds our locks, 2 when it
 * took them around an update a signal handler interrupted. */
extern __thread int ms_fork_holds_locks __attribute__((tls_model("initial-exec")));
/* 1: a fork child whose table still has the parent's numbers; 2: being
 * settled (core/forked.h). */
extern uint32_t ms_fork_unsettled;

/* How many of our locks the calling thread holds (counted as each is
 * taken and let go: ms_spin_try, ms_spin_unlock), and whether it made a
 * call that may block in the program's locks meanwhile
 * (ms_spin_note_blocking).  Two words: a handler that marks the thread
 * between the count's load and its store must not have its mark stored
 * over. */
extern __thread uint32_t ms_spin_mine __attribute__((tls_model("initial-exec")));
extern __thread uint8_t ms_spin_marked __attribute__((tls_model("initial-exec")));
/* Threads so marked, now: while there is one, a waiter for any of our
 * locks gives up after its first spins.  A thread stopped in the
 * program's lock while it holds one of ours -- a signal handler's lock
 * that interrupted our bookkeeping -- may wait for a thread that waits
 * for our lock, holding the program's: waiting a second, as for a
 * preempted holder, could let such a program do nothing else (a handler
 * of a timer that fires every 200 us, taking a mutex that the interrupted
 * thread's handler waits for: tests/signals.c's handler-timer). */
extern uint32_t ms_spin_blocked_holders;

/* The calling thread is about to make a call that may block in the
 * program's lock (a handler's call that interrupted library code, or a
 * wait the library records): if it holds one of our locks, it is marked
 * until it lets go of the last. */
void ms_spin_note_blocking_slow(void);
static inline void ms_spin_note_blocking(void)
{
	if (__builtin_expect(ms_spin_mine != 0, 0))
		ms_spin_note_blocking_slow();
}

/* Its mark off, once it holds none of our locks (or it ends). */
void ms_spin_unmark(void);
void ms_spin_thread_exit(void);

/* One fewer of our locks held (or about to be).  Never below none: a
 * fork child's update that a handler interrupted lets go of locks the
 * fork zeroed. */
static inline void ms_spin_mine_less(void)
{
	uint32_t n = ms_spin_mine;
	if (__builtin_expect(n != 0, 1))
		ms_spin_mine = n - 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	/* a handler before the store that marked the thread: its mark is
	 * seen here; one after it saw n - 1, and marked none if that is 0 */
	if (__builtin_expect(ms_spin_marked, 0) && n <= 1)
		ms_spin_unmark();
}

/* Take one of our locks if it is free, counted first: a handler between
 * the exchange and the count would find the lock held and not counted
 * (between the count and the exchange, it finds one more than held, and
 * may mark the thread until the count is down again). */
static inline int ms_spin_try(int *word)
{
	ms_spin_mine++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (!__atomic_exchange_n(word, 1, __ATOMIC_ACQUIRE))
		return 1;
	ms_spin_mine_less();
	return 0;
}

/* Let go of one of our locks. */
static inline void ms_spin_unlock(int *word)
{
	__atomic_store_n(word, 0, __ATOMIC_RELEASE);
	ms_spin_mine_less();
}

/* Does the calling thread hold mutexes of the program?  Set once at
 * start-up by the layer that keeps each thread's held set; until then,
 * no. */
void ms_spin_init(int (*holds_mutexes)(void));

/* A call that gave up for that reason (counted; the report says so). */
void ms_spin_skipped_call(void);
uint64_t ms_spin_skipped_calls(void);
void ms_spin_after_fork_child(void);

/* Take a spin lock of ours: 1 when held, 0 if it is held by a thread
 * inside fork() that this one must not wait for (the call is counted as
 * skipped).  A caller that holds another of the table's locks already
 * (holding_one) never waits while a fork is under way: the forking thread
 * may be waiting for the lock it holds (a fork from a signal handler that
 * interrupted an update, core/table.c). */
int ms_spin_lock_wait(int *word, int holding_one);
/* holding_one for a lock taken last of all (the table's pool, site list
 * and reads' slots: their holders wait for nothing, and a fork takes them
 * after the others): it waits through a fork, and gives up only on a
 * holder stopped for good (a second; base/spin.c). */
#define MS_SPIN_LEAF 2
static inline int ms_spin_lock_leaf(int *word)
{
	if (ms_spin_try(word))
		return 1;
	return ms_spin_lock_wait(word, MS_SPIN_LEAF);
}
static inline int ms_spin_take(int *word)
{
	/* In a process of one thread no other thread can take it, and a
	 * signal handler on this one that does lets it go before it
	 * returns: a load and a store, as glibc's own locks then, where the
	 * exchange's locked instruction was a fifth of a mutex's life
	 * (init to destroy takes two of these locks). */
	if (__libc_single_threaded) {
		if (__atomic_load_n(word, __ATOMIC_RELAXED))
			return 0;
		__atomic_store_n(word, 1, __ATOMIC_RELAXED);
		__atomic_signal_fence(__ATOMIC_ACQUIRE);
		ms_spin_mine++; /* no other thread to wait for it */
		return 1;
	}
	return ms_spin_try(word);
}
static inline int ms_spin_lock(int *word)
{
	if (ms_spin_take(word))
		return 1; /* free: the usual case, no call */
	return ms_spin_lock_wait(word, 0);
}
static inline int ms_spin_lock_holding(int *word)
{
	if (ms_spin_take(word))
		return 1;
	return ms_spin_lock_wait(word, 1);
}

#endif
