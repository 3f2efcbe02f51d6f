/* fork.h - the fork handlers (init.c registers them with pthread_atfork).
 *
 * The forking thread holds the library's table and depot locks across
 * fork(), so the child gets tables nobody was changing; the child then
 * starts its own view, like a new process (core/forked.h).  Only
 * async-signal-safe work happens in the child's handler: memory writes and
 * plain system calls. */
#ifndef MUTEXSTAT_FORK_H
#define MUTEXSTAT_FORK_H

void ms_fork_prepare(void);
void ms_fork_parent(void);
void ms_fork_child(void);
/* What ms_fork_prepare() notes of the parent, for a fork that ran no
 * prepare handler (_Fork) of process parent. */
void ms_fork_note_parent(int parent);

#endif
