/* cond.c - condition waits past their entry points; see cond.h.
 *
 * glibc's wait lets the mutex go with its unlock's own rules (the
 * internal unlock, without the user count): a recursive mutex held more
 * than once only loses a level and stays held through the wait; a robust
 * mutex whose owner died and that was not made consistent becomes not
 * recoverable; a normal mutex the thread does not hold is let go whoever
 * holds it, and the retake then gives it to this thread; the kinds whose
 * unlock checks the owner answer EPERM and do not wait.  The retake can
 * answer EOWNERDEAD (its holder meanwhile died) or ENOTRECOVERABLE. */
#define _GNU_SOURCE
#include "wrap/cond.h"
#include "base/clock.h"
#include "core/forked.h"
#include "runtime/dump.h"
#include "record/record.h"
#include "analysis/robust.h"

#include <errno.h>

/* The thread was cancelled in the wait: glibc took the mutex back before
 * running the thread's cleanup handlers (this one first). */
static void cond_wait_cancelled(void *arg)
{
	const struct ms_cond_wait *w = arg;
	int saved = errno;
	w->t->ts->cond_key = 0;
	ms_cond_retaken(w, -1);
	errno = saved;
}

/* In a function of its own: the cleanup handler's setjmp would make the
 * compiler wary of the caller's variables. */
MS_UNWOUND __attribute__((noinline)) int
ms_cond_wait_call(struct ms_cond_wait *w, pthread_cond_t *c, int how,
		  clockid_t clock, const struct timespec *abstime)
{
	struct ms_tstate *ts = w->t->ts;
	int rc, saved = errno;
	ms_dump_before_wait();
	/* the wait a live dump reads, under the handler: asynchronous
	 * cancellation may land on any of these lines */
	pthread_cleanup_push(cond_wait_cancelled, w);
	ts->cond_cond = (uintptr_t)c;
	ts->cond_timed = how != 0;
	ts->cond_caller = w->caller;
	ts->cond_since = ms_ticks();
	__atomic_store_n(&ts->cond_key, (uintptr_t)w->m, __ATOMIC_RELEASE);
	errno = saved;
	rc = ms_cond_call(how, c, w->m, clock, abstime);
	ts->cond_key = 0;
	pthread_cleanup_pop(0);
	return rc;
}

void ms_cond_retaken(const struct ms_cond_wait *w, int rc)
{
	struct ms_thread *t = w->t;
	if (mutex_holder(w->m) == (int)t->tid) {
		struct ms_record *rec = ms_rec(w->r);
		if (unlikely(!LOAD(&rec->first_caller)) && LOAD(&rec->owner) == t->tid)
			/* a hold whose lock we did not see (as record.c's
			 * unlock says): this retake is the first lock seen */
			STORE(&rec->owner, 0);
		/* a cancelled wait has no answer: a robust mutex's owner
		 * field reads "inconsistent" after a retake that got
		 * EOWNERDEAD */
		if (rc < 0)
			rc = mutex_owner(w->m) == MS_OWNER_INCONSISTENT ? EOWNERDEAD : 0;
		if (rc == EOWNERDEAD)
			ms_count_error(w->r, rc);
		ms_acquired(t, w->r, w->m, w->caller, MS_OP_COND_REACQUIRE, 0, rc, 0);
	} else if (rc > 0 && rc != ETIMEDOUT) {
		ms_count_error(w->r, rc);
		if (rc == ENOTRECOVERABLE) /* the retake refused */
			ms_robust_refused(w->r);
		ms_log_other(t, w->r, w->caller, MS_OP_COND_REACQUIRE, rc);
	}
}

/* MS_UNWOUND: a cancelled wait leaves this frame by unwinding too. */
MS_UNWOUND int ms_cond_unusual(struct ms_cond_wait *w, pthread_cond_t *c, int how,
			       clockid_t clock, const struct timespec *abstime)
{
	struct ms_thread *t = w->t;
	uint32_t r = w->r;
	pthread_mutex_t *m = w->m;
	int saved = errno;
	if (mutex_kind(m) == -1) {
		/* destroyed: glibc answers EINVAL, letting nothing go */
		int rc = ms_cond_call(how, c, m, clock, abstime);
		saved = errno;
		if (rc == EINVAL) {
			ms_count_error(r, rc);
			ms_misuse(t, r, MS_M_USE_DESTROYED, w->caller, MS_OP_COND_RELEASE, rc);
		}
		errno = saved;
		return rc;
	}
	int holder = mutex_holder(m);
	if (holder != (int)t->tid) /* a mutex it locked before a fork (core/forked.c) */
		holder = ms_fork_owner_for_unlock(t, r, m, holder);
	if (holder == (int)t->tid && mutex_locked(m)) {
		uint32_t seq = 0;
		uint64_t birth = LOAD(&ms_rec(r)->birth);
		int inner = LOAD(&m->__data.__count) > 1;
		SERIAL_ADD(&ms_cold(r)->cond_waits, 1); /* held yet */
		if (inner)
			/* one level of a recursive mutex: it stays held */
			ms_log_holder(t, r, w->caller, MS_OP_COND_RELEASE);
		else {
			int inconsistent = mutex_owner(m) == MS_OWNER_INCONSISTENT;
			seq = ms_released(t, r, m, w->caller, MS_OP_COND_RELEASE);
			if (inconsistent) /* let go so, it is not recoverable */
				ms_robust_left_inconsistent(r);
		}
		if (seq)
			ms_release_publish(r, birth, seq);
		errno = saved;
		int rc = ms_cond_wait_call(w, c, how, clock, abstime);
		saved = errno;
		if (inner && rc == ENOTRECOVERABLE) {
			/* an inner level of a robust mutex not made consistent:
			 * glibc's unlock took the level and did not wait (the
			 * mutex is still held) */
			SERIAL_ADD(&ms_cold(r)->cond_waits, -1);
			ms_count_error(r, rc);
		} else
			ms_cond_retaken(w, rc);
		errno = saved;
		return rc;
	}
	/* Not this thread's.  It is misuse whatever glibc answers (POSIX
	 * leaves it undefined for a normal mutex): recorded once glibc has
	 * answered. */
	int other = mutex_locked(m); /* and so held by another thread */
	errno = saved;
	int rc = ms_cond_wait_call(w, c, how, clock, abstime);
	saved = errno;
	int retaken = mutex_holder(m) == (int)t->tid;
	if (retaken)
		SERIAL_ADD(&ms_cold(r)->cond_waits, 1);
	ms_misuse(t, r, MS_M_COND_NOT_HELD, w->caller, MS_OP_COND_RELEASE, rc);
	if (retaken && other) {
		/* glibc let another thread's hold go: its held set is stale */
		struct ms_record *rec = ms_rec(r);
		STORE(&rec->owner, LOAD(&rec->owner) & ~MS_HELD);
		__atomic_fetch_add(&ms_unlocks_elsewhere, 1, __ATOMIC_RELEASE);
	}
	if (retaken)
		ms_cond_retaken(w, rc);
	else if (rc && rc != ETIMEDOUT) {
		ms_count_error(r, rc);
		if (rc == ENOTRECOVERABLE) /* the retake refused */
			ms_robust_refused(r);
	}
	errno = saved;
	return rc;
}
