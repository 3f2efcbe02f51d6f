/* last_thread.h - the dump thread does not keep the process alive.
 *
 * glibc ends a process with exit(0) when its last thread ends: main called
 * pthread_exit, and the other threads have finished.  It knows the last
 * one by a count of the process's threads, in which the dump thread (waitfor.c)
 * would be one for ever: the program's last thread would end alone, the
 * process would live on with the dump thread only -- which blocks every
 * signal, so only SIGKILL would end it.  So the dump thread is taken out
 * of that count once it runs, and never ends (its end would be counted:
 * waitfor.c). */
#ifndef MUTEXSTAT_LAST_THREAD_H
#define MUTEXSTAT_LAST_THREAD_H

/* Find glibc's count (at start-up: dlvsym may allocate). */
void ms_last_thread_init(void);

/* From the thread that created the dump thread, once that succeeded: the
 * dump thread is not counted.  Returns 1 if it was taken out. */
int ms_last_thread_uncount(void);

#endif
