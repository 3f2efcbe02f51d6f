/* waitfor.c - live deadlock analysis and the dump thread; see waitfor.h.
 *
 * The dump signal's handler only writes a byte to a pipe (async-signal-
 * safe, and safe wherever the signal lands: in malloc, stdio, the loader or
 * our own code).  A thread of ours, started with the library and blocking
 * every signal, reads the pipe and writes the report: it can symbolise,
 * allocate and take its time, and it works when every application thread
 * is blocked in a deadlock.  The same thread runs the watchdog.
 *
 * Where a thread at the end of a wait chain is now is read from /proc and
 * its stack if it is blocked in the kernel (stack_blocked.c); one that runs
 * is asked: the dump thread sends it a real-time signal whose handler
 * unwinds its own stack into its record (with SA_RESTART; a thread that
 * does not answer within 250 ms is shown without). */
#define _GNU_SOURCE
#include "analysis/waitfor.h"
#include "report/altstack.h"
#include "base/maps.h"
#include "glibc/real.h"
#include "base/clock.h"
#include "stacks/depot.h"
#include "base/fds.h"
#include "report/findings_text.h"
#include "core/forked.h"
#include "analysis/findings.h"
#include "analysis/stall.h"
#include "base/internal.h"
#include "glibc/last_thread.h"
#include "base/options.h"
#include "base/output.h"
#include "record/record.h"
#include "report/report.h"
#include "report/report_stacks.h"
#include "stacks/stack.h"
#include "stacks/stack_blocked.h"
#include "stacks/symbols.h"
#include "core/table.h"
#include "core/thread.h"
#include "core/thread_pool.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/single_threaded.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static int pipe_fd[2] = { -1, -1 };
static int dump_signal, stack_signal;
static uint32_t stack_request;
static pid_t dump_pid, dump_tid; /* the dump thread's process and thread */

/* When the dump thread starts.  glibc runs the mutexes of a process with one
 * thread without locked instructions (its single-thread optimisation): a
 * thread of ours would take that away from every single-threaded program
 * (~7 ns more per lock/unlock pair here, against ~8 ns for all of our
 * bookkeeping), so where it can wait, it waits until it is needed:
 *
 *   START_AT_THREADS  when the program starts a second thread of its own
 *                     (our pthread_create, after glibc's has returned), or
 *                     its thread is about to wait for a mutex or a
 *                     condition (then it waits for another process); a
 *                     dump asked for before that makes it START_AT_CALL;
 *   START_AT_CALL     at the next mutex call, with glibc's malloc: it never
 *                     calls a pthread mutex, so that call is never made
 *                     from inside the allocator pthread_create will call
 *                     (and a fork child that locks a mutex has left the
 *                     async-signal-safe regime anyway);
 *   START_AT_CREATE   only with the program's second thread, beside another
 *                     malloc than glibc's: jemalloc locks pthread mutexes
 *                     inside malloc, where pthread_create would call malloc
 *                     from inside itself, so neither a mutex call nor a
 *                     wait is a safe moment.  (And an allocator without
 *                     fork handlers, gcc 12's ASan, would hand a program
 *                     that forks as our thread starts -- a shell, say -- a
 *                     child whose malloc lock is held forever.)
 *
 * It starts at once where it cannot wait: in a process with threads
 * already, or with crash reports asked for (a crash needs it to be there).
 * The watchdog can wait: only a wait can hang. */
enum { START_AT_CALL = 1, START_AT_CREATE = 2, START_AT_THREADS = 4 };
uint32_t ms_live_pending;
static int foreign_malloc; /* malloc is not glibc's (ms_live_init) */
static int crash_asked, crash_done;
int ms_live_aborting;

/* ---- the wait-for graph ---------------------------------------------- */

#define MAX_WAITERS 4096

struct waiter {
	struct ms_tstate *ts;
	uint32_t tid, rec, stack;
	uintptr_t key, caller;
	uint64_t since;
	int timed;       /* the wait has a deadline: it gives up then */
	uint32_t owner;  /* tid holding the mutex, 0 if free now */
	uint32_t foreign; /* a process-shared mutex held in another process:
			     glibc's owner, a thread of that process */
	struct ms_tstate *owner_ts; /* the owner's record, NULL if none here */
	uintptr_t taken_at;   /* where the owner took it (its held set), 0 unknown */
	/* the owner's condition wait (its mutex, 0 none), when that wait and
	 * this one were both under way while the owner held this mutex */
	uintptr_t cond_key, cond_caller;
	uint64_t cond_since;
	int next;        /* index of the owner among waiters, -1 none */
	int done;
	int changed;     /* the wait ended, or its mutex changed hands, while
			    the graph was read (snapshot) */
	int lasted;      /* the same wait, owner (and its condition wait)
			    after COND_LASTS_MS */
	int stuck;       /* the chain from here ends at a condition wait, and
			    all of it lasted COND_LASTS_MS */
	int retake;      /* the thread is in a condition wait, blocked taking
			    its mutex back (glibc's retake, inside the wait:
			    `caller` and `since` are the condition wait's) */
};

/* How long a chain of waits that ends at a condition wait must stay as it
 * is before it is called a DEADLOCK.  Such a moment is common in programs
 * that work: the JVM holds its Threads_lock while it waits for a new
 * thread to start, and threads starting others wait for that lock, for a
 * millisecond or so; a program that hangs that way stays so. */
#define COND_LASTS_MS 100

struct find {
	uint32_t tid;
	struct ms_tstate *ts;
};

static void match_tid(struct ms_tstate *t, void *arg)
{
	struct find *f = arg;
	if (LOAD(&t->tid) == f->tid)
		f->ts = t;
}

/* The record of a live thread, by tid. */
static struct ms_tstate *find_thread(uint32_t tid)
{
	struct find f = { tid, NULL };
	ms_threads_each(match_tid, &f);
	return f.ts;
}

struct collect {
	struct waiter *w;
	int n;
};

/* The process a thread id belongs to (its Tgid), 0 if no such thread (or
 * it has exited and waits to be reaped). */
static int process_of(uint32_t tid)
{
	char path[64], buf[512];
	struct ms_fmt f;
	ms_fmt_init(&f, path, sizeof path, -1);
	ms_fmt(&f, "/proc/%u/status", tid);
	int saved = errno, pid = 0;
	int fd = open(ms_fmt_str(&f), O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, buf, sizeof buf - 1);
		close(fd);
		buf[n > 0 ? n : 0] = 0;
		const char *state = strstr(buf, "\nState:");
		if (state && (strstr(state, "Z (zombie)") == state + 8 ||
			      strstr(state, "X (dead)") == state + 8)) {
			errno = saved;
			return 0;
		}
		const char *t = strstr(buf, "\nTgid:");
		for (t = t ? t + 6 : ""; *t == ' ' || *t == '\t'; t++)
			;
		for (; *t >= '0' && *t <= '9'; t++)
			pid = pid * 10 + (*t - '0');
	}
	errno = saved;
	return pid;
}

