/* test_ring.c - each mutex's recent-operation history (lib/core/ring.h, ring.c
 * and ms_log_held in record.h): what an entry holds, which entries survive
 * the ring wrapping around, the Lamport order of entries, and that a read
 * racing a write is reported as torn instead of mixing two operations.
 *
 * Tests run in fork mode; the fixture maps a table of 1024 records with a
 * history of 16 entries each. */
#include "suites.h"

#include "record/record.h"
#include "core/ring.h"
#include "core/table.h"
#include "core/thread.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define HISTORY 16

static void setup(void)
{
	ck_assert_int_eq(ms_table_init(1024, HISTORY), 1024);
	ck_assert_uint_eq(ms_table.history_len, HISTORY);
}

static uint32_t new_record(uintptr_t key)
{
	uint64_t clock = 0;
	uint32_t r = ms_table_add(key, 1, &clock);
	ck_assert_uint_ne(r, MS_REC_UNTRACKED);
	ck_assert_uint_ne(r, MS_REC_NONE);
	return r;
}

#define CALLER_BASE ((uintptr_t)0x401000)

/* ---- one entry ---------------------------------------------------------- */

START_TEST(test_ring_entry_fields_round_trip)
{
	struct ms_op e;
	uint64_t e_ticks = 0;
	struct ms_op_view v;
	memset(&e, 0, sizeof e);
	ms_op_write(&e, &e_ticks, 123456789, 0xabcdef, (uintptr_t)0x7fffffffffffull,
		    MS_OP_COND_REACQUIRE, 1, EOWNERDEAD, 987654321);
	ms_op_read(&e, &e_ticks, &v);
	ck_assert_int_eq(v.state, 1);
	ck_assert_uint_eq(v.order, 123456789);
	ck_assert_uint_eq(v.tid, 0xabcdef);
	ck_assert_uint_eq(v.caller, 0x7fffffffffffull);
	ck_assert_uint_eq(v.op, MS_OP_COND_REACQUIRE);
	ck_assert_int_eq(v.waited, 1);
	ck_assert_int_eq(v.err, EOWNERDEAD);
	ck_assert_uint_eq(v.ticks, 987654321);

	for (unsigned op = MS_OP_INIT; op < MS_OP_COUNT; op++) {
		ms_op_write(&e, &e_ticks, 7, 1, CALLER_BASE + op, op, 0, 0, 0);
		ms_op_read(&e, &e_ticks, &v);
		ck_assert_int_eq(v.state, 1);
		ck_assert_uint_eq(v.op, op);
		ck_assert_uint_eq(v.caller, CALLER_BASE + op);
		ck_assert_int_eq(v.waited, 0);
		ck_assert_int_eq(v.err, 0);
		ck_assert_uint_eq(v.ticks, 0);
	}
}
END_TEST

START_TEST(test_ring_untimed_entry_over_timed_one_reads_no_time)
{
	struct ms_op e;
	uint64_t e_ticks = 0;
	struct ms_op_view v;
	memset(&e, 0, sizeof e);
	ms_op_write(&e, &e_ticks, 1, 5, CALLER_BASE, MS_OP_LOCK, 1, 0, 4242);
	ms_op_write(&e, &e_ticks, 2, 5, CALLER_BASE, MS_OP_UNLOCK, 0, 0, 0);
	ms_op_read(&e, &e_ticks, &v);
	ck_assert_int_eq(v.state, 1);
	ck_assert_uint_eq(v.order, 2);
	ck_assert_uint_eq(v.op, MS_OP_UNLOCK);
	ck_assert_int_eq(v.waited, 0);
	ck_assert_uint_eq(v.ticks, 0);
}
END_TEST

START_TEST(test_ring_never_written_entry_reads_empty)
{
	struct ms_op e;
	uint64_t e_ticks = 0;
	struct ms_op_view v;
	memset(&e, 0, sizeof e);
	ms_op_read(&e, &e_ticks, &v);
	ck_assert_int_eq(v.state, 0);

	uint32_t r = new_record(0x10000);
	for (uint32_t pos = 0; pos < HISTORY; pos++) {
		ms_op_read(ms_history_at(r, pos), ms_history_ticks(ms_history_at(r, pos)), &v);
		ck_assert_int_eq(v.state, 0);
	}
}
END_TEST

