/* interval.h - MUTEXSTAT_INTERVAL: reports of the run as a time series.
 *
 * Every interval the dump thread writes each format asked for with what
 * happened since the interval before, as PREFIX.N.EXT (formats.h); at
 * exit the last, partial interval is written the same way, before the
 * exit report.  Intervals follow one another without a gap, each starting
 * where the one before ended, so a run's intervals add up to its whole
 * run. */
#ifndef MUTEXSTAT_INTERVAL_H
#define MUTEXSTAT_INTERVAL_H

/* At start-up, once the options are read: whether interval files will be
 * written. */
int ms_interval_init(void);
int ms_interval_on(void);

/* The dump thread: how long until the current interval ends (ms, its
 * wait's timeout), -1 if there are no intervals; and the interval's files, if it
 * has ended. */
int ms_interval_timeout_ms(void);
void ms_interval_tick(void);

/* The process ends: its last interval's files, before its exit report
 * (or crash report). */
void ms_interval_last(void);

/* No more interval files (the library does not record after all). */
void ms_interval_stop(void);

/* A fork child's numbers start at the fork (its table is new): so do its
 * intervals, numbered from 1 in files of its own pid. */
void ms_interval_after_fork_child(void);

#endif
