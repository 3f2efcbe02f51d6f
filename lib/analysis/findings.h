/* findings.h - what the deadlock analysis found, kept as records from the
 * moment it is seen: lock-order cycles (potential and guarded), self-
 * deadlocks, mutexes held when a thread exited.
 *
 * A finding copies what it shows (addresses, names, kinds, call sites and
 * stack ids), so it outlives its mutexes: destroying, re-initialising or
 * reusing the memory of a mutex never erases a finding, and an ended life
 * adds where it ended.  Findings are data: the report layer prints them
 * (findings_text.c, out_json.c, out_dot.c). */
#ifndef MUTEXSTAT_FINDINGS_H
#define MUTEXSTAT_FINDINGS_H

#include "analysis/lockgraph.h"
#include "analysis/stall.h"
#include "core/thread_pool.h"

#include <pthread.h>
#include <stdint.h>

/* ---- lock-order cycles ------------------------------------------------ */

/* One mutex life of a cycle, as it was when the cycle was found. */
struct ms_finding_mutex {
	uintptr_t key;          /* its address */
	uint32_t rec;
	uint64_t birth;
	const char *name;       /* mutexstat_name's, NULL none */
	uint32_t flags;         /* its record's (kind, MS_F_STATIC) */
	uintptr_t first_caller; /* where first locked */
	uint32_t first_stack;   /* ... its stack (table.h's MS_SITE_SHARED) */
	uint32_t init_stack;    /* where initialised (0: no init seen) */
	uint32_t ended;         /* its life has ended: MS_ENDED_*, 0 not, */
	uintptr_t ended_at;     /* where (0 unknown), */
	uint32_t ended_stack;   /* and the stack there (0 none) */
};

/* how a life ended: destroyed, initialised again, before the cycle was
 * seen whole, or its memory taken by another kind of lock (never
 * destroyed, used with no init: a static initialiser, a std::mutex) */
enum { MS_ENDED_DESTROYED = 1, MS_ENDED_REINIT, MS_ENDED_UNSEEN, MS_ENDED_REUSED };

/* One edge of a cycle: thread tid took mutex i, then mutex i + 1. */
struct ms_finding_edge {
	uint32_t tid;
	char thread_name[16];   /* as ps -L showed it when found; "" gone */
	uintptr_t a_caller, b_caller;
	uint32_t a_stack, b_stack; /* depot ids, 0 none */
	uint32_t modes;         /* lockgraph.h's: the modes it was taken in */
	uint32_t b_new;         /* ... and b_new: the second was a new mutex */
};

/* A cycle keeps its first MS_CYCLE_KEPT - MS_CYCLE_TAIL mutexes and edges
 * and its last MS_CYCLE_TAIL: the text shows no more of a longer one. */
#define MS_CYCLE_KEPT 64
#define MS_CYCLE_TAIL 4

struct ms_cycle_finding {
	uint64_t count;         /* times closed: by other lives at the same code */
	uint32_t n;             /* mutexes (and edges) in the cycle */
	uint32_t kept;          /* of them in m[] and e[] */
	int guarded;            /* a gate was held on every edge: GUARDED INVERSION */
	/* An edge took its second mutex as the first acquisition of its life
	 * (lockgraph.h's b_new): nothing says a second thread could have
	 * reached that mutex then -- an object locked before it is published
	 * (ghostscript's ICC links) makes such a cycle without any way to
	 * deadlock.  Still a POTENTIAL DEADLOCK, with a note; a taking of the
	 * same edge later that is not a first makes it a plain one. */
	int b_new;
	struct ms_finding_mutex gate;
	struct ms_finding_mutex m[MS_CYCLE_KEPT];
	struct ms_finding_edge e[MS_CYCLE_KEPT];
};

/* Whether thread tid, holding mutex a, waits now for mutex b (this life
 * of each).  A cycle's edge is made as its second mutex is asked for,
 * before any wait: the thread that closed the cycle of a deadlock that
 * happened never took it.  Report time: it reads the threads' records. */
int ms_finding_edge_waits(uint32_t tid, const struct ms_finding_mutex *a,
			  const struct ms_finding_mutex *b);

/* Index in m[]/e[] of the cycle's i-th mutex/edge, -1 if not kept. */
static inline int ms_cycle_slot(const struct ms_cycle_finding *c, uint32_t i)
{
	if (i < c->kept - (c->n > c->kept ? MS_CYCLE_TAIL : 0))
		return (int)i;
	if (c->n > c->kept && i >= c->n - MS_CYCLE_TAIL)
		return (int)(c->kept - (c->n - i));
	return -1;
}

/* order.c, under the depot's lock: the cycle of n edges in path (path[i].b
 * is path[i + 1].a), guarded by gate (rec 0: not guarded).  A cycle at the
 * same code as one already kept (the same call sites and stacks, whatever
 * mutexes) counts as that one again; a guarded one found unguarded later
 * becomes a POTENTIAL DEADLOCK. */
void ms_findings_cycle(const struct ms_lg_edge *const *path, size_t n,
		       const struct ms_lg_life *gate);

/* Call fn with a copy of each cycle finding, potential deadlocks first,
 * in the order found.  Returns how many.  Report time. */
int ms_findings_each_cycle(void (*fn)(const struct ms_cycle_finding *c, void *arg),
			   void *arg);

