/* test_table.c - the statistics table (lib/core/table.c): finding, adding and
 * removing addresses, running out of records, reusing slots and records,
 * new lives of a known address, folding ended lives into per-site lines,
 * and how the XOR-fold hash spreads real mutex addresses.
 *
 * Every test runs in its own forked child (see main.c) and maps a fresh
 * table in its fixture, so tests never see each other's records.  Loops
 * that run many times check with a plain `if` and ck_abort_msg(): in fork
 * mode each passing ck_assert writes a checkpoint to a pipe. */
#include "analysis/ended.h"
#include "suites.h"

#include "stacks/depot.h"
#include "analysis/order.h"
#include "record/record.h"
#include "core/pending_names.h"
#include "core/table.h"
#include "core/thread_pool.h"
#include "core/thread.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* ---- helpers ----------------------------------------------------------- */

static struct ms_table_counts counts(void)
{
	struct ms_table_counts c;
	ms_table_counts(&c);
	return c;
}

static void table_init(uint32_t capacity, uint32_t history)
{
	ms_ended_init(); /* the hooks start-up gives the table */
	ck_assert_int_eq(ms_table_init(capacity, history), (int)capacity);
	ck_assert_uint_eq(ms_table.capacity, capacity);
	ck_assert_uint_eq(ms_table.index_mask, 2 * (uint64_t)capacity - 1);
}

static void setup_64(void) { table_init(64, 16); }
static void setup_1024(void) { table_init(1024, 16); }
static void setup_8192(void) { table_init(8192, 16); }
static void setup_16384(void) { table_init(16384, 16); }
static void setup_65536(void) { table_init(65536, 16); }

/* Addresses that look like a heap: 48 bytes apart, as malloc spaces 40-byte
 * pthread_mutex_t objects. */
#define HEAP_BASE ((uintptr_t)0x55d4c0a01230u)
static uintptr_t heap_key(unsigned i)
{
	return HEAP_BASE + (uintptr_t)i * 48;
}

/* Addresses that share one home slot in the current table: the hash
 * (table.h) adds to k's low s bits (s = index bits, k = key >> 3) the fold
 * of the bits above them.  The key with high part j and low part home
 * minus j's fold has its home at `home` (the fold of j is the hash of the
 * key whose low part is 0). */
static uintptr_t colliding_key(uint64_t home, unsigned j)
{
	unsigned sh = ms_table.index_shift;
	uint64_t high = (uint64_t)j << sh;
	uint64_t fold = ms_hash((uintptr_t)(high << 3)) - high;
	uint64_t k = high + ((home - fold) & ms_table.index_mask);
	return (uintptr_t)(k << 3);
}

static uint64_t home_of(uintptr_t key)
{
	return ms_hash(key) & ms_table.index_mask;
}

/* Slot of `key` found by scanning the whole index; -1 if absent; aborts
 * if the key is in the index more than once. */
static int64_t slot_of(uintptr_t key)
{
	int64_t at = -1;
	for (uint64_t i = 0; i <= ms_table.index_mask; i++)
		if (ms_table_slot_key(i) == key) {
			if (at >= 0)
				ck_abort_msg("key %#lx in slots %ld and %lu",
					     (unsigned long)key, (long)at,
					     (unsigned long)i);
			at = (int64_t)i;
		}
	return at;
}

static int cmp_key(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
	return x < y ? -1 : x > y;
}

/* The line of `site` as the report sees it (with what the index's
 * stripes hold for it), or NULL. */
static const struct ms_site *site_line(uintptr_t site)
{
	static struct ms_site views[4];
	static unsigned next;
	for (uint32_t i = 0; i < ms_table.nsites; i++)
		if (ms_table.sites[i].site == site) {
			struct ms_site *v = &views[next++ % 4];
			ms_table_site(i, v);
			return v;
		}
	return NULL;
}

/* No key and no tombstone left anywhere in the index. */
static void assert_index_empty(void)
{
	unsigned tombs = 0, keys = 0;
	for (uint64_t i = 0; i <= ms_table.index_mask; i++) {
		tombs += ms_table_slot_key(i) == MS_KEY_TOMB;
		keys += ms_table_slot_key(i) > MS_KEY_TOMB;
	}
	ck_assert_uint_eq(keys, 0);
	ck_assert_uint_eq(tombs, 0);
}

/* Lock and unlock through the record path, as the wrappers do. */
static void lock_unlock(struct ms_thread *t, uint32_t r, uintptr_t caller,
			unsigned times)
{
	for (unsigned i = 0; i < times; i++) {
		ms_acquired(t, r, NULL, caller, MS_OP_LOCK, 0, 0, 0);
		ms_released(t, r, NULL, caller, MS_OP_UNLOCK);
	}
}

#define CALLER_A ((uintptr_t)0x401000)
#define CALLER_B ((uintptr_t)0x402000)
#define CALLER_C ((uintptr_t)0x403000)
#define CALLER_D ((uintptr_t)0x404000)

/* ---- basic add / find / remove ------------------------------------------ */

START_TEST(test_table_find_unknown_address_is_none)
{
	ck_assert_uint_eq(ms_table_find(heap_key(0)), MS_REC_NONE);
	ck_assert_uint_eq(counts().live, 0);
}
END_TEST

START_TEST(test_table_add_then_find_returns_same_record)
{
	uint64_t clock = 0;
	uint32_t r = ms_table_add(heap_key(1), 0, &clock);
	ck_assert_uint_ge(r, 1);
	ck_assert_uint_le(r, ms_table.capacity);
	ck_assert_uint_eq(ms_table_find(heap_key(1)), r);
	ck_assert_uint_eq(counts().live, 1);
	/* adding a known address without birth returns the same record */
	ck_assert_uint_eq(ms_table_add(heap_key(1), 0, &clock), r);
	ck_assert_uint_eq(counts().live, 1);
	ck_assert_uint_eq(counts().reinitialised, 0);
	ck_assert_uint_eq(ms_table_find(heap_key(2)), MS_REC_NONE);
}
END_TEST

/* mutexstat_name_lock of an address with no record: no record is made
 * (its kind is not known), and the record its first use or init makes
 * takes the name -- the last one given, none if NULL came last; a known
 * address is answered with its record; names wait in 256 slots. */
START_TEST(test_table_name_waits_for_the_first_record)
{
	uint64_t clock = 0;
	int kept = 5;
	ck_assert_uint_eq(ms_table_name_later(heap_key(1), "first", &clock, &kept), MS_REC_NONE);
	ck_assert_int_eq(kept, 0);
	ck_assert_uint_eq(ms_table_name_later(heap_key(1), "second", &clock, &kept), MS_REC_NONE);
	ck_assert_uint_eq(ms_table_name_later(heap_key(2), "gone", &clock, &kept), MS_REC_NONE);
	ck_assert_uint_eq(ms_table_name_later(heap_key(2), NULL, &clock, &kept), MS_REC_NONE);
	ck_assert_uint_eq(counts().live, 0);
	ck_assert_uint_eq(ms_table_find(heap_key(1)), MS_REC_NONE);

	uint32_t r1 = ms_table_add(heap_key(1), 1, &clock);
	ck_assert_str_eq(ms_cold(r1)->name, "second");
	uint32_t r2 = ms_table_add(heap_key(2), 0, &clock);
	ck_assert_ptr_null(ms_cold(r2)->name);
	/* taken once: the address's next life has no name */
	ms_table_remove(heap_key(1), 0);
	uint32_t again = ms_table_add(heap_key(1), 1, &clock);
	ck_assert_ptr_null(ms_cold(again)->name);
	/* known now: the record is the answer, and nothing waits */
	ck_assert_uint_eq(ms_table_name_later(heap_key(2), "late", &clock, &kept), r2);
	ck_assert_int_eq(ms_pending_names_any(), 0);

	int took = 0;
	for (unsigned i = 0; i < MS_PENDING_NAMES + 10; i++) {
		ck_assert_uint_eq(ms_table_name_later(heap_key(100 + i), "many", &clock, &kept),
				  MS_REC_NONE);
		took += kept == 0;
	}
	ck_assert_int_eq(took, MS_PENDING_NAMES);
	uint32_t last = ms_table_add(heap_key(100 + MS_PENDING_NAMES - 1), 0, &clock);
	ck_assert_str_eq(ms_cold(last)->name, "many");
	ck_assert_uint_eq(ms_table_name_later(heap_key(99), "room again", &clock, &kept),
			  MS_REC_NONE);
	ck_assert_int_eq(kept, 0);
}
END_TEST

/* Mutexes made one after another get never used records in ascending
 * order, so a program making or walking many walks the records and their
 * history as a stream.  Spares were handed out last taken first: 8, 7,
 * ..., 1, 16, 15, ..., and a million mutexes missed the cache at nearly
 * every record. */
START_TEST(test_table_records_go_out_in_the_pools_order)
{
	uint64_t clock = 0;
	enum { N = 40 };
	uint32_t r[N];
	for (unsigned i = 0; i < N; i++)
		r[i] = ms_table_add(heap_key(i), 1, &clock);
	for (unsigned i = 1; i < N; i++)
		ck_assert_uint_eq(r[i], r[i - 1] + 1);
}
END_TEST

/* Whether the page at p is resident. */
static int resident(const void *p)
{
	unsigned char v = 0;
	ck_assert_int_eq(mincore((void *)((uintptr_t)p & ~(uintptr_t)4095), 4096, &v), 0);
	return v & 1;
}

/* A stretch of the index (64 KiB) is made resident at its 64th insert, so
 * an array of mutexes, which walks the index in order, takes one call
 * there instead of a page fault a page; before that it is touched only
 * where slots are written (a program with few mutexes keeps its pages). */
