/* crash.h - MUTEXSTAT_ON_CRASH=report: a report when the program dies of
 * SIGSEGV, SIGBUS, SIGFPE, SIGILL or SIGABRT, then the signal's usual
 * effect.  See doc/processes-and-signals.md. */
#ifndef MUTEXSTAT_CRASH_H
#define MUTEXSTAT_CRASH_H

#include "report/report.h"

#include <stdint.h>

/* At start-up (when MUTEXSTAT_ON_CRASH=report): a handler for each of the
 * five signals the program does not handle or ignore itself. */
void ms_crash_init(void);

/* Waits for the report asked of the dump thread (ms_dump_crash_report):
 * while it makes progress, at most 60 s; 5 s without progress is stuck.
 * 0 when it is written, -1 when given up. */
int ms_crash_wait_for_report(void);

/* The exit report is written: a later crash adds none. */
void ms_crash_exit_reported(void);

#endif
