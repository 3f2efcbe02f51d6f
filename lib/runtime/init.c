/* init.c - start-up (constructor, or the first mutex call if that comes
 * first), registering the fork handlers (fork.c), and the report at exit. */
#define _GNU_SOURCE
#include "runtime/init.h"
#include "analysis/ended.h"
#include "base/address_space.h"
#include "base/clock.h"
#include "base/environ.h"
#include "runtime/crash.h"
#include "base/fmt.h"
#include "base/options.h"
#include "base/output.h"
#include "stacks/depot.h"
#include "glibc/real.h"
#include "glibc/own_signals.h"
#include "glibc/real_rw.h"
#include "stacks/stack.h"
#include "core/thread_pool.h"
#include "runtime/dump.h"
#include "analysis/findings.h"
#include "runtime/follow.h"
#include "core/forked.h"
#include "runtime/fork.h"
#include "runtime/interval.h"
#include "stacks/symbols.h"
#include "report/formats.h"
#include "report/report.h"
#include "report/run.h"
#include "report/suppress.h"
#include "report/altstack.h"
#include "core/table.h"
#include "core/thread.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gnu/lib-names.h>
#include <link.h>
#include <sched.h>
#include <sys/syscall.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


enum { NOT_STARTED, STARTING, STARTED, DISABLED };
static int state;
static pid_t start_pid;  /* a vfork child's getpid() is not it */
static int exit_reported; /* by exit() or by _exit: once */

void ms_warn(const char *msg)
{
	int fd = ms_output_stderr();
	const char *end = msg;
	while (*end)
		end++;
	if (fd >= 0)
		ms_write_all(fd, msg, (size_t)(end - msg));
}

/* MUTEXSTAT_* values are read before it is known whether the process is
 * in a run (MUTEXSTAT_RUN_DIR is one of them): their notes wait here. */
static char option_notes[1024];
static size_t option_notes_len;

static void option_note(const char *msg)
{
	size_t n = strlen(msg);
	if (option_notes_len + n < sizeof option_notes) {
		memcpy(option_notes + option_notes_len, msg, n + 1);
		option_notes_len += n + 1; /* each note NUL-ended */
	}
}

static const char *env(const char *name)
{
	/* setuid and setgid programs ignore MUTEXSTAT_* */
	return ms_secure_getenv(name);
}

void ms_fork_child_unhandled(int parent)
{
	struct ms_thread *t = &ms_self;
	if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != STARTED)
		return; /* no handler of ours either */
	if (t->guard || t->in_update) {
		/* a _Fork from a signal handler that interrupted our code:
		 * that code holds our locks or is half-way through an update,
		 * so the child keeps the parent's numbers -- but not its
		 * thread id, which the lock path writes into mutexes */
		ms_thread_after_fork_child();
		ms_cache_clear(t);
		ms_ok_clear(t);
		return;
	}
	ms_fork_note_parent(parent);
	ms_fork_child();
}

/* Another copy of the library from another file (the build's and an
 * installed one both preloaded, or one preloaded and another dlopen'ed)
 * would record every call twice -- the first copy's calls to glibc reach
 * the second's wrappers -- and each copy's stack capture would lock
 * libunwind's mutexes through the other's, recording inside a capture,
 * which hangs.  The copy the program's symbol lookup finds first records;
 * the others pass every call through.  (Two names of one file, or one
 * soname, load one copy: nothing to do.) */
static void *recording_copy; /* the first copy's handle, when not this one */

/* The object found defining mutexstat_dump is a copy of the library if
 * its own lookup of pthread_mutex_lock finds its own: a program that
 * exports a function of that name (a stub for its builds without the
 * library, linked -rdynamic) is none -- it made the library step aside
 * and record nothing.  Its handle, or NULL. */
