/* forked.c - a fork child's memory of its parent; see forked.h. */
#define _GNU_SOURCE
#include "core/forked.h"
#include "base/internal.h"
#include "base/maps.h"
#include "core/table.h"
#include "core/thread_pool.h"

#include <sched.h>
#include <unistd.h>

/* ---- the child's memory of the parent ------------------------------- */

static int parent_pid;        /* 0 unless this process is a fork child */
static int own_pid;           /* the pid whose memory this is: see ms_in_vfork_child */

#define MAX_NOTED 1024

/* A mutex held when the process forked, in its life since the fork. */
struct noted {
	uint32_t rec;
	uint32_t tid;  /* the holder's id in the parent */
	uint64_t birth;
	uintptr_t read_at; /* a read hold: where it was taken (0: not a read) */
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

uint32_t ms_fork_orphan_reads(uint32_t r)
{
	if (!parent_pid)
		return 0;
	uint64_t birth = LOAD(&ms_rec(r)->birth);
	uint32_t n = 0;
	for (uint32_t i = 0; i < norphans; i++)
		n += orphans[i].rec == r && orphans[i].birth == birth && orphans[i].read_at;
	return n;
}

int ms_fork_orphan_held_by(uint32_t r, uint32_t tid)
{
	if (!parent_pid || !tid)
		return 0;
	uint64_t birth = LOAD(&ms_rec(r)->birth);
	for (uint32_t i = 0; i < norphans; i++)
		if (orphans[i].rec == r && orphans[i].birth == birth && orphans[i].tid == tid)
			return 1;
	return 0;
}

uint32_t ms_fork_own_before(uint32_t r)
{
	return parent_pid ? find_noted(own, nown, r) : 0;
}

int ms_fork_parent_pid(void)
{
	return parent_pid;
}

void ms_forked_note_start(void)
{
	own_pid = getpid();
}

int ms_in_vfork_child(void)
{
	return own_pid && getpid() != own_pid;
}

/* A process-shared mutex in memory the parent shares (MAP_SHARED) is one
 * lock for both processes: the parent's thread that held it at the fork
 * holds it still, and may unlock it, in its own process.  It is not the
 * child's (a child waiting for it was a SELF-DEADLOCK, and the watchdog
 * aborted the healthy child), nor held by a thread the child lacks: here,
 * as in any process, it is held in another process (waitfor.c names it). */
static int held_in_parent(const struct ms_record *rec)
{
	uint32_t kind = (LOAD(&rec->flags) & ~MS_F_CLASS) >> MS_F_KIND_SHIFT;
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
		if (ts->held[i].mode & MS_HELD_READ) {
			/* a read hold (no owner to check): of the parent
			 * if shared with it, else as an exclusive hold */
			struct noted note = { r, ts->tid, 0, ts->held[i].caller };
			if (held_in_parent(rec))
				shared[nshared++] = r;
			else if (!forker && norphans < MAX_NOTED)
				orphans[norphans++] = note;
			continue;
		}
		if (LOAD(&rec->owner) != (ts->tid | MS_HELD))
			continue; /* stale: another thread unlocked it */
		if (held_in_parent(rec)) {
			STORE(&rec->owner, ts->tid); /* not held by a thread here */
			shared[nshared++] = r;
			continue;
		}
		struct noted note = { r, ts->tid, 0, 0 };
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

/* The forking thread's id in the parent: the last owner of the mutexes it
 * let go of last, which in the child are its own under its new id. */
static uint32_t forker_then;

void ms_forked_note_parent(int parent)
{
	parent_pid = parent;
	forker_then = ms_self.ts ? ms_self.ts->tid : 0;
	own_pid = getpid();
	norphans = nown = 0;
	ms_threads_each(note_held, NULL);
}

static void clear_fork_flags(uintptr_t key, uint32_t r, void *arg)
{
	(void)key;
	(void)arg;
	/* nobody waits in the child (a hold being timed has its start
	 * zeroed with the cold part: its end is not counted) */
	struct ms_record *rec = ms_rec(r);
	/* let go of last by the forking thread: its own, under its new id
	 * (its next lock is no owner change: one counted in each child's
	 * report, openssl speed -multi's) */
	if (forker_then && forker_then != ms_self.tid && LOAD(&rec->owner) == forker_then)
		STORE(&rec->owner, ms_self.tid);
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
	/* the settling thread, most often the forking one, has a new tid
	 * too: it retakes a lock its tid let go of last in its own order */
	ms_thread_clock_past_floor(t);
	for (uint32_t i = 0; i < norphans; i++) {
		orphans[i].birth = LOAD(&ms_rec(orphans[i].rec)->birth);
		/* a read of a thread the child lacks: the lock keeps it as a
		 * reader's that exited holding it (thread_pool.c), whom the
		 * held lines, the wait-for graph and an unlock's misuse
		 * check count -- named as the parent's (ms_fork_orphan_held_by) */
		if (orphans[i].read_at)
			ms_held_read_orphaned(orphans[i].rec, orphans[i].tid, orphans[i].read_at);
	}
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
