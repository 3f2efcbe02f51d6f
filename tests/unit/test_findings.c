/* test_findings.c - lock-order findings made as the edges are noted
 * (lib/analysis/order.c into lib/analysis/findings.c), driven through the lock path's
 * record functions by made-up threads, without threads: one finding per
 * cycle of code however often it is closed, a finding that outlives its
 * mutexes and says where they ended, an address reused that closes no
 * cycle, trylock and recursive rules, gates, and a guarded finding that
 * becomes a potential deadlock once taken without its gate.
 *
 * Every test runs in its own forked child (main.c) with a fresh table and
 * depot. */
#include "suites.h"

#include "stacks/depot.h"
#include "analysis/findings.h"
#include "analysis/order.h"
#include "record/record.h"
#include "core/table.h"
#include "core/thread.h"
#include "core/thread_pool.h"

#include <stdint.h>
#include <string.h>

/* Call sites in a made-up program's text. */
#define SITE(n) ((uintptr_t)0x55d4c0a10000u + (uintptr_t)(n) * 0x40)
#define KEY(n) ((uintptr_t)0x55d4c0b00000u + (uintptr_t)(n) * 48)

static struct ms_tstate t1_ts, t2_ts;
static struct ms_thread t1 = { .ok = 1, .tid = 1001, .tid_held = 1001 | MS_HELD, .ts = &t1_ts };
static struct ms_thread t2 = { .ok = 1, .tid = 1002, .tid_held = 1002 | MS_HELD, .ts = &t2_ts };

static void setup(void)
{
	ck_assert_int_eq(ms_table_init(1024, 16), 1024);
	ck_assert_int_eq(ms_depot_init(8 << 20), 0);
	t1_ts.tid = t1.tid;
	t2_ts.tid = t2.tid;
}

/* A mutex life at key n, from its init. */
static uint32_t mutex_init(unsigned n)
{
	uint32_t r = ms_table_add(KEY(n), 1, &t1.clock);
	ck_assert_uint_ne(r, MS_REC_UNTRACKED);
	return r;
}

/* Its destroy at site, as the wrapper tells the findings. */
static void mutex_destroy(unsigned n, uintptr_t site)
{
	ms_table_remove(KEY(n), 0);
	if (ms_self.finding_ended) {
		ms_findings_life_ended(ms_self.finding_ended, ms_self.finding_birth,
				       MS_ENDED_DESTROYED, site);
		ms_self.finding_ended = 0;
	}
}

static void lock_op(struct ms_thread *t, uint32_t r, unsigned n, uintptr_t site, unsigned op)
{
	ms_acquired(t, r, (void *)KEY(n), site, op, 0, 0, 0);
}

static void lock(struct ms_thread *t, uint32_t r, unsigned n, uintptr_t site)
{
	lock_op(t, r, n, site, MS_OP_LOCK);
}

static void unlock(struct ms_thread *t, uint32_t r, uintptr_t site)
{
	ms_released(t, r, NULL, site, MS_OP_UNLOCK);
}

/* t takes a then b at sites sa, sb (mutexes at keys na, nb), and lets go. */
static void pair(struct ms_thread *t, uint32_t a, unsigned na, uintptr_t sa, uint32_t b,
		 unsigned nb, uintptr_t sb)
{
	lock(t, a, na, sa);
	lock(t, b, nb, sb);
	unlock(t, b, sb + 8);
	unlock(t, a, sa + 8);
}

static struct ms_cycle_finding kept[8];
static int nkept;

static void keep(const struct ms_cycle_finding *c, void *arg)
{
	(void)arg;
	if (nkept < 8)
		kept[nkept] = *c;
	nkept++;
}

static int cycles(void)
{
	nkept = 0;
	ms_findings_each_cycle(keep, NULL);
	return nkept;
}

/* A lock path that saw a lock held asks the graph for the edge, and a
 * signal handler on the thread let that lock go in between: the held set
 * is empty when the edge is made.  No edge, and no read before the set. */
START_TEST(test_findings_edge_asked_once_the_held_set_is_empty)
{
	uint32_t a = mutex_init(1), b = mutex_init(2);
	lock(&t1, a, 1, SITE(1));
	unlock(&t1, a, SITE(2)); /* the handler's unlock */
	ck_assert_uint_eq(t1_ts.nheld, 0);
	ms_order_missed(&t1, &t1_ts, b, KEY(2), SITE(3));
	ms_order_note_mode(&t1, &t1_ts, b, KEY(2), SITE(3), 1);
	/* b then a, a then b: only the second pair makes an edge */
	pair(&t1, b, 2, SITE(4), a, 1, SITE(5));
	pair(&t2, a, 1, SITE(6), b, 2, SITE(7));
	ck_assert_int_eq(cycles(), 1);
}
END_TEST

