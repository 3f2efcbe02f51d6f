/* test_depot.c - the stack depot (lib/stacks/depot.c) and the blame lines kept in
 * its memory (lib/analysis/blame.c): one id per distinct frame array, the frames
 * back from an id, the counts ms_depot_stats gives, what happens when the
 * budget is spent (refused puts counted as dropped, stored stacks still
 * found), concurrent puts, and waits summed per (mutex life, kind, stack).
 *
 * Every test runs in its own forked child (see main.c) and maps a fresh
 * depot with ms_depot_init, so tests never see each other's stacks.  No
 * stack is captured here: the frames are made-up addresses. */
#include "analysis/ended.h"
#include "suites.h"

#include "analysis/blame.h"
#include "base/address_space.h"
#include "base/pages.h"
#include "stacks/depot.h"
#include "core/table.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MIB (1024 * 1024)

/* Frames that look like return addresses in a program's text. */
#define TEXT ((uintptr_t)0x55d4c0a01000u)

/* Stack number i, n frames long: frames differ from those of any other i. */
static void make_stack(uintptr_t *frames, unsigned i, int n)
{
	for (int k = 0; k < n; k++)
		frames[k] = TEXT + (uintptr_t)i * 0x1000 + (uintptr_t)k * 0x10;
}

static void depot_init(size_t budget)
{
	ck_assert_int_eq(ms_depot_init(budget), 0);
}

static struct ms_depot_stats stats(void)
{
	struct ms_depot_stats st;
	ms_depot_stats(&st);
	return st;
}

/* ---- ids ----------------------------------------------------------------- */

START_TEST(test_depot_same_frames_same_id)
{
	depot_init(MIB);
	uintptr_t a[8], copy[8];
	make_stack(a, 1, 8);
	memcpy(copy, a, sizeof a);
	ms_stack_id id = ms_depot_put(a, 8);
	ck_assert_uint_ne(id, 0);
	ck_assert_uint_eq(ms_depot_put(a, 8), id);
	ck_assert_uint_eq(ms_depot_put(copy, 8), id); /* by value, not address */
	struct ms_depot_stats st = stats();
	ck_assert_uint_eq(st.stacks, 1);
	ck_assert_uint_eq(st.puts, 3);
	ck_assert_uint_eq(st.dropped, 0);
}
END_TEST

/* A caller's memory of its last stack gives that id only for the same
 * frames, every one compared; any other goes to the depot, and so does
 * any memory that names no stack or another one. */
START_TEST(test_depot_put_again_takes_the_last_id_for_the_same_frames_only)
{
	depot_init(MIB);
	uintptr_t a[8], last_differs[8], prefix[7], longer[9];
	make_stack(a, 1, 8);
	memcpy(last_differs, a, sizeof a);
	last_differs[7] ^= 0x10;
	memcpy(prefix, a, sizeof prefix);
	memcpy(longer, a, sizeof a);
	longer[8] = TEXT + 0x99990;
	ms_stack_id last = 0;
	ms_stack_id id = ms_depot_put_again(a, 8, &last);
	ck_assert_uint_ne(id, 0);
	ck_assert_uint_eq(last, id);
	ck_assert_uint_eq(ms_depot_put_again(a, 8, &last), id);
	ms_stack_id others[3] = {
		ms_depot_put_again(last_differs, 8, &last),
		ms_depot_put_again(prefix, 7, &last),
		ms_depot_put_again(longer, 9, &last),
	};
	for (int i = 0; i < 3; i++) {
		ck_assert_uint_ne(others[i], 0);
		ck_assert_uint_ne(others[i], id);
	}
	ck_assert_uint_eq(last, others[2]);
	ck_assert_uint_eq(ms_depot_put(longer, 9), others[2]);
	ck_assert_uint_eq(ms_depot_put_again(a, 8, &last), id);
	ck_assert_uint_eq(ms_depot_put_again(a, 0, &last), 0); /* no frames */
	ck_assert_uint_eq(last, id);
	last = 12345; /* no such stack */
	ck_assert_uint_eq(ms_depot_put_again(a, 8, &last), id);
	ck_assert_uint_eq(last, id);
	struct ms_depot_stats st = stats();
	ck_assert_uint_eq(st.stacks, 4);
	ck_assert_uint_eq(st.puts, 8); /* each offer of frames, remembered or not */
}
END_TEST

