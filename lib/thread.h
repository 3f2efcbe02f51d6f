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

#include <stdint.h>

struct ms_thread {
	uint32_t ok;    /* 1 when calls may be recorded: started, tid known,
			   not inside library code.  The one test on the
			   lock path. */
	uint32_t tid;
	uint64_t clock;
	uint32_t guard;
	/* The last mutex this thread looked up, and its record: a lock and
	 * its unlock, or a loop on one mutex, skip the table probe.  Valid
	 * while the table's generation (bumped whenever an address leaves
	 * the table) is the one seen when it was filled. */
	uint32_t cache_gen;
	uintptr_t cache_key;
	uint32_t cache_rec;
	/* A sampled wait whose blame is charged after this thread's next
	 * unlock, outside any critical section (ok stays 0 until then, so
	 * that unlock takes the slow path). */
	struct ms_tstate *ts; /* the thread's record (threads.h) */
	uint32_t pend;
	uint32_t pend_rec, pend_stack, pend_seq;
	uint64_t pend_birth, pend_wait;
};

extern __thread struct ms_thread ms_self
	__attribute__((tls_model("initial-exec")));

uint32_t ms_thread_register(struct ms_thread *t);

/* Enter and leave library code that may call back into pthread. */
static inline void ms_guard_enter(struct ms_thread *t)
{
	t->guard++;
	t->ok = 0;
}

void ms_guard_leave(struct ms_thread *t);
void ms_thread_after_fork_child(void);
uint64_t ms_threads_seen(void);

/* The calling thread's state with its tid known. */
static inline struct ms_thread *ms_thread(void)
{
	struct ms_thread *t = &ms_self;
	if (__builtin_expect(t->tid == 0, 0))
		ms_thread_register(t);
	return t;
}

/* Advance the thread's Lamport clock past the mutex's last operation and
 * stamp the mutex with the result: an operation that happened after another
 * one (in the same thread, or through this mutex) gets a larger number. */
static inline uint64_t ms_order_next(struct ms_thread *t, uint64_t *mutex_seq)
{
	uint64_t seen = *mutex_seq;
	uint64_t o = (t->clock > seen ? t->clock : seen) + 1;
	t->clock = o;
	*mutex_seq = o;
	return o;
}

#endif
