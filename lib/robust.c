/* robust.c - what became of robust mutexes whose owner died; see robust.h.
 *
 * Owner deaths are rare, so the two counts live in a small table of our
 * own, under a spin lock, instead of in every mutex's record. */
#define _GNU_SOURCE
#include "robust.h"
#include "internal.h"
#include "ring.h"
#include "symbols.h"
#include "table.h"

#include <errno.h>

#define MAX_ROBUST 256

struct outcome {
	uint32_t rec;
	uint64_t birth;
	uint32_t consistent, left;
};

static struct outcome outcomes[MAX_ROBUST];
static uint32_t noutcomes;
static int lock;

void ms_robust_after_fork_child(void)
{
	lock = 0;
	noutcomes = 0; /* the parent's; the child's mutexes start anew */
}

static void count(uint32_t r, int left)
{
	uint64_t birth = LOAD(&ms_rec(r)->birth);
	while (__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE))
		__builtin_ia32_pause();
	struct outcome *o = NULL;
	for (uint32_t i = 0; i < noutcomes && !o; i++)
		if (outcomes[i].rec == r && outcomes[i].birth == birth)
			o = &outcomes[i];
	if (!o && noutcomes < MAX_ROBUST) {
		o = &outcomes[noutcomes++];
		*o = (struct outcome){ .rec = r, .birth = birth };
	}
	if (o) {
		if (left)
			o->left++;
		else
			o->consistent++;
	}
	__atomic_store_n(&lock, 0, __ATOMIC_RELEASE);
}

void ms_robust_made_consistent(uint32_t r)
{
	count(r, 0);
}

void ms_robust_left_inconsistent(uint32_t r)
{
	count(r, 1);
}

static struct outcome outcome_of(uint32_t r)
{
	struct outcome found = { 0 };
	uint64_t birth = LOAD(&ms_rec(r)->birth);
	while (__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE))
		__builtin_ia32_pause();
	for (uint32_t i = 0; i < noutcomes; i++)
		if (outcomes[i].rec == r && outcomes[i].birth == birth)
			found = outcomes[i];
	__atomic_store_n(&lock, 0, __ATOMIC_RELEASE);
	return found;
}

/* Where the last lock that got EOWNERDEAD was, if the history has it. */
static uintptr_t last_owner_dead(uint32_t r)
{
	static struct ms_op_view v[1024 + MS_FAIL_RING]; /* report lock held */
	uint32_t first, torn;
	uint32_t n = ms_history_read(r, v, &first, &torn);
	for (uint32_t i = n; i-- > 0;)
		if (v[i].err == EOWNERDEAD)
			return v[i].caller;
	return 0;
}

static const char *times(uint64_t n)
{
	return n == 1 ? "time" : "times";
}

static void print_one(uintptr_t key, uint32_t r, void *arg)
{
	struct ms_fmt *f = arg;
	if (!(LOAD(&ms_rec(r)->flags) & MS_F_COLD))
		return;
	const struct ms_cold *c = &ms_table.cold[r];
	uint64_t died = LOAD(&c->errors[MS_E_OWNERDEAD]);
	if (!died)
		return;
	uint64_t refused = LOAD(&c->errors[MS_E_NOTRECOVERABLE]);
	const char *name = LOAD(&c->name);
	struct outcome o = outcome_of(r);
	char cut[40];
	ms_fmt(f, "\nOWNER DIED: mutex %p%s%s%s (robust): its owner died holding it, "
		  "%llu %s\n",
	       (void *)key, name ? " \"" : "", ms_name_cut(cut, sizeof cut, name, 30),
	       name ? "\"" : "",
	       (unsigned long long)died, times(died));
	char where[256];
	uintptr_t at = last_owner_dead(r);
	ms_fmt(f, "  the next lock returned EOWNERDEAD%s%s\n", at ? ", last at " : "",
	       at ? ms_symbolize(at, where, sizeof where) : "");
	ms_fmt(f, "  made consistent again (pthread_mutex_consistent): %u %s; "
		  "unlocked without that: %u %s\n",
	       o.consistent, times(o.consistent), o.left, times(o.left));
	if (o.left || refused)
		ms_fmt(f, "  NOT RECOVERABLE: unlocked while inconsistent, it can never be "
			  "locked again; %llu %s since returned ENOTRECOVERABLE\n",
		       (unsigned long long)refused, refused == 1 ? "lock" : "locks");
}

void ms_robust_print(struct ms_fmt *f)
{
	ms_table_each(print_one, f);
	const struct ms_table *t = &ms_table;
	for (uint32_t i = 0; i < LOAD(&t->nsites); i++) {
		const struct ms_site *s = &t->sites[i];
		if (!s->errors[MS_E_OWNERDEAD])
			continue;
		char where[256];
		ms_fmt(f, "\nOWNER DIED: on robust mutexes now ended, first locked at %s: "
			  "the next lock got EOWNERDEAD, %llu %s\n",
		       ms_symbolize(s->site, where, sizeof where),
		       (unsigned long long)s->errors[MS_E_OWNERDEAD],
		       times(s->errors[MS_E_OWNERDEAD]));
	}
}
