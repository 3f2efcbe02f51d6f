/* formats.h - the report in every format asked for, in its files. */
#ifndef MUTEXSTAT_FORMATS_H
#define MUTEXSTAT_FORMATS_H

/* Write the report in each MUTEXSTAT_FORMAT where MUTEXSTAT_OUTPUT says
 * (seq: a live dump's number; 0 at exit). */
void ms_report_all(unsigned seq);
/* The process ends without a report of its own (a fork child's _exit or
 * quick_exit, MUTEXSTAT_EXIT_REPORT=0): a live dump under way is finished
 * first -- its file was left cut -- and none starts after. */
void ms_report_files_finish(void);
void ms_report_after_fork_child(void);

/* Write one interval's profile files (MUTEXSTAT_INTERVAL): the pprof and
 * folded formats MUTEXSTAT_FORMAT asks for, PREFIX.N.EXT each (N: the
 * span's number), with what happened since the previous interval's; then
 * remove interval N - keep's (keep 0: none).  last: the process's last,
 * before its exit report.  Returns 0, -1 if one could not be written
 * (said on stderr, as a report file's failure is), 1 if none was (the
 * process is ending). */
struct ms_span;
int ms_report_interval(const struct ms_span *span, unsigned keep, int last);

/* Write the report where MUTEXSTAT_OUTPUT says (or the original stderr). */
void ms_report_to_output(void);

#endif
