/* crash.h - MUTEXSTAT_ON_CRASH=report: a report when the program dies of
 * SIGSEGV, SIGBUS, SIGFPE, SIGILL or SIGABRT, then the signal's usual
 * effect.  See README, "Signals and crashes". */
#ifndef MUTEXSTAT_CRASH_H
#define MUTEXSTAT_CRASH_H

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

/* The crash a report is written for; signal 0 when there is none. */
struct ms_crash {
	int signal;
	uint32_t tid;      /* the thread that got it */
	int sent;          /* sent (kill, raise, abort), not a fault */
	int sender_pid;    /* who sent it, when sent */
	uintptr_t address; /* the faulting address, when a fault */
};
extern struct ms_crash ms_crash;

/* One line about the crash for the text report's header, or "" */
const char *ms_crash_describe(char *out, unsigned cap);

#endif
