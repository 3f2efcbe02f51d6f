/* depot.c - the stack depot: uthash over a fixed, mapped budget; see
 * depot.h. */
#define _GNU_SOURCE
#include "stacks/depot.h"
#include "base/spin.h"
#include "core/thread.h"
#include "base/internal.h"
#include "base/options.h"
#include "base/pages.h"
#include "stacks/stack.h"
#include "core/thread.h"

#include <sched.h>
#include <string.h>
#include <sys/mman.h>

static char *arena;
static size_t arena_used, arena_size;

/* uthash allocates its buckets from the arena too; running out is not
 * fatal: the insert is simply not made. */
static void *arena_alloc(size_t bytes);
#define uthash_malloc(sz) arena_alloc(sz)
#define uthash_free(ptr, sz) ((void)(ptr), (void)(sz)) /* the arena is kept */
#define HASH_NONFATAL_OOM 1
#define uthash_nonfatal_oom(obj) (oom = 1)
static int oom;
/* A stack's hash, a frame at a time (every sampled contention event
 * puts two stacks). */
#include "base/word_hash.h"
#define HASH_FUNCTION MS_WORD_HASH
#include <uthash.h>

struct entry {
	UT_hash_handle hh;
	ms_stack_id id;
	uint32_t n;
	uintptr_t frames[];
};

static struct entry *stacks;     /* the hash, by frames */
static struct entry **by_id;     /* [id] */
static uint32_t next_id = 1, max_ids;
static uint64_t puts, dropped;
static int lock;
/* The holder of the lock for an update deferred its asynchronous
 * cancellation (thread.h); under the lock. */
static int holder_deferred;

/* A program that takes many lock orders or stacks fills the arena page
 * after page (a lock-order edge is 128 bytes in it): each 64 KiB it
 * enters, from the first, is made resident in one call rather than one
 * page fault a page (doc/benchmark.md, "edges10k's first round") -- a
 * program that stores one stack makes 64 KiB resident.
 * Past its first 128 KiB -- some 800 lock orders or 600 stacks, which a
 * program with many mutexes has -- the arena may take huge pages
 * (pages.c), where a first write costs one fault for 2 MiB; such a
 * program's arena is rounded up to the next 2 MiB.  (512 KiB before:
 * on a virtual machine where even a page made resident costs some 5 us
 * at its first write, ten thousand new lock orders spent a fifth of
 * their time there -- doc/benchmark.md, "The first write to a page".) */
#define ARENA_SMALL_PART ((size_t)128 << 10)
#define POPULATE_AHEAD 65536
static size_t arena_resident; /* the arena's first bytes made resident */

static void *arena_alloc(size_t bytes)
{
	bytes = (bytes + 15) & ~(size_t)15;
	if (!arena || arena_used + bytes > arena_size)
		return NULL;
	void *p = arena + arena_used;
	arena_used += bytes;
	if (arena_used > arena_resident) {
		size_t to = (arena_used + POPULATE_AHEAD - 1) / POPULATE_AHEAD * POPULATE_AHEAD;
		if (to > arena_size)
			to = arena_size;
		ms_pages_populate(arena + arena_resident, to - arena_resident);
		arena_resident = to;
	}
	return p; /* fresh mapped memory is zero */
}

void ms_depot_lock(void)
{
	for (unsigned spins = 0; !ms_spin_try(&lock); spins++) {
		if (spins < 100)
			__builtin_ia32_pause();
		else
			sched_yield();
	}
}

int ms_depot_lock_for_update(void)
{
	struct ms_thread *t = &ms_self;
	int deferred = ms_async_defer(t);
	if (!ms_spin_lock(&lock)) {
		ms_async_resume(t);
		return 0;
	}
	holder_deferred = deferred;
	return 1;
}

void ms_depot_unlock(void)
{
	int deferred = holder_deferred;
	holder_deferred = 0;
	ms_spin_unlock(&lock);
	if (deferred)
		ms_async_resume(&ms_self);
}

void ms_depot_after_fork_child(void)
{
	lock = 0;
	holder_deferred = 0;
	dropped = 0; /* the child counts its own */
}

size_t ms_depot_bytes(size_t budget)
{
	return budget + budget / 48 * sizeof(struct entry *);
}

