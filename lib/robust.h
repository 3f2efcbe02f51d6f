/* robust.h - robust mutexes whose owner died holding them.
 *
 * When the owner of a robust mutex dies -- a thread that exits, or a
 * process, for one shared between processes -- the next lock succeeds with
 * EOWNERDEAD.  The new owner either repairs what the mutex guards and calls
 * pthread_mutex_consistent(), or unlocks without doing so, after which the
 * mutex is not recoverable: every lock returns ENOTRECOVERABLE.  The
 * errors are counted with the mutex's other errors; this file counts the
 * two ways out (per mutex life) and writes the OWNER DIED findings. */
#ifndef MUTEXSTAT_ROBUST_H
#define MUTEXSTAT_ROBUST_H

#include "fmt.h"

#include <stdint.h>

/* pthread_mutex_consistent() succeeded on record r. */
void ms_robust_made_consistent(uint32_t r);
/* Its holder unlocked record r while it was inconsistent: now it is not
 * recoverable. */
void ms_robust_left_inconsistent(uint32_t r);

/* The OWNER DIED findings, for the report's findings section. */
void ms_robust_print(struct ms_fmt *f);

void ms_robust_after_fork_child(void);

#endif