START_TEST(test_ring_entry_with_zero_stamp_reads_torn)
{
	struct ms_op e;
	uint64_t e_ticks = 0;
	struct ms_op_view v;
	memset(&e, 0, sizeof e);
	ms_op_write(&e, &e_ticks, 9, 77, CALLER_BASE, MS_OP_LOCK, 0, 0, 0);
	/* a writer stopped between clearing the stamp and setting it again */
	__atomic_store_n(&e.stamp, 0, __ATOMIC_RELAXED);
	ms_op_read(&e, &e_ticks, &v);
	ck_assert_int_eq(v.state, -1);
	/* the writer finishes: valid again */
	ms_op_write(&e, &e_ticks, 10, 77, CALLER_BASE + 1, MS_OP_UNLOCK, 0, 0, 0);
	ms_op_read(&e, &e_ticks, &v);
	ck_assert_int_eq(v.state, 1);
	ck_assert_uint_eq(v.order, 10);
	ck_assert_uint_eq(v.caller, CALLER_BASE + 1);
}
END_TEST

/* A writer rewrites one entry as fast as it can while a reader reads it a
 * million times; every entry the writer writes has fields derived from its
 * order, so any read that mixes two writes but calls itself valid is
 * caught.  The two overlap by construction, not by timing: the reader
 * counts its reads from the writer's first write on, and the writer goes on
 * until the reader has done them all.
 * The entry straddles two cache lines (its stamp in one, its other word in
 * the next), and its time is in a third word elsewhere, as in the real
 * history, so the reader can see the parts change apart. */
#define HAMMER_READS 1000000u

static union {
	char bytes[128];
	uint64_t align;
} hammer_lines __attribute__((aligned(64)));
#define hammer_entry (*(struct ms_op *)(hammer_lines.bytes + 56))
#define hammer_ticks (*(uint64_t *)(hammer_lines.bytes + 8))

static pthread_barrier_t hammer_start;
static int hammer_stop;
static uint64_t hammer_last; /* the writer's last order */

static void hammer_fields(uint64_t order, uint32_t *tid, uintptr_t *caller,
			  unsigned *op, int *waited, int *err, uint64_t *ticks)
{
	*tid = (uint32_t)(order % 1000);
	*caller = (uintptr_t)(order * 3);
	*op = (unsigned)(order % MS_OP_COUNT);
	*waited = (int)(order & 1);
	*err = (int)(order % 200);
	*ticks = order * 5 + 1;
}

static void *hammer_writer(void *arg)
{
	uint64_t o = 0;
	(void)arg;
	pthread_barrier_wait(&hammer_start);
	/* at least a thousand writes, however late this thread gets to run */
	while (o < 1000 || !__atomic_load_n(&hammer_stop, __ATOMIC_ACQUIRE)) {
		uint32_t tid;
		uintptr_t caller;
		unsigned op;
		int waited, err;
		uint64_t ticks;
		o++;
		hammer_fields(o, &tid, &caller, &op, &waited, &err, &ticks);
		ms_op_write(&hammer_entry, &hammer_ticks, o, tid, caller, op, waited, err, ticks);
	}
	hammer_last = o;
	return NULL;
}

static const char *hammer_check(const struct ms_op_view *v)
{
	uint32_t tid;
	uintptr_t caller;
	unsigned op;
	int waited, err;
	uint64_t ticks;
	if (v->order < 1)
		return "order";
	hammer_fields(v->order, &tid, &caller, &op, &waited, &err, &ticks);
	if (v->tid != tid)
		return "tid";
	if (v->caller != caller)
		return "caller";
	if (v->op != op)
		return "op";
	if (v->waited != waited)
		return "waited";
	if (v->err != err)
		return "err";
	if (v->ticks != ticks)
		return "ticks";
	return NULL;
}

