/* out_pprof.h - the blame lines as a pprof profile (profile.proto, gzip),
 * for `go tool pprof` and the tools that read its format. */
#ifndef MUTEXSTAT_OUT_PPROF_H
#define MUTEXSTAT_OUT_PPROF_H

/* One sample per blame line of every live mutex, both kinds: values
 * [contentions, delay in ns]; its stack innermost first under a root frame
 * "waiting" or "holding"; labels side=waiting|holding, mutex=<address>,
 * mutex_name=<name> for named mutexes, kind=mutex|rwlock|spin, and for
 * a read-write lock mode=read|write where the stack's mode is known
 * (out_modes.h).  Functions, files and lines come from our symbolizer,
 * mappings and build ids from the running process, so pprof needs none
 * of the program's files.  Compressed with zlib, opened with dlopen at
 * report time (stored blocks, still gzip, without it).  Report time only, inside a symbols session.  Returns 0, or -1 with
 * errno set if memory ran out or writing failed. */
int ms_write_pprof(int fd);

#endif
