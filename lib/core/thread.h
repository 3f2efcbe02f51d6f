/* thread.h - per-thread state, kept in initial-exec TLS so that reaching it
 * on the lock path is a single %fs-relative load (no __tls_get_addr, which
 * could allocate).
 *
 *  tid    the kernel thread id (what ps -L and gdb show), read once;
 *  clock  this thread's Lamport clock, which orders recent operations
 *         across the process without a shared counter;
 *  guard  non-zero while the thread runs library code that may call back
 *         into pthread (the report, dlsym, the table's insert path): calls
 *         that arrive then pass straight through to glibc. */
#ifndef MUTEXSTAT_THREAD_H
#define MUTEXSTAT_THREAD_H

#include <stddef.h>
#include <stdint.h>

/* Non-zero once the table is mapped and glibc's functions are known (set
 * by start-up, runtime/init.c). */
extern int ms_active;

#define MS_HELD 0x80000000u /* in record.owner: the owner still holds it */
#define MS_CACHE 16         /* entries in a thread's lookup cache */
#define MS_SPARE 32         /* spare records a thread keeps, at most */
/* taken from and given back to the pool at once: as many records as
 * share a line of the table's per-record words (its init stacks), so that
 * two threads' new records never write one line (table.c) */
#define MS_SPARE_BATCH 16

/* ---- the thread's record: what others read of it ------------------- */

/* Each thread's record holds the mutexes it holds now (where and in which
 * order it took them), the wait it is in, and its caches of lock-order
 * edges; it comes from the pool (thread_pool.h) and the TLS below points
 * at it.  Other threads read records only to report. */
#define MS_HELD_MAX 64     /* mutexes held at once that are followed */
#define MS_HELD_READ 1u    /* ms_held.mode: a read hold */
#define MS_HELD_RING 2u    /* ... whose position is in the reads' history */
#define MS_HELD_POS_SHIFT 2 /* ... and the unlock's history position above */
/* A position in the reads' history takes 10 bits (history_len <= 1024);
 * above it, the low bits of the slot's life (table.h's ms_reads_held). */
#define MS_HELD_RING_POS 1023u
#define MS_HELD_LIFE_SHIFT 12
#define MS_HELD_LIFE_BITS 20
#define MS_EDGE_CACHE 256  /* lock-order edges this thread knows are recorded */
#define MS_EDGE_CACHE2 16384 /* ... in the bigger cache of a thread that takes more */
#define MS_EDGE_MISSES 256 /* known edges missed, or put out, before that one is made */
#define MS_CACHE2 1024     /* entries in a thread's second lookup cache */

/* A lock-order edge a thread knows is recorded: records a then b, as of
 * the table's generation gen (order.h). */
struct ms_edge_entry {
	uint32_t a, b, gen;
	/* the other locks the thread held as it took the edge: one bit per
	 * lock (and mode) of ms_gate_sig's -- the edge is known for a take
	 * that holds them all (or more), the gates recorded then being some
	 * of them; one that holds fewer may make a gate none (order.c) */
	uint32_t gates;
};

/* Two stores on the lock path: the record (the mutex's address and life
 * are the record's) and where it was taken. */
struct ms_held {
	uint32_t rec;
	/* MS_HELD_READ (bit 0): a read hold of a read-write lock (several
	 * threads may hold it so at once, and one thread several times); 0
	 * an exclusive hold (a mutex, a write lock, a spin lock).  Above it,
	 * MS_HELD_RING if that hold's entries are in its slot's reads'
	 * history, and above them the history position for its unlock,
	 * reserved as it was taken (0 none: other_locks.c), then, for the
	 * reads' history, the slot's life.  An entry at or above
	 * nheld has mode 0, as since: the lock path's plain case does not
	 * write it.  In what was padding: no bigger entry. */
	uint32_t mode;
	uintptr_t caller;
	/* ticks at the start of this hold if its time is being measured
	 * (record.c), else 0: ms_ticks() is never 0 */
	uint64_t since;
};

/* What a thread's last stack walk took (stacks/cfi.c): the rule at each of
 * its first MS_WALK_MEMO frames, with the return address it was for.  A
 * walk mostly passes where the one before did (the same lock call, the
 * same callers of it), so a frame whose return address is the one kept
 * at its depth takes that rule -- the one the process-wide cache gave for
 * that address -- without the cache's hash and check.  A rule belongs to
 * an address, not to a thread: a record handed to the next thread keeps
 * them.  `walking`, taken with an exchange, keeps every other walk out
 * meanwhile (a signal handler's on this thread). */
