/* fork.h - processes made by fork().
 *
 * Around fork() the forking thread holds the library's table and depot
 * locks, so the child gets tables nobody was changing.  The child then
 * starts its own view, like a new process: every number back to zero (what
 * the parent did before the fork is in the parent's report), its thread's
 * new id on the mutexes that thread held, and the mutexes other threads of
 * the parent held at the fork -- threads the child does not have -- kept
 * as theirs, so its report can say so when the child touches one.  Only
 * async-signal-safe work happens in the child's fork handler: memory
 * writes and plain system calls.  The table's numbers are zeroed at the
 * child's first mutex call or report (ms_fork_settle), and its dump thread
 * is started when fork() returns (waitfor.c).
 *
 * MUTEXSTAT_FOLLOW=0: a fork child records nothing and writes no report. */
#ifndef MUTEXSTAT_FORK_H
#define MUTEXSTAT_FORK_H

#include "core/thread.h"

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

/* The fork handlers (init.c registers them with pthread_atfork). */
void ms_fork_prepare(void);
void ms_fork_parent(void);
void ms_fork_child(void);
/* What ms_fork_prepare() notes of the parent, for a fork that ran no
 * prepare handler (_Fork) of process parent. */
void ms_fork_note_parent(int parent);
/* The child of _Fork, which runs no fork handlers: ours, as after fork,
 * if they are registered (init.c). */
void ms_fork_child_unhandled(int parent);

/* Non-zero while some thread is inside fork() holding the library's locks.
 * A thread that wants one of them then, while it holds mutexes of the
 * program, gives up instead of waiting (ms_fork_may_wait): the forking
 * thread may be about to run another library's fork handler that needs one
 * of those mutexes. */
extern uint32_t ms_fork_in_progress;

/* May the calling thread wait for a lock the forking thread holds? */
int ms_fork_may_wait(void);

/* A call that gave up for that reason (counted; the report says so). */
void ms_fork_skipped_call(void);
uint64_t ms_fork_skipped_calls(void);

/* Take a spin lock of ours (the table's update locks, the depot's): 1 when
 * held, 0 if it is held by a thread inside fork() that this one must not
 * wait for (the call is counted as skipped).  A caller that holds another
 * of the table's locks already (holding_one) never waits while a fork is
 * under way: the forking thread may be waiting for the lock it holds
 * (a fork from a signal handler that interrupted an update, table.c). */
int ms_fork_spin_lock_wait(int *word, int holding_one);
static inline int ms_fork_spin_lock(int *word)
{
	if (!__atomic_exchange_n(word, 1, __ATOMIC_ACQUIRE))
		return 1; /* free: the usual case, no call */
	return ms_fork_spin_lock_wait(word, 0);
}
static inline int ms_fork_spin_lock_holding(int *word)
{
	if (!__atomic_exchange_n(word, 1, __ATOMIC_ACQUIRE))
		return 1;
	return ms_fork_spin_lock_wait(word, 1);
}

/* ---- in a child ------------------------------------------------------ */

/* The parent's pid if this process was made by fork() and has not exec'd
 * since; 0 otherwise. */
int ms_fork_parent_pid(void);

/* The parent's thread that held record r, in this life, when the process
 * forked; 0 if none (or r was not held by another thread at the fork). */
uint32_t ms_fork_orphan_owner(uint32_t r);

/* The forking thread's id in the parent, if r is a mutex that thread held
 * at the fork (this process is its child); 0 otherwise. */
uint32_t ms_fork_own_before(uint32_t r);

/* glibc's owner of m as the unlock path should take it: a mutex this
 * thread locked before the fork still names the thread's old id, and
 * glibc's unlock of the kinds that do not check their owner (normal,
 * adaptive) lets it go as the owner's.  owner is glibc's owner field. */
int ms_fork_owner_for_unlock(const struct ms_thread *t, uint32_t r,
			     const pthread_mutex_t *m, int owner);

/* A fork child starts with the parent's numbers in its table; setting them
 * to zero costs a store per tracked mutex (a copied page per 64 of them),
 * so it is not done in the fork handler, where a child that goes on to
 * exec would pay it for nothing, but by the child's first call that
 * records or reports: ms_fork_settle() (cheap when there is nothing to
 * do).  Threads that come meanwhile wait for it. */
extern uint32_t ms_fork_unsettled;
void ms_fork_settle_now(void);
static inline void ms_fork_settle(void)
{
	if (__builtin_expect(__atomic_load_n(&ms_fork_unsettled, __ATOMIC_ACQUIRE), 0))
		ms_fork_settle_now();
}

#endif
