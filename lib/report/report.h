/* report.h - the text report. */
#ifndef MUTEXSTAT_REPORT_H
#define MUTEXSTAT_REPORT_H

#include "core/table.h"
#include "report/kinds.h"

#include <stddef.h>
#include <stdint.h>

/* Write the report to fd.  Returns 0, or -1 if writing failed. */
int ms_report(int fd);

/* Findings in the last report that fail a CI run (DEADLOCK, POTENTIAL
 * DEADLOCK, SELF-DEADLOCK), for MUTEXSTAT_EXIT_CODE. */
extern int ms_report_failing;

/* Set at start-up when the library was loaded after libc.so.6 (by dlopen):
 * the program's calls find glibc's functions first, and every report
 * says so. */
extern int ms_report_loaded_late;

/* Set while this thread writes the process's last report (at exit, or a
 * crash's, formats.c): its waits for a report under way give up once that
 * one is stuck -- a mutexstat_dump() blocked for ever in write(2) -- for
 * without the library the process would end.  Then ms_report_abandoned:
 * nothing more of that report is written, and one line says why. */
extern __thread int ms_report_writing_last __attribute__((tls_model("initial-exec")));
extern int ms_report_abandoned;

/* MUTEXSTAT_EXIT_CODE's count of failing findings, left in
 * ms_report_failing as a text report would, with no text written. */
void ms_report_count_failing(void);
void ms_report_text_after_fork_child(void);

/* The crash a report is written for (runtime/crash.c sets it, from its
 * signal handler); signal 0 when there is none. */
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

/* The mutex's kind as words: "normal", "recursive robust pshared", ...,
 * with ", no init seen" for one first met in a lock. */

#endif
