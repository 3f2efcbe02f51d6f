/* waitfor.h - the wait-for graph of a running (or hung) program: which
 * threads wait for which mutexes held by whom, read from the threads'
 * records without stopping them.  Report time only: the text report
 * (report/waitfor_text.c), JSON, DOT and the watchdog read it. */
#ifndef MUTEXSTAT_WAITFOR_H
#define MUTEXSTAT_WAITFOR_H

#include <stdint.h>

struct ms_tstate;

/* One wait of a snapshot, and where it leads. */
#define MS_WAITERS_MAX 4096

struct ms_waiter {
	struct ms_tstate *ts;
	uint32_t tid, rec, stack;
	uintptr_t key, caller;
	uint64_t since;
	int timed;       /* the wait has a deadline: it gives up then */
	uint32_t owner;  /* tid holding the mutex, 0 if free now */
	uint32_t foreign; /* a process-shared mutex held in another process:
			     glibc's owner, a thread of that process */
	uint32_t unseen; /* an rwlock this thread waits to write, held for
			    read by none here: glibc's count of its readers,
			    whom the library did not see (another process's,
			    or reads taken past it); 0 none */
	struct ms_tstate *owner_ts; /* the owner's record, NULL if none here */
	uintptr_t taken_at;   /* where the owner took it (its held set), 0 unknown */
	/* the owner's condition wait (its mutex, 0 none), when that wait and
	 * this one were both under way while the owner held this mutex */
	uintptr_t cond_key, cond_caller;
	uint64_t cond_since;
	uintptr_t cond_cond;   /* that wait's condition variable */
	int cond_timed;        /* that wait has a deadline: it ends then */
	uint32_t cond_signals; /* its signals and broadcasts, when first read
				  (core/cond_signals.h) */
	uint64_t cond_taken;   /* acquisitions of its mutex then, */
	uint64_t cond_contended; /* of them after a wait, */
	uint32_t cond_wanted;  /* threads waiting for it then */
	int next;        /* index of the owner among waiters, -1 none */
	int done;
	int changed;     /* the wait ended, or its mutex changed hands, while
			    the graph was read (snapshot) */
	int lasted;      /* the same wait, owner (and its condition wait,
			    asleep and not signalled) after COND_LASTS_MS */
	int stuck;       /* the chain from here ends at a condition wait, and
			    all of it lasted COND_LASTS_MS */
	int read;        /* a wait for a read lock (of a read-write lock) */
	int retake;      /* the thread is in a condition wait, blocked taking
			    its mutex back (glibc's retake, inside the wait:
			    `caller` and `since` are the condition wait's) */
};

/* Whether thread tid, in a condition wait on the mutex at key, is past
 * the condition, blocked taking the mutex back.  Report time (/proc). */
int ms_waitfor_retaking(uint32_t tid, uintptr_t key);

/* Whether thread ts is in a condition wait, blocked taking its mutex back
 * from another thread: a wait in the graph (the holder is read first, so
 * /proc only for a mutex another thread holds). */
int ms_waitfor_retake_blocked(struct ms_tstate *ts);

/* Up to MS_WAITERS_MAX waits now, into w, each with its owner's index
 * (next); *moment is when.  Returns how many. */
int ms_waitfor_snapshot(struct ms_waiter *w, uint64_t *moment);

/* The condition wait thread ts is in, read whole: its fields are read,
 * then its mutex and start again, and a wait that changed meanwhile (one
 * ended, the next begun) or began after now (ticks) is none.  1 if there
 * is one. */
struct ms_cond_seen {
	uintptr_t cond, mutex, caller;
	uint64_t since;
	int timed;
};
int ms_cond_wait_read(struct ms_tstate *ts, uint64_t now, struct ms_cond_seen *out);

/* Who holds the mutex at the end of a chain, when that is not a thread
 * here that runs or waits. */
enum ms_far {
	FAR_HERE,    /* a thread of this process */
	FAR_EXITED,  /* a thread of this process that has exited */
	FAR_PARENT,  /* a thread of the parent: held when this process forked */
	FAR_OTHER,   /* a thread of another process (process-shared) */
	FAR_GONE,    /* a thread of another process that no longer exists */
	FAR_UNSEEN,  /* a thread id that names no process here sharing it */
	FAR_READERS, /* readers the library did not see (ms_waiter.unseen) */
};
/* The process a thread id belongs to (its Tgid), 0 if no such thread (or
 * it has exited and waits to be reaped). */
int ms_waitfor_process_of(uint32_t tid);

/* One finding of a snapshot, as every report shows it: a DEADLOCK (a
 * cycle; a chain that ends at a holder that is gone, or at a thread in a
 * condition wait that lasted while holding the mutex the chain waits
 * for) or a WAIT CHAIN. */
