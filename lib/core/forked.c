/* fork.c - the fork handlers and a fork child's own view; see fork.h.
 *
 * The handlers run in this order around glibc's fork (pthread_atfork):
 * prepare handlers last-registered first, then the fork, then parent or
 * child handlers first-registered first.  Libraries that registered theirs
 * before ours (an allocator initialised at the first malloc, before our
 * constructor) run their prepare handler after ours, while the forking
 * thread holds our locks: so the forking thread passes its own mutex calls
 * straight to glibc until the fork is over (the guard), and other threads
 * that hold mutexes do not wait for our locks meanwhile (ms_fork_may_wait):
 * that handler may need one of their mutexes.
 *
 * The child's handler does only what is async-signal-safe after the fork
 * of a multithreaded process: plain memory writes of our own tables and a
 * few system calls (gettid, clock_gettime, fstat, close, pipe2, fcntl,
 * sigaction; open and read of /proc/self/maps for a process-shared mutex
 * held at the fork).
 *
 * Before any of that, prepare waits for the stack captures under way on
 * other threads: libunwind's locks are not ours to take (stack.c). */
#define _GNU_SOURCE
#include "core/forked.h"
#include "analysis/blame.h"
#include "base/clock.h"
#include "stacks/depot.h"
#include "analysis/findings.h"
#include "runtime/init.h"
#include "base/internal.h"
#include "analysis/waitfor.h"
#include "base/maps.h"
#include "base/options.h"
#include "analysis/order.h"
#include "glibc/real.h"
#include "report/report.h"
#include "analysis/robust.h"
#include "stacks/stack.h"
#include "stacks/symbols.h"
#include "core/table.h"
#include "core/thread_pool.h"

#include <errno.h>
#include <sched.h>
#include <unistd.h>

uint32_t ms_fork_in_progress;
static uint64_t skipped;

/* The forking thread: it holds our locks from prepare to parent/child. */
static __thread int holds_locks __attribute__((tls_model("initial-exec")));
static int parent_pid_at_prepare;

/* ---- the child's memory of the parent ------------------------------- */

static int parent_pid;        /* 0 unless this process is a fork child */

#define MAX_NOTED 1024

/* A mutex held when the process forked, in its life since the fork. */
struct noted {
	uint32_t rec;
	uint32_t tid;  /* the holder's id in the parent */
	uint64_t birth;
};

static struct noted orphans[MAX_NOTED]; /* held by threads the child lacks */
static uint32_t norphans;
static struct noted own[MAX_NOTED];     /* held by the forking thread */
static uint32_t nown;

static uint32_t find_noted(const struct noted *list, uint32_t n, uint32_t r)
{
	uint64_t birth = LOAD(&ms_rec(r)->birth);
	for (uint32_t i = 0; i < n; i++)
		if (list[i].rec == r && list[i].birth == birth)
			return list[i].tid;
	return 0;
}

uint32_t ms_fork_orphan_owner(uint32_t r)
{
	return parent_pid ? find_noted(orphans, norphans, r) : 0;
}

uint32_t ms_fork_own_before(uint32_t r)
{
	return parent_pid ? find_noted(own, nown, r) : 0;
}

int ms_fork_parent_pid(void)
{
	return parent_pid;
}

/* ---- around fork ------------------------------------------------------ */

int ms_fork_may_wait(void)
{
	if (!__atomic_load_n(&ms_fork_in_progress, __ATOMIC_ACQUIRE) || holds_locks)
		return 1;
	const struct ms_tstate *ts = ms_self.ts;
	return !ts || (LOAD(&ts->nheld) == 0 && LOAD(&ts->overflow) == 0);
}

void ms_fork_skipped_call(void)
{
	ATOMIC_ADD(&skipped, 1);
}

int ms_fork_spin_lock_wait(int *word, int holding_one)
{
	for (unsigned spins = 0; __atomic_exchange_n(word, 1, __ATOMIC_ACQUIRE);
	     spins++) {
		int give_up = holding_one
				      ? __atomic_load_n(&ms_fork_in_progress, __ATOMIC_ACQUIRE) != 0
				      : spins >= 100 && !ms_fork_may_wait();
		if (give_up) {
			ms_fork_skipped_call();
			return 0;
		}
		if (spins < 100)
			__builtin_ia32_pause();
		else
			sched_yield();
	}
	return 1;
}

uint64_t ms_fork_skipped_calls(void)
{
	return LOAD(&skipped);
}

void ms_fork_prepare(void)
{
	struct ms_thread *t = &ms_self;
	parent_pid_at_prepare = getpid();
	ms_stack_fork_prepare(); /* libunwind's locks: see stack.c */
	if (t->guard)
		return; /* fork from our own code: nothing of ours to hold */
	int around = t->in_update != 0; /* a signal handler interrupted an update */
	ms_guard_enter(t);
	holds_locks = around ? 2 : 1;
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
	if (!holds_locks)
		return;
	int around = holds_locks == 2;
	holds_locks = 0;
	ms_depot_unlock();
	if (around)
		ms_table_unlock_around_update();
	else
		ms_table_unlock();
	__atomic_sub_fetch(&ms_fork_in_progress, 1, __ATOMIC_SEQ_CST);
	ms_guard_leave(&ms_self);
}

/* A process-shared mutex in memory the parent shares (MAP_SHARED) is one
 * lock for both processes: the parent's thread that held it at the fork
 * holds it still, and may unlock it, in its own process.  It is not the
 * child's (a child waiting for it was a SELF-DEADLOCK, and the watchdog
 * aborted the healthy child), nor held by a thread the child lacks: here,
 * as in any process, it is held in another process (waitfor.c names it). */