START_TEST(test_table_index_stretch_resident_at_its_64th_insert)
{
	void *probe = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(probe, MAP_FAILED);
	int can = madvise(probe, 4096, 23 /* MADV_POPULATE_WRITE, Linux 5.14 */) == 0;
	munmap(probe, 4096);
	if (!can)
		return; /* an older kernel: nothing is populated */
	/* keys in one reach of the index (its size in 8-byte steps): homes in
	 * order, from the first slot of stretch 2 (slots 16384 on) */
	const uint64_t slots = ms_table.index_mask + 1, stretch = 65536 / 8;
	ck_assert_uint_ge(slots, 4 * stretch);
	uintptr_t base = (uintptr_t)0x55d4c0a << (ms_table.index_shift + 3);
	uint64_t off = (2 * stretch - (ms_hash(base) & ms_table.index_mask)) & ms_table.index_mask;
	ck_assert_uint_lt(off + 64, slots); /* still in the reach */
	const uint64_t *last = &ms_table.slots[3 * stretch - 1];
	uint64_t clock = 0;
	for (unsigned i = 0; i < 64; i++) {
		uintptr_t key = base + 8 * (off + i);
		ck_assert_uint_eq(ms_hash(key) & ms_table.index_mask, 2 * stretch + i);
		ck_assert_int_eq(resident(last), 0);
		uint32_t r = ms_table_add(key, 1, &clock);
		ck_assert(r != MS_REC_NONE && r != MS_REC_UNTRACKED);
	}
	ck_assert_int_eq(resident(last), 1);
	ck_assert_int_eq(resident(&ms_table.slots[4 * stretch - 1]), 0); /* not the next */
}
END_TEST

/* Records and the first history group are handed out in order, so past
 * their first 2 MiB they may take huge pages (a page fault per 2 MiB of
 * mutexes, not per 4 KiB); the first 2 MiB, the later history groups,
 * the times, the cold parts, init stacks under 4 MiB and the index, which
 * are touched here and there or by small programs, never do. */
START_TEST(test_table_huge_pages_only_where_filled_in_order)
{
	if (!unit_huge_pages_markable())
		return; /* a kernel without transparent huge pages */
	const size_t mib = 1u << 20;
	const struct ms_table *t = &ms_table;
	ck_assert_uint_eq(t->capacity, 65536); /* records: 4 MiB and 64 bytes */
	const char *records = (const char *)t->records;
	ck_assert_int_eq(unit_vm_flag(records, "hg"), 0);
	ck_assert_int_eq(unit_vm_flag(records + 2 * mib - 1, "hg"), 0);
	ck_assert_int_eq(unit_vm_flag(records + 2 * mib, "hg"), 1);
	ck_assert_int_eq(unit_vm_flag(records + 4 * mib, "hg"), 1);
	const char *history = (const char *)t->history;
	const size_t group0 = (t->capacity + 1) * MS_HISTORY_GROUP * sizeof *t->history;
	ck_assert_int_eq(unit_vm_flag(history + mib, "hg"), 0);
	ck_assert_int_eq(unit_vm_flag(history + 3 * mib, "hg"), 1);
	ck_assert_int_eq(unit_vm_flag(history + group0 - 1, "hg"), 1);
	ck_assert_int_eq(unit_vm_flag(history + group0 + 4096, "hg"), 0); /* the next group */
	ck_assert_int_eq(unit_vm_flag((const char *)t->history_ticks + 3 * mib, "hg"), 0);
	ck_assert_int_eq(unit_vm_flag((const char *)t->cold + 3 * mib, "hg"), 0);
	ck_assert_int_eq(unit_vm_flag(t->init_stacks, "hg"), 0); /* 256 KiB */
	ck_assert_int_eq(unit_vm_flag(t->slots + 65536, "hg"), 0);
}
END_TEST

/* Threads that make mutexes at once write their records' words of
 * init_stacks, 16 to a line: two threads' new records in one line moved
 * it between CPUs at every init (two threads' lives took twice as long
 * each as one thread's).  A batch of new records is one such line. */
static pthread_barrier_t all_added;

static void *first_record(void *arg)
{
	uint64_t clock = 0;
	uint32_t *r = arg;
	*r = ms_table_add(heap_key(100 + *r), 1, &clock);
	pthread_barrier_wait(&all_added); /* alive, with its spares, till all add */
	ms_table_thread_exit(&ms_self);
	return NULL;
}

START_TEST(test_table_threads_new_records_share_no_line)
{
	uint64_t clock = 0;
	uint32_t mine = ms_table_add(heap_key(0), 1, &clock), r[3] = { 0, 1, 2 };
	pthread_t th[3];
	pthread_barrier_init(&all_added, NULL, 3);
	for (unsigned i = 0; i < 3; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, first_record, &r[i]), 0);
	for (unsigned i = 0; i < 3; i++)
		ck_assert_int_eq(pthread_join(th[i], NULL), 0);
	pthread_barrier_destroy(&all_added);
	uintptr_t line[4] = { (uintptr_t)&ms_table.init_stacks[mine] / 64 };
	for (unsigned i = 0; i < 3; i++) {
		ck_assert_uint_ge(r[i], 1);
		line[i + 1] = (uintptr_t)&ms_table.init_stacks[r[i]] / 64;
	}
	for (unsigned i = 0; i < 4; i++)
		for (unsigned j = i + 1; j < 4; j++)
			ck_assert_msg(line[i] != line[j], "records %u and %u share a line",
				      i ? r[i - 1] : mine, r[j - 1]);
}
END_TEST

START_TEST(test_table_remove_ends_life_and_counts_destroyed)
{
	uint64_t clock = 0;
	uint32_t r = ms_table_add(heap_key(7), 1, &clock);
	ck_assert_uint_ne(r, MS_REC_UNTRACKED);
	ms_table_remove(heap_key(7), 0);
	ck_assert_uint_eq(ms_table_find(heap_key(7)), MS_REC_NONE);
	ck_assert_uint_eq(counts().live, 0);
	ck_assert_uint_eq(counts().destroyed, 1);
	ck_assert_int_lt(slot_of(heap_key(7)), 0);
}
END_TEST

START_TEST(test_table_remove_unknown_address_changes_nothing)
{
	uint64_t clock = 0;
	uint32_t r = ms_table_add(heap_key(3), 1, &clock);
	ms_table_remove(heap_key(4), 0);
	ck_assert_uint_eq(counts().destroyed, 0);
	ck_assert_uint_eq(counts().live, 1);
	ck_assert_uint_eq(ms_table.nsites, 0);
	ck_assert_uint_eq(ms_table_find(heap_key(3)), r);
}
END_TEST

/* ---- concurrent insertion ----------------------------------------------- */

#define CI_THREADS 8
#define CI_OWN 500
#define CI_SHARED 200
#define CI_STEPS (CI_OWN + CI_SHARED)

static pthread_barrier_t ci_start;
static uint32_t ci_own_rec[CI_THREADS][CI_OWN];
static uint32_t ci_shared_rec[CI_THREADS][CI_SHARED];

static uintptr_t ci_own_key(unsigned t, unsigned j)
{
	return heap_key(CI_SHARED + t * CI_OWN + j);
}

static uintptr_t ci_shared_key(unsigned j)
{
	return heap_key(j);
}

static void *ci_worker(void *arg)
{
	unsigned t = (unsigned)(uintptr_t)arg;
	uint64_t clock = 0;
	unsigned own = 0, shared = 0;
	pthread_barrier_wait(&ci_start);
	/* Two steps in seven go to a shared key: 200 shared, 500 own.  Even
	 * threads walk the shared keys forwards, odd ones backwards, so each
	 * shared key is raced for by threads arriving from both sides. */
	for (unsigned s = 0; s < CI_STEPS; s++) {
		if (s % 7 < 2) {
			unsigned j = t % 2 ? CI_SHARED - 1 - shared : shared;
			ci_shared_rec[t][j] = ms_table_add(ci_shared_key(j), 0, &clock);
			shared++;
		} else {
			ci_own_rec[t][own] = ms_table_add(ci_own_key(t, own), 0, &clock);
			own++;
		}
	}
	return NULL;
}

/* ---- concurrent churn across a block boundary ----------------------------
 * Four threads add and remove keys of their own, with their homes just
 * before the end of an index block or at the start of the next (table.c:
 * updates lock the blocks they touch), so runs cross into the next block
 * and removals move other threads' keys.  A lookup must never answer another key's
 * record, and once all are removed no slot may be left a tombstone. */

#define CC_THREADS 4
#define CC_KEYS 8
#define CC_ROUNDS 20000

static pthread_barrier_t cc_start;

static uintptr_t cc_key(unsigned t, unsigned j)
{
	/* threads 0 and 1 at the boundary of blocks 0 and 1, threads 2 and 3
	 * at that of blocks 1 and 2; at each, the even thread's homes are the
	 * end of the first block and the odd one's the start of the second,
	 * where the even thread's runs go on.  Block 1's stripe is above block
	 * 2's (158 and 60): that boundary takes the try-then-retake path */
	uint64_t boundary = MS_STRIPE_BLOCK * (1 + t / 2);
	uint64_t home = t & 1 ? boundary : boundary - 2;
	return colliding_key(home, 1 + t * CC_KEYS + j);
}

static void *cc_worker(void *arg)
{
	unsigned t = (unsigned)(uintptr_t)arg;
	uint64_t clock = 0;
	char *err = NULL;
	pthread_barrier_wait(&cc_start);
	for (unsigned round = 0; round < CC_ROUNDS && !err; round++) {
		for (unsigned j = 0; j < CC_KEYS && !err; j++) {
			uintptr_t k = cc_key(t, j);
			uint32_t r = ms_table_add(k, 1, &clock);
			if (r == MS_REC_UNTRACKED || r == MS_REC_NONE ||
			    ms_table.records[r].key != k) {
				err = "an add gave no record of its own";
				break;
			}
			/* A lookup may miss a key that a removal is moving
			 * (table.h); the lock path then asks the insert path,
			 * which must find it. */
			uint32_t f = ms_table_find(k);
			if (f == MS_REC_NONE)
				f = ms_table_add(k, 0, &clock);
			if (f != r)
				err = "an added key was found with another record";
		}
		for (unsigned n = 0; n < CC_KEYS && !err; n++) {
			/* removal order varies with the round */
			uintptr_t k = cc_key(t, (n * 3 + round) % CC_KEYS);
			ms_table_remove(k, 0);
			if (ms_table_find(k) != MS_REC_NONE)
				err = "a removed key was still found";
			for (unsigned j = 0; j < CC_KEYS; j++) {
				uint32_t f = ms_table_find(cc_key(t, j));
				if (f != MS_REC_NONE && ms_table.records[f].key != cc_key(t, j))
					err = "a lookup answered another key's record";
			}
		}
	}
	ms_table_thread_exit(&ms_self);
	return err;
}

