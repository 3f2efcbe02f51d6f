/* fork.c - the fork handlers; see fork.h.
 *
 * The handlers run in this order around glibc's fork (pthread_atfork):
 * prepare handlers last-registered first, then the fork, then parent or
 * child handlers first-registered first.  Libraries that registered theirs
 * before ours (an allocator initialised at the first malloc, before our
 * constructor) run their prepare handler after ours, while the forking
 * thread holds our locks: so the forking thread passes its own mutex calls
 * straight to glibc until the fork is over (the guard), and other threads
 * that hold mutexes do not wait for our locks meanwhile (base/spin.h).
 *
 * Before any of that, prepare waits for the stack captures under way on
 * other threads: libunwind's locks are not ours to take (stacks/stack.c). */
#define _GNU_SOURCE
#include "runtime/fork.h"
#include "runtime/interval.h"
#include "analysis/blame.h"
#include "analysis/findings.h"
#include "analysis/order.h"
#include "analysis/robust.h"
#include "base/clock.h"
#include "base/options.h"
#include "base/spin.h"
#include "core/forked.h"
#include "core/names.h"
#include "core/table.h"
#include "core/thread.h"
#include "core/thread_pool.h"
#include "report/formats.h"
#include "runtime/dump.h"
#include "stacks/depot.h"
#include "stacks/stack.h"
#include "stacks/symbols.h"

#include <unistd.h>

static int parent_pid_at_prepare;

void ms_fork_prepare(void)
{
	struct ms_thread *t = &ms_self;
	parent_pid_at_prepare = getpid();
	ms_stack_fork_prepare(); /* libunwind's locks: see stack.c */
	if (t->guard)
		return; /* fork from our own code: nothing of ours to hold */
	int around = t->in_update != 0; /* a signal handler interrupted an update */
	ms_guard_enter(t);
	ms_fork_holds_locks = around ? 2 : 1;
	__atomic_add_fetch(&ms_fork_in_progress, 1, __ATOMIC_SEQ_CST);
	if (around)
		ms_table_lock_around_update(); /* the update's own stay held */
	else
		ms_table_lock();
	ms_depot_lock();
}

void ms_fork_parent(void)
{
	ms_stack_fork_parent();
	if (!ms_fork_holds_locks)
		return;
	int around = ms_fork_holds_locks == 2;
	ms_fork_holds_locks = 0;
	ms_depot_unlock();
	if (around)
		ms_table_unlock_around_update();
	else
		ms_table_unlock();
	__atomic_sub_fetch(&ms_fork_in_progress, 1, __ATOMIC_SEQ_CST);
	ms_guard_leave(&ms_self);
}

void ms_fork_child(void)
{
	struct ms_thread *t = &ms_self;
	int took = ms_fork_holds_locks;
	ms_fork_holds_locks = 0;
	ms_stack_fork_child();
	ms_spin_after_fork_child();
	/* the locks: ours, held by us or by threads that are not here */
	ms_table_after_fork_child();
	ms_depot_after_fork_child();
	ms_blame_after_fork_child();
	ms_report_after_fork_child();
	ms_symbols_after_fork_child();
	ms_names_after_fork_child();
	/* this thread's new id first, then who held what, then the other
	 * threads' records go */
	ms_thread_after_fork_child();
	ms_forked_note_parent(parent_pid_at_prepare);
	ms_threads_after_fork_child();
	/* the numbers: findings and counts from the fork on (the table's
	 * own, one store per mutex, when the child first needs it) */
	ms_findings_after_fork_child();
	ms_order_after_fork_child();
	ms_robust_after_fork_child();
	ms_clock_after_fork_child();
	__atomic_store_n(&ms_fork_unsettled, 1, __ATOMIC_RELEASE);
	ms_interval_after_fork_child();
	ms_dump_after_fork_child(ms_opt.follow != 0);
	if (!ms_opt.follow) /* MUTEXSTAT_FOLLOW=0: this process is not ours */
		__atomic_store_n(&ms_active, 0, __ATOMIC_RELEASE);
	if (took)
		ms_guard_leave(t);
	/* the next call takes the slow path, which settles the table
	 * (init.c): the unlock path looks at unlock_word, the lock path at the
	 * cache */
	ms_cache_clear(t);
	ms_ok_clear(t);
}

void ms_fork_note_parent(int parent)
{
	parent_pid_at_prepare = parent;
}
