/* thread_pool.c - the pool of thread records and their reclaiming at thread
 * exit; see thread_pool.h. */
#define _GNU_SOURCE
#include "core/thread_pool.h"
#include "base/fds.h"
#include "base/spin.h"
#include "base/fmt.h"
#include "base/internal.h"
#include "core/table.h"
#include "core/thread.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#define CHUNK 256

static int lock;
uint32_t ms_unlocks_elsewhere;
static struct ms_tstate *all;        /* every record handed out */
/* The newest chunk's records not handed out yet: taken one at a time, so
 * that a program of one thread touches one record's pages, not a page of
 * each of the chunk's 256 at every start (doc/benchmark.md). */
static struct ms_tstate *fresh;
static int fresh_left;
static struct ms_tstate *free_list;  /* records of exited threads */
/* Records made after their thread's exit handler had given its record
 * back (in_use LATE, linked by free_link): see late_record(). */
static struct ms_tstate *late_list;
#define LATE 2
static pthread_key_t exit_key;
static int have_key;
static void (*held_at_exit)(const struct ms_tstate *ts);
static uint64_t not_followed; /* ended; live ones are in the threads' records */

/* Asynchronous cancellation deferred meanwhile (thread.h).  0 if the
 * lock's holder is stopped (base/spin.h's leaf locks: a garbage
 * collector's stop-the-world parked a thread making its record here, and
 * the thread that stopped it waited for ever at its own first call). */
static int pool_lock(void)
{
	ms_async_defer(&ms_self);
	if (ms_spin_lock_leaf(&lock))
		return 1;
	ms_async_resume(&ms_self);
	return 0;
}

static void pool_unlock(void)
{
	ms_spin_unlock(&lock);
	ms_async_resume(&ms_self);
}

/* Under the pool's lock. */
static void late_unlink(struct ms_tstate *ts)
{
	for (struct ms_tstate **p = &late_list; *p; p = &(*p)->free_link)
		if (*p == ts) {
			*p = ts->free_link;
			return;
		}
}

/* Thread tid of this process has ended (its kernel task is gone; a thread
 * still running its destructors is not). */
static int thread_gone(pid_t pid, uint32_t tid)
{
	int saved = errno;
	int gone = syscall(SYS_tgkill, pid, (pid_t)tid, 0) != 0 && errno == ESRCH;
	errno = saved;
	return gone;
}

/* Late records.  glibc runs key destructors in rounds, ours first in each;
 * libunwind's waits for the last round, then locks a mutex of its own,
 * after ours gave the thread's record back.  A mutex call after our last
 * round makes a record no destructor of ours would give back, so it is
 * LATE, and is given back here once its thread is gone: by a thread that
 * makes its record (before it takes one, so the pool reuses it), or whose
 * tid it is (tids are unique among live threads).  Under the pool's lock;
 * the late ones are few.  See doc/model.md, "Threads". */
static void late_reclaim(uint32_t tid)
{
	pid_t pid = getpid();
	for (struct ms_tstate **p = &late_list; *p;) {
		struct ms_tstate *ts = *p;
		if (ts->tid != tid && !thread_gone(pid, ts->tid)) {
			p = &ts->free_link;
			continue;
		}
		*p = ts->free_link;
		STORE(&ts->in_use, 0);
		ts->free_link = free_list;
		free_list = ts;
	}
}

/* The names of the threads that exited last, by tid: a report made after
 * a thread ended named it all the same.  Before, a finding named its
 * threads still alive and not those gone ("thread 11241 took A" beside
 * "thread 11244 "two_inv" took B"), as /proc had them or not.  A slot is
 * written with its tid 0 and the tid last, and read only if its tid is
 * the same before and after. */
#define EXITED_NAMES 256
static struct {
	uint32_t tid;
	char name[16];
} exited_names[EXITED_NAMES];
static uint32_t exited_next;

static void name_kept(uint32_t tid)
{
	char name[16];
	ms_own_thread_name(name);
	uint32_t i = __atomic_fetch_add(&exited_next, 1, __ATOMIC_RELAXED) % EXITED_NAMES;
	__atomic_store_n(&exited_names[i].tid, 0, __ATOMIC_RELEASE);
	for (unsigned k = 0; k < 16; k++)
		__atomic_store_n(&exited_names[i].name[k], name[k], __ATOMIC_RELAXED);
	__atomic_store_n(&exited_names[i].tid, tid, __ATOMIC_RELEASE);
}

