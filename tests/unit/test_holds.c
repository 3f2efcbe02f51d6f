/* test_holds.c - hold times (ms_hold_end, record.c, and the lock path's
 * ms_acquired / ms_released): each timed hold adds its length to the
 * mutex's total, counts once, raises the maximum and falls in its
 * histogram bucket; a hold through the lock path lasts from its lock to
 * its unlock; a life that ends leaves the same numbers in its site's
 * line; a hold that began before a reset is not counted.  (Which holds
 * are timed -- the first 4,096 acquisitions, then 1 in 16 -- is
 * test_table.c's.)
 *
 * Lengths are bracketed by clock reads around each call, so every bound
 * is exact whatever the machine's load.  Tests run in fork mode; the
 * fixture maps a table of 1024 records. */
#include "suites.h"

#include "base/clock.h"
#include "record/record.h"
#include "core/table.h"
#include "core/thread.h"
#include "core/thread_pool.h"
#include "stacks/depot.h"

#include <stdint.h>
#include <string.h>

#define KEY(n) ((uintptr_t)0x55d4c0a01230u + (uintptr_t)(n) * 48)
#define CALLER_A ((uintptr_t)0x401000)

static struct ms_tstate a_ts;
static struct ms_thread a;

static void setup(void)
{
	ck_assert_int_eq(ms_table_init(1024, 16), 1024);
	ck_assert_int_eq(ms_depot_init(1 << 20), 0); /* first-lock stacks */
	ms_clock_init();
	memset(&a_ts, 0, sizeof a_ts);
	a = (struct ms_thread){ .ok = 1, .tid = 1234, .tid_held = 1234 | MS_HELD, .ts = &a_ts };
}

/* A mutex that has made a thread wait: its holds are timed. */
static uint32_t timed_mutex(unsigned n)
{
	uint64_t clock = 0;
	uint32_t r = ms_table_add(KEY(n), 1, &clock);
	ck_assert_uint_ne(r, MS_REC_UNTRACKED);
	ms_rec(r)->flags |= MS_F_TIMED;
	return r;
}

/* record.c's bucket of a length: [2^(b-1), 2^b) */
static unsigned bucket(uint64_t ticks)
{
	unsigned b = ticks ? 64 - (unsigned)__builtin_clzll(ticks) : 0;
	return b < MS_HIST_BUCKETS ? b : MS_HIST_BUCKETS - 1;
}

/* A hold of r that began `len` ticks before now ends: its length is
 * between len and len + *slack, where *slack grows by the call's time. */
static void hold_ends(uint32_t r, uint64_t len, uint64_t *slack)
{
	uint64_t before = ms_ticks();
	ms_hold_end(r, before - len);
	*slack += ms_ticks() - before;
}

START_TEST(test_holds_sum_count_maximum_and_histogram)
{
	static const uint64_t lens[] = { 3000, 12000, 50000, 3000, 700000 };
	enum { N = sizeof lens / sizeof *lens };
	uint32_t r = timed_mutex(1);
	uint64_t sum = 0, slack = 0, most = 0;
	for (unsigned i = 0; i < N; i++) {
		uint64_t s0 = slack;
		hold_ends(r, lens[i], &slack);
		sum += lens[i];
		/* the longest a hold so far can have been (a preempted call
		 * makes an earlier short one longer than it meant) */
		if (lens[i] + slack - s0 > most)
			most = lens[i] + slack - s0;
		const struct ms_cold *c = ms_cold(r);
		ck_assert_uint_eq(c->holds, i + 1);
		ck_assert_uint_ge(c->hold_total, sum);
		ck_assert_uint_le(c->hold_total, sum + slack);
		/* the newest is the longest meant so far, or the maximum stays */
		if (i == 2 || i == 4)
			ck_assert_uint_ge(c->hold_max, lens[i]);
		ck_assert_uint_le(c->hold_max, most);
	}
	/* each in its bucket, or the next if the call's time carried it over */
	const struct ms_cold *c = ms_cold(r);
	uint32_t counted = 0;
	for (unsigned b = 0; b < MS_HIST_BUCKETS; b++)
		counted += c->hold_hist[b];
	ck_assert_uint_eq(counted, N);
	for (unsigned i = 0; i < N; i++)
		ck_assert_uint_gt(c->hold_hist[bucket(lens[i])] +
					  c->hold_hist[bucket(lens[i] + slack)],
				  0);
	/* no waits: those are counted apart */
	ck_assert_uint_eq(c->wait_total, 0);
	ck_assert_uint_eq(c->contended, 0);
}
END_TEST

/* Through the lock path: from inside the lock to inside the unlock, so at
 * least the time between them and at most from before the lock to after
 * the unlock.  A mutex that never made a thread wait times nothing. */
