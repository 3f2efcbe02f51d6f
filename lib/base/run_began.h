/* run_began.h - when the run a process belongs to began, for a report
 * file shared without %p.
 *
 * A text report goes after the reports other processes of its run wrote
 * to the same file, and replaces an earlier run's (base/output.c).  The
 * time the library started in this process tells them apart only for its
 * fork children: after an exec a program starts anew.  A shell's sibling
 * programs (`sh -c 'prog1; prog2'`) each began after the other's report,
 * and the last, which the shell execs in its own place, too: each
 * replaced the report before it, and a build's compilers all but the
 * last's.
 *
 * So the run is the process's line of ancestors started with the same
 * MUTEXSTAT_OUTPUT entry in their environment, as the kernel keeps it
 * (/proc/PID/environ: what exec gave them, not what a shell exported
 * since), short of a session's leader, and it began when the oldest of
 * them, or this process, began as a process: at its fork, before any
 * exec.  /proc gives those starts in clock ticks (10 ms); a start is
 * taken as the end of its tick, so that a report written before it began
 * is never taken for the run's (one a program of the run wrote within
 * that tick, or the file system's coarser clock's, is replaced). */
#ifndef MUTEXSTAT_RUN_BEGAN_H
#define MUTEXSTAT_RUN_BEGAN_H

#include <time.h>

/* The start of this process's run by CLOCK_REALTIME (the clock of file
 * times) into *start: 1, or 0 if /proc cannot tell (no MUTEXSTAT_OUTPUT
 * entry, /proc not mounted) and *start is left as it is.  Reads /proc
 * only (open, read, close: async-signal-safe), as a report is written. */
int ms_run_began(struct timespec *start);

#endif
