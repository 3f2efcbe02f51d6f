/* waitfor_text.c - the DEADLOCK and WAIT CHAIN sections of the text
 * report, from a snapshot of the wait-for graph (analysis/waitfor.h). */
#define _GNU_SOURCE
#include "report/waitfor_text.h"
#include "analysis/waitfor.h"
#include "base/clock.h"
#include "base/internal.h"
#include "core/forked.h"
#include "core/table.h"
#include "core/thread_pool.h"
#include "report/report_stacks.h"
#include "stacks/symbols.h"
#include "stacks/where_now.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

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

static void print_far_owner(struct ms_fmt *f, const struct ms_waiter *w, enum ms_far far)
{
	char name[16];
	switch (far) {
	case FAR_PARENT:
		ms_fmt(f, "  thread %u of the parent process (pid %d) held it when this "
			  "process forked; this process has no such thread\n",
		       w->owner, ms_fork_parent_pid());
		break;
	case FAR_OTHER: {
		int pid = ms_waitfor_process_of(w->foreign);
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

/* Where the thread at the end of a chain is, asking each thread once a
 * report: a thousand threads waiting behind one holder are a thousand
 * chains ending at it, and asking it for each cut a thousand of its
 * sleeps short (each ask was a signal), or, if it did not answer, waited
 * for it a thousand times.  Its frames stay in its record for the next
 * chains.  Under the report lock, as the waiters. */
static struct {
	struct ms_tstate *ts;
	int n;
} asked[MS_WAITERS_MAX];
static int nasked;

static int where_now_once(struct ms_tstate *ts)
{
	for (int i = 0; i < nasked; i++)
		if (asked[i].ts == ts)
			return asked[i].n;
	const uintptr_t *frames;
	int n = ms_where_now(ts, &frames);
	if (nasked < MS_WAITERS_MAX) {
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

static void print_wait(struct ms_fmt *f, const struct ms_waiter *w, uint64_t now)
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
static void print_taken(struct ms_fmt *f, const struct ms_waiter *w)
{
	char where[256];
	ms_fmt(f, "    held by thread %u, taken at %s\n", w->owner,
	       w->taken_at ? ms_symbolize(w->taken_at, where, sizeof where) : "?");
}

int ms_waitfor_print(struct ms_fmt *f)
{
	static struct ms_waiter w[MS_WAITERS_MAX]; /* under the report lock */
	uint64_t now;
	int n = ms_waitfor_snapshot(w, &now);
	if (!n)
		return 0;
	int deadlocks = 0;
	nasked = 0;
	for (int i = 0; i < n; i++)
		w[i].done = 0;
	/* cycles: follow next from each waiter; a cycle is printed from its
	 * smallest tid */
	for (int i = 0; i < n; i++) {
		int steps = 0, in_cycle = 0;
		for (int k = w[i].next; k >= 0 && steps <= n; k = w[k].next, steps++)
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
		const char *until = ms_waitfor_cycle_timed(w, n, i) ? "until a timed lock gives up"
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
	for (int i = 0; i < n; i++) {
		if (w[i].done || (!w[i].owner && !w[i].foreign))
			continue;
		int waited_on = 0;
		for (int j = 0; j < n; j++)
			waited_on |= w[j].next == i;
		if (waited_on)
			continue;
		int k = i, last = i, into = -1;
		for (int steps = 0; k >= 0 && steps <= n; k = w[k].next, steps++) {
			if (w[k].done == 2) {
				into = k;
				break;
			}
			last = k;
		}
		struct ms_tstate *end = into < 0 ? w[last].owner_ts : NULL;
		uintptr_t cond = end ? w[last].cond_key : 0;
		enum ms_far far = end || into >= 0 ? FAR_HERE : ms_waitfor_far_owner(&w[last]);
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
		for (int steps = 0; k >= 0 && k != into && steps <= n;
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
			int nf = where_now_once(end);
			const char *why = ms_where_now_not_asked(nf);
			ms_fmt(f, "  thread %u is not waiting for a mutex; ", w[last].owner);
			if (nf > 0) {
				ms_fmt(f, "it is now at ");
				print_frames(f, end->now_frames, nf, 2 + 46);
			} else if (why)
				ms_fmt(f, "where it is now: not asked (%s)\n", why);
			else
				ms_fmt(f, "where it is now: %s\n",
				       nf ? "unknown (no call stacks)" : "it did not answer");
		} else
			print_far_owner(f, &w[last], far);
	}
	return deadlocks;
}

