/* glibc_fast.c - the switch and the wake of glibc_fast.h's inline steps,
 * and their start-up self-test against glibc's own calls. */
#define _GNU_SOURCE
#include "glibc/glibc_fast.h"

#include <errno.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int ms_fast_off = 1;
enum ms_fast_step ms_fast_verdict;

void ms_fast_wake(int *word)
{
	/* glibc's lll_futex_wake: one waiter of a private mutex; no errno
	 * for the program to see */
	int saved = errno;
	syscall(SYS_futex, word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, NULL, NULL, 0);
	errno = saved;
}

/* The same answer, and every byte of the two mutexes the same: the five
 * fields glibc_fast.h writes and the ones it must leave alone. */
static int same(int rc_glibc, const pthread_mutex_t *a, int rc_fast,
		const pthread_mutex_t *b)
{
	return rc_glibc == rc_fast && memcmp(a->__size, b->__size, sizeof a->__size) == 0;
}

/* A thread that finds the mutex held swaps 2 into its lock word before it
 * sleeps (glibc's __lll_lock_wait): the unlock then owes it a wake. */
static void waiter_comes(pthread_mutex_t *m)
{
	__atomic_exchange_n(&m->__data.__lock, 2, __ATOMIC_ACQUIRE);
}

enum ms_fast_step ms_fast_compare(const struct ms_fast_pair *p)
{
	uint32_t tid = (uint32_t)syscall(SYS_gettid); /* what glibc writes */
	/* static: every byte set, so the whole of both can be compared */
	static const pthread_mutex_t initial = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_t a = initial, b = initial; /* glibc's; the stand-ins' */
	int ra, rb;
	ra = p->lock(&a);
	rb = p->fast_lock(&b, tid);
	if (!same(ra, &a, rb, &b))
		return MS_FAST_LOCK;
	ra = p->trylock(&a);
	rb = p->fast_lock(&b, tid);
	if (!same(ra, &a, rb, &b))
		return MS_FAST_HELD;
	ra = p->unlock(&a);
	p->fast_unlock(&b);
	if (!same(ra, &a, 0, &b))
		return MS_FAST_UNLOCK;
	ra = p->trylock(&a);
	rb = p->fast_lock(&b, tid);
	if (!same(ra, &a, rb, &b))
		return MS_FAST_TRYLOCK;
	waiter_comes(&a);
	waiter_comes(&b);
	ra = p->trylock(&a);
	rb = p->fast_lock(&b, tid);
	if (!same(ra, &a, rb, &b))
		return MS_FAST_WAITER_HELD;
	ra = p->unlock(&a);
	p->fast_unlock(&b);
	if (!same(ra, &a, 0, &b))
		return MS_FAST_WAITER_UNLOCK;
	return MS_FAST_AGREE;
}
