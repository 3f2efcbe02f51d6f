/* waitfor_text.c - the DEADLOCK and WAIT CHAIN sections of the text
 * report, from a snapshot of the wait-for graph (analysis/waitfor.h). */
#define _GNU_SOURCE
#include "report/waitfor_text.h"
#include "base/fds.h"
#include "report/kinds.h"
#include "analysis/findings.h"
#include "analysis/waitfor.h"
#include "base/clock.h"
#include "base/internal.h"
#include "core/forked.h"
#include "core/table.h"
#include "core/thread_pool.h"
#include "report/report_stacks.h"
#include "report/suppress.h"
#include "stacks/site.h"
#include "stacks/symbols.h"
#include "stacks/where_now.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
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
		ms_fd_close(fd);
		out[n > 0 ? n : 0] = 0;
		if (n > 0 && out[n - 1] == '\n')
			out[n - 1] = 0;
	}
	errno = saved;
	return ms_printable_in_place(out); /* the program chose it, any bytes */
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
	case FAR_READERS: {
		const char *r = w->unseen == 1 ? "reader" : "readers";
		uint32_t flags = LOAD(&ms_rec(w->rec)->flags);
		if (((flags & ~MS_F_CLASS) >> MS_F_KIND_SHIFT) & MS_KIND_PSHARED)
			ms_fmt(f, "  held for read by %u %s not known here: of another process "
				  "(glibc keeps no reader's\n    thread id of a process-shared "
				  "rwlock), or taken before mutexstat started or past it\n",
			       w->unseen, r);
		else /* glibc counts a read before its thread's rdlock
		      * returns, and after its unlock began: under churn,
		      * 6 of 30 dumps had such a reader (adversarial round) */
			ms_fmt(f, "  held for read by %u %s not known here: in its read lock "
				  "or unlock call at this moment,\n    or taken before "
				  "mutexstat started or past it\n", w->unseen, r);
		break;
	}
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

/* The frames, the first after a space on a line begun with `first`
 * columns (or on a line of its own where it would not fit whole), the
 * others under it, `indent` in; lines of at most 120 columns. */
static void print_frames(struct ms_fmt *f, const uintptr_t *frames, int n, size_t first,
			 int indent)
{
	n = ms_stack_shown(frames, n); /* not the C library's start: as every stack */
	for (int i = 0; i < n && i < 12; i++) {
		char where[256];
		ms_symbolize(frames[i], where, sizeof where);
		if (!i && first + 1 + strlen(where) <= 120) {
			ms_fmt(f, " %s\n", where);
			indent = (int)first + 1; /* the others under it */
		} else
			ms_fmt(f, "%s%*s%s\n", i ? "" : "\n", indent, "",
			       ms_symbol_fit(where, (size_t)(120 - indent)));
	}
}

