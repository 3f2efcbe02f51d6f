/* findings.c - self-deadlocks and mutexes held at thread exit, kept for
 * the report, and the findings section that opens it; see findings.h. */
#define _GNU_SOURCE
#include "findings.h"
#include "depot.h"
#include "internal.h"
#include "live.h"
#include "order.h"
#include "output.h"
#include "record.h"
#include "robust.h"
#include "report_stacks.h"
#include "symbols.h"
#include "table.h"

#include <string.h>
#include <sys/prctl.h>

#define MAX_FINDINGS 256

struct self_deadlock {
	uint32_t tid, rec;
	uintptr_t key;
	uint64_t birth;
	enum ms_self_kind kind;
	ms_stack_id first, relock;
	uint64_t count;
};

struct held_exit {
	uint32_t tid;
	char name[16];
	uint32_t n;
	struct {
		uintptr_t key, caller;
		/* for a robust mutex, whose next owner may repair it: its
		 * life and ms_robust_mark() (0: not robust) */
		uint32_t rec, robust;
		uint64_t birth;
	} held[8];
};

static int lock;
static struct self_deadlock selfs[MAX_FINDINGS];
static uint32_t nselfs;
static struct held_exit exits[MAX_FINDINGS];
static uint32_t nexits, exits_dropped;

/* A fork child: the findings so far are the parent's (its report has
 * them); the child's start empty. */
void ms_findings_after_fork_child(void)
{
	lock = 0;
	nselfs = 0;
	nexits = 0;
	exits_dropped = 0;
}

static void take(void)
{
	while (__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE))
		__builtin_ia32_pause();
}

static void give(void)
{
	__atomic_store_n(&lock, 0, __ATOMIC_RELEASE);
}

void ms_finding_held_at_exit(const struct ms_tstate *ts)
{
	take();
	if (nexits < MAX_FINDINGS) {
		struct held_exit *h = &exits[nexits++];
		h->tid = ts->tid;
		prctl(PR_GET_NAME, h->name, 0, 0, 0); /* the exiting thread's */
		uint32_t n = ts->nheld;
		h->n = ts->nheld + ts->overflow;
		for (uint32_t i = 0; i < n && i < 8; i++) {
			uint32_t r = ts->held[i].rec;
			h->held[i].key = ms_rec_key(r);
			h->held[i].caller = ts->held[i].caller;
			h->held[i].rec = r;
			h->held[i].birth = LOAD(&ms_rec(r)->birth);
			h->held[i].robust = ms_robust_mark(r);
		}
	} else
		exits_dropped++;
	give();
}

static void print_self(struct ms_fmt *f, const struct self_deadlock *s)
{
	if (s->kind == MS_SELF_AVERTED)
		ms_fmt(f, "SELF-DEADLOCK: averted: thread %u relocked an errorcheck mutex "
			  "it holds, %llu time%s; glibc answered EDEADLK\n",
		       s->tid, (unsigned long long)s->count, s->count == 1 ? "" : "s");
	else if (s->kind == MS_SELF_TIMEOUT)
		ms_fmt(f, "SELF-DEADLOCK: thread %u locked a mutex it already holds with a "
			  "timeout, %llu time%s: it waited for itself until the deadline\n",
		       s->tid, (unsigned long long)s->count, s->count == 1 ? "" : "s");
	else
		ms_fmt(f, "SELF-DEADLOCK: thread %u locks a mutex it already holds: it "
			  "waits for itself, forever\n", s->tid);
	ms_fmt(f, "  mutex %p\n  taken at     ", (void *)s->key);
	ms_report_stack(f, s->first, 15);
	ms_fmt(f, "  relocked at  ");
	ms_report_stack(f, s->relock, 15);
}

