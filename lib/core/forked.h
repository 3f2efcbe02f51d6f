/* forked.h - a fork child's own view of its parent.
 *
 * A fork child starts like a new process: every number back to zero (what
 * the parent did before the fork is in the parent's report), its thread's
 * new id on the mutexes that thread held, and the mutexes other threads of
 * the parent held at the fork -- threads the child does not have -- kept
 * as theirs, so its report can say so when the child touches one.  The
 * table's numbers are zeroed at the child's first mutex call or report
 * (ms_fork_settle).
 *
 * MUTEXSTAT_FOLLOW=0: a fork child records nothing and writes no report. */
#ifndef MUTEXSTAT_FORKED_H
#define MUTEXSTAT_FORKED_H

#include "base/spin.h"
#include "core/thread.h"

#include <pthread.h>
#include <stdint.h>

/* In the child's fork handler: remember the parent (its pid) and which
 * mutexes its threads held, from their held sets. */
void ms_forked_note_parent(int parent);
/* At the library's start: this process's memory is its own (below). */
void ms_forked_note_start(void);

/* ---- in a child ------------------------------------------------------ */

/* Non-zero in a vfork child before its exec or _exit: it runs in its
 * parent's memory, so nothing of ours there is its own to write -- a
 * crash report's claim, the exit's -- and the parent goes on with it.
 * (A fork child's memory is its own: 0 there, orphaned or not.) */
int ms_in_vfork_child(void);

/* The parent's pid if this process was made by fork() and has not exec'd
 * since; 0 otherwise. */
int ms_fork_parent_pid(void);

/* The parent's thread that held record r, in this life, when the process
 * forked; 0 if none (or r was not held by another thread at the fork). */
uint32_t ms_fork_orphan_owner(uint32_t r);
/* Whether thread tid of the parent held record r, in this life, at the
 * fork (an rwlock may have been read by several). */
int ms_fork_orphan_held_by(uint32_t r, uint32_t tid);
/* How many reads of record r, in this life, threads of the parent held at
 * the fork (its exited readers count them: thread_pool.h). */
uint32_t ms_fork_orphan_reads(uint32_t r);

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
void ms_fork_settle_now(void);
static inline void ms_fork_settle(void)
{
	if (__builtin_expect(__atomic_load_n(&ms_fork_unsettled, __ATOMIC_ACQUIRE), 0))
		ms_fork_settle_now();
}

#endif