START_TEST(test_depot_different_frames_different_ids)
{
	depot_init(MIB);
	uintptr_t a[8], b[8], longer[9], reversed[8];
	make_stack(a, 1, 8);
	memcpy(b, a, sizeof a);
	b[7] ^= 0x10; /* differs in the outermost frame only */
	memcpy(longer, a, sizeof a);
	longer[8] = TEXT + 0x99990;
	for (int k = 0; k < 8; k++)
		reversed[k] = a[7 - k];
	ms_stack_id ids[6] = {
		ms_depot_put(a, 8),
		ms_depot_put(b, 8),
		ms_depot_put(a, 7),      /* a prefix of a */
		ms_depot_put(a, 1),      /* its innermost frame alone */
		ms_depot_put(longer, 9), /* a with one more frame */
		ms_depot_put(reversed, 8),
	};
	for (int i = 0; i < 6; i++) {
		ck_assert_uint_ne(ids[i], 0);
		for (int j = 0; j < i; j++)
			ck_assert_msg(ids[i] != ids[j], "stacks %d and %d share id %u", i,
				      j, ids[i]);
	}
	ck_assert_uint_eq(stats().stacks, 6);
	/* and each is found again */
	ck_assert_uint_eq(ms_depot_put(a, 7), ids[2]);
	ck_assert_uint_eq(ms_depot_put(longer, 9), ids[4]);
	ck_assert_uint_eq(stats().stacks, 6);
}
END_TEST

START_TEST(test_depot_get_returns_the_frames)
{
	depot_init(MIB);
	uintptr_t a[16], b[3];
	make_stack(a, 1, 16);
	make_stack(b, 2, 3);
	ms_stack_id ia = ms_depot_put(a, 16), ib = ms_depot_put(b, 3);
	a[0] = 0; /* the depot keeps its own copy */
	const uintptr_t *frames = NULL;
	ck_assert_int_eq(ms_depot_get(ia, &frames), 16);
	ck_assert_uint_eq(frames[0], TEXT + 0x1000);
	ck_assert_mem_eq(frames + 1, a + 1, 15 * sizeof *a);
	ck_assert_int_eq(ms_depot_get(ib, &frames), 3);
	ck_assert_mem_eq(frames, b, sizeof b);
}
END_TEST

START_TEST(test_depot_get_of_unknown_id_is_empty)
{
	depot_init(MIB);
	uintptr_t a[4];
	make_stack(a, 1, 4);
	ms_stack_id id = ms_depot_put(a, 4);
	const uintptr_t *frames = NULL;
	ck_assert_int_eq(ms_depot_get(0, &frames), 0);
	ck_assert_int_eq(ms_depot_get(id + 1, &frames), 0);   /* not yet given */
	ck_assert_int_eq(ms_depot_get(0xffffffffu, &frames), 0); /* past all */
}
END_TEST

START_TEST(test_depot_empty_stack_is_no_stack)
{
	depot_init(MIB);
	uintptr_t a[1] = { TEXT };
	ck_assert_uint_eq(ms_depot_put(a, 0), 0);
	ck_assert_uint_eq(ms_depot_put(a, -1), 0);
	ck_assert_uint_eq(stats().stacks, 0);
	ck_assert_uint_eq(stats().dropped, 0);
}
END_TEST

START_TEST(test_depot_put_before_init_is_no_stack)
{
	uintptr_t a[4];
	make_stack(a, 1, 4);
	const uintptr_t *frames = NULL;
	ck_assert_uint_eq(ms_depot_put(a, 4), 0);
	ck_assert_int_eq(ms_depot_get(1, &frames), 0);
}
END_TEST

/* The arena is handed out in order -- stacks, lock-order edges -- so past
 * its first 128 KiB it may take huge pages (a first write per 2 MiB, not
 * per 4 KiB: a program with ten thousand lock orders fills some 2 MiB),
 * the first of them starting there; a program that stores less rounds
 * nothing up. */
START_TEST(test_depot_arena_huge_past_its_first_128_kib)
{
	if (!unit_huge_pages_markable())
		return; /* a kernel without transparent huge pages */
	depot_init(8 * MIB);
	const char *arena = ms_depot_alloc(16);
	ck_assert_ptr_nonnull(arena);
	ck_assert_int_eq(unit_vm_flag(arena, "hg"), 0);
	ck_assert_int_eq(unit_vm_flag(arena + MIB / 8 - 1, "hg"), 0);
	ck_assert_int_eq(unit_vm_flag(arena + MIB / 8, "hg"), 1);
	ck_assert_uint_eq((uintptr_t)(arena + MIB / 8) % (2 * MIB), 0);
	ck_assert_int_eq(unit_vm_flag(arena + 8 * MIB - 1, "hg"), 1);
}
END_TEST

