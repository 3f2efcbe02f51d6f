/* test_history.c - a mutex's recent operations as the report reads them
 * (ms_history_read, lib/core/table.c): written as the lock path writes
 * them (ms_acquired, ms_released and ms_log_held for the holder,
 * ms_log_other for a thread that failed), read back oldest first with
 * every column -- order, thread, operation, result, waited, time, caller --
 * the side ring of failures merged in by order, the main ring wrapped to
 * its newest entries, older lives of the mutex left out and an entry torn
 * by a writer counted, not shown.  (test_ring.c tests the entries and the
 * ring's positions one by one; the lock path's inline copies of these
 * writes in lib/wrap/interpose.c are tests/history.sh's.)
 *
 * Threads are made up (no thread runs): A (tid 1234) and B (tid 99).
 * Tests run in fork mode; the fixture maps a table of 1024 records with
 * a history of 16 entries each. */
#define _GNU_SOURCE /* strerrorname_np */
#include "suites.h"

#include "record/record.h"
#include "record/other_locks.h"
#include "record/write_plain.h"
#include "core/ring.h"
#include "core/table.h"
#include "core/thread.h"
#include "core/thread_pool.h"
#include "stacks/depot.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define HISTORY 16
#define KEY(n) ((uintptr_t)0x55d4c0a01230u + (uintptr_t)(n) * 48)
#define CALLER(n) ((uintptr_t)0x401000 + (uintptr_t)(n) * 0x10)

static struct ms_tstate a_ts, b_ts;
static struct ms_thread a, b;

static void setup(void)
{
	ck_assert_int_eq(ms_table_init(1024, HISTORY), 1024);
	ck_assert_int_eq(ms_depot_init(1 << 20), 0); /* first-lock stacks */
	memset(&a_ts, 0, sizeof a_ts);
	memset(&b_ts, 0, sizeof b_ts);
	a = (struct ms_thread){ .ok = 1, .tid = 1234, .tid_held = 1234 | MS_HELD, .ts = &a_ts };
	b = (struct ms_thread){ .ok = 1, .tid = 99, .tid_held = 99 | MS_HELD, .ts = &b_ts };
}

static uint32_t new_mutex(unsigned n)
{
	uint64_t clock = 0;
	uint32_t r = ms_table_add(KEY(n), 1, &clock);
	ck_assert_uint_ne(r, MS_REC_UNTRACKED);
	ck_assert_uint_ne(r, MS_REC_NONE);
	return r;
}

/* The lock path's writes: a lock or trylock that got the mutex (after a
 * wait that ended at `ticks`, or none: 0), the release. */
static void got(struct ms_thread *t, uint32_t r, unsigned op, unsigned caller,
		uint64_t ticks)
{
	ms_acquired(t, r, NULL, CALLER(caller), op, ticks != 0, 0, ticks);
}

static void let_go(struct ms_thread *t, uint32_t r, unsigned caller)
{
	ms_released(t, r, NULL, CALLER(caller), MS_OP_UNLOCK);
}

/* The recent operations of record r as the report lists them, one a line:
 * "+ORDER THREAD OP RESULT[ waited][ at=TICKS] @CALLER", the order from
 * the life's birth, the thread A, B or its id, the caller's number. */
static uint32_t n_read, first_read, torn_read;
static const char *rows(uint32_t r)
{
	static char out[4096];
	struct ms_op_view v[HISTORY + MS_FAIL_RING];
	uint64_t birth = ms_rec(r)->birth;
	n_read = ms_history_read(r, v, &first_read, &torn_read);
	out[0] = 0;
	for (uint32_t i = first_read; i < n_read; i++) {
		char who[16];
		const char *err = v[i].err ? strerrorname_np(v[i].err) : "ok";
		if (v[i].tid == a.tid)
			strcpy(who, "A");
		else if (v[i].tid == b.tid)
			strcpy(who, "B");
		else
			snprintf(who, sizeof who, "%u", v[i].tid);
		size_t len = strlen(out);
		snprintf(out + len, sizeof out - len, "+%llu %s %s %s%s", (unsigned long long)(v[i].order - birth),
			 who, ms_op_name(v[i].op), err ? err : "?", v[i].waited ? " waited" : "");
		len = strlen(out);
		if (v[i].ticks)
			snprintf(out + len, sizeof out - len, " at=%llu", (unsigned long long)v[i].ticks);
		len = strlen(out);
		snprintf(out + len, sizeof out - len, " @%u\n",
			 (unsigned)((v[i].caller - CALLER(0)) / 0x10));
	}
	return out;
}