START_TEST(test_ring_read_racing_writer_is_consistent_or_torn)
{
	pthread_t w;
	struct ms_op_view v;
	uint64_t valid = 0, torn = 0, empty = 0, last = 0;
	memset(&hammer_lines, 0, sizeof hammer_lines);
	pthread_barrier_init(&hammer_start, NULL, 2);
	ck_assert_int_eq(pthread_create(&w, NULL, hammer_writer, NULL), 0);
	pthread_barrier_wait(&hammer_start);
	/* count reads from the first write on */
	for (unsigned i = 0; i < HAMMER_READS; i += valid + torn > 0) {
		ms_op_read(&hammer_entry, &hammer_ticks, &v);
		if (v.state == 1) {
			const char *bad = hammer_check(&v);
			if (bad)
				ck_abort_msg("valid read of order %lu has a wrong %s",
					     (unsigned long)v.order, bad);
			if (v.order < last)
				ck_abort_msg("order went back from %lu to %lu",
					     (unsigned long)last, (unsigned long)v.order);
			last = v.order;
			valid++;
		} else if (v.state == -1)
			torn++;
		else if (valid + torn > 0)
			ck_abort_msg("a written entry read as empty");
		else
			empty++;
	}
	__atomic_store_n(&hammer_stop, 1, __ATOMIC_RELEASE);
	pthread_join(w, NULL);
	pthread_barrier_destroy(&hammer_start);
	/* once the writer is done, the entry is its last write, whole */
	ms_op_read(&hammer_entry, &hammer_ticks, &v);
	ck_assert_int_eq(v.state, 1);
	ck_assert_uint_eq(v.order, hammer_last);
	ck_assert_ptr_null(hammer_check(&v));
	if (getenv("MS_TEST_VERBOSE"))
		fprintf(stderr, "ring race: %lu writes; %lu valid, %lu torn, "
			"%lu empty reads\n", (unsigned long)hammer_last,
			(unsigned long)valid, (unsigned long)torn,
			(unsigned long)empty);
}
END_TEST

/* ---- a record's ring ---------------------------------------------------- */

START_TEST(test_ring_wraparound_keeps_exactly_last_16_entries)
{
	enum { WRITES = 100 };
	struct ms_thread t = { .ok = 1, .tid = 1234 };
	uint32_t r = new_record(0x20000);
	struct ms_record *rec = ms_rec(r);
	uint64_t birth = rec->birth;

	for (unsigned k = 0; k < WRITES; k++)
		ms_log_held(&t, r, CALLER_BASE + k,
			    k % 2 ? MS_OP_UNLOCK : MS_OP_LOCK, k % 5 == 0,
			    k % 7 == 0 ? EBUSY : 0, k % 3 == 1 ? 1000 + k : 0);
	ck_assert_uint_eq(rec->ops, WRITES);
	/* the newest entry gives the mutex's order; the hot path writes
	 * no other word for it */
	ck_assert_uint_eq(ms_mutex_order(r, rec), birth + WRITES);
	ck_assert_uint_eq(rec->seq, birth);
	ck_assert_uint_eq(t.clock, birth + WRITES);

	/* Positions WRITES-16 .. WRITES-1 hold writes #84 .. #99, in order. */
	uint64_t prev = 0;
	for (uint32_t pos = WRITES - HISTORY; pos < WRITES; pos++) {
		struct ms_op_view v;
		ms_op_read(ms_history_at(r, pos), ms_history_ticks(ms_history_at(r, pos)), &v);
		ck_assert_int_eq(v.state, 1);
		ck_assert_uint_eq(v.order, birth + 1 + pos);
		ck_assert_uint_gt(v.order, prev);
		prev = v.order;
		ck_assert_uint_eq(v.tid, 1234);
		ck_assert_uint_eq(v.caller, CALLER_BASE + pos);
		ck_assert_uint_eq(v.op, pos % 2 ? MS_OP_UNLOCK : MS_OP_LOCK);
		ck_assert_int_eq(v.waited, pos % 5 == 0);
		ck_assert_int_eq(v.err, pos % 7 == 0 ? EBUSY : 0);
		ck_assert_uint_eq(v.ticks, pos % 3 == 1 ? 1000 + pos : 0);
	}
	/* the oldest surviving entry is write #84; #83 is gone */
	struct ms_op_view oldest;
	ms_op_read(ms_history_at(r, WRITES - HISTORY), ms_history_ticks(ms_history_at(r, WRITES - HISTORY)), &oldest);
	ck_assert_uint_eq(oldest.caller, CALLER_BASE + WRITES - HISTORY);
	ck_assert_ptr_eq(ms_history_at(r, WRITES - HISTORY - 1),
			 ms_history_at(r, WRITES - 1));
	/* every slot of the ring holds one of the last 16 writes */
	for (uint32_t pos = 0; pos < HISTORY; pos++) {
		struct ms_op_view v;
		ms_op_read(ms_history_at(r, pos), ms_history_ticks(ms_history_at(r, pos)), &v);
		ck_assert_uint_ge(v.caller, CALLER_BASE + WRITES - HISTORY);
		ck_assert_uint_lt(v.caller, CALLER_BASE + WRITES);
	}
}
END_TEST

