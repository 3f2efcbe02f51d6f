/* where_now.c - where another thread of this process is now: read from
 * /proc and its stack if it is blocked in the kernel (stack_blocked.c),
 * or, if it runs, asked with a real-time signal whose handler unwinds its
 * own stack into its record (with SA_RESTART; a thread that does not
 * answer within 250 ms is shown without). */
#define _GNU_SOURCE
#include "stacks/where_now.h"
#include "base/clock.h"
#include "base/fmt.h"
#include "base/internal.h"
#include "core/thread.h"
#include "core/thread_pool.h"
#include "glibc/own_signals.h"
#include "stacks/stack.h"
#include "stacks/stack_blocked.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

int ms_where_now_signal;
static uint32_t stack_request;
/* Where the stack handler returns to: glibc's signal trampoline
 * (sa_restorer), which its captures begin with once our own frames are
 * trimmed -- not where the thread is. */
uintptr_t ms_signal_return;

/* A program that installed its own handler for the signal since start-up
 * must not get signals it did not ask for. */
static int still_ours(int sig)
{
	struct sigaction cur;
	return ms_sigaction(sig, NULL, &cur) == 0 && cur.sa_handler == ms_where_now_handler;
}

enum { ASK_OK, ASK_BLOCKED, ASK_SIGWAIT, ASK_SLEEPS, ASK_ALTSTACK };

static int send_errno; /* why the last ask could not be sent (where_now: -8) */

/* The system calls that a signal handler ends with EINTR, never restarted
 * (signal(7)): a thread in one is not asked -- by the time it is, its
 * stack could not be read without a signal (ms_stack_blocked). */
static int never_restarted(long nr)
{
	static const long calls[] = {
		SYS_nanosleep, SYS_clock_nanosleep, SYS_ppoll, SYS_pselect6,
		SYS_epoll_pwait, SYS_rt_sigsuspend, SYS_semtimedop, SYS_msgrcv,
		SYS_msgsnd, SYS_io_getevents,
#ifdef SYS_poll
		SYS_poll,
#endif
#ifdef SYS_select
		SYS_select,
#endif
#ifdef SYS_epoll_wait
		SYS_epoll_wait,
#endif
#ifdef SYS_epoll_pwait2
		SYS_epoll_pwait2,
#endif
#ifdef SYS_pause
		SYS_pause,
#endif
#ifdef SYS_semop
		SYS_semop,
#endif
	};
	for (size_t i = 0; i < sizeof calls / sizeof *calls; i++)
		if (calls[i] == nr)
			return 1;
	return 0;
}

/* Whether a thread whose alternate signal stack is `size` bytes (0: none)
 * and that blocks the signals `blocked` may be running a handler on that
 * stack, too small to ask it there: our signal's frame goes below the
 * handler's, on the same stack -- AT_MINSIGSTKSZ, some 3 KB with AVX-512
 * -- and the answer needs the walk's room above its end (16 KB,
 * ms_stack_near_end).  A handler's own signal is blocked while it runs
 * (without SA_NODEFER), so a blocked one whose handler is SA_ONSTACK
 * tells.  Asked anyway, a thread on a 6 KB one died: the kernel's frame
 * fitted, the handler's own went below the stack, into another
 * thread's TLS; with less room the kernel kills the thread. */
#define ALT_ASK_ROOM ((uintptr_t)17 << 10)
static int in_small_altstack_handler(uintptr_t size, uint64_t blocked)
{
	uintptr_t frame = (uintptr_t)getauxval(AT_MINSIGSTKSZ);
	if (!size || size >= ALT_ASK_ROOM + (frame > 4096 ? frame : 4096))
		return 0;
	for (int sig = 1; sig <= 64; sig++) {
		struct sigaction sa;
		if ((blocked >> (sig - 1) & 1) && ms_sigaction(sig, NULL, &sa) == 0 &&
		    (sa.sa_flags & SA_ONSTACK) && sa.sa_handler != SIG_DFL &&
		    sa.sa_handler != SIG_IGN)
			return 1;
	}
	return 0;
}

