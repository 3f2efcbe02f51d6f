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

/* Write a warning line to the stderr the program started with. */
void ms_warn(const char *msg);

#endif