/* A side-ring entry's time is the clock's when it was written: made 1
 * here, so that rows() can say exactly what it was given. */
static void times_known(uint32_t r)
{
	struct ms_cold *c = ms_cold(r);
	for (int i = 0; i < MS_FAIL_RING; i++)
		if (c->fail_ticks[i] && (c->fail[i].what & MS_OP_TIMED))
			c->fail_ticks[i] = 1;
}

/* ---- every column ------------------------------------------------------ */

START_TEST(test_history_each_column_reads_back_oldest_first)
{
	uint32_t r = new_mutex(1);
	ms_log_held(&a, r, CALLER(1), MS_OP_INIT, 0, 0, 0); /* as init does */
	got(&a, r, MS_OP_LOCK, 2, 0);
	let_go(&a, r, 3);
	got(&b, r, MS_OP_LOCK, 4, 777777); /* after a wait that ended then */
	let_go(&b, r, 5);
	got(&a, r, MS_OP_TRYLOCK, 6, 0);
	let_go(&a, r, 7);
	got(&b, r, MS_OP_TIMEDLOCK, 8, 0);
	let_go(&b, r, 9);
	ck_assert_str_eq(rows(r),
			 "+1 A init ok @1\n"
			 "+2 A lock ok @2\n"
			 "+3 A unlock ok @3\n"
			 "+4 B lock ok waited at=777777 @4\n"
			 "+5 B unlock ok @5\n"
			 "+6 A trylock ok @6\n"
			 "+7 A unlock ok @7\n"
			 "+8 B timedlock ok @8\n"
			 "+9 B unlock ok @9\n");
	ck_assert_uint_eq(first_read, 0);
	ck_assert_uint_eq(torn_read, 0);
}
END_TEST

/* Each new owner's row names it, not the thread that had the mutex
 * before: a lock, a trylock, a relock, a change back. */
START_TEST(test_history_thread_column_names_each_new_owner)
{
	uint32_t r = new_mutex(2);
	got(&a, r, MS_OP_LOCK, 1, 0);
	let_go(&a, r, 2);
	got(&b, r, MS_OP_LOCK, 1, 0);
	let_go(&b, r, 2);
	got(&b, r, MS_OP_LOCK, 1, 0);
	let_go(&b, r, 2);
	got(&a, r, MS_OP_TRYLOCK, 3, 0);
	let_go(&a, r, 2);
	got(&b, r, MS_OP_TRYLOCK, 3, 0);
	let_go(&b, r, 2);
	ck_assert_str_eq(rows(r),
			 "+1 A lock ok @1\n+2 A unlock ok @2\n"
			 "+3 B lock ok @1\n+4 B unlock ok @2\n"
			 "+5 B lock ok @1\n+6 B unlock ok @2\n"
			 "+7 A trylock ok @3\n+8 A unlock ok @2\n"
			 "+9 B trylock ok @3\n+10 B unlock ok @2\n");
	ck_assert_uint_eq(ms_rec(r)->owner_changes, 3);
	ck_assert_uint_eq(ms_rec(r)->acquisitions, 5);
}
END_TEST

/* ---- the side ring ---------------------------------------------------- */

/* B's busy trylock and timeout while A holds the mutex: in the side ring,
 * with a time; each takes the order after the mutex's and B's own, and a
 * first failure in a hold shares it with A's unlock and is listed first
 * (it found the mutex held).  A second one in the same hold shares B's
 * first one's, and is listed after it and before A's unlock: it came
 * before that unlock too. */