static void *copy_handle(const Dl_info *found)
{
	void *h = found->dli_fname && found->dli_fname[0]
			  ? dlopen(found->dli_fname, RTLD_LAZY | RTLD_NOLOAD)
			  : NULL;
	Dl_info lock;
	void *fn = h ? dlsym(h, "pthread_mutex_lock") : NULL;
	if (!fn || !dladdr(fn, &lock) || lock.dli_fbase != found->dli_fbase) {
		if (h)
			dlclose(h);
		h = NULL;
	}
	(void)dlerror(); /* a failed look leaves the program no message */
	return h;
}

/* The first copy's file name if it is not this one, or NULL. */
static const char *first_copy(void)
{
	Dl_info ours, first;
	void *sym = dlsym(RTLD_DEFAULT, "mutexstat_dump");
	if (!sym || !dladdr((void *)&state, &ours) || !dladdr(sym, &first) ||
	    ours.dli_fbase == first.dli_fbase || !(recording_copy = copy_handle(&first)))
		return NULL;
	return first.dli_fname ? first.dli_fname : "?";
}

/* Loaded after libc.so.6 -- dlopen'ed, or a dependency of a library that
 * was -- the program's calls find glibc's functions first: the global
 * scope is searched in load order.  Only calls that look us up first (a
 * library opened with RTLD_DEEPBIND that links us, a function pointer from
 * dlsym on our handle) reach us, and a report that said "locked no mutexes"
 * gave no reason.  (Preloaded or linked, we are loaded before libc.) */
static int loaded_after_libc(void)
{
	Dl_info info;
	struct link_map *l = NULL;
	if (!dladdr1((void *)&state, &info, (void **)&l, RTLD_DL_LINKMAP) || !l)
		return 0;
	for (l = l->l_prev; l; l = l->l_prev) {
		const char *base = strrchr(l->l_name, '/');
		if (!strcmp(base ? base + 1 : l->l_name, LIBC_SO))
			return 1;
	}
	return 0;
}

static int stepped_aside;

void *ms_recording_copy(const char *name)
{
	if (!__atomic_load_n(&stepped_aside, __ATOMIC_ACQUIRE))
		return NULL;
	int saved = errno;
	void *fn = dlsym(recording_copy, name); /* its own, found from it */
	errno = saved;
	return fn;
}

/* A sanitizer runtime that cannot share the process with us, or NULL.
 * ThreadSanitizer intercepts the same pthread calls and thread starts: our
 * new threads' first malloc (libunwind's TLS block) came before its thread
 * was set up and crashed (clang), libunwind's mutex at thread exit reached
 * its interceptor after its thread was torn down and crashed (gcc), and the
 * memcpy and memcmp of our depot, under our own spin lock, which it cannot
 * see, were reported as data races of the program.  MemorySanitizer takes
 * all our code's stores for uninitialised memory (it is not instrumented)
 * and ends the program at its first report.  Both are found by the symbol
 * their runtime exports: in the executable (clang) or libtsan.so (gcc). */
static const char *foreign_sanitizer(void)
{
	int saved = errno;
	const char *name = NULL;
	if (dlsym(RTLD_DEFAULT, "__tsan_init"))
		name = "ThreadSanitizer (-fsanitize=thread)";
	else if (dlsym(RTLD_DEFAULT, "__msan_init"))
		name = "MemorySanitizer (-fsanitize=memory)";
	errno = saved;
	return name;
}

/* Every call goes straight to what is behind us, as if we were not there:
 * no table, no stacks, no dump thread, no report. */
static void step_aside(const char *why)
{
	ms_real_resolve(); /* calls go straight to glibc */
	ms_real_rw_resolve();
	ms_own_signals_resolve();
	ms_warn(why);
	__atomic_store_n(&state, DISABLED, __ATOMIC_RELEASE);
}

static void step_aside_for_copy(const char *first)
{
	Dl_info ours;
	char buf[600];
	struct ms_fmt f;
	ms_fmt_init(&f, buf, sizeof buf, -1);
	ms_fmt(&f, "mutexstat: another copy of the library (%s) records this "
		   "process; this one (%s) passes calls through\n", first,
	       dladdr((void *)&state, &ours) && ours.dli_fname ? ours.dli_fname : "?");
	__atomic_store_n(&stepped_aside, 1, __ATOMIC_RELEASE);
	step_aside(ms_fmt_str(&f));
}

