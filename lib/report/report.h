/* report.h - the text report. */
#ifndef MUTEXSTAT_REPORT_H
#define MUTEXSTAT_REPORT_H

/* Write the report to fd.  Returns 0, or -1 if writing failed. */
int ms_report(int fd);

/* Findings in the last report that fail a CI run (DEADLOCK, POTENTIAL
 * DEADLOCK, SELF-DEADLOCK), for MUTEXSTAT_EXIT_CODE. */
extern int ms_report_failing;

/* Set at start-up when the library was loaded after libc.so.6 (by dlopen):
 * the program's calls find glibc's functions first, and every report
 * says so. */
extern int ms_report_loaded_late;

/* Write the report in each MUTEXSTAT_FORMAT where MUTEXSTAT_OUTPUT says
 * (seq: a live dump's number; 0 at exit). */
void ms_report_all(unsigned seq);
void ms_report_after_fork_child(void);

/* Write the report where MUTEXSTAT_OUTPUT says (or the original stderr). */
void ms_report_to_output(void);

#endif