/* A process-shared mutex that no thread of ours holds may be held in
 * another process: glibc's owner field names that thread.  The mutex's
 * memory is read with process_vm_readv, which fails instead of faulting
 * if the program has unmapped it meanwhile. */
static uint32_t foreign_owner(uint32_t r, uintptr_t key)
{
	uint32_t kind = LOAD(&ms_rec(r)->flags) >> MS_F_KIND_SHIFT;
	if (!(kind & MS_KIND_PSHARED) || (kind & MS_KIND_DESTROYED) == MS_KIND_DESTROYED)
		return 0;
	pthread_mutex_t m;
	struct iovec local = { &m, sizeof m }, remote = { (void *)key, sizeof m };
	int saved = errno;
	ssize_t got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	errno = saved;
	if (got != (ssize_t)sizeof m)
		return 0;
	int holder = mutex_holder(&m);
	if (holder <= 0 || holder >= MS_OWNER_NOTRECOVERABLE)
		return 0;
	return process_of((uint32_t)holder) == getpid() ? 0 : (uint32_t)holder;
}

/* The thread that holds record r's mutex now, 0 if none. */
static uint32_t holder_now(uint32_t r)
{
	uint32_t owner = LOAD(&ms_rec(r)->owner);
	return (owner & MS_HELD) ? owner & ~MS_HELD : 0;
}

static int retaking(uint32_t tid, uintptr_t key);

/* Where thread o took the mutex of record r, from its held set; 0 if it
 * holds no such mutex now. */
static uintptr_t taken_at(struct ms_tstate *o, uint32_t r)
{
	uintptr_t at = 0;
	uint32_t n = LOAD(&o->nheld);
	n = n < MS_HELD_MAX ? n : MS_HELD_MAX;
	for (uint32_t h = 0; h < n; h++)
		if (LOAD(&o->held[h].rec) == r)
			at = LOAD(&o->held[h].caller);
	return at;
}

/* w's thread is still in the wait that was read (its start names it). */
static int wait_same(const struct waiter *w)
{
	if (w->retake)
		return LOAD(&w->ts->cond_key) == w->key &&
		       LOAD(&w->ts->cond_since) == w->since && retaking(w->tid, w->key);
	return __atomic_load_n(&w->ts->wait_rec, __ATOMIC_ACQUIRE) == w->rec &&
	       LOAD(&w->ts->wait_since) == w->since;
}

/* w's owner is still in the condition wait that was read. */
static int cond_same(const struct waiter *w)
{
	return LOAD(&w->owner_ts->cond_key) == w->cond_key &&
	       LOAD(&w->owner_ts->cond_since) == w->cond_since;
}

static void collect_waiter(struct ms_tstate *ts, void *arg)
{
	struct collect *c = arg;
	uint32_t r = __atomic_load_n(&ts->wait_rec, __ATOMIC_ACQUIRE);
	if (!r || c->n >= MAX_WAITERS)
		return;
	struct waiter *w = &c->w[c->n++];
	w->ts = ts;
	w->tid = LOAD(&ts->tid);
	w->rec = r;
	w->key = LOAD(&ts->wait_key);
	w->caller = LOAD(&ts->wait_caller);
	w->stack = LOAD(&ts->wait_stack);
	w->since = LOAD(&ts->wait_since);
	w->timed = (int)LOAD(&ts->wait_timed);
	w->owner = holder_now(r);
	w->foreign = w->owner ? 0 : foreign_owner(r, w->key);
	w->owner_ts = NULL;
	w->taken_at = 0;
	w->cond_key = 0;
	w->next = -1;
	w->retake = 0;
}

/* Waiter i's owner o is in a condition wait: if it is blocked taking that
 * wait's mutex back, and another thread holds the mutex, that is a wait
 * for a mutex like any other (a cycle through it is a DEADLOCK, not a
 * chain ending at a condition wait): it joins the graph as a waiter. */
static void add_retake(struct collect *c, int i, struct ms_tstate *o)
{
	struct waiter *w = c->w;
	uintptr_t key = w[i].cond_key;
	for (int j = 0; j < c->n; j++)
		if (w[j].ts == o) { /* a waiter already: the same for w[i] */
			if (w[j].retake)
				w[i].cond_key = 0;
			return;
		}
	uint32_t r = ms_table_find(key);
	if (c->n >= MAX_WAITERS || r == MS_REC_NONE || r == MS_REC_UNTRACKED ||
	    !retaking(w[i].owner, key))
		return;
	uint32_t owner = holder_now(r), foreign = owner ? 0 : foreign_owner(r, key);
	if ((!owner && !foreign) || owner == w[i].owner)
		return; /* let go meanwhile (it gets it), or its own: no wait */
	struct waiter *x = &w[c->n++];
	*x = (struct waiter){
		.ts = o, .tid = w[i].owner, .rec = r, .key = key,
		.caller = w[i].cond_caller, .since = w[i].cond_since,
		.owner = owner, .foreign = foreign, .next = -1, .retake = 1,
	};
	w[i].cond_key = 0; /* not waiting for the condition now */
}

/* The end of the chain of waits from w[i] (the last waiter in it), -1 on
 * a cycle. */
static int chain_end(const struct waiter *w, int n, int i)
{
	int last = i, steps = 0;
	for (int k = w[i].next; k >= 0; k = w[k].next) {
		if (k == i || ++steps > n)
			return -1;
		last = k;
	}
	return last;
}

/* Whether thread tid is runnable (state R in /proc): not asleep.  In a
 * condition wait that means the wait is over -- its deadline passed, or
 * it was signalled -- and the thread only waits for a CPU to return. */
static int runnable(uint32_t tid)
{
	return ms_task_state(tid) == 'R';
}

/* Chains that end at a thread in a condition wait: look again after
 * COND_LASTS_MS, and mark stuck those whose every wait, owner and
 * condition wait are still the same ones (a wait's start time names it),
 * with the condition wait's thread still asleep in it.  (A 1 ms timed
 * wait whose thread a loaded machine left without a CPU for 100 ms after
 * its deadline read as stuck: a DEADLOCK that was not.) */
static void confirm_stuck(struct waiter *w, int n)
{
	int candidates = 0;
	for (int i = 0; i < n; i++) {
		w[i].lasted = w[i].stuck = 0;
		candidates |= w[i].next < 0 && w[i].owner_ts && w[i].cond_key;
	}
	if (!candidates)
		return;
	struct timespec pause = { 0, COND_LASTS_MS * 1000000L };
	while (nanosleep(&pause, &pause) != 0 && errno == EINTR)
		;
	for (int i = 0; i < n; i++)
		w[i].lasted = holder_now(w[i].rec) == w[i].owner;
	for (int i = 0; i < n; i++) {
		w[i].lasted &= wait_same(&w[i]);
		if (w[i].next < 0 && w[i].owner_ts && w[i].cond_key)
			w[i].lasted &= cond_same(&w[i]) && !runnable(w[i].owner);
	}
	for (int i = 0; i < n; i++) {
		int last = chain_end(w, n, i);
		if (last < 0 || !w[last].owner_ts || !w[last].cond_key)
			continue;
		int stuck = 1;
		for (int k = i; k >= 0; k = w[k].next)
			stuck &= w[k].lasted;
		w[i].stuck = stuck;
	}
}