static void step_aside_for_sanitizer(const char *sanitizer)
{
	char buf[300];
	struct ms_fmt f;
	ms_fmt_init(&f, buf, sizeof buf, -1);
	ms_fmt(&f, "mutexstat: the program uses %s, which cannot run beside "
		   "mutexstat: not recording\n",
	       sanitizer);
	step_aside(ms_fmt_str(&f));
}

/* Under an address-space limit (ulimit -v, RLIMIT_AS) what we map is taken
 * from the program: the defaults' table and call-stack memory are 1.4 GB of
 * address space (MAP_NORESERVE: not memory), and a table halved only until
 * it fitted left a program under `ulimit -v 300000` no room to start its
 * threads.  So they take at most half of what the limit leaves at start-up
 * (and after the library's other maps): the larger of the two is halved
 * until both fit, and one line says so.  The same under a data-size limit
 * (ulimit -d), whichever leaves less. */
static void fit_address_space_limit(void)
{
	/* what the library maps besides: the first thread records, and the
	 * dump thread's stack (ms_dump_thread_stack: 2 MiB, not ulimit -s) */
	uint64_t ours = ms_threads_first_bytes() + ms_dump_thread_stack();
	uint64_t as_left = ms_address_space_left_after(ours);
	uint64_t data_left = ms_data_left_after(ours);
	int as_limited = as_left != UINT64_MAX;
	if (!as_limited && data_left == UINT64_MAX)
		return;
	uint64_t left = as_left, as_share = 0, arena_room = 0;
	const char *which = "the address-space limit (ulimit -v)";
	if (as_limited) {
		/* threads' libunwind blocks cost a malloc arena each
		 * (stack.h): half of the library's half is for them, so
		 * they take none of the program's */
		as_share = left / 2;
		uint64_t most = ms_stack_arena_max() * MS_STACK_ARENA_BYTES;
		arena_room = as_share / 2 < most ? as_share / 2 : most;
		arena_room -= arena_room % MS_STACK_ARENA_BYTES;
	}
	/* ulimit -d counts private writable maps, ours among them: the
	 * table's and the call stacks' 1.4 GB once left the program none */
	if (data_left < left) {
		left = data_left;
		which = "the data-size limit (ulimit -d)";
	}
	uint64_t share = left / 2;
	if (as_limited && share > as_share - arena_room)
		share = as_share - arena_room;
	uint64_t table = ms_opt.table_size, stacks = ms_opt.stack_memory;
	uint32_t hist = (uint32_t)ms_opt.history;
	uint64_t tb, sb;
	for (;;) {
		tb = ms_table_bytes((uint32_t)table, hist);
		sb = ms_depot_bytes((size_t)stacks << 20);
		if (tb + sb <= share)
			break;
		if (table > 64 && (tb >= sb || stacks == 1))
			table /= 2;
		else if (stacks > 1)
			stacks /= 2;
		else
			break; /* the least we take; the maps below may fail */
	}
	if (as_limited) /* what the table and call stacks leave of our half */
		ms_stack_set_arena_budget(as_share > tb + sb ?
			(as_share - tb - sb) / MS_STACK_ARENA_BYTES : 0);
	if (table == ms_opt.table_size && stacks == ms_opt.stack_memory)
		return;
	char buf[300];
	struct ms_fmt f;
	ms_fmt_init(&f, buf, sizeof buf, -1);
	ms_fmt(&f, "mutexstat: %s leaves %llu MiB, of "
		   "which the library takes at most half: tracking %llu mutexes "
		   "(MUTEXSTAT_TABLE_SIZE=%llu), %llu MiB for call stacks "
		   "(MUTEXSTAT_STACK_MEMORY=%llu)\n",
	       which, (unsigned long long)(left >> 20), (unsigned long long)table,
	       (unsigned long long)ms_opt.table_size, (unsigned long long)stacks,
	       (unsigned long long)ms_opt.stack_memory);
	ms_output_say(ms_fmt_str(&f));
	ms_opt.table_size = table;
	ms_opt.stack_memory = stacks;
}

