/* out_folded.h - folded stacks ("frame;frame;frame value") for
 * flamegraph.pl, speedscope and inferno. */
#ifndef MUTEXSTAT_OUT_FOLDED_H
#define MUTEXSTAT_OUT_FOLDED_H

#include "analysis/blame.h"
#include "report/span.h"

/* One line per (mutex, stack) of the given kind: MS_BLAME_WAIT, the time
 * threads waited at that stack; MS_BLAME_HOLD, the wait the holders' unlock
 * at that stack caused.  Root first (the mutex; "rwlock 0x..", "spin lock
 * 0x.." for the other kinds, a read-write lock's then followed by the
 * stack's mode: "[read]", "[write]", "[mode not known]"), leaf last,
 * values in nanoseconds.  With a span, only what was charged since the
 * previous interval's folded files (blame.h, ms_blame_since).  Returns 0,
 * or -1 if writing failed. */
int ms_write_folded(int fd, enum ms_blame_kind kind, const struct ms_span *span);

#endif