START_TEST(test_table_concurrent_churn_across_blocks_keeps_index_exact)
{
	pthread_t th[CC_THREADS];
	pthread_barrier_init(&cc_start, NULL, CC_THREADS);
	for (unsigned t = 0; t < CC_THREADS; t++)
		ck_assert_int_eq(pthread_create(&th[t], NULL, cc_worker,
						(void *)(uintptr_t)t), 0);
	for (unsigned t = 0; t < CC_THREADS; t++) {
		void *err;
		pthread_join(th[t], &err);
		if (err)
			ck_abort_msg("thread %u: %s", t, (const char *)err);
	}
	pthread_barrier_destroy(&cc_start);
	ck_assert_uint_eq(counts().live, 0);
	ck_assert_uint_eq(counts().destroyed,
			  (uint64_t)CC_THREADS * CC_KEYS * CC_ROUNDS);
	assert_index_empty();
	/* every record came back: none lost among the threads' spares */
	uint64_t clock = 0;
	for (unsigned i = 0; i < ms_table.capacity; i++)
		if (ms_table_add(heap_key(i), 1, &clock) == MS_REC_UNTRACKED)
			ck_abort_msg("record %u of %u not to be had", i, ms_table.capacity);
}
END_TEST

START_TEST(test_table_concurrent_insert_no_key_lost_or_doubled)
{
	enum { KEYS = CI_THREADS * CI_OWN + CI_SHARED };
	pthread_t th[CI_THREADS];
	ck_assert_uint_ge(ms_table.capacity, KEYS);
	pthread_barrier_init(&ci_start, NULL, CI_THREADS);
	for (unsigned t = 0; t < CI_THREADS; t++)
		ck_assert_int_eq(pthread_create(&th[t], NULL, ci_worker,
						(void *)(uintptr_t)t), 0);
	for (unsigned t = 0; t < CI_THREADS; t++)
		pthread_join(th[t], NULL);
	pthread_barrier_destroy(&ci_start);

	ck_assert_uint_eq(counts().live, KEYS);
	ck_assert_uint_eq(counts().untracked_mutexes, 0);
	ck_assert_uint_eq(counts().untracked_ops, 0);

	/* Each record number belongs to exactly one key. */
	static uint32_t owner_of[8192 + 1];
	uint32_t recs = 0;
	memset(owner_of, 0, sizeof owner_of);

	for (unsigned j = 0; j < CI_SHARED; j++) {
		uint32_t r = ms_table_find(ci_shared_key(j));
		if (r == MS_REC_NONE || r == MS_REC_UNTRACKED || r > ms_table.capacity)
			ck_abort_msg("shared key %u: record %u", j, r);
		for (unsigned t = 0; t < CI_THREADS; t++)
			if (ci_shared_rec[t][j] != r)
				ck_abort_msg("shared key %u: thread %u got record %u, "
					     "table has %u", j, t, ci_shared_rec[t][j], r);
		if (owner_of[r])
			ck_abort_msg("record %u given to two keys", r);
		owner_of[r] = 1;
		recs++;
	}
	for (unsigned t = 0; t < CI_THREADS; t++)
		for (unsigned j = 0; j < CI_OWN; j++) {
			uint32_t r = ms_table_find(ci_own_key(t, j));
			if (r == MS_REC_NONE || r == MS_REC_UNTRACKED ||
			    r > ms_table.capacity || r != ci_own_rec[t][j])
				ck_abort_msg("thread %u key %u: added as %u, found %u",
					     t, j, ci_own_rec[t][j], r);
			if (owner_of[r])
				ck_abort_msg("record %u given to two keys", r);
			owner_of[r] = 1;
			recs++;
		}
	ck_assert_uint_eq(recs, KEYS);

	/* Scanning the index finds every key exactly once and nothing else. */
	static uintptr_t in_index[2 * 8192], expected[KEYS];
	size_t n = 0;
	for (uint64_t i = 0; i <= ms_table.index_mask; i++) {
		uintptr_t k = ms_table_slot_key(i);
		if (k == MS_KEY_EMPTY || k == MS_KEY_TOMB)
			continue;
		if (n == sizeof in_index / sizeof *in_index)
			ck_abort_msg("index overflows");
		in_index[n++] = k;
	}
	ck_assert_uint_eq(n, KEYS);
	for (unsigned j = 0; j < CI_SHARED; j++)
		expected[j] = ci_shared_key(j);
	for (unsigned t = 0; t < CI_THREADS; t++)
		for (unsigned j = 0; j < CI_OWN; j++)
			expected[CI_SHARED + t * CI_OWN + j] = ci_own_key(t, j);
	qsort(in_index, n, sizeof *in_index, cmp_key);
	qsort(expected, KEYS, sizeof *expected, cmp_key);
	for (size_t i = 0; i < KEYS; i++)
		if (in_index[i] != expected[i] || (i && in_index[i] == in_index[i - 1]))
			ck_abort_msg("index slot list differs at %zu: %#lx vs %#lx", i,
				     (unsigned long)in_index[i],
				     (unsigned long)expected[i]);
}
END_TEST

/* ---- running out of records --------------------------------------------- */

START_TEST(test_table_full_table_leaves_next_address_untracked)
{
	uint64_t clock = 0;
	uint32_t rec[64];
	uint8_t used[65] = { 0 };
	ck_assert_uint_eq(ms_table.capacity, 64);
	for (unsigned i = 0; i < 64; i++) {
		rec[i] = ms_table_add(heap_key(i), 1, &clock);
		ck_assert_uint_ge(rec[i], 1);
		ck_assert_uint_le(rec[i], 64);
		ck_assert_uint_eq(used[rec[i]], 0);
		used[rec[i]] = 1;
		ck_assert_uint_eq(counts().live, i + 1);
	}
	/* the 65th distinct address: in the index, but without a record */
	ck_assert_uint_eq(ms_table_add(heap_key(64), 1, &clock), MS_REC_UNTRACKED);
	ck_assert_uint_eq(counts().untracked_mutexes, 1);
	ck_assert_uint_eq(counts().live, 64);
	ck_assert_uint_eq(ms_table_find(heap_key(64)), MS_REC_UNTRACKED);
	/* seeing it again does not count it again */
	ck_assert_uint_eq(ms_table_add(heap_key(64), 0, &clock), MS_REC_UNTRACKED);
	ck_assert_uint_eq(ms_table_add(heap_key(64), 1, &clock), MS_REC_UNTRACKED);
	ck_assert_uint_eq(counts().untracked_mutexes, 1);
	ck_assert_uint_eq(counts().reinitialised, 0);
	/* the tracked ones are untouched */
	for (unsigned i = 0; i < 64; i++)
		ck_assert_uint_eq(ms_table_find(heap_key(i)), rec[i]);
}
END_TEST

START_TEST(test_table_full_table_remove_makes_room_again)
{
	uint64_t clock = 0;
	uint32_t rec[64];
	for (unsigned i = 0; i < 64; i++)
		rec[i] = ms_table_add(heap_key(i), 1, &clock);
	ck_assert_uint_eq(ms_table_add(heap_key(64), 1, &clock), MS_REC_UNTRACKED);

	ms_table_remove(heap_key(10), 0);
	ck_assert_uint_eq(counts().live, 63);
	ck_assert_uint_eq(counts().destroyed, 1);
	ck_assert_uint_eq(ms_table_find(heap_key(10)), MS_REC_NONE);

	/* a new address gets the freed record */
	uint32_t r = ms_table_add(heap_key(65), 1, &clock);
	ck_assert_uint_eq(r, rec[10]);
	ck_assert_uint_eq(counts().live, 64);
	ck_assert_uint_eq(ms_table_find(heap_key(65)), r);

	/* and the table is full again */
	ck_assert_uint_eq(ms_table_add(heap_key(66), 1, &clock), MS_REC_UNTRACKED);
	ck_assert_uint_eq(counts().untracked_mutexes, 2);

	/* removing an untracked address uncounts it */
	ms_table_remove(heap_key(64), 0);
	ms_table_remove(heap_key(66), 0);
	ck_assert_uint_eq(counts().untracked_mutexes, 0);
	ck_assert_uint_eq(counts().live, 64);
	ck_assert_uint_eq(counts().destroyed, 3);
	ck_assert_uint_eq(ms_table_find(heap_key(64)), MS_REC_NONE);
}
END_TEST

/* An untracked address has no record to hold it: its slot's side entry
 * does, and moves with the slot when a removal closes the hole before it. */