enum ms_waitfor_kind {
	MS_WF_CYCLE,  /* threads wait for each other around a cycle */
	MS_WF_COND,   /* the chain's end waits for a condition, holding it */
	MS_WF_EXITED, /* the holder at the end has exited */
	MS_WF_PARENT, /* ... is a thread of the parent, at the fork */
	MS_WF_GONE,   /* ... is a thread of another process that exited */
	MS_WF_CHAIN,  /* none of those: a WAIT CHAIN */
};
struct ms_waitfor_finding {
	enum ms_waitfor_kind kind;
	int first;   /* its first waiter: a cycle's lowest tid, a chain's head */
	int len;     /* a cycle's length */
	int timed;   /* a cycle with a wait with a deadline in it */
	int last;    /* a chain's last waiter before `into` */
	int into;    /* the cycle waiter a chain runs into, -1 none */
	enum ms_far far;       /* who holds the last mutex of a chain */
	struct ms_tstate *end; /* the thread here at a chain's end, or NULL */
	uintptr_t cond;        /* ... in a condition wait on this mutex, 0 */
	uint64_t now;          /* the snapshot's moment (ticks) */
	const int *waits;      /* its waits in order (indexes into the snapshot): */
	int nwaits;            /* a cycle's from first round, a chain's to into */
};
typedef void ms_waitfor_finding_fn(const struct ms_waiter *w,
				   const struct ms_waitfor_finding *f, void *arg);
/* Calls fn for each finding of snapshot w (n waits, taken at moment):
 * the cycles first, then the chains from each waiter nobody waits for.
 * order: room for n indexes, which the findings' waits lists use.
 * Returns the number of DEADLOCK findings. */
int ms_waitfor_each_finding(struct ms_waiter *w, int n, uint64_t moment, int *order,
			    ms_waitfor_finding_fn *fn, void *arg);
/* Whether waiter i waits for a lock it holds itself (a cycle of one) that
 * a SELF-DEADLOCK finding says already (findings.h): the reports print
 * that one alone, and a chain into it names it. */
int ms_waitfor_self_said(const struct ms_waiter *w, int i);

/* How many waits in the wait-for graph now are in deadlocks that cannot end
 * by themselves (a cycle without a timed lock, a wait on a mutex whose
 * holder is gone), 0 if none:
 * what MUTEXSTAT_ON_DEADLOCK=abort aborts on.  Dump thread only. */
int ms_waitfor_certain_deadlocks(void);
/* Whether each of those the last call counted was a thread waiting for
 * itself (a SELF-DEADLOCK). */
int ms_waitfor_certain_all_self(void);

/* How many threads other than `waiter` hold record r's read-write lock
 * for read now. */
uint32_t ms_waitfor_readers(uint32_t r, uint32_t waiter);

/* How many threads that have exited hold record r's read-write lock for
 * read still (as many as glibc counts beyond the read holds of threads
 * here), 0 if none; *tid the last of them to exit, *taken_at where it
 * took it (taken_at may be NULL). */
uint32_t ms_waitfor_exited_readers(uint32_t r, uint32_t *tid, uintptr_t *taken_at);

/* How many threads wait for a mutex now. */
int ms_waitfor_waiting(void);

/* One thread waiting for a mutex now, for the graph outputs. */
struct ms_waitfor_wait {
	uint32_t tid;           /* the waiting thread */
	uint32_t rec;           /* the mutex it waits for: record, */
	uintptr_t key;          /* address, */
	uintptr_t caller;       /* where it waits (the lock's caller), */
	uint32_t stack;         /* and its stack (depot id), 0 if not captured */
	uint64_t waited_ns;     /* how long so far */
	int timed;              /* the wait has a deadline (timedlock, clocklock) */
	int retake;             /* a condition wait taking its mutex back: caller
				   and waited_ns are the condition wait's */
	uint32_t owner;         /* the thread holding the mutex, 0 if free now */
	uintptr_t owner_caller; /* where the owner took it, 0 if unknown */
	int cycle;              /* on a wait-for cycle: a DEADLOCK */
	int owner_exited;       /* the owner has exited: a DEADLOCK too */
	int owner_in_parent;    /* the owner is a thread of the parent, which
				   held it when this process forked: a
				   DEADLOCK too */
	uint32_t foreign_owner; /* a process-shared mutex held by this thread
				   of another process; 0 none */
	int cond_end;           /* the chain of waits from here ends at a thread
				   in a condition wait: a DEADLOCK unless a
				   thread outside the chain signals it */
	uintptr_t owner_cond_key; /* the owner is not waiting for a mutex but for
				     a condition: that wait's mutex; 0 none */
	struct ms_tstate *owner_ts; /* the owner's record, NULL if not here */
};
typedef void ms_waitfor_fn(const struct ms_waitfor_wait *w, void *arg);

/* Call fn for each thread waiting for a mutex now (the graph the text
 * report follows).  Returns the number of waits, or -1 without memory.  Report
 * time only; safe beside a text report. */
int ms_waitfor_each(ms_waitfor_fn *fn, void *arg);

/* Whether thread tid, which the library records in a lock wait, is in
 * another system call than futex(): not in that wait.  A signal handler's
 * siglongjmp took it out (glibc lets a program leave its waits so, and the
 * record stays), or a handler runs on it.  Running, it may be on its way
 * to the futex, or spinning for a spin lock: a waiter still. */
int ms_waitfor_left_wait(uint32_t tid);

#endif
