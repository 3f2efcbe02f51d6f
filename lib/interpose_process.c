/* interpose_process.c - the entry points about processes and owners'
 * deaths, beside the mutex calls of interpose.c:
 *
 *   pthread_create()           so the dump thread starts with the
 *                              program's second thread (live.c);
 *   pthread_mutex_consistent() a robust mutex repaired after its owner
 *                              died (robust.c).
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
#include "table.h"
#include "thread.h"

#include <errno.h>
#include <unistd.h>

/* The program's second thread: the dump thread may start now (live.c). */
MS_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr,
			     void *(*fn)(void *), void *arg)
{
	int rc = ms_real.thread_create(th, attr, fn, arg);
	if (rc == 0 && unlikely(__atomic_load_n(&ms_live_pending, __ATOMIC_ACQUIRE))) {
		int saved = errno;
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
