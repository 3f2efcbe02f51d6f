/* test_edge_window.c - a thread's windows of known lock-order edges
 * (lib/analysis/edge_window.h): which edges a window knows after which
 * puts -- only those put, of the generation put, of two locks taken for
 * writing, within its span -- and which window another first lock takes. */
#include "suites.h"

#include "analysis/edge_window.h"
#include "analysis/order.h"

#include <stdint.h>
#include <stdlib.h>

static struct ms_edge_window *windows;

static void setup(void)
{
	windows = aligned_alloc(64, MS_EDGE_WINDOWS_BYTES);
	ck_assert_ptr_nonnull(windows);
	memset(windows, 0, MS_EDGE_WINDOWS_BYTES);
}

static void teardown(void)
{
	free(windows);
}

/* How many of a->(from .. from+n-1) windows know at gen. */
static unsigned known_run(uint32_t a, uint32_t from, uint32_t n, uint32_t gen)
{
	unsigned k = 0;
	for (uint32_t b = from; b < from + n; b++)
		k += (unsigned)ms_edge_windowed(windows, a, b, gen);
	return k;
}

START_TEST(empty_windows_know_nothing)
{
	ck_assert_uint_eq(known_run(1, 0, 1000, 0), 0);
	ck_assert_uint_eq(known_run(300, 0, 1000, 0), 0);
	/* record 0 is no mutex: never a window's lock, at generation 0 too */
	ms_edge_window_put(windows, 0, 5, 0);
	ck_assert_uint_eq(known_run(0, 0, 1000, 0), 0);
}
END_TEST

START_TEST(knows_exactly_the_edges_put)
{
	for (uint32_t b = 1000; b < 1100; b += 3)
		ms_edge_window_put(windows, 7, b, 4);
	for (uint32_t b = 900; b < 1200; b++)
		ck_assert_int_eq(ms_edge_windowed(windows, 7, b, 4),
				 b >= 1000 && b < 1100 && (b - 1000) % 3 == 0);
	/* another first lock, with its own window or with 7's */
	ck_assert_uint_eq(known_run(8, 900, 300, 4), 0);
	ck_assert_uint_eq(known_run(7 + MS_EDGE_WINDOWS, 900, 300, 4), 0);
}
END_TEST

START_TEST(spans_its_bits_around_the_first)
{
	/* based MS_WINDOW_BEFORE below the first second lock */
	uint32_t first = 5000, base = first - MS_WINDOW_BEFORE;
	ms_edge_window_put(windows, 3, first, 2);
	for (uint32_t b = base - 10; b < base + MS_WINDOW_BITS + 10; b++)
		ms_edge_window_put(windows, 3, b, 2);
	for (uint32_t b = base - 10; b < base + MS_WINDOW_BITS + 10; b++)
		ck_assert_int_eq(ms_edge_windowed(windows, 3, b, 2),
				 b >= base && b < base + MS_WINDOW_BITS);
	/* one near record 0 starts at 0 */
	ms_edge_window_put(windows, 4, 10, 2);
	ms_edge_window_put(windows, 4, 0, 2);
	ms_edge_window_put(windows, 4, MS_WINDOW_BITS - 1, 2);
	ms_edge_window_put(windows, 4, MS_WINDOW_BITS, 2);
	ck_assert_uint_eq(known_run(4, 0, 2 * MS_WINDOW_BITS, 2), 3);
	ck_assert(ms_edge_windowed(windows, 4, 0, 2));
	ck_assert(ms_edge_windowed(windows, 4, MS_WINDOW_BITS - 1, 2));
}
END_TEST

START_TEST(a_new_generation_forgets)
{
	for (uint32_t b = 100; b < 200; b++)
		ms_edge_window_put(windows, 9, b, 10);
	ck_assert_uint_eq(known_run(9, 100, 100, 10), 100);
	/* a life in an edge ended: not one is known at the next generation,
	 * nor at any other */
	ck_assert_uint_eq(known_run(9, 100, 100, 11), 0);
	ck_assert_uint_eq(known_run(9, 100, 100, 9), 0);
	ck_assert_uint_eq(known_run(9, 100, 100, 10 + 1u * 65536), 0);
	/* a put of the new one starts the window again: the old bits are
	 * not the new generation's */
	ms_edge_window_put(windows, 9, 150, 11);
	ck_assert_uint_eq(known_run(9, 0, 1000, 11), 1);
	ck_assert(ms_edge_windowed(windows, 9, 150, 11));
	ck_assert_uint_eq(known_run(9, 0, 1000, 10), 0);
}
END_TEST

START_TEST(a_lock_sharing_the_window_takes_it)
{
	uint32_t a = 20, other = 20 + 3 * MS_EDGE_WINDOWS;
	ms_edge_window_put(windows, a, 1000, 1);
	ms_edge_window_put(windows, a, 1001, 1);
	ms_edge_window_put(windows, other, 1001, 1);
	ck_assert_uint_eq(known_run(a, 0, 3000, 1), 0);
	ck_assert_uint_eq(known_run(other, 0, 3000, 1), 1);
	ck_assert(ms_edge_windowed(windows, other, 1001, 1));
	/* the neighbours' windows are their own */
	ms_edge_window_put(windows, a + 1, 1000, 1);
	ck_assert(ms_edge_windowed(windows, a + 1, 1000, 1));
	ck_assert(ms_edge_windowed(windows, other, 1001, 1));
}
END_TEST

START_TEST(read_modes_are_left_to_the_caches)
{
	uint32_t a = 40, b = 900;
	ms_edge_window_put(windows, ms_edge_key(a, 1), b, 1);
	ms_edge_window_put(windows, a, ms_edge_key(b, 1), 1);
	ck_assert_uint_eq(known_run(a, 0, 3000, 1), 0);
	ck_assert(!ms_edge_windowed(windows, ms_edge_key(a, 1), b, 1));
	ck_assert(!ms_edge_windowed(windows, a, ms_edge_key(b, 1), 1));
	/* a write's window does not answer for the read of that lock */
	ms_edge_window_put(windows, a, b, 1);
	ck_assert(ms_edge_windowed(windows, a, b, 1));
	ck_assert(!ms_edge_windowed(windows, a, ms_edge_key(b, 1), 1));
	ck_assert(!ms_edge_windowed(windows, ms_edge_key(a, 1), b, 1));
}
END_TEST

Suite *edge_window_suite(void)
{
	Suite *s = suite_create("edge_window");
	TCase *tc = tcase_create("windows");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, empty_windows_know_nothing);
	tcase_add_test(tc, knows_exactly_the_edges_put);
	tcase_add_test(tc, spans_its_bits_around_the_first);
	tcase_add_test(tc, a_new_generation_forgets);
	tcase_add_test(tc, a_lock_sharing_the_window_takes_it);
	tcase_add_test(tc, read_modes_are_left_to_the_caches);
	suite_add_tcase(s, tc);
	return s;
}