static void print_wait(struct ms_fmt *f, const struct ms_waiter *w, uint64_t now)
{
	char d[16];
	const char *name = NULL;
	if (LOAD(&ms_rec(w->rec)->flags) & MS_F_COLD)
		name = LOAD(&ms_table.cold[w->rec].name);
	char tn[16], head[96], tail[96], names[160];
	uint32_t flags = LOAD(&ms_rec(w->rec)->flags);
	const char *how = ms_lock_class(flags) != MS_CLASS_RWLOCK ? "for"
			  : w->read ? "to read" : "to write";
	struct ms_fmt hf, tf;
	ms_fmt_init(&hf, head, sizeof head, -1);
	ms_fmt(&hf, "  thread %u \"%s\" waits %s %s %p", w->tid, ms_thread_name(w->tid, tn),
	       how, ms_lock_noun(flags), (void *)w->key);
	ms_fmt_init(&tf, tail, sizeof tail, -1);
	ms_fmt(&tf, w->retake ? " again, to return from its condition wait (in it for %s)"
			     : " for %s",
	       ms_duration(d, ms_ticks_to_ns(now > w->since ? now - w->since : 0)));
	/* the variable and the name in what the rest leaves of 120 */
	struct ms_names_room room = { 40, 30, ms_line_room(strlen(head) + strlen(tail)), 0 };
	ms_fmt(f, "%s%s%s\n", ms_fmt_str(&hf),
	       ms_lock_names(names, sizeof names, w->key, name, &room), ms_fmt_str(&tf));
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

/* The line `head` and ", taken at " the site at (or "?"), fitted to 120
 * columns; where that is a lock wrapper of the program's at which lock r
 * was first locked, the line that called it then. */
static void print_head_taken_at(struct ms_fmt *f, struct ms_fmt *head, uintptr_t at, uint32_t r)
{
	char where[256];
	size_t used = strlen(ms_fmt_str(head)) + 11;
	ms_fmt(f, "%s, taken at %s\n", ms_fmt_str(head),
	       at ? ms_symbol_fit((char *)ms_symbolize(at, where, sizeof where),
				  used + 40 < 120 ? 120 - used : 40)
		  : "?");
	uint32_t wrapped = ms_site_wrapped_first_stack(r, at);
	if (wrapped) {
		const char *head2 = "      " MS_WRAPPER_CALLERS "  ";
		ms_symbolize(ms_site_beyond_wrapper(at, wrapped), where, sizeof where);
		ms_fmt(f, "%s%s\n", head2, ms_symbol_fit(where, 120 - strlen(head2)));
	}
}

/* Whether w's owner holds its lock for read: an rwlock not written by it. */
static int held_for_read(const struct ms_waiter *w)
{
	const struct ms_record *rec = ms_rec(w->rec);
	return ms_lock_class(LOAD(&rec->flags)) == MS_CLASS_RWLOCK &&
	       LOAD(&rec->owner) != (w->owner | MS_HELD);
}

/* Where the owner took the mutex, from its held set (the call site only:
 * the frames below it were not captured for this acquisition). */
static void print_taken(struct ms_fmt *f, const struct ms_waiter *w)
{
	char line[128];
	struct ms_fmt hf;
	ms_fmt_init(&hf, line, sizeof line, -1);
	if (held_for_read(w)) {
		/* held for read, by it and maybe others; or a writer that
		 * waits keeps this reader out */
		uint32_t readers = ms_waitfor_readers(w->rec, w->tid);
		int itself = w->owner == w->tid; /* it reads what it waits to write */
		uint32_t gone_tid = 0;
		uintptr_t gone_at = 0;
		uint32_t gone = w->owner_ts ? 0 : ms_waitfor_exited_readers(w->rec, &gone_tid,
									    &gone_at);
		if (gone && gone_tid == w->owner) {
			/* a reader that exited, or a fork parent's thread:
			 * readers are the others */
			if (ms_fork_orphan_held_by(w->rec, w->owner))
				ms_fmt(&hf, "    held for read by thread %u of the parent", w->owner);
			else
				ms_fmt(&hf, "    held for read by thread %u (exited)", w->owner);
			readers += gone - 1;
		} else if (!readers && !itself) {
			ms_fmt(f, "    behind thread %u, which waits to write it\n", w->owner);
			return;
		} else {
			/* readers counts the others but not the waiter */
			readers -= !itself;
			ms_fmt(&hf, "    held for read by thread %u%s", w->owner,
			       itself ? " itself" : "");
			gone_at = w->taken_at;
		}
		if (readers)
			ms_fmt(&hf, " and %u other %s", readers, readers == 1 ? "reader" : "readers");
		print_head_taken_at(f, &hf, gone_at, w->rec);
		return;
	}
	/* a holder whose held set is not here (a fork parent's thread): its
	 * lock's history says where, as "Mutexes still locked" does */
	uintptr_t at = w->taken_at ? w->taken_at : ms_table_last_taken_at(w->rec);
	ms_fmt(&hf, "    held by thread %u", w->owner);
	print_head_taken_at(f, &hf, at, w->rec);
}

/* Waits of one hop each behind the same holder, for the same lock, told
 * as one chain: fifty threads behind one sleeping holder were fifty WAIT
 * CHAINs, each with the holder's stack (568 lines).  The first wait is
 * told in full, the others a line each (the first GROUP_SHOWN), then the
 * holder once.  Only consecutive chains are grouped (the graph's order:
 * the waits behind one holder come together). */
#define GROUP_SHOWN 10
static struct {
	int n;                        /* waits in the group, 0: none */
	int first;                    /* the first's index in the snapshot */
	int more[GROUP_SHOWN];        /* the next ones' */
	struct ms_waitfor_finding fd; /* the first's finding */
} group;

static void print_finding(const struct ms_waiter *w, const struct ms_waitfor_finding *fd,
			  void *arg);

static int groupable(const struct ms_waitfor_finding *fd)
{
	return fd->kind == MS_WF_CHAIN && fd->nwaits == 1 && fd->end && fd->into < 0 &&
	       !fd->cond;
}

/* The others of the group, after its first wait. */
static void print_group_rest(struct ms_fmt *f, const struct ms_waiter *w, uint64_t now)
{
	const struct ms_waiter *first = &w[group.first];
	for (int i = 0; i < group.n - 1 && i < GROUP_SHOWN; i++) {
		const struct ms_waiter *x = &w[group.more[i]];
		char tn[16], d[16], where[256];
		ms_fmt(f, "  thread %u \"%s\" waits for it too, for %s", x->tid,
		       ms_thread_name(x->tid, tn),
		       ms_duration(d, ms_ticks_to_ns(now > x->since ? now - x->since : 0)));
		if (x->caller != first->caller)
			ms_fmt(f, ", at %s", ms_symbol_fit((char *)ms_symbolize(x->caller, where,
										   sizeof where),
							       60));
		ms_fmt(f, "\n");
	}
	if (group.n - 1 > GROUP_SHOWN)
		ms_fmt(f, "  and %d more threads wait for it\n", group.n - 1 - GROUP_SHOWN);
}

static void group_flush(const struct ms_waiter *w, struct ms_fmt *f)
{
	if (!group.n)
		return;
	group.fd.waits = &group.first; /* the finding's list is gone since */
	print_finding(w, &group.fd, f);
	group.n = 0;
}

/* Cycles of one wait the SELF-DEADLOCK below says, and chains into a
 * condition wait a STALL says (findings.h): not printed. */
static int selfs_said;

/* The condition waits the DEADLOCKs printed end at (their thread and
 * start), which the long condition waits' list, "no finding", leaves
 * out; past the first COND_SAID, listed there too. */
#define COND_SAID 256
struct cond_said {
	uint32_t tid;
	uint64_t since;
};
static struct cond_said cond_said[COND_SAID];
static int ncond_said;

static void cond_said_add(uint32_t tid, uint64_t since)
{
	if (ncond_said < COND_SAID)
		cond_said[ncond_said++] = (struct cond_said){ tid, since };
}

int ms_waitfor_print_said_cond(uint32_t tid, uint64_t since)
{
	for (int i = 0; i < ncond_said; i++)
		if (cond_said[i].tid == tid && cond_said[i].since == since)
			return 1;
	return 0;
}

/* One finding of the wait-for graph, as the text report says it. */
static void print_finding(const struct ms_waiter *w, const struct ms_waitfor_finding *fd,
			  void *arg)
{
	struct ms_fmt *f = arg;
	if ((fd->kind == MS_WF_CYCLE && ms_waitfor_self_said(w, fd->first)) ||
	    (fd->kind == MS_WF_COND && ms_findings_stall_has_cond_wait(w[fd->last].owner))) {
		selfs_said++; /* a finding that says it: not counted twice */
		return;
	}
	int flushing = fd == &group.fd; /* a group's first: its rest follows */
	if (!flushing && groupable(fd)) {
		const struct ms_waiter *k = &w[fd->waits[0]];
		if (group.n && group.fd.end == fd->end && w[group.first].rec == k->rec) {
			if (group.n - 1 < GROUP_SHOWN)
				group.more[group.n - 1] = fd->waits[0];
			group.n++;
			return;
		}
		group_flush(w, f);
		group.n = 1;
		group.first = fd->waits[0];
		group.fd = *fd;
		return;
	}
	if (!flushing)
		group_flush(w, f);
	uint64_t now = fd->now;
	const struct ms_waiter *last = &w[fd->last];
	if (fd->kind == MS_WF_CYCLE) {
		/* a wait with a deadline ends the cycle when it gives up */
		const char *until = fd->timed ? "until a timed lock gives up" : "forever";
		if (fd->len == 1) { /* say, a mutex this thread locked before a fork */
			uint32_t flags = LOAD(&ms_rec(w[fd->first].rec)->flags);
			const char *noun = ms_lock_noun(flags);
			ms_fmt(f, "\nDEADLOCK: thread %u waits for %s %s it holds itself, %s\n",
			       w[fd->first].tid, ms_lock_class(flags) == MS_CLASS_RWLOCK ? "an" : "a",
			       noun, until);
		} else
			ms_fmt(f, "\nDEADLOCK: %d threads wait for each other, %s\n", fd->len,
			       until);
		for (int i = 0; i < fd->nwaits; i++) {
			print_wait(f, &w[fd->waits[i]], now);
			print_taken(f, &w[fd->waits[i]]);
		}
		return;
	}
	switch (fd->kind) {
	case MS_WF_COND:
		cond_said_add(last->owner, last->cond_since);
		/* if a waiter in the chain is the one to signal it, nobody will */
		ms_fmt(f, "\nDEADLOCK: thread %u waits for a condition while holding a "
			  "mutex other threads wait for\n", last->owner);
		ms_fmt(f, "  (unless a thread outside this chain signals it)\n");
		break;
	case MS_WF_EXITED:
		if (held_for_read(last))
			ms_fmt(f, "\nDEADLOCK: thread %u waits for an rwlock whose reader, "
				  "thread %u, has exited: nobody can unlock it\n",
			       last->tid, last->owner);
		else
			ms_fmt(f, "\nDEADLOCK: thread %u waits for a mutex whose owner, thread "
				  "%u, has exited: nobody can unlock it\n", last->tid, last->owner);
		break;
	case MS_WF_PARENT:
		ms_fmt(f, "\nDEADLOCK: thread %u waits for %s that thread %u of the "
			  "parent process held at the fork: nobody here can unlock it\n",
		       last->tid, held_for_read(last) ? "an rwlock" : "a mutex", last->owner);
		break;
	case MS_WF_GONE:
		ms_fmt(f, "\nDEADLOCK: thread %u waits for a process-shared mutex whose "
			  "owner, thread %u of another process, has exited\n",
		       last->tid, last->foreign);
		break;
	default:
		ms_fmt(f, "\nWAIT CHAIN:\n");
	}
	for (int i = 0; i < fd->nwaits; i++) {
		print_wait(f, &w[fd->waits[i]], now);
		if (w[fd->waits[i]].owner)
			print_taken(f, &w[fd->waits[i]]);
	}
	if (flushing)
		print_group_rest(f, w, now);
	if (ms_waitfor_self_said(w, fd->into))
		ms_fmt(f, "  thread %u waits for a lock it holds itself: the SELF-DEADLOCK below\n",
		       w[fd->into].tid);
	else if (fd->into >= 0)
		ms_fmt(f, "  thread %u waits in the DEADLOCK above\n", w[fd->into].tid);
	else if (fd->cond) {
		char d[16], where[256];
		uint64_t since = last->cond_since;
		ms_fmt(f, "  thread %u waits for a condition (mutex %p) for %s%s\n", last->owner,
		       (void *)fd->cond,
		       ms_duration(d, ms_ticks_to_ns(now > since ? now - since : 0)),
		       last->cond_timed ? ", until a deadline" : "");
		ms_fmt(f, "    waits at      %s\n",
		       ms_symbolize(last->cond_caller, where, sizeof where));
	} else if (fd->end) {
		int nf = where_now_once(fd->end);
		const char *why = ms_where_now_not_asked(nf);
		char head[120];
		struct ms_fmt hf;
		ms_fmt_init(&hf, head, sizeof head, -1);
		if (nf > 0 && fd->end->now_in_call)
			/* in one of our calls now (a lock, a join), where the
			 * graph, read a moment before, said no mutex wait */
			ms_fmt(&hf, "  thread %u was not waiting for a mutex when this was read; ",
			       last->owner);
		else
			ms_fmt(&hf, "  thread %u is not waiting for a mutex; ", last->owner);
		ms_fmt(f, "%s", ms_fmt_str(&hf));
		if (nf > 0) {
			ms_fmt(f, "it is now at");
			print_frames(f, fd->end->now_frames, nf, strlen(head) + 12, 2 + 46);
		} else if (nf == -5 || nf == -6 || nf == -9) /* asked: it answered with no stack */
			ms_fmt(f, "where it is now: not known (%s)\n", why);
		else if (why)
			ms_fmt(f, "where it is now: not asked (%s)\n", why);
		else
			ms_fmt(f, "where it is now: %s\n",
			       nf ? "unknown (no call stacks)" : "it did not answer");
	} else
		print_far_owner(f, last, fd->far);
}

int ms_waitfor_print(struct ms_fmt *f)
{
	static struct ms_waiter w[MS_WAITERS_MAX]; /* under the report lock */
	static int order[MS_WAITERS_MAX];
	uint64_t now;
	ncond_said = 0;
	int n = ms_waitfor_snapshot(w, &now);
	if (!n)
		return 0;
	nasked = 0;
	group.n = 0;
	selfs_said = 0;
	int deadlocks = ms_waitfor_each_finding(w, n, now, order, print_finding, f);
	group_flush(w, f);
	return deadlocks - selfs_said;
}
