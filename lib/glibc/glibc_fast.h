/* glibc_fast.h - glibc's own lock and unlock of a free kind-0 mutex
 * (normal or default, private, not elided), done inline, because calling
 * glibc for them costs more than doing them.
 *
 * What is written is what glibc writes, in its public layout of
 * pthread_mutex_t (__nusers too, which pthread_mutex_destroy checks), so a
 * mutex may pass between these steps and glibc's functions (a condition
 * wait, the slow paths).  The protocol is glibc's private one: real.c sets
 * ms_fast_off unless the start-up self-test (ms_fast_compare) agrees and
 * nothing else must see glibc's calls.  doc/internals.md, "glibc's lock
 * protocol", has the guards and the instruction counts. */
#ifndef MUTEXSTAT_GLIBC_FAST_H
#define MUTEXSTAT_GLIBC_FAST_H

#include "base/internal.h"

#include <errno.h>
#include <sys/single_threaded.h>

/* 0: these steps may stand in for glibc's; else not (the start). */
extern int ms_fast_off __attribute__((visibility("hidden")));

/* m is a kind-0 mutex and the steps below may be used on it. */
static inline __attribute__((always_inline)) int fast_kind(const pthread_mutex_t *m)
{
	return (LOAD(&m->__data.__kind) | ms_fast_off) == 0;
}

/* glibc's pthread_mutex_lock of a free mutex m, for thread tid: 0, or
 * EBUSY if m is not free (glibc's trylock would say so too).  One thread
 * in the process: a load and a store, as glibc's lock does then (a
 * private mutex no other thread can see). */
static inline __attribute__((always_inline)) int fast_lock(pthread_mutex_t *m, uint32_t tid)
{
	int *word = &m->__data.__lock;
	if (__libc_single_threaded) {
		if (LOAD(word))
			return EBUSY;
		STORE(word, 1);
	} else {
		int free = 0;
		if (!__atomic_compare_exchange_n(word, &free, 1, 0, __ATOMIC_ACQUIRE,
						 __ATOMIC_RELAXED))
			return EBUSY;
	}
	m->__data.__owner = (int)tid;
	m->__data.__nusers++;
	return 0;
}

/* A thread sleeps in the kernel for the lock word (2): wake one, as
 * glibc's unlock does.  Out of line: only a contended mutex comes here. */
void ms_fast_wake(int *word) __attribute__((visibility("hidden")));

/* glibc's pthread_mutex_unlock of m, which this thread holds: owner 0, one
 * user less, and the lock word exchanged for 0 -- if it was 2, a thread
 * sleeps in the kernel for it and is woken, as glibc's unlock does (a
 * compare-and-swap that left that case to glibc took two locked
 * instructions on the busiest line of a contended mutex).  One thread in
 * the process: a plain store, as glibc's. */
static inline __attribute__((always_inline)) void fast_unlock(pthread_mutex_t *m)
{
	int *word = &m->__data.__lock;
	m->__data.__owner = 0;
	m->__data.__nusers--;
	if (__libc_single_threaded)
		__atomic_store_n(word, 0, __ATOMIC_RELEASE);
	else if (unlikely(__atomic_exchange_n(word, 0, __ATOMIC_RELEASE) > 1))
		ms_fast_wake(word);
}

/* The start-up self-test of glibc_fast.h, which copies glibc's private
 * protocol of a normal mutex: glibc's own calls on one probe mutex, the
 * stand-ins on another, the whole of both compared after each step.
 * real.c fills the pair and leaves ms_fast_off at 1 unless they agree.  A pair, so that a
 * test can hand it stand-ins that are wrong. */
struct ms_fast_pair {
	int (*lock)(pthread_mutex_t *);    /* glibc's own */
	int (*trylock)(pthread_mutex_t *);
	int (*unlock)(pthread_mutex_t *);
	/* the stand-ins: 0, or EBUSY if the mutex is held */
	int (*fast_lock)(pthread_mutex_t *, uint32_t tid);
	void (*fast_unlock)(pthread_mutex_t *);
};

/* The steps, in order: glibc's call, and the stand-in for it. */
enum ms_fast_step {
	MS_FAST_AGREE,         /* no step differed */
	MS_FAST_LOCK,          /* lock of the free mutex; fast_lock */
	MS_FAST_HELD,          /* trylock of it, held: EBUSY; fast_lock */
	MS_FAST_UNLOCK,        /* unlock; fast_unlock */
	MS_FAST_TRYLOCK,       /* trylock of the free mutex; fast_lock */
	MS_FAST_WAITER_HELD,   /* a waiter made the lock word 2; trylock */
	MS_FAST_WAITER_UNLOCK, /* then unlock, which owes it a wake */
};

/* The first step after which the calls' answers or the two mutexes
 * differ, or MS_FAST_AGREE.  No allocation, no thread, no wait: a dozen
 * calls on two mutexes of its own. */
enum ms_fast_step ms_fast_compare(const struct ms_fast_pair *p);
/* The start-up self-test's answer (MS_FAST_AGREE when it did not run):
 * the report's header says when this glibc disagreed. */
extern enum ms_fast_step ms_fast_verdict;

#endif