/* The wait-for graph as it was at one moment, into w (MAX_WAITERS);
 * returns the number of waits, each linked to its owner's wait (next).
 *
 * Threads go on while their records are read, and a text report
 * symbolises between its findings (the first lookup in a large library
 * takes many milliseconds), so a graph read piecemeal joins waits that
 * have ended to owners that have let go since -- one then in a condition
 * wait of its own made a DEADLOCK that never was.  So the graph is read
 * in three rounds: every wait and its mutex's owner (and the owner's
 * condition wait), every owner again, every wait again.  A wait that is
 * the same in the first round and the last (its start time too) lasted
 * through the second, all that time its thread was blocked and held what
 * it held, so the owners read then were the owners all at once; a
 * condition wait read the same before and after the second round was
 * under way while its thread held the mutex.  A wait that ended, or whose
 * mutex changed hands, is left out: its mutex moves, no chain is stuck on
 * it.  *moment is the second round's time, which the waits are measured
 * to: not the time after confirm_stuck's pause, when a wait that ended in
 * it would read 100 ms longer than it ever was. */
static int snapshot(struct waiter *w, uint64_t *moment)
{
	struct collect c = { w, 0 };
	ms_threads_each(collect_waiter, &c);
	for (int i = 0; i < c.n; i++) {
		struct ms_tstate *o = w[i].owner ? find_thread(w[i].owner) : NULL;
		w[i].owner_ts = o;
		if (!o)
			continue;
		w[i].cond_key = LOAD(&o->cond_key);
		w[i].cond_since = LOAD(&o->cond_since);
		w[i].cond_caller = LOAD(&o->cond_caller);
		w[i].taken_at = taken_at(o, w[i].rec);
		if (w[i].cond_key)
			add_retake(&c, i, o); /* read in this loop in turn */
	}
	for (int i = 0; i < c.n; i++) {
		/* the hold of this round: the owner may have let go and taken
		 * the mutex again since the first, when its held set was read
		 * between the two (a hot mutex: "taken at ?") */
		uintptr_t at = w[i].owner_ts ? taken_at(w[i].owner_ts, w[i].rec) : 0;
		w[i].changed = holder_now(w[i].rec) != w[i].owner;
		if (at)
			w[i].taken_at = at;
	}
	*moment = ms_ticks();
	for (int i = 0; i < c.n; i++)
		w[i].changed |= !wait_same(&w[i]);
	/* a retake that did not last: its thread's waiters end at it, in its
	 * condition wait or not, as if it had not been seen */
	for (int x = 0; x < c.n; x++)
		if (w[x].retake && w[x].changed)
			for (int i = 0; i < c.n; i++)
				if (w[i].owner_ts == w[x].ts && !w[i].retake)
					w[i].cond_key = w[x].key;
	for (int i = 0; i < c.n; i++)
		if (w[i].owner_ts && w[i].cond_key && !cond_same(&w[i]))
			w[i].cond_key = 0;
	int n = 0;
	for (int i = 0; i < c.n; i++)
		if (!w[i].changed)
			w[n++] = w[i];
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			if (w[i].owner && w[j].tid == w[i].owner)
				w[i].next = j;
	confirm_stuck(w, n);
	return n;
}

/* Who holds the mutex at the end of a chain, when that is not a thread
 * here that runs or waits. */
enum far {
	FAR_HERE,    /* a thread of this process */
	FAR_EXITED,  /* a thread of this process that has exited */
	FAR_PARENT,  /* a thread of the parent: held when this process forked */
	FAR_OTHER,   /* a thread of another process (process-shared) */
	FAR_GONE,    /* a thread of another process that no longer exists */
	FAR_UNSEEN,  /* a thread id that names no process here sharing it */
};

static int same_object(const struct ms_mapping *m, void *arg)
{
	const struct ms_mapping *want = arg;
	return m->inode == want->inode && !strcmp(m->dev, want->dev);
}

/* Whether process pid maps the object (shared memory, a file) that holds
 * address key here.  glibc's owner field holds a thread id as the
 * locking process saw it: in another pid namespace (a container, unshare
 * -p) the same number is another process here -- pid 1 of the other
 * namespace is this one's init.  1 when it cannot be told. */
static int maps_same(int pid, uintptr_t key)
{
	struct ms_mapping want = { 0, 0, 0, "", 0 };
	if (!ms_maps_find(key, &want) || !want.inode)
		return 1;
	char path[64];
	struct ms_fmt f;
	ms_fmt_init(&f, path, sizeof path, -1);
	ms_fmt(&f, "/proc/%d/maps", pid);
	return ms_maps_each(ms_fmt_str(&f), same_object, &want) != 0;
}

static enum far far_owner(const struct waiter *w)
{
	if (w->foreign) {
		int pid = process_of(w->foreign);
		if (!pid)
			return FAR_GONE;
		return maps_same(pid, w->key) ? FAR_OTHER : FAR_UNSEEN;
	}
	if (!w->owner || find_thread(w->owner))
		return FAR_HERE;
	if (ms_fork_orphan_owner(w->rec) == w->owner)
		return FAR_PARENT;
	return FAR_EXITED;
}

static const char *process_name(int pid, char out[16])
{
	char path[64];
	struct ms_fmt f;
	ms_fmt_init(&f, path, sizeof path, -1);
	ms_fmt(&f, "/proc/%d/comm", pid);
	out[0] = 0;
	int saved = errno;
	int fd = open(ms_fmt_str(&f), O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, out, 15);
		close(fd);
		out[n > 0 ? n : 0] = 0;
		if (n > 0 && out[n - 1] == '\n')
			out[n - 1] = 0;
	}
	errno = saved;
	return out;
}

static void print_far_owner(struct ms_fmt *f, const struct waiter *w, enum far far)
{
	char name[16];
	switch (far) {
	case FAR_PARENT:
		ms_fmt(f, "  thread %u of the parent process (pid %d) held it when this "
			  "process forked; this process has no such thread\n",
		       w->owner, ms_fork_parent_pid());
		break;
	case FAR_OTHER: {
		int pid = process_of(w->foreign);
		ms_fmt(f, "  held by thread %u of process %d \"%s\" (process-shared): that "
			  "process's report shows what it does\n",
		       w->foreign, pid, process_name(pid, name));
		break;
	}
	case FAR_GONE:
		ms_fmt(f, "  its holder, thread %u of another process, has exited without "
			  "unlocking it: nobody can\n", w->foreign);
		break;
	case FAR_UNSEEN:
		ms_fmt(f, "  held by thread %u of another process (process-shared), as that "
			  "process numbers it: no process\n    here with that id maps this "
			  "memory (it runs in another pid namespace, or has exited)\n",
		       w->foreign);
		break;
	default:
		break;
	}
}