START_TEST(test_table_untracked_addresses_move_with_their_slots)
{
	uint64_t clock = 0;
	const uint64_t mask = ms_table.index_mask, h = 100;
	/* 63 records for addresses at homes 20..82, one each */
	for (unsigned i = 0; i < 63; i++)
		ck_assert_uint_ne(ms_table_add(colliding_key(20 + i, 1), 1, &clock),
				  MS_REC_UNTRACKED);
	for (uint64_t d = 0; d < 6; d++)
		ck_assert_uint_eq(ms_table_slot_key(h - 1 + d), MS_KEY_EMPTY);
	uintptr_t a = colliding_key(h, 1), u1 = colliding_key(h, 2),
		  u2 = colliding_key(h, 3);
	uint32_t ra = ms_table_add(a, 1, &clock); /* the 64th record */
	ck_assert_uint_ne(ra, MS_REC_UNTRACKED);
	ck_assert_uint_eq(ms_table_add(u1, 1, &clock), MS_REC_UNTRACKED);
	ck_assert_uint_eq(ms_table_add(u2, 1, &clock), MS_REC_UNTRACKED);
	ck_assert_int_eq(slot_of(a), (int64_t)h);
	ck_assert_int_eq(slot_of(u1), (int64_t)((h + 1) & mask));
	ck_assert_int_eq(slot_of(u2), (int64_t)((h + 2) & mask));

	ms_table_remove(a, 0);
	ck_assert_int_eq(slot_of(u1), (int64_t)h);
	ck_assert_int_eq(slot_of(u2), (int64_t)((h + 1) & mask));
	ck_assert_uint_eq(ms_table.slots[(h + 2) & mask], MS_SLOT_EMPTY);
	ck_assert_uint_eq(ms_table_find(u1), MS_REC_UNTRACKED);
	ck_assert_uint_eq(ms_table_find(u2), MS_REC_UNTRACKED);
	ck_assert_uint_eq(ms_table_find(a), MS_REC_NONE);
	ck_assert_uint_eq(counts().untracked_mutexes, 2);
	/* and a removal finds each by its address */
	ms_table_remove(u1, 0);
	ck_assert_int_eq(slot_of(u1), -1);
	ck_assert_int_eq(slot_of(u2), (int64_t)h);
	ck_assert_uint_eq(ms_table_find(u2), MS_REC_UNTRACKED);
	ck_assert_uint_eq(counts().untracked_mutexes, 1);
}
END_TEST

/* ---- removal and reuse -------------------------------------------------- */

START_TEST(test_table_remove_shifts_the_probe_run_back)
{
	uint64_t clock = 0;
	const uint64_t h = 100;
	uintptr_t a = colliding_key(h, 1), b = colliding_key(h, 2),
		  c = colliding_key(h, 3);
	ck_assert_uint_eq(home_of(a), h);
	ck_assert_uint_eq(home_of(c), h);
	uint32_t ra = ms_table_add(a, 1, &clock), rb = ms_table_add(b, 1, &clock),
		 rc = ms_table_add(c, 1, &clock);
	ck_assert_int_eq(slot_of(a), (int64_t)h);
	ck_assert_int_eq(slot_of(b), (int64_t)h + 1);
	ck_assert_int_eq(slot_of(c), (int64_t)h + 2);

	/* b leaves: c moves back into its slot, and the run ends empty */
	ms_table_remove(b, 0);
	ck_assert_int_eq(slot_of(c), (int64_t)h + 1);
	ck_assert_uint_eq(ms_table.slots[h + 2], MS_SLOT_EMPTY);
	ck_assert_uint_eq(ms_table_find(c), rc);
	ck_assert_uint_eq(ms_table_find(b), MS_REC_NONE);
	ck_assert_uint_eq(ms_rec(rc)->key, c);
	/* adding c again finds it, not a second copy */
	ck_assert_uint_eq(ms_table_add(c, 0, &clock), rc);
	ck_assert_uint_eq(counts().live, 2);

	ms_table_remove(a, 0);
	ck_assert_int_eq(slot_of(c), (int64_t)h);
	ck_assert_uint_eq(ms_table.slots[h + 1], MS_SLOT_EMPTY);
	ms_table_remove(c, 0);
	ck_assert_uint_eq(ms_table.slots[h], MS_SLOT_EMPTY);
	ck_assert_uint_eq(counts().live, 0);
	(void)ra;
	(void)rb;
}
END_TEST

START_TEST(test_table_remove_leaves_keys_at_their_home_in_place)
{
	uint64_t clock = 0;
	const uint64_t h = 300;
	/* a and b share home h; d's home is h + 1, so after a leaves, b moves
	 * to h but d, already at its home, stays */
	uintptr_t a = colliding_key(h, 1), b = colliding_key(h, 2),
		  d = colliding_key(h + 1, 1);
	ms_table_add(a, 1, &clock);
	ms_table_add(b, 1, &clock);
	uint32_t rd = ms_table_add(d, 1, &clock);
	ck_assert_int_eq(slot_of(d), (int64_t)h + 2);
	ms_table_remove(a, 0);
	ck_assert_int_eq(slot_of(b), (int64_t)h);
	ck_assert_int_eq(slot_of(d), (int64_t)h + 1);
	ck_assert_uint_eq(ms_table_find(d), rd);
}
END_TEST

START_TEST(test_table_probe_wraps_around_end_of_index)
{
	uint64_t clock = 0;
	const uint64_t last = ms_table.index_mask;
	uintptr_t a = colliding_key(last, 1), b = colliding_key(last, 2),
		  c = colliding_key(last, 3);
	uint32_t ra = ms_table_add(a, 1, &clock), rb = ms_table_add(b, 1, &clock),
		 rc = ms_table_add(c, 1, &clock);
	ck_assert_int_eq(slot_of(a), (int64_t)last);
	ck_assert_int_eq(slot_of(b), 0);
	ck_assert_int_eq(slot_of(c), 1);
	ck_assert_uint_eq(ms_table_find(b), rb);
	ck_assert_uint_eq(ms_table_find(c), rc);
	ms_table_remove(a, 0); /* b and c move back across the end */
	ck_assert_int_eq(slot_of(b), (int64_t)last);
	ck_assert_int_eq(slot_of(c), 0);
	ck_assert_uint_eq(ms_table_find(c), rc);
	ms_table_remove(c, 0);
	ms_table_remove(b, 0);
	ck_assert_uint_eq(ms_table_slot_key(last), MS_KEY_EMPTY);
	ck_assert_uint_eq(ms_table_slot_key(0), MS_KEY_EMPTY);
	ck_assert_uint_eq(ms_table_slot_key(1), MS_KEY_EMPTY);
	(void)ra;
}
END_TEST

/* Many mutexes come and go while a window of them is alive; the table must
 * never run out of slots or records. */
static void churn(uintptr_t (*key)(uint64_t), unsigned window)
{
	enum { ROUNDS = 1000000 };
	uintptr_t *live = calloc(window, sizeof *live);
	uint32_t *recs = calloc(window, sizeof *recs);
	uint64_t clock = 0;
	ck_assert_ptr_nonnull(live);
	for (uint64_t i = 0; i < ROUNDS; i++) {
		unsigned w = (unsigned)(i % window);
		if (i >= window) {
			ms_table_remove(live[w], 0);
			if (ms_table_find(live[w]) != MS_REC_NONE)
				ck_abort_msg("round %lu: removed key still found",
					     (unsigned long)i);
		}
		uintptr_t k = key(i);
		uint32_t r = ms_table_add(k, 1, &clock);
		if (r == MS_REC_UNTRACKED || r == MS_REC_NONE || r > ms_table.capacity)
			ck_abort_msg("round %lu: add gave %u (live %lu, untracked ops %lu)",
				     (unsigned long)i, r, (unsigned long)counts().live,
				     (unsigned long)counts().untracked_ops);
		if (ms_table_find(k) != r)
			ck_abort_msg("round %lu: added %u, found %u", (unsigned long)i,
				     r, ms_table_find(k));
		if (counts().live > ms_table.capacity)
			ck_abort_msg("round %lu: live %lu", (unsigned long)i,
				     (unsigned long)counts().live);
		live[w] = k;
		recs[w] = r;
		if (i % 9973 == 0 || i == ROUNDS - 1)
			for (unsigned j = 0; j < window && j <= i; j++)
				if (ms_table_find(live[j]) != recs[j])
					ck_abort_msg("round %lu: live key %u lost",
						     (unsigned long)i, j);
	}
	ck_assert_uint_eq(counts().live, window);
	ck_assert_uint_eq(counts().destroyed, ROUNDS - window);
	ck_assert_uint_eq(counts().untracked_mutexes, 0);
	ck_assert_uint_eq(counts().untracked_ops, 0);
	free(live);
	free(recs);
}

static uintptr_t sequential_key(uint64_t i)
{
	return heap_key((unsigned)i);
}

/* distinct (multiplication by an odd number is a bijection mod 2^44) */
static uintptr_t scattered_key(uint64_t i)
{
	return (uintptr_t)(0x100000u +
			   (((i * 0x9e3779b97f4a7c15ull) & ((1ull << 44) - 1)) << 3));
}

START_TEST(test_table_add_remove_million_sequential_addresses_never_runs_out)
{
	churn(sequential_key, 768);
}
END_TEST

START_TEST(test_table_add_remove_million_scattered_addresses_never_runs_out)
{
	churn(scattered_key, 768);
}
END_TEST

/* Slots a lookup of `key` reads before it can tell the key is absent. */
static unsigned miss_probes(uintptr_t key)
{
	uint64_t i = home_of(key);
	unsigned n = 0;
	while (n < MS_MAX_PROBE && ms_table_slot_key(i) != MS_KEY_EMPTY) {
		n++;
		i = (i + 1) & ms_table.index_mask;
	}
	return n;
}

/* With three quarters of the records alive while mutexes come and go, the
 * index is at 37.5% load: a lookup of an unknown address (the first use of
 * every new mutex, and every add, under the update locks) should stop at an
 * empty slot after a probe or two: removal leaves no tombstones behind. */
START_TEST(test_table_churn_near_capacity_keeps_unknown_address_lookups_short)
{
	enum { MISSES = 1000 };
	churn(scattered_key, 768);
	unsigned empty = 0, tombs = 0, total = 0;
	for (uint64_t i = 0; i <= ms_table.index_mask; i++) {
		empty += ms_table_slot_key(i) == MS_KEY_EMPTY;
		tombs += ms_table_slot_key(i) == MS_KEY_TOMB;
	}
	for (unsigned j = 0; j < MISSES; j++)
		total += miss_probes(scattered_key(2000000 + j));
	ck_assert_msg(total <= 16 * MISSES,
		      "after 1e6 add/remove with 768 of 1024 records alive: %u empty "
		      "slots, %u tombstones, %u live keys of %lu slots; a lookup of "
		      "an unknown address reads %.1f slots on average (cap %d)",
		      empty, tombs, (unsigned)counts().live,
		      (unsigned long)ms_table.index_mask + 1,
		      (double)total / MISSES, MS_MAX_PROBE);
}
END_TEST