/* Whether the page at p is resident. */
static int resident(const void *p)
{
	unsigned char v = 0;
	ck_assert_int_eq(mincore((void *)((uintptr_t)p & ~(uintptr_t)4095), 4096, &v), 0);
	return v & 1;
}

/* Each 64 KiB the arena enters is made resident by the allocation that
 * enters it -- the first by the first allocation -- and no further: a
 * page fault at each first write cost a new lock-order edge's time. */
START_TEST(test_depot_arena_resident_as_it_is_entered)
{
	const size_t part = 64 * 1024;
	depot_init(8 * MIB);
	const char *arena = ms_depot_alloc(16);
	ck_assert_ptr_nonnull(arena);
	ck_assert_int_eq(resident(arena + part - 1), 1);
	ck_assert_int_eq(resident(arena + part), 0);
	/* one that ends exactly where the first part ends: the next stays
	 * away */
	ck_assert_ptr_nonnull(ms_depot_alloc(part - 16));
	ck_assert_int_eq(resident(arena + part), 0);
	/* one that reaches into the next part makes it resident, whole, and
	 * no further (past it the arena may have huge pages, each resident
	 * whole: a third part is not looked at) */
	ck_assert_ptr_nonnull(ms_depot_alloc(16));
	ck_assert_int_eq(resident(arena + part), 1);
	ck_assert_int_eq(resident(arena + 2 * part - 1), 1);
	ck_assert_int_eq(resident(arena + 2 * part), 0);
}
END_TEST

/* A caller's own table from the budget (a thread's bigger edge cache):
 * aligned, zeroed, and only while what that caller took stays within
 * what it allows -- then NULL, and the caller maps its own. */
START_TEST(test_depot_alloc_within_a_share)
{
	depot_init(8 * MIB);
	ck_assert_ptr_nonnull(ms_depot_alloc(16)); /* the next byte is not aligned */
	size_t taken = 0;
	const size_t bytes = 256 * 1024;
	for (int i = 0; i < 4; i++) {
		unsigned char *p = ms_depot_alloc_within(bytes, 64, &taken, MIB);
		ck_assert_ptr_nonnull(p);
		ck_assert_uint_eq((uintptr_t)p % 64, 0);
		ck_assert_uint_eq(p[0] | p[bytes / 2] | p[bytes - 1], 0);
		p[bytes - 1] = 1;
	}
	ck_assert_uint_eq(taken, MIB);
	ck_assert_ptr_null(ms_depot_alloc_within(bytes, 64, &taken, MIB));
	ck_assert_uint_eq(taken, MIB);
	/* more than the budget has left: none, and nothing counted */
	size_t other = 0;
	ck_assert_ptr_null(ms_depot_alloc_within(16 * MIB, 4096, &other, 32 * MIB));
	ck_assert_uint_eq(other, 0);
	unsigned char *q = ms_depot_alloc_within(4096, 4096, &other, 32 * MIB);
	ck_assert_ptr_nonnull(q);
	ck_assert_uint_eq((uintptr_t)q % 4096, 0);
	ck_assert_uint_eq(other, 4096);
}
END_TEST

/* An array that is no whole number of pages -- the table's records are
 * (cap + 1) * 64 bytes -- placed for its huge pages: what was mapped
 * around it is given back, whole pages (an unmap inside a page failed,
 * and 2 MiB less 64 bytes stayed mapped an array). */
START_TEST(test_pages_placed_array_gives_back_the_rest)
{
	const size_t bytes = 4 * MIB + 64, page = (size_t)sysconf(_SC_PAGESIZE);
	(void)ms_mapped_now(); /* its own first allocation, before */
	uint64_t before = ms_mapped_now();
	char *p = ms_pages_map_filled_in_order(bytes, bytes, 2 * MIB);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(ms_mapped_now() - before, (bytes + page - 1) / page * page);
	ck_assert_uint_eq((uintptr_t)(p + 2 * MIB) % (2 * MIB), 0);
	p[bytes - 1] = 1; /* its last byte is there */
}
END_TEST

/* ---- a spent budget ---------------------------------------------------- */

#define SMALL_BUDGET (64 * 1024)
#define FRAMES 8
#define MAX_STACKS (SMALL_BUDGET / 48 + 1) /* more than can ever fit */

static ms_stack_id small_ids[MAX_STACKS];

/* Puts distinct stacks until one is refused; returns how many were
 * stored (small_ids[0..n-1]). */