START_TEST(test_ring_records_histories_do_not_overlap)
{
	struct ms_thread t = { .ok = 1, .tid = 1 };
	uint32_t recs[3];
	recs[0] = new_record(0x30000);
	recs[1] = new_record(0x30008); /* neighbour: next record, next slot */
	recs[2] = ms_table.capacity;   /* the last record of the table */
	ck_assert_uint_ne(recs[0], recs[1]);
	for (unsigned k = 0; k < 3 * HISTORY; k++)
		for (unsigned i = 0; i < 3; i++)
			ms_log_held(&t, recs[i], CALLER_BASE + 0x1000 * i + k,
				    MS_OP_LOCK, 0, 0, 0);
	for (unsigned i = 0; i < 3; i++)
		for (uint32_t pos = 2 * HISTORY; pos < 3 * HISTORY; pos++) {
			struct ms_op_view v;
			ms_op_read(ms_history_at(recs[i], pos), ms_history_ticks(ms_history_at(recs[i], pos)), &v);
			ck_assert_int_eq(v.state, 1);
			ck_assert_uint_eq(v.caller, CALLER_BASE + 0x1000 * i + pos);
		}
}
END_TEST

START_TEST(test_ring_orders_follow_mutex_across_threads)
{
	struct ms_thread ahead = { .ok = 1, .tid = 10, .clock = 1000 };
	struct ms_thread behind = { .ok = 1, .tid = 20, .clock = 5 };
	uint32_t r = new_record(0x40000);
	struct ms_op_view a, b, c;

	ms_log_held(&ahead, r, CALLER_BASE, MS_OP_LOCK, 0, 0, 0);
	ms_log_held(&behind, r, CALLER_BASE, MS_OP_LOCK, 0, 0, 0);
	ms_log_held(&ahead, r, CALLER_BASE, MS_OP_LOCK, 0, 0, 0);
	ms_op_read(ms_history_at(r, 0), ms_history_ticks(ms_history_at(r, 0)), &a);
	ms_op_read(ms_history_at(r, 1), ms_history_ticks(ms_history_at(r, 1)), &b);
	ms_op_read(ms_history_at(r, 2), ms_history_ticks(ms_history_at(r, 2)), &c);
	/* the thread behind catches up with the mutex, not with its own clock */
	ck_assert_uint_eq(a.order, 1001);
	ck_assert_uint_eq(b.order, 1002);
	ck_assert_uint_eq(c.order, 1003);
	ck_assert_uint_eq(behind.clock, 1002);
	ck_assert_uint_eq(a.tid, 10);
	ck_assert_uint_eq(b.tid, 20);
}
END_TEST

/* The history position is 32 bits and wraps: the entry after position
 * 2^32-1 still follows the mutex's order (ms_mutex_order reads the newest
 * entry at position ops-1 also when ops has come back to 0). */
START_TEST(test_ring_order_follows_mutex_across_position_wrap)
{
	struct ms_thread ahead = { .ok = 1, .tid = 10, .clock = 1000 };
	struct ms_thread behind = { .ok = 1, .tid = 20, .clock = 5 };
	uint32_t r = new_record(0x48000);
	struct ms_record *rec = ms_rec(r);
	struct ms_op_view v;

	rec->ops = UINT32_MAX - 1; /* as after 2^32-2 operations, */
	rec->acquisitions = 1ull << 31; /* half of them locks */
	ms_log_held(&ahead, r, CALLER_BASE, MS_OP_LOCK, 0, 0, 0);
	ms_log_held(&ahead, r, CALLER_BASE, MS_OP_UNLOCK, 0, 0, 0);
	ck_assert_uint_eq(rec->ops, 0);
	ck_assert_uint_eq(ms_mutex_order(r, rec), 1002);
	ms_log_held(&behind, r, CALLER_BASE, MS_OP_LOCK, 0, 0, 0);
	ms_op_read(ms_history_at(r, 0), ms_history_ticks(ms_history_at(r, 0)), &v);
	ck_assert_uint_eq(v.order, 1003);
	ck_assert_uint_eq(behind.clock, 1003);
}
END_TEST