START_TEST(test_table_add_remove_one_at_a_time_leaves_index_empty)
{
	uint64_t clock = 0;
	for (uint64_t i = 0; i < 100000; i++) {
		uintptr_t k = scattered_key(i);
		if (ms_table_add(k, 1, &clock) == MS_REC_UNTRACKED)
			ck_abort_msg("round %lu untracked", (unsigned long)i);
		ms_table_remove(k, 0);
	}
	for (uint64_t i = 0; i <= ms_table.index_mask; i++)
		if (ms_table_slot_key(i) != MS_KEY_EMPTY)
			ck_abort_msg("slot %lu not empty", (unsigned long)i);
	ck_assert_uint_eq(counts().live, 0);
}
END_TEST

/* A run longer than the two blocks an update may lock (five groups of 120
 * keys whose homes are 120 slots apart: one run over slots 256-855, three
 * blocks): removing every key, in order, must leave no tombstone. */
START_TEST(test_table_long_run_removed_leaves_no_tombstones)
{
	uint64_t clock = 0;
	enum { GROUPS = 5, PER = 120 };
	for (unsigned g = 0; g < GROUPS; g++)
		for (unsigned j = 0; j < PER; j++)
			if (ms_table_add(colliding_key(256 + 120 * g, j + 1), 1, &clock) ==
			    MS_REC_UNTRACKED)
				ck_abort_msg("group %u key %u untracked", g, j);
	for (unsigned g = 0; g < GROUPS; g++)
		for (unsigned j = 0; j < PER; j++) {
			uintptr_t k = colliding_key(256 + 120 * g, j + 1);
			ms_table_remove(k, 0);
			if (ms_table_find(k) != MS_REC_NONE)
				ck_abort_msg("group %u key %u still found", g, j);
		}
	assert_index_empty();
	ck_assert_uint_eq(counts().live, 0);
}
END_TEST

/* An index with no empty slot left (64 records, 128 slots: 64 tracked and
 * 64 untracked addresses): a destroy still returns, and the address is
 * gone. */
START_TEST(test_table_remove_from_a_full_index_returns)
{
	uint64_t clock = 0;
	for (unsigned i = 0; i < 128; i++)
		ms_table_add(heap_key(i), 1, &clock);
	for (uint64_t i = 0; i <= ms_table.index_mask; i++)
		if (ms_table_slot_key(i) <= MS_KEY_TOMB)
			ck_abort_msg("slot %lu free: the index is not full", (unsigned long)i);
	ms_table_remove(heap_key(5), 0);
	ck_assert_uint_eq(ms_table_find(heap_key(5)), MS_REC_NONE);
	ck_assert_uint_eq(counts().destroyed, 1);
	for (unsigned i = 0; i < 128; i++)
		if (i != 5 && ms_table_find(heap_key(i)) == MS_REC_NONE)
			ck_abort_msg("address %u lost", i);
}
END_TEST

START_TEST(test_table_removed_record_is_reused_with_fresh_cold_part)
{
	uint64_t clock = 0;
	uint32_t r = ms_table_add(heap_key(1), 1, &clock);
	struct ms_cold *c = ms_cold(r);
	c->wait_total = 77;
	c->errors[MS_E_BUSY] = 3;
	c->name = "old";
	ms_rec(r)->acquisitions = 5;
	ms_table_remove(heap_key(1), 0);
	uint32_t r2 = ms_table_add(heap_key(2), 1, &clock);
	ck_assert_uint_eq(r2, r);
	ck_assert_uint_eq(ms_rec(r2)->acquisitions, 0);
	ck_assert_uint_eq(ms_rec(r2)->flags, 0);
	c = ms_cold(r2);
	ck_assert_uint_eq(c->wait_total, 0);
	ck_assert_uint_eq(c->errors[MS_E_BUSY], 0);
	ck_assert_ptr_null(c->name);
	ck_assert_uint_ne(ms_rec(r2)->flags & MS_F_COLD, 0);
}
END_TEST

/* ---- walking and resetting ---------------------------------------------- */

struct seen {
	uint32_t calls;
	uintptr_t keys[128];
	uint32_t recs[128];
};

static void note_record(uintptr_t key, uint32_t r, void *arg)
{
	struct seen *s = arg;
	if (s->calls < 128) {
		s->keys[s->calls] = key;
		s->recs[s->calls] = r;
	}
	s->calls++;
}

START_TEST(test_table_each_visits_every_live_record_once)
{
	uint64_t clock = 0;
	for (unsigned i = 0; i < 64; i++)
		ms_table_add(heap_key(i), 1, &clock);
	ck_assert_uint_eq(ms_table_add(heap_key(64), 1, &clock), MS_REC_UNTRACKED);
	for (unsigned i = 0; i < 20; i += 2)
		ms_table_remove(heap_key(i), 0);  /* 10 removed */
	for (unsigned i = 100; i < 105; i++)
		ms_table_add(heap_key(i), 1, &clock); /* 5 reuse freed records */
	ck_assert_uint_eq(counts().live, 59);

	struct seen s = { 0 };
	ms_table_each(note_record, &s);
	ck_assert_uint_eq(s.calls, 59);
	for (unsigned i = 0; i < s.calls; i++) {
		ck_assert_uint_eq(ms_table_find(s.keys[i]), s.recs[i]);
		ck_assert_uint_ne(s.keys[i], heap_key(64)); /* not the untracked */
		for (unsigned j = 0; j < i; j++)
			ck_assert_uint_ne(s.keys[i], s.keys[j]);
	}
}
END_TEST

/* Two lock orders a thread takes every time whose edges share a slot of
 * its edge cache both stay known (a two-way cache): one-way, each put the
 * other out, and both were looked up in the graph, gates and all, at
 * every lock -- a thread taking twenty mutexes in a row had such a pair
 * in about half of all runs. */
START_TEST(test_table_edges_sharing_a_cache_slot_both_stay_known)
{
	static struct ms_tstate t_ts;
	struct ms_thread t = { .ok = 1, .tid = 1234, .tid_held = 1234 | MS_HELD, .ts = &t_ts };
	uint64_t clock = 0;
	ck_assert_int_eq(ms_depot_init(1u << 20), 0);
	enum { N = 64 };
	uint32_t r[N];
	for (unsigned i = 0; i < N; i++)
		r[i] = ms_table_add(heap_key(i), 1, &clock);
	/* a1->b1 and another edge a2->b2 with the same slot */
	uint32_t a1 = r[0], b1 = r[1], a2 = 0, b2 = 0;
	unsigned s = ms_edge_slot(a1, b1);
	for (unsigned i = 2; i < N && !a2; i++)
		for (unsigned j = 2; j < N && !a2; j++)
			if (i != j && ms_edge_slot(r[i], r[j]) == s) {
				a2 = r[i];
				b2 = r[j];
			}
	ck_assert_uint_ne(a2, 0);

	for (int round = 0; round < 2; round++) {
		ms_acquired(&t, a1, NULL, CALLER_A, MS_OP_LOCK, 0, 0, 0);
		ms_acquired(&t, b1, NULL, CALLER_B, MS_OP_LOCK, 0, 0, 0);
		ms_released(&t, b1, NULL, CALLER_B, MS_OP_UNLOCK);
		ms_released(&t, a1, NULL, CALLER_A, MS_OP_UNLOCK);
		ms_acquired(&t, a2, NULL, CALLER_A, MS_OP_LOCK, 0, 0, 0);
		ms_acquired(&t, b2, NULL, CALLER_B, MS_OP_LOCK, 0, 0, 0);
		ms_released(&t, b2, NULL, CALLER_B, MS_OP_UNLOCK);
		ms_released(&t, a2, NULL, CALLER_A, MS_OP_UNLOCK);
	}
	ck_assert_uint_eq(t_ts.nheld, 0);
	ms_acquired(&t, a1, NULL, CALLER_A, MS_OP_LOCK, 0, 0, 0);
	ck_assert_int_eq(ms_order_known(&t_ts, b1), 1);
	ms_released(&t, a1, NULL, CALLER_A, MS_OP_UNLOCK);
	ms_acquired(&t, a2, NULL, CALLER_A, MS_OP_LOCK, 0, 0, 0);
	ck_assert_int_eq(ms_order_known(&t_ts, b2), 1);
	ck_assert_int_eq(ms_order_known(&t_ts, b1), 0); /* never taken after a2 */
	ms_released(&t, a2, NULL, CALLER_A, MS_OP_UNLOCK);
	struct ms_order_stats st;
	ms_order_stats(&st);
	ck_assert_uint_eq(st.edges, 2);
}
END_TEST

START_TEST(test_table_reset_zeroes_numbers_keeps_identity_and_ownership)
{
	static struct ms_tstate t_ts;
	struct ms_thread t = { .ok = 1, .tid = 1234, .tid_held = 1234 | MS_HELD, .ts = &t_ts };
	uint64_t clock = 0;
	uint32_t r = ms_table_add(heap_key(1), 1, &clock);
	uint32_t gone = ms_table_add(heap_key(2), 1, &clock);
	lock_unlock(&t, gone, CALLER_B, 1);
	ms_table_remove(heap_key(2), 0); /* leaves a site line */
	lock_unlock(&t, r, CALLER_A, 3);
	ms_acquired(&t, r, NULL, CALLER_A, MS_OP_LOCK, 0, 0, 0); /* held across reset */
	struct ms_record *rec = ms_rec(r);
	ms_cold(r)->contended = 4;
	rec->flags |= MS_F_STATIC | 3u << MS_F_KIND_SHIFT;
	ms_cold(r)->name = "db lock";
	ms_cold(r)->wait_total = 99;
	ck_assert_uint_eq(ms_table.nsites, 1);

	ms_table_reset();
	ck_assert_uint_eq(rec->acquisitions, 0);
	ck_assert_uint_eq(ms_cold(r)->contended, 0);
	ck_assert_uint_eq(rec->owner_changes, 0);
	ck_assert_uint_eq(rec->owner, 1234 | MS_HELD);
	ck_assert_uint_eq(rec->first_caller, CALLER_A);
	ck_assert_uint_eq(rec->flags & MS_F_STATIC, MS_F_STATIC);
	ck_assert_uint_eq(rec->flags >> MS_F_KIND_SHIFT, 3);
	ck_assert_str_eq(ms_cold(r)->name, "db lock");
	ck_assert_uint_eq(ms_cold(r)->wait_total, 0);
	ck_assert_uint_eq(ms_table.nsites, 0);
	ck_assert_uint_eq(counts().destroyed, 0);
	ck_assert_uint_eq(counts().live, 1);
	ck_assert_uint_eq(ms_table_find(heap_key(1)), r);

	/* the unlock after the reset is the same owner's: no owner change */
	ms_released(&t, r, NULL, CALLER_A, MS_OP_UNLOCK);
	lock_unlock(&t, r, CALLER_A, 1);
	ck_assert_uint_eq(rec->acquisitions, 1);
	ck_assert_uint_eq(rec->owner_changes, 0);
}
END_TEST

