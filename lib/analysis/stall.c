/* stall.c - whether every thread of the process is blocked; see stall.h.
 *
 * A look goes over /proc/self/task: a thread's recorded wait (thread_pool.h)
 * says what it waits for and since when; a thread without one is read in
 * /proc/self/task/TID/syscall, and only a futex wait counts.  Such a
 * wait's start is not known: it is the first look that saw the thread in
 * it with the same count of context switches (a thread woken and asleep
 * again has switched).  The look stops at the first thread that is not
 * blocked for good, so a busy program pays for one or two reads.  A
 * process with a timer armed to send it a signal is not stalled; one that
 * handles a signal another process may send is stalled unless that
 * signal comes (stall.h). */
#define _GNU_SOURCE
#include "analysis/stall.h"
#include "base/fds.h"
#include "analysis/waitfor.h"
#include "base/clock.h"
#include "base/fmt.h"
#include "base/internal.h"
#include "core/table.h"
#include "core/thread_pool.h"
#include "glibc/own_signals.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 8192

/* The futex waits a look saw, to tell when each began. */
struct futex_seen {
	uint32_t tid;
	uintptr_t word;
	uint64_t switches, since;
};

static struct futex_seen seen[MAX_THREADS], seen_now[MAX_THREADS];
static uint32_t nseen, nseen_now;
static uint64_t reported; /* the signature of the last stall answered */

struct records {
	struct ms_tstate *ts[MAX_THREADS];
	uint32_t n;
};

static void collect(struct ms_tstate *ts, void *arg)
{
	struct records *r = arg;
	if (r->n < MAX_THREADS)
		r->ts[r->n++] = ts;
}

static int by_tid(const void *x, const void *y)
{
	uint32_t a = LOAD(&(*(struct ms_tstate *const *)x)->tid);
	uint32_t b = LOAD(&(*(struct ms_tstate *const *)y)->tid);
	return a < b ? -1 : a > b;
}

