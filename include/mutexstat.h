/* mutexstat.h - the small API of libmutexstat for programs that link it
 * directly (pkg-config --cflags --libs mutexstat).
 *
 * Every pthread mutex and condition-variable wait in the process is recorded
 * whether or not these functions are called; they only add names and
 * reports on demand.  Preloaded with LD_PRELOAD, the library works the same
 * without any of this. */
#ifndef MUTEXSTAT_H
#define MUTEXSTAT_H

#include <pthread.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MUTEXSTAT_VERSION "0.1.0"

/* Write the report now to the file descriptor fd (the same text as the
 * report at exit).  Returns 0, or -1 with errno set if writing failed
 * (EBADF for a negative fd, as for one not open).  Safe to call from
 * any thread at any time, including while other threads lock mutexes.
 * Not async-signal-safe (a report allocates): from a signal handler that
 * interrupted the library on the same thread, mutexstat_dump, _reset and
 * _name do nothing and fail (errno EDEADLK) instead of waiting for ever;
 * raise the dump signal (SIGUSR1) for a report from a handler. */
int mutexstat_dump(int fd);

/* Set every counter, time and history back to zero.  Mutexes that are held
 * stay held; names stay.  With other threads locking, each mutex counts
 * from the moment the reset read its numbers. */
void mutexstat_reset(void);

/* Give a mutex a name for the report.  The name is copied (up to 63
 * bytes, cut before a character), control characters and bytes that are
 * not UTF-8 as '?'; NULL or "" removes it.  Returns 0, or -1 if the mutex cannot be tracked
 * (the table is full) or the names' memory is spent. */
int mutexstat_name(const pthread_mutex_t *mutex, const char *name);

#ifdef __cplusplus
}
#endif

#endif