/* quick_exit's end.  glibc's quick_exit runs the handlers registered with
 * at_quick_exit, newest first, then its own _exit, which no interposed
 * function sees: without this, a program that ends so (a server skipping
 * its destructors) had no report.  Start-up registers this handler before
 * the program's can be, so it runs last -- after the lock calls of theirs
 * that belong in the report.  The status is the one quick_exit was called
 * with (ms_quick_exit_begin); then the end is _exit's (ms_exit_now). */
static volatile int quick_status;
static volatile int quick_known;

void ms_quick_exit_begin(int status)
{
	quick_status = status;
	quick_known = 1;
}

static void quick_exit_last(void)
{
	if (!quick_known) /* not through quick_exit: whose status, then? */
		return;
	ms_exit_now(__atomic_load_n(&ms_real.exit_now_c99, __ATOMIC_ACQUIRE), quick_status);
}

static void start(void)
{
	int saved = errno;
	start_pid = getpid();
	ms_forked_note_start();
	ms_guard_enter(&ms_self);
	ms_clock_init();
	ms_output_init();
	const char *first = first_copy();
	const char *sanitizer = first ? NULL : foreign_sanitizer();
	if (first || sanitizer) {
		if (first)
			step_aside_for_copy(first);
		else
			step_aside_for_sanitizer(sanitizer);
		ms_guard_leave(&ms_self);
		errno = saved;
		return;
	}
	ms_options_load(env, option_note);
	for (size_t i = 0; i < option_notes_len; i += strlen(option_notes + i) + 1)
		ms_output_say(option_notes + i);
	/* a bad rules file is said once, by the run's first process: the
	 * others' stderr is their program's (report/run.h); their reports
	 * say it too */
	ms_suppress_load(ms_run_active() && !ms_run_is_root() ? NULL : ms_warn);
	ms_run_start();
	if (loaded_after_libc()) {
		ms_report_loaded_late = 1; /* which the report says */
		if (!ms_run_active() || ms_run_is_root()) /* as ms_output_say */
			ms_warn("mutexstat: loaded after libc.so.6 (by dlopen): the program's "
				"mutex calls find glibc's functions first and are not "
				"recorded; preload the library (LD_PRELOAD) or link the "
				"program with it\n");
	}
	if (!ms_opt.follow)
		ms_follow_stop(); /* before any child can be started */
	ms_real_resolve();
	ms_real_rw_resolve(); /* rwlock and spin lock calls before it resolve alone */
	ms_own_signals_resolve();
	ms_stack_init();
	ms_threads_init(ms_finding_held_at_exit);
	ms_interval_init();
	ms_dump_init();
	ms_crash_init();
	fit_address_space_limit();
	if (ms_depot_init((size_t)ms_opt.stack_memory << 20) != 0)
		ms_output_say("mutexstat: cannot map the memory for call stacks "
			"(MUTEXSTAT_STACK_MEMORY); the report has none\n");
	ms_ended_init();
	int got = ms_table_init((uint32_t)ms_opt.table_size,
				(uint32_t)ms_opt.history);
	if (!got) {
		ms_warn("mutexstat: cannot map the statistics table; "
			"not recording\n");
		ms_interval_stop(); /* nothing to profile */
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
			ms_output_say(ms_fmt_str(&f));
			ms_opt.table_size = (uint64_t)got;
		}
		pthread_atfork(ms_fork_prepare, ms_fork_parent, ms_fork_child);
		(void)at_quick_exit(quick_exit_last);
		__atomic_store_n(&ms_active, 1, __ATOMIC_RELEASE);
		__atomic_store_n(&state, STARTED, __ATOMIC_RELEASE);
	}
	ms_guard_leave(&ms_self);
	errno = saved;
}