/* A new life's first operations read no history position they have not
 * written: the entries before position 0 belong to an older life or were
 * never touched, and where the kernel maps no shared zero page a read of
 * untouched memory makes it resident (64 bytes a mutex, a page fault per
 * 64 mutexes).  Positions 4-15 of these records are made unreadable: a
 * read there is a SIGSEGV, which fails the test. */
static void forbid_later_groups(uint32_t r)
{
	for (uint32_t pos = MS_HISTORY_GROUP; pos < HISTORY; pos += MS_HISTORY_GROUP) {
		uintptr_t page = (uintptr_t)ms_history_at(r, pos) & ~(uintptr_t)4095;
		ck_assert_int_eq(mprotect((void *)page, 4096, PROT_NONE), 0);
	}
}

START_TEST(test_ring_new_life_reads_only_positions_it_wrote)
{
	struct ms_thread t = { .ok = 1, .tid = 10, .clock = 100 };
	struct ms_thread other = { .ok = 1, .tid = 20, .clock = 5 };
	/* records 64 apart: the pages that hold their positions 4-15 hold
	 * only those of records no operation below touches */
	uint32_t r = 0, r_static = 0;
	for (uintptr_t key = 0x60000; !r_static; key += 8) {
		uint32_t n = new_record(key);
		if (n % 64 == 0 && !r)
			r = n;
		else if (n % 64 == 0)
			r_static = n;
	}
	forbid_later_groups(r);
	forbid_later_groups(r_static);

	/* init, a failed trylock by another thread, lock, unlock */
	ms_log_held(&t, r, CALLER_BASE, MS_OP_INIT, 0, 0, 0);
	ms_log_other(&other, r, CALLER_BASE, MS_OP_TRYLOCK, EBUSY);
	ms_rec(r)->acquisitions++;
	ms_log_held(&t, r, CALLER_BASE, MS_OP_LOCK, 0, 0, 0);
	ms_log_holder(&t, r, CALLER_BASE, MS_OP_UNLOCK);
	ck_assert_uint_eq(ms_mutex_order(r, ms_rec(r)), t.clock);
	ck_assert_uint_gt(other.clock, 100);

	/* a mutex first seen by its lock: the acquisition is counted before
	 * its entry is ordered */
	struct ms_thread u = { .ok = 1, .tid = 30, .clock = 500 };
	ck_assert_uint_eq(ms_mutex_order_racing(r_static, ms_rec(r_static)),
			  ms_rec(r_static)->seq);
	ms_rec(r_static)->acquisitions++;
	ms_log_held(&u, r_static, CALLER_BASE, MS_OP_LOCK, 0, 0, 0);
	ck_assert_uint_eq(u.clock, 501);
	ck_assert_uint_eq(ms_mutex_order(r_static, ms_rec(r_static)), 501);
}
END_TEST

/* A thread that does not hold the mutex (a failed trylock) reads its order
 * while the holder may be writing the newest entry: the position counts it
 * already, and its stamp is 0 or still the entry a ring's length older.
 * The failure still comes after every entry the holder had finished. */
START_TEST(test_ring_failure_during_holders_write_follows_finished_entries)
{
	struct ms_thread holder = { .ok = 1, .tid = 10, .clock = 1000 };
	uint32_t r = new_record(0x50000);
	struct ms_record *rec = ms_rec(r);

	for (unsigned k = 0; k < HISTORY + 4; k++)
		ms_log_held(&holder, r, CALLER_BASE, k % 2 ? MS_OP_UNLOCK : MS_OP_LOCK,
			    0, 0, 0);
	uint64_t finished = holder.clock;

	/* the holder's next write has taken its position, nothing more: the
	 * slot still has the entry HISTORY positions older */
	uint32_t pos = rec->ops++;
	struct ms_thread other = { .ok = 1, .tid = 20, .clock = 5 };
	ms_log_other(&other, r, CALLER_BASE, MS_OP_TRYLOCK, EBUSY);
	ck_assert_uint_gt(other.clock, finished);

	/* ... and has zeroed the stamp */
	ms_history_at(r, pos)->stamp = 0;
	struct ms_thread third = { .ok = 1, .tid = 30, .clock = 5 };
	ms_log_other(&third, r, CALLER_BASE, MS_OP_TRYLOCK, EBUSY);
	ck_assert_uint_gt(third.clock, finished);
}
END_TEST

