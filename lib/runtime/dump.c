/* dump.c - the dump thread: live reports on a signal, the watchdog, and
 * the crash report; see dump.h.
 *
 * The dump signal's handler only sets a bit in a word and wakes the futex
 * on it (async-signal-safe, and safe wherever the signal lands: in malloc,
 * stdio, the loader or our own code).  A thread of ours, started with the
 * library and blocking every signal, waits on that word and writes the
 * report: it can symbolise, allocate and take its time, and it works when
 * every application thread is blocked in a deadlock.  The same thread runs
 * the watchdog.  A word and not a pipe: a pipe is two descriptors the
 * program can close (a daemon closing all of them) and whose remaking
 * took the program's lowest free numbers for a moment. */
#define _GNU_SOURCE
#include "runtime/dump.h"
#include "runtime/interval.h"
#include "analysis/waitfor.h"
#include "stacks/where_now.h"
#include "report/altstack.h"
#include "glibc/real.h"
#include "glibc/own_signals.h"
#include "base/clock.h"
#include "stacks/depot.h"
#include "base/fds.h"
#include "base/fmt.h"
#include "report/findings_text.h"
#include "analysis/findings.h"
#include "analysis/stall.h"
#include "base/internal.h"
#include "glibc/last_thread.h"
#include "base/options.h"
#include "base/output.h"
#include "report/formats.h"
#include "report/report.h"
#include "stacks/stack.h"
#include "core/thread.h"
#include "core/thread_pool.h"

#include <errno.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/single_threaded.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static int dump_signal;
/* MUTEXSTAT_SIGNAL's signals by ms_opt.signal, as the notes name them */
static const char *const signal_names[] = { "USR1", "USR2" };
static pid_t dump_pid, dump_tid; /* the dump thread's process and thread */

/* When the dump thread starts (doc/processes-and-signals.md, "When the
 * dump thread starts").  A thread of ours would take glibc's single-thread
 * optimisation from a single-threaded program, so it starts at once only
 * in a process with threads already, or for crash reports; otherwise:
 *   START_AT_THREADS  at the second thread (our pthread_create, after
 *                     glibc's returned) or the first wait;
 *   START_AT_CALL     at the next mutex call, after a dump signal: glibc's
 *                     malloc locks no pthread mutex, so never inside malloc;
 *   START_AT_CREATE   at the second thread only: another malloc may lock
 *                     pthread mutexes inside malloc. */
enum { START_AT_CALL = 1, START_AT_CREATE = 2, START_AT_THREADS = 4 };
uint32_t ms_dump_pending;
static int foreign_malloc; /* malloc is not glibc's (ms_dump_init) */
static int crash_asked, crash_done;
int ms_dump_aborting;

/* ---- the dump thread ------------------------------------------------- */

/* What the dump thread is asked to do, bits that signal handlers set and
 * the thread takes all at once; also the futex word it sleeps on.  A
 * private futex: a fork child's word is its own. */
enum { ASK_DUMP = 1, ASK_SAY = 2, ASK_CRASH = 4 };
static uint32_t asked;