int ms_start_lazily(void)
{
	int s = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
	if (s == STARTED) {
		/* a fork child: its numbers start from zero, and its dump
		 * thread may start, at its first call */
		if (!ms_self.guard) {
			ms_fork_settle();
			if (unlikely(LOAD(&ms_dump_pending)))
				ms_dump_at_call();
		}
		/* off in a fork child with MUTEXSTAT_FOLLOW=0 */
		return !__atomic_load_n(&ms_active, __ATOMIC_ACQUIRE);
	}
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

/* For CI (MUTEXSTAT_EXIT_CODE): the program's own status is replaced, as
 * the last thing exit() does before its stdio is flushed, after the exit
 * report (exit_report). */
static void exit_with_code(int status, void *arg)
{
	(void)arg;
	if (status && ms_run_is_root())
		return; /* a run's: a failing suite keeps its own status */
	(void)fflush(NULL);
	ms_run_say_exit_code(status);
	ms_exit_group((int)ms_opt.exit_code);
}

/* exit() from a signal handler that interrupted the library's own code on
 * this thread -- a stack capture, an update of the table, a report: the
 * report may wait for ever for a lock of ours (or libunwind's, or the
 * dynamic linker's) that this thread holds, and the program would hang
 * where it would have ended.  It ends, without a report, as a crash there
 * does (crash.c). */
static int interrupted_library(void)
{
	const struct ms_thread *t = &ms_self;
	if (!t->guard && !t->in_update)
		return 0;
	ms_warn("mutexstat: exit() from a signal handler inside mutexstat's own "
		"code; no exit report\n");
	return 1;
}

/* exit() from a signal handler that interrupted the program anywhere: in
 * malloc, say, holding the allocator's lock, which the report (it
 * allocates) would wait for for ever.  The dump thread writes it, as a
 * crash report: it runs no handler, and waits for no lock of this
 * thread's unless the report needs it -- then the wait gives up (5 s
 * without progress) and the program ends.  0 if there is no dump thread
 * (a process with one thread, whose malloc takes no lock): the report is
 * written here. */
static int report_from_dump_thread(void)
{
	if (ms_dump_crash_report() != 0)
		return 0;
	if (ms_crash_wait_for_report() != 0)
		ms_warn("mutexstat: the exit report did not finish (exit() from a signal "
			"handler); the program ends\n");
	return 1;
}

/* The exit report, written once every destructor has run: those of the
 * program's own shared libraries are finalised after this library (a
 * preloaded library is finalised first), and the mutex calls they and the
 * threads they stop make belong in it.  The destructor below registers
 * this with on_exit while exit() runs them: exit() runs a handler
 * registered then once the one that ran the destructors (the dynamic
 * linker's) has returned.  The library stays loaded to the end (-z
 * nodelete), so its destructor runs only there.  libdw, libelf and
 * libunwind, finalised meanwhile, have no destructors of their own. */
static void report_to_output(void *arg)
{
	(void)arg;
	ms_interval_last(); /* the series' last file, before the whole run's */
	if (ms_opt.exit_report || ms_opt.exit_code)
		ms_report_to_output();
}

/* The exit report, in exit() (exit_report) or _exit
 * (exit_now_report); 0 if it was not written. */
/* Something is written at exit: the report (asked for, or needed for
 * MUTEXSTAT_EXIT_CODE's status), or an interval series' last file. */
static int writes_at_exit(void)
{
	return ms_opt.exit_report || ms_opt.exit_code || ms_interval_on();
}

static pid_t exit_writer;     /* the thread that writes it */
static int exit_report_ended; /* written, or given up */

/* Another thread's exit (or _exit) while one writes the exit report: the
 * process would end there, half a report written, or none (an exit() on
 * two threads at once, which glibc 2.36 lets race).  It waits for the
 * report, at most 10 s; the exit status is then the first one's. */
static void nap_ms(void)
{
	struct timespec nap = { 0, 1000000 };
	syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &nap, NULL);
}

static void wait_for_exit_report(void)
{
	pid_t self = (pid_t)syscall(SYS_gettid);
	if (!__atomic_load_n(&exit_reported, __ATOMIC_ACQUIRE) ||
	    __atomic_load_n(&exit_writer, __ATOMIC_ACQUIRE) == self)
		return;
	for (int ms = 0; ms < 10000 && !__atomic_load_n(&exit_report_ended, __ATOMIC_ACQUIRE);
	     ms++)
		nap_ms();
}

