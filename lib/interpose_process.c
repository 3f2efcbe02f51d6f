/* interpose_process.c - the entry points about processes and owners'
 * deaths, beside the mutex calls of interpose.c:
 *
 *   pthread_create()           so the dump thread starts with the
 *                              program's second thread (live.c), and
 *                              the new thread has libunwind's TLS
 *                              block before it runs (stack.h);
 *   pthread_mutex_consistent() a robust mutex repaired after its owner
 *                              died (robust.c), and its old name
 *                              pthread_mutex_consistent_np().
 *
 * Each calls glibc's function and returns its answer and errno as they
 * are. */
#define _GNU_SOURCE
#include "fork.h"
#include "init.h"
#include "internal.h"
#include "live.h"
#include "real.h"
#include "robust.h"
#include "stack.h"
#include "table.h"
#include "thread.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

struct start {
	void *(*fn)(void *);
	void *arg;
};

/* The new thread: libunwind's TLS block first, while no allocator lock is
 * held, then the program's function (a tail call: no frame of ours stays
 * under it, and its return value is the thread's). */
static void *thread_start(void *p)
{
	struct start s = *(struct start *)p;
	free(p);
	ms_stack_thread_ready();
	return s.fn(s.arg);
}

/* The program's second thread: the dump thread may start now (live.c). */
MS_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr,
			     void *(*fn)(void *), void *arg)
{
	/* Not recording (stepped aside for a sanitizer, see init.c): a tail
	 * call, so no frame of ours sits under the caller's -- TSan's
	 * interceptor behind us names its caller as the thread's creator. */
	if (!__atomic_load_n(&ms_active, __ATOMIC_ACQUIRE) &&
	    !__atomic_load_n(&ms_live_pending, __ATOMIC_ACQUIRE))
		return ms_real.thread_create(th, attr, fn, arg);
	/* malloc here as glibc's pthread_create does (the new thread's TLS
	 * vector); without memory the thread starts as it would without us */
	int saved = errno;
	struct start *s = ms_stack_thread_ready() ? malloc(sizeof *s) : NULL;
	errno = saved;
	int rc;
	if (s) {
		s->fn = fn;
		s->arg = arg;
		rc = ms_real.thread_create(th, attr, thread_start, s);
		if (rc != 0)
			free(s);
	} else
		rc = ms_real.thread_create(th, attr, fn, arg);
	if (rc == 0 && unlikely(__atomic_load_n(&ms_live_pending, __ATOMIC_ACQUIRE))) {
		saved = errno;
		ms_live_thread_created();
		errno = saved;
	}
	return rc;
}

MS_EXPORT int pthread_mutex_consistent(pthread_mutex_t *m)
{
	int rc = ms_real.mutex_consistent(m);
	if (rc == 0 && __atomic_load_n(&ms_active, __ATOMIC_ACQUIRE) &&
	    !ms_self.guard) {
		ms_fork_settle();
		uint32_t r = ms_table_find((uintptr_t)m);
		if (r != MS_REC_NONE && r != MS_REC_UNTRACKED)
			ms_robust_made_consistent(r);
	}
	return rc;
}

/* Its name before glibc 2.12, pthread_mutex_consistent_np (GLIBC_2.4).
 * Today's pthread.h turns it into pthread_mutex_consistent, but a program
 * built against glibc before 2.34 asks for the old name, which glibc still
 * exports: that repair went past us, and the report said the mutex was made
 * consistent 0 times.  The same function under the old name. */
MS_EXPORT int ms_mutex_consistent_np(pthread_mutex_t *m)
	__asm__("pthread_mutex_consistent_np");
MS_EXPORT int ms_mutex_consistent_np(pthread_mutex_t *m)
{
	return pthread_mutex_consistent(m);
}