/* Thread tid's record (the records sorted by tid), NULL if none. */
static struct ms_tstate *record_of(const struct records *r, uint32_t tid)
{
	size_t lo = 0, hi = r->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		uint32_t t = LOAD(&r->ts[mid]->tid);
		if (t == tid)
			return r->ts[mid];
		if (t < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static uint32_t thread_of_handle(const struct records *r, uintptr_t handle)
{
	for (uint32_t i = 0; i < r->n; i++)
		if (LOAD(&r->ts[i]->handle) == handle)
			return LOAD(&r->ts[i]->tid);
	return 0;
}

/* Thread tid's futex wait now: 1 and the word, whether it has a timeout,
 * whether it is private; 0 if it is in no futex wait (or runs). */
static int futex_wait(uint32_t tid, uintptr_t *word, int *timed, int *shared)
{
	char buf[256];
	if (!ms_task_file(tid, "syscall", buf, sizeof buf))
		return 0;
	const char *p = buf;
	if (*p < '0' || *p > '9' || (long)ms_scan_number(&p, 10) != SYS_futex)
		return 0;
	uint64_t arg[4] = { 0 };
	for (int i = 0; i < 4 && p[0] == ' ' && p[1] == '0' && p[2] == 'x'; i++) {
		p += 3;
		arg[i] = ms_scan_number(&p, 16);
	}
	unsigned op = (unsigned)arg[1] & FUTEX_CMD_MASK;
	if (op != FUTEX_WAIT && op != FUTEX_WAIT_BITSET && op != FUTEX_LOCK_PI &&
	    op != FUTEX_WAIT_REQUEUE_PI)
		return 0;
	*word = (uintptr_t)arg[0];
	*timed = arg[3] != 0;
	*shared = !(arg[1] & FUTEX_PRIVATE_FLAG);
	return 1;
}

/* Voluntary and involuntary context switches of thread tid. */
static uint64_t switches(uint32_t tid)
{
	char buf[2048];
	uint64_t n = 0;
	if (!ms_task_file(tid, "status", buf, sizeof buf))
		return 0;
	for (const char *p = buf; (p = strstr(p, "ctxt_switches:")) != NULL;) {
		p += sizeof "ctxt_switches:" - 1;
		while (*p == ' ' || *p == '\t')
			p++;
		n += ms_scan_number(&p, 10);
	}
	return n;
}

/* Whether thread tid sleeps (state S or D), not runs. */
static int asleep(uint32_t tid)
{
	char state = ms_task_state(tid);
	return state == 'S' || state == 'D';
}

/* When the futex wait of tid on word began, as far as the looks tell. */
static uint64_t futex_since(uint32_t tid, uintptr_t word, uint64_t now)
{
	uint64_t sw = switches(tid), since = now;
	for (uint32_t i = 0; i < nseen; i++)
		if (seen[i].tid == tid && seen[i].word == word && seen[i].switches == sw)
			since = seen[i].since;
	if (nseen_now < MAX_THREADS)
		seen_now[nseen_now++] = (struct futex_seen){ tid, word, sw, since };
	return since;
}

/* Whether record r's mutex is process-shared: another process may let it
 * go (or signal the condition waiting with it). */
static int pshared(uint32_t r)
{
	uint32_t kind = LOAD(&ms_rec(r)->flags) >> MS_F_KIND_SHIFT;
	return (kind & MS_KIND_PSHARED) && (kind & MS_KIND_DESTROYED) != MS_KIND_DESTROYED;
}

/* Whether thread tid (record ts), in a condition wait on the mutex at
 * key, is blocked taking that mutex back -- woken, it waits for the mutex
 * and its holder, with no deadline, as in the wait-for graph: into w if
 * so.  (Called a wait for the condition, it hid the thread it waits for.)
 * w's time is the condition wait's, as shown; *since is the retake's,
 * which glibc begins inside the wait, unseen: the first look that saw it,
 * as for a futex wait.  (The condition wait's start made a STALL of a
 * retake just begun, "for" the time the thread waited to be woken.) */
static int retake(uint32_t tid, struct ms_tstate *ts, uintptr_t key, uint64_t now,
		  struct ms_stall_thread *w, uint64_t *since)
{
	uint32_t r = ms_table_find(key);
	if (r == MS_REC_NONE || r == MS_REC_UNTRACKED || !ms_waitfor_retaking(tid, key))
		return 0;
	w->kind = MS_STALL_MUTEX;
	w->retake = 1;
	w->object = key;
	uint32_t owner = LOAD(&ms_rec(r)->owner);
	w->holder = owner & MS_HELD ? owner & ~MS_HELD : 0;
	w->shared = pshared(r);
	w->caller = LOAD(&ts->cond_caller);
	uint64_t cond_since = LOAD(&ts->cond_since);
	w->waited_ns = ms_ticks_to_ns(now > cond_since ? now - cond_since : 0);
	*since = futex_since(tid, key, now);
	return 1;
}

/* What thread tid (record ts, NULL none) waits for, into w, and since
 * when it is blocked so; 0 if it is not blocked in a wait that counts. */
static int classify(const struct records *r, uint32_t tid, struct ms_tstate *ts,
		    uint64_t now, struct ms_stall_thread *w, uint64_t *since)
{
	memset(w, 0, sizeof *w);
	w->tid = tid;
	w->ts = ts;
	uint32_t rec = ts ? __atomic_load_n(&ts->wait_rec, __ATOMIC_ACQUIRE) : 0;
	if (rec && ms_waitfor_left_wait(tid))
		rec = 0; /* what it does now says what it waits for */
	uintptr_t cond = ts ? __atomic_load_n(&ts->cond_key, __ATOMIC_ACQUIRE) : 0;
	uintptr_t join = ts ? __atomic_load_n(&ts->join_target, __ATOMIC_ACQUIRE) : 0;
	if (rec) {
		w->kind = MS_STALL_MUTEX;
		w->object = LOAD(&ts->wait_key);
		uint32_t owner = LOAD(&ms_rec(rec)->owner);
		w->holder = owner & MS_HELD ? owner & ~MS_HELD : 0;
		w->timed = (int)LOAD(&ts->wait_timed);
		w->shared = pshared(rec);
		w->caller = LOAD(&ts->wait_caller);
		w->stack = LOAD(&ts->wait_stack);
		*since = LOAD(&ts->wait_since);
	} else if (cond && retake(tid, ts, cond, now, w, since)) {
		/* w says it, and its time */
	} else if (cond) {
		w->kind = MS_STALL_COND;
		w->object = LOAD(&ts->cond_cond);
		w->mutex = cond;
		w->timed = (int)LOAD(&ts->cond_timed);
		uint32_t r = ms_table_find(cond);
		w->shared = r != MS_REC_NONE && r != MS_REC_UNTRACKED && pshared(r);
		w->caller = LOAD(&ts->cond_caller);
		*since = LOAD(&ts->cond_since);
	} else if (join) {
		w->kind = MS_STALL_JOIN;
		w->object = join;
		w->holder = thread_of_handle(r, join);
		w->timed = (int)LOAD(&ts->join_timed);
		w->caller = LOAD(&ts->join_caller);
		*since = LOAD(&ts->join_since);
	} else {
		uintptr_t word;
		if (!futex_wait(tid, &word, &w->timed, &w->shared))
			return 0;
		w->kind = MS_STALL_FUTEX;
		w->object = word;
		*since = futex_since(tid, word, now);
	}
	if (!w->retake)
		w->waited_ns = ms_ticks_to_ns(now > *since ? now - *since : 0);
	/* a deadline ends it, another process may: the world outside, as
	 * for a thread in read() or nanosleep() */
	return !w->timed && !w->shared;
}

/* A timer of the process that will send a signal: alarm() or setitimer's
 * ITIMER_REAL, or a POSIX timer (timer_create) that notifies, armed.  Its
 * handler may end any of the waits, as a deadline would (the others,
 * ITIMER_VIRTUAL and ITIMER_PROF, count only time that runs).  The POSIX
 * timers are read from /proc/self/timers, which some kernels lack
 * (CONFIG_CHECKPOINT_RESTORE): there only alarm() is seen. */
static int timer_armed(void)
{
	struct itimerval it;
	if (getitimer(ITIMER_REAL, &it) == 0 && (it.it_value.tv_sec || it.it_value.tv_usec))
		return 1;
	int fd = open("/proc/self/timers", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	static char buf[4096]; /* the dump thread's */
	ssize_t got = read(fd, buf, sizeof buf - 1);
	ms_fd_close(fd);
	if (got <= 0)
		return 0;
	buf[got] = 0;
	/* a timer is "ID: n", then "signal: ...", "notify: how/...", "ClockID" */
	long id = -1;
	for (const char *p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (!strncmp(p, "ID: ", 4)) {
			const char *q = p + 4;
			id = (long)ms_scan_number(&q, 10);
		} else if (!strncmp(p, "notify: ", 8) && id >= 0 && strncmp(p + 8, "none", 4) != 0) {
			struct itimerspec v;
			if (syscall(SYS_timer_gettime, id, &v) == 0 &&
			    (v.it_value.tv_sec || v.it_value.tv_nsec))
				return 1;
			id = -1;
		}
	}
	return 0;
}

/* The first signal another process may send to ask something of this one
 * (stall.h) that the program handles, 0 if none.  The library's own
 * handlers are not the program's; nor are those of the signals a fault
 * raises, of the timers (timer_armed) and of SIGINT. */
static int handled_signal(void)
{
	/* those another process sends to ask something: not SIGCHLD,
	 * SIGWINCH, SIGCONT, SIGURG or SIGIO, whose handlers runtimes (libuv,
	 * Qt, the JVM) install whatever the program does, so that none of
	 * their STALLs would count */
	static const int asked[] = {
		SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGPWR,
	};
	for (size_t i = 0; i < sizeof asked / sizeof asked[0] + (size_t)(SIGRTMAX - SIGRTMIN + 1);
	     i++) {
		int sig = i < sizeof asked / sizeof asked[0]
				  ? asked[i]
				  : SIGRTMIN + (int)(i - sizeof asked / sizeof asked[0]);
		struct sigaction cur;
		if (ms_sigaction(sig, NULL, &cur) != 0)
			continue;
		ms_own_signal_hide(sig, &cur); /* ours: what was there before */
		if (cur.sa_handler != SIG_DFL && cur.sa_handler != SIG_IGN)
			return sig;
	}
	return 0;
}

const char *ms_stall_signal_name(int sig, char out[24])
{
	struct ms_fmt f;
	ms_fmt_init(&f, out, 24, -1);
	if (sig >= SIGRTMIN && sig <= SIGRTMAX)
		ms_fmt(&f, "SIGRTMIN+%d", sig - SIGRTMIN);
	else {
		const char *a = sigabbrev_np(sig);
		ms_fmt(&f, "SIG%s", a ? a : "?");
	}
	return ms_fmt_str(&f);
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h = (h ^ v) * 0x9e3779b97f4a7c15ull;
	return h ^ h >> 29;
}

int ms_stall_check(uint32_t self, uint64_t threshold_ns, struct ms_stall *out)
{
	static struct records recs; /* the dump thread's */
	recs.n = 0;
	ms_threads_each(collect, &recs);
	qsort(recs.ts, recs.n, sizeof(struct ms_tstate *), by_tid);
	int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	uint64_t now = ms_ticks(), sig = 0;
	memset(out, 0, sizeof *out);
	out->waited_ns = UINT64_MAX;
	nseen_now = 0;
	int blocked = 1;
	static char dents[16384]; /* the dump thread's */
	long got;
	while (blocked && (got = syscall(SYS_getdents64, fd, dents, sizeof dents)) > 0)
		for (long at = 0; blocked && at < got;) {
			const struct dirent64 *e = (const struct dirent64 *)(dents + at);
			at += e->d_reclen;
			const char *p = e->d_name;
			if (*p < '0' || *p > '9')
				continue;
			uint32_t tid = (uint32_t)ms_scan_number(&p, 10);
			if (tid == self)
				continue;
			struct ms_stall_thread w;
			uint64_t since;
			if (!classify(&recs, tid, record_of(&recs, tid), now, &w, &since)) {
				blocked = 0;
				break;
			}
			uint64_t blocked = ms_ticks_to_ns(now > since ? now - since : 0);
			if (blocked < out->waited_ns)
				out->waited_ns = blocked;
			sig = mix(mix(mix(sig, tid), w.object), since);
			if (out->shown < MS_STALL_SHOWN)
				out->t[out->shown++] = w;
			out->n++;
		}
	ms_fd_close(fd);
	/* the futex waits seen this time are those to match next time */
	memcpy(seen, seen_now, nseen_now * sizeof *seen);
	nseen = nseen_now;
	if (!blocked || !out->n || out->waited_ns < threshold_ns || sig == reported ||
	    timer_armed())
		return 0;
	/* all of it held a moment ago; each thread asleep now, or a wait
	 * just ended (its thread runs to return from it) */
	for (uint32_t i = 0; i < out->shown; i++)
		if (!asleep(out->t[i].tid))
			return 0;
	for (uint32_t i = 0; i < out->shown; i++)
		ms_thread_name(out->t[i].tid, out->t[i].name);
	out->handled_signal = handled_signal();
	reported = sig;
	return 1;
}