START_TEST(test_findings_abba)
{
	uint32_t a = mutex_init(1), b = mutex_init(2);
	pair(&t1, a, 1, SITE(1), b, 2, SITE(2));
	ck_assert_int_eq(cycles(), 0);
	pair(&t2, b, 2, SITE(3), a, 1, SITE(4));
	ck_assert_int_eq(cycles(), 1);
	ck_assert_uint_eq(kept[0].n, 2);
	ck_assert_uint_eq(kept[0].count, 1);
	ck_assert_int_eq(kept[0].guarded, 0);
	/* from the smallest record: A, then B */
	ck_assert_uint_eq(kept[0].m[0].key, KEY(1));
	ck_assert_uint_eq(kept[0].m[1].key, KEY(2));
	ck_assert_uint_eq(kept[0].m[0].first_caller, SITE(1));
	ck_assert_uint_eq(kept[0].e[0].tid, t1.tid);
	ck_assert_uint_eq(kept[0].e[0].a_caller, SITE(1));
	ck_assert_uint_eq(kept[0].e[0].b_caller, SITE(2));
	ck_assert_uint_eq(kept[0].e[1].tid, t2.tid);
	ck_assert_uint_eq(kept[0].e[1].a_caller, SITE(3));
	ck_assert_uint_eq(kept[0].e[1].b_caller, SITE(4));
	/* taken again and again: known edges, no new finding, no count */
	for (int i = 0; i < 100; i++) {
		pair(&t1, a, 1, SITE(1), b, 2, SITE(2));
		pair(&t2, b, 2, SITE(3), a, 1, SITE(4));
	}
	ck_assert_int_eq(cycles(), 1);
	ck_assert_uint_eq(kept[0].count, 1);
}
END_TEST

/* Both mutexes destroyed: the finding stays, and says where they ended. */
START_TEST(test_findings_outlive_their_mutexes)
{
	uint32_t a = mutex_init(1), b = mutex_init(2);
	pair(&t1, a, 1, SITE(1), b, 2, SITE(2));
	pair(&t2, b, 2, SITE(3), a, 1, SITE(4));
	mutex_destroy(1, SITE(10));
	mutex_destroy(2, SITE(11));
	struct ms_table_counts c;
	ms_table_counts(&c);
	ck_assert_uint_eq(c.live, 0);
	ck_assert_int_eq(cycles(), 1);
	ck_assert_uint_eq(kept[0].m[0].ended, MS_ENDED_DESTROYED);
	ck_assert_uint_eq(kept[0].m[0].ended_at, SITE(10));
	ck_assert_uint_eq(kept[0].m[1].ended, MS_ENDED_DESTROYED);
	ck_assert_uint_eq(kept[0].m[1].ended_at, SITE(11));
	ck_assert_uint_eq(kept[0].m[0].key, KEY(1));
}
END_TEST

/* The same code closes the cycle with new mutexes 1,000 times: one
 * finding, counted 1,000 times.  Another piece of code: a second one. */
START_TEST(test_findings_one_per_code)
{
	for (int i = 0; i < 1000; i++) {
		uint32_t a = mutex_init(1 + 2 * (unsigned)(i % 50));
		uint32_t b = mutex_init(2 + 2 * (unsigned)(i % 50));
		unsigned na = 1 + 2 * (unsigned)(i % 50), nb = na + 1;
		pair(&t1, a, na, SITE(1), b, nb, SITE(2));
		pair(&t2, b, nb, SITE(3), a, na, SITE(4));
		mutex_destroy(na, SITE(10));
		mutex_destroy(nb, SITE(11));
	}
	ck_assert_int_eq(cycles(), 1);
	ck_assert_uint_eq(kept[0].count, 1000);
	uint32_t c = mutex_init(200), d = mutex_init(201);
	pair(&t1, c, 200, SITE(20), d, 201, SITE(21));
	pair(&t2, d, 201, SITE(22), c, 200, SITE(23));
	ck_assert_int_eq(cycles(), 2);
	ck_assert_uint_eq(kept[0].count + kept[1].count, 1001);
}
END_TEST

/* A's address reused by a new mutex: B then the new A is no cycle with
 * the old A then B. */
START_TEST(test_findings_reused_address)
{
	uint32_t a = mutex_init(1), b = mutex_init(2);
	pair(&t1, a, 1, SITE(1), b, 2, SITE(2));
	mutex_destroy(1, SITE(10));
	uint32_t a2 = mutex_init(1);
	pair(&t2, b, 2, SITE(3), a2, 1, SITE(4));
	ck_assert_int_eq(cycles(), 0);
	/* nor an init again without destroy */
	uint32_t c = mutex_init(3), d = mutex_init(4);
	pair(&t1, c, 3, SITE(5), d, 4, SITE(6));
	uint32_t c2 = mutex_init(3);
	ck_assert_uint_eq(c2, c); /* the same record, a new life */
	pair(&t2, d, 4, SITE(7), c2, 3, SITE(8));
	ck_assert_int_eq(cycles(), 0);
}
END_TEST