START_TEST(test_history_failures_merge_in_before_the_holders_next_op)
{
	uint32_t r = new_mutex(3);
	got(&a, r, MS_OP_LOCK, 1, 0);
	ms_log_other(&b, r, CALLER(2), MS_OP_TRYLOCK, EBUSY);
	let_go(&a, r, 3);
	got(&a, r, MS_OP_LOCK, 1, 0);
	ms_log_other(&b, r, CALLER(4), MS_OP_TIMEDLOCK, ETIMEDOUT);
	ms_log_other(&b, r, CALLER(2), MS_OP_TRYLOCK, EBUSY);
	let_go(&a, r, 3);
	got(&b, r, MS_OP_LOCK, 5, 0);
	times_known(r);
	ck_assert_str_eq(rows(r),
			 "+1 A lock ok @1\n"
			 "+2 B trylock EBUSY at=1 @2\n"
			 "+2 A unlock ok @3\n"
			 "+3 A lock ok @1\n"
			 "+4 B timedlock ETIMEDOUT at=1 @4\n"
			 "+4 B trylock EBUSY at=1 @2\n"
			 "+4 A unlock ok @3\n"
			 "+5 B lock ok @5\n");
}
END_TEST

/* Ten failures of B in one hold of A's: they share a number, and the 8
 * the side ring keeps are listed as made, though the ring wrapped (its
 * slots hold the 9th and 10th before the 3rd). */
START_TEST(test_history_failures_of_one_hold_listed_as_made)
{
	uint32_t r = new_mutex(6);
	got(&a, r, MS_OP_LOCK, 1, 0);
	for (unsigned i = 0; i < 10; i++)
		ms_log_other(&b, r, CALLER(10 + i), MS_OP_TRYLOCK, EBUSY);
	let_go(&a, r, 2);
	times_known(r);
	char want[1024] = "+1 A lock ok @1\n";
	for (unsigned i = 2; i < 10; i++)
		snprintf(want + strlen(want), sizeof want - strlen(want),
			 "+2 B trylock EBUSY at=1 @%u\n", 10 + i);
	snprintf(want + strlen(want), sizeof want - strlen(want), "+2 A unlock ok @2\n");
	ck_assert_str_eq(rows(r), want);
}
END_TEST

/* ---- wrapping ----------------------------------------------------------- */

/* 50 holds, 100 entries: the 16 newest are read, in order. */
START_TEST(test_history_main_ring_wraps_to_its_newest_entries)
{
	uint32_t r = new_mutex(4);
	for (unsigned i = 0; i < 50; i++) {
		got(i % 2 ? &b : &a, r, MS_OP_LOCK, i, 0);
		let_go(i % 2 ? &b : &a, r, i);
	}
	char want[1024] = "";
	for (unsigned i = 42; i < 50; i++) {
		const char *who = i % 2 ? "B" : "A";
		snprintf(want + strlen(want), sizeof want - strlen(want),
			 "+%u %s lock ok @%u\n+%u %s unlock ok @%u\n", 2 * i + 1, who, i,
			 2 * i + 2, who, i);
	}
	ck_assert_str_eq(rows(r), want);
	ck_assert_uint_eq(n_read, HISTORY);
	ck_assert_uint_eq(first_read, 0);
}
END_TEST

/* Both rings wrapped: the 8 newest failures and the 16 newest entries of
 * the holders are read, merged by order, and the report lists the newest
 * 16 of the 24 (from `first` on). */
START_TEST(test_history_both_rings_wrap_and_the_newest_sixteen_are_listed)
{
	uint32_t r = new_mutex(5);
	for (unsigned i = 0; i < 10; i++) {
		got(&a, r, MS_OP_LOCK, i, 0);
		ms_log_other(&b, r, CALLER(100 + i), MS_OP_TRYLOCK, EBUSY);
		let_go(&a, r, i);
	}
	times_known(r);
	/* round i: lock +2i+1, the failure and the unlock +2i+2 */
	char want[1024] = "";
	for (unsigned i = 4; i < 10; i++) {
		if (i > 4)
			snprintf(want + strlen(want), sizeof want - strlen(want),
				 "+%u A lock ok @%u\n+%u B trylock EBUSY at=1 @%u\n",
				 2 * i + 1, i, 2 * i + 2, 100 + i);
		snprintf(want + strlen(want), sizeof want - strlen(want),
			 "+%u A unlock ok @%u\n", 2 * i + 2, i);
	}
	ck_assert_str_eq(rows(r), want);
	ck_assert_uint_eq(n_read, HISTORY + MS_FAIL_RING);
	ck_assert_uint_eq(first_read, MS_FAIL_RING);
}
END_TEST

