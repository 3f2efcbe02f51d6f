/* last_thread.c - the dump thread out of glibc's count of threads; see
 * last_thread.h. */
#define _GNU_SOURCE
#include "glibc/last_thread.h"

#include <dlfcn.h>

/* glibc 2.34 and later: libc.so.6's __nptl_nthreads (GLIBC_PRIVATE), the
 * count pthread_create raises before the new thread runs, and each ending
 * thread (main's pthread_exit too) lowers, calling exit(0) at zero.  A C
 * library without it: the dump thread stays counted (the process then
 * outlives main's pthread_exit; doc/limits.md). */
static unsigned int *nthreads;

void ms_last_thread_init(void)
{
	nthreads = dlvsym(RTLD_DEFAULT, "__nptl_nthreads", "GLIBC_PRIVATE");
}

int ms_last_thread_uncount(void)
{
	if (!nthreads)
		return 0;
	__atomic_sub_fetch(nthreads, 1, __ATOMIC_SEQ_CST);
	return 1;
}