static unsigned fill_small_depot(void)
{
	uintptr_t f[FRAMES];
	for (unsigned i = 0; i < MAX_STACKS; i++) {
		make_stack(f, i, FRAMES);
		ms_stack_id id = ms_depot_put(f, FRAMES);
		if (!id)
			return i;
		small_ids[i] = id;
	}
	ck_abort_msg("%u stacks fit in %u bytes", MAX_STACKS, SMALL_BUDGET);
	return 0;
}

START_TEST(test_depot_full_refuses_and_counts_each_drop)
{
	depot_init(SMALL_BUDGET);
	unsigned stored = fill_small_depot();
	ck_assert_uint_gt(stored, 100);
	struct ms_depot_stats st = stats();
	ck_assert_uint_eq(st.stacks, stored);
	ck_assert_uint_eq(st.puts, stored + 1);
	ck_assert_uint_eq(st.dropped, 1);
	ck_assert_uint_eq(st.budget, SMALL_BUDGET);
	ck_assert_uint_le(st.used, SMALL_BUDGET);
	ck_assert_uint_ge(st.used, SMALL_BUDGET / 2); /* refused for want of room */

	/* More new stacks: every refusal is counted, none is lost silently. */
	uintptr_t f[FRAMES];
	unsigned refused = 0, more = 0;
	for (unsigned i = 0; i < 50; i++) {
		make_stack(f, MAX_STACKS + 1 + i, FRAMES);
		if (ms_depot_put(f, FRAMES))
			more++;
		else
			refused++;
	}
	st = stats();
	ck_assert_uint_eq(st.dropped, 1 + refused);
	ck_assert_uint_eq(st.stacks, stored + more);
	ck_assert_uint_eq(st.puts, stored + 1 + 50);
	ck_assert_uint_le(st.used, SMALL_BUDGET);
}
END_TEST

START_TEST(test_depot_full_still_resolves_stored_stacks)
{
	depot_init(SMALL_BUDGET);
	unsigned stored = fill_small_depot();
	uintptr_t f[FRAMES];
	for (unsigned i = 0; i < stored; i++) {
		const uintptr_t *frames;
		make_stack(f, i, FRAMES);
		if (ms_depot_get(small_ids[i], &frames) != FRAMES ||
		    memcmp(frames, f, sizeof f) != 0)
			ck_abort_msg("stack %u (id %u) lost once the depot was full",
				     i, small_ids[i]);
	}
}
END_TEST

START_TEST(test_depot_full_still_finds_known_stacks)
{
	depot_init(SMALL_BUDGET);
	unsigned stored = fill_small_depot();
	uint64_t dropped = stats().dropped;
	uintptr_t f[FRAMES];
	for (unsigned i = 0; i < stored; i++) {
		make_stack(f, i, FRAMES);
		ms_stack_id id = ms_depot_put(f, FRAMES);
		if (id != small_ids[i])
			ck_abort_msg("stack %u: id %u when full, %u before", i, id,
				     small_ids[i]);
	}
	ck_assert_uint_eq(stats().dropped, dropped); /* known ones are no drops */
	ck_assert_uint_eq(stats().stacks, stored);
}
END_TEST

/* ---- concurrent puts --------------------------------------------------- */

#define PUTTERS 8
#define PER_PUTTER 400   /* stacks each thread puts */
#define OVERLAP_STEP 100 /* thread t puts stacks t*100 .. t*100+399 */
#define ALL_STACKS ((PUTTERS - 1) * OVERLAP_STEP + PER_PUTTER)
#define PASSES 5         /* each thread puts its set this many times */

static ms_stack_id seen[PUTTERS][ALL_STACKS];
static pthread_barrier_t start_line;

static void *putter(void *arg)
{
	unsigned t = (unsigned)(uintptr_t)arg;
	uintptr_t f[FRAMES];
	pthread_barrier_wait(&start_line);
	for (unsigned pass = 0; pass < PASSES; pass++)
		for (unsigned k = 0; k < PER_PUTTER; k++) {
			/* each thread walks its set from a different end */
			unsigned i = t * OVERLAP_STEP +
				     ((t & 1) ? PER_PUTTER - 1 - k : k);
			make_stack(f, i, FRAMES);
			ms_stack_id id = ms_depot_put(f, FRAMES);
			if (!id || (seen[t][i] && seen[t][i] != id))
				return (void *)1;
			seen[t][i] = id;
		}
	return NULL;
}

