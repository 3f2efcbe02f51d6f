/* thread.c - the per-thread state: tid cache and the count of threads that
 * used a mutex. */
#include "core/thread.h"
#include "base/spin.h"
#include "base/internal.h"
#include "glibc/real.h"

#include <errno.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

int ms_active; /* set by start-up (init.c) */

__thread struct ms_thread ms_self __attribute__((tls_model("initial-exec")));

static uint64_t threads_seen;

/* The clocks of threads that have ended, at most.  A new thread starts
 * from it: the lock path takes a mutex whose record names this thread's
 * tid as its last holder in the order after the thread's own clock,
 * without a look at the mutex's (record.h, ms_order_retaking), and a tid the
 * kernel hands out again must not find its predecessor's mutexes ahead
 * of it. */
static uint64_t clock_floor;

static uint64_t threads_without_tid;

uint32_t ms_thread_register(struct ms_thread *t)
{
	/* A raw system call: gettid() has no errno side effect worth keeping,
	 * and this runs once per thread. */
	int saved = errno;
	long tid = syscall(SYS_gettid);
	errno = saved;
	if (tid <= 0) {
		/* refused (a seccomp filter): without its id the thread
		 * cannot be told from others -- every one read as thread
		 * 4294967295, and a false SELF-DEADLOCK followed.  It is not
		 * followed, for good: in library code, as far as recording
		 * goes (its guard never reaches 0), under an id no thread has */
		t->guard += 1u << 30;
		t->tid = UINT32_MAX;
		t->tid_held = t->tid;
		ATOMIC_ADD(&threads_without_tid, 1);
		return t->tid;
	}
	t->tid = (uint32_t)tid;
	t->tid_held = t->tid | MS_HELD;
	t->owned_once = mutex_owned_once_word(t->tid);
	ms_thread_clock_past_floor(t);
	ATOMIC_ADD(&threads_seen, 1);
	return t->tid;
}

void ms_thread_clock_floor(uint64_t order)
{
	atomic_max_u64(&clock_floor, order);
}

void ms_thread_clock_past_floor(struct ms_thread *t)
{
	if (t->clock < LOAD(&clock_floor))
		t->clock = LOAD(&clock_floor);
}

/* The child of fork() keeps the forking thread's TLS but has a new tid. */
void ms_thread_after_fork_child(void)
{
	ms_self.tid = (uint32_t)syscall(SYS_gettid);
	ms_self.tid_held = ms_self.tid | MS_HELD;
	ms_self.owned_once = mutex_owned_once_word(ms_self.tid);
	ms_self.pend = 0;
	STORE(&threads_seen, 1);
}

void ms_guard_leave(struct ms_thread *t)
{
	/* ok also needs the thread's record (made on its first recorded
	 * call): without it the lock path would follow a NULL record; and in
	 * a fork child whose table still has the parent's numbers, the slow
	 * path first (it zeroes them, core/forked.h) */
	if (--t->guard == 0 && t->tid && t->ts && !t->pend &&
	    __atomic_load_n(&ms_active, __ATOMIC_ACQUIRE) &&
	    !__atomic_load_n(&ms_fork_unsettled, __ATOMIC_ACQUIRE))
		ms_ok_set(t);
	ms_async_resume(t);
}

void ms_async_defer_slow(struct ms_thread *t)
{
	if (t->async_deferred++ == 0)
		ms_real.cancel_type(PTHREAD_CANCEL_DEFERRED, NULL);
}

/* cancel_async changes only outside those sections (cancel_asked): each
 * one defers if and only if the outermost did. */
void ms_async_resume_slow(struct ms_thread *t)
{
	/* counted down first: a cancel acted on in the call unwinds from
	 * here, out of every section */
	if (--t->async_deferred)
		return;
	if (t->cancel_asked) {
		t->cancel_async = t->cancel_asked - 1 == PTHREAD_CANCEL_ASYNCHRONOUS;
		t->cancel_asked = 0;
	}
	if (t->cancel_async)
		ms_real.cancel_type(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
}

uint64_t ms_threads_without_tid(void)
{
	return LOAD(&threads_without_tid);
}

uint64_t ms_threads_seen(void)
{
	return LOAD(&threads_seen);
}
