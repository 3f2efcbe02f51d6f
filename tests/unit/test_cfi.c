/* test_cfi.c - the stack walker of lib/stacks/cfi.c against libunwind's: the same
 * return addresses from the same stacks (frames of every shape the
 * compiler makes here: small, large, rbp-based with alloca, C library
 * frames at the bottom of the main thread and of a new one), one cache for
 * all threads, a signal frame left to libunwind, and no read above the
 * top of the thread's stack. */
#define _GNU_SOURCE
#include "suites.h"

#include "core/thread.h"
#include "stacks/cfi.h"
#include "stacks/stack.h"

#include <alloca.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>

typedef int (*backtrace_fn)(void **, int);

#define MAX 64

struct pair {
	uintptr_t ours[MAX], theirs[MAX];
	int n_ours, n_theirs;
};

/* The walks' memory of the walk before, as a thread's record keeps it:
 * every walk here reads and rewrites it, in whatever order the tests run
 * (the threads' walks too: a rule is an address's, not a thread's). */
static struct ms_walk_memo memo;

/* Both walks from one function: only their first entries (each walk's own
 * call site here) differ. */
static __attribute__((noinline)) void both(struct pair *p)
{
	backtrace_fn unw = (backtrace_fn)ms_stack_symbol("unw_backtrace");
	ck_assert_ptr_nonnull(unw);
	p->n_ours = ms_cfi_backtrace(p->ours, MAX, &memo);
	p->n_theirs = unw((void **)p->theirs, MAX);
	__asm__ volatile("" ::: "memory");
}

static void assert_same(const struct pair *p)
{
	ck_assert_int_gt(p->n_ours, 3);
	ck_assert_int_eq(p->n_ours, p->n_theirs);
	for (int i = 1; i < p->n_ours; i++)
		ck_assert_msg(p->ours[i] == p->theirs[i], "frame %d: %#lx, libunwind %#lx",
			      i, (unsigned long)p->ours[i], (unsigned long)p->theirs[i]);
}

/* Frames of three shapes, called in turn: a small one, one with a large
 * array (a CFA offset past 4 KiB), and one with alloca, whose CFA the
 * compiler gives as rbp plus an offset. */
static __attribute__((noinline)) void descend(struct pair *p, int depth);