/* glibc's exit() ends with its own _exit, which does not come through
 * ours: a second thread's exit() ends the process where it ends.  So it
 * waits at its start, while the first one's exit handlers run (200 ms at
 * most: one of them may be joining this very thread, or take long, and
 * without the library the second exit() would end the process then; 50
 * ms was too short for a sanitized build's handlers on a loaded machine,
 * one run in 10 of tests/exit_paths.sh's two-exits) and
 * while its exit report is written (10 s).  A first exit() not through
 * ours (main's return: glibc's start calls its own) is seen by its
 * report under way. */
static pid_t first_exit;
static int exit_under_way; /* our destructor ran: an exit() not through ours */
/* A vfork child's exit() ran the exit handlers, ours among them, in this
 * process's memory: none is left for the process's own exit (init.c's
 * exit_report). */
static int handlers_spent;
static int write_exit_report(void);
static void exit_report_done(void);

__attribute__((noinline)) void ms_exit_begin(int status)
{
	/* just past the call in the library's exit(), a few bytes before
	 * its call of glibc's (stacks/stack.h) */
	__atomic_store_n(&ms_stack_exit_entry, (uintptr_t)__builtin_return_address(0),
			 __ATOMIC_RELAXED);
	/* not in a vfork child, which shares this memory with its parent
	 * (one that calls exit() instead of _exit would make the parent's
	 * exit() wait), nor in a fork child (started as its parent) */
	if (getpid() != start_pid)
		return;
	if (!__atomic_load_n(&ms_active, __ATOMIC_ACQUIRE) ||
	    !writes_at_exit())
		return;
	/* the exit report glibc's exit will not run: written here, and the
	 * exit code given here too (glibc takes no handler once its exit
	 * handlers have run; main's return is not seen) */
	if (__atomic_exchange_n(&handlers_spent, 0, __ATOMIC_ACQ_REL)) {
		if (write_exit_report() && ms_opt.exit_code && ms_run_exit_failing())
			exit_with_code(status, NULL);
		exit_report_done();
		return;
	}
	pid_t self = (pid_t)syscall(SYS_gettid), none = 0;
	if ((!__atomic_compare_exchange_n(&first_exit, &none, self, 0, __ATOMIC_ACQ_REL,
					  __ATOMIC_ACQUIRE) &&
	     none != self) ||
	    __atomic_load_n(&exit_under_way, __ATOMIC_ACQUIRE))
		for (int ms = 0; ms < 200 && !__atomic_load_n(&exit_reported, __ATOMIC_ACQUIRE);
		     ms++)
			nap_ms();
	wait_for_exit_report();
}

