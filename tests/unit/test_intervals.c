/* test_intervals.c - interval profiles (lib/report/interval_lines.c): what
 * each interval shows of a life adds up, over the series, to what the
 * whole run shows, whichever interval reads a life in the middle of its
 * first lock and whichever sees it end.
 *
 * The lives are made and ended through the table as the lock path does;
 * each test runs in its own forked child with a table of 64 records. */
#include "suites.h"

#include "analysis/blame.h"
#include "analysis/ended.h"
#include "base/clock.h"
#include "base/options.h"
#include "core/table.h"
#include "core/thread.h"
#include "record/record.h"
#include "report/interval_lines.h"
#include "stacks/depot.h"

#include <stdint.h>
#include <string.h>

#define KEY(n) ((uintptr_t)0x55d4c0a01230u + (uintptr_t)(n) * 48)
#define CALLER_A ((uintptr_t)0x401000)

static struct ms_tstate a_ts;
static struct ms_thread a;

static void setup(void)
{
	ms_ended_init();
	ck_assert_int_eq(ms_table_init(64, 16), 64);
	ck_assert_int_eq(ms_depot_init(1 << 20), 0);
	ms_clock_init();
	ms_opt.top = 10;
	memset(&a_ts, 0, sizeof a_ts);
	a = (struct ms_thread){ .ok = 1, .tid = 1234, .tid_held = 1234 | MS_HELD, .ts = &a_ts };
}

/* The acquisitions the next interval shows. */
static uint64_t interval_acquisitions(void)
{
	struct ms_iv iv;
	ck_assert_int_eq(ms_iv_take(&iv), 0);
	uint64_t n = iv.acquisitions;
	ms_iv_free(&iv);
	return n;
}

/* The sum of the site lines' acquisitions: the ended lives'. */
static uint64_t ended_acquisitions(void)
{
	uint64_t n = 0;
	for (uint32_t i = 0; i < ms_table.nsites; i++) {
		struct ms_site s;
		ms_table_site(i, &s);
		n += s.acquisitions;
	}
	return n;
}

/* An interval read while a life's first lock is under way -- counted,
 * where it was first locked not yet written -- and the life ends before
 * the next: it shows its one acquisition once over the series, as the
 * whole run does (it was shown twice: the base went to no site). */
START_TEST(test_intervals_life_read_in_its_first_lock_counts_once)
{
	uint64_t clock = 0;
	uint32_t r = ms_table_add(KEY(1), 1, &clock);
	ck_assert_uint_ne(r, MS_REC_UNTRACKED);
	struct ms_record *rec = ms_rec(r);
	/* the first lock as far as ms_acquired has come before
	 * ms_first_acquired */
	rec->acquisitions = 1;
	rec->owner = a.tid_held;
	uint64_t shown = interval_acquisitions();

	ms_first_acquired(r, CALLER_A);
	ms_released(&a, r, NULL, CALLER_A, MS_OP_UNLOCK);
	ms_table_remove(KEY(1), 0);
	ck_assert_uint_eq(ended_acquisitions(), 1);
	shown += interval_acquisitions();
	ck_assert_uint_eq(shown, 1);
	ck_assert_uint_eq(interval_acquisitions(), 0);
}
END_TEST

/* The same life read again once its first lock is done, then ended: each
 * acquisition in the interval it happened in. */
START_TEST(test_intervals_live_then_ended_life_counts_each_acquisition_once)
{
	uint64_t clock = 0;
	uint32_t r = ms_table_add(KEY(2), 1, &clock);
	for (int i = 0; i < 3; i++) {
		ms_acquired(&a, r, NULL, CALLER_A, MS_OP_LOCK, 0, 0, 0);
		ms_released(&a, r, NULL, CALLER_A, MS_OP_UNLOCK);
	}
	ck_assert_uint_eq(interval_acquisitions(), 3);
	ms_acquired(&a, r, NULL, CALLER_A, MS_OP_LOCK, 0, 0, 0);
	ms_released(&a, r, NULL, CALLER_A, MS_OP_UNLOCK);
	ms_table_remove(KEY(2), 0);
	ck_assert_uint_eq(ended_acquisitions(), 4);
	ck_assert_uint_eq(interval_acquisitions(), 1);
	ck_assert_uint_eq(interval_acquisitions(), 0);
}
END_TEST

/* A life locked and unlocked once, its cold part made (as a wait makes
 * it), numbers left for the test to set. */
static struct ms_cold *one_life_with_cold(unsigned n)
{
	uint64_t clock = 0;
	uint32_t r = ms_table_add(KEY(n), 1, &clock);
	ms_acquired(&a, r, NULL, CALLER_A, MS_OP_LOCK, 0, 0, 0);
	ms_released(&a, r, NULL, CALLER_A, MS_OP_UNLOCK);
	struct ms_cold *c = ms_cold(r);
	ms_rec(r)->flags |= MS_F_COLD;
	return c;
}

/* The interval of a life that waited once: its wait max is the bucket's
 * bound, but never more than the wait itself, which is all the total. */
START_TEST(test_intervals_one_wait_max_is_at_most_the_total)
{
	struct ms_cold *c = one_life_with_cold(3);
	c->contended = 1;
	c->wait_total = 100000; /* ticks: bucket [65536, 131072) */
	c->wait_max = 100000;
	c->hist[17] = 1;
	struct ms_iv iv;
	ck_assert_int_eq(ms_iv_take(&iv), 0);
	ck_assert_uint_eq(iv.n, 1);
	ck_assert_uint_eq(iv.lines[0].l.contended, 1);
	ck_assert_uint_gt(iv.lines[0].l.wait_total, 0);
	ck_assert_uint_eq(iv.lines[0].l.wait_max, iv.lines[0].l.wait_total);
	ms_iv_free(&iv);
}
END_TEST