START_TEST(test_depot_concurrent_puts_agree_on_ids)
{
	depot_init(16 * MIB);
	pthread_t th[PUTTERS];
	ck_assert_int_eq(pthread_barrier_init(&start_line, NULL, PUTTERS), 0);
	for (unsigned t = 0; t < PUTTERS; t++)
		ck_assert_int_eq(pthread_create(&th[t], NULL, putter,
						(void *)(uintptr_t)t), 0);
	for (unsigned t = 0; t < PUTTERS; t++) {
		void *bad;
		ck_assert_int_eq(pthread_join(th[t], &bad), 0);
		ck_assert_msg(bad == NULL, "thread %u got no id or two ids", t);
	}
	/* the same frames got the same id in every thread; distinct frames
	 * distinct ids; each id gives its frames back */
	static ms_stack_id id_of[ALL_STACKS];
	static unsigned char used_id[ALL_STACKS + 1];
	uintptr_t f[FRAMES];
	for (unsigned i = 0; i < ALL_STACKS; i++) {
		for (unsigned t = 0; t < PUTTERS; t++) {
			ms_stack_id id = seen[t][i];
			if (!id)
				continue;
			if (!id_of[i])
				id_of[i] = id;
			else if (id != id_of[i])
				ck_abort_msg("stack %u: id %u in one thread, %u in "
					     "thread %u", i, id_of[i], id, t);
		}
		ms_stack_id id = id_of[i];
		if (!id || id > ALL_STACKS || used_id[id]++)
			ck_abort_msg("stack %u: id %u missing, out of range or "
				     "shared", i, id);
		const uintptr_t *frames;
		make_stack(f, i, FRAMES);
		if (ms_depot_get(id, &frames) != FRAMES ||
		    memcmp(frames, f, sizeof f) != 0)
			ck_abort_msg("stack %u: id %u gives other frames", i, id);
	}
	struct ms_depot_stats st = stats();
	ck_assert_uint_eq(st.stacks, ALL_STACKS);
	ck_assert_uint_eq(st.puts, (uint64_t)PUTTERS * PER_PUTTER * PASSES);
	ck_assert_uint_eq(st.dropped, 0);
}
END_TEST

/* ---- blame lines ------------------------------------------------------- */

static uint32_t blame_rec;
static uint64_t blame_birth;

static void blame_setup(void)
{
	ms_ended_init(); /* the hooks start-up gives the table */
	ck_assert_int_eq(ms_table_init(1024, 16), 1024);
	depot_init(MIB);
	uint64_t clock = 0;
	blame_rec = ms_table_add((uintptr_t)0x55d4c0b00040u, 1, &clock);
	ck_assert_uint_ne(blame_rec, MS_REC_UNTRACKED);
	ck_assert_uint_ne(blame_rec, MS_REC_NONE);
	blame_birth = ms_rec(blame_rec)->birth;
}

/* The line of (kind, stack) in the record's list; NULL if none. */
static const struct ms_blame *line_of(unsigned kind, ms_stack_id stack)
{
	const struct ms_blame *b = ms_blame_of(blame_rec, blame_birth);
	for (; b; b = b->next)
		if (b->birth == blame_birth && b->kind == kind && b->stack == stack)
			return b;
	return NULL;
}

static unsigned lines_of_record(void)
{
	unsigned n = 0;
	for (const struct ms_blame *b = ms_blame_of(blame_rec, blame_birth); b;
	     b = b->next)
		n++;
	return n;
}

START_TEST(test_blame_same_key_sums_count_total_and_max)
{
	ck_assert_ptr_null(ms_blame_of(blame_rec, blame_birth));
	ck_assert_int_eq(ms_blame_add(blame_rec, blame_birth, MS_BLAME_WAIT, 7, 300), 0);
	ck_assert_int_eq(ms_blame_add(blame_rec, blame_birth, MS_BLAME_WAIT, 7, 1000), 0);
	ck_assert_int_eq(ms_blame_add(blame_rec, blame_birth, MS_BLAME_WAIT, 7, 200), 0);
	const struct ms_blame *b = line_of(MS_BLAME_WAIT, 7);
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(b->count, 3);
	ck_assert_uint_eq(b->total, 1500);
	ck_assert_uint_eq(b->max, 1000);
	ck_assert_uint_eq(b->rec, blame_rec);
	ck_assert_uint_eq(lines_of_record(), 1);
}
END_TEST

