/* test_ptr_index.c - the index of pointers by hash (lib/base/ptr_index.c)
 * that the lock-order graph finds its edges and nodes by: every item added
 * is found and no other, through collisions, growth and removals in the
 * middle of a run of slots (which move the items after it back), and an
 * allocator that gives nothing leaves the index as it was. */
#include "suites.h"

#include "base/ptr_index.h"

#include <stdint.h>

struct item {
	uint32_t key;
	uint32_t hash;
};

static int item_is(const void *item, const void *key)
{
	return ((const struct item *)item)->key == *(const uint32_t *)key;
}

/* Memory as the graph's allocator gives it: zeroed, kept -- handed out
 * from a static pool, as the depot's arena is (each test runs in a child
 * of its own, with the pool untouched). */
static size_t alloc_left = SIZE_MAX;
static _Alignas(16) unsigned char pool[1 << 20];
static size_t pool_used;

static void *alloc_zeroed(size_t bytes)
{
	bytes = (bytes + 15) & ~(size_t)15;
	if (bytes > alloc_left || bytes > sizeof pool - pool_used)
		return NULL;
	alloc_left -= bytes;
	pool_used += bytes;
	return pool + pool_used - bytes;
}

#define N 3000

static struct item items[N];

/* Item i's hash: with few_hashes, one of 7 (long runs of equal hashes and
 * homes); else spread. */
static void make_items(int few_hashes)
{
	for (uint32_t i = 0; i < N; i++) {
		items[i].key = i;
		items[i].hash = few_hashes ? i % 7 : i * 0x9e3779b1u;
	}
}

static struct item *find(const struct ms_ptr_index *ix, uint32_t i)
{
	return ms_ptr_index_find(ix, items[i].hash, item_is, &items[i].key);
}

static void add_all(struct ms_ptr_index *ix)
{
	for (uint32_t i = 0; i < N; i++)
		ck_assert_int_eq(ms_ptr_index_add(ix, items[i].hash, &items[i], alloc_zeroed), 0);
	ck_assert_uint_eq(ix->count, N);
	ck_assert_uint_ge(ix->cap, 2 * N); /* at most half full */
}

static void check_all_but(const struct ms_ptr_index *ix, int (*gone)(uint32_t))
{
	for (uint32_t i = 0; i < N; i++)
		ck_assert_ptr_eq(find(ix, i), gone(i) ? NULL : &items[i]);
}

static int none_gone(uint32_t i)
{
	(void)i;
	return 0;
}

static int odd_gone(uint32_t i)
{
	return i & 1;
}

static int all_gone(uint32_t i)
{
	(void)i;
	return 1;
}

START_TEST(test_ptr_index_empty_finds_nothing)
{
	struct ms_ptr_index ix = { 0 };
	make_items(0);
	ck_assert_ptr_null(find(&ix, 0));
	ms_ptr_index_remove(&ix, items[0].hash, &items[0]); /* nothing to take */
	ck_assert_uint_eq(ix.count, 0);
}
END_TEST

START_TEST(test_ptr_index_finds_each_through_growth)
{
	struct ms_ptr_index ix = { 0 };
	make_items(_i);
	add_all(&ix);
	check_all_but(&ix, none_gone);
	uint32_t absent = N + 1;
	ck_assert_ptr_null(ms_ptr_index_find(&ix, items[5].hash, item_is, &absent));
}
END_TEST

START_TEST(test_ptr_index_removals_keep_the_others_found)
{
	struct ms_ptr_index ix = { 0 };
	make_items(_i);
	add_all(&ix);
	for (uint32_t i = 1; i < N; i += 2)
		ms_ptr_index_remove(&ix, items[i].hash, &items[i]);
	ck_assert_uint_eq(ix.count, N / 2);
	check_all_but(&ix, odd_gone);
	ms_ptr_index_remove(&ix, items[1].hash, &items[1]); /* gone already */
	ck_assert_uint_eq(ix.count, N / 2);
	for (uint32_t i = 0; i < N; i += 2)
		ms_ptr_index_remove(&ix, items[i].hash, &items[i]);
	ck_assert_uint_eq(ix.count, 0);
	check_all_but(&ix, all_gone);
	for (size_t s = 0; s < ix.cap; s++)
		ck_assert_uint_eq(ix.tags[s], 0);
}
END_TEST