void ms_finding_self_deadlock(struct ms_tstate *ts, uint32_t rec, uintptr_t key,
			      enum ms_self_kind kind)
{
	uintptr_t first_caller = 0;
	uint32_t n = ts->nheld;
	for (uint32_t i = 0; i < n; i++)
		if (ts->held[i].rec == rec)
			first_caller = ts->held[i].caller;
	uint64_t birth = LOAD(&ms_rec(rec)->birth);
	take();
	for (uint32_t i = 0; i < nselfs; i++)
		if (selfs[i].rec == rec && selfs[i].birth == birth &&
		    selfs[i].tid == ts->tid && selfs[i].kind == kind) {
			selfs[i].count++;
			give();
			return;
		}
	give();
	struct self_deadlock s = {
		.tid = ts->tid, .rec = rec, .key = key, .birth = birth,
		.kind = kind, .count = 1,
		.first = first_caller ? ms_site_stack_known(first_caller) : 0,
		.relock = ms_stack_here(),
	};
	take();
	if (nselfs < MAX_FINDINGS)
		selfs[nselfs++] = s;
	give();
	if (kind == MS_SELF_FOREVER) {
		/* The call below never returns: say it now, on stderr. */
		int fd = ms_output_stderr();
		if (fd >= 0) {
			char buf[4096];
			struct ms_fmt f;
			ms_fmt_init(&f, buf, sizeof buf, fd);
			ms_fmt(&f, "mutexstat: ");
			print_self(&f, &s);
			ms_fmt_flush(&f);
		}
	}
}

/* The mutexes h ended holding that are still a finding at report time:
 * not a robust one whose next owner made it consistent (robust.h).  Their
 * indexes in h->held go to shown[]; returns how many of the h->n. */
static uint32_t still_held(const struct held_exit *h, uint32_t shown[8], uint32_t *nshown)
{
	uint32_t n = h->n;
	*nshown = 0;
	for (uint32_t j = 0; j < h->n && j < 8; j++) {
		if (ms_robust_recovered(h->held[j].rec, h->held[j].birth, h->held[j].robust))
			n--;
		else
			shown[(*nshown)++] = j;
	}
	return n;
}

int ms_findings_print(struct ms_fmt *f)
{
	int failing = 0;
	take();
	uint32_t ns = nselfs, ne = nexits;
	give();
	failing += ms_live_print(f); /* live deadlocks first */
	for (uint32_t i = 0; i < ns; i++) {
		ms_fmt(f, "\n");
		print_self(f, &selfs[i]);
		failing++; /* every SELF-DEADLOCK heading, averted ones too */
	}
	failing += ms_order_print(f);
	for (uint32_t i = 0; i < ne; i++) {
		const struct held_exit *h = &exits[i];
		uint32_t shown[8], nshown, n = still_held(h, shown, &nshown);
		if (!n)
			continue;
		ms_fmt(f, "\nHELD AT THREAD EXIT: thread %u \"%.15s\" ended holding %u "
			  "mutex%s\n",
		       h->tid, h->name, n, n == 1 ? "" : "es");
		for (uint32_t k = 0; k < nshown; k++) {
			char where[256];
			uint32_t j = shown[k];
			ms_fmt(f, "  mutex %p taken at %s\n", (void *)h->held[j].key,
			       ms_symbolize(h->held[j].caller, where, sizeof where));
		}
	}
	if (exits_dropped)
		ms_fmt(f, "\n(%u more threads ended holding mutexes)\n", exits_dropped);
	failing += ms_robust_print(f); /* those left not recoverable */
	return failing;
}

/* ---- for the JSON output --------------------------------------------- */

void ms_findings_each_self(void (*fn)(const struct ms_self_finding *s, void *arg),
			   void *arg)
{
	take();
	uint32_t ns = nselfs;
	give();
	for (uint32_t i = 0; i < ns; i++) {
		take();
		struct self_deadlock s = selfs[i];
		give();
		struct ms_self_finding out = {
			.tid = s.tid, .key = s.key, .kind = s.kind,
			.taken_stack = s.first, .relock_stack = s.relock,
			.count = s.count,
		};
		fn(&out, arg);
	}
}

uint32_t ms_findings_each_exit(void (*fn)(const struct ms_exit_finding *e, void *arg),
			       void *arg)
{
	take();
	uint32_t ne = nexits, dropped = exits_dropped;
	give();
	for (uint32_t i = 0; i < ne; i++) {
		const struct held_exit *h = &exits[i];
		uint32_t shown[8];
		struct ms_exit_finding out = { .tid = h->tid, .name = h->name };
		out.n = still_held(h, shown, &out.shown);
		if (!out.n)
			continue;
		for (uint32_t k = 0; k < out.shown; k++) {
			out.key[k] = h->held[shown[k]].key;
			out.caller[k] = h->held[shown[k]].caller;
		}
		fn(&out, arg);
	}
	return dropped;
}
