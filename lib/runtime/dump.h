/* dump.h - the dump thread: the report on a signal (MUTEXSTAT_SIGNAL),
 * the watchdog (MUTEXSTAT_WATCHDOG) and the crash report, written by a
 * thread of ours that blocks every signal. */
#ifndef MUTEXSTAT_DUMP_H
#define MUTEXSTAT_DUMP_H

#include <stddef.h>
#include <stdint.h>

/* Install the dump signal's handler and start the dump thread (when
 * MUTEXSTAT_SIGNAL is not none, the watchdog or crash reports are on).  A
 * dump signal (or SIGRTMAX-3) that already has a handler or is ignored is
 * left to the program: live dumps are then off, with a one-line note. */
int ms_dump_init(void);

/* For crash.c, from a signal handler.  ms_dump_crash_report asks the dump
 * thread for the process's last report (written where the exit report
 * goes); -1 if this process has no dump thread (a child of fork) or the
 * caller is the dump thread.  _done says it is written. */
int ms_dump_crash_report(void);
int ms_dump_crash_report_done(void);
int ms_in_dump_thread(void);
/* Whether the calling thread runs a signal handler (init.c: exit() from
 * one has the exit report written by the dump thread). */
int ms_dump_in_signal_handler(void);
extern int ms_dump_aborting; /* the watchdog's abort (MUTEXSTAT_ON_DEADLOCK) */
/* The dump thread is started late where it can be (dump.c says when):
 * ms_dump_pending says it waits, for the program's second thread
 * (ms_dump_thread_created), a wait (ms_dump_before_wait: in a process
 * with one thread, a wait for another process, a process-shared mutex or
 * one a fork child's parent held, so a dump must be possible then), or
 * the next mutex call (ms_dump_at_call).  A fork child's dump signal
 * wakes its own thread (the word it waits on is the child's copy); not
 * followed (MUTEXSTAT_FOLLOW=0), the signals get back the dispositions
 * they had before the library. */
void ms_dump_after_fork_child(int follow);
extern uint32_t ms_dump_pending;
void ms_dump_at_call(void);
void ms_dump_thread_created(void);
void ms_dump_waits(void);
/* A self-deadlock that never returns was just recorded: the dump thread
 * says it on stderr (started for it if need be, even with no dump signal
 * nor watchdog), or, where none can be had, the calling thread. */
void ms_dump_announce(void);
/* At exit: a live dump's signal that came and stays pending, because
 * every thread blocks it, is told in the report's heading (its dump was
 * never written, and nothing else would say why). */
void ms_dump_note_pending(void);
static inline void ms_dump_before_wait(void)
{
	if (__builtin_expect(__atomic_load_n(&ms_dump_pending, __ATOMIC_RELAXED), 0))
		ms_dump_waits();
}

/* The dump thread's stack size (MS_REPORT_STACK), or 0 for the default:
 * a default one is as large as ulimit -s, 8 MiB taken from the room an
 * address-space limit (ulimit -v) leaves, or too small for a report
 * (ulimit -s 64); without either the default's pages cost only when used. */
size_t ms_dump_thread_stack(void);

#endif
