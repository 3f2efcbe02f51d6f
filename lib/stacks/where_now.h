/* where_now.h - where another thread of this process is now, for the
 * end of a wait chain in a report. */
#ifndef MUTEXSTAT_WHERE_NOW_H
#define MUTEXSTAT_WHERE_NOW_H

#include <stdint.h>

struct ms_tstate;

/* Where a thread of this process is now (read from /proc if it is
 * blocked, else asked with a signal): the number of frames, at *frames,
 * innermost first; 0 if it did not answer; below 0 if it was not asked,
 * or answered with no stack (-5: near its stack's end; -6: inside
 * glibc's cancellation handler; -7: not asked, it may be in a handler on a
 * small alternate stack; -8: the signal could not be sent, as a seccomp
 * filter refuses it; -9: on a stack it switched to, a coroutine's), and ms_where_now_not_asked says why (NULL: no call stacks).  Report time. */
int ms_where_now(struct ms_tstate *ts, const uintptr_t **frames);
const char *ms_where_now_not_asked(int n);

/* The signal a running thread is asked with (SIGRTMAX-3), 0 if it is
 * the program's; its handler, which the dump thread's start-up installs;
 * and where a signal handler returns to (glibc's trampoline, which
 * captures from a handler begin with). */
extern int ms_where_now_signal;
void ms_where_now_handler(int sig);
extern uintptr_t ms_signal_return;

#endif