static void stack_handler(int sig);

/* A program that installed its own handler for the signal since start-up
 * must not get signals it did not ask for. */
static int still_ours(int sig)
{
	struct sigaction cur;
	return sigaction(sig, NULL, &cur) == 0 && cur.sa_handler == stack_handler;
}

/* Reads a number in base 10 or 16 at *t, moving past it. */
/* Thread tid's system call now, from /proc, and its first argument (0
 * if not shown); -1 if it runs ("running") or is gone. */
static long task_syscall(uint32_t tid, uint64_t *arg0)
{
	char buf[256];
	*arg0 = 0;
	if (!ms_task_file(tid, "syscall", buf, sizeof buf) || buf[0] < '0' || buf[0] > '9')
		return -1;
	const char *t = buf;
	long nr = (long)ms_scan_number(&t, 10);
	if (t[0] == ' ' && t[1] == '0' && t[2] == 'x') {
		t += 3;
		*arg0 = ms_scan_number(&t, 16);
	}
	return nr;
}

/* Whether thread tid, in a condition wait on the mutex at key, is blocked
 * taking the mutex back: glibc's retake sleeps in futex on the mutex's
 * lock word (its first), the wait itself on the condition's words. */
static int retaking(uint32_t tid, uintptr_t key)
{
	uint64_t at;
	return task_syscall(tid, &at) == SYS_futex && at == key;
}

enum { ASK_OK, ASK_BLOCKED, ASK_SIGWAIT, ASK_SLEEPS };

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

/* Whether a signal sent to thread tid would reach the program instead of
 * our handler: a signal the thread blocks stays pending on it, for the
 * program's own sigwait or signalfd to take (SigBlk in its status), and
 * one the thread waits for in sigwait, sigwaitinfo or sigtimedwait
 * (rt_sigtimedwait, whose set the kernel unblocks while it waits, so
 * SigBlk does not show it) is taken by that call; or whether it would
 * cut short a call that never restarts (ASK_SLEEPS).
 * Unknown counts as ASK_OK, as before. */
static int asking_steals(uint32_t tid, int sig)
{
	char buf[2048];
	int saved = errno, why = ASK_OK;
	ms_task_file(tid, "status", buf, sizeof buf);
	const char *t = strstr(buf, "\nSigBlk:");
	if (t) {
		for (t += 8; *t == ' ' || *t == '\t'; t++)
			;
		if (ms_scan_number(&t, 16) >> (sig - 1) & 1)
			why = ASK_BLOCKED;
	}
	uint64_t at;
	long nr = task_syscall(tid, &at);
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

/* Where a thread is, into its record: read from /proc and its stack if
 * it is blocked in the kernel (no signal: nothing changes for it);
 * otherwise it is asked to unwind its own stack, with a signal, and
 * waited for up to 250 ms (a running thread answers once it is scheduled,
 * later on a loaded machine).  Returns the number of frames, 0 if it did
 * not answer, -1 if it was not asked: the program handles the signal itself
 * (or stacks are off), -2 if not asked because the thread blocks it, -3
 * because it waits for it in sigwaitinfo (either way the program would
 * take our signal), -4 because the signal would cut its sleep or poll
 * short (asking_steals). */
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
	 * timeout, a loop of sleeps) is caught asleep, and left alone: a few
	 * looks, 1 ms apart, before one that runs is asked with a signal,
	 * which such a thread could take in its next sleep (EINTR). */
	uintptr_t frames[32];
	for (int look = 0; look < 20 && ms_stack_blocked_available(); look++) {
		int n = ms_stack_blocked(LOAD(&ts->tid), frames, 32);
		if (n > 0) {
			for (int i = 0; i < n; i++)
				ts->now_frames[i] = frames[i];
			return n;
		}
		struct timespec nap = { 0, 1000000 };
		nanosleep(&nap, NULL);
	}
	if (!stack_signal || !ms_stack_available() || !still_ours(stack_signal))
		return -1;
	int why = asking_steals(LOAD(&ts->tid), stack_signal);
	if (why)
		return why == ASK_BLOCKED ? -2 : why == ASK_SIGWAIT ? -3 : -4;
	uint32_t req = __atomic_add_fetch(&stack_request, 1, __ATOMIC_SEQ_CST);
	if (syscall(SYS_tgkill, getpid(), (pid_t)LOAD(&ts->tid), stack_signal) != 0)
		return 0;
	uint64_t give_up = ms_mono_ns() + 250000000;
	while (__atomic_load_n(&ts->now_seq, __ATOMIC_ACQUIRE) != req) {
		if (ms_mono_ns() > give_up)
			return 0;
		struct timespec ts_ = { 0, 200000 };
		nanosleep(&ts_, NULL);
	}
	return (int)ts->now_n;
}

const char *ms_live_not_asked(int n)
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
	default:
		return NULL;
	}
}

int ms_live_where_now(struct ms_tstate *ts, const uintptr_t **frames)
{
	int n = where_now(ts);
	*frames = ts->now_frames;
	return n;
}

/* Where the stack handler returns to: glibc's signal trampoline
 * (sa_restorer), which its captures begin with once our own frames are
 * trimmed -- not where the thread is. */
static uintptr_t signal_return;

static void stack_handler(int sig)
{
	(void)sig;
	int saved = errno;
	struct ms_thread *t = &ms_self;
	struct ms_tstate *ts = t->ts;
	if (ts) {
		uint32_t req = __atomic_load_n(&stack_request, __ATOMIC_ACQUIRE);
		ms_guard_enter(t);
		uintptr_t frames[33];
		int n = ms_stack_capture(frames, 33), skip = 0;
		if (n > 0 && signal_return && frames[0] - signal_return < 16)
			skip = 1;
		ts->now_n = 0;
		for (int i = skip; i < n && i - skip < 32; i++)
			ts->now_frames[ts->now_n++] = frames[i];
		ms_guard_leave(t);
		__atomic_store_n(&ts->now_seq, req, __ATOMIC_RELEASE);
	}
	errno = saved;
}

/* Where the thread at the end of a chain is, asking each thread once a
 * report: a thousand threads waiting behind one holder are a thousand
 * chains ending at it, and asking it for each cut a thousand of its
 * sleeps short (each ask was a signal), or, if it did not answer, waited
 * for it a thousand times.  Its frames stay in its record for the next
 * chains.  Under the report lock, as the waiters. */
