/* api.c - the public mutexstat_* functions (include/mutexstat.h). */
#define _GNU_SOURCE
#include "mutexstat.h"
#include "core/names.h"
#include "runtime/init.h"
#include "base/fds.h"
#include "base/internal.h"
#include "analysis/findings.h"
#include "analysis/order.h"
#include "record/record.h"
#include "report/report.h"
#include "report/altstack.h"
#include "core/table.h"
#include "core/thread.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

/* Non-zero while this thread is inside one of these functions or other
 * library code: a signal handler that interrupts it and calls one of them
 * again would spin for ever on a lock its own thread holds (the report's,
 * the names' arena, or the table's: an update making or ending a life is
 * in_update, not guarded), so that call does nothing and fails instead.
 * Initial-exec, as ms_self: reaching it never allocates. */
static __thread uint32_t in_api __attribute__((tls_model("initial-exec")));

static int reentered(void)
{
	if (!in_api && !ms_self.guard && !ms_self.in_update)
		return 0;
	errno = EDEADLK;
	return 1;
}

struct dump_call {
	int fd, rc;
};

static void dump_to(void *arg)
{
	struct dump_call *call = arg;
	ms_report_occasion = "a report the program asked for (mutexstat_dump); it runs on";
	call->rc = ms_report(call->fd);
	ms_report_occasion = NULL;
}

MS_EXPORT int mutexstat_dump(int fd)
{
	/* as write(2) would answer: an unopened 999 does, and so would the
	 * library's own descriptors in the program without it (fds.h) */
	if (fd < 0 || ms_fd_is_ours(fd)) {
		errno = EBADF;
		return -1;
	}
	if (reentered())
		return -1;
	if (ms_start_lazily() && !ms_active) {
		int (*first)(int) = (int (*)(int))ms_recording_copy("mutexstat_dump");
		if (first)
			return first(fd);
		errno = ENOSYS; /* nothing recorded in this process */
		return -1;
	}
	/* on a stack of its own if this thread's is small (altstack.h) */
	struct dump_call call = { fd, -1 };
	ms_report_stack_run(dump_to, &call);
	return call.rc;
}

MS_EXPORT void mutexstat_reset(void)
{
	if (reentered())
		return;
	if (ms_start_lazily()) {
		void (*first)(void) = (void (*)(void))ms_recording_copy("mutexstat_reset");
		if (first && !ms_active)
			first();
		return;
	}
	ms_guard_enter(&ms_self);
	ms_table_reset_running();
	ms_threads_not_followed_reset();
	ms_findings_reset();
	ms_guard_leave(&ms_self);
}

/* The kept copy of the name to give (NULL for none); 0, or -1 if the
 * names' memory is spent. */
static int name_copy(const char *name, const char **copy)
{
	if (name && !name[0])
		name = NULL; /* "" would be a blank column: the address instead */
	in_api = 1;
	*copy = name ? ms_name_keep(name) : NULL;
	in_api = 0;
	return name && !*copy ? -1 : 0;
}

/* Whether the library answers this naming call (0), else the answer of
 * the library that records instead of us, or -1. */
static int name_answered_elsewhere(const char *which, const void *lock, const char *name,
				   int *rc)
{
	*rc = -1;
	if (reentered() || !lock)
		return 1;
	(void)ms_thread();
	if (ms_start_lazily()) {
		int (*first)(const void *, const char *) =
			(int (*)(const void *, const char *))ms_recording_copy(which);
		*rc = first && !ms_active ? first(lock, name) : -1;
		return 1;
	}
	return 0;
}

/* A lock of any kind, by its address alone: one with no record yet (not
 * initialised or used so far) gets its name when its init or first use
 * makes one, as the kind it turns out to be, and only if MUTEXSTAT_TRACK
 * records that kind (core/pending_names.h). */
MS_EXPORT int mutexstat_name_lock(const volatile void *lock, const char *name)
{
	int rc;
	const void *l = (const void *)(uintptr_t)lock; /* never read through */
	if (name_answered_elsewhere("mutexstat_name_lock", l, name, &rc))
		return rc;
	const char *copy;
	if (name_copy(name, &copy) != 0)
		return -1;
	int kept;
	uint32_t r = ms_table_name_later((uintptr_t)l, copy, &ms_self.clock, &kept);
	if (r == MS_REC_NONE)
		return kept;
	if (r == MS_REC_UNTRACKED)
		return -1;
	STORE(&ms_cold(r)->name, copy);
	return 0;
}

/* A mutex: its kind is known, so a record is made now if it has none. */
MS_EXPORT int mutexstat_name(const pthread_mutex_t *mutex, const char *name)
{
	int rc;
	if (name_answered_elsewhere("mutexstat_name", mutex, name, &rc))
		return rc;
	uint32_t r = ms_table_find((uintptr_t)mutex);
	if (r == MS_REC_NONE)
		r = ms_first_use(&ms_self, (pthread_mutex_t *)mutex, 0);
	else if (r != MS_REC_UNTRACKED && ms_lock_class(LOAD(&ms_rec(r)->flags)) != MS_CLASS_MUTEX)
		/* memory of another kind of lock, never destroyed: the name
		 * is the new mutex life's, not the old lock's */
		r = ms_first_use_again(&ms_self, (pthread_mutex_t *)mutex, 0);
	if (r == MS_REC_UNTRACKED || r == MS_REC_NONE)
		return -1;
	const char *copy;
	if (name_copy(name, &copy) != 0)
		return -1;
	STORE(&ms_cold(r)->name, copy);
	return 0;
}
