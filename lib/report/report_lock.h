/* report_lock.h - waiting for a lock that a report under way holds.
 *
 * A report holds its locks while it writes, and a write can block for
 * ever: a mutexstat_dump() to a pipe nobody reads, a terminal stopped
 * with ^S.  Waiting for such a report must cost the program nothing (no
 * CPU spun away) and must not keep the process from ending. */
#ifndef MUTEXSTAT_REPORT_LOCK_H
#define MUTEXSTAT_REPORT_LOCK_H

/* Takes *lock (0 free, 1 taken): a short spin, then naps of 1 ms.  Gives
 * up (returns -1) once *stop is set (stop may be NULL), or, if last (the
 * process's last report, which without the library would not wait at
 * all), after 5 s in which no report made progress (ms_report_progress)
 * while one was inside write(2) (ms_report_in_write): stuck on a reader
 * that does not read.  A report that is slow elsewhere (libdw reading a
 * large program's DWARF) is waited for.  0 when taken. */
int ms_report_lock_take(int *lock, int last, const int *stop);

void ms_report_lock_give(int *lock);

#endif