/* ---- lives and sites ---------------------------------------------------- */

/* The operations of a site line's newest life that waited, failed or was
 * named (ms_site_history_read): "op@caller" of each, oldest first. */
static const char *site_ops(uintptr_t site)
{
	static char out[1024];
	struct ms_op_view v[16 + MS_FAIL_RING];
	uint32_t first, torn, n = 0;
	for (uint32_t i = 0; i < ms_table.nsites; i++)
		if (ms_table.sites[i].site == site)
			n = ms_site_history_read(&ms_table.sites[i], v, &first, &torn);
	out[0] = 0;
	for (uint32_t i = first; i < n; i++)
		snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s@%lx",
			 i > first ? "," : "", ms_op_name(v[i].op), (unsigned long)v[i].caller);
	return out;
}

START_TEST(test_table_site_keeps_history_of_newest_cold_life)
{
	static struct ms_tstate t_ts;
	struct ms_thread t = { .ok = 1, .tid = 1234, .tid_held = 1234 | MS_HELD, .ts = &t_ts };
	ck_assert_int_eq(ms_depot_init(1 << 20), 0);
	uint64_t clock = 0;
	const uintptr_t key = heap_key(7);
	/* a life of 40 operations (its ring of 16 wrapped) with a cold part */
	uint32_t r = ms_table_add(key, 1, &clock);
	lock_unlock(&t, r, CALLER_A, 19);
	lock_unlock(&t, r, CALLER_B, 1);
	ms_cold(r)->trylock_busy = 1;
	ms_table_remove(key, 0);
	char want[1024] = "";
	for (int i = 0; i < 7; i++)
		strcat(want, "lock@401000,unlock@401000,");
	strcat(want, "lock@402000,unlock@402000");
	ck_assert_str_eq(site_ops(CALLER_A), want);
	/* a life without a cold part leaves the copy as it was */
	r = ms_table_add(key, 1, &clock);
	lock_unlock(&t, r, CALLER_A, 2);
	ms_table_remove(key, 0);
	ck_assert_str_eq(site_ops(CALLER_A), want);
	/* the next cold one replaces it: its own operations only */
	r = ms_table_add(key, 1, &clock);
	lock_unlock(&t, r, CALLER_A, 1);
	ms_cold(r)->trylock_busy = 1;
	ms_table_remove(key, 0);
	ck_assert_str_eq(site_ops(CALLER_A), "lock@401000,unlock@401000");
}
END_TEST

START_TEST(test_table_init_of_known_address_starts_from_zero_and_folds_old_life)
{
	static struct ms_tstate t_ts;
	struct ms_thread t = { .ok = 1, .tid = 1234, .tid_held = 1234 | MS_HELD, .ts = &t_ts };
	static struct ms_tstate u_ts;
	struct ms_thread u = { .ok = 1, .tid = 4321, .tid_held = 4321 | MS_HELD, .ts = &u_ts };
	uint64_t clock = 0;
	const uintptr_t key = heap_key(5);
	uint32_t r = ms_table_add(key, 1, &clock);
	struct ms_record *rec = ms_rec(r);
	uint64_t birth1 = rec->birth;

	lock_unlock(&t, r, CALLER_A, 3);
	lock_unlock(&u, r, CALLER_B, 1);
	ms_cold(r)->contended = 2;
	struct ms_cold *c = ms_cold(r);
	c->wait_total = 500;
	c->wait_max = 300;
	c->errors[MS_E_BUSY] = 1;
	c->hist[3] = 2;
	rec->flags |= MS_F_TIMED; /* as the waits that got it made it */
	ck_assert_uint_eq(rec->acquisitions, 4);
	ck_assert_uint_eq(rec->owner_changes, 1);
	ck_assert_uint_eq(rec->first_caller, CALLER_A);
	uint64_t last_order = ms_mutex_order(r, rec);
	uint32_t last_pos = rec->ops - 1; /* the old life's last entry */

	ck_assert_uint_eq(ms_table_add(key, 1, &clock), r);
	ck_assert_uint_eq(counts().reinitialised, 1);
	ck_assert_uint_eq(counts().live, 1);
	ck_assert_uint_eq(counts().destroyed, 0);
	/* the new life starts from zero ... */
	ck_assert_uint_eq(rec->acquisitions, 0);
	ck_assert_uint_eq(rec->owner_changes, 0);
	ck_assert_uint_eq(rec->first_caller, 0);
	ck_assert_uint_eq(rec->owner, 0);
	ck_assert_uint_eq(rec->flags, 0);
	ck_assert_uint_eq(ms_cold(r)->contended, 0);
	ck_assert_uint_eq(ms_cold(r)->wait_total, 0);
	ck_assert_uint_eq(ms_cold(r)->errors[MS_E_BUSY], 0);
	/* ... after everything of the old one */
	ck_assert_uint_gt(rec->birth, birth1);
	ck_assert_uint_gt(rec->birth, last_order);
	struct ms_op_view v;
	ms_op_read(ms_history_at(r, last_pos), ms_history_ticks(ms_history_at(r, last_pos)), &v);
	ck_assert_int_eq(v.state, 1);
	ck_assert_uint_eq(v.order, last_order);
	ck_assert_uint_lt(v.order, rec->birth); /* told apart as stale */

	/* the old life is in its first caller's site line */
	ck_assert_uint_eq(ms_table.nsites, 1);
	const struct ms_site *s = site_line(CALLER_A);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(s->mutexes, 1);
	ck_assert_uint_eq(s->acquisitions, 4);
	ck_assert_uint_eq(s->contended, 2);
	ck_assert_uint_eq(s->owner_changes, 1);
	ck_assert_uint_eq(s->wait_total, 500);
	ck_assert_uint_eq(s->wait_max, 300);
	ck_assert_uint_eq(s->errors[MS_E_BUSY], 1);
	ck_assert_uint_eq(s->hist[3], 2);

	/* a first use (no birth) of the known address keeps the new life */
	lock_unlock(&t, r, CALLER_C, 2);
	ck_assert_uint_eq(ms_table_add(key, 0, &clock), r);
	ck_assert_uint_eq(rec->acquisitions, 2);
	ck_assert_uint_eq(counts().reinitialised, 1);
}
END_TEST

START_TEST(test_table_lives_with_same_first_caller_fold_into_one_site)
{
	static struct ms_tstate t_ts;
	struct ms_thread t = { .ok = 1, .tid = 1234, .tid_held = 1234 | MS_HELD, .ts = &t_ts };
	uint64_t clock = 0;
	uint32_t r;

	r = ms_table_add(heap_key(1), 1, &clock);
	lock_unlock(&t, r, CALLER_C, 3);
	ms_table_remove(heap_key(1), 0);

	r = ms_table_add(heap_key(2), 1, &clock);
	lock_unlock(&t, r, CALLER_C, 1);
	lock_unlock(&t, r, CALLER_D, 3); /* not the first caller */
	ms_table_remove(heap_key(2), 0);

	r = ms_table_add(heap_key(3), 1, &clock);
	lock_unlock(&t, r, CALLER_D, 2);
	ms_table_remove(heap_key(3), 0);

	ms_table_add(heap_key(4), 1, &clock); /* never locked */
	ms_table_remove(heap_key(4), 0);

	ck_assert_uint_eq(counts().destroyed, 4);
	ck_assert_uint_eq(counts().live, 0);
	ck_assert_uint_eq(ms_table.nsites, 3);
	const struct ms_site *c = site_line(CALLER_C), *d = site_line(CALLER_D),
			     *none = site_line(0);
	ck_assert_ptr_nonnull(c);
	ck_assert_ptr_nonnull(d);
	ck_assert_ptr_nonnull(none);
	ck_assert_uint_eq(c->mutexes, 2);
	ck_assert_uint_eq(c->acquisitions, 7);
	ck_assert_uint_eq(d->mutexes, 1);
	ck_assert_uint_eq(d->acquisitions, 2);
	ck_assert_uint_eq(none->mutexes, 1);
	ck_assert_uint_eq(none->acquisitions, 0);
}
END_TEST

START_TEST(test_table_recursive_relock_is_not_an_owner_change)
{
	static struct ms_tstate t_ts;
	struct ms_thread t = { .ok = 1, .tid = 1234, .tid_held = 1234 | MS_HELD, .ts = &t_ts };
	static struct ms_tstate u_ts;
	struct ms_thread u = { .ok = 1, .tid = 99, .tid_held = 99 | MS_HELD, .ts = &u_ts };
	uint64_t clock = 0;
	uint32_t r = ms_table_add(heap_key(1), 1, &clock);
	ms_acquired(&t, r, NULL, CALLER_A, MS_OP_LOCK, 0, 0, 0);
	ms_acquired(&t, r, NULL, CALLER_B, MS_OP_LOCK, 0, 0, 0); /* recursive */
	ms_released(&t, r, NULL, CALLER_B, MS_OP_UNLOCK);
	ms_acquired(&t, r, NULL, CALLER_B, MS_OP_LOCK, 0, 0, 0); /* same owner again */
	ms_released(&t, r, NULL, CALLER_B, MS_OP_UNLOCK);
	ms_acquired(&u, r, NULL, CALLER_B, MS_OP_LOCK, 0, 0, 0); /* new owner */
	ck_assert_uint_eq(ms_rec(r)->acquisitions, 4);
	ck_assert_uint_eq(ms_rec(r)->owner_changes, 1);
	ck_assert_uint_eq(ms_rec(r)->owner, 99 | MS_HELD);
	ck_assert_uint_eq(ms_rec(r)->first_caller, CALLER_A);
	ck_assert_uint_eq(ms_rec(r)->ops, 6);
}
END_TEST

