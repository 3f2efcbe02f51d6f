/* crash.c - MUTEXSTAT_ON_CRASH=report; see crash.h.
 *
 * The report allocates and takes locks, and a crash may come inside malloc
 * or with one of those held, so the handler does not write it: it asks the
 * dump thread (dump.c), as a live dump does, and waits while the report
 * makes progress (at most 5 s without any, 60 s in all).  Then the signal
 * goes on as without us: sent again if it was sent, or the faulting
 * instruction runs again.  Only signals at their default action when the
 * library starts get this handler.  See doc/processes-and-signals.md,
 * "Crash reports". */
#define _GNU_SOURCE
#include "runtime/crash.h"
#include "base/fmt.h"
#include "runtime/dump.h"
#include "core/forked.h"
#include "base/options.h"
#include "base/output.h"
#include "core/thread_pool.h"
#include "core/thread.h"
#include "glibc/own_signals.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>


static const int fatal[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
#define N_FATAL (sizeof fatal / sizeof fatal[0])

static int claimed;       /* a thread is handling a crash */
static int exit_reported; /* the exit report is written */

void ms_crash_exit_reported(void)
{
	__atomic_store_n(&exit_reported, 1, __ATOMIC_RELEASE);
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A line on the original stderr, only if writing it cannot block (a pipe
 * nobody reads would hold the dying process forever). */
static void note(const char *msg)
{
	ms_output_note(msg);
}

static void note_signal(const char *fmt, int sig)
{
	char buf[200];
	struct ms_fmt f;
	ms_fmt_init(&f, buf, sizeof buf, -1);
	ms_fmt(&f, fmt, sigabbrev_np(sig));
	note(ms_fmt_str(&f));
}

/* Waits for the dump thread's report: while it progresses, at most 60 s;
 * 5 s without progress is stuck. */
int ms_crash_wait_for_report(void)
{
	uint64_t start = now_ns(), last = start;
	unsigned long seen = __atomic_load_n(&ms_report_progress, __ATOMIC_RELAXED);
	while (!ms_dump_crash_report_done()) {
		uint64_t now = now_ns();
		unsigned long p = __atomic_load_n(&ms_report_progress, __ATOMIC_RELAXED);
		if (p != seen) {
			seen = p;
			last = now;
		}
		if (now - last > 5000000000ull || now - start > 60000000000ull)
			return -1;
		struct timespec nap = { 0, 2000000 };
		nanosleep(&nap, NULL);
	}
	return 0;
}

static void report(int sig, const siginfo_t *si)
{
	if (__atomic_load_n(&exit_reported, __ATOMIC_ACQUIRE))
		return; /* a crash after the exit report: that report stands */
	if (ms_in_dump_thread()) {
		if (!ms_dump_aborting)
			note_signal("mutexstat: SIG%s in mutexstat's dump thread; no crash "
				    "report\n", sig);
		return;
	}
	if (ms_self.guard) {
		note_signal("mutexstat: SIG%s inside mutexstat's own code; no crash "
			    "report\n", sig);
		return;
	}
	ms_crash.tid = ms_self.tid ? ms_self.tid : (uint32_t)syscall(SYS_gettid);
	ms_crash.sent = si->si_code <= 0;
	ms_crash.sender_pid = ms_crash.sent ? (int)si->si_pid : 0;
	ms_crash.address = ms_crash.sent ? 0 : (uintptr_t)si->si_addr;
	__atomic_store_n(&ms_crash.signal, sig, __ATOMIC_RELEASE);
	if (ms_dump_crash_report() != 0) {
		note_signal("mutexstat: SIG%s in a process without a dump thread (a "
			    "child of fork); no crash report\n", sig);
		return;
	}
	if (ms_crash_wait_for_report() != 0)
		note_signal("mutexstat: the crash report did not finish; SIG%s goes on\n",
			    sig);
}

static void on_fatal(int sig, siginfo_t *si, void *context)
{
	(void)context;
	int saved = errno;
	if (ms_in_vfork_child())
		/* its claim and ms_crash would be the parent's, which runs on:
		 * its own exit report would then be a false crash report */
		note_signal("mutexstat: SIG%s in a vfork child before its exec; no crash "
			    "report\n", sig);
	else if (!__atomic_exchange_n(&claimed, 1, __ATOMIC_ACQ_REL))
		report(sig, si);
	else if (!ms_in_dump_thread())
		/* Another thread crashed first and is reporting; when it is
		 * done, its signal ends the process.  If it never is, ours. */
		ms_crash_wait_for_report();

	struct sigaction dfl;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	ms_sigaction(sig, &dfl, NULL);
	if (si->si_code <= 0) /* sent: send it again (blocked until we return) */
		syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), sig);
	/* a fault: the instruction runs again and faults again */
	errno = saved;
}

void ms_crash_init(void)
{
	if (!ms_opt.on_crash)
		return;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_fatal;
	/* SA_ONSTACK: on the thread's alternate stack, if the program gave it
	 * one (a stack overflow leaves no room on the normal one). */
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	for (unsigned i = 0; i < N_FATAL; i++)
		sigaddset(&sa.sa_mask, fatal[i]); /* a fault inside: killed at once */

	char buf[200];
	struct ms_fmt f;
	ms_fmt_init(&f, buf, sizeof buf, -1);
	int kept = 0;
	for (unsigned i = 0; i < N_FATAL; i++) {
		struct sigaction cur;
		if (ms_sigaction(fatal[i], NULL, &cur) != 0)
			continue;
		if (cur.sa_handler == SIG_DFL) {
			/* not hidden from the program (own_signals.h): a crash
			 * handler of its own that passes the signal on to the
			 * one before it reaches ours, and the report */
			ms_sigaction(fatal[i], &sa, NULL);
			continue;
		}
		ms_fmt(&f, "%sSIG%s", kept++ ? ", " : "", sigabbrev_np(fatal[i]));
	}
	if (kept) {
		char line[300];
		struct ms_fmt l;
		ms_fmt_init(&l, line, sizeof line, -1);
		ms_fmt(&l, "mutexstat: no crash report for %s: the program handles (or "
			   "ignores) %s itself\n", ms_fmt_str(&f), kept > 1 ? "them" : "it");
		note(ms_fmt_str(&l));
	}
}