/* Whether a signal sent to thread tid would reach the program instead of
 * our handler: a signal the thread blocks stays pending on it, for the
 * program's own sigwait or signalfd to take (SigBlk in its status), and
 * one the thread waits for in sigwait, sigwaitinfo or sigtimedwait
 * (rt_sigtimedwait, whose set the kernel unblocks while it waits, so
 * SigBlk does not show it) is taken by that call; or whether it would
 * cut short a call that never restarts (ASK_SLEEPS).
 * Unknown counts as ASK_OK, as before. */
static int asking_steals(uint32_t tid, uintptr_t alt_size, int sig)
{
	char buf[2048];
	int saved = errno, why = ASK_OK;
	ms_task_file(tid, "status", buf, sizeof buf);
	const char *t = strstr(buf, "\nSigBlk:");
	if (t) {
		for (t += 8; *t == ' ' || *t == '\t'; t++)
			;
		uint64_t blocked = ms_scan_number(&t, 16);
		if (blocked >> (sig - 1) & 1)
			why = ASK_BLOCKED;
		else if (in_small_altstack_handler(alt_size, blocked))
			why = ASK_ALTSTACK;
	}
	uint64_t at;
	long nr = ms_task_syscall(tid, &at);
	if (!why && never_restarted(nr))
		why = ASK_SLEEPS;
	if (!why && nr == SYS_rt_sigtimedwait) {
		uint64_t set = 0;
		struct iovec local = { &set, sizeof set }, remote = { (void *)at, sizeof set };
		/* the set unreadable: the thread waits for signals anyway */
		if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != sizeof set ||
		    (set >> (sig - 1) & 1))
			why = ASK_SIGWAIT;
	}
	errno = saved;
	return why;
}

/* The looks past the 20th, at threads that wait for a CPU, have 250 ms in
 * any second between them all, and one holder 250 ms at most: a report
 * with many such holders is not held up 250 ms by each (the report lock
 * gives up on a report that made no progress for 5 s, and each look
 * counts as progress).  A look is charged the time it took, its nap and
 * its reads of /proc, which on a loaded machine are more than the 1 ms
 * nap.  *since: when this holder's longer looks began (0: not yet), *at:
 * when its last one did.  Returns whether one more is allowed. */
#define LONGER_NS 250000000u
static uint64_t longer_since, longer_ns;

static int longer_look(uint64_t *since, uint64_t *at)
{
	uint64_t now = ms_mono_ns();
	if (!*since)
		*since = *at = now;
	if (now - *since >= LONGER_NS)
		return 0;
	if (now - LOAD(&longer_since) > 1000000000u) {
		STORE(&longer_since, now);
		STORE(&longer_ns, 0);
	}
	if (LOAD(&longer_ns) >= LONGER_NS)
		return 0;
	/* the look before this one, or the nap to come for the first */
	uint64_t took = now > *at ? now - *at : 1000000u;
	STORE(&longer_ns, LOAD(&longer_ns) + took);
	*at = now;
	return 1;
}

/* Where a thread is, into its record: read from /proc and its stack if
 * it is blocked in the kernel (no signal: nothing changes for it);
 * otherwise it is asked to unwind its own stack, with a signal, and
 * waited for up to 250 ms, or 2 s while it waits for a CPU (a running
 * thread answers once it is scheduled, later on a loaded machine).
 * Returns the number of frames, 0 if it did not answer, -1 if it was not
 * asked: the program handles the signal itself (or stacks are off), -2 if
 * not asked because the thread blocks it, -3 because it waits for it in
 * sigwaitinfo (either way the program would take our signal), -4 because
 * the signal would cut its sleep or poll short (asking_steals); -5 and -6
 * if it answered with no stack: near its stack's end, or in glibc's
 * cancellation handler (ms_where_now_handler); -7 if not asked as it may be
 * in a handler on a small alternate stack (in_small_altstack_handler); -8
 * if the signal could not be sent (send_errno). */