/* A run of slots that wraps past the end of the array: an item taken out
 * before the end leaves those after it, at the start, found. */
START_TEST(test_ptr_index_removal_in_a_wrapped_run)
{
	struct ms_ptr_index ix = { 0 };
	make_items(0);
	ck_assert_int_eq(ms_ptr_index_add(&ix, 0, &items[0], alloc_zeroed), 0);
	size_t last = ix.cap - 1;
	/* homes: the last slot (tag >> 1 == last) for four items */
	uint32_t hash = (uint32_t)(last << 1);
	for (uint32_t i = 1; i <= 4; i++) {
		items[i].hash = hash;
		ck_assert_int_eq(ms_ptr_index_add(&ix, hash, &items[i], alloc_zeroed), 0);
	}
	ck_assert_uint_eq(ix.cap, last + 1); /* no growth moved them */
	ck_assert_ptr_eq(ix.items[last], &items[1]);
	ck_assert_ptr_eq(ix.items[0], &items[0]); /* its own home */
	ck_assert_ptr_eq(ix.items[1], &items[2]);
	ms_ptr_index_remove(&ix, hash, &items[1]);
	ck_assert_ptr_eq(ix.items[last], &items[2]);
	ck_assert_ptr_eq(ix.items[0], &items[0]); /* not moved: home 0 */
	for (uint32_t i = 2; i <= 4; i++)
		ck_assert_ptr_eq(find(&ix, i), &items[i]);
	ck_assert_ptr_eq(find(&ix, 0), &items[0]);
	ck_assert_ptr_null(find(&ix, 1));
}
END_TEST

START_TEST(test_ptr_index_no_memory_to_grow_adds_nothing)
{
	struct ms_ptr_index ix = { 0 };
	make_items(0);
	alloc_left = 0;
	ck_assert_int_eq(ms_ptr_index_add(&ix, items[0].hash, &items[0], alloc_zeroed), -1);
	ck_assert_uint_eq(ix.count, 0);
	ck_assert_ptr_null(find(&ix, 0));
	alloc_left = SIZE_MAX;
	uint32_t i = 0;
	for (; !ix.cap || 2 * (ix.count + 1) <= ix.cap; i++)
		ck_assert_int_eq(ms_ptr_index_add(&ix, items[i].hash, &items[i], alloc_zeroed), 0);
	size_t cap = ix.cap;
	alloc_left = 0; /* the next add must grow */
	ck_assert_int_eq(ms_ptr_index_add(&ix, items[i].hash, &items[i], alloc_zeroed), -1);
	ck_assert_uint_eq(ix.cap, cap);
	ck_assert_uint_eq(ix.count, i);
	for (uint32_t j = 0; j < i; j++)
		ck_assert_ptr_eq(find(&ix, j), &items[j]);
	ck_assert_ptr_null(find(&ix, i));
	alloc_left = SIZE_MAX;
}
END_TEST

Suite *ptr_index_suite(void)
{
	Suite *s = suite_create("ptr_index");
	TCase *tc = tcase_create("index");
	tcase_add_test(tc, test_ptr_index_empty_finds_nothing);
	tcase_add_loop_test(tc, test_ptr_index_finds_each_through_growth, 0, 2);
	tcase_add_loop_test(tc, test_ptr_index_removals_keep_the_others_found, 0, 2);
	tcase_add_test(tc, test_ptr_index_removal_in_a_wrapped_run);
	tcase_add_test(tc, test_ptr_index_no_memory_to_grow_adds_nothing);
	suite_add_tcase(s, tc);
	return s;
}