#define MS_WALK_MEMO 16
struct ms_walk_memo {
	int walking;
	struct {
		uintptr_t ip;
		uint64_t rule;
	} frame[MS_WALK_MEMO];
};

struct ms_tstate {
	uint32_t tid;
	uint32_t nheld;    /* entries in held[], at most MS_HELD_MAX */
	uint32_t overflow; /* held beyond those: not followed, only counted */
	uint32_t pruned_at; /* ms_unlocks_elsewhere when the set was last checked */
	/* The mutexes it holds, in the order taken.  An entry at or above
	 * nheld has since 0: the lock path's plain case writes held[0]
	 * without it (interpose.c). */
	struct ms_held held[MS_HELD_MAX];
	struct ms_edge_entry edge_cache[MS_EDGE_CACHE];
	/* known edges its cache did not have, and good ones it put out: at
	 * MS_EDGE_MISSES it gets a bigger one (order.c) */
	uint32_t edge_misses;
	/* Its last failure on a lock another thread held (a busy trylock, a
	 * timeout): the record, the lock's order it read and the order it
	 * took.  The next failure on that same hold shares the number
	 * (record.c), so both stay listed before the holder's unlock. */
	uint32_t fail_rec;
	uint64_t fail_seen, fail_order;
	/* The mutex it waits for now (0: none), since when, from where. */
	uint32_t wait_rec;
	uint32_t wait_stack;
	uint64_t wait_since;   /* ticks */
	uintptr_t wait_key, wait_caller;
	uint32_t wait_timed;   /* that wait has a deadline (timedlock, clocklock) */
	uint32_t wait_read;    /* ... is for a read lock of a read-write lock */
	/* The condition wait it is in now (its mutex; 0: none). */
	uintptr_t cond_key, cond_caller;
	uint64_t cond_since;
	uintptr_t cond_cond;   /* the condition variable */
	uint32_t cond_timed;   /* that wait has a deadline */
	/* The thread it waits to join now (its pthread_t; 0: none). */
	uint32_t join_timed;
	uintptr_t join_target, join_caller;
	uint64_t join_since;
	uintptr_t handle;      /* this thread's own pthread_t */
	uint32_t join_only;    /* made for a join: the thread has used no mutex */
	/* Where the thread is now, captured by itself on request (live dump). */
	uint32_t now_seq;      /* answered request */
	uint32_t now_n;
	uint32_t now_in_call; /* the frames ran through ours: a lock call */
	uint32_t now_no_room; /* it answered with none: 1 near its stack's end,
				 2 in glibc's cancellation handler, 3 on a
				 stack it switched to (ms_stack_switched) */
	uintptr_t now_frames[32];
	/* the size of its alternate signal stack (0: none, or not known
	 * yet), as its ms_thread has it: a live dump asks a thread with a
	 * small one no questions in a handler that may run there (where_now.c) */
	uintptr_t alt_size;
	struct ms_tstate *free_link;
	uint32_t in_use;
	/* All records, for reports: set once as the record is first handed
	 * out, and past what reuse zeroes (a report may walk the list
	 * meanwhile). */
	struct ms_tstate *next;
	/* A thread taking more distinct edges than edge_cache holds (a
	 * server taking table locks under each of many others): a second,
	 * bigger cache of them (from the depot's arena, or mapped for it:
	 * order.c), and after it the thread's windows of them (order.h's
	 * ms_edge_windows), kept with the record for the next thread (its
	 * entries are facts of the graph, not of a thread). */
	struct ms_edge_entry *edge_cache2;
	/* its stack walks' memory (above), in the record rather than in
	 * static TLS, which a dlopen'ed library has little of */
	struct ms_walk_memo walk_memo;
	/* The second level of the thread's lookup cache (thread.h): the
	 * records of the last MS_CACHE2 mutexes it used, by more bits of
	 * their address.  Believed the same way (the record must name the
	 * mutex); asked only when the first level misses and the thread is
	 * recording, so the guard need not empty it -- nor a record reused
	 * for a new thread (ms_tstate_new): last, and left as it was, its
	 * pages are touched only by threads that take more than MS_CACHE
	 * mutexes in turn. */
	uint32_t cache2[MS_CACHE2];
};