static struct {
	struct ms_tstate *ts;
	int n;
} asked[MAX_WAITERS];
static int nasked;

static int where_now_once(struct ms_tstate *ts)
{
	for (int i = 0; i < nasked; i++)
		if (asked[i].ts == ts)
			return asked[i].n;
	int n = where_now(ts);
	if (nasked < MAX_WAITERS) {
		asked[nasked].ts = ts;
		asked[nasked++].n = n;
	}
	return n;
}

static void print_frames(struct ms_fmt *f, const uintptr_t *frames, int n, int indent)
{
	for (int i = 0; i < n && i < 12; i++) {
		char where[256];
		ms_symbolize(frames[i], where, sizeof where);
		/* lines of at most 120 columns: the first frame follows a
		 * line's start as long as indent */
		ms_fmt(f, "%*s%s\n", i ? indent : 0, "",
		       ms_symbol_fit(where, (size_t)(120 - indent)));
	}
}

static void print_wait(struct ms_fmt *f, const struct waiter *w, uint64_t now)
{
	char d[16];
	const char *name = NULL;
	if (LOAD(&ms_rec(w->rec)->flags) & MS_F_COLD)
		name = LOAD(&ms_table.cold[w->rec].name);
	char tn[16], cut[40];
	ms_fmt(f, "  thread %u \"%s\" waits for mutex %p%s%s%s", w->tid,
	       ms_thread_name(w->tid, tn), (void *)w->key, name ? " \"" : "",
	       ms_name_cut(cut, sizeof cut, name, 30), name ? "\"" : "");
	ms_fmt(f, w->retake ? " again, to return from its condition wait (in it for %s)\n"
			    : " for %s\n",
	       ms_duration(d, ms_ticks_to_ns(now > w->since ? now - w->since : 0)));
	if (w->timed)
		ms_fmt(f, "    a timed lock (timedlock, clocklock): it gives up at its deadline\n");
	ms_fmt(f, "    waits at      ");
	if (w->stack)
		ms_report_stack(f, w->stack, 18);
	else {
		char where[256];
		ms_fmt(f, "%s\n", ms_symbolize(w->caller, where, sizeof where));
	}
}

/* Where the owner took the mutex, from its held set (the call site only:
 * the frames below it were not captured for this acquisition). */
static void print_taken(struct ms_fmt *f, const struct waiter *w)
{
	char where[256];
	ms_fmt(f, "    held by thread %u, taken at %s\n", w->owner,
	       w->taken_at ? ms_symbolize(w->taken_at, where, sizeof where) : "?");
}

/* Whether the cycle through waiter i has a wait with a deadline in it:
 * then it ends when that wait gives up. */
static int cycle_timed(const struct waiter *w, int n, int i)
{
	int timed = 0, steps = 0, k = i;
	do {
		timed |= w[k].timed;
		k = w[k].next;
	} while (k != i && k >= 0 && ++steps <= n);
	return timed;
}

int ms_live_print(struct ms_fmt *f)
{
	static struct waiter w[MAX_WAITERS]; /* under the report lock */
	uint64_t now;
	struct collect c = { w, snapshot(w, &now) };
	if (!c.n)
		return 0;
	int deadlocks = 0;
	nasked = 0;
	for (int i = 0; i < c.n; i++)
		w[i].done = 0;
	/* cycles: follow next from each waiter; a cycle is printed from its
	 * smallest tid */
	for (int i = 0; i < c.n; i++) {
		int steps = 0, in_cycle = 0;
		for (int k = w[i].next; k >= 0 && steps <= c.n; k = w[k].next, steps++)
			if (k == i) {
				in_cycle = 1;
				break;
			}
		if (!in_cycle || w[i].done)
			continue;
		int len = 0, lowest = i;
		for (int k = i;; k = w[k].next) {
			len++;
			if (w[k].tid < w[lowest].tid)
				lowest = k;
			if (w[k].next == i)
				break;
		}
		/* a wait with a deadline ends the cycle when it gives up */
		const char *until = cycle_timed(w, c.n, i) ? "until a timed lock gives up"
							     : "forever";
		if (len == 1) /* say, a mutex this thread locked before a fork */
			ms_fmt(f, "\nDEADLOCK: thread %u waits for a mutex it holds itself, "
				  "%s\n", w[i].tid, until);
		else
			ms_fmt(f, "\nDEADLOCK: %d threads wait for each other, %s\n", len, until);
		for (int k = lowest, first = 1; first || k != lowest; k = w[k].next, first = 0) {
			w[k].done = 2; /* on a cycle: chains into it stop there */
			print_wait(f, &w[k], now);
			print_taken(f, &w[k]);
		}
		deadlocks++;
	}
	/* the other waits: chains from a waiter nobody waits for, ending at
	 * a thread not waiting for a mutex, in a condition wait, or at a
	 * holder that is not here (exited, a thread of the parent, of
	 * another process), or running into a cycle written above (its
	 * walk went round the cycle and called a thread in it "not waiting
	 * for a mutex") */
	for (int i = 0; i < c.n; i++) {
		if (w[i].done || (!w[i].owner && !w[i].foreign))
			continue;
		int waited_on = 0;
		for (int j = 0; j < c.n; j++)
			waited_on |= w[j].next == i;
		if (waited_on)
			continue;
		int k = i, last = i, into = -1;
		for (int steps = 0; k >= 0 && steps <= c.n; k = w[k].next, steps++) {
			if (w[k].done == 2) {
				into = k;
				break;
			}
			last = k;
		}
		struct ms_tstate *end = into < 0 ? w[last].owner_ts : NULL;
		uintptr_t cond = end ? w[last].cond_key : 0;
		enum far far = end || into >= 0 ? FAR_HERE : far_owner(&w[last]);
		/* a chain ending at a condition wait that did not last (the
		 * condition came, or the mutex moved on: COND_LASTS_MS) is a
		 * WAIT CHAIN, below (its end is here: FAR_HERE) */
		if (cond && w[i].stuck) {
			/* The chain ends in a thread waiting for a condition while
			 * holding the mutex the chain waits for: if a waiter in
			 * the chain is the one to signal it, nobody will. */
			ms_fmt(f, "\nDEADLOCK: thread %u waits for a condition while holding a "
				  "mutex other threads wait for\n", w[last].owner);
			ms_fmt(f, "  (unless a thread outside this chain signals it)\n");
			deadlocks++;
		} else if (far == FAR_EXITED) {
			ms_fmt(f, "\nDEADLOCK: thread %u waits for a mutex whose owner, thread "
				  "%u, has exited: nobody can unlock it\n",
			       w[last].tid, w[last].owner);
			deadlocks++;
		} else if (far == FAR_PARENT) {
			ms_fmt(f, "\nDEADLOCK: thread %u waits for a mutex that thread %u of the "
				  "parent process held at the fork: nobody here can unlock it\n",
			       w[last].tid, w[last].owner);
			deadlocks++;
		} else if (far == FAR_GONE) {
			ms_fmt(f, "\nDEADLOCK: thread %u waits for a process-shared mutex whose "
				  "owner, thread %u of another process, has exited\n",
			       w[last].tid, w[last].foreign);
			deadlocks++;
		} else
			ms_fmt(f, "\nWAIT CHAIN:\n");
		k = i;
		for (int steps = 0; k >= 0 && k != into && steps <= c.n;
		     k = w[k].next, steps++) {
			w[k].done = 1;
			print_wait(f, &w[k], now);
			if (w[k].owner)
				print_taken(f, &w[k]);
		}
		if (into >= 0)
			ms_fmt(f, "  thread %u waits in the DEADLOCK above\n", w[into].tid);
		else if (cond) {
			char d[16], where[256];
			uint64_t since = w[last].cond_since;
			ms_fmt(f, "  thread %u waits for a condition (mutex %p) for %s\n",
			       w[last].owner, (void *)cond,
			       ms_duration(d, ms_ticks_to_ns(now > since ? now - since : 0)));
			ms_fmt(f, "    waits at      %s\n",
			       ms_symbolize(w[last].cond_caller, where, sizeof where));
		} else if (end) {
			int n = where_now_once(end);
			const char *why = ms_live_not_asked(n);
			ms_fmt(f, "  thread %u is not waiting for a mutex; ", w[last].owner);
			if (n > 0) {
				ms_fmt(f, "it is now at ");
				print_frames(f, end->now_frames, n, 2 + 46);
			} else if (why)
				ms_fmt(f, "where it is now: not asked (%s)\n", why);
			else
				ms_fmt(f, "where it is now: %s\n",
				       n ? "unknown (no call stacks)" : "it did not answer");
		} else
			print_far_owner(f, &w[last], far);
	}
	return deadlocks;
}