/* ---- an rwlock's reads: a ring of their own --------------------------------- */

/* B reads 10 times, its clock far ahead (1000); then A, whose clock is
 * not, writes once and reads twice.  The reads' ring keeps their last 16
 * entries, the main ring the write's two; merged by order, the newest 16
 * are B's last 5 read pairs, A's write, then A's reads -- the write
 * ordered after B's reads (the writer looks at their ring), A's reads
 * after the write (the slot keeps its unlock's order).  The count: 12
 * reads and 1 write, the reads half of the slot's position. */
START_TEST(test_history_reads_have_a_ring_merged_by_order)
{
	static pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	uint32_t r = new_mutex(9);
	ms_note_rwlock(r, &l, 0);
	uint64_t birth = ms_rec(r)->birth;
	b.clock = birth + 1000;
	for (unsigned i = 0; i < 10; i++) {
		ms_read_acquired(&b, r, &l, CALLER(i), MS_OP_RDLOCK, 0, 0);
		ms_read_released(&b, r, &l, CALLER(20 + i));
	}
	ms_write_counted(&a, r);
	ms_acquired(&a, r, &l, CALLER(40), MS_OP_WRLOCK, 0, 0, 0);
	ms_released(&a, r, NULL, CALLER(41), MS_OP_WRUNLOCK);
	ms_write_released(&a, r);
	for (unsigned i = 0; i < 2; i++) {
		ms_read_acquired(&a, r, &l, CALLER(50 + i), MS_OP_RDLOCK, 0, 0);
		ms_read_released(&a, r, &l, CALLER(60 + i));
	}
	char want[2048] = "";
	for (unsigned i = 5; i < 10; i++)
		snprintf(want + strlen(want), sizeof want - strlen(want),
			 "+%u B rdlock ok @%u\n+%u B unlock (read) ok @%u\n", 1001 + 2 * i, i,
			 1002 + 2 * i, 20 + i);
	snprintf(want + strlen(want), sizeof want - strlen(want),
		 "+1021 A wrlock ok @40\n+1022 A unlock (write) ok @41\n"
		 "+1023 A rdlock ok @50\n+1024 A unlock (read) ok @60\n"
		 "+1025 A rdlock ok @51\n+1026 A unlock (read) ok @61\n");
	ck_assert_str_eq(rows(r), want);
	ck_assert_uint_eq(n_read, 18); /* 16 of the reads' ring, 2 of the main */
	ck_assert_uint_eq(first_read, 2);
	ck_assert_uint_eq(ms_rec_ring_reads(r), 12);
	ck_assert_uint_eq(ms_rec_acquisitions(r), 13);
	ck_assert_uint_eq(ms_rec(r)->acquisitions, 1); /* the record: writes alone */
	ck_assert_uint_eq(a_ts.nheld, 0);
	ck_assert_uint_eq(b_ts.nheld, 0);
}
END_TEST

/* A read held across mutexstat_reset(): the lock's reads get a slot again
 * -- the same one, with the same birth when the lock did nothing else --
 * and the held read's unlock must not land on the new reads' entries: it
 * goes to the main history.  B's two read pairs after the reset are all
 * there, with A's unlock beside them. */
START_TEST(test_history_read_held_across_a_reset_keeps_the_new_reads)
{
	static pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	uint32_t r = new_mutex(10);
	ms_note_rwlock(r, &l, 0);
	ms_read_acquired(&a, r, &l, CALLER(1), MS_OP_RDLOCK, 0, 0);
	ms_table_reset_running();
	for (unsigned i = 0; i < 2; i++) {
		ms_read_acquired(&b, r, &l, CALLER(10 + i), MS_OP_RDLOCK, 0, 0);
		ms_read_released(&b, r, &l, CALLER(20 + i));
	}
	ms_read_released(&a, r, &l, CALLER(2));
	const char *got = rows(r);
	for (unsigned i = 0; i < 2; i++) {
		char want[64];
		snprintf(want, sizeof want, "B rdlock ok @%u\n", 10 + i);
		ck_assert_msg(strstr(got, want), "no \"%s\" in:\n%s", want, got);
		snprintf(want, sizeof want, "B unlock (read) ok @%u\n", 20 + i);
		ck_assert_msg(strstr(got, want), "no \"%s\" in:\n%s", want, got);
	}
	ck_assert_msg(strstr(got, "A unlock (read) ok @2\n"), "A's unlock missing:\n%s", got);
	ck_assert_uint_eq(n_read, 5);
	ck_assert_uint_eq(ms_rec_acquisitions(r), 2); /* the reads since the reset */
}
END_TEST

