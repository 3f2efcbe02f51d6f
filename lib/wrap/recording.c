/* recording.c - whether a call is recorded: the calling thread's first
 * call, or its first since library code ran on it (see recording.h). */
#include "wrap/recording.h"
#include "base/spin.h"
#include "core/thread_pool.h"
#include "runtime/init.h"

/* The calling thread, or NULL when the call must go straight to glibc
 * (recording.h). */
struct ms_thread *ms_recording_slow(struct ms_thread *t)
{
	if (ms_start_lazily())
		return NULL;
	if (t->guard) {
		/* a signal handler's call, from inside our code: one that
		 * blocks may be waited for by our lock's waiters (spin.h) */
		ms_spin_note_blocking();
		return NULL;
	}
	if (!t->tid) {
		ms_thread_register(t);
		if (t->guard)
			return NULL; /* its id refused: not followed (thread.c) */
	}
	if (!t->ts) {
		/* guarded: a signal handler's mutex call while the pool's
		 * lock is held goes straight to glibc, not to that lock */
		ms_guard_enter(t);
		t->ts = ms_tstate_new(t->tid);
		ms_guard_leave(t);
		if (!t->ts)
			return NULL; /* no record to be had: not followed */
	} else if (unlikely(t->ts->join_only))
		t->ts->join_only = 0; /* its record was made by a join */
	if (!t->pend)
		ms_ok_set(t); /* else: after the next unlock (record.c) */
	return t;
}
