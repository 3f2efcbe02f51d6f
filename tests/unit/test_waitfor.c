/* test_waitfor.c - the live wait-for graph (lib/analysis/waitfor.c's
 * ms_waitfor_each and ms_waitfor_certain_deadlocks) read from thread
 * records made up here, without threads: a two-thread cycle, a longer
 * one, a thread waiting for a mutex it holds itself, a chain behind a
 * thread that does not wait, a cycle through a timed lock (not certain),
 * a wait for a mutex whose holder is gone (certain), a wait whose
 * mutex is free, and waits for a read-write lock no one is seen to hold
 * (writers: for no one; a reader of a writer-preferring lock: for the
 * writer that waits); and the findings the text report and JSON both print
 * from one snapshot (ms_waitfor_each_finding): a cycle with a chain
 * running into it, a chain behind a gone holder, a plain wait chain, a
 * chain ending at a condition wait (a DEADLOCK unless that condition is
 * signalled, or its mutex taken, while the dump looks again).
 *
 * Thread ids are made up (none is a thread of this process, so /proc
 * says nothing of them); each test runs in its own forked child. */
#include "suites.h"

#include "base/clock.h"
#include "analysis/waitfor.h"
#include "core/cond_signals.h"
#include "core/table.h"
#include "core/thread.h"
#include "core/thread_pool.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define TID(n) (4000000u + (n))
#define KEY(n) ((uintptr_t)0x55d4c0b00000u + (uintptr_t)(n) * 48)

static uint32_t rec[16];
static struct ms_tstate *ts[16];

static void setup(void)
{
	ck_assert_int_eq(ms_table_init(1024, 16), 1024);
	ms_clock_init();
	ck_assert_int_eq(ms_threads_init(NULL), 0);
	uint64_t clock = 0;
	for (unsigned i = 0; i < 16; i++) {
		rec[i] = ms_table_add(KEY(i), 1, &clock);
		ts[i] = ms_tstate_new(TID(i));
		ck_assert_ptr_nonnull(ts[i]);
	}
}

/* Thread t holds mutex m. */
static void holds(unsigned t, unsigned m)
{
	STORE(&ms_rec(rec[m])->owner, TID(t) | MS_HELD);
	struct ms_tstate *s = ts[t];
	s->held[s->nheld].rec = rec[m];
	s->held[s->nheld].caller = 0x1000 + m;
	s->nheld++;
}

/* Thread t waits for mutex m (with a deadline or not), for a second now. */
static void waits(unsigned t, unsigned m, int timed)
{
	struct ms_tstate *s = ts[t];
	s->wait_key = KEY(m);
	s->wait_caller = 0x2000 + m;
	s->wait_since = ms_ticks() - ms_ticks_per_ms() * 1000;
	s->wait_timed = (uint32_t)timed;
	__atomic_store_n(&s->wait_rec, rec[m], __ATOMIC_RELEASE);
}

static struct ms_waitfor_wait seen[16];
static int nseen;

static void keep(const struct ms_waitfor_wait *w, void *arg)
{
	(void)arg;
	if (nseen < 16)
		seen[nseen] = *w;
	nseen++;
}

/* The waits of the graph now; the one of thread t. */
static int graph(void)
{
	nseen = 0;
	ck_assert_int_eq(ms_waitfor_each(keep, NULL), nseen);
	return nseen;
}

static const struct ms_waitfor_wait *wait_of(unsigned t)
{
	for (int i = 0; i < nseen && i < 16; i++)
		if (seen[i].tid == TID(t))
			return &seen[i];
	ck_abort_msg("thread %u has no wait", t);
	return NULL;
}

START_TEST(test_waitfor_two_cycle)
{
	holds(0, 0);
	holds(1, 1);
	waits(0, 1, 0);
	waits(1, 0, 0);
	ck_assert_int_eq(graph(), 2);
	ck_assert_int_eq(wait_of(0)->cycle, 1);
	ck_assert_uint_eq(wait_of(0)->owner, TID(1));
	ck_assert_uint_eq(wait_of(0)->owner_caller, 0x1001);
	ck_assert_int_eq(wait_of(1)->cycle, 1);
	ck_assert_uint_eq(wait_of(1)->owner, TID(0));
	ck_assert_uint_ge(wait_of(1)->waited_ns, 900000000u);
	ck_assert_int_eq(ms_waitfor_certain_deadlocks(), 2);
}
END_TEST

