/* init.c - start-up (constructor, or the first mutex call if that comes
 * first), fork handlers, and the report at exit. */
#define _GNU_SOURCE
#include "init.h"
#include "clock.h"
#include "crash.h"
#include "fmt.h"
#include "options.h"
#include "output.h"
#include "depot.h"
#include "real.h"
#include "stack.h"
#include "threads.h"
#include "live.h"
#include "findings.h"
#include "symbols.h"
#include "report.h"
#include "table.h"
#include "thread.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>


enum { NOT_STARTED, STARTING, STARTED, DISABLED };
static int state;

void ms_warn(const char *msg)
{
	int fd = ms_output_stderr();
	const char *end = msg;
	while (*end)
		end++;
	if (fd >= 0)
		ms_write_all(fd, msg, (size_t)(end - msg));
}

static const char *env(const char *name)
{
	/* setuid and setgid programs ignore MUTEXSTAT_* */
	return secure_getenv(name);
}

static void before_fork(void)
{
	if (!ms_self.guard) {
		ms_table_lock();
		ms_depot_lock();
	}
}

static void after_fork_parent(void)
{
	if (!ms_self.guard) {
		ms_depot_unlock();
		ms_table_unlock();
	}
}

void ms_api_after_fork_child(void); /* api.c */

static void after_fork_child(void)
{
	ms_table_after_fork_child();
	ms_depot_after_fork_child();
	ms_threads_after_fork_child();
	ms_report_after_fork_child();
	ms_findings_after_fork_child();
	ms_symbols_after_fork_child();
	ms_api_after_fork_child();
	ms_thread_after_fork_child();
}

static void start(void)
{
	int saved = errno;
	ms_guard_enter(&ms_self);
	ms_clock_init();
	ms_output_init();
	ms_options_load(env, ms_warn);
	ms_real_resolve();
	ms_stack_init();
	ms_threads_init();
	ms_live_init();
	ms_crash_init();
	ms_depot_init((size_t)ms_opt.stack_memory << 20);
	int got = ms_table_init((uint32_t)ms_opt.table_size,
				(uint32_t)ms_opt.history);
	if (!got) {
		ms_warn("mutexstat: cannot map the statistics table; "
			"not recording\n");
		__atomic_store_n(&state, DISABLED, __ATOMIC_RELEASE);
	} else {
		if ((uint64_t)got < ms_opt.table_size) {
			char buf[200];
			struct ms_fmt f;
			ms_fmt_init(&f, buf, sizeof buf, -1);
			ms_fmt(&f,
			       "mutexstat: MUTEXSTAT_TABLE_SIZE=%llu does not fit "
			       "in memory; tracking %d mutexes\n",
			       (unsigned long long)ms_opt.table_size, got);
			ms_warn(ms_fmt_str(&f));
			ms_opt.table_size = (uint64_t)got;
		}
		pthread_atfork(before_fork, after_fork_parent, after_fork_child);
		__atomic_store_n(&ms_active, 1, __ATOMIC_RELEASE);
		__atomic_store_n(&state, STARTED, __ATOMIC_RELEASE);
	}
	ms_guard_leave(&ms_self);
	errno = saved;
}

int ms_start_lazily(void)
{
	int s = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
	if (s == STARTED)
		return 0;
	if (s == DISABLED || ms_self.guard)
		return 1; /* off, or start-up is on this thread's stack */
	if (s == NOT_STARTED &&
	    __atomic_compare_exchange_n(&state, &s, STARTING, 0,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		start();
		return !ms_active;
	}
	/* Another thread is starting us: pass this call through. */
	return 1;
}

__attribute__((constructor)) static void mutexstat_constructor(void)
{
	ms_start_lazily();
}

__attribute__((destructor)) static void mutexstat_destructor(void)
{
	if (!ms_active)
		return;
	if (ms_opt.exit_report || ms_opt.exit_code) {
		ms_report_to_output();
		ms_crash_exit_reported();
	}
	if (ms_opt.exit_code && ms_report_failing) {
		/* For CI: the program's own status is replaced.  Its stdio has
		 * not been flushed yet at this point of exit. */
		(void)fflush(NULL);
		_exit((int)ms_opt.exit_code);
	}
}