/* Deadlocks that cannot end by themselves, in the graph now: a cycle with
 * no wait with a deadline in it, and a wait on a mutex whose holder is
 * gone (exited, a thread of the parent at the fork, of another process
 * that exited).  Not a cycle through a timed lock (it gives up), nor a
 * chain ending at a condition wait (a thread outside it may signal it:
 * a producer that sleeps, a slow peer), nor a wait behind a thread that
 * runs, sleeps or is stopped.  The watchdog aborts on these only. */
int ms_live_certain_deadlocks(void)
{
	size_t bytes = MAX_WAITERS * sizeof(struct waiter);
	struct waiter *w = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (w == MAP_FAILED)
		return 0;
	uint64_t moment;
	int n = snapshot(w, &moment), certain = 0;
	for (int i = 0; i < n; i++) {
		int last = chain_end(w, n, i);
		if (last < 0) /* on a cycle: one without a deadline */
			certain += !cycle_timed(w, n, i);
		else if (!w[last].owner_ts && (w[last].owner || w[last].foreign)) {
			enum far far = far_owner(&w[last]);
			certain += far == FAR_EXITED || far == FAR_PARENT || far == FAR_GONE;
		}
	}
	munmap(w, bytes);
	return certain;
}

static void count_waiting(struct ms_tstate *ts, void *arg)
{
	if (__atomic_load_n(&ts->wait_rec, __ATOMIC_ACQUIRE))
		(*(int *)arg)++;
}

int ms_live_waiting(void)
{
	int n = 0;
	ms_threads_each(count_waiting, &n);
	return n;
}

/* ---- the wait-for graph, for graph outputs --------------------------- */

int ms_live_each_wait(ms_live_wait_fn *fn, void *arg)
{
	/* Its own copy of the graph (not ms_live_print's, which is under the
	 * text report's lock): this may run beside a text report. */
	size_t bytes = MAX_WAITERS * sizeof(struct waiter);
	struct waiter *w = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (w == MAP_FAILED)
		return -1;
	uint64_t now;
	struct collect c = { w, snapshot(w, &now) };
	for (int i = 0; i < c.n; i++) {
		struct ms_live_wait lw = {
			.tid = w[i].tid, .rec = w[i].rec, .key = w[i].key,
			.caller = w[i].caller, .stack = w[i].stack,
			.waited_ns = ms_ticks_to_ns(now > w[i].since ? now - w[i].since : 0),
			.owner = w[i].owner, .owner_caller = w[i].taken_at,
			.timed = w[i].timed, .retake = w[i].retake,
		};
		int steps = 0;
		for (int k = w[i].next; k >= 0 && steps <= c.n; k = w[k].next, steps++)
			if (k == i) {
				lw.cycle = 1;
				break;
			}
		/* the chain's end: a thread in a condition wait, for a while? */
		lw.cond_end = !lw.cycle && w[i].stuck;
		const struct ms_tstate *ots = w[i].owner_ts;
		lw.owner_in_parent = w[i].owner && !ots &&
				     ms_fork_orphan_owner(w[i].rec) == w[i].owner;
		lw.owner_exited = w[i].owner && !ots && !lw.owner_in_parent;
		lw.owner_ts = w[i].owner_ts;
		lw.foreign_owner = w[i].foreign;
		if (ots && w[i].next < 0 && w[i].stuck)
			lw.owner_cond_key = w[i].cond_key;
		fn(&lw, arg);
	}
	munmap(w, bytes);
	return c.n;
}

/* ---- the dump thread ------------------------------------------------- */

/* Both ends of the pipe share one inode.  A program may close descriptors
 * it did not open (a daemon closing everything, a fork child before exec)
 * and get the same numbers for its own files: the handler must not write
 * into them, nor the dump thread read from them. */
static dev_t pipe_dev;
static ino_t pipe_ino;
static int pipe_gone; /* the program closed it: the dump thread reads no more */

static int pipe_make(void)
{
	struct stat st;
	if (pipe2(pipe_fd, O_CLOEXEC | O_NONBLOCK) != 0)
		return -1;
	/* not the lowest free numbers: those are the program's next open()s */
	pipe_fd[0] = ms_fd_move_high(pipe_fd[0]);
	pipe_fd[1] = ms_fd_move_high(pipe_fd[1]);
	/* the reading end blocks in poll(); only writes must not block */
	fcntl(pipe_fd[0], F_SETFL, 0);
	if (fstat(pipe_fd[0], &st) == 0) {
		pipe_dev = st.st_dev;
		pipe_ino = st.st_ino;
	}
	return 0;
}

static int is_our_pipe(int fd)
{
	struct stat st; /* fstat: async-signal-safe */
	return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == pipe_dev &&
	       st.st_ino == pipe_ino;
}

/* The dump thread's new pipe, after the program closed the old one: its
 * ends closed where they still are ours, the new one made (at a high
 * number again).  A signal meanwhile may see the new number with the old
 * inode, or the other way round: its poke is then dropped (is_our_pipe),
 * never written into a file of the program's. */
