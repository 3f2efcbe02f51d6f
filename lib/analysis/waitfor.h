/* waitfor.h - the state of a running (or hung) program: which threads wait
 * for which mutexes held by whom, and the report on a signal or from the
 * watchdog, written by a thread of ours. */
#ifndef MUTEXSTAT_LIVE_H
#define MUTEXSTAT_LIVE_H

#include "base/fmt.h"

#include <stdint.h>

/* Install the dump signal's handler and start the dump thread (when
 * MUTEXSTAT_SIGNAL is not none, the watchdog or crash reports are on).  A
 * dump signal (or SIGRTMAX-3) that already has a handler or is ignored is
 * left to the program: live dumps are then off, with a one-line note. */
int ms_live_init(void);

/* For crash.c, from a signal handler.  ms_live_crash_report asks the dump
 * thread for the process's last report (written where the exit report
 * goes); -1 if this process has no dump thread (a child of fork) or the
 * caller is the dump thread.  _done says it is written. */
int ms_live_crash_report(void);
int ms_live_crash_report_done(void);
int ms_live_in_dump_thread(void);
/* Whether the calling thread runs a signal handler (init.c: exit() from
 * one has the exit report written by the dump thread). */
int ms_live_in_signal_handler(void);
extern int ms_live_aborting; /* the watchdog's abort (MUTEXSTAT_ON_DEADLOCK) */
/* The dump thread is started late where it can be (see waitfor.c for when):
 * ms_live_pending says it waits, for the program's second thread
 * (ms_live_thread_created), a wait (ms_live_before_wait: in a process
 * with one thread, a wait for another process, a process-shared mutex or
 * one a fork child's parent held, so a dump must be possible then), or
 * the next mutex call (ms_live_at_call).  A fork child gets a pipe of its
 * own for the dump signal; not followed (MUTEXSTAT_FOLLOW=0), the signals
 * get back the dispositions they had before the library. */
void ms_live_after_fork_child(int follow);
extern uint32_t ms_live_pending;
void ms_live_at_call(void);
void ms_live_thread_created(void);
void ms_live_waits(void);
/* A self-deadlock that never returns was just recorded: the dump thread
 * says it on stderr (started for it if need be, even with no dump signal
 * nor watchdog), or, where none can be had, the calling thread. */
void ms_live_announce(void);
static inline void ms_live_before_wait(void)
{
	if (__builtin_expect(__atomic_load_n(&ms_live_pending, __ATOMIC_RELAXED), 0))
		ms_live_waits();
}

/* Print DEADLOCK findings (wait-for cycles, waits on mutexes whose owner
 * has exited) and WAIT CHAIN lines from the current wait-for graph.
 * Returns the number of deadlocks. */
int ms_live_print(struct ms_fmt *f);

/* How many waits in the wait-for graph now are in deadlocks that cannot end
 * by themselves (a cycle without a timed lock, a wait on a mutex whose
 * holder is gone), 0 if none:
 * what MUTEXSTAT_ON_DEADLOCK=abort aborts on.  Dump thread only. */
int ms_live_certain_deadlocks(void);

/* How many threads wait for a mutex now. */
int ms_live_waiting(void);

struct ms_tstate;

/* One thread waiting for a mutex now, for the graph outputs. */
struct ms_live_wait {
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
typedef void ms_live_wait_fn(const struct ms_live_wait *w, void *arg);

/* Call fn for each thread waiting for a mutex now (the graph ms_live_print
 * follows).  Returns the number of waits, or -1 without memory.  Report
 * time only; safe beside a text report. */
int ms_live_each_wait(ms_live_wait_fn *fn, void *arg);

/* Where a thread of this process is now (read from /proc if it is
 * blocked, else asked with a signal): the number of frames, at *frames,
 * innermost first; 0 if it did not answer; below 0 if it was not asked,
 * and ms_live_not_asked says why (NULL: no call stacks).  Report time. */
int ms_live_where_now(struct ms_tstate *ts, const uintptr_t **frames);
const char *ms_live_not_asked(int n);

/* The dump thread's stack size (MS_REPORT_STACK), or 0 for the default:
 * a default one is as large as ulimit -s, 8 MiB taken from the room an
 * address-space limit (ulimit -v) leaves, or too small for a report
 * (ulimit -s 64); without either the default's pages cost only when used. */
size_t ms_live_thread_stack(void);

#endif
