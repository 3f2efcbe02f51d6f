/* recording.h - the first question of every entry point: does this call
 * get recorded?  Shared by the mutex entry points (interpose.c) and those
 * of the other kinds of lock (interpose_rw.c). */
#ifndef MUTEXSTAT_RECORDING_H
#define MUTEXSTAT_RECORDING_H

#include "core/table.h"
#include "core/thread.h"

/* The calling thread, or NULL when the call must go straight to glibc:
 * library code on this thread's stack, or not started (recording.c). */
struct ms_thread *ms_recording_slow(struct ms_thread *t);

static inline __attribute__((always_inline)) struct ms_thread *recording(void)
{
	struct ms_thread *t = &ms_self;
	if (likely(t->ok))
		return t;
	return ms_recording_slow(t);
}

/* A tracked record number, not MS_REC_NONE nor MS_REC_UNTRACKED. */
static inline int tracked(uint32_t r)
{
	return r - 1 < MS_REC_UNTRACKED - 1;
}

#endif
