/* formats.h - the report in every format asked for, in its files. */
#ifndef MUTEXSTAT_FORMATS_H
#define MUTEXSTAT_FORMATS_H

/* Write the report in each MUTEXSTAT_FORMAT where MUTEXSTAT_OUTPUT says
 * (seq: a live dump's number; 0 at exit). */
void ms_report_all(unsigned seq);
void ms_report_after_fork_child(void);

/* Write the report where MUTEXSTAT_OUTPUT says (or the original stderr). */
void ms_report_to_output(void);

#endif
