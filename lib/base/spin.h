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
	if (__atomic_exchange_n(word, 1, __ATOMIC_ACQUIRE) == 0)
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
		return 1;
	}
	return !__atomic_exchange_n(word, 1, __ATOMIC_ACQUIRE);
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