static int where_now(struct ms_tstate *ts)
{
	if (ts == ms_self.ts && ms_stack_available()) {
		/* the thread writing the report (an exit report in a program
		 * that exits holding mutexes others wait for: redis): its own
		 * stack, from below our frames, not a signal to itself, whose
		 * capture began in glibc's syscall() above them */
		uintptr_t frames[32];
		int n = ms_stack_capture(frames, 32);
		for (int i = 0; i < n; i++)
			ts->now_frames[i] = frames[i];
		return n;
	}
	/* A thread that sleeps between short bursts of work (a poll with a
	 * timeout, a loop of sleeps) is caught asleep, and left alone: 20
	 * looks, 1 ms apart, before one that runs is asked with a signal,
	 * which such a thread could take in its next sleep (EINTR).  One
	 * that is runnable but did not run in them -- woken, it waits for a
	 * CPU a loaded machine does not give it, and reads "running" -- is
	 * looked at longer (longer_look): it goes back to sleep once it has
	 * run, and is looked at once more then.  (One asleep whose stack
	 * cannot be read is asked after 20.) */
	uintptr_t frames[32];
	uint32_t tid = LOAD(&ts->tid);
	uint64_t ran = ms_task_cpu_ns(tid), longer_from = 0, longer_at = 0;
	for (int look = 0, last = 0; ms_stack_blocked_available(); look++) {
		int n = ms_stack_blocked(tid, frames, 32);
		if (n > 0) {
			for (int i = 0; i < n; i++)
				ts->now_frames[i] = frames[i];
			return n;
		}
		if (last)
			break;
		if (look >= 19) {
			if (!ran || ms_task_state(tid) != 'R' || !longer_look(&longer_from, &longer_at))
				break;
			last = ms_task_cpu_ns(tid) != ran; /* it ran: asleep again? */
		}
		__atomic_add_fetch(&ms_report_progress, 1, __ATOMIC_RELAXED);
		struct timespec nap = { 0, 1000000 };
		nanosleep(&nap, NULL);
	}
	if (!ms_where_now_signal || !ms_stack_available() || !still_ours(ms_where_now_signal))
		return -1;
	int why = asking_steals(LOAD(&ts->tid), LOAD(&ts->alt_size), ms_where_now_signal);
	if (why)
		return why == ASK_BLOCKED ? -2 : why == ASK_SIGWAIT ? -3 : why == ASK_SLEEPS ? -4 : -7;
	uint32_t req = __atomic_add_fetch(&stack_request, 1, __ATOMIC_SEQ_CST);
	if (syscall(SYS_tgkill, getpid(), (pid_t)LOAD(&ts->tid), ms_where_now_signal) != 0) {
		/* EPERM: a seccomp filter of the program's refuses it */
		send_errno = errno;
		return -8;
	}
	/* 250 ms; then, while it is runnable and has not run since it was
	 * asked (a loaded machine gives it no CPU: its handler has not
	 * begun), up to 2 s, looked at every 10 ms; once it has run, 50 ms
	 * more for the handler to end.  One that ran and did not answer
	 * then, or sleeps, is given up. */
	const uint64_t asked = ms_mono_ns(), ran_before = ms_task_cpu_ns(tid);
	uint64_t give_up = asked + 250000000;
	int has_run = 0;
	while (__atomic_load_n(&ts->now_seq, __ATOMIC_ACQUIRE) != req) {
		uint64_t now = ms_mono_ns();
		if (now > give_up) {
			if (!ran_before || has_run || now > asked + 2000000000ull)
				return 0;
			has_run = ms_task_cpu_ns(tid) != ran_before;
			if (!has_run && ms_task_state(tid) != 'R')
				return 0;
			give_up = now + (has_run ? 50000000 : 10000000);
			__atomic_add_fetch(&ms_report_progress, 1, __ATOMIC_RELAXED);
		}
		struct timespec ts_ = { 0, 200000 };
		nanosleep(&ts_, NULL);
	}
	return ts->now_no_room == 1   ? -5
	       : ts->now_no_room == 2 ? -6
	       : ts->now_no_room == 3 ? -9
				      : (int)ts->now_n;
}