/* Where edge a->b goes in a thread's edge_cache: a region per first
 * mutex, the second's record number on from there (as order.c's bigger
 * cache: neighbouring entries for one mutex held while others are taken
 * in turn). */
static inline unsigned ms_edge_slot(uint32_t a, uint32_t b)
{
	return (a * 0x9e3779b1u + b) & (MS_EDGE_CACHE - 1);
}

/* ---- the thread's TLS --------------------------------------------------- */

struct ms_thread {
	uint32_t ok;    /* 1 when calls may be recorded: started, tid and
			   record known, not inside library code, no blame
			   pending (set with ms_ok_set, ms_ok_clear) */
	uint32_t tid;
	uint32_t tid_held; /* tid | MS_HELD: record.owner while it holds one */
	uint32_t guard;
	uint64_t clock;
	uint64_t owned_once; /* mutex_owned_once_word(tid) (internal.h) */
	/* owned_once while ok, else 0, which no mutex matches: the unlock
	 * path's first test tells both that the thread records and that it
	 * holds the mutex at one level */
	uint64_t unlock_word;
	struct ms_tstate *ts; /* the thread's record (above) */
	/* The records of the mutexes this thread used last, by a few bits
	 * of their address (ms_cache_slot): a lock of one of them skips the
	 * table probe.  An entry is believed only if the record's key is
	 * the mutex, so nothing needs to be told when a mutex leaves the
	 * table; 0 (a record that matches no mutex) is empty.  Emptied
	 * whenever the thread enters library code, so that calls made from
	 * there miss and pass through. */
	uint32_t cache[MS_CACHE];
	/* A sampled wait whose blame is charged after this thread's next
	 * unlock, outside any critical section (ok stays 0 until then, so
	 * that unlock takes the slow path). */
	uint32_t pend;
	uint32_t pend_rec, pend_stack;
	/* The releases numbered during the wait, pend_first to pend_last
	 * (none: pend_last 0), whose publications (record.c) are read into
	 * pend_got as soon as they may be there; pend_todo: a bit for each
	 * not read yet, bit i for release pend_last - i. */
	uint32_t pend_first, pend_last;
	uint32_t pend_todo;
	uint64_t pend_birth, pend_wait, pend_end;
	uint64_t pend_got[8];
	uint64_t release_at; /* when its last numbered release let go (record.c) */
	/* Below: what only adding and removing mutexes uses, after what every
	 * lock and unlock reads (those stay in the first lines). */
	uint32_t in_update; /* inside ms_table_add or ms_table_remove (table.c) */
	/* The table's locks the update holds, for a fork from a signal
	 * handler that interrupts it: its stripes (table.c), pool, sites. */
	const struct ms_update_locks *upd_locks;
	uint8_t upd_pool, upd_sites;
	uint8_t added_new; /* the last ms_table_add put a new address in */
	/* The last ms_table_add or _remove ended the life of this record,
	 * which a finding holds (MS_F_FINDING), born then: the caller tells
	 * findings.c where (0: none). */
	uint32_t finding_ended;
	uint64_t finding_birth;
	/* The program made the thread's cancellation asynchronous
	 * (pthread_setcanceltype); how deep the thread is in sections of
	 * ours that defer it (ms_async_defer, below); and a type asked for
	 * inside one (by a signal handler), 1 + the type, for its end. */
	uint8_t cancel_async, async_deferred, cancel_asked;
	/* Free records this thread hands out to the mutexes it makes and
	 * takes back from those it destroys, so that threads making and
	 * destroying mutexes at once share no free list (table.c). */
	uint32_t nspare;
	uint32_t spare[MS_SPARE];
	/* Its stack, where known (a thread our pthread_create started:
	 * stack.c, ms_stack_thread_bounds), else 0: a capture needs room. */
	uintptr_t stack_low, stack_high;
	/* Its alternate signal stack (0, 0: none), once alt_known (stack.c,
	 * ms_stack_near_end): a capture needs room there too. */
	uintptr_t alt_low, alt_high;
	uint8_t alt_known;
	/* The stacks it put last (depot.c, ms_depot_put_again): the one
	 * ms_stack_here captured, and the call site of a lock-order edge's
	 * first mutex (order.c); 0 none. */
	uint32_t last_stack, last_site;
};

