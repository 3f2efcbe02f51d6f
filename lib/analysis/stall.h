/* stall.h - a process whose every thread is blocked: the watchdog's STALL.
 *
 * Every thread of the process but the dump thread must sleep in a wait:
 * for a mutex, a condition, to join a thread (as the library recorded
 * them), or in a futex wait the library does not see (sem_wait, a
 * barrier, a lock of another kind), and have been in that same wait for
 * the watchdog's time.  A thread that runs, or sleeps in any other call
 * (read, poll, nanosleep: it waits for the world outside), means no stall.
 * A wait with a deadline, or one another process may end (a futex wait
 * that is not private, a process-shared mutex), is the world outside too:
 * a stall is only one that nothing can end. */
#ifndef MUTEXSTAT_STALL_H
#define MUTEXSTAT_STALL_H

#include <stdint.h>

struct ms_tstate;

enum ms_stall_kind {
	MS_STALL_MUTEX,  /* object: the mutex; holder: who holds it */
	MS_STALL_COND,   /* object: the condition; mutex: its mutex */
	MS_STALL_JOIN,   /* object: the pthread_t; holder: that thread, 0 unknown */
	MS_STALL_FUTEX,  /* object: the futex word */
};

#define MS_STALL_SHOWN 32

struct ms_stall_thread {
	uint32_t tid;
	char name[16];
	enum ms_stall_kind kind;
	uintptr_t object, mutex;
	uint32_t holder;
	uint64_t waited_ns;
	int timed, shared;    /* (a deadline, another process: no stall) */
	int retake;           /* MS_STALL_MUTEX: woken from its condition wait,
				 blocked taking its mutex back (waited_ns and
				 caller are the condition wait's) */
	uintptr_t caller;     /* where it waits, 0 unknown */
	uint32_t stack;       /* and its stack (depot id), 0 none */
	struct ms_tstate *ts; /* its record, NULL if it has none */
};

struct ms_stall {
	uint32_t n;          /* threads, all blocked */
	uint32_t shown;      /* of them in t[] */
	uint64_t waited_ns;  /* the shortest time one has been blocked (a
				retake: since the first look that saw it) */
	/* A signal the program handles that another process may send to
	 * end a wait (SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGPWR, a
	 * real-time signal; not SIGINT, whose handler every interactive
	 * program has), 0 if none: its
	 * handler may post a semaphore a thread waits on (sem_post is
	 * async-signal-safe), as a daemon's shutdown does.  Such a stall is
	 * shown with that caveat, does not count for MUTEXSTAT_EXIT_CODE
	 * and does not abort. */
	int handled_signal;
	struct ms_stall_thread t[MS_STALL_SHOWN];
};

/* The dump thread (tid self), at each look of the watchdog: 1 when every
 * other thread has been blocked for at least threshold_ns, in waits none
 * of which changed since the last stall it answered 1 for (so once per
 * stall); out then says what they wait for (no stacks: the caller's).
 * Reads /proc. */
int ms_stall_check(uint32_t self, uint64_t threshold_ns, struct ms_stall *out);

/* "SIGTERM", "SIGRTMIN+2": handled_signal's name, in out. */
const char *ms_stall_signal_name(int sig, char out[24]);

/* The line a STALL with a handled signal has (after its threads): the
 * suppressions read it, such a STALL not being a failing finding. */
#define MS_STALL_SIGNAL_CAVEAT "  unless a signal ends a wait: "

#endif
