/* cond.h - condition waits past their entry points (interpose.c): glibc's
 * wait inside a cleanup handler for cancellation, what the retake of the
 * mutex did, and the waits that are not the plain case -- a recursive
 * mutex held more than once, a robust one whose owner died, a mutex the
 * thread does not hold.
 *
 * A condition wait lets its mutex go the way glibc's unlock would, waits,
 * and takes it back.  The plain case is the one the owner's unlock would
 * end: a mutex this thread holds at one level (glibc's owner field says
 * so).  The others are rare and out of line, in cond.c. */
#ifndef MUTEXSTAT_COND_H
#define MUTEXSTAT_COND_H

#include "glibc/real.h"
#include "core/thread.h"

#include <pthread.h>
#include <stdint.h>
#include <time.h>

/* One recorded wait: who, on which mutex (its record), from where. */
struct ms_cond_wait {
	struct ms_thread *t;
	uint32_t r;
	pthread_mutex_t *m;
	uintptr_t caller;
};

/* glibc's wait of the kind `how`: 0 wait, 1 timedwait, 2 clockwait. */
static inline int ms_cond_call(int how, pthread_cond_t *c, pthread_mutex_t *m,
			       clockid_t clock, const struct timespec *abstime)
{
	return how == 0 ? ms_real.cond_wait(c, m)
	       : how == 1 ? ms_real.cond_timedwait(c, m, abstime)
			  : ms_real.cond_clockwait(c, m, clock, abstime);
}

/* glibc's wait, with a cleanup handler around it that records the retake
 * if the thread is cancelled in it (glibc takes the mutex back before the
 * thread's cleanup handlers run).  Sets and clears what a live dump reads
 * of the wait.  Returns glibc's answer; errno is glibc's. */
int ms_cond_wait_call(struct ms_cond_wait *w, pthread_cond_t *c, int how,
		      clockid_t clock, const struct timespec *abstime);

/* After the wait: record what the retake did -- an acquisition if glibc
 * says this thread holds the mutex (EOWNERDEAD counted: its owner died
 * meanwhile), else the error it answered (ENOTRECOVERABLE). */
void ms_cond_retaken(const struct ms_cond_wait *w, int rc);

/* A wait whose mutex glibc's owner field does not give to this thread at
 * one level: recorded as glibc treats it.  Returns glibc's answer, errno
 * as glibc left it. */
int ms_cond_unusual(struct ms_cond_wait *w, pthread_cond_t *c, int how,
		    clockid_t clock, const struct timespec *abstime);

#endif
