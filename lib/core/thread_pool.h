/* thread_pool.h - each thread's record: the mutexes it holds now (where and in
 * which order it took them) and the mutex it waits for.
 *
 * Records come from a pool of ours, grown in mapped chunks and reused when
 * a thread exits (a pthread key's destructor returns them), so a run that
 * starts 100,000 short-lived threads uses as many records as it has threads
 * alive at once.  The thread's TLS points at its record; other threads read
 * records only to report. */
#ifndef MUTEXSTAT_THREADS_H
#define MUTEXSTAT_THREADS_H

#include <stddef.h>
#include <stdint.h>

#define MS_HELD_MAX 64     /* mutexes held at once that are followed */
#define MS_EDGE_CACHE 256  /* lock-order edges this thread knows are recorded */
#define MS_EDGE_CACHE2 16384 /* ... in the bigger cache of a thread that takes more */
#define MS_EDGE_MISSES 256 /* known edges missed before that one is made */
#define MS_CACHE2 1024     /* entries in a thread's second lookup cache */

/* A lock-order edge a thread knows is recorded: records a then b, as of
 * the table's generation gen (order.h). */
struct ms_edge_entry {
	uint32_t a, b, gen;
};

/* Two stores on the lock path: the record (the mutex's address and life
 * are the record's) and where it was taken. */
struct ms_held {
	uint32_t rec;
	uintptr_t caller;
	/* ticks at the start of this hold if its time is being measured
	 * (record.c), else 0: ms_ticks() is never 0 */
	uint64_t since;
};

/* The address of a tracked mutex, from its record (0 if gone). */
uintptr_t ms_rec_key(uint32_t rec);

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
	/* known edges its cache did not have: at MS_EDGE_MISSES it gets a
	 * bigger one (order.c) */
	uint32_t edge_misses;
	/* The mutex it waits for now (0: none), since when, from where. */
	uint32_t wait_rec;
	uint32_t wait_stack;
	uint64_t wait_since;   /* ticks */
	uintptr_t wait_key, wait_caller;
	uint32_t wait_timed;   /* that wait has a deadline (timedlock, clocklock) */
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
	uintptr_t now_frames[32];
	struct ms_tstate *free_link;
	uint32_t in_use;
	/* All records, for reports: set once as the record is first handed
	 * out, and past what reuse zeroes (a report may walk the list
	 * meanwhile). */
	struct ms_tstate *next;
	/* A thread taking more distinct edges than edge_cache holds (a
	 * server taking table locks under each of many others): a second,
	 * bigger cache of them, mapped for it, kept with the record for the
	 * next thread (its entries are facts of the graph, not of a thread). */
	struct ms_edge_entry *edge_cache2;
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

/* At start-up: make the key whose destructor ends each thread's record;
 * held_at_exit (may be NULL) is told of a thread that exits holding
 * mutexes, before its held set goes. */
int ms_threads_init(void (*held_at_exit)(const struct ms_tstate *ts));

/* Acquisitions made while their thread already held MS_HELD_MAX mutexes,
 * so no lock-order edge leads out of them: those ended and those still
 * held.  The count starts again at a reset and in a fork child. */
uint64_t ms_threads_not_followed(void);
void ms_threads_not_followed_reset(void);
/* The address space the first thread records take (one mapped chunk). */
size_t ms_threads_first_bytes(void);
/* The calling thread's record, made on first use; NULL if none can be had
 * (then nothing is followed for it). */
struct ms_tstate *ms_tstate_new(uint32_t tid);
void ms_threads_after_fork_child(void);

/* Remove a mutex from a held set (not the last one pushed: out-of-order
 * unlock).  Returns the start of that hold if it was there and timed,
 * else 0. */
uint64_t ms_held_remove(struct ms_tstate *ts, uint32_t rec);
/* The start of thread tid's timed hold of record rec, 0 if it holds it
 * untimed or not at all (report time). */
uint64_t ms_held_since(uint32_t tid, uint32_t rec);
void ms_held_forget(struct ms_tstate *ts, uint32_t rec);

/* Bumped whenever a thread unlocks a mutex it does not hold (misuse that
 * glibc allows): other threads' held sets may then be stale. */
extern uint32_t ms_unlocks_elsewhere;
void ms_held_prune(struct ms_tstate *ts);

/* A live thread's name as ps -L shows it, "" if gone (report time). */
/* /proc/self/task/TID/NAME into buf, NUL-terminated ("" if none);
 * returns its length.  Keeps errno. */
/* Thread tid's system call now, from /proc, and its first argument (0
 * if not shown); -1 if it runs ("running") or is gone. */
long ms_task_syscall(uint32_t tid, uint64_t *arg0);
size_t ms_task_file(uint32_t tid, const char *name, char *buf, size_t cap);
/* Thread tid's state letter in /proc (R runs, S and D sleep...), 0 gone. */
char ms_task_state(uint32_t tid);
const char *ms_thread_name(uint32_t tid, char out[16]);

/* Walk all thread records in use. */
void ms_threads_each(void (*fn)(struct ms_tstate *ts, void *arg), void *arg);

#endif