/* tid's name kept at its exit, the newest such; 0 if none. */
static int name_of_exited(uint32_t tid, char out[16])
{
	uint32_t next = __atomic_load_n(&exited_next, __ATOMIC_ACQUIRE);
	for (uint32_t k = 1; k <= EXITED_NAMES && k <= next; k++) {
		uint32_t i = (next - k) % EXITED_NAMES;
		if (__atomic_load_n(&exited_names[i].tid, __ATOMIC_ACQUIRE) != tid)
			continue;
		for (unsigned c = 0; c < 16; c++)
			out[c] = __atomic_load_n(&exited_names[i].name[c], __ATOMIC_RELAXED);
		out[15] = 0;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&exited_names[i].tid, __ATOMIC_RELAXED) == tid)
			return 1;
	}
	out[0] = 0;
	return 0;
}

/* This exiting thread has put its record's end off by a round. */
static __thread int exit_deferred __attribute__((tls_model("initial-exec")));

/* At thread exit (the key's destructor): say which mutexes it still held,
 * then give its record back.  glibc calls the destructors of keys in the
 * order the keys were made, ours (made at start-up) among the first, and
 * calls them again, up to PTHREAD_DESTRUCTOR_ITERATIONS rounds, while one
 * sets a value again.  A destructor of a later key may still unlock what
 * the thread holds -- libstdc++'s, for std::notify_all_at_thread_exit,
 * unlocks the mutex handed to it -- so a thread that still holds mutexes
 * the first time is judged one round later (the first time ours is called
 * is the first round, unless the thread's first mutex call came from a
 * destructor of the round before). */
static void held_prune(struct ms_tstate *ts, int exiting);

/* Thread ts ends holding h for read: its lock keeps the reader (table.h's
 * exited_reads), whose held set goes.  (A lock destroyed under the hold,
 * a MISUSE, has no record now; one made anew at its address is checked
 * against glibc's count of readers before it is believed.) */
static void exited_reader(const struct ms_tstate *ts, const struct ms_held *h)
{
	ms_held_read_orphaned(h->rec, ts->tid, h->caller);
}

void ms_held_read_orphaned(uint32_t r, uint32_t tid, uintptr_t at)
{
	if (!ms_rec_key(r))
		return;
	struct ms_cold *c = ms_cold(r);
	STORE(&c->exited_reader, tid);
	STORE(&c->exited_read_at, at);
	__atomic_fetch_add(&c->exited_reads, 1, __ATOMIC_RELEASE);
}

static void thread_exit(void *arg)
{
	struct ms_tstate *ts = arg;
	struct ms_thread *t = &ms_self;
	ms_guard_enter(t);
	/* reads another thread's misuse ended are given up at the last
	 * round only: a destructor of a later key may still let one go */
	held_prune(ts, exit_deferred);
	if ((ts->nheld || ts->overflow) && !exit_deferred) {
		exit_deferred = 1;
		if (pthread_setspecific(exit_key, ts) == 0) {
			ms_guard_leave(t);
			return;
		}
		held_prune(ts, 1); /* no later round: judged now */
	}
	exit_deferred = 1;
	name_kept(ts->tid);
	if ((ts->nheld || ts->overflow) && held_at_exit)
		held_at_exit(ts);
	/* the start of each timed hold it ends with, for the report's "held
	 * for", and its reads (thread_pool.h: the held set goes with the
	 * thread) */
	for (uint32_t i = 0; i < ts->nheld && i < MS_HELD_MAX; i++) {
		if (ts->held[i].mode & MS_HELD_READ)
			exited_reader(ts, &ts->held[i]);
		if (ts->held[i].since) {
			struct ms_cold *c = ms_cold(ts->held[i].rec);
			STORE(&c->exited_tid, ts->tid);
			STORE(&c->exited_since, ts->held[i].since);
		}
	}
	if (ts->overflow)
		ATOMIC_ADD(&not_followed, ts->overflow);
	ts->nheld = 0; /* held[].since may stay set: reuse zeroes held[] */
	ts->overflow = 0;
	ms_table_thread_exit(t);
	ms_spin_thread_exit();
	ms_thread_clock_floor(t->clock); /* for a thread that gets its tid */
	if (pool_lock()) {
		if (LOAD(&ts->in_use) == LATE)
			late_unlink(ts);
		STORE(&ts->in_use, 0);
		ts->free_link = free_list;
		free_list = ts;
		pool_unlock();
	} else if (LOAD(&ts->in_use) != LATE)
		STORE(&ts->in_use, 0); /* not reused: ended all the same */
	t->ts = NULL;
	ms_guard_leave(t);
}

