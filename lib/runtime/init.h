/* init.h - starting the library, and stopping to report at exit. */
#ifndef MUTEXSTAT_INIT_H
#define MUTEXSTAT_INIT_H

/* Start now if nobody has (a call that came before our constructor).
 * Returns non-zero if the caller must pass straight through: start-up is
 * under way on this thread, or the library is disabled. */
int ms_start_lazily(void);

/* When this copy of the library passes calls through because another
 * copy records the process (two files loaded): that copy's function of
 * this name, for the API to send its calls to.  NULL otherwise. */
void *ms_recording_copy(const char *name);

/* The child of _Fork, which runs no fork handlers: ours, as after fork,
 * if they are registered. */
void ms_fork_child_unhandled(int parent);

/* _exit or _Exit (wrap/interpose_process.c), and quick_exit's end: the
 * exit report exit() would write, for a process that locked a mutex -- a
 * linker ends so -- but not in a fork child (its _exit after a failed
 * exec, a daemon's double fork: a report each would be noise), nor in a
 * vfork child, which shares its parent's memory, nor from a signal
 * handler; the run's end if this is its first process; then the status,
 * MUTEXSTAT_EXIT_CODE's as after exit(), goes to `next`, the function
 * behind us (glibc's, or a sanitizer's that checks before the end), or,
 * before start-up resolved it, to the system call glibc's makes. */
__attribute__((noreturn)) void ms_exit_now(void (*next)(int), int status);

/* quick_exit(status) (wrap/interpose_process.c), before glibc's runs the
 * program's at_quick_exit handlers: the status for the handler start-up
 * registered, which glibc runs after them (the first registered runs
 * last) and which ends the process as _exit above does. */
void ms_quick_exit_begin(int status);
/* exit() called: a thread that comes while another is in it waits for
 * that one's exit report. */
void ms_exit_begin(int status);

/* Write a warning line to the stderr the program started with. */
void ms_warn(const char *msg);

#endif
