/* glibc_fast.h - glibc's own lock and unlock of a free normal mutex,
 * done inline.
 *
 * Most mutexes a program has are of kind 0 (__kind): PTHREAD_MUTEX_NORMAL
 * or DEFAULT, private, no lock elision -- PTHREAD_MUTEX_INITIALIZER,
 * std::mutex, pthread_mutex_init with no attributes.  For such a mutex,
 * glibc's uncontended lock is one compare-and-swap of the lock word (a
 * plain store while the process has one thread) and two stores, and its
 * unlock two stores and an exchange.  Calling glibc for them costs more
 * than doing them: its trylock, which the lock path used to tell a free
 * mutex from a contention, is 34 instructions with the call, and its
 * unlock 23; these are 10 and 13.  Everything else goes to glibc as
 * before: other kinds, and a held mutex (the slow path waits in glibc's
 * lock).
 *
 * The fields are glibc's public layout of pthread_mutex_t, which its ABI
 * keeps, and what is written is what glibc writes (owner 0 while free,
 * else the holder's tid; __nusers counts holds, which
 * pthread_mutex_destroy checks; tests/transparency.sh compares them
 * with glibc's own, 2.36 here): a mutex goes back and forth between
 * these steps and glibc's own functions (a condition wait, the slow
 * paths) and stays consistent.  ms_fast_off is 0 only when glibc's own
 * functions are behind ours (another library that wraps them must see
 * every call), glibc does not elide locks (it would mark a kind-0
 * mutex at its first lock), no lock checker (helgrind, drd) watches
 * glibc's functions, and a self-test at start-up finds that these steps
 * leave a probe mutex as glibc's leave another (ms_fast_compare: the
 * protocol is glibc's private one, no header promises it): real.c
 * decides. */
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
