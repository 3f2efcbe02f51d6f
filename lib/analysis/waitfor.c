/* waitfor.c - the wait-for graph: which threads wait for which mutexes
 * held by whom, read from the threads' records; see waitfor.h. */
#define _GNU_SOURCE
#include "analysis/waitfor.h"
#include "base/fds.h"
#include "analysis/findings.h"
#include "base/clock.h"
#include "base/fmt.h"
#include "base/internal.h"
#include "base/maps.h"
#include "core/cond_signals.h"
#include "core/forked.h"
#include "core/table.h"
#include "core/thread.h"
#include "core/thread_pool.h"
#include "glibc/real_rw.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

/* ---- the wait-for graph ---------------------------------------------- */


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
	struct ms_waiter *w;
	int n;
};

/* The process a thread id belongs to (its Tgid), 0 if no such thread (or
 * it has exited and waits to be reaped). */
int ms_waitfor_process_of(uint32_t tid)
{
	char path[64], buf[512];
	struct ms_fmt f;
	ms_fmt_init(&f, path, sizeof path, -1);
	ms_fmt(&f, "/proc/%u/status", tid);
	int saved = errno, pid = 0;
	int fd = open(ms_fmt_str(&f), O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, buf, sizeof buf - 1);
		ms_fd_close(fd);
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

/* The lock's n bytes at key into out: 1 if read. */
static int read_lock(void *out, size_t n, uintptr_t key)
{
	struct iovec local = { out, n }, remote = { (void *)key, n };
	int saved = errno;
	ssize_t got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	errno = saved;
	return got == (ssize_t)n;
}

/* A process-shared mutex that no thread of ours holds may be held in
 * another process: glibc's owner field names that thread (a process-shared
 * rwlock's writer field, its writer).  The lock's memory is read with
 * process_vm_readv, which fails instead of faulting if the program has
 * unmapped it meanwhile. */
static uint32_t foreign_owner(uint32_t r, uintptr_t key)
{
	uint32_t flags = LOAD(&ms_rec(r)->flags);
	uint32_t kind = (flags & ~MS_F_CLASS) >> MS_F_KIND_SHIFT;
	unsigned lock_class = ms_lock_class(flags);
	if (lock_class == MS_CLASS_SPIN || !(kind & MS_KIND_PSHARED) ||
	    (lock_class == MS_CLASS_MUTEX && (kind & MS_KIND_DESTROYED) == MS_KIND_DESTROYED))
		return 0;
	int holder;
	if (lock_class == MS_CLASS_RWLOCK) {
		/* a process-shared rwlock's writer, whose thread id glibc
		 * keeps (its readers' it does not) */
		pthread_rwlock_t l = { 0 };
		if (!read_lock(&l, sizeof l, key))
			return 0;
		holder = l.__data.__cur_writer;
	} else {
		pthread_mutex_t m = { 0 };
		if (!read_lock(&m, sizeof m, key))
			return 0;
		holder = mutex_holder(&m);
	}
	if (holder <= 0 || holder >= MS_OWNER_NOTRECOVERABLE)
		return 0;
	return ms_waitfor_process_of((uint32_t)holder) == getpid() ? 0 : (uint32_t)holder;
}

/* glibc's count of the readers of the rwlock at key (each read hold, a
 * thread's second read too), 0 if its memory cannot be read, or in a
 * write phase, whose readers wait (glibc/real_rw.h). */
static uint32_t glibc_readers(uintptr_t key)
{
	pthread_rwlock_t l = { 0 };
	if (!read_lock(&l, sizeof l, key))
		return 0;
	return ms_rw_word_holding(l.__data.__readers);
}

/* The readers of record r's rwlock that exited holding it (the cold part
 * keeps how many, and the last: thread_pool.c), as many as glibc still
 * counts beyond the `seen` read holds of threads here -- another
 * thread's unlock (a MISUSE) may have ended theirs since, and a lock
 * made anew at the address counts none of them.  *tid: the last one. */
static uint32_t exited_readers(uint32_t r, uint32_t seen, uint32_t *tid)
{
	if (!(__atomic_load_n(&ms_rec(r)->flags, __ATOMIC_ACQUIRE) & MS_F_COLD))
		return 0; /* reading must not make the cold part */
	const struct ms_cold *c = &ms_table.cold[r];
	uint32_t n = __atomic_load_n(&c->exited_reads, __ATOMIC_ACQUIRE);
	uintptr_t key = ms_rec_key(r);
	uint32_t counted = n && key ? glibc_readers(key) : 0;
	if (counted <= seen)
		return 0;
	*tid = LOAD(&c->exited_reader);
	return n < counted - seen ? n : counted - seen;
}

/* A read-write lock's holders, seen from a thread that waits for it. */
struct readers {
	uint32_t r, waiter;
	int want_read;     /* the waiter's mode */
	uint32_t self;     /* the waiter, waiting to write, holds it for read */
	uint32_t waiting;  /* a reader that waits itself, 0 none */
	uint32_t any;      /* a reader, 0 none */
	uint32_t writer;   /* a thread that waits to write it, 0 none */
	uint32_t n;        /* readers */
	uint32_t holds;    /* their read holds, and the waiter's */
};

static void reader_of(struct ms_tstate *ts, void *arg)
{
	struct readers *q = arg;
	uint32_t tid = LOAD(&ts->tid);
	uint32_t n = LOAD(&ts->nheld), reads = 0;
	n = n < MS_HELD_MAX ? n : MS_HELD_MAX;
	for (uint32_t h = 0; h < n; h++)
		reads += LOAD(&ts->held[h].rec) == q->r &&
			 ms_held_read_live(q->r, LOAD(&ts->held[h].mode));
	q->holds += reads;
	if (tid == q->waiter) {
		/* a write lock taken by a reader of it waits for itself */
		if (reads && !q->want_read)
			q->self = tid;
		return;
	}
	if (reads) {
		q->n++;
		q->any = tid;
		if (__atomic_load_n(&ts->wait_rec, __ATOMIC_ACQUIRE))
			q->waiting = tid;
		return;
	}
	if (__atomic_load_n(&ts->wait_rec, __ATOMIC_ACQUIRE) == q->r && !LOAD(&ts->wait_read))
		q->writer = tid;
}

/* The thread thread `waiter` waits for, of those that hold record r's
 * lock now; 0 if none.  A mutex, write or spin lock has one holder.  A
 * read-write lock held for read has several, and the waiter waits until
 * all have let go -- a deadlock if any of them never does: so a reader
 * that waits itself is the one its chain goes on to (a cycle through it
 * is a deadlock whatever the others do), else a reader that has exited
 * (nobody can let its read go), else any reader.  A reader
 * (want_read) of a writer-preferring lock, held back with no writer in,
 * waits for the writer that waits; no other waiter waits for a waiter.
 * (With no holder seen -- a writer between glibc's lock and its record,
 * or preempted there -- a writer that waits would otherwise have named
 * another waiting writer, and two of them a false DEADLOCK.) */
static uint32_t holder_for(uint32_t r, uint32_t waiter, int want_read)
{
	uint32_t owner = LOAD(&ms_rec(r)->owner);
	if (owner & MS_HELD)
		return owner & ~MS_HELD;
	uint32_t flags = LOAD(&ms_rec(r)->flags);
	if (ms_lock_class(flags) != MS_CLASS_RWLOCK)
		return 0;
	struct readers q = { .r = r, .waiter = waiter, .want_read = want_read };
	ms_threads_each(reader_of, &q);
	if (q.self) /* glibc's wrlock never returns: a cycle of one */
		return q.self;
	if (q.waiting)
		return q.waiting;
	uint32_t gone = 0;
	if (!want_read && exited_readers(r, q.holds, &gone))
		return gone;
	if (q.any)
		return q.any;
	return want_read && ms_rwlock_writer_first(flags) ? q.writer : 0;
}

/* The readers of record r's read-write lock now, less thread `waiter`. */
uint32_t ms_waitfor_readers(uint32_t r, uint32_t waiter)
{
	struct readers q = { .r = r, .waiter = waiter };
	ms_threads_each(reader_of, &q);
	return q.n;
}

uint32_t ms_waitfor_exited_readers(uint32_t r, uint32_t *tid, uintptr_t *taken_at)
{
	if (!(__atomic_load_n(&ms_rec(r)->flags, __ATOMIC_ACQUIRE) & MS_F_COLD) ||
	    !__atomic_load_n(&ms_table.cold[r].exited_reads, __ATOMIC_ACQUIRE))
		return 0; /* (most locks: no walk of the threads) */
	struct readers q = { .r = r };
	ms_threads_each(reader_of, &q);
	uint32_t n = exited_readers(r, q.holds, tid);
	if (n && taken_at)
		*taken_at = LOAD(&ms_table.cold[r].exited_read_at);
	return n;
}

/* glibc's readers of record r's rwlock (at key) for a thread that waits
 * to write it, found held by no thread here (holder_for): readers of
 * another process (a process-shared rwlock, whose readers glibc does not
 * name), taken before the library started or past it.  0 for other
 * locks. */
static uint32_t unseen_readers(uint32_t r, uintptr_t key, int want_read)
{
	if (want_read || ms_lock_class(LOAD(&ms_rec(r)->flags)) != MS_CLASS_RWLOCK)
		return 0;
	return glibc_readers(key);
}

/* The thread that holds record r's mutex now, 0 if none. */
static uint32_t holder_now(uint32_t r)
{
	return holder_for(r, 0, 0);
}


/* Whether thread tid, in a condition wait on the mutex at key, is blocked
 * taking the mutex back: glibc's retake sleeps in futex on the mutex's
 * lock word (its first), the wait itself on the condition's words. */
static int retaking(uint32_t tid, uintptr_t key)
{
	uint64_t at;
	return ms_task_syscall(tid, &at) == SYS_futex && at == key;
}

int ms_waitfor_retaking(uint32_t tid, uintptr_t key)
{
	return retaking(tid, key);
}

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
static int wait_same(const struct ms_waiter *w)
{
	if (w->retake)
		return LOAD(&w->ts->cond_key) == w->key &&
		       LOAD(&w->ts->cond_since) == w->since && retaking(w->tid, w->key);
	return __atomic_load_n(&w->ts->wait_rec, __ATOMIC_ACQUIRE) == w->rec &&
	       LOAD(&w->ts->wait_since) == w->since;
}

int ms_cond_wait_read(struct ms_tstate *ts, uint64_t now, struct ms_cond_seen *out)
{
	out->mutex = __atomic_load_n(&ts->cond_key, __ATOMIC_ACQUIRE);
	out->since = LOAD(&ts->cond_since);
	out->cond = LOAD(&ts->cond_cond);
	out->timed = LOAD(&ts->cond_timed) != 0;
	out->caller = LOAD(&ts->cond_caller);
	return out->mutex && out->since <= now &&
	       __atomic_load_n(&ts->cond_key, __ATOMIC_ACQUIRE) == out->mutex &&
	       LOAD(&ts->cond_since) == out->since;
}

/* w's owner is still in the condition wait that was read. */
static int cond_same(const struct ms_waiter *w)
{
	return LOAD(&w->owner_ts->cond_key) == w->cond_key &&
	       LOAD(&w->owner_ts->cond_since) == w->cond_since;
}

/* Thread ts (tid), in a condition wait on the mutex at key since `since`,
 * called at caller: into x its wait for that mutex if it is blocked
 * taking it back and another thread holds it (here or in another
 * process) -- a wait for a mutex like any other; 1 if so.  The holder is
 * read first: /proc is read only for a mutex held by another thread. */
static int retake_of(struct ms_tstate *ts, uint32_t tid, uintptr_t key, uint64_t since,
		     uintptr_t caller, struct ms_waiter *x)
{
	uint32_t r = ms_table_find(key);
	if (r == MS_REC_NONE || r == MS_REC_UNTRACKED)
		return 0;
	uint32_t owner = holder_now(r), foreign = owner ? 0 : foreign_owner(r, key);
	if ((!owner && !foreign) || owner == tid || !retaking(tid, key))
		return 0; /* free (it gets it), or its own: no wait */
	*x = (struct ms_waiter){
		.ts = ts, .tid = tid, .rec = r, .key = key, .caller = caller, .since = since,
		.owner = owner, .foreign = foreign, .next = -1, .retake = 1,
	};
	return 1;
}

/* A thread in a condition wait, blocked taking its mutex back, is a
 * waiter whether or not anyone waits for it: a dump shows its wait (a
 * WAIT CHAIN to the holder), as doc/model.md says. */
static void collect_retake(struct ms_tstate *ts, struct collect *c)
{
	uintptr_t key = __atomic_load_n(&ts->cond_key, __ATOMIC_ACQUIRE);
	if (!key)
		return;
	uint64_t since = LOAD(&ts->cond_since);
	if (retake_of(ts, LOAD(&ts->tid), key, since, LOAD(&ts->cond_caller), &c->w[c->n]))
		c->n++;
}

int ms_waitfor_retake_blocked(struct ms_tstate *ts)
{
	uintptr_t key = __atomic_load_n(&ts->cond_key, __ATOMIC_ACQUIRE);
	struct ms_waiter unused;
	return key && retake_of(ts, LOAD(&ts->tid), key, 0, 0, &unused);
}

int ms_waitfor_left_wait(uint32_t tid)
{
	uint64_t at;
	long call = ms_task_syscall(tid, &at);
	return call >= 0 && call != SYS_futex && call != SYS_restart_syscall;
}

static void collect_waiter(struct ms_tstate *ts, void *arg)
{
	struct collect *c = arg;
	uint32_t r = __atomic_load_n(&ts->wait_rec, __ATOMIC_ACQUIRE);
	if (c->n >= MS_WAITERS_MAX)
		return;
	if (!r) {
		collect_retake(ts, c);
		return;
	}
	if (ms_waitfor_left_wait(LOAD(&ts->tid)))
		return;
	struct ms_waiter *w = &c->w[c->n++];
	w->ts = ts;
	w->tid = LOAD(&ts->tid);
	w->rec = r;
	w->key = LOAD(&ts->wait_key);
	w->caller = LOAD(&ts->wait_caller);
	w->stack = LOAD(&ts->wait_stack);
	w->since = LOAD(&ts->wait_since);
	w->timed = (int)LOAD(&ts->wait_timed);
	w->read = (int)LOAD(&ts->wait_read);
	w->owner = holder_for(r, w->tid, w->read);
	w->foreign = w->owner ? 0 : foreign_owner(r, w->key);
	w->unseen = w->owner || w->foreign ? 0 : unseen_readers(r, w->key, w->read);
	w->owner_ts = NULL;
	w->taken_at = 0;
	w->cond_key = 0;
	w->cond_cond = 0;
	w->next = -1;
	w->retake = 0;
}

/* Waiter i's owner o is in a condition wait: if it is blocked taking that
 * wait's mutex back, and another thread holds the mutex, that is a wait
 * for a mutex like any other (a cycle through it is a DEADLOCK, not a
 * chain ending at a condition wait).  Collected as a waiter already if it
 * was blocked so then (collect_retake); else it joins the graph now. */
static void add_retake(struct collect *c, int i, struct ms_tstate *o)
{
	struct ms_waiter *w = c->w;
	for (int j = 0; j < c->n; j++)
		if (w[j].ts == o) { /* a waiter already: the same for w[i] */
			if (w[j].retake)
				w[i].cond_key = 0;
			return;
		}
	if (c->n < MS_WAITERS_MAX && retake_of(o, w[i].owner, w[i].cond_key, w[i].cond_since,
					       w[i].cond_caller, &w[c->n])) {
		c->n++;
		w[i].cond_key = 0; /* not waiting for the condition now */
	}
}

/* The end of the chain of waits from w[i] (the last waiter in it), -1 on
 * a cycle. */
static int chain_end(const struct ms_waiter *w, int n, int i)
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

/* What the mutex known by key went through so far: its acquisitions, of
 * them those after a wait, and the threads waiting for it now (0 if it
 * has no record; the last two 0 if no thread ever waited for it). */
struct mutex_use {
	uint64_t taken, contended;
	uint32_t wanted;
};

static struct mutex_use mutex_use(uintptr_t key)
{
	struct mutex_use u = { 0, 0, 0 };
	uint32_t r = ms_table_find(key);
	if (r == MS_REC_NONE || r == MS_REC_UNTRACKED)
		return u;
	u.taken = ms_rec_acquisitions(r);
	/* the cold part is read only if made: reading must not make it */
	if (__atomic_load_n(&ms_rec(r)->flags, __ATOMIC_ACQUIRE) & MS_F_COLD) {
		const struct ms_cold *c = &ms_table.cold[r];
		u.contended = LOAD(&c->contended);
		u.wanted = (uint32_t)LOAD(&c->waiting);
	}
	return u;
}

/* Whether a condition wait's mutex was in demand between two looks:
 * taken meanwhile, and wanted -- a thread waited for it, at either look
 * or in between.  Producers that go without signalling because they wait
 * for the mutex the consumers keep taking are a pool at work.  A mutex
 * only taken -- the timed-out retakes of a thread polling another
 * condition with it, a thread that locks it to read a number -- says
 * nothing of whether the condition will be signalled: the chain stays a
 * DEADLOCK. */
static int in_demand(const struct ms_waiter *w, struct mutex_use now)
{
	return now.taken != w->cond_taken &&
	       (now.contended != w->cond_contended || w->cond_wanted || now.wanted);
}

/* Chains that end at a thread in a condition wait: look again after
 * COND_LASTS_MS, and mark stuck those whose every wait, owner and
 * condition wait are still the same ones (a wait's start time names it),
 * with the condition wait's thread still asleep in it, its condition not
 * signalled and its mutex not in demand meanwhile.  (A 1 ms timed wait whose
 * thread a loaded machine left without a CPU for 100 ms after its
 * deadline read as stuck: a DEADLOCK that was not.  So did a worker of a
 * busy pool, asleep in its wait for work for 100 ms while the producers'
 * signals woke the others, holding a mutex of its own that a thread
 * waited for.  The producers may themselves go 100 ms without a signal,
 * waiting for the condition's mutex, busy with the consumers: a mutex
 * taken and waited for meanwhile says the state the condition stands for
 * is changing, in_demand().) */
static void confirm_stuck(struct ms_waiter *w, int n)
{
	int candidates = 0;
	for (int i = 0; i < n; i++) {
		w[i].lasted = w[i].stuck = 0;
		/* a condition wait with a deadline ends by itself: the
		 * chain is no DEADLOCK, as one through a timed lock */
		int ends = w[i].next < 0 && w[i].owner_ts && w[i].cond_key && !w[i].cond_timed;
		if (ends) {
			struct mutex_use u = mutex_use(w[i].cond_key);
			w[i].cond_signals = ms_cond_signals(w[i].cond_cond);
			w[i].cond_taken = u.taken;
			w[i].cond_contended = u.contended;
			w[i].cond_wanted = u.wanted;
		}
		candidates |= ends;
	}
	if (!candidates)
		return;
	struct timespec pause = { 0, COND_LASTS_MS * 1000000L };
	while (nanosleep(&pause, &pause) != 0 && errno == EINTR)
		;
	for (int i = 0; i < n; i++)
		w[i].lasted = holder_for(w[i].rec, w[i].tid, w[i].read) == w[i].owner;
	for (int i = 0; i < n; i++) {
		w[i].lasted &= wait_same(&w[i]);
		if (w[i].next < 0 && w[i].owner_ts && w[i].cond_key)
			/* (blocked taking its mutex back -- woken, and the
			 * mutex held by a thread outside the chain -- it
			 * waits for that mutex, not for the condition; one
			 * with a deadline ends by itself) */
			w[i].lasted &= !w[i].cond_timed && cond_same(&w[i]) && !runnable(w[i].owner) &&
				       !retaking(w[i].owner, w[i].cond_key) &&
				       ms_cond_signals(w[i].cond_cond) == w[i].cond_signals &&
				       !in_demand(&w[i], mutex_use(w[i].cond_key));
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

/* The wait-for graph as it was at one moment, into w (MS_WAITERS_MAX);
 * returns the number of waits, each linked to its owner's wait (next).
 *
 * Threads go on while their records are read, so it is read in three
 * rounds: every wait and its mutex's owner (and the owner's condition
 * wait), every owner again, every wait again.  A wait (or condition wait)
 * the same in the first round and the last, its start too, lasted through
 * the second, so the owners read then held at once; one that ended or
 * changed hands is left out.  *moment is the second round's time, which
 * waits are measured to, not the time after confirm_stuck's pause -- or,
 * in a report, the report's moment, that of all its formats.  See
 * doc/model.md, "One moment's graph". */
int ms_waitfor_snapshot(struct ms_waiter *w, uint64_t *moment)
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
		/* (read after its start: a wait begun since has another,
		 * and cond_same then finds it is not the same) */
		w[i].cond_cond = LOAD(&o->cond_cond);
		w[i].cond_timed = LOAD(&o->cond_timed) != 0;
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
		w[i].changed = holder_for(w[i].rec, w[i].tid, w[i].read) != w[i].owner;
		/* (readers unseen that left: the writer gets it) */
		w[i].changed |= w[i].unseen && !unseen_readers(w[i].rec, w[i].key, w[i].read);
		if (at)
			w[i].taken_at = at;
	}
	/* within a report, its moment (clock.h): each format of a dump reads
	 * the graph anew, and waits are counted to the one moment of the
	 * report's "ran" in all of them */
	*moment = ms_clock_now_ticks();
	/* a wait begun after that moment is not in the graph of that moment
	 * (a report's later format would say it began after the run it
	 * reports on): left out, as one that ended */
	for (int i = 0; i < c.n; i++)
		w[i].changed |= !wait_same(&w[i]) || w[i].since > *moment;
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

static enum ms_far far_owner(const struct ms_waiter *w)
{
	if (w->foreign) {
		int pid = ms_waitfor_process_of(w->foreign);
		if (!pid)
			return FAR_GONE;
		return maps_same(pid, w->key) ? FAR_OTHER : FAR_UNSEEN;
	}
	if (!w->owner && w->unseen)
		return FAR_READERS;
	if (!w->owner || find_thread(w->owner))
		return FAR_HERE;
	if (ms_fork_orphan_held_by(w->rec, w->owner))
		return FAR_PARENT;
	return FAR_EXITED;
}

/* Whether the cycle through waiter i has a wait with a deadline in it:
 * then it ends when that wait gives up. */
static int cycle_timed(const struct ms_waiter *w, int n, int i)
{
	int timed = 0, steps = 0, k = i;
	do {
		timed |= w[k].timed;
		k = w[k].next;
	} while (k != i && k >= 0 && ++steps <= n);
	return timed;
}

int ms_waitfor_each_finding(struct ms_waiter *w, int n, uint64_t moment, int *order,
			    ms_waitfor_finding_fn *fn, void *arg)
{
	int deadlocks = 0;
	for (int i = 0; i < n; i++)
		w[i].done = 0;
	/* cycles: follow next from each waiter; a cycle starts at its
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
		struct ms_waitfor_finding f = { .kind = MS_WF_CYCLE, .first = i, .into = -1,
						.far = FAR_HERE, .now = moment };
		for (int k = i;; k = w[k].next) {
			f.len++;
			w[k].done = 2; /* on a cycle: chains into it stop there */
			if (w[k].tid < w[f.first].tid)
				f.first = k;
			if (w[k].next == i)
				break;
		}
		f.timed = cycle_timed(w, n, i);
		f.waits = order;
		for (int k = f.first; f.nwaits < f.len; k = w[k].next)
			order[f.nwaits++] = k;
		fn(w, &f, arg);
		deadlocks++;
	}
	/* the other waits: chains from a waiter nobody waits for, ending at
	 * a thread not waiting for a mutex, in a condition wait, or at a
	 * holder that is not here (exited, a thread of the parent, of
	 * another process), or at readers not seen (a WAIT CHAIN: they may
	 * let go), or running into a cycle */
	for (int i = 0; i < n; i++) {
		if (w[i].done || (!w[i].owner && !w[i].foreign && !w[i].unseen))
			continue;
		int waited_on = 0;
		for (int j = 0; j < n; j++)
			waited_on |= w[j].next == i;
		if (waited_on)
			continue;
		struct ms_waitfor_finding f = { .kind = MS_WF_CHAIN, .first = i, .last = i,
						.into = -1, .now = moment };
		for (int k = i, steps = 0; k >= 0 && steps <= n; k = w[k].next, steps++) {
			if (w[k].done == 2) {
				f.into = k;
				break;
			}
			f.last = k;
		}
		f.end = f.into < 0 ? w[f.last].owner_ts : NULL;
		f.cond = f.end ? w[f.last].cond_key : 0;
		f.far = f.end || f.into >= 0 ? FAR_HERE : far_owner(&w[f.last]);
		/* a chain ending at a condition wait that did not last (the
		 * condition came, or the mutex moved on: COND_LASTS_MS) is a
		 * WAIT CHAIN */
		if (f.cond && w[i].stuck)
			f.kind = MS_WF_COND;
		else if (f.far == FAR_EXITED)
			f.kind = MS_WF_EXITED;
		else if (f.far == FAR_PARENT)
			f.kind = MS_WF_PARENT;
		else if (f.far == FAR_GONE)
			f.kind = MS_WF_GONE;
		f.waits = order;
		for (int k = i; k >= 0 && k != f.into && f.nwaits < n; k = w[k].next) {
			w[k].done = 1;
			order[f.nwaits++] = k;
		}
		fn(w, &f, arg);
		deadlocks += f.kind != MS_WF_CHAIN;
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
static int certain_all_self; /* of the last count (dump thread) */

int ms_waitfor_certain_deadlocks(void)
{
	size_t bytes = MS_WAITERS_MAX * sizeof(struct ms_waiter);
	struct ms_waiter *w = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (w == MAP_FAILED)
		return 0;
	uint64_t moment;
	int n = ms_waitfor_snapshot(w, &moment), certain = 0, self = 0;
	for (int i = 0; i < n; i++) {
		int last = chain_end(w, n, i);
		if (last < 0) { /* on a cycle: one without a deadline */
			int sure = !cycle_timed(w, n, i);
			certain += sure;
			self += sure && w[i].owner == w[i].tid;
		} else if (!w[last].owner_ts && (w[last].owner || w[last].foreign)) {
			enum ms_far far = far_owner(&w[last]);
			certain += far == FAR_EXITED || far == FAR_PARENT || far == FAR_GONE;
		}
	}
	munmap(w, bytes);
	certain_all_self = certain && self == certain;
	return certain;
}

int ms_waitfor_certain_all_self(void)
{
	return certain_all_self;
}

static void count_waiting(struct ms_tstate *ts, void *arg)
{
	if (__atomic_load_n(&ts->wait_rec, __ATOMIC_ACQUIRE))
		(*(int *)arg)++;
}

int ms_waitfor_waiting(void)
{
	int n = 0;
	ms_threads_each(count_waiting, &n);
	return n;
}

/* ---- the wait-for graph, for graph outputs --------------------------- */

int ms_waitfor_each(ms_waitfor_fn *fn, void *arg)
{
	/* Its own copy of the graph (not ms_waitfor_print's, which is under the
	 * text report's lock): this may run beside a text report. */
	size_t bytes = MS_WAITERS_MAX * sizeof(struct ms_waiter);
	struct ms_waiter *w = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (w == MAP_FAILED)
		return -1;
	uint64_t now;
	struct collect c = { w, ms_waitfor_snapshot(w, &now) };
	for (int i = 0; i < c.n; i++) {
		struct ms_waitfor_wait lw = {
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
				     ms_fork_orphan_held_by(w[i].rec, w[i].owner);
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

int ms_waitfor_self_said(const struct ms_waiter *w, int i)
{
	return i >= 0 && w[i].next == i && ms_findings_self_waits(w[i].tid, w[i].rec);
}