/* An interval read while a waiter is between its bucket and its
 * contended count (ms_wait_end, then finish): the interval's count is its
 * histogram's, and the next interval, read when the count has caught up,
 * shows nothing more -- over the two, one contention, as the whole run. */
START_TEST(test_intervals_wait_read_between_bucket_and_count_counts_once)
{
	struct ms_cold *c = one_life_with_cold(4);
	c->hist[10] = 1; /* the wait's bucket, not yet its count */
	c->wait_total = 1000;
	struct ms_iv iv;
	ck_assert_int_eq(ms_iv_take(&iv), 0);
	ck_assert_uint_eq(iv.n, 1);
	ck_assert_uint_eq(iv.lines[0].l.contended, 1);
	ck_assert_uint_eq(iv.lines[0].hist[10], 1);
	ck_assert_uint_eq(iv.contended, 1);
	ms_iv_free(&iv);
	c->contended = 1; /* caught up */
	ck_assert_int_eq(ms_iv_take(&iv), 0);
	ck_assert_uint_eq(iv.contended, 0);
	ms_iv_free(&iv);
	/* and the other way: a hold counted, its bucket not yet */
	c->holds = 1;
	ck_assert_int_eq(ms_iv_take(&iv), 0);
	ck_assert_uint_eq(iv.n, 0);
	ms_iv_free(&iv);
	c->hold_hist[5] = 1;
	ck_assert_int_eq(ms_iv_take(&iv), 0);
	ck_assert_uint_eq(iv.n, 1);
	ck_assert_uint_eq(iv.lines[0].l.holds, 1);
	ck_assert_uint_eq(iv.lines[0].hold_hist[5], 1);
	ms_iv_free(&iv);
}
END_TEST

/* A waiter charges its stack after its unlock, so a wait counted in one
 * interval can have its stack come after that interval was read.  The
 * next interval shows the stack -- on the life's line while it lives, on
 * its site's once it ended -- though the line did nothing else: over the
 * series, each stack once, as the whole run.  (It was taken and dropped:
 * a line that did nothing was in no interval with it.) */
START_TEST(test_intervals_stack_charged_after_its_wait_was_shown_comes_next)
{
	struct ms_cold *c = one_life_with_cold(5);
	uint32_t r = ms_table_find(KEY(5));
	uint64_t birth = ms_rec(r)->birth;
	c->contended = 1;
	c->hist[10] = 1;
	c->wait_total = 1000;
	struct ms_iv iv;
	ck_assert_int_eq(ms_iv_take(&iv), 0);
	ck_assert_uint_eq(iv.n, 1);
	ck_assert_uint_eq(iv.contended, 1);
	ck_assert_int_eq(iv.lines[0].all_stacks[MS_BLAME_WAIT], 0);
	ms_iv_free(&iv);

	ck_assert_int_eq(ms_blame_add(r, birth, MS_BLAME_WAIT, 7, 1000), 0);
	ck_assert_int_eq(ms_iv_take(&iv), 0);
	ck_assert_uint_eq(iv.n, 1);
	ck_assert_uint_eq(iv.locks, 0); /* it did nothing in this one */
	ck_assert_uint_eq(iv.contended, 0);
	ck_assert_uint_eq(iv.lines[0].l.r, r);
	ck_assert_int_eq(iv.lines[0].all_stacks[MS_BLAME_WAIT], 1);
	ck_assert_uint_eq(iv.lines[0].stacks[MS_BLAME_WAIT][0].stack, 7);
	ck_assert_uint_eq(iv.lines[0].stacks[MS_BLAME_WAIT][0].count, 1);
	ms_iv_free(&iv);
	ck_assert_int_eq(ms_iv_take(&iv), 0);
	ck_assert_uint_eq(iv.n, 0);
	ms_iv_free(&iv);

	/* a second wait, shown; its stack comes, and the life ends */
	c->contended = 2;
	c->hist[10] = 2;
	c->wait_total = 2000;
	ck_assert_int_eq(ms_iv_take(&iv), 0);
	ck_assert_uint_eq(iv.contended, 1);
	ms_iv_free(&iv);
	ck_assert_int_eq(ms_blame_add(r, birth, MS_BLAME_WAIT, 7, 1000), 0);
	ms_table_remove(KEY(5), 0);
	ck_assert_int_eq(ms_iv_take(&iv), 0);
	ck_assert_uint_eq(iv.n, 1);
	ck_assert_int_eq(iv.lines[0].l.ended, 1);
	ck_assert_uint_eq(iv.contended, 0);
	ck_assert_int_eq(iv.lines[0].all_stacks[MS_BLAME_WAIT], 1);
	ck_assert_uint_eq(iv.lines[0].stacks[MS_BLAME_WAIT][0].count, 1);
	ms_iv_free(&iv);
	ck_assert_int_eq(ms_iv_take(&iv), 0);
	ck_assert_uint_eq(iv.n, 0);
	ms_iv_free(&iv);
}
END_TEST

Suite *intervals_suite(void)
{
	Suite *s = suite_create("intervals");
	TCase *tc = tcase_create("lives");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_intervals_life_read_in_its_first_lock_counts_once);
	tcase_add_test(tc, test_intervals_live_then_ended_life_counts_each_acquisition_once);
	tcase_add_test(tc, test_intervals_one_wait_max_is_at_most_the_total);
	tcase_add_test(tc, test_intervals_wait_read_between_bucket_and_count_counts_once);
	tcase_add_test(tc, test_intervals_stack_charged_after_its_wait_was_shown_comes_next);
	suite_add_tcase(s, tc);
	return s;
}