/* A trylock cannot block: it adds no edge into what it takes, but what it
 * took is held for the edges after it.  A recursive relock adds nothing. */
START_TEST(test_findings_trylock_and_recursive)
{
	uint32_t a = mutex_init(1), b = mutex_init(2), c = mutex_init(3);
	lock(&t1, a, 1, SITE(1));
	lock_op(&t1, b, 2, SITE(2), MS_OP_TRYLOCK); /* no A->B */
	lock(&t1, c, 3, SITE(3));                   /* B->C */
	unlock(&t1, c, SITE(4));
	unlock(&t1, b, SITE(4));
	unlock(&t1, a, SITE(4));
	pair(&t2, b, 2, SITE(5), a, 1, SITE(6)); /* B->A: no cycle */
	ck_assert_int_eq(cycles(), 0);
	pair(&t2, c, 3, SITE(7), b, 2, SITE(8)); /* C->B closes B->C */
	ck_assert_int_eq(cycles(), 1);
	ck_assert_uint_eq(kept[0].n, 2);
	ck_assert_uint_eq(kept[0].e[0].a_caller, SITE(2)); /* B, by the trylock */

	/* a recursive relock of A while holding B: no B->A */
	uint32_t r = mutex_init(10), s = mutex_init(11);
	lock(&t1, r, 10, SITE(20));
	lock(&t1, s, 11, SITE(21));
	lock(&t1, r, 10, SITE(22)); /* held already */
	unlock(&t1, s, SITE(23));
	unlock(&t1, r, SITE(23));
	ck_assert_int_eq(cycles(), 1);
}
END_TEST

/* Under a gate: a guarded inversion, which the same orders taken without
 * the gate make a potential deadlock -- one finding of one closing: the
 * same code's closing of the same pair found unguarded is no other (its
 * count of 2 read "closed 2 times, by other mutexes each time"). */
START_TEST(test_findings_gate)
{
	uint32_t g = mutex_init(9), a = mutex_init(1), b = mutex_init(2);
	lock(&t1, g, 9, SITE(9));
	pair(&t1, a, 1, SITE(1), b, 2, SITE(2));
	unlock(&t1, g, SITE(9));
	lock(&t2, g, 9, SITE(9));
	pair(&t2, b, 2, SITE(3), a, 1, SITE(4));
	unlock(&t2, g, SITE(9));
	ck_assert_int_eq(cycles(), 1);
	ck_assert_int_eq(kept[0].guarded, 1);
	ck_assert_uint_eq(kept[0].gate.key, KEY(9));
	/* a third thread takes B then A without G */
	struct ms_tstate t3_ts = { .tid = 1003 };
	struct ms_thread t3 = { .ok = 1, .tid = 1003, .tid_held = 1003 | MS_HELD, .ts = &t3_ts };
	pair(&t3, b, 2, SITE(3), a, 1, SITE(4));
	ck_assert_int_eq(cycles(), 1);
	ck_assert_int_eq(kept[0].guarded, 0);
	ck_assert_uint_eq(kept[0].count, 1);
	ck_assert_uint_eq(kept[0].e[1].tid, 1003);
}
END_TEST

/* A ring of 30 mutexes, each taken after the one before, closed by the
 * last; kept whole. */
START_TEST(test_findings_ring_thirty)
{
	uint32_t r[30];
	for (unsigned i = 0; i < 30; i++)
		r[i] = mutex_init(i + 1);
	for (unsigned i = 0; i < 30; i++)
		pair(i % 2 ? &t1 : &t2, r[i], i + 1, SITE(i), r[(i + 1) % 30], (i + 1) % 30 + 1,
		     SITE(100 + i));
	ck_assert_int_eq(cycles(), 1);
	ck_assert_uint_eq(kept[0].n, 30);
	ck_assert_uint_eq(kept[0].kept, 30);
	for (unsigned i = 0; i < 30; i++)
		ck_assert_uint_eq(kept[0].m[i].key, KEY(i + 1));
}
END_TEST

Suite *findings_suite(void)
{
	Suite *s = suite_create("findings");
	TCase *tc = tcase_create("cycles");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_findings_abba);
	tcase_add_test(tc, test_findings_edge_asked_once_the_held_set_is_empty);
	tcase_add_test(tc, test_findings_outlive_their_mutexes);
	tcase_add_test(tc, test_findings_one_per_code);
	tcase_add_test(tc, test_findings_reused_address);
	tcase_add_test(tc, test_findings_trylock_and_recursive);
	tcase_add_test(tc, test_findings_gate);
	tcase_add_test(tc, test_findings_ring_thirty);
	suite_add_tcase(s, tc);
	return s;
}
