/* altstack.h - room to write a report in: the exit report runs on the
 * exiting thread's stack, which can be small (ulimit -s 64 for the main
 * thread, or a thread the program started with a small stack), and so
 * does mutexstat_dump's, and a report (its frames, libdw's) needs more
 * than 64 KiB. */
#ifndef MUTEXSTAT_REPORT_STACK_H
#define MUTEXSTAT_REPORT_STACK_H

#include <stddef.h>

/* What a report is given: a stack of this many bytes (the dump thread's
 * too). */
#define MS_REPORT_STACK (2u << 20)

/* fn(arg) on the calling thread, on a stack of MS_REPORT_STACK bytes of
 * its own when less than that is left of the thread's stack, or it runs
 * on a stack it switched to (a coroutine's) (mapped for the call,
 * unmapped after); where it is, when there is room or no stack can be
 * mapped.  errno is fn's. */
void ms_report_stack_run(void (*fn)(void *), void *arg);

#endif