const char *ms_where_now_not_asked(int n)
{
	switch (n) {
	case -1:
		return ms_stack_available() ? "SIGRTMAX-3 is the program's" : NULL;
	case -2:
		return "it blocks SIGRTMAX-3";
	case -3:
		return "it waits for signals in sigwait, sigwaitinfo or sigtimedwait";
	case -4:
		return "it sleeps or polls in a system call that a signal would cut short";
	case -5:
		return "asked, it was too near its stack's end to walk it";
	case -6:
		return "asked, it was being cancelled: no walk then";
	case -7:
		return "it may run a signal handler on its alternate stack, too near that stack's end to walk it";
	case -9:
		return "asked, on a coroutine's stack: no walk there"; /* its room not known */
	case -8: {
		static char why[64]; /* under the report's lock */
		const char *e = strerrorname_np(send_errno);
		struct ms_fmt f;
		ms_fmt_init(&f, why, sizeof why, -1);
		ms_fmt(&f, "sending it a signal failed: %s", e ? e : "error");
		return ms_fmt_str(&f);
	}
	default:
		return NULL;
	}
}

int ms_where_now(struct ms_tstate *ts, const uintptr_t **frames)
{
	int n = where_now(ts);
	*frames = ts->now_frames;
	/* Our own frames are not the program's: left out.  Ours with the
	 * program's code outside them are one of our entry points -- say a
	 * wait in glibc's lock, called from ms_lock_slow -- and said
	 * (now_in_call); our thread start below the thread's first frame
	 * (only libc's start outside it) is not. */
	int kept = 0, ours = 0;
	ts->now_in_call = 0;
	uintptr_t exit_entry = __atomic_load_n(&ms_stack_exit_entry, __ATOMIC_RELAXED);
	for (int i = 0; i < n; i++) {
		uintptr_t pc = ts->now_frames[i];
		if (exit_entry && pc - exit_entry < 256)
			continue; /* our exit(), calling glibc's: the program's exit */
		if (ms_stack_own_code(pc))
			ours = 1;
		else {
			if (ours && !ms_stack_c_library_code(pc))
				ts->now_in_call = 1;
			ts->now_frames[kept++] = pc;
		}
	}
	return n > 0 ? kept : n;
}

/* Whether this handler interrupted glibc's cancellation handler: its
 * signal, SIGCANCEL (the kernel's first real-time signal, 32), is blocked
 * while that runs, and glibc lets no program block it.  A walk there
 * would read() (libunwind probes memory so), and glibc makes a read() of
 * a thread being cancelled wait until the cancellation signal is taken --
 * which only the handler under ours would finish: the thread hung for
 * ever, and its joiner with it (3 runs in 160 of a torture of
 * asynchronous cancellation beside kill -USR1 dumps). */
static int in_cancel_handler(void)
{
	uint64_t set = 0;
	if (syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &set, sizeof set) != 0)
		return 0;
	return (int)(set >> (32 - 1)) & 1;
}

/* The handler's walk, into the record, in a frame of its own: below the
 * handler's, whose checks come first. */
static __attribute__((noinline)) void answer(struct ms_tstate *ts)
{
	uintptr_t frames[33];
	int n = ms_stack_capture(frames, 33), skip = 0;
	if (n > 0 && ms_signal_return && frames[0] - ms_signal_return < 16)
		skip = 1;
	ts->now_n = 0;
	for (int i = skip; i < n && i - skip < 32; i++)
		ts->now_frames[ts->now_n++] = frames[i];
}

/* On an alternate signal stack the thread is on (a handler of the
 * program's that runs there), the kernel puts this handler's frame below
 * the interrupted one, 2-3 KB on a machine with AVX-512: the room is
 * decided before the walk's buffers go there (ms_stack_near_end), which on
 * a 6 KB one went below it, into another thread's TLS. */
void ms_where_now_handler(int sig)
{
	(void)sig;
	int saved = errno;
	struct ms_thread *t = &ms_self;
	struct ms_tstate *ts = t->ts;
	if (ts) {
		uint32_t req = __atomic_load_n(&stack_request, __ATOMIC_ACQUIRE);
		ms_guard_enter(t);
		uint32_t no_walk = ms_stack_near_end()	  ? 1
				   : in_cancel_handler()  ? 2
				   : ms_stack_switched() ? 3
							  : 0;
		ts->now_no_room = no_walk;
		ts->now_n = 0;
		if (!no_walk)
			answer(ts);
		ms_guard_leave(t);
		__atomic_store_n(&ts->now_seq, req, __ATOMIC_RELEASE);
	}
	errno = saved;
}