START_TEST(test_table_holds_timed_first_4096_then_one_in_16)
{
	static struct ms_tstate t_ts;
	struct ms_thread t = { .ok = 1, .tid = 1234, .tid_held = 1234 | MS_HELD, .ts = &t_ts };
	uint64_t clock = 0;
	uint32_t r = ms_table_add(heap_key(1), 1, &clock);
	lock_unlock(&t, r, CALLER_A, 10); /* not timed: it never made anyone wait */
	ck_assert_uint_eq(ms_cold(r)->holds, 0);
	ms_rec(r)->flags |= MS_F_TIMED;   /* as after a wait */
	/* acquisitions 11..4096 are each timed, then 4097, 4113, ... */
	lock_unlock(&t, r, CALLER_A, 4086);
	ck_assert_uint_eq(ms_cold(r)->holds, 4086);
	lock_unlock(&t, r, CALLER_A, 16 * 100);
	ck_assert_uint_eq(ms_cold(r)->holds, 4086 + 100);
	ck_assert_uint_eq(ms_rec(r)->acquisitions, 10 + 4086 + 1600);
	/* a recursive level inside a timed hold is part of that hold */
	ms_acquired(&t, r, NULL, CALLER_A, MS_OP_LOCK, 0, 0, 0); /* 5697: timed */
	ms_acquired(&t, r, NULL, CALLER_B, MS_OP_LOCK, 0, 0, 0);
	ck_assert_uint_eq(t_ts.nheld, 1);
	ck_assert_uint_ne(t_ts.held[0].since, 0);
	ms_released(&t, r, NULL, CALLER_A, MS_OP_UNLOCK);
	ck_assert_uint_eq(ms_cold(r)->holds, 4186 + 1);
	ck_assert_uint_eq(t_ts.nheld, 0);
	ck_assert_uint_eq(t_ts.held[0].since, 0);
	ck_assert_uint_eq(ms_rec(r)->flags & MS_F_HOLD_TIMED, 0);
}
END_TEST

/* ---- the hash ----------------------------------------------------------- */

START_TEST(test_table_hash_adds_scattered_high_bits_to_address)
{
	const uintptr_t keys[] = {
		0, 8, 0x1000, 0x55d4c0a01230u, 0x7ffd3c2a9e58u,
		(uintptr_t)0xffffffffffffffffull,
	};
	unsigned sh = ms_table.index_shift;
	ck_assert_uint_eq(sh, (unsigned)__builtin_ctzll(ms_table.index_mask + 1));
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
		uint64_t k = keys[i] >> 3, high = k >> sh;
		/* bit 2 (a 4-byte spin lock between two others): half the
		 * index further */
		uint64_t odd = keys[i] & 4 ? (ms_table.index_mask + 1) / 2 : 0;
		ck_assert_uint_eq(ms_hash(keys[i]),
				  k + ((high * 0x9e3779b97f4a7c15ull) >> 32) + odd);
	}
	/* every bit of the address counts: one bit flipped anywhere in bits
	 * 2..47 moves the home */
	for (unsigned b = 2; b < 48; b++)
		ck_assert_uint_ne(home_of(0x55d4c0a01230u),
				  home_of(0x55d4c0a01230u ^ ((uintptr_t)1 << b)));
	/* neighbouring mutexes land in neighbouring slots */
	ck_assert_uint_eq(ms_hash(0x55d4c0a01238u), ms_hash(0x55d4c0a01230u) + 1);
	/* two spin locks in one 8 bytes, each a home of its own, and the
	 * next pair's beside theirs */
	ck_assert_uint_ne(home_of(0x55d4c0a01230u), home_of(0x55d4c0a01234u));
	ck_assert_uint_eq(ms_hash(0x55d4c0a0123cu), ms_hash(0x55d4c0a01234u) + 1);
}
END_TEST

/* An array of 40-byte mutexes walked in order walks the index in order
 * (slots 5 apart) except where the address crosses into the next reach of
 * the index (2^(s+3) bytes: the fold changes), so the CPU's prefetcher
 * follows it.  XORing the fold onto the low bits instead jumped at 87,583
 * of these 100,000 steps (a million mutexes missed the cache at nearly
 * every probe). */
START_TEST(test_table_hash_keeps_an_array_in_order)
{
	const unsigned n = 100000, stride = 40;
	const uint64_t reach = (uint64_t)8 << ms_table.index_shift; /* bytes */
	unsigned jumps = 0;
	for (unsigned i = 1; i < n; i++) {
		uintptr_t a = (uintptr_t)0x7f3a12345010u + (uintptr_t)i * stride;
		if (home_of(a) != ((home_of(a - stride) + stride / 8) & ms_table.index_mask))
			jumps++;
	}
	ck_assert_uint_le(jumps, (uint64_t)n * stride / reach + 1);
	ck_assert_uint_gt(jumps, 0); /* the fold does change */
}
END_TEST

/* Mutexes a power of two apart, as many as the table holds, get homes
 * enough: one per 8 KiB object (an allocator's size class), per 4 KiB
 * page, per 2 KiB.  A fold XORed onto the index's upper half only left
 * the low bits to the address alone: 8 KiB apart, 12,000 mutexes had 256
 * homes in this table and thousands went untracked. */
START_TEST(test_table_power_of_two_strides_spread)
{
	static const unsigned strides[] = { 8192, 4096, 2048, 65536 };
	enum { N = 12000 };
	for (unsigned s = 0; s < sizeof strides / sizeof *strides; s++) {
		table_init(16384, 16);
		uint64_t clock = 0;
		const uintptr_t base = (uintptr_t)0x7f3a12340000u;
		for (unsigned i = 0; i < N; i++)
			ms_table_add(base + (uintptr_t)i * strides[s], 1, &clock);
		uint64_t dist = 0;
		for (uint64_t i = 0; i <= ms_table.index_mask; i++) {
			uintptr_t k = ms_table_slot_key(i);
			if (k != MS_KEY_EMPTY && k != MS_KEY_TOMB)
				dist += (i - home_of(k)) & ms_table.index_mask;
		}
		ck_assert_msg(counts().live == N && counts().untracked_ops == 0,
			      "stride %u: %u of %u tracked", strides[s],
			      (unsigned)counts().live, N);
		ck_assert_msg(dist <= 4 * (uint64_t)N, "stride %u: mean probe %.1f",
			      strides[s], (double)dist / N);
	}
}
END_TEST

/* Dense pools of mutexes a power of two apart, further than the index
 * reaches: each thread's malloc arena (64 MiB-aligned heaps), thread
 * stacks (8 MiB), 2 MiB pages, with mutexes 48 bytes apart in each.  A
 * hash whose part from the high bits was a small number (their XOR fold,
 * added) put every pool in nearly the same stretch of the index: 16
 * pools of 750 left 4,770 mutexes with no room in a table of 16,384
 * records, 64 pools of 150 2 MiB apart 8,273 of 9,600. */
START_TEST(test_table_pools_a_power_of_two_apart_all_tracked)
{
	static const struct {
		unsigned pools, each;
		uint64_t spacing;
	} cases[] = {
		{ 16, 750, (uint64_t)64 << 20 },
		{ 64, 150, (uint64_t)8 << 20 },
		{ 64, 150, (uint64_t)2 << 20 },
		{ 12, 1000, (uint64_t)1 << 30 },
	};
	for (unsigned c = 0; c < sizeof cases / sizeof *cases; c++) {
		table_init(16384, 16);
		uint64_t clock = 0;
		const uintptr_t base = (uintptr_t)0x7f3a08000000u + 0x8b0;
		for (unsigned j = 0; j < cases[c].each; j++)
			for (unsigned p = 0; p < cases[c].pools; p++)
				ms_table_add(base + (uintptr_t)(p * cases[c].spacing) +
						     (uintptr_t)j * 48, 1, &clock);
		unsigned want = cases[c].pools * cases[c].each;
		uint64_t dist = 0;
		for (uint64_t i = 0; i <= ms_table.index_mask; i++) {
			uintptr_t k = ms_table_slot_key(i);
			if (k != MS_KEY_EMPTY && k != MS_KEY_TOMB)
				dist += (i - home_of(k)) & ms_table.index_mask;
		}
		ck_assert_msg(counts().live == want && counts().untracked_ops == 0,
			      "%u pools %llu bytes apart: %u of %u tracked",
			      cases[c].pools, (unsigned long long)cases[c].spacing,
			      (unsigned)counts().live, want);
		ck_assert_msg(dist <= 4 * (uint64_t)want, "%u pools: mean probe %.1f",
			      cases[c].pools, (double)dist / want);
	}
}
END_TEST

#define SPREAD_HEAP 10000
#define SPREAD_STATIC 1000
#define SPREAD_STACKS 64

static pthread_mutex_t spread_statics[SPREAD_STATIC];
static pthread_barrier_t spread_ready, spread_done;
static uintptr_t spread_stack_keys[SPREAD_STACKS];

static void *spread_stack_thread(void *arg)
{
	pthread_mutex_t m;
	pthread_mutex_init(&m, NULL);
	spread_stack_keys[(uintptr_t)arg] = (uintptr_t)&m;
	pthread_barrier_wait(&spread_ready);
	pthread_barrier_wait(&spread_done); /* keep the frame while it is used */
	pthread_mutex_destroy(&m);
	return NULL;
}