/* The lock path orders a retake of a mutex whose record names this
 * thread's tid as its last holder after the thread's own clock alone
 * (ms_order_retaking): a new thread that gets an ended thread's tid starts
 * with a clock past the ended one's, so its first retake of that thread's
 * mutex still comes after the ended thread's last operation on it. */
START_TEST(test_ring_new_thread_clock_starts_past_ended_threads)
{
	struct ms_thread ended = { .ok = 1, .tid = 30, .clock = 5 };
	uint32_t r = new_record(0x50000);
	for (int i = 0; i < 40; i++)
		ms_log_held(&ended, r, CALLER_BASE, MS_OP_LOCK, 0, 0, 0);
	ck_assert_uint_eq(ended.clock, 45);
	ms_thread_clock_floor(ended.clock);

	struct ms_thread same_tid = { 0 };
	ms_thread_register(&same_tid);
	ck_assert_uint_ge(same_tid.clock, 45);
	same_tid.tid = 30; /* as if the kernel gave it the same tid */
	ms_log_at(&same_tid, r, ms_order_retaking(&same_tid), CALLER_BASE,
		  MS_OP_LOCK, 0, 0, 0);
	struct ms_op_view v;
	ms_op_read(ms_history_at(r, 40), ms_history_ticks(ms_history_at(r, 40)), &v);
	ck_assert_uint_gt(v.order, 45);

	/* a smaller clock ending later does not lower the floor */
	struct ms_thread early = { .ok = 1, .tid = 31, .clock = 7 };
	ms_thread_clock_floor(early.clock);
	struct ms_thread next = { 0 };
	ms_thread_register(&next);
	ck_assert_uint_ge(next.clock, 45);
}
END_TEST

START_TEST(test_ring_op_names)
{
	ck_assert_str_eq(ms_op_name(MS_OP_LOCK), "lock");
	ck_assert_str_eq(ms_op_name(MS_OP_TRYLOCK), "trylock");
	ck_assert_str_eq(ms_op_name(MS_OP_UNLOCK), "unlock");
	ck_assert_str_eq(ms_op_name(MS_OP_DESTROY), "destroy");
	ck_assert_str_eq(ms_op_name(MS_OP_NONE), "?");
	ck_assert_str_eq(ms_op_name(MS_OP_COUNT), "?");
	for (unsigned op = MS_OP_INIT; op < MS_OP_COUNT; op++) {
		ck_assert_ptr_nonnull(ms_op_name(op));
		ck_assert_str_ne(ms_op_name(op), "?");
	}
}
END_TEST

Suite *ring_suite(void)
{
	Suite *s = suite_create("ring");
	TCase *tc = tcase_create("entry");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_ring_entry_fields_round_trip);
	tcase_add_test(tc, test_ring_untimed_entry_over_timed_one_reads_no_time);
	tcase_add_test(tc, test_ring_never_written_entry_reads_empty);
	tcase_add_test(tc, test_ring_entry_with_zero_stamp_reads_torn);
	tcase_add_test(tc, test_ring_op_names);
	suite_add_tcase(s, tc);

	tc = tcase_create("history");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_ring_wraparound_keeps_exactly_last_16_entries);
	tcase_add_test(tc, test_ring_records_histories_do_not_overlap);
	tcase_add_test(tc, test_ring_orders_follow_mutex_across_threads);
	tcase_add_test(tc, test_ring_order_follows_mutex_across_position_wrap);
	tcase_add_test(tc, test_ring_new_life_reads_only_positions_it_wrote);
	tcase_add_test(tc, test_ring_failure_during_holders_write_follows_finished_entries);
	tcase_add_test(tc, test_ring_new_thread_clock_starts_past_ended_threads);
	suite_add_tcase(s, tc);

	tc = tcase_create("race");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_ring_read_racing_writer_is_consistent_or_torn);
	suite_add_tcase(s, tc);
	return s;
}
