/* out_pprof.h - the blame lines as a pprof profile (profile.proto, gzip),
 * for `go tool pprof` and the tools that read its format. */
#ifndef MUTEXSTAT_OUT_PPROF_H
#define MUTEXSTAT_OUT_PPROF_H

#include "report/span.h"

/* One sample per blame line of every live mutex, both kinds: values
 * [contentions, delay in ns]; its stack innermost first under a root frame
 * "waiting" or "holding"; labels side=waiting|holding, mutex=<address>,
 * mutex_name=<name> for named mutexes, kind=mutex|rwlock|spin, and for
 * a read-write lock mode=read|write where the stack's mode is known
 * (out_modes.h).  Functions, files and lines come from our symbolizer,
 * mappings and build ids from the running process, so pprof needs none
 * of the program's files.  Compressed with zlib, opened with dlopen at
 * report time (stored blocks, still gzip, without it).  Every sample is
 * labelled with the process too -- program=, pid=, host= -- so the
 * profiles of many processes and machines can be merged and told apart.
 * time_nanos and duration_nanos say what the profile covers: the run so
 * far, or a span, whose samples are then only what was charged since the
 * previous interval's profile (blame.h, ms_blame_since).  Report time
 * only, inside a symbols session.  Returns 0, or -1 with errno set if
 * memory ran out or writing failed. */
int ms_write_pprof(int fd, const struct ms_span *span);

#endif