int ms_depot_init(size_t budget)
{
	void *p = ms_pages_map_filled_in_order(budget, budget, ARENA_SMALL_PART);
	if (!p)
		return -1;
	/* ids: at most one per 48 bytes of budget (the smallest entry) */
	max_ids = (uint32_t)(budget / 48);
	void *q = ms_pages_map((size_t)max_ids * sizeof(struct entry *));
	if (!q) {
		munmap(p, budget);
		return -1;
	}
	arena = p;
	arena_size = budget;
	arena_resident = 0;
	by_id = q;
	return 0;
}

void *ms_depot_alloc(size_t bytes)
{
	return arena_alloc(bytes);
}

void *ms_depot_alloc_within(size_t bytes, size_t align, size_t *taken, size_t most)
{
	if (!ms_depot_lock_for_update())
		return NULL;
	void *p = NULL;
	/* the arena begins a page: an offset aligned is an address aligned
	 * (the bytes skipped are spent, as a part of the budget) */
	size_t at = (arena_used + align - 1) & ~(align - 1);
	if (arena && *taken + bytes <= most && at <= arena_size && bytes <= arena_size - at) {
		arena_used = at;
		if ((p = arena_alloc(bytes)) != NULL)
			*taken += bytes;
	}
	ms_depot_unlock();
	return p;
}

ms_stack_id ms_depot_put(const uintptr_t *frames, int n)
{
	if (n <= 0 || !arena)
		return 0;
	struct entry *e;
	size_t keylen = (size_t)n * sizeof *frames;
	if (!ms_depot_lock_for_update())
		return 0; /* not kept: another thread is forking */
	__atomic_add_fetch(&puts, 1, __ATOMIC_RELAXED); /* and in put_again */
	HASH_FIND(hh, stacks, frames, keylen, e);
	if (!e && next_id < max_ids &&
	    (e = arena_alloc(sizeof *e + keylen)) != NULL) {
		e->n = (uint32_t)n;
		memcpy(e->frames, frames, keylen);
		oom = 0;
		HASH_ADD_KEYPTR(hh, stacks, e->frames, keylen, e);
		if (oom)
			e = NULL; /* the hash could not grow: not stored */
		else {
			e->id = next_id++;
			__atomic_store_n(&by_id[e->id], e, __ATOMIC_RELEASE);
		}
	}
	if (!e)
		dropped++;
	ms_stack_id id = e ? e->id : 0;
	ms_depot_unlock();
	return id;
}

int ms_depot_get(ms_stack_id id, const uintptr_t **frames)
{
	if (!id || id >= max_ids)
		return 0;
	const struct entry *e = __atomic_load_n(&by_id[id], __ATOMIC_ACQUIRE);
	if (!e)
		return 0;
	*frames = e->frames;
	return (int)e->n;
}

static int same_frames(const uintptr_t *x, const uintptr_t *y, int n)
{
	for (int i = 0; i < n; i++)
		if (x[i] != y[i])
			return 0;
	return 1;
}

ms_stack_id ms_depot_put_again(const uintptr_t *frames, int n, ms_stack_id *last)
{
	/* read once: a signal handler on this thread may put another
	 * meanwhile, and what is compared is what is returned */
	ms_stack_id id = LOAD(last);
	const uintptr_t *had = NULL;
	if (id && n > 0 && ms_depot_get(id, &had) == n && same_frames(had, frames, n)) {
		__atomic_add_fetch(&puts, 1, __ATOMIC_RELAXED);
		return id;
	}
	id = ms_depot_put(frames, n);
	if (id)
		STORE(last, id);
	return id;
}

static __attribute__((noinline)) ms_stack_id stack_here(void)
{
	uintptr_t frames[MS_MAX_FRAMES];
	struct ms_thread *t = &ms_self;
	ms_guard_enter(t); /* libunwind may lock mutexes of its own */
	int n = ms_stack_capture(frames, (int)ms_opt.frames);
	ms_stack_id id = n ? ms_depot_put_again(frames, n, &t->last_stack) : 0;
	ms_guard_leave(t);
	return id;
}

ms_stack_id ms_stack_here(void)
{
	/* decided before the frames' buffer is on the stack (stack.h) */
	return ms_stack_near_end() ? 0 : stack_here();
}

void ms_depot_stats(struct ms_depot_stats *out)
{
	out->stacks = next_id - 1;
	out->puts = LOAD(&puts);
	out->dropped = dropped;
	out->used = arena_used;
	out->budget = arena_size;
}