static int held_in_parent(const struct ms_record *rec)
{
	uint32_t kind = LOAD(&rec->flags) >> MS_F_KIND_SHIFT;
	struct ms_mapping m = { 0, 0, 0, "", 0 };
	return (kind & MS_KIND_PSHARED) && ms_maps_find(LOAD(&rec->key), &m) && m.shared;
}

/* The mutexes each thread of the parent held at the fork, from its record's
 * held set (the first MS_HELD_MAX of them): the forking thread's are the
 * child's (under its new id), the others' belong to threads the child does
 * not have -- except those in memory shared with the parent. */
static void note_held(struct ms_tstate *ts, void *arg)
{
	(void)arg;
	int forker = ts == ms_self.ts;
	uint32_t n = ts->nheld < MS_HELD_MAX ? ts->nheld : MS_HELD_MAX;
	uint32_t shared[MS_HELD_MAX], nshared = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t r = ts->held[i].rec;
		struct ms_record *rec = ms_rec(r);
		if (LOAD(&rec->owner) != (ts->tid | MS_HELD))
			continue; /* stale: another thread unlocked it */
		if (held_in_parent(rec)) {
			STORE(&rec->owner, ts->tid); /* not held by a thread here */
			shared[nshared++] = r;
			continue;
		}
		struct noted note = { r, ts->tid, 0 };
		if (forker) {
			STORE(&rec->owner, ms_self.tid | MS_HELD);
			if (nown < MAX_NOTED)
				own[nown++] = note;
		} else if (norphans < MAX_NOTED)
			orphans[norphans++] = note;
	}
	if (forker) /* no lock order from those in the child */
		for (uint32_t i = 0; i < nshared; i++)
			ms_held_forget(ts, shared[i]);
}

/* 1: a fork child whose table still has the parent's numbers (see
 * ms_fork_settle); 2: being settled. */
uint32_t ms_fork_unsettled;

void ms_fork_child(void)
{
	struct ms_thread *t = &ms_self;
	int took = holds_locks;
	holds_locks = 0;
	ms_stack_fork_child();
	parent_pid = parent_pid_at_prepare;
	STORE(&ms_fork_in_progress, 0);
	skipped = 0;
	/* the locks: ours, held by us or by threads that are not here */
	ms_table_after_fork_child();
	ms_depot_after_fork_child();
	ms_blame_after_fork_child();
	ms_report_after_fork_child();
	ms_symbols_after_fork_child();
	/* this thread's new id first, then who held what, then the other
	 * threads' records go */
	ms_thread_after_fork_child();
	norphans = nown = 0;
	ms_threads_each(note_held, NULL);
	ms_threads_after_fork_child();
	/* the numbers: findings and counts from the fork on (the table's
	 * own, one store per mutex, when the child first needs it) */
	ms_findings_after_fork_child();
	ms_order_after_fork_child();
	ms_robust_after_fork_child();
	ms_clock_after_fork_child();
	__atomic_store_n(&ms_fork_unsettled, 1, __ATOMIC_RELEASE);
	ms_live_after_fork_child(ms_opt.follow != 0);
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

static void clear_fork_flags(uintptr_t key, uint32_t r, void *arg)
{
	(void)key;
	(void)arg;
	/* nobody waits in the child (a hold being timed has its start
	 * zeroed with the cold part: its end is not counted) */
	struct ms_record *rec = ms_rec(r);
	/* a thread of the child may get the tid of a thread of the parent
	 * (once that one has ended), whose clock did not come along: new
	 * threads start past every mutex's order */
	ms_thread_clock_floor(ms_mutex_order_racing(r, rec));
	if (LOAD(&rec->flags) & MS_F_WAITERS)
		__atomic_fetch_and(&rec->flags, ~MS_F_WAITERS, __ATOMIC_RELAXED);
}

void ms_fork_settle_now(void)
{
	uint32_t expect = 1;
	if (!__atomic_compare_exchange_n(&ms_fork_unsettled, &expect, 2, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		while (__atomic_load_n(&ms_fork_unsettled, __ATOMIC_ACQUIRE) == 2)
			sched_yield(); /* another thread of the child settles it */
		return;
	}
	struct ms_thread *t = &ms_self;
	ms_guard_enter(t);
	ms_table_reset(); /* every number to zero, every mutex a new life */
	ms_table_lock();
	ms_table_reclaim_spares();
	ms_table_unlock();
	ms_table_each(clear_fork_flags, NULL);
	for (uint32_t i = 0; i < norphans; i++)
		orphans[i].birth = LOAD(&ms_rec(orphans[i].rec)->birth);
	for (uint32_t i = 0; i < nown; i++)
		own[i].birth = LOAD(&ms_rec(own[i].rec)->birth);
	__atomic_store_n(&ms_fork_unsettled, 0, __ATOMIC_RELEASE);
	ms_guard_leave(t);
}

int ms_fork_owner_for_unlock(const struct ms_thread *t, uint32_t r,
			     const pthread_mutex_t *m, int owner)
{
	/* Our record says this thread holds it (it did at the fork, and the
	 * child's handler gave the record its new id); glibc's owner field
	 * still has the id it had then.  Kinds whose unlock checks the owner
	 * (errorcheck, recursive, robust, priority-inherit) answer EPERM:
	 * that is glibc's answer and stays as it is. */
	if (!parent_pid || owner == (int)t->tid || mutex_unlock_checks_owner(m) ||
	    LOAD(&ms_rec(r)->owner) != (t->tid | MS_HELD))
		return owner;
	return (int)t->tid;
}
