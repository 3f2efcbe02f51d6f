/* robust.c - what became of robust mutexes whose owner died; see robust.h.
 *
 * Owner deaths are rare, so the two counts live in a small table of our
 * own, under a spin lock, instead of in every mutex's record.  An entry
 * stays after its mutex's life ends: a thread that ended holding the
 * mutex is judged by it at report time, and so is an ended life left not
 * recoverable. */
#define _GNU_SOURCE
#include "analysis/robust.h"
#include "base/internal.h"
#include "core/ring.h"
#include "core/table.h"
#include "core/thread.h"

#include <errno.h>

#define MAX_ROBUST 256

struct outcome {
	uint32_t rec;
	uint64_t birth;
	uintptr_t site; /* where the life was first locked */
	uint32_t consistent, left;
	/* locks it refused since (ENOTRECOVERABLE): not the unlock of an
	 * inner level of a recursive one not yet made consistent, which
	 * glibc answers so too, the mutex still recoverable */
	uint32_t refused;
};

static struct outcome outcomes[MAX_ROBUST];
static uint32_t noutcomes;
static int lock;

void ms_robust_after_fork_child(void)
{
	lock = 0;
	noutcomes = 0; /* the parent's; the child's mutexes start anew */
}

/* Asynchronous cancellation deferred meanwhile (thread.h), and guarded: a
 * signal handler's lock that gets ENOTRECOVERABLE meanwhile passes
 * through, rather than spin for this lock its thread holds. */
static void take(void)
{
	ms_guard_enter(&ms_self);
	ms_async_defer(&ms_self);
	while (__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE))
		__builtin_ia32_pause();
}

static void give(void)
{
	__atomic_store_n(&lock, 0, __ATOMIC_RELEASE);
	ms_async_resume(&ms_self);
	ms_guard_leave(&ms_self);
}

enum outcome_kind { MADE_CONSISTENT, LEFT, REFUSED };

static void count(uint32_t r, enum outcome_kind kind)
{
	uint64_t birth = LOAD(&ms_rec(r)->birth);
	take();
	struct outcome *o = NULL;
	for (uint32_t i = 0; i < noutcomes && !o; i++)
		if (outcomes[i].rec == r && outcomes[i].birth == birth)
			o = &outcomes[i];
	if (!o && noutcomes < MAX_ROBUST) {
		o = &outcomes[noutcomes++];
		*o = (struct outcome){ .rec = r, .birth = birth,
				       .site = LOAD(&ms_rec(r)->first_caller) };
	}
	if (o) {
		if (kind == LEFT)
			o->left++;
		else if (kind == REFUSED)
			o->refused++;
		else
			o->consistent++;
	}
	give();
}

void ms_robust_made_consistent(uint32_t r)
{
	count(r, MADE_CONSISTENT);
}

void ms_robust_left_inconsistent(uint32_t r)
{
	count(r, LEFT);
}

void ms_robust_refused(uint32_t r)
{
	count(r, REFUSED);
}

/* (rec 0: not listed -- the table was full) */
static struct outcome outcome_of(uint32_t r, uint64_t birth)
{
	struct outcome found = { 0 };
	take();
	for (uint32_t i = 0; i < noutcomes; i++)
		if (outcomes[i].rec == r && outcomes[i].birth == birth)
			found = outcomes[i];
	give();
	return found;
}

uint32_t ms_robust_mark(uint32_t r)
{
	uint32_t kind = LOAD(&ms_rec(r)->flags) >> MS_F_KIND_SHIFT & MS_KIND_DESTROYED;
	if (kind == MS_KIND_DESTROYED || !(kind & MS_KIND_ROBUST))
		return 0;
	return outcome_of(r, LOAD(&ms_rec(r)->birth)).consistent + 1;
}

int ms_robust_recovered(uint32_t r, uint64_t birth, uint32_t mark)
{
	return mark && outcome_of(r, birth).consistent >= mark;
}

/* Where the last lock that got EOWNERDEAD was, if the history has it. */
static uintptr_t last_owner_dead(uint32_t r)
{
	struct ms_op_view v[1024 + MS_FAIL_RING]; /* a report's stack is large */
	uint32_t first, torn;
	uint32_t n = ms_history_read(r, v, &first, &torn);
	for (uint32_t i = n; i-- > 0;)
		if (v[i].err == EOWNERDEAD)
			return v[i].caller;
	return 0;
}

int ms_robust_view(uint32_t r, struct ms_robust_view *out)
{
	if (!(LOAD(&ms_rec(r)->flags) & MS_F_COLD))
		return 0;
	const struct ms_cold *c = &ms_table.cold[r];
	uint64_t died = LOAD(&c->errors[MS_E_OWNERDEAD]);
	if (!died)
		return 0;
	struct outcome o = outcome_of(r, LOAD(&ms_rec(r)->birth));
	*out = (struct ms_robust_view){
		.died = died,
		/* not listed (more than MAX_ROBUST lives): every
		 * ENOTRECOVERABLE, the unlocks' among them */
		.refused = o.rec ? o.refused : LOAD(&c->errors[MS_E_NOTRECOVERABLE]),
		.consistent = o.consistent,
		.left = o.left,
		.last_at = last_owner_dead(r),
	};
	out->not_recoverable = o.left || out->refused;
	return 1;
}

/* The lives first locked at site that ended (destroyed or initialised
 * again): their owner deaths' outcomes, summed. */
static struct outcome ended_at(uintptr_t site)
{
	struct outcome sum = { 0 };
	take();
	for (uint32_t i = 0; i < noutcomes; i++) {
		const struct outcome *o = &outcomes[i];
		if (o->site == site && (!LOAD(&ms_rec(o->rec)->key) ||
					LOAD(&ms_rec(o->rec)->birth) != o->birth)) {
			sum.rec = o->rec; /* a life listed (0: none was) */
			sum.consistent += o->consistent;
			sum.left += o->left;
			sum.refused += o->refused;
		}
	}
	give();
	return sum;
}

int ms_robust_site_view(uintptr_t site, const uint64_t *errors,
			struct ms_robust_view *out)
{
	if (!errors[MS_E_OWNERDEAD])
		return 0;
	struct outcome o = ended_at(site);
	*out = (struct ms_robust_view){
		.died = errors[MS_E_OWNERDEAD],
		.refused = o.rec ? o.refused : errors[MS_E_NOTRECOVERABLE],
		.consistent = o.consistent,
		.left = o.left,
	};
	out->not_recoverable = o.left || out->refused;
	return 1;
}

struct each {
	ms_robust_finding_fn *fn;
	void *arg;
	int n;
};

static void each_live(uintptr_t key, uint32_t r, void *arg)
{
	struct each *e = arg;
	struct ms_robust_view v;
	if (ms_robust_view(r, &v) && v.not_recoverable) {
		e->fn(key, r, 0, &v, e->arg);
		e->n++;
	}
}

int ms_robust_each_finding(ms_robust_finding_fn *fn, void *arg)
{
	struct each e = { fn, arg, 0 };
	ms_table_each(each_live, &e);
	for (uint32_t i = 0; i < LOAD(&ms_table.nsites); i++) {
		struct ms_site s;
		struct ms_robust_view v;
		ms_table_site(i, &s);
		if (ms_robust_site_view(s.site, s.errors, &v) && v.not_recoverable) {
			fn(0, 0, s.site, &v, arg);
			e.n++;
		}
	}
	return e.n;
}