static int pipes_made;
#define PIPES_MAX 20 /* new pipes at most: then the program wins */

static int pipe_remake(void)
{
	for (int i = 0; i < 2; i++)
		if (is_our_pipe(pipe_fd[i]))
			close(pipe_fd[i]);
	return pipe_make();
}

/* A dump signal whose byte could not be written: the program had closed
 * the pipe.  The dump thread, making a new one, writes that dump then. */
static int dump_lost;

/* Returns 0 if the pipe is not ours any more (the program closed it). */
static int poke(char c)
{
	if (!is_our_pipe(pipe_fd[1])) {
		if (c == 'd')
			__atomic_store_n(&dump_lost, 1, __ATOMIC_RELEASE);
		return 0;
	}
	if (write(pipe_fd[1], &c, 1) < 0) {
		/* the pipe is full: the dump thread has a wake-up pending anyway */
	}
	return 1;
}

static void dump_handler(int sig)
{
	(void)sig;
	int saved = errno;
	/* A child of fork without a pipe of its own yet (dump_pid is set with
	 * the pipe): the parent's dump thread must not answer for it. */
	if (getpid() == dump_pid) {
		poke('d');
		/* No dump thread yet (a process with one thread): it starts
		 * at this thread's next mutex call, which must take the slow
		 * path (the lock path trusts the cache, the unlock path unlock_word). */
		uint32_t p = START_AT_THREADS;
		if (__atomic_compare_exchange_n(&ms_live_pending, &p, START_AT_CALL, 0,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			ms_cache_clear(&ms_self);
			ms_ok_clear(&ms_self);
		}
	}
	errno = saved;
}

int ms_live_in_dump_thread(void)
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
int ms_live_in_signal_handler(void)
{
	stack_t alt;
	if (sigaltstack(NULL, &alt) == 0 && (alt.ss_flags & SS_ONSTACK))
		return 1;
	if (!signal_return)
		return 0;
	uintptr_t frames[64];
	struct ms_thread *t = &ms_self;
	ms_guard_enter(t);
	int n = ms_stack_capture(frames, 64);
	ms_guard_leave(t);
	for (int i = 0; i < n; i++)
		if (frames[i] - signal_return < 16)
			return 1;
	return 0;
}

int ms_live_crash_report(void)
{
	/* The thread may not have run yet: the request waits in the pipe.
	 * A fork child's that is not started yet will not be, from here. */
	if (!dump_pid || getpid() != dump_pid || ms_live_in_dump_thread() ||
	    __atomic_load_n(&ms_live_pending, __ATOMIC_ACQUIRE) ||
	    __atomic_load_n(&pipe_gone, __ATOMIC_ACQUIRE))
		return -1;
	__atomic_store_n(&crash_asked, 1, __ATOMIC_RELEASE);
	poke('c');
	return 0;
}

int ms_live_crash_report_done(void)
{
	return __atomic_load_n(&crash_done, __ATOMIC_ACQUIRE);
}

static void dump(unsigned seq)
{
	ms_report_all(seq);
}

/* The oldest wait for a mutex, in seconds. */
static void oldest(struct ms_tstate *ts, void *arg)
{
	uint64_t *since = arg;
	if (__atomic_load_n(&ts->wait_rec, __ATOMIC_ACQUIRE)) {
		uint64_t s = LOAD(&ts->wait_since);
		if (s && (!*since || s < *since))
			*since = s;
	}
}

/* The watchdog's look for a STALL (stall.h): kept as a finding, with
 * where each thread waits, and reported.  Returns 1 if there was one. */
static int stall_reported(unsigned *seq)
{
	static struct ms_stall s; /* the dump thread's */
	if (!ms_stall_check((uint32_t)dump_tid, ms_opt.watchdog * 1000000000ull, &s))
		return 0;
	for (uint32_t i = 0; i < s.shown; i++) {
		const uintptr_t *frames;
		int n;
		if (s.t[i].stack || !s.t[i].ts || (n = ms_live_where_now(s.t[i].ts, &frames)) <= 0)
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
	dump(++*seq);
	return 1;
}

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
	/* The watchdog reports the first wait that lasts MUTEXSTAT_WATCHDOG
	 * seconds.  A long wait is not a deadlock: a holder that sleeps,
	 * does I/O or is stopped makes one in a healthy program.  So it
	 * goes on looking while waits are that long, and reports once more
	 * when a deadlock that cannot end by itself appears; only that one
	 * aborts (MUTEXSTAT_ON_DEADLOCK=abort). */
	int watchdog_fired = 0, watchdog_done = 0;
	for (;;) {
		/* without the pipe, poll only waits (it skips a negative fd) */
		struct pollfd p = { pipe_gone ? -1 : pipe_fd[0], POLLIN, 0 };
		/* a pipe the program closes does not end the poll: a look at
		 * it every second at least */
		int timeout = ms_opt.watchdog && !watchdog_done ? 250 : pipe_gone ? -1 : 1000;
		int n = poll(&p, 1, timeout);
		if (n >= 0 && !pipe_gone && !is_our_pipe(pipe_fd[0])) {
			/* The program closed it (a daemon closing every
			 * descriptor; it may have the number for a file of its
			 * own now): a new one, so that dumps go on, unless the
			 * program keeps closing it.  Then no more dumps; the
			 * thread stays, outside glibc's count of threads: its end
			 * would be counted, and if the program's last thread ended
			 * at that moment, both would call exit() -- the second
			 * ending the process in the middle of the first's exit
			 * report.  The watchdog needs no pipe, and goes on. */
			if (++pipes_made <= PIPES_MAX && pipe_remake() == 0) {
				/* what came while there was no pipe */
				if (__atomic_load_n(&crash_asked, __ATOMIC_ACQUIRE))
					poke('c');
				else if (__atomic_exchange_n(&dump_lost, 0, __ATOMIC_ACQ_REL))
					poke('d');
				continue;
			}
			static const char msg[] = "mutexstat: the program closed the live "
				"dump's pipe: no more dumps on a signal\n";
			int fd = ms_output_stderr();
			if (fd >= 0)
				ms_write_all(fd, msg, sizeof msg - 1);
			__atomic_store_n(&pipe_gone, 1, __ATOMIC_RELEASE);
			continue;
		}
		if (n > 0) {
			char buf[64];
			ssize_t got = read(pipe_fd[0], buf, sizeof buf);
			if (got <= 0)
				continue;
			if (__atomic_load_n(&crash_asked, __ATOMIC_ACQUIRE)) {
				/* the process's last report: where the exit
				 * report would go */
				ms_report_all(0);
				/* once: a dump signal after it starts none */
				__atomic_store_n(&crash_asked, 0, __ATOMIC_RELEASE);
				__atomic_store_n(&crash_done, 1, __ATOMIC_RELEASE);
				continue;
			}
			if (memchr(buf, 's', (size_t)got))
				ms_findings_say_unsaid(ms_output_stderr());
			if (memchr(buf, 'd', (size_t)got))
				dump(++seq);
			continue;
		}
		if (n == 0 && ms_opt.watchdog && !watchdog_done) {
			int stalled = stall_reported(&seq);
			if (stalled) {
				watchdog_fired = 1;
				watchdog_done = 1; /* nothing can end it */
				if (ms_opt.on_deadlock == 1) { /* abort */
					ms_live_aborting = 1;
					abort();
				}
				continue;
			}
			uint64_t since = 0;
			ms_threads_each(oldest, &since);
			uint64_t now = ms_ticks();
			if (since && now > since &&
			    ms_ticks_to_ns(now - since) >= ms_opt.watchdog * 1000000000ull) {
				int certain = ms_live_certain_deadlocks();
				if (watchdog_fired && !certain)
					continue; /* reported; no deadlock yet */
				watchdog_fired = 1;
				watchdog_done = certain > 0;
				dump(++seq);
				if (certain && ms_opt.on_deadlock == 1) { /* abort */
					ms_live_aborting = 1;
					abort();
				}
			}
		}
	}
	return NULL;
}

/* The program's own use of a signal wins: one that has a handler or is
 * ignored when we start is left to it.  Returns the word for the note. */
static const char *taken(int sig)
{
	struct sigaction cur;
	if (sigaction(sig, NULL, &cur) != 0)
		return "cannot be read";
	if (cur.sa_handler == SIG_DFL)
		return NULL;
	return cur.sa_handler == SIG_IGN ? "ignores it" : "handles it itself";
}

/* The dispositions before ours, for a fork child that is not followed. */
static struct sigaction old_dump_sa, old_stack_sa;
static int have_old_dump, have_old_stack;


size_t ms_live_thread_stack(void)
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
	size_t stack = ms_live_thread_stack();
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
	Dl_info info;
	void *(*m)(size_t) = malloc; /* the one the program's calls reach */
	return dladdr((void *)m, &info) && info.dli_fname &&
	       strstr(info.dli_fname, "/libc.so");
}