/* ---- lives ---------------------------------------------------------------- */

/* An init of a known address starts a new life at its birth: the entries
 * before, still in the ring, are not read, nor are those of the mutex
 * whose record a new address gets after a destroy. */
START_TEST(test_history_leaves_out_older_lives)
{
	uint32_t r = new_mutex(6);
	for (unsigned i = 0; i < 3; i++) {
		got(&a, r, MS_OP_LOCK, 1, 0);
		let_go(&a, r, 2);
	}
	uint64_t clock = a.clock;
	ck_assert_uint_eq(ms_table_add(KEY(6), 1, &clock), r); /* init again */
	ck_assert_str_eq(rows(r), "");
	ck_assert_uint_eq(n_read, 0);
	ms_log_held(&a, r, CALLER(3), MS_OP_INIT, 0, 0, 0);
	got(&b, r, MS_OP_LOCK, 4, 0);
	let_go(&b, r, 5);
	ck_assert_str_eq(rows(r), "+1 A init ok @3\n+2 B lock ok @4\n+3 B unlock ok @5\n");

	/* destroyed; the record goes to the next new address */
	ms_cold(r)->trylock_busy = 1; /* a cold part, and a side ring */
	ms_log_other(&a, r, CALLER(6), MS_OP_TRYLOCK, EBUSY);
	ms_table_remove(KEY(6), 0);
	clock = b.clock;
	ck_assert_uint_eq(ms_table_add(KEY(7), 1, &clock), r);
	ck_assert_str_eq(rows(r), "");
	got(&a, r, MS_OP_LOCK, 7, 0);
	ms_cold(r); /* zeroed for this life */
	ck_assert_str_eq(rows(r), "+1 A lock ok @7\n");
}
END_TEST

/* An entry being written while it is read is counted as torn, never
 * shown as a mix of two operations; the others still are. */
START_TEST(test_history_entry_torn_while_read_is_counted_not_shown)
{
	uint32_t r = new_mutex(8);
	got(&a, r, MS_OP_LOCK, 1, 0);
	let_go(&a, r, 2);
	got(&b, r, MS_OP_LOCK, 3, 0);
	let_go(&b, r, 4);
	/* a writer of position 1 stopped after clearing the stamp */
	__atomic_store_n(&ms_history_at(r, 1)->stamp, 0, __ATOMIC_RELAXED);
	ck_assert_str_eq(rows(r), "+1 A lock ok @1\n+3 B lock ok @3\n+4 B unlock ok @4\n");
	ck_assert_uint_eq(torn_read, 1);
	ck_assert_uint_eq(n_read, 3);
}
END_TEST

Suite *history_suite(void)
{
	Suite *s = suite_create("history");
	TCase *tc = tcase_create("columns");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_history_each_column_reads_back_oldest_first);
	tcase_add_test(tc, test_history_thread_column_names_each_new_owner);
	tcase_add_test(tc, test_history_failures_merge_in_before_the_holders_next_op);
	tcase_add_test(tc, test_history_failures_of_one_hold_listed_as_made);
	suite_add_tcase(s, tc);

	tc = tcase_create("wrap");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_history_main_ring_wraps_to_its_newest_entries);
	tcase_add_test(tc, test_history_both_rings_wrap_and_the_newest_sixteen_are_listed);
	suite_add_tcase(s, tc);

	tc = tcase_create("lives");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_history_reads_have_a_ring_merged_by_order);
	tcase_add_test(tc, test_history_read_held_across_a_reset_keeps_the_new_reads);
	tcase_add_test(tc, test_history_leaves_out_older_lives);
	tcase_add_test(tc, test_history_entry_torn_while_read_is_counted_not_shown);
	suite_add_tcase(s, tc);
	return s;
}