static void ask(uint32_t what)
{
	int saved = errno;
	__atomic_fetch_or(&asked, what, __ATOMIC_RELEASE);
	syscall(SYS_futex, &asked, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	errno = saved;
}

/* The dump thread's wait: what it was asked since it last looked, or 0
 * after timeout_ms (-1: none).  A bit set between the look and the wait
 * makes the futex return at once (the word is no longer 0). */
static uint32_t wait_asked(int timeout_ms)
{
	uint32_t a = __atomic_exchange_n(&asked, 0, __ATOMIC_ACQUIRE);
	if (a)
		return a;
	struct timespec ts = { timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L };
	syscall(SYS_futex, &asked, FUTEX_WAIT_PRIVATE, 0, timeout_ms < 0 ? NULL : &ts, NULL,
		0);
	return __atomic_exchange_n(&asked, 0, __ATOMIC_ACQUIRE);
}

static void dump_handler(int sig)
{
	(void)sig;
	int saved = errno;
	/* Not in a fork child the library does not follow, nor in one it
	 * has not set up yet (dump_pid is set then) */
	if (getpid() == dump_pid) {
		ask(ASK_DUMP);
		/* No dump thread yet (a process with one thread): it starts
		 * at this thread's next mutex call, which must take the slow
		 * path (the lock path trusts the cache, the unlock path unlock_word). */
		uint32_t p = START_AT_THREADS;
		if (__atomic_compare_exchange_n(&ms_dump_pending, &p, START_AT_CALL, 0,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			ms_cache_clear(&ms_self);
			ms_ok_clear(&ms_self);
		}
	}
	errno = saved;
}

int ms_in_dump_thread(void)
{
	pid_t tid = __atomic_load_n(&dump_tid, __ATOMIC_ACQUIRE);
	return tid && getpid() == dump_pid && (pid_t)syscall(SYS_gettid) == tid;
}

/* Whether this thread runs a signal handler.  On the alternate signal
 * stack it does.  Else its stack, unwound as a live dump's stack handler
 * unwinds its own, has glibc's signal trampoline (sa_restorer, the same
 * for every handler glibc installs) among its first 64 frames: the kernel
 * entered the handler with it as the return address.  (Reading the stack
 * word by word would read padding nobody wrote, which valgrind's memcheck
 * reports.)  0 when the trampoline is not known (neither signal of ours
 * installed), or without libunwind. */
int ms_dump_in_signal_handler(void)
{
	stack_t alt;
	if (ms_sigaltstack_next(NULL, &alt) == 0 && (alt.ss_flags & SS_ONSTACK))
		return 1;
	if (!ms_signal_return)
		return 0;
	uintptr_t frames[64];
	struct ms_thread *t = &ms_self;
	ms_guard_enter(t);
	int n = ms_stack_capture(frames, 64);
	ms_guard_leave(t);
	for (int i = 0; i < n; i++)
		if (frames[i] - ms_signal_return < 16)
			return 1;
	return 0;
}

int ms_dump_crash_report(void)
{
	/* The thread may not have run yet: the request waits in the word.
	 * A fork child's that is not started yet will not be, from here. */
	if (!dump_pid || getpid() != dump_pid || ms_in_dump_thread() ||
	    __atomic_load_n(&ms_dump_pending, __ATOMIC_ACQUIRE))
		return -1;
	__atomic_store_n(&crash_asked, 1, __ATOMIC_RELEASE);
	ask(ASK_CRASH);
	return 0;
}

int ms_dump_crash_report_done(void)
{
	return __atomic_load_n(&crash_done, __ATOMIC_ACQUIRE);
}

static void dump(unsigned seq, const char *occasion)
{
	ms_report_occasion = occasion;
	ms_report_all(seq);
	ms_report_occasion = NULL;
}

#define BY_WATCHDOG "the watchdog's report (MUTEXSTAT_WATCHDOG): a thread has waited that long"

/* A condition wait's blocked retake has no start in its thread's record:
 * glibc takes the mutex back inside the wait, unseen.  Its start is the
 * first of the watchdog's looks that saw it, known by its thread and its
 * condition wait's start; a retake past the first RETAKES_SEEN of a look
 * is not timed. */
#define RETAKES_SEEN 256

struct retake_seen {
	uint32_t tid;
	uint64_t cond_since, since;
};

/* A look for the oldest wait: its time, what it found, the retakes the
 * last look saw (was) and those this one sees (is). */
struct look {
	uint64_t now, since; /* since: the oldest wait's start, 0 none */
	const struct retake_seen *was;
	struct retake_seen *is;
	uint32_t nwas, nis;
};

/* When thread tid's retake, in its condition wait begun at cond_since,
 * began, as far as the looks tell. */
static uint64_t retake_since(struct look *l, uint32_t tid, uint64_t cond_since)
{
	uint64_t since = l->now;
	for (uint32_t i = 0; i < l->nwas; i++)
		if (l->was[i].tid == tid && l->was[i].cond_since == cond_since)
			since = l->was[i].since;
	if (l->nis < RETAKES_SEEN)
		l->is[l->nis++] = (struct retake_seen){ tid, cond_since, since };
	return since;
}

/* The oldest wait for a mutex: a lock's, or a condition wait's retake
 * (a wait for the mutex like any other, in the graph the report reads). */
static void oldest(struct ms_tstate *ts, void *arg)
{
	struct look *l = arg;
	uint64_t s = 0;
	if (__atomic_load_n(&ts->wait_rec, __ATOMIC_ACQUIRE))
		s = LOAD(&ts->wait_since);
	else if (LOAD(&ts->cond_key) && ms_waitfor_retake_blocked(ts))
		s = retake_since(l, LOAD(&ts->tid), LOAD(&ts->cond_since));
	if (s && (!l->since || s < l->since))
		l->since = s;
}

/* The oldest wait for a mutex now (0 none), the watchdog's. */
static uint64_t oldest_wait(uint64_t now)
{
	static struct retake_seen seen[2][RETAKES_SEEN]; /* the dump thread's */
	static uint32_t nseen, last;
	struct look l = { now, 0, seen[last], seen[!last], nseen, 0 };
	ms_threads_each(oldest, &l);
	last = !last;
	nseen = l.nis;
	return l.since;
}

/* The watchdog's look for a STALL (stall.h): kept as a finding, with
 * where each thread waits, and reported.  Returns 1 if there was one, 2
 * if a signal the program handles may end it, -1 if a deadlock explains
 * it (not reported here: a DEADLOCK, not a STALL). */
static int stall_reported(unsigned *seq)
{
	static struct ms_stall s; /* the dump thread's */
	if (!ms_stall_check((uint32_t)dump_tid, ms_opt.watchdog * 1000000000ull, &s))
		return 0;
	/* every thread stopped since the last mutex operation, and a cycle
	 * among them: the deadlock it is (a look before the oldest wait was
	 * N s long by its own clock said STALL, and aborted for one) */
	if (ms_waitfor_certain_deadlocks() > 0)
		return -1;
	for (uint32_t i = 0; i < s.shown; i++) {
		const uintptr_t *frames;
		int n;
		if (s.t[i].stack || !s.t[i].ts || (n = ms_where_now(s.t[i].ts, &frames)) <= 0)
			continue;
		/* from the program's call on: not glibc's wait, nor ours */
		int from = 0;
		while (s.t[i].caller && from < n && frames[from] != s.t[i].caller)
			from++;
		if (from == n)
			from = 0;
		s.t[i].stack = ms_depot_put(frames + from, n - from);
	}
	ms_findings_stall(&s);
	dump(++*seq, BY_WATCHDOG);
	return s.handled_signal ? 2 : 1;
}

/* The watchdog's look, at `now`.  It reports the first wait that lasts
 * MUTEXSTAT_WATCHDOG seconds.  A long wait is not a deadlock: a holder
 * that sleeps, does I/O or is stopped makes one in a healthy program.  So
 * it goes on looking while waits are that long (*fired), and reports once
 * more when a deadlock that cannot end by itself appears (*done); only
 * that one aborts (MUTEXSTAT_ON_DEADLOCK=abort).  A STALL cannot end
 * either. */
/* MUTEXSTAT_ON_DEADLOCK=abort: one line says why, before the shell's
 * "Aborted" (the report above it may have gone to a file). */
static void abort_for(const char *finding)
{
	int fd = ms_output_stderr();
	if (fd >= 0) {
		char line[160];
		struct ms_fmt f;
		ms_fmt_init(&f, line, sizeof line, fd);
		ms_fmt(&f, "mutexstat: aborting the program: a %s (MUTEXSTAT_ON_DEADLOCK=abort)\n",
		       finding);
		ms_fmt_flush(&f);
	}
	ms_dump_aborting = 1;
	abort();
}

static void watchdog_look(unsigned *seq, uint64_t now, int *fired, int *done)
{
	uint64_t since = oldest_wait(now);
	int long_wait = since && now > since &&
			ms_ticks_to_ns(now - since) >= ms_opt.watchdog * 1000000000ull;
	/* A deadlock explains the hang: its report has no STALL beside the
	 * DEADLOCK (a STALL is a hang no mutex cycle explains). */
	int certain = long_wait ? ms_waitfor_certain_deadlocks() : 0;
	int stalled = certain ? 0 : stall_reported(seq);
	if (stalled < 0) { /* a stall a deadlock explains: reported as that */
		certain = 1;
		long_wait = 1;
		stalled = 0;
	}
	if (stalled) {
		*fired = 1;
		*done = stalled == 1; /* one a signal may end: looks go on */
		if (ms_opt.on_deadlock == 1 && stalled == 1)
			abort_for("STALL");
		return;
	}
	if (!long_wait)
		return;
	if (*fired && !certain)
		return; /* reported; no deadlock yet */
	*fired = 1;
	*done = certain > 0;
	dump(++*seq, BY_WATCHDOG);
	if (certain && ms_opt.on_deadlock == 1)
		abort_for(ms_waitfor_certain_all_self() ? "SELF-DEADLOCK" : "DEADLOCK");
}

#define WATCHDOG_LOOK_MS 250 /* how often the watchdog looks */

static void *dump_thread(void *arg)
{
	(void)arg;
	__atomic_store_n(&dump_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	prctl(PR_SET_NAME, "mutexstat", 0, 0, 0);
	ms_self.guard = 1; /* nothing this thread locks is the program's */
	ms_ok_clear(&ms_self);
	unsigned seq = 0;
	int watchdog_fired = 0, watchdog_done = 0;
	uint64_t looked = ms_ticks(); /* the watchdog's last look */
	for (;;) {
		int timeout = ms_opt.watchdog && !watchdog_done ? WATCHDOG_LOOK_MS : -1;
		int due = ms_interval_timeout_ms();
		if (due >= 0 && (timeout < 0 || due < timeout))
			timeout = due;
		uint32_t a = wait_asked(timeout);
		ms_interval_tick(); /* before anything below goes round again */
		if ((a & ASK_CRASH) && __atomic_load_n(&crash_asked, __ATOMIC_ACQUIRE)) {
			/* the process's last report: where the exit report
			 * would go (an exit() from a signal handler's, unless
			 * MUTEXSTAT_EXIT_REPORT=0 left it the last interval's
			 * files alone) */
			ms_interval_last();
			if (ms_crash.signal || ms_opt.exit_report || ms_opt.exit_code)
				ms_report_all(0);
			/* once: a dump signal after it starts none */
			__atomic_store_n(&crash_asked, 0, __ATOMIC_RELEASE);
			__atomic_store_n(&crash_done, 1, __ATOMIC_RELEASE);
			continue;
		}
		if (a & ASK_SAY)
			ms_findings_say_unsaid(ms_output_stderr());
		if (a & ASK_DUMP)
			dump(++seq, "a live dump (the dump signal, MUTEXSTAT_SIGNAL); the program "
				    "runs on");
		/* The watchdog looks at its interval also when requests come
		 * more often than that (dump signals every 100 ms kept it from
		 * ever looking) */
		if (!ms_opt.watchdog || watchdog_done)
			continue;
		uint64_t now = ms_ticks();
		if (a && now - looked < WATCHDOG_LOOK_MS * ms_ticks_per_ms())
			continue;
		looked = now;
		watchdog_look(&seq, now, &watchdog_fired, &watchdog_done);
	}
	return NULL;
}

/* The program's own use of a signal wins: one that has a handler or is
 * ignored when we start is left to it.  Returns the word for the note. */
static const char *taken(int sig)
{
	struct sigaction cur;
	if (ms_sigaction(sig, NULL, &cur) != 0)
		return "cannot be read";
	if (cur.sa_handler == SIG_DFL)
		return NULL;
	return cur.sa_handler == SIG_IGN ? "ignores it" : "handles it itself";
}

/* The dispositions before ours, for a fork child that is not followed. */
static struct sigaction old_dump_sa, old_stack_sa;
static int have_old_dump, have_old_stack;


size_t ms_dump_thread_stack(void)
{
	struct rlimit as, st;
	int small = getrlimit(RLIMIT_STACK, &st) == 0 && st.rlim_cur != RLIM_INFINITY &&
		    st.rlim_cur < MS_REPORT_STACK;
	if (small) /* ulimit -s 64: a report needs more */
		return MS_REPORT_STACK;
	if (getrlimit(RLIMIT_AS, &as) != 0 || as.rlim_cur == RLIM_INFINITY)
		return 0;
	return MS_REPORT_STACK; /* not ulimit -s, 8 MiB: the limit's room */
}

static int start_thread(void)
{
	pthread_t th;
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	size_t stack = ms_dump_thread_stack();
	if (stack)
		pthread_attr_setstacksize(&attr, stack);
	/* glibc's, not ours: the dump thread starts in dump_thread, where it
	 * takes the guard before anything it does can reach a mutex */
	int rc = ms_real.thread_create(&th, &attr, dump_thread, NULL);
	pthread_attr_destroy(&attr);
	if (rc)
		dump_pid = 0;
	else /* this thread is counted yet: the count stays above zero */
		ms_last_thread_uncount();
	return rc ? -1 : 0;
}

static int malloc_is_glibcs(void)
{
	void *(*m)(size_t) = malloc; /* the one the program's calls reach */
	return ms_glibc_owns((const void *)m) == 1;
}

/* Whether the process needs a dump thread: for live dumps, the
 * watchdog, crash reports or interval files. */
static int wanted(void)
{
	return dump_signal || ms_opt.watchdog || ms_opt.on_crash || ms_interval_on();
}

int ms_dump_init(void)
{
	static const int signals[] = { SIGUSR1, SIGUSR2, 0 };
	static const char *const taken_notes[] = {
		"mutexstat: the program took SIGUSR1 for itself: no more live dumps on it "
		"(MUTEXSTAT_SIGNAL picks another, or none)\n",
		"mutexstat: the program took SIGUSR2 for itself: no more live dumps on it "
		"(MUTEXSTAT_SIGNAL picks another, or none)\n" };
	foreign_malloc = !malloc_is_glibcs();
	ms_findings_on_self_deadlock(ms_dump_announce);
	ms_last_thread_init();
	dump_signal = signals[ms_opt.signal];
	ms_where_now_signal = SIGRTMAX - 3;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = ms_where_now_handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (taken(ms_where_now_signal) || ms_sigaction(ms_where_now_signal, &sa, &old_stack_sa) != 0)
		ms_where_now_signal = 0;
	else {
		have_old_stack = 1;
		ms_own_signal(ms_where_now_signal, (void *)ms_where_now_handler, &old_stack_sa,
			      NULL);
		struct sigaction cur;
		if (ms_sigaction(ms_where_now_signal, NULL, &cur) == 0)
			ms_signal_return = (uintptr_t)cur.sa_restorer;
	}
	const char *how = dump_signal ? taken(dump_signal) : NULL;
	if (how) {
		char buf[200];
		struct ms_fmt f;
		ms_fmt_init(&f, buf, sizeof buf, -1);
		ms_fmt(&f, "mutexstat: no live dumps on SIG%s: the program %s "
			   "(MUTEXSTAT_SIGNAL picks another, or none)\n",
		       signal_names[ms_opt.signal], how);
		/* in the report, and on stderr only beside a report there:
		 * under nohup (SIGUSR1 ignored) every process said it into
		 * the program's stderr, /bin/echo's too */
		ms_output_say_beside_report(ms_fmt_str(&f));
		dump_signal = 0;
	}
	if (!wanted())
		return 0;
	dump_pid = getpid();
	if (dump_signal) {
		sa.sa_handler = dump_handler;
		have_old_dump = ms_sigaction(dump_signal, &sa, &old_dump_sa) == 0;
		if (have_old_dump)
			ms_own_signal(dump_signal, (void *)dump_handler, &old_dump_sa,
				      taken_notes[ms_opt.signal]);
		struct sigaction cur;
		if (have_old_dump && !ms_signal_return && ms_sigaction(dump_signal, NULL, &cur) == 0)
			ms_signal_return = (uintptr_t)cur.sa_restorer;
	}
	if (__libc_single_threaded && !ms_opt.on_crash) {
		__atomic_store_n(&ms_dump_pending,
				 foreign_malloc ? START_AT_CREATE : START_AT_THREADS,
				 __ATOMIC_RELEASE);
		return 0;
	}
	return start_thread();
}

/* Put back a disposition of ours the program has not replaced since. */
static void restore(int sig, const struct sigaction *old, void (*ours)(int))
{
	struct sigaction now;
	if (sig && ms_sigaction(sig, NULL, &now) == 0 && now.sa_handler == ours)
		ms_sigaction(sig, old, NULL);
}

void ms_dump_after_fork_child(int follow)
{
	/* what the parent's thread was asked is the parent's */
	__atomic_store_n(&asked, 0, __ATOMIC_RELAXED);
	ms_dump_pending = 0;
	dump_pid = 0; /* no dump thread here yet */
	dump_tid = 0;
	if (!follow) {
		/* not followed: the signals do what they did before us */
		if (have_old_dump)
			restore(dump_signal, &old_dump_sa, dump_handler);
		if (have_old_stack)
			restore(ms_where_now_signal, &old_stack_sa, ms_where_now_handler);
		return;
	}
	if (!wanted())
		return;
	/* a signal that comes before the thread waits in the word */
	dump_pid = getpid();
	__atomic_store_n(&ms_dump_pending,
			 foreign_malloc ? START_AT_CREATE
			 : ms_opt.on_crash ? START_AT_CALL : START_AT_THREADS,
			 __ATOMIC_RELEASE);
}

/* Start the dump thread if it waits for one of the moments in `when`. */
static void start_pending(uint32_t when)
{
	uint32_t p = __atomic_load_n(&ms_dump_pending, __ATOMIC_ACQUIRE);
	if (!(p & when) || !__atomic_compare_exchange_n(&ms_dump_pending, &p, 0, 0,
							__ATOMIC_ACQ_REL,
							__ATOMIC_ACQUIRE))
		return;
	struct ms_thread *t = &ms_self;
	int saved = errno;
	ms_guard_enter(t); /* pthread_create may lock mutexes (an allocator) */
	start_thread();
	ms_guard_leave(t);
	errno = saved;
}

void ms_dump_at_call(void)
{
	start_pending(START_AT_CALL);
}

void ms_dump_thread_created(void)
{
	start_pending(START_AT_THREADS | START_AT_CALL | START_AT_CREATE);
}

void ms_dump_waits(void)
{
	start_pending(START_AT_THREADS | START_AT_CALL);
}

/* A dump signal that came to a process of one thread, whose dump thread
 * never started, wrote no live dump -- said in the exit report, which has
 * what it would have: it made no mutex call after the signal (the dump
 * thread starts at the next: START_AT_CALL), or, beside another malloc
 * than glibc's, started no second thread (START_AT_CREATE). */
static void note_dump_never_started(void)
{
	if (!dump_signal || ms_opt.signal > 1 || __atomic_load_n(&dump_tid, __ATOMIC_ACQUIRE) ||
	    !(__atomic_load_n(&asked, __ATOMIC_ACQUIRE) & ASK_DUMP))
		return;
	char buf[240];
	struct ms_fmt f;
	ms_fmt_init(&f, buf, sizeof buf, -1);
	ms_fmt(&f, "mutexstat: a SIG%s came but no live dump was written: %s\n",
	       signal_names[ms_opt.signal],
	       foreign_malloc ? "beside another malloc than glibc's, a process of one thread "
				"writes none"
			      : "a process of one thread writes it at its next mutex call "
				"(none came)");
	ms_output_keep(ms_fmt_str(&f));
}

void ms_dump_note_pending(void)
{
	note_dump_never_started();
	sigset_t pending;
	if (!dump_signal || ms_opt.signal > 1 || sigpending(&pending) != 0 ||
	    sigismember(&pending, dump_signal) != 1)
		return;
	char buf[200];
	struct ms_fmt f;
	ms_fmt_init(&f, buf, sizeof buf, -1);
	ms_fmt(&f, "mutexstat: a SIG%s came and is pending: every thread blocks it, so no "
		   "live dump was written (MUTEXSTAT_WATCHDOG needs no signal)\n",
	       signal_names[ms_opt.signal]);
	ms_output_keep(ms_fmt_str(&f));
}

void ms_dump_announce(void)
{
	int saved = errno;
	if (!dump_pid && !foreign_malloc) {
		/* no dump thread was wanted (no signal, watchdog nor crash
		 * reports): one for this, now */
		dump_pid = getpid();
		__atomic_store_n(&ms_dump_pending, START_AT_CALL, __ATOMIC_RELEASE);
	}
	ms_dump_waits();
	/* none to be had (another malloc than glibc's): said here */
	if (!dump_pid || __atomic_load_n(&ms_dump_pending, __ATOMIC_ACQUIRE))
		ms_findings_say_unsaid(ms_output_stderr());
	else
		ask(ASK_SAY);
	errno = saved;
}