/* The life of record rec born at birth ended (how: MS_ENDED_DESTROYED or
 * _REINIT) at caller: the findings that hold it say where.  From the
 * destroy and init wrappers, when the table says such a life ended
 * (MS_F_FINDING). */
void ms_findings_life_ended(uint32_t rec, uint64_t birth, int how, uintptr_t caller);

struct ms_findings_stats {
	uint64_t cycles;        /* distinct cycles kept */
	uint64_t cycles_lost;   /* found, but no room to keep them */
};
void ms_findings_stats(struct ms_findings_stats *out);

/* ---- self-deadlocks and threads that exit holding mutexes ------------- */

/* A thread exits with mutexes held (from its record, at thread exit). */
void ms_finding_held_at_exit(const struct ms_tstate *ts);

/* A thread relocks a mutex it holds: recorded before the call goes to
 * glibc.  One that never returns is told at once to the function
 * registered with ms_findings_on_self_deadlock (the dump thread's, which
 * says it on stderr: runtime/dump.c). */
enum ms_self_kind {
	MS_SELF_FOREVER,  /* lock: never returns */
	MS_SELF_TIMEOUT,  /* timed lock: waits for itself until its deadline */
	MS_SELF_REFUSED,  /* glibc answered EDEADLK: a MISUSE, not a hang */
};
void ms_findings_on_self_deadlock(void (*announce)(void));
/* Returns the stack of the relock (0 if not captured: a repeat). */
uint32_t ms_finding_self_deadlock(struct ms_tstate *ts, uint32_t rec, uintptr_t key,
				  enum ms_self_kind kind);

struct ms_self_finding {
	uint32_t tid;
	uintptr_t key;         /* the mutex */
	const char *name;      /* its name then, NULL none */
	uint32_t flags;        /* its record's then (the kind of lock) */
	enum ms_self_kind kind;
	uint32_t taken_stack;  /* depot ids: where it was first taken, */
	uint32_t relock_stack; /* and where relocked; 0 if not captured */
	/* taken_stack is a lock wrapper's line where the lock was first
	 * locked too: that first lock's stack, else 0 */
	uint32_t wrapped_stack;
	uint64_t count;
	/* of them, waits that ended with the lock got: something unlocked
	 * it meanwhile -- another thread (a MISUSE), or a signal handler */
	uint64_t released;
	/* of them, relocks refused (MS_SELF_REFUSED) of other lives of locks,
	 * by the same thread and code: counted here (the key is the first's) */
	uint64_t other_lives;
};
/* Thread ts's wait for record rec, which it held (a self-deadlock), got
 * the lock after all. */
void ms_finding_self_released(const struct ms_tstate *ts, uint32_t rec);
/* Relocks refused (MS_SELF_REFUSED) not kept: past the half of the
 * table that they may take. */
uint32_t ms_findings_refused_dropped(void);
void ms_findings_each_self(void (*fn)(const struct ms_self_finding *s, void *arg),
			   void *arg);
/* Whether thread tid's SELF-DEADLOCK that waits (for ever, or to a
 * deadline) was found on record rec's life now: the wait-for graph's
 * thread waiting for a lock it holds itself is that finding, not one
 * more. */
int ms_findings_self_waits(uint32_t tid, uint32_t rec);
/* The self-deadlocks that never return and were not said yet: fn for each,
 * once.  The dump thread's (or the caller's, without one). */
void ms_findings_each_unsaid(void (*fn)(const struct ms_self_finding *s, void *arg),
			     void *arg);

struct ms_exit_finding {
	uint32_t tid;
	const char *name;      /* as ps -L showed it, at exit */
	uint32_t n;            /* mutexes held at exit */
	uint32_t shown;        /* of them in key/caller (at most 8) */
	uintptr_t key[8], caller[8];
	uint32_t flags[8];     /* each lock's record flags (its kind) */
	uint8_t read[8];       /* held for read (an rwlock) */
	/* taken in a wrapper of the program's, where the lock's life was
	 * first locked: that first lock's stack, past the wrapper's frame
	 * (its second frame on); else 0 */
	uint32_t wrapped_stack[8];
};
/* Returns how many more threads ended holding mutexes than were kept. */
uint32_t ms_findings_each_exit(void (*fn)(const struct ms_exit_finding *e, void *arg),
			       void *arg);

/* ---- stalls (the watchdog's) ----------------------------------------- */

/* The dump thread saw every thread blocked (stall.h): kept, the newest. */
void ms_findings_stall(const struct ms_stall *s);
/* Whether the STALL kept (one no signal of the program's may end) has
 * thread tid in a condition wait: a live dump's DEADLOCK of a chain that
 * ends at that wait ("unless a thread outside this chain signals it") is
 * then that STALL -- every thread is blocked, none can signal -- and the
 * report says it once, as the STALL. */
int ms_findings_stall_has_cond_wait(uint32_t tid);
/* fn (if not NULL) with a copy of the newest stall, if one was seen;
 * returns how many were. */
uint32_t ms_findings_each_stall(void (*fn)(const struct ms_stall *s, void *arg), void *arg);
/* A fork child starts with none (its parent's report has them); so does
 * mutexstat_reset. */
void ms_findings_after_fork_child(void);
void ms_findings_reset(void);

#endif
