/* mutexstat.h - the small API of libmutexstat for programs that link it
 * directly (pkg-config --cflags --libs mutexstat).
 *
 * Every pthread mutex, read-write lock and spin lock in the process, and
 * every condition-variable wait, is recorded whether or not these functions
 * are called; they only add names and
 * reports on demand.  Preloaded with LD_PRELOAD, the library works the same
 * without any of this (declare these functions weak to call them only when
 * it is there).  It must be loaded before libc.so.6, linked or preloaded:
 * dlopen'ed, it sees none of the program's calls, and says so. */
#ifndef MUTEXSTAT_H
#define MUTEXSTAT_H

#include <pthread.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MUTEXSTAT_VERSION "0.1.0"

/* Write the report now to the file descriptor fd (the same text as the
 * report at exit).  Returns 0, or -1 with errno set: EBADF for a negative
 * fd, as for one not open; what write(2) said if writing failed -- EPIPE
 * for a pipe or socket nobody reads any more (never SIGPIPE), EAGAIN for
 * a non-blocking fd that filled (the report then is cut short); ENOSYS if
 * the library records nothing in this process.  Blocks as write(2) does
 * (a pipe nobody reads but somebody holds open), but is no cancellation
 * point: a thread blocked in it is not cancelled.  The report at exit
 * gives up waiting for it after 5 s stuck in write(2), and the process
 * ends without.
 * Safe to call from any thread at any time, including while other threads
 * lock mutexes, and from several at once (one report at a time).
 * Not async-signal-safe (a report allocates): from a signal handler that
 * interrupted the library on the same thread, mutexstat_dump, _reset, _name
 * and _name_lock do nothing and fail (errno EDEADLK) instead of waiting for
 * ever;
 * raise the dump signal (SIGUSR1) for a report from a handler. */
int mutexstat_dump(int fd);

/* Set every counter, time and history back to zero, and forget the lock
 * orders and misuse seen so far (the findings start afresh).  Mutexes that
 * are held stay held; names stay.  With other threads locking, each mutex
 * counts from the moment the reset read its numbers. */
void mutexstat_reset(void);

/* Give a mutex a name for the report, before or after its
 * pthread_mutex_init; a mutex destroyed (or initialised again) and made
 * anew has none.  The name is copied (up to 63 bytes, cut before a
 * character), control characters and bytes that are not UTF-8 as '?';
 * each distinct name is kept once for the whole run, so renaming costs no
 * memory.  NULL or "" removes it.  Returns 0, or -1 if mutex is NULL, if
 * the mutex cannot be tracked (the table is full) or the names' memory
 * (4 MiB of distinct names) is spent. */
int mutexstat_name(const pthread_mutex_t *mutex, const char *name);

/* The same for a lock of any kind: a pthread_rwlock_t, a
 * pthread_spinlock_t (a volatile int, hence the volatile) or a mutex,
 * named by its address (a C++ std::shared_mutex is its native_handle()'s
 * rwlock).  A lock not initialised or used so far gets the name at its
 * init or first use, as the kind it is, if MUTEXSTAT_TRACK records that
 * kind; up to 256 names wait so at once (-1 past that). */
int mutexstat_name_lock(const volatile void *lock, const char *name);

#ifdef __cplusplus
}
#endif

#endif