/* Five threads, each holding its mutex and waiting for the next's. */
START_TEST(test_waitfor_ring_of_five)
{
	for (unsigned i = 0; i < 5; i++)
		holds(i, i);
	for (unsigned i = 0; i < 5; i++)
		waits(i, (i + 1) % 5, 0);
	ck_assert_int_eq(graph(), 5);
	for (unsigned i = 0; i < 5; i++)
		ck_assert_int_eq(wait_of(i)->cycle, 1);
	ck_assert_int_eq(ms_waitfor_certain_deadlocks(), 5);
}
END_TEST

START_TEST(test_waitfor_self)
{
	holds(3, 3);
	waits(3, 3, 0);
	ck_assert_int_eq(graph(), 1);
	ck_assert_int_eq(wait_of(3)->cycle, 1);
	ck_assert_uint_eq(wait_of(3)->owner, TID(3));
	ck_assert_int_eq(ms_waitfor_certain_deadlocks(), 1);
}
END_TEST

/* 2 waits for 1, which waits for 0, which holds it and waits for nothing:
 * a chain, no deadlock. */
START_TEST(test_waitfor_chain)
{
	holds(0, 0);
	holds(1, 1);
	waits(1, 0, 0);
	waits(2, 1, 0);
	ck_assert_int_eq(graph(), 2);
	ck_assert_int_eq(wait_of(1)->cycle, 0);
	ck_assert_int_eq(wait_of(2)->cycle, 0);
	ck_assert_uint_eq(wait_of(2)->owner, TID(1));
	ck_assert_ptr_eq(wait_of(1)->owner_ts, ts[0]);
	ck_assert_int_eq(wait_of(1)->owner_exited, 0);
	ck_assert_int_eq(ms_waitfor_certain_deadlocks(), 0);
}
END_TEST

/* A cycle with a timed lock in it ends when that lock gives up. */
START_TEST(test_waitfor_timed_cycle)
{
	holds(0, 0);
	holds(1, 1);
	waits(0, 1, 1);
	waits(1, 0, 0);
	ck_assert_int_eq(graph(), 2);
	ck_assert_int_eq(wait_of(0)->cycle, 1);
	ck_assert_int_eq(wait_of(0)->timed, 1);
	ck_assert_int_eq(ms_waitfor_certain_deadlocks(), 0);
}
END_TEST

/* The holder's record is gone (the thread exited holding the mutex). */
START_TEST(test_waitfor_holder_gone)
{
	STORE(&ms_rec(rec[5])->owner, TID(15) | MS_HELD); /* no record of 15 */
	struct ms_tstate *gone = ts[15];
	memset(gone, 0, offsetof(struct ms_tstate, wait_rec));
	STORE(&gone->tid, TID(99));
	waits(4, 5, 0);
	ck_assert_int_eq(graph(), 1);
	ck_assert_int_eq(wait_of(4)->cycle, 0);
	ck_assert_int_eq(wait_of(4)->owner_exited, 1);
	ck_assert_int_eq(ms_waitfor_certain_deadlocks(), 1);
}
END_TEST

/* A mutex nobody holds: the wait is about to end, no edge. */
START_TEST(test_waitfor_free_mutex)
{
	waits(6, 7, 0);
	ck_assert_int_eq(graph(), 1);
	ck_assert_uint_eq(wait_of(6)->owner, 0);
	ck_assert_int_eq(wait_of(6)->cycle, 0);
	ck_assert_int_eq(ms_waitfor_certain_deadlocks(), 0);
}
END_TEST

/* Mutex m is a read-write lock of glibc's kind `kind`. */
static void rwlock(unsigned m, unsigned kind)
{
	STORE(&ms_rec(rec[m])->flags, (uint32_t)MS_CLASS_RWLOCK << MS_F_CLASS_SHIFT |
					      kind << MS_F_KIND_SHIFT);
}

/* Thread t waits to read (read) or write read-write lock m. */
static void waits_mode(unsigned t, unsigned m, int read)
{
	ts[t]->wait_read = (uint32_t)read;
	waits(t, m, 0);
}

