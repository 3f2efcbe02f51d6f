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
/* What asked for the report this thread writes before the exit (a line
 * under the heading says it: a live dump, the watchdog's, the program's
 * mutexstat_dump); NULL: a live report of no known cause. */
extern __thread const char *ms_report_occasion __attribute__((tls_model("initial-exec")));

/* MUTEXSTAT_EXIT_CODE's count of failing findings, left in
 * ms_report_failing as a text report would, with no text written. */
void ms_report_count_failing(void);
void ms_report_text_after_fork_child(void);

/* Whether the report would say only "locked no mutexes" (MUTEXSTAT_QUIET
 * then writes none at exit). */
int ms_report_locked_nothing(void);

/* The top table's lines, ranked as the report ranks them, for a run's
 * summary (report/run.h): the site is where the mutex was first locked,
 * named as the report names it.  Between ms_clock_report_begin/end. */
struct ms_top_line {
	const char *name; /* mutexstat_name()'s, or NULL */
	uint64_t wait_ns, contended, acquisitions;
	char site[320];
};
/* The findings and misuse the text report would print, into buf (cut at
 * cap, NUL-terminated); returns the failing ones' count. */
int ms_report_findings_text(char *buf, size_t cap);

void ms_report_each_top(void (*fn)(const struct ms_top_line *l, void *arg), void *arg);

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