START_TEST(test_blame_kinds_and_stacks_are_separate_lines)
{
	ck_assert_int_eq(ms_blame_add(blame_rec, blame_birth, MS_BLAME_WAIT, 7, 10), 0);
	ck_assert_int_eq(ms_blame_add(blame_rec, blame_birth, MS_BLAME_HOLD, 7, 20), 0);
	ck_assert_int_eq(ms_blame_add(blame_rec, blame_birth, MS_BLAME_WAIT, 8, 30), 0);
	ck_assert_int_eq(ms_blame_add(blame_rec, blame_birth, MS_BLAME_HOLD, 0, 40), 0);
	ck_assert_uint_eq(lines_of_record(), 4);
	ck_assert_uint_eq(line_of(MS_BLAME_WAIT, 7)->total, 10);
	ck_assert_uint_eq(line_of(MS_BLAME_HOLD, 7)->total, 20);
	ck_assert_uint_eq(line_of(MS_BLAME_WAIT, 8)->total, 30);
	/* a holder whose stack was not captured still gets its line */
	ck_assert_uint_eq(line_of(MS_BLAME_HOLD, 0)->count, 1);
}
END_TEST

START_TEST(test_blame_lines_belong_to_one_life)
{
	ck_assert_int_eq(ms_blame_add(blame_rec, blame_birth, MS_BLAME_WAIT, 7, 10), 0);
	/* another life of the same record: no line of the first one */
	ck_assert_ptr_null(ms_blame_of(blame_rec, blame_birth + 1000));
}
END_TEST

START_TEST(test_blame_when_memory_spent_returns_minus_1)
{
	ms_depot_lock();
	while (ms_depot_alloc(16))
		;
	ms_depot_unlock();
	ck_assert_int_eq(ms_blame_add(blame_rec, blame_birth, MS_BLAME_WAIT, 7, 10), -1);
	ck_assert_ptr_null(line_of(MS_BLAME_WAIT, 7));
}
END_TEST

/* ---- lines of lives that ended: their site line's ---------------------- */

#define BLAME_KEY ((uintptr_t)0x55d4c0b00080u) /* not blame_setup's */
#define BLAME_SITE ((uintptr_t)0x55d4c0a01234u)

/* The lines of BLAME_SITE's site line. */
static const struct ms_blame *site_list(void)
{
	for (uint32_t i = 0; i < ms_table.nsites; i++)
		if (ms_table.sites[i].site == BLAME_SITE)
			return ms_table.sites[i].blame;
	return NULL;
}

/* The site line's line of (kind, stack); NULL if none. */
static const struct ms_blame *site_line_of(unsigned kind, ms_stack_id stack)
{
	for (const struct ms_blame *b = site_list(); b; b = b->next)
		if (b->kind == kind && b->stack == stack)
			return b;
	return NULL;
}

static unsigned site_lines(void)
{
	unsigned n = 0;
	for (const struct ms_blame *b = site_list(); b; b = b->next)
		n++;
	return n;
}

/* A life of the mutex at BLAME_KEY, first locked at BLAME_SITE, whose
 * waits are charged (kind, stack, ticks) in turn, then destroyed. */
static void life(const uint64_t (*charges)[3], int n)
{
	uint64_t clock = 0;
	uint32_t r = ms_table_add(BLAME_KEY, 1, &clock);
	ck_assert_uint_ne(r, MS_REC_UNTRACKED);
	ms_rec(r)->first_caller = BLAME_SITE;
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(ms_blame_add(r, ms_rec(r)->birth, (enum ms_blame_kind)charges[i][0],
					      (ms_stack_id)charges[i][1], charges[i][2]), 0);
	ms_table_remove(BLAME_KEY, 0);
}

START_TEST(test_blame_of_ended_lives_merged_by_stack_in_their_site_line)
{
	static const uint64_t first[][3] = {
		{ MS_BLAME_WAIT, 7, 300 }, { MS_BLAME_HOLD, 9, 300 },
	};
	static const uint64_t second[][3] = {
		{ MS_BLAME_WAIT, 7, 100 }, { MS_BLAME_WAIT, 8, 50 }, { MS_BLAME_HOLD, 9, 150 },
	};
	life(first, 2);
	ck_assert_uint_eq(site_lines(), 2);
	ck_assert_uint_eq(site_line_of(MS_BLAME_WAIT, 7)->total, 300);
	life(second, 3);
	ck_assert_uint_eq(site_lines(), 3);
	const struct ms_blame *w7 = site_line_of(MS_BLAME_WAIT, 7);
	ck_assert_uint_eq(w7->count, 2);
	ck_assert_uint_eq(w7->total, 400);
	ck_assert_uint_eq(w7->max, 300);
	ck_assert_uint_eq(site_line_of(MS_BLAME_WAIT, 8)->count, 1);
	ck_assert_uint_eq(site_line_of(MS_BLAME_HOLD, 9)->total, 450);
	ck_assert_uint_eq(w7->birth, 0); /* a site line's */
	/* a site keeps one line per stack: more lives of the same stacks
	 * take no more memory (theirs is given back as they end; the one
	 * before them made a third line, which the site kept) */
	life(second, 3);
	struct ms_depot_stats before, after;
	ms_depot_stats(&before);
	for (int i = 0; i < 100; i++)
		life(second, 3);
	ms_depot_stats(&after);
	ck_assert_uint_eq(after.used, before.used);
	ck_assert_uint_eq(site_line_of(MS_BLAME_WAIT, 7)->count, 103);
	ck_assert_uint_eq(site_lines(), 3);
}
END_TEST