START_TEST(test_table_hash_spreads_heap_static_and_stack_mutexes)
{
	enum { KEYS = SPREAD_HEAP + SPREAD_STATIC + SPREAD_STACKS };
	static pthread_mutex_t *heap[SPREAD_HEAP];
	pthread_t th[SPREAD_STACKS];
	uint64_t clock = 0;

	for (unsigned i = 0; i < SPREAD_HEAP; i++) {
		heap[i] = malloc(sizeof *heap[i]);
		ck_assert_ptr_nonnull(heap[i]);
		pthread_mutex_init(heap[i], NULL);
	}
	pthread_barrier_init(&spread_ready, NULL, SPREAD_STACKS + 1);
	pthread_barrier_init(&spread_done, NULL, SPREAD_STACKS + 1);
	for (unsigned i = 0; i < SPREAD_STACKS; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, spread_stack_thread,
						(void *)(uintptr_t)i), 0);
	pthread_barrier_wait(&spread_ready);

	for (unsigned i = 0; i < SPREAD_HEAP; i++)
		ms_table_add((uintptr_t)heap[i], 1, &clock);
	for (unsigned i = 0; i < SPREAD_STATIC; i++)
		ms_table_add((uintptr_t)&spread_statics[i], 1, &clock);
	for (unsigned i = 0; i < SPREAD_STACKS; i++)
		ms_table_add(spread_stack_keys[i], 1, &clock);

	ck_assert_uint_eq(counts().untracked_ops, 0);
	ck_assert_uint_eq(counts().untracked_mutexes, 0);
	ck_assert_uint_eq(counts().live, KEYS);

	/* Longest probe run: the farthest any key sits from its home slot. */
	static uint8_t home_used[2 * 16384];
	uint64_t max_dist = 0, total_dist = 0, homes = 0, keys = 0;
	ck_assert_uint_eq(ms_table.index_mask + 1, sizeof home_used);
	for (uint64_t i = 0; i <= ms_table.index_mask; i++) {
		uintptr_t k = ms_table_slot_key(i);
		if (k == MS_KEY_EMPTY || k == MS_KEY_TOMB)
			continue;
		uint64_t h = home_of(k);
		uint64_t d = (i - h) & ms_table.index_mask;
		if (d > max_dist)
			max_dist = d;
		total_dist += d;
		keys++;
		if (!home_used[h]) {
			home_used[h] = 1;
			homes++;
		}
	}
	if (getenv("MS_TEST_VERBOSE"))
		fprintf(stderr, "hash spread: %lu keys, %lu homes, max probe %lu, "
			"mean probe %.3f\n", (unsigned long)keys,
			(unsigned long)homes, (unsigned long)max_dist,
			(double)total_dist / (double)keys);
	ck_assert_uint_eq(keys, KEYS);
	ck_assert_uint_le(max_dist, 16);
	ck_assert_uint_le(total_dist, 2 * keys); /* mean distance at most 2 */
	/* glibc's malloc gives ~98% distinct homes; allocators with 64-byte
	 * size classes (ASan's, for one) alias every eighth slot and give
	 * ~45%; a hash that sends everything to a few slots gives ~0. */
	ck_assert_uint_ge(homes, KEYS / 4);

	/* every key is found where the scan put it */
	for (unsigned i = 0; i < SPREAD_HEAP; i++)
		if (ms_table_find((uintptr_t)heap[i]) == MS_REC_NONE)
			ck_abort_msg("heap mutex %u not found", i);
	for (unsigned i = 0; i < SPREAD_STACKS; i++)
		ck_assert_uint_ne(ms_table_find(spread_stack_keys[i]), MS_REC_NONE);

	pthread_barrier_wait(&spread_done);
	for (unsigned i = 0; i < SPREAD_STACKS; i++)
		pthread_join(th[i], NULL);
	for (unsigned i = 0; i < SPREAD_HEAP; i++) {
		pthread_mutex_destroy(heap[i]);
		free(heap[i]);
	}
}
END_TEST

/* Objects a page each (a mutex at the start of each 4 KiB-aligned block:
 * per-page or per-CPU structures, pool entries, mmap'd slabs).  With the
 * table far from full (10,000 of 16,384 records), every one must be
 * tracked.  A hash that kept only bits 3..15 of such addresses as the
 * home (index of 32,768 slots) gave homes 512 slots apart: 64 distinct
 * homes for 10,000 mutexes, ~156 per home, more than a probe run may be
 * long (MS_MAX_PROBE). */
START_TEST(test_table_page_strided_mutexes_all_tracked)
{
	enum { N = 10000, STRIDE = 4096 };
	uint64_t clock = 0;
	/* real addresses, never touched: the table only stores them */
	char *area = mmap(NULL, (size_t)N * STRIDE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ck_assert_ptr_ne(area, MAP_FAILED);
	for (unsigned i = 0; i < N; i++)
		ms_table_add((uintptr_t)(area + (size_t)i * STRIDE), 1, &clock);
	uint64_t untracked = counts().untracked_ops;
	unsigned live = counts().live;
	munmap(area, (size_t)N * STRIDE);
	ck_assert_msg(untracked == 0 && live == N,
		      "%u of %u page-strided mutexes tracked, %lu left untracked "
		      "for want of a slot near their home (table of %u records)",
		      live, N, (unsigned long)untracked, ms_table.capacity);
}
END_TEST

/* ---- the suite ---------------------------------------------------------- */

Suite *table_suite(void)
{
	Suite *s = suite_create("table");
	TCase *tc;

	tc = tcase_create("basic");
	tcase_add_checked_fixture(tc, setup_1024, NULL);
	tcase_add_test(tc, test_table_find_unknown_address_is_none);
	tcase_add_test(tc, test_table_add_then_find_returns_same_record);
	tcase_add_test(tc, test_table_name_waits_for_the_first_record);
	tcase_add_test(tc, test_table_remove_ends_life_and_counts_destroyed);
	tcase_add_test(tc, test_table_remove_unknown_address_changes_nothing);
	tcase_add_test(tc, test_table_remove_shifts_the_probe_run_back);
	tcase_add_test(tc, test_table_remove_leaves_keys_at_their_home_in_place);
	tcase_add_test(tc, test_table_probe_wraps_around_end_of_index);
	tcase_add_test(tc, test_table_removed_record_is_reused_with_fresh_cold_part);
	tcase_add_test(tc, test_table_hash_adds_scattered_high_bits_to_address);
	tcase_add_test(tc, test_table_hash_keeps_an_array_in_order);
	suite_add_tcase(s, tc);

	tc = tcase_create("lives");
	tcase_add_checked_fixture(tc, setup_1024, NULL);
	tcase_add_test(tc, test_table_init_of_known_address_starts_from_zero_and_folds_old_life);
	tcase_add_test(tc, test_table_site_keeps_history_of_newest_cold_life);
	tcase_add_test(tc, test_table_lives_with_same_first_caller_fold_into_one_site);
	tcase_add_test(tc, test_table_recursive_relock_is_not_an_owner_change);
	tcase_add_test(tc, test_table_holds_timed_first_4096_then_one_in_16);
	tcase_add_test(tc, test_table_reset_zeroes_numbers_keeps_identity_and_ownership);
	suite_add_tcase(s, tc);

	tc = tcase_create("full");
	tcase_add_checked_fixture(tc, setup_64, NULL);
	tcase_add_test(tc, test_table_full_table_leaves_next_address_untracked);
	tcase_add_test(tc, test_table_remove_from_a_full_index_returns);
	tcase_add_test(tc, test_table_full_table_remove_makes_room_again);
	tcase_add_test(tc, test_table_untracked_addresses_move_with_their_slots);
	tcase_add_test(tc, test_table_each_visits_every_live_record_once);
	suite_add_tcase(s, tc);

	tc = tcase_create("churn");
	tcase_add_checked_fixture(tc, setup_1024, NULL);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_table_add_remove_million_sequential_addresses_never_runs_out);
	tcase_add_test(tc, test_table_add_remove_million_scattered_addresses_never_runs_out);
	tcase_add_test(tc, test_table_add_remove_one_at_a_time_leaves_index_empty);
	tcase_add_test(tc, test_table_churn_near_capacity_keeps_unknown_address_lookups_short);
	suite_add_tcase(s, tc);

	tc = tcase_create("concurrent");
	tcase_add_checked_fixture(tc, setup_8192, NULL);
	tcase_set_timeout(tc, 120);
	/* each run is a fresh child: ten chances to catch a race */
	tcase_add_loop_test(tc, test_table_concurrent_insert_no_key_lost_or_doubled,
			    0, 10);
	tcase_add_test(tc, test_table_concurrent_churn_across_blocks_keeps_index_exact);
	suite_add_tcase(s, tc);

	/* a table large enough that spares go out in batches (a table near
	 * full hands them out one at a time) */
	tc = tcase_create("batches");
	tcase_add_checked_fixture(tc, setup_16384, NULL);
	tcase_add_test(tc, test_table_records_go_out_in_the_pools_order);
	tcase_add_test(tc, test_table_index_stretch_resident_at_its_64th_insert);
	tcase_add_test(tc, test_table_threads_new_records_share_no_line);
	tcase_add_test(tc, test_table_edges_sharing_a_cache_slot_both_stay_known);
	suite_add_tcase(s, tc);

	tc = tcase_create("huge");
	tcase_add_checked_fixture(tc, setup_65536, NULL);
	tcase_add_test(tc, test_table_huge_pages_only_where_filled_in_order);
	suite_add_tcase(s, tc);

	tc = tcase_create("spread");
	tcase_add_checked_fixture(tc, setup_16384, NULL);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_table_hash_spreads_heap_static_and_stack_mutexes);
	tcase_add_test(tc, test_table_long_run_removed_leaves_no_tombstones);
	tcase_add_test(tc, test_table_page_strided_mutexes_all_tracked);
	tcase_add_test(tc, test_table_power_of_two_strides_spread);
	tcase_add_test(tc, test_table_pools_a_power_of_two_apart_all_tracked);
	suite_add_tcase(s, tc);

	return s;
}