/* Mutexes side by side in an array, or in neighbouring objects, get
 * different entries. */
static inline unsigned ms_cache_slot(const void *m)
{
	return (unsigned)((uintptr_t)m >> 3) & (MS_CACHE - 1);
}

static inline void ms_cache_clear(struct ms_thread *t)
{
	for (unsigned i = 0; i < MS_CACHE; i++)
		t->cache[i] = 0;
}

extern __thread struct ms_thread ms_self
	__attribute__((tls_model("initial-exec")));

static inline void ms_ok_set(struct ms_thread *t)
{
	t->ok = 1;
	t->unlock_word = t->owned_once;
}

static inline void ms_ok_clear(struct ms_thread *t)
{
	t->unlock_word = 0;
	t->ok = 0;
}

uint32_t ms_thread_register(struct ms_thread *t);
/* New threads start past order (an ending thread's clock: a thread may
 * get its tid again). */
void ms_thread_clock_floor(uint64_t order);
/* Moves t's clock up to that floor (a thread that registers, and a fork
 * child's forking thread, whose new tid may be an ended thread's). */
void ms_thread_clock_past_floor(struct ms_thread *t);

/* A thread whose cancellation the program made asynchronous can be
 * cancelled at any instruction, ours too.  Cancelled while it held a lock
 * of ours, or half way through changing what other threads read, it would
 * leave them so -- and the next thread to take that lock would wait for
 * ever.  So such sections run with the thread's cancellation deferred
 * (none of them is a cancellation point), and the program's type comes
 * back as the outermost one ends: a cancel that came meanwhile is acted
 * on there.  For the other threads, a test of a flag. */
void ms_async_defer_slow(struct ms_thread *t);
void ms_async_resume_slow(struct ms_thread *t);

/* Returns whether it deferred (whether the thread's is asynchronous). */
static inline int ms_async_defer(struct ms_thread *t)
{
	if (__builtin_expect(t->cancel_async, 0)) {
		ms_async_defer_slow(t);
		return 1;
	}
	return 0;
}

static inline void ms_async_resume(struct ms_thread *t)
{
	if (__builtin_expect(t->async_deferred, 0))
		ms_async_resume_slow(t);
}

/* Entry n of ts's held set, its new top: the count is raised first, and
 * the caller writes the entry after.  A signal handler of this thread
 * whose lock and unlock come between the two pushes its own entry above
 * this one and pops back to it.  Written the other way round, the
 * handler's push overwrote the entry and its pop left the handler's
 * mutex in the set for good, the thread's own lost: false lock-order
 * edges from it, a false POTENTIAL DEADLOCK.  Meanwhile the handler sees
 * a top not yet written, which no edge is taken from (order.c's held_by). */
static inline volatile struct ms_held *ms_held_push(struct ms_tstate *ts, uint32_t n)
{
	/* volatile, not a fence: only these stores keep their order, and
	 * the compiler need not load again what it has in registers */
	*(volatile uint32_t *)&ts->nheld = n + 1;
	return (volatile struct ms_held *)&ts->held[n];
}

/* Enter and leave library code that may call back into pthread (a
 * section deferring asynchronous cancellation, as above). */
static inline void ms_guard_enter(struct ms_thread *t)
{
	ms_async_defer(t);
	/* The cache first: the lock path trusts it without looking at the
	 * guard, so a signal handler that locks between these lines must
	 * find either an empty cache or a thread not yet guarded (its lock
	 * and unlock both recorded). */
	ms_cache_clear(t);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->guard++;
	ms_ok_clear(t);
}

void ms_guard_leave(struct ms_thread *t);
void ms_thread_after_fork_child(void);
uint64_t ms_threads_seen(void);
/* Threads not followed because the system refused their id (gettid). */
uint64_t ms_threads_without_tid(void);

/* The calling thread's state with its tid known. */
static inline struct ms_thread *ms_thread(void)
{
	struct ms_thread *t = &ms_self;
	if (__builtin_expect(t->tid == 0, 0))
		ms_thread_register(t);
	return t;
}

#endif