int ms_live_init(void)
{
	static const int signals[] = { SIGUSR1, SIGUSR2, 0 };
	static const char *const names[] = { "USR1", "USR2" };
	foreign_malloc = !malloc_is_glibcs();
	ms_last_thread_init();
	dump_signal = signals[ms_opt.signal];
	stack_signal = SIGRTMAX - 3;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = stack_handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (taken(stack_signal) || sigaction(stack_signal, &sa, &old_stack_sa) != 0)
		stack_signal = 0;
	else {
		have_old_stack = 1;
		struct sigaction cur;
		if (sigaction(stack_signal, NULL, &cur) == 0)
			signal_return = (uintptr_t)cur.sa_restorer;
	}
	const char *how = dump_signal ? taken(dump_signal) : NULL;
	if (how) {
		char buf[200];
		struct ms_fmt f;
		ms_fmt_init(&f, buf, sizeof buf, ms_output_stderr());
		ms_fmt(&f, "mutexstat: no live dumps on SIG%s: the program %s "
			   "(MUTEXSTAT_SIGNAL picks another, or none)\n",
		       names[ms_opt.signal], how);
		ms_fmt_flush(&f);
		dump_signal = 0;
	}
	if (!dump_signal && !ms_opt.watchdog && !ms_opt.on_crash)
		return 0;
	if (pipe_make() != 0)
		return -1;
	dump_pid = getpid();
	if (dump_signal) {
		sa.sa_handler = dump_handler;
		have_old_dump = sigaction(dump_signal, &sa, &old_dump_sa) == 0;
		struct sigaction cur;
		if (have_old_dump && !signal_return && sigaction(dump_signal, NULL, &cur) == 0)
			signal_return = (uintptr_t)cur.sa_restorer;
	}
	if (__libc_single_threaded && !ms_opt.on_crash) {
		__atomic_store_n(&ms_live_pending,
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
	if (sig && sigaction(sig, NULL, &now) == 0 && now.sa_handler == ours)
		sigaction(sig, old, NULL);
}

void ms_live_after_fork_child(int follow)
{
	/* The pipe is the parent's too: a dump signal here must not wake
	 * the parent's dump thread.  A number the program closed and opened
	 * a file of its own at (a daemon closing every descriptor) is the
	 * program's: left open. */
	for (int i = 0; i < 2; i++) {
		if (is_our_pipe(pipe_fd[i]))
			close(pipe_fd[i]);
		pipe_fd[i] = -1;
	}
	ms_live_pending = 0;
	dump_pid = 0; /* no dump thread here yet */
	dump_tid = 0;
	if (!follow) {
		/* not followed: the signals do what they did before us */
		if (have_old_dump)
			restore(dump_signal, &old_dump_sa, dump_handler);
		if (have_old_stack)
			restore(stack_signal, &old_stack_sa, stack_handler);
		return;
	}
	if (!dump_signal && !ms_opt.watchdog && !ms_opt.on_crash)
		return;
	/* a signal that comes before the thread waits in the pipe */
	if (pipe_make() == 0) {
		dump_pid = getpid();
		__atomic_store_n(&ms_live_pending,
				 foreign_malloc ? START_AT_CREATE
				 : ms_opt.on_crash ? START_AT_CALL : START_AT_THREADS,
				 __ATOMIC_RELEASE);
	}
}

/* Start the dump thread if it waits for one of the moments in `when`. */
static void start_pending(uint32_t when)
{
	uint32_t p = __atomic_load_n(&ms_live_pending, __ATOMIC_ACQUIRE);
	if (!(p & when) || !__atomic_compare_exchange_n(&ms_live_pending, &p, 0, 0,
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

void ms_live_at_call(void)
{
	start_pending(START_AT_CALL);
}

void ms_live_thread_created(void)
{
	start_pending(START_AT_THREADS | START_AT_CALL | START_AT_CREATE);
}

void ms_live_waits(void)
{
	start_pending(START_AT_THREADS | START_AT_CALL);
}

void ms_live_announce(void)
{
	int saved = errno;
	if (!dump_pid && !foreign_malloc && pipe_make() == 0) {
		/* no dump thread was wanted (no signal, watchdog nor crash
		 * reports): one for this, now */
		dump_pid = getpid();
		__atomic_store_n(&ms_live_pending, START_AT_CALL, __ATOMIC_RELEASE);
	}
	ms_live_waits();
	/* none to be had (another malloc than glibc's, the pipe closed by
	 * the program): said here */
	if (!dump_pid || __atomic_load_n(&ms_live_pending, __ATOMIC_ACQUIRE) ||
	    __atomic_load_n(&pipe_gone, __ATOMIC_ACQUIRE) || !poke('s'))
		ms_findings_say_unsaid(ms_output_stderr());
	errno = saved;
}
