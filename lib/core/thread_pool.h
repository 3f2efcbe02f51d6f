/* thread_pool.h - the pool of thread records (struct ms_tstate, thread.h).
 *
 * Records come from a pool of ours, grown in mapped chunks and reused when
 * a thread exits (a pthread key's destructor returns them), so a run that
 * starts 100,000 short-lived threads uses as many records as it has threads
 * alive at once.  The thread's TLS points at its record; other threads read
 * records only to report. */
#ifndef MUTEXSTAT_THREAD_POOL_H
#define MUTEXSTAT_THREAD_POOL_H

#include "core/thread.h"

#include <stddef.h>
#include <stdint.h>

/* The address of a tracked mutex, from its record (0 if gone). */
uintptr_t ms_rec_key(uint32_t rec);

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
/* Where thread tid took its hold of record rec, from its held set: the
 * outermost level of a recursive mutex; 0 if not there. */
uintptr_t ms_held_taken_at(uint32_t tid, uint32_t rec);
void ms_held_forget(struct ms_tstate *ts, uint32_t rec);
/* A read of record r that thread tid holds and will never let go of (it
 * exited, or is a thread of a fork's parent), taken at `at`: the lock
 * keeps it (table.h's exited_reads). */
void ms_held_read_orphaned(uint32_t r, uint32_t tid, uintptr_t at);

/* Bumped whenever a thread unlocks a mutex it does not hold (misuse that
 * glibc allows): other threads' held sets may then be stale. */
extern uint32_t ms_unlocks_elsewhere;
void ms_held_prune(struct ms_tstate *ts);

/* Thread tid's system call now, from /proc, and its first argument (0
 * if not shown); -1 if it runs ("running", also one woken that waits for
 * a CPU) or is gone. */
long ms_task_syscall(uint32_t tid, uint64_t *arg0);
/* /proc/self/task/TID/NAME into buf, NUL-terminated ("" if none);
 * returns its length.  Keeps errno. */
size_t ms_task_file(uint32_t tid, const char *name, char *buf, size_t cap);
/* Thread tid's state letter in /proc (R runs, S and D sleep...), 0 gone. */
char ms_task_state(uint32_t tid);
/* The time thread tid has run on a CPU, in ns (its schedstat: the kernel
 * adds a running thread's time at each tick and when it stops running);
 * 0 if gone or the kernel does not say. */
uint64_t ms_task_cpu_ns(uint32_t tid);
/* A thread's name as ps -L shows it; for one gone, the name it had as it
 * ended if it is among the last 256 to end; else "" (report time).  The
 * program chose it, with any bytes: a control character or a byte that is
 * not UTF-8 reads '?' (base/fmt.h), as in mutexes' names. */
const char *ms_thread_name(uint32_t tid, char out[16]);
/* The calling thread's name, the same way, without reading /proc. */
const char *ms_own_thread_name(char out[16]);

/* Walk all thread records in use. */
void ms_threads_each(void (*fn)(struct ms_tstate *ts, void *arg), void *arg);
/* How many threads (but thread `except`) hold record rec for read, by
 * their held sets: reads a record of every thread. */
uint32_t ms_held_readers(uint32_t rec, uint32_t except);
/* ... and how many read holds they have of it: glibc counts each (a
 * thread that read-locks twice is two readers to its unlocks) */
uint32_t ms_held_reads(uint32_t rec, uint32_t except);

#endif