START_TEST(test_blame_of_a_life_ending_while_a_report_reads_is_copied)
{
	static const uint64_t one[][3] = { { MS_BLAME_WAIT, 7, 300 } };
	life(one, 1);
	ms_blame_readers(1);
	life(one, 1); /* merged into the site's line, its own left alone */
	ms_blame_readers(-1);
	ck_assert_uint_eq(site_line_of(MS_BLAME_WAIT, 7)->count, 2);
	ms_blame_readers(1);
	life(one, 1);
	ms_blame_readers(-1);
	ck_assert_uint_eq(site_lines(), 1);
	ck_assert_uint_eq(site_line_of(MS_BLAME_WAIT, 7)->total, 900);
}
END_TEST

START_TEST(test_blame_site_lines_reset_during_a_report_are_not_found_again)
{
	static const uint64_t one[][3] = { { MS_BLAME_WAIT, 7, 300 } };
	life(one, 1);
	uint32_t line = 0;
	while (ms_table.sites[line].site != BLAME_SITE)
		line++;
	ms_blame_readers(1); /* the old lines stay in the hash, spent */
	ms_table_reset();
	ms_blame_readers(-1);
	ck_assert_uint_eq(ms_table.nsites, 0);
	life(one, 1); /* the same line number again: a new line */
	ck_assert_uint_eq(ms_table.sites[line].site, BLAME_SITE);
	ck_assert_uint_eq(site_lines(), 1);
	ck_assert_uint_eq(site_line_of(MS_BLAME_WAIT, 7)->count, 1);
}
END_TEST

/* ---- interval profiles' shares (ms_blame_since) ------------------------ */

static void since(const struct ms_blame *b, enum ms_blame_format f, uint64_t count,
		  uint64_t total)
{
	uint64_t c, t;
	ms_blame_since((struct ms_blame *)b, f, &c, &t);
	ck_assert_uint_eq(c, count);
	ck_assert_uint_eq(t, total);
}

START_TEST(test_blame_since_gives_each_wait_once_per_format)
{
	ck_assert_int_eq(ms_blame_add(blame_rec, blame_birth, MS_BLAME_WAIT, 7, 300), 0);
	ck_assert_int_eq(ms_blame_add(blame_rec, blame_birth, MS_BLAME_WAIT, 7, 100), 0);
	const struct ms_blame *b = line_of(MS_BLAME_WAIT, 7);
	since(b, MS_BLAME_PPROF, 2, 400);
	since(b, MS_BLAME_PPROF, 0, 0); /* nothing new */
	ck_assert_int_eq(ms_blame_add(blame_rec, blame_birth, MS_BLAME_WAIT, 7, 50), 0);
	since(b, MS_BLAME_PPROF, 1, 50);
	/* the other format's account is its own: all of it, once */
	since(b, MS_BLAME_FOLDED, 3, 450);
	since(b, MS_BLAME_FOLDED, 0, 0);
	/* the line's own numbers are the whole run's, as ever */
	ck_assert_uint_eq(b->count, 3);
	ck_assert_uint_eq(b->total, 450);
}
END_TEST

/* A life's waits shown in an interval, then the life ends: its site's
 * line shows only what was not shown yet -- whether or not a report was
 * reading lines as it ended -- and the line it leaves behind nothing. */