/* Two writers wait for a read-write lock whose holder the record does
 * not show (a writer between glibc's lock and its record, preempted
 * there: seen in exit reports of 8 writer threads).  Neither waits for
 * the other: no cycle, no DEADLOCK. */
START_TEST(test_waitfor_writers_behind_no_holder)
{
	rwlock(0, PTHREAD_RWLOCK_PREFER_READER_NP);
	waits_mode(0, 0, 0);
	waits_mode(1, 0, 0);
	ck_assert_int_eq(graph(), 2);
	ck_assert_uint_eq(wait_of(0)->owner, 0);
	ck_assert_uint_eq(wait_of(1)->owner, 0);
	ck_assert_int_eq(wait_of(0)->cycle, 0);
	ck_assert_int_eq(ms_waitfor_certain_deadlocks(), 0);
	/* the same on a writer-preferring lock */
	rwlock(0, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	ck_assert_int_eq(graph(), 2);
	ck_assert_uint_eq(wait_of(0)->owner, 0);
	ck_assert_uint_eq(wait_of(1)->owner, 0);
	ck_assert_int_eq(ms_waitfor_certain_deadlocks(), 0);
}
END_TEST

/* A thread that holds a read-write lock for read and waits to write it
 * waits for itself (glibc's wrlock never returns): a cycle of one, a
 * certain deadlock -- whoever else reads it. */
START_TEST(test_waitfor_write_after_read)
{
	rwlock(0, PTHREAD_RWLOCK_PREFER_READER_NP);
	struct ms_tstate *s = ts[0];
	s->held[s->nheld].rec = rec[0];
	s->held[s->nheld].mode = MS_HELD_READ;
	s->nheld++;
	waits_mode(0, 0, 0);
	ck_assert_int_eq(graph(), 1);
	ck_assert_uint_eq(wait_of(0)->owner, TID(0));
	ck_assert_int_eq(wait_of(0)->cycle, 1);
	ck_assert_int_eq(ms_waitfor_certain_deadlocks(), 1);
}
END_TEST

/* A reader of a writer-preferring lock that no one holds waits behind
 * the writer that waits (glibc lets the writer in first); on a
 * reader-preferring lock it waits for no one. */
START_TEST(test_waitfor_reader_behind_waiting_writer)
{
	rwlock(0, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	waits_mode(0, 0, 0);
	waits_mode(1, 0, 1);
	ck_assert_int_eq(graph(), 2);
	ck_assert_uint_eq(wait_of(1)->owner, TID(0));
	ck_assert_uint_eq(wait_of(0)->owner, 0);
	rwlock(0, PTHREAD_RWLOCK_PREFER_READER_NP);
	ck_assert_int_eq(graph(), 2);
	ck_assert_uint_eq(wait_of(1)->owner, 0);
}
END_TEST

/* The findings of the graph now, each as "kind:tid,tid..>end" where end
 * is the tid of the cycle waiter a chain runs into, or '-'. */
static char found[256];

static void note_finding(const struct ms_waiter *w, const struct ms_waitfor_finding *f,
			 void *arg)
{
	(void)arg;
	static const char *const kinds[] = { "cycle", "cond", "exited", "parent", "gone",
					     "chain" };
	size_t at = strlen(found);
	at += (size_t)snprintf(found + at, sizeof found - at, "%s%s:", at ? " " : "",
			       kinds[f->kind]);
	for (int i = 0; i < f->nwaits; i++)
		at += (size_t)snprintf(found + at, sizeof found - at, "%s%u", i ? "," : "",
				       w[f->waits[i]].tid - TID(0));
	if (f->into >= 0)
		snprintf(found + at, sizeof found - at, ">%u", w[f->into].tid - TID(0));
}

static int findings(void)
{
	static struct ms_waiter w[MS_WAITERS_MAX];
	static int order[MS_WAITERS_MAX];
	uint64_t now;
	int n = ms_waitfor_snapshot(w, &now);
	found[0] = 0;
	return ms_waitfor_each_finding(w, n, now, order, note_finding, NULL);
}

/* Threads 2 and 1 wait for each other; 3 waits behind 2, 4 behind 3. */
START_TEST(test_waitfor_findings_cycle_and_chain_into_it)
{
	holds(1, 1);
	holds(2, 2);
	holds(3, 3);
	waits(2, 1, 0);
	waits(1, 2, 0);
	waits(3, 2, 0);
	waits(4, 3, 0);
	ck_assert_int_eq(findings(), 1);
	ck_assert_str_eq(found, "cycle:1,2 chain:4,3>2");
}
END_TEST

/* A chain whose last holder has exited is one DEADLOCK, the whole chain. */
START_TEST(test_waitfor_findings_chain_behind_gone_holder)
{
	STORE(&ms_rec(rec[5])->owner, TID(15) | MS_HELD);
	struct ms_tstate *gone = ts[15];
	memset(gone, 0, offsetof(struct ms_tstate, wait_rec));
	STORE(&gone->tid, TID(99));
	holds(4, 4);
	waits(4, 5, 0);
	waits(6, 4, 0);
	ck_assert_int_eq(findings(), 1);
	ck_assert_str_eq(found, "exited:6,4");
}
END_TEST

/* Waits behind a thread that does not wait: a WAIT CHAIN, no deadlock. */
START_TEST(test_waitfor_findings_plain_chain)
{
	holds(0, 0);
	holds(1, 1);
	waits(1, 0, 0);
	waits(2, 1, 0);
	ck_assert_int_eq(findings(), 0);
	ck_assert_str_eq(found, "chain:2,1");
}
END_TEST

/* Thread t sleeps in a condition wait on condition variable cond, whose
 * mutex is m, for a second now. */
static void in_cond_wait(unsigned t, unsigned m, uintptr_t cond)
{
	struct ms_tstate *s = ts[t];
	s->cond_cond = cond;
	s->cond_caller = 0x3000 + m;
	s->cond_since = ms_ticks() - ms_ticks_per_ms() * 1000;
	__atomic_store_n(&s->cond_key, KEY(m), __ATOMIC_RELEASE);
}

#define COND ((uintptr_t)0x55d4c0c00040u)
#define OTHER_COND ((uintptr_t)0x55d4c0c00070u)

static int stop_busy;
static uintptr_t busy_cond; /* signalled, if not 0 */
static unsigned busy_mutex; /* else mutex number busy_mutex taken, */
static int busy_waited;     /* each time after a wait, if set */

/* A thread of the program signalling a condition or taking a mutex,
 * every millisecond, until told to stop. */
static void *busy(void *arg)
{
	(void)arg;
	struct timespec ms = { 0, 1000000 };
	while (!__atomic_load_n(&stop_busy, __ATOMIC_ACQUIRE)) {
		if (busy_cond)
			ms_cond_signalled((void *)busy_cond);
		else {
			__atomic_fetch_add(&ms_rec(rec[busy_mutex])->acquisitions, 1,
					   __ATOMIC_RELAXED);
			if (busy_waited)
				__atomic_fetch_add(&ms_cold(rec[busy_mutex])->contended, 1,
						   __ATOMIC_RELAXED);
		}
		nanosleep(&ms, NULL);
	}
	return NULL;
}

/* The findings while another thread signals cond (not 0), or takes
 * mutex m (after a wait for it if waited); tried up to five times for
 * none, as the busy thread must run in the dump's 100 ms second look (a
 * starved machine may not run it: one DEADLOCK then, not five). */
static int findings_while(uintptr_t cond, unsigned m, int waited)
{
	pthread_t th;
	busy_cond = cond;
	busy_mutex = m;
	busy_waited = waited;
	__atomic_store_n(&stop_busy, 0, __ATOMIC_RELEASE);
	ck_assert_int_eq(pthread_create(&th, NULL, busy, NULL), 0);
	int n = findings();
	for (int tries = 1; tries < 5 && n; tries++)
		n = findings();
	__atomic_store_n(&stop_busy, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	return n;
}

/* Thread 2 waits for a mutex that thread 1 holds while it sleeps in a
 * condition wait, and the dump's second look, 100 ms later, finds all the
 * same: a DEADLOCK if nobody signalled that condition meanwhile and its
 * mutex was not in demand -- also while another condition is signalled,
 * another mutex taken, or the condition's mutex only taken (a thread
 * polling another condition with it, whose timed-out waits retake it) --
 * and a WAIT CHAIN if the condition was signalled (a busy pool's
 * producers wake the other waiters, and this one in its turn), or its
 * mutex taken by threads that waited for it (producers that cannot signal
 * yet: the consumers keep it busy), or taken while a thread waits for
 * it. */
START_TEST(test_waitfor_findings_chain_ends_at_condition_signalled_or_not)
{
	ck_assert_ptr_ne(ms_cond_signal_count(COND), ms_cond_signal_count(OTHER_COND));
	holds(1, 1);
	in_cond_wait(1, 7, COND);
	waits(2, 1, 0);
	ck_assert_int_eq(findings(), 1);
	ck_assert_str_eq(found, "cond:2");
	ck_assert_int_eq(findings_while(OTHER_COND, 0, 0), 1);
	ck_assert_str_eq(found, "cond:2");
	ck_assert_int_eq(findings_while(0, 8, 1), 1);
	ck_assert_str_eq(found, "cond:2");
	ck_assert_int_eq(findings_while(0, 7, 0), 1);
	ck_assert_str_eq(found, "cond:2");
	ck_assert_int_eq(findings_while(COND, 0, 0), 0);
	ck_assert_str_eq(found, "chain:2");
	ck_assert_int_eq(findings_while(0, 7, 1), 0);
	ck_assert_str_eq(found, "chain:2");
	/* taken while one thread waits for it all along */
	__atomic_fetch_add(&ms_cold(rec[7])->waiting, 1, __ATOMIC_RELAXED);
	ck_assert_int_eq(findings_while(0, 7, 0), 0);
	ck_assert_str_eq(found, "chain:2");
	/* waited for, and never taken: the holder keeps it */
	ck_assert_int_eq(findings(), 1);
	ck_assert_str_eq(found, "cond:2");
	__atomic_fetch_sub(&ms_cold(rec[7])->waiting, 1, __ATOMIC_RELAXED);
}
END_TEST

/* The time a thread has run, which the dump reads to tell one that runs
 * from one that waits for a CPU (where_now.c): it grows while this thread
 * spins; a thread that does not exist has none. */
START_TEST(test_waitfor_task_cpu_time)
{
	uint32_t self = (uint32_t)syscall(SYS_gettid);
	char stat[64];
	if (!ms_task_file(self, "schedstat", stat, sizeof stat))
		return; /* a kernel without it (no CONFIG_SCHED_INFO): looks end at 20 */
	uint64_t before = ms_task_cpu_ns(self);
	struct timespec a, b;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < 20000000L);
	usleep(1000); /* (the kernel adds a running thread's time at a tick or
			 when it stops running) */
	ck_assert_uint_gt(ms_task_cpu_ns(self), before);
	ck_assert_uint_eq(ms_task_cpu_ns(TID(0)), 0);
}
END_TEST

Suite *waitfor_suite(void)
{
	Suite *s = suite_create("waitfor");
	TCase *tc = tcase_create("graph");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_waitfor_two_cycle);
	tcase_add_test(tc, test_waitfor_ring_of_five);
	tcase_add_test(tc, test_waitfor_self);
	tcase_add_test(tc, test_waitfor_chain);
	tcase_add_test(tc, test_waitfor_timed_cycle);
	tcase_add_test(tc, test_waitfor_holder_gone);
	tcase_add_test(tc, test_waitfor_free_mutex);
	tcase_add_test(tc, test_waitfor_writers_behind_no_holder);
	tcase_add_test(tc, test_waitfor_reader_behind_waiting_writer);
	tcase_add_test(tc, test_waitfor_write_after_read);
	tcase_add_test(tc, test_waitfor_findings_cycle_and_chain_into_it);
	tcase_add_test(tc, test_waitfor_findings_chain_behind_gone_holder);
	tcase_add_test(tc, test_waitfor_findings_plain_chain);
	tcase_add_test(tc, test_waitfor_findings_chain_ends_at_condition_signalled_or_not);
	tcase_add_test(tc, test_waitfor_task_cpu_time);
	suite_add_tcase(s, tc);
	return s;
}