static int write_exit_report(void)
{
	if (__atomic_exchange_n(&exit_reported, 1, __ATOMIC_ACQ_REL))
		return 0;
	__atomic_store_n(&exit_writer, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	if (interrupted_library())
		return 0; /* ended by the caller */
	ms_fork_settle(); /* a fork child that never locked a mutex */
	ms_dump_note_pending();
	/* on a stack of its own if this thread's is small (ulimit -s 64) */
	if (!ms_dump_in_signal_handler() || !report_from_dump_thread())
		ms_report_stack_run(report_to_output, NULL);
	ms_crash_exit_reported();
	return 1;
}

/* The end of the exit report, after what follows it (the exit code's
 * handler: a thread let in before would find exit's handlers done). */
static void exit_report_done(void)
{
	if (__atomic_load_n(&exit_writer, __ATOMIC_ACQUIRE) == (pid_t)syscall(SYS_gettid))
		__atomic_store_n(&exit_report_ended, 1, __ATOMIC_RELEASE);
}

static void exit_report(int status, void *arg)
{
	(void)status;
	(void)arg;
	/* A vfork child that calls exit() (its exec failed; _exit is the
	 * call to make there) runs the exit handlers in its parent's memory,
	 * and spends them: the parent's exit runs none, ours neither.  So the
	 * report is written here, the process's numbers until the vfork, and
	 * says so; with no exit code: the child's status is the program's. */
	if (ms_in_vfork_child()) {
		char note[200];
		struct ms_fmt f;
		ms_fmt_init(&f, note, sizeof note, -1);
		ms_fmt(&f, "mutexstat: written by a vfork child (pid %d) that called exit() before "
			   "its exec: process %d's exit handlers ran there; none is left for its own "
			   "exit\n", (int)getpid(), (int)getppid());
		/* this report's alone: the parent's own dumps after it are not
		 * the child's */
		size_t mark = ms_output_kept_mark();
		ms_output_keep(ms_fmt_str(&f));
		(void)write_exit_report();
		ms_output_kept_trim(mark);
		/* the process's own end may still write its report: an exit()
		 * or an _exit through ours */
		__atomic_store_n(&exit_reported, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&exit_writer, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&handlers_spent, 1, __ATOMIC_RELEASE);
		return;
	}
	if (write_exit_report() && ms_opt.exit_code && ms_run_exit_failing())
		(void)on_exit(exit_with_code, NULL);
	exit_report_done();
}

/* A process that ends with no report of its own: a live dump under way is
 * finished first (formats.h) -- unless this thread is in our code, or in
 * a signal handler (it may have interrupted that dump), or is a vfork
 * child, whose memory, and so the lock, is its parent's. */
static void finish_dumps(void)
{
	if (!__atomic_load_n(&ms_active, __ATOMIC_ACQUIRE) || ms_self.guard ||
	    ms_dump_in_signal_handler() || ms_in_dump_thread() || ms_in_vfork_child())
		return;
	int saved = errno;
	ms_report_files_finish();
	errno = saved;
}

static void exit_now_report(int *status)
{
	if (!__atomic_load_n(&ms_active, __ATOMIC_ACQUIRE) || ms_fork_parent_pid() ||
	    getpid() != start_pid ||
	    !writes_at_exit()) {
		finish_dumps();
		return;
	}
	int saved = errno;
	/* Not from a signal handler: a crash handler of the program's ends
	 * so, and one asks for crash reports with MUTEXSTAT_ON_CRASH.  Not
	 * for a process that locked nothing: a shell ends so, each of a
	 * build's many (the run's first says what the run needs). */
	int skip = ms_self.guard || ms_dump_in_signal_handler();
	if (!skip) {
		ms_guard_enter(&ms_self);
		skip = ms_report_locked_nothing();
		ms_guard_leave(&ms_self);
	}
	/* as exit_with_code, without the flush of stdio _exit does not do */
	int written = !skip && write_exit_report();
	if (written && ms_opt.exit_code && ms_run_exit_failing() &&
	    !(*status && ms_run_is_root())) {
		ms_run_say_exit_code(*status);
		*status = (int)ms_opt.exit_code;
	}
	exit_report_done(); /* if this thread wrote it */
	wait_for_exit_report(); /* if another writes it */
	errno = saved;
}

void ms_exit_now(void (*next)(int), int status)
{
	exit_now_report(&status);
	ms_run_before_exit_now(&status);
	if (next)
		next(status);
	ms_exit_group(status);
}

/* No exit report (MUTEXSTAT_EXIT_REPORT=0): the run still ends, as at
 * _exit (ms_exit_now) -- its directory, if the launcher made it and no
 * report came, is removed. */
static void run_end_unreported(int status, void *arg)
{
	(void)status;
	(void)arg;
	if (getpid() == start_pid && !ms_fork_parent_pid())
		ms_run_end(0, 0);
}

__attribute__((destructor)) static void mutexstat_destructor(void)
{
	__atomic_store_n(&exit_under_way, 1, __ATOMIC_RELEASE);
	if (!ms_active)
		return;
	if (!writes_at_exit()) {
		if (ms_run_active())
			(void)on_exit(run_end_unreported, NULL);
		return;
	}
	/* no room for one more handler (glibc allocates it): report now */
	if (on_exit(exit_report, NULL) != 0)
		exit_report(0, NULL);
}