static __attribute__((noinline)) void small_frame(struct pair *p, int depth)
{
	descend(p, depth - 1);
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void large_frame(struct pair *p, int depth)
{
	volatile char big[8192];
	big[depth] = 1;
	descend(p, depth - 1);
	__asm__ volatile("" ::: "memory");
	(void)big[0];
}

static __attribute__((noinline)) void alloca_frame(struct pair *p, int depth)
{
	volatile char *room = alloca(64 + (size_t)depth * 16);
	room[0] = 1;
	descend(p, depth - 1);
	__asm__ volatile("" ::: "memory");
	(void)room[0];
}

static __attribute__((noinline)) void descend(struct pair *p, int depth)
{
	if (depth == 0)
		both(p);
	else if (depth % 3 == 0)
		small_frame(p, depth);
	else if (depth % 3 == 1)
		large_frame(p, depth);
	else
		alloca_frame(p, depth);
	__asm__ volatile("" ::: "memory");
}

static void in_new_thread(void *(*fn)(void *), void *arg)
{
	pthread_t t;
	ck_assert_int_eq(pthread_create(&t, NULL, fn, arg), 0);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
}

static void *in_thread(void *arg)
{
	ms_cfi_thread_starts(); /* the library's pthread_create does it */
	descend(arg, 12);
	return NULL;
}

START_TEST(test_cfi_walk_gives_libunwinds_frames)
{
	ck_assert_int_eq(ms_stack_init(), 0);
	ck_assert(ms_cfi_available());
	struct pair p;
	descend(&p, 12); /* the main thread: _start at the bottom */
	assert_same(&p);
	in_new_thread(in_thread, &p); /* clone3 at the bottom */
	assert_same(&p);
}
END_TEST

/* A thread's walks in turn, of stacks that share their first frames and
 * part from there, or are the one before again: each takes what the one
 * before remembered only where its frames are the same. */
START_TEST(test_cfi_walks_in_turn_give_libunwinds_frames)
{
	ck_assert_int_eq(ms_stack_init(), 0);
	static const int depths[] = { 12, 12, 11, 13, 12, 3, 12, 40, 39, 40 };
	struct pair p;
	for (unsigned i = 0; i < sizeof depths / sizeof depths[0]; i++) {
		descend(&p, depths[i]);
		assert_same(&p);
	}
	/* a walk while another holds the memory (a signal handler's, in
	 * the one it interrupted) walks without it, and leaves it as it was */
	struct ms_walk_memo before = memo;
	memo.walking = 1;
	descend(&p, 7);
	assert_same(&p);
	ck_assert_int_eq(memo.walking, 1);
	memo.walking = 0;
	ck_assert_mem_eq(&memo, &before, sizeof memo);
}
END_TEST

START_TEST(test_cfi_rules_are_computed_once_for_all_threads)
{
	ck_assert_int_eq(ms_stack_init(), 0);
	struct pair p;
	in_new_thread(in_thread, &p);
	uint64_t first = ms_cfi_rules_computed();
	int distinct = 0; /* the recursion repeats return addresses */
	for (int i = 0; i < p.n_ours; i++) {
		int seen = 0;
		for (int j = 0; j < i; j++)
			seen |= p.ours[j] == p.ours[i];
		distinct += !seen;
	}
	ck_assert_uint_eq(first, (uint64_t)distinct); /* one per return address */
	/* the same stack on another thread: every rule is in the cache */
	in_new_thread(in_thread, &p);
	ck_assert_uint_eq(ms_cfi_rules_computed(), first);
	assert_same(&p);
}
END_TEST

/* What the walk reads is bounded by the top of the thread's stack: a
 * rule that does not fit the code (a library unloaded, another loaded at
 * its address) must not make it read above.  With the top set just above
 * this frame, the callers' frames are out of bounds: the walk gives up. */
static void *walk_under_low_top(void *arg)
{
	struct pair *p = arg;
	ms_cfi_stack_top((uintptr_t)__builtin_frame_address(0) + 64);
	p->n_ours = ms_cfi_backtrace(p->ours, MAX, &memo);
	ms_cfi_thread_starts();
	p->n_theirs = ms_cfi_backtrace(p->theirs, MAX, &memo);
	return NULL;
}

static void *walk_unknown_top(void *arg)
{
	struct pair *p = arg;
	p->n_ours = ms_cfi_backtrace(p->ours, MAX, &memo);
	ms_cfi_thread_starts();
	p->n_theirs = ms_cfi_backtrace(p->theirs, MAX, &memo);
	return NULL;
}

START_TEST(test_cfi_reads_only_below_the_stacks_top)
{
	ck_assert_int_eq(ms_stack_init(), 0);
	struct pair p;
	in_new_thread(walk_under_low_top, &p);
	ck_assert_int_eq(p.n_ours, -1);
	ck_assert_int_gt(p.n_theirs, 2); /* the real top: the whole stack */
	/* a thread whose top was not set (not started by the library's
	 * pthread_create) finds it at its first walk: glibc's descriptor of
	 * the thread, as its start would have set it -- the same frames
	 * above the two calls */
	in_new_thread(walk_unknown_top, &p);
	ck_assert_int_gt(p.n_ours, 2);
	ck_assert_int_eq(p.n_ours, p.n_theirs);
	for (int i = 1; i < p.n_ours; i++)
		ck_assert_uint_eq(p.ours[i], p.theirs[i]);
}
END_TEST

static struct pair in_handler;
static volatile sig_atomic_t handled;
static uintptr_t captured[MAX];
static int n_captured;

static void handler(int sig)
{
	(void)sig;
	in_handler.n_ours = ms_cfi_backtrace(in_handler.ours, MAX, &memo);
	n_captured = ms_stack_capture(captured, MAX);
	handled = 1;
}

static __attribute__((noinline)) void raise_here(void)
{
	raise(SIGUSR2);
	__asm__ volatile("" ::: "memory");
}

START_TEST(test_cfi_leaves_a_signal_frame_to_libunwind)
{
	ck_assert_int_eq(ms_stack_init(), 0);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	ck_assert_int_eq(sigaction(SIGUSR2, &sa, NULL), 0);
	uint64_t before = ms_stack_walks_by_libunwind;
	raise_here();
	ck_assert(handled);
	ck_assert_int_eq(in_handler.n_ours, -1);
	ck_assert_uint_eq(ms_stack_walks_by_libunwind, before + 1);
	/* libunwind's walk goes through the signal frame: the function
	 * that raised it is there, below the handler */
	int found = 0;
	for (int i = 0; i < n_captured; i++)
		found |= captured[i] > (uintptr_t)raise_here &&
			 captured[i] < (uintptr_t)raise_here + 64;
	ck_assert_msg(found, "raise_here not in the %d frames captured", n_captured);
}
END_TEST

Suite *cfi_suite(void)
{
	Suite *s = suite_create("cfi");
	TCase *tc = tcase_create("walk");
	tcase_add_test(tc, test_cfi_walk_gives_libunwinds_frames);
	tcase_add_test(tc, test_cfi_walks_in_turn_give_libunwinds_frames);
	tcase_add_test(tc, test_cfi_rules_are_computed_once_for_all_threads);
	tcase_add_test(tc, test_cfi_leaves_a_signal_frame_to_libunwind);
	tcase_add_test(tc, test_cfi_reads_only_below_the_stacks_top);
	suite_add_tcase(s, tc);
	return s;
}