START_TEST(test_holds_through_the_lock_path_last_from_lock_to_unlock)
{
	uint64_t clock = 0;
	uint32_t plain = ms_table_add(KEY(2), 1, &clock);
	ms_acquired(&a, plain, NULL, CALLER_A, MS_OP_LOCK, 0, 0, 0);
	ms_released(&a, plain, NULL, CALLER_A, MS_OP_UNLOCK);
	ck_assert_uint_eq(ms_cold(plain)->holds, 0);
	ck_assert_uint_eq(ms_cold(plain)->hold_total, 0);

	uint32_t r = timed_mutex(3);
	uint64_t inner = 0, outer = 0, longest_outer = 0;
	for (unsigned i = 1; i <= 3; i++) {
		uint64_t t0 = ms_ticks();
		ms_acquired(&a, r, NULL, CALLER_A, MS_OP_LOCK, 0, 0, 0);
		uint64_t t1 = ms_ticks();
		while (ms_ticks() - t1 < 100000u * i) /* held a while */
			;
		uint64_t t2 = ms_ticks();
		ms_released(&a, r, NULL, CALLER_A, MS_OP_UNLOCK);
		uint64_t t3 = ms_ticks();
		inner += t2 - t1;
		outer += t3 - t0;
		if (t3 - t0 > longest_outer)
			longest_outer = t3 - t0;
	}
	const struct ms_cold *c = ms_cold(r);
	ck_assert_uint_eq(c->holds, 3);
	ck_assert_uint_ge(c->hold_total, inner);
	ck_assert_uint_le(c->hold_total, outer);
	ck_assert_uint_ge(c->hold_max, 300000);
	ck_assert_uint_le(c->hold_max, longest_outer);
	ck_assert_uint_eq(ms_rec(r)->flags & MS_F_HOLD_TIMED, 0);
}
END_TEST

/* A destroyed mutex's hold numbers go to its first-lock site's line, and
 * a second life at that site adds to them. */
static const struct ms_site *site_line(uintptr_t site)
{
	static struct ms_site view;
	for (uint32_t i = 0; i < ms_table.nsites; i++)
		if (ms_table.sites[i].site == site) {
			ms_table_site(i, &view);
			return &view;
		}
	return NULL;
}

START_TEST(test_holds_of_an_ended_life_go_to_its_site_line)
{
	uint64_t slack = 0, total[2], max[2];
	uint32_t hist[MS_HIST_BUCKETS] = { 0 };
	for (unsigned life = 0; life < 2; life++) {
		uint32_t r = timed_mutex(4 + life);
		ms_acquired(&a, r, NULL, CALLER_A, MS_OP_LOCK, 0, 0, 0); /* its first lock */
		ms_released(&a, r, NULL, CALLER_A, MS_OP_UNLOCK);
		hold_ends(r, 20000 << life, &slack);
		hold_ends(r, 5000, &slack);
		const struct ms_cold *c = ms_cold(r);
		ck_assert_uint_eq(c->holds, 3);
		total[life] = c->hold_total;
		max[life] = c->hold_max;
		for (unsigned b = 0; b < MS_HIST_BUCKETS; b++)
			hist[b] += c->hold_hist[b];
		ms_table_remove(KEY(4 + life), 0);
		const struct ms_site *s = site_line(CALLER_A);
		ck_assert_ptr_nonnull(s);
		ck_assert_uint_eq(s->mutexes, life + 1);
		ck_assert_uint_eq(s->holds, 3 * (life + 1));
		uint64_t want_total = life ? total[0] + total[1] : total[0];
		uint64_t want_max = life && max[1] > max[0] ? max[1] : max[0];
		ck_assert_uint_eq(s->hold_total, want_total);
		ck_assert_uint_eq(s->hold_max, want_max);
		ck_assert_uint_eq(s->timed_mutexes, life + 1);
		for (unsigned b = 0; b < MS_HIST_BUCKETS; b++)
			ck_assert_uint_eq(s->hold_hist[b], hist[b]);
	}
	ck_assert_uint_ge(max[1], 40000);
}
END_TEST

/* mutexstat_reset zeroes the numbers; a hold under way then ends: it
 * began before the reset and is not counted; the next one is. */
START_TEST(test_holds_begun_before_a_reset_are_not_counted)
{
	uint32_t r = timed_mutex(6);
	ms_acquired(&a, r, NULL, CALLER_A, MS_OP_LOCK, 0, 0, 0);
	ck_assert_uint_ne(a_ts.held[0].since, 0);
	ms_table_reset();
	ms_released(&a, r, NULL, CALLER_A, MS_OP_UNLOCK);
	ck_assert_uint_eq(ms_cold(r)->holds, 0);
	ck_assert_uint_eq(ms_cold(r)->hold_total, 0);
	ck_assert_uint_eq(ms_rec(r)->flags & MS_F_HOLD_TIMED, 0);
	uint64_t slack = 0;
	hold_ends(r, 8000, &slack);
	ck_assert_uint_eq(ms_cold(r)->holds, 1);
	ck_assert_uint_ge(ms_cold(r)->hold_total, 8000);
	ck_assert_uint_le(ms_cold(r)->hold_total, 8000 + slack);
}
END_TEST

Suite *holds_suite(void)
{
	Suite *s = suite_create("holds");
	TCase *tc = tcase_create("holds");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_holds_sum_count_maximum_and_histogram);
	tcase_add_test(tc, test_holds_through_the_lock_path_last_from_lock_to_unlock);
	tcase_add_test(tc, test_holds_of_an_ended_life_go_to_its_site_line);
	tcase_add_test(tc, test_holds_begun_before_a_reset_are_not_counted);
	suite_add_tcase(s, tc);
	return s;
}