size_t ms_threads_first_bytes(void)
{
	return CHUNK * sizeof(struct ms_tstate);
}

/* base/spin.h asks it: a thread that holds mutexes of the program must
 * not wait for our locks while a fork is under way. */
static int self_holds_mutexes(void)
{
	const struct ms_tstate *ts = ms_self.ts;
	return ts && (LOAD(&ts->nheld) != 0 || LOAD(&ts->overflow) != 0);
}

static void add_overflow(struct ms_tstate *ts, void *arg)
{
	*(uint64_t *)arg += LOAD(&ts->overflow);
}

uint64_t ms_threads_not_followed(void)
{
	uint64_t n = LOAD(&not_followed);
	ms_threads_each(add_overflow, &n);
	return n;
}

void ms_threads_not_followed_reset(void)
{
	/* what ended before; those held now are counted when they end */
	__atomic_store_n(&not_followed, 0, __ATOMIC_RELAXED);
}

int ms_threads_init(void (*at_exit)(const struct ms_tstate *ts))
{
	held_at_exit = at_exit;
	ms_spin_init(self_holds_mutexes);
	have_key = pthread_key_create(&exit_key, thread_exit) == 0;
	return have_key ? 0 : -1;
}

struct ms_tstate *ms_tstate_new(uint32_t tid)
{
	struct ms_tstate *ts = NULL, *chunk = NULL;
	const size_t chunk_bytes = CHUNK * sizeof *chunk;
	int mapped = 0;
	for (;;) {
		if (!pool_lock()) {
			if (chunk)
				munmap(chunk, chunk_bytes);
			return NULL; /* not followed, this call */
		}
		if (late_list)
			late_reclaim(tid);
		if (free_list) {
			ts = free_list;
			free_list = ts->free_link;
			break;
		}
		if (!fresh_left && chunk) {
			fresh = chunk;
			fresh_left = CHUNK;
			chunk = NULL;
		}
		if (fresh_left) {
			ts = fresh++;
			fresh_left--;
			ts->next = all;
			__atomic_store_n(&all, ts, __ATOMIC_RELEASE);
			break;
		}
		if (mapped)
			break; /* no memory */
		/* a new chunk, mapped outside the lock: a thread stopped in
		 * the system call would hold it for as long */
		pool_unlock();
		chunk = mmap(NULL, chunk_bytes, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (chunk == MAP_FAILED)
			chunk = NULL;
		mapped = 1;
	}
	pool_unlock();
	if (chunk) /* another thread's chunk came first */
		munmap(chunk, chunk_bytes);
	if (!ts)
		return NULL;
	memset(ts, 0, offsetof(struct ms_tstate, next)); /* see there */
	ts->tid = tid;
	ts->handle = (uintptr_t)pthread_self();
	ts->alt_size = ms_self.alt_high - ms_self.alt_low;
	if (exit_deferred) {
		/* our exit handler gave the thread's record back already, and
		 * this round of destructors may be the last (late_reclaim) */
		if (pool_lock()) {
			ts->free_link = late_list;
			late_list = ts;
			STORE(&ts->in_use, LATE);
			pool_unlock();
		} else
			STORE(&ts->in_use, 1); /* never reclaimed: kept */
	} else /* after the memset, for a report reading the record */
		__atomic_store_n(&ts->in_use, 1, __ATOMIC_RELEASE);
	if (have_key)
		pthread_setspecific(exit_key, ts);
	return ts;
}

void ms_threads_after_fork_child(void)
{
	not_followed = 0; /* the child counts its own */
	/* The pool lock held at the fork: another thread was changing the
	 * pool, and fresh and fresh_left may disagree (a new chunk half
	 * taken).  Its records not handed out are given up, not trusted. */
	if (lock)
		fresh_left = 0;
	lock = 0;
	late_list = NULL;
	if (ms_self.ts && LOAD(&ms_self.ts->in_use) == LATE)
		STORE(&ms_self.ts->in_use, 1); /* the child's thread: alive */
	/* The other threads are gone: only the forking thread's record is
	 * still a thread's. */
	for (struct ms_tstate *ts = all; ts; ts = ts->next)
		if (ts != ms_self.ts && LOAD(&ts->in_use)) {
			ts->nheld = 0; /* as at a thread's exit */
			ts->overflow = 0;
			/* a walk under way at the fork ends nowhere */
			STORE(&ts->walk_memo.walking, 0);
			STORE(&ts->in_use, 0);
			ts->free_link = free_list;
			free_list = ts;
		}
	if (ms_self.ts)
		ms_self.ts->tid = ms_self.tid;
}

size_t ms_task_file(uint32_t tid, const char *name, char *buf, size_t cap)
{
	char path[64];
	struct ms_fmt f;
	ms_fmt_init(&f, path, sizeof path, -1);
	ms_fmt(&f, "/proc/self/task/%u/%s", tid, name);
	int saved = errno;
	int fd = open(ms_fmt_str(&f), O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, cap - 1) : 0;
	if (fd >= 0)
		ms_fd_close(fd);
	buf[n > 0 ? n : 0] = 0;
	errno = saved;
	return n > 0 ? (size_t)n : 0;
}

char ms_task_state(uint32_t tid)
{
	char buf[512];
	if (!ms_task_file(tid, "stat", buf, sizeof buf))
		return 0;
	const char *p = strrchr(buf, ')'); /* after the name, which may hold any */
	if (!p || p[1] != ' ')
		return 0;
	return p[2];
}

uint64_t ms_task_cpu_ns(uint32_t tid)
{
	char buf[96];
	if (!ms_task_file(tid, "schedstat", buf, sizeof buf))
		return 0;
	uint64_t ns = 0;
	for (const char *p = buf; *p >= '0' && *p <= '9'; p++)
		ns = ns * 10 + (uint64_t)(*p - '0');
	return ns;
}

const char *ms_thread_name(uint32_t tid, char out[16])
{
	size_t n = ms_task_file(tid, "comm", out, 16);
	if (n && out[n - 1] == '\n')
		out[n - 1] = 0;
	if (!n)
		name_of_exited(tid, out); /* gone: its name as it ended */
	return ms_printable_in_place(out);
}

const char *ms_own_thread_name(char out[16])
{
	out[0] = 0;
	prctl(PR_GET_NAME, out, 0, 0, 0);
	out[15] = 0;
	return ms_printable_in_place(out);
}

uintptr_t ms_rec_key(uint32_t rec)
{
	return LOAD(&ms_rec(rec)->key);
}

uint64_t ms_held_remove(struct ms_tstate *ts, uint32_t rec)
{
	uint32_t n = ts->nheld;
	for (uint32_t i = n; i-- > 0;)
		if (ts->held[i].rec == rec) {
			uint64_t since = ts->held[i].since;
			memmove(&ts->held[i], &ts->held[i + 1],
				(n - i - 1) * sizeof ts->held[0]);
			ts->held[n - 1].since = 0; /* see held[] */
			ts->held[n - 1].mode = 0;
			ts->nheld = n - 1;
			return since;
		}
	if (ts->overflow) {
		ts->overflow--; /* one of those not followed */
		ATOMIC_ADD(&not_followed, 1);
	}
	return 0;
}

struct readers_query {
	uint32_t rec, except, n;
	int holds; /* count each hold, not each thread */
};

static void count_reader(struct ms_tstate *ts, void *arg)
{
	struct readers_query *q = arg;
	if (LOAD(&ts->tid) == q->except)
		return;
	uint32_t n = LOAD(&ts->nheld);
	n = n < MS_HELD_MAX ? n : MS_HELD_MAX;
	for (uint32_t i = 0; i < n; i++)
		if (LOAD(&ts->held[i].rec) == q->rec &&
		    ms_held_read_live(q->rec, LOAD(&ts->held[i].mode))) {
			q->n++;
			if (!q->holds)
				return;
		}
}

uint32_t ms_held_readers(uint32_t rec, uint32_t except)
{
	struct readers_query q = { rec, except, 0, 0 };
	ms_threads_each(count_reader, &q);
	return q.n;
}

uint32_t ms_held_reads(uint32_t rec, uint32_t except)
{
	struct readers_query q = { rec, except, 0, 1 };
	ms_threads_each(count_reader, &q);
	return q.n;
}

/* Record rec's mutex was destroyed: if this thread held it, it holds it
 * no more. */
void ms_held_forget(struct ms_tstate *ts, uint32_t rec)
{
	for (uint32_t i = 0; i < ts->nheld && i < MS_HELD_MAX; i++)
		if (ts->held[i].rec == rec) {
			ms_held_remove(ts, rec);
			return;
		}
}

/* A read hold of record r that another thread's unlock ended (a MISUSE,
 * counted in its cold part), taken as this one's. */
static int read_released(uint32_t r)
{
	if (!(LOAD(&ms_rec(r)->flags) & MS_F_COLD))
		return 0;
	uint32_t *owed = &ms_cold(r)->reads_released;
	uint32_t n = LOAD(owed);
	while (n && !__atomic_compare_exchange_n(owed, &n, n - 1, 0, __ATOMIC_RELAXED,
						 __ATOMIC_RELAXED))
		;
	return n != 0;
}

/* Whether entry h of the thread's held set is still held: a mutex by the
 * record's owner; a read hold has no owner to check and stays -- unless
 * its life has ended (a destroy or init while it was read), or, at the
 * thread's exit (when it will not unlock it), another thread's misuse
 * ended it. */
static int still_held(const struct ms_tstate *ts, const struct ms_held *h, int exiting)
{
	if (h->mode & MS_HELD_READ)
		return !ms_read_hold_ended(h->rec, h->mode) &&
		       (!exiting || !read_released(h->rec));
	uint32_t owner = LOAD(&ms_rec(h->rec)->owner);
	return (owner & ~MS_HELD) == ts->tid && (owner & MS_HELD);
}

static void held_prune(struct ms_tstate *ts, int exiting)
{
	uint32_t n = ts->nheld, out = 0;
	for (uint32_t i = 0; i < n; i++)
		if (still_held(ts, &ts->held[i], exiting))
			ts->held[out++] = ts->held[i];
	for (uint32_t i = out; i < n; i++) {
		ts->held[i].since = 0; /* see held[] */
		ts->held[i].mode = 0;
	}
	ts->nheld = out;
}

/* Drop entries of mutexes this thread no longer holds: another thread
 * unlocked them (glibc lets any thread unlock a normal mutex; the misuse
 * is reported) and the record says so. */
void ms_held_prune(struct ms_tstate *ts)
{
	held_prune(ts, 0);
}

struct held_query {
	uint32_t tid, rec;
	uint64_t since;
	uintptr_t caller;
};

static void held_in(struct ms_tstate *ts, void *arg)
{
	struct held_query *q = arg;
	if (LOAD(&ts->tid) != q->tid)
		return;
	uint32_t n = LOAD(&ts->nheld);
	for (uint32_t i = 0; i < n && i < MS_HELD_MAX; i++)
		if (LOAD(&ts->held[i].rec) == q->rec) {
			if (LOAD(&ts->held[i].since))
				q->since = LOAD(&ts->held[i].since);
			q->caller = LOAD(&ts->held[i].caller);
		}
}

uint64_t ms_held_since(uint32_t tid, uint32_t rec)
{
	struct held_query q = { tid, rec, 0, 0 };
	ms_threads_each(held_in, &q);
	return q.since;
}

uintptr_t ms_held_taken_at(uint32_t tid, uint32_t rec)
{
	struct held_query q = { tid, rec, 0, 0 };
	ms_threads_each(held_in, &q);
	return q.caller;
}

void ms_threads_each(void (*fn)(struct ms_tstate *, void *), void *arg)
{
	pid_t pid = 0;
	for (struct ms_tstate *ts = __atomic_load_n(&all, __ATOMIC_ACQUIRE); ts;
	     ts = ts->next) {
		uint32_t use = LOAD(&ts->in_use);
		if (!use)
			continue;
		/* a late record's thread may be gone, its record not yet
		 * given back (no thread made one since): not a live thread */
		if (use == LATE && thread_gone(pid ? pid : (pid = getpid()), LOAD(&ts->tid)))
			continue;
		fn(ts, arg);
	}
}

/* Thread tid's system call now, from /proc, and its first argument (0
 * if not shown); -1 if it runs ("running") or is gone. */
long ms_task_syscall(uint32_t tid, uint64_t *arg0)
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