static void since_across_an_end(int reading, int site_before)
{
	/* the site's line, made by a first life, shown by both formats --
	 * or none yet: the life's line becomes the site's (or, as a report
	 * reads, a copy of it does) */
	static const uint64_t one[][3] = { { MS_BLAME_WAIT, 7, 5 } };
	if (site_before) {
		life(one, 1);
		since(site_line_of(MS_BLAME_WAIT, 7), MS_BLAME_PPROF, 1, 5);
		since(site_line_of(MS_BLAME_WAIT, 7), MS_BLAME_FOLDED, 1, 5);
	}
	/* a second life, shown by pprof once, waits again and ends */
	uint64_t clock = 0;
	uint32_t r = ms_table_add(BLAME_KEY, 1, &clock);
	ms_rec(r)->first_caller = BLAME_SITE;
	uint64_t birth = ms_rec(r)->birth;
	ck_assert_int_eq(ms_blame_add(r, birth, MS_BLAME_WAIT, 7, 300), 0);
	const struct ms_blame *live = ms_blame_of(r, birth);
	since(live, MS_BLAME_PPROF, 1, 300);
	ck_assert_int_eq(ms_blame_add(r, birth, MS_BLAME_WAIT, 7, 20), 0);
	if (reading)
		ms_blame_readers(1);
	ms_table_remove(BLAME_KEY, 0);
	if (reading) /* the life's line stays put, spent: nothing to show */
		since(live, MS_BLAME_PPROF, 0, 0);
	const struct ms_blame *site = site_line_of(MS_BLAME_WAIT, 7);
	ck_assert_ptr_nonnull(site);
	ck_assert_uint_eq(site->count, site_before ? 3 : 2);
	ck_assert_uint_eq(site->total, site_before ? 325 : 320);
	since(site, MS_BLAME_PPROF, 1, 20);   /* the 300 was shown live */
	since(site, MS_BLAME_FOLDED, 2, 320); /* folded never saw the life */
	if (reading)
		ms_blame_readers(-1);
}

START_TEST(test_blame_since_a_life_that_ended_is_shown_once)
{
	since_across_an_end(0, 1);
}
END_TEST

START_TEST(test_blame_since_a_life_that_ended_as_a_report_read_is_shown_once)
{
	since_across_an_end(1, 1);
}
END_TEST

START_TEST(test_blame_since_a_first_life_that_ended_is_shown_once)
{
	since_across_an_end(0, 0);
}
END_TEST

START_TEST(test_blame_since_a_first_life_that_ended_as_a_report_read_is_shown_once)
{
	since_across_an_end(1, 0);
}
END_TEST

Suite *depot_suite(void)
{
	Suite *s = suite_create("depot");
	TCase *tc = tcase_create("ids");
	tcase_add_test(tc, test_depot_same_frames_same_id);
	tcase_add_test(tc, test_depot_put_again_takes_the_last_id_for_the_same_frames_only);
	tcase_add_test(tc, test_depot_different_frames_different_ids);
	tcase_add_test(tc, test_depot_get_returns_the_frames);
	tcase_add_test(tc, test_depot_get_of_unknown_id_is_empty);
	tcase_add_test(tc, test_depot_empty_stack_is_no_stack);
	tcase_add_test(tc, test_depot_put_before_init_is_no_stack);
	tcase_add_test(tc, test_depot_arena_huge_past_its_first_128_kib);
	tcase_add_test(tc, test_depot_arena_resident_as_it_is_entered);
	tcase_add_test(tc, test_depot_alloc_within_a_share);
	tcase_add_test(tc, test_pages_placed_array_gives_back_the_rest);
	suite_add_tcase(s, tc);

	tc = tcase_create("budget");
	tcase_add_test(tc, test_depot_full_refuses_and_counts_each_drop);
	tcase_add_test(tc, test_depot_full_still_resolves_stored_stacks);
	tcase_add_test(tc, test_depot_full_still_finds_known_stacks);
	suite_add_tcase(s, tc);

	tc = tcase_create("threads");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_depot_concurrent_puts_agree_on_ids);
	suite_add_tcase(s, tc);

	tc = tcase_create("blame");
	tcase_add_checked_fixture(tc, blame_setup, NULL);
	tcase_add_test(tc, test_blame_same_key_sums_count_total_and_max);
	tcase_add_test(tc, test_blame_kinds_and_stacks_are_separate_lines);
	tcase_add_test(tc, test_blame_lines_belong_to_one_life);
	tcase_add_test(tc, test_blame_of_ended_lives_merged_by_stack_in_their_site_line);
	tcase_add_test(tc, test_blame_of_a_life_ending_while_a_report_reads_is_copied);
	tcase_add_test(tc, test_blame_site_lines_reset_during_a_report_are_not_found_again);
	tcase_add_test(tc, test_blame_since_gives_each_wait_once_per_format);
	tcase_add_test(tc, test_blame_since_a_life_that_ended_is_shown_once);
	tcase_add_test(tc, test_blame_since_a_life_that_ended_as_a_report_read_is_shown_once);
	tcase_add_test(tc, test_blame_since_a_first_life_that_ended_is_shown_once);
	tcase_add_test(tc,
		       test_blame_since_a_first_life_that_ended_as_a_report_read_is_shown_once);
	tcase_add_test(tc, test_blame_when_memory_spent_returns_minus_1);
	suite_add_tcase(s, tc);
	return s;
}
