/* blame.c - waits charged to (mutex life, waiting or holding stack); see
 * blame.h.  A uthash in the depot's memory, under the depot's lock. */
#define _GNU_SOURCE
#include "blame.h"
#include "internal.h"
#include "table.h"

#include <string.h>

#include "depot_hash.h"

struct key {
	uint64_t birth;
	uint32_t rec, kind, stack, pad;
};

struct line {
	struct ms_blame b; /* first: the part others see */
	struct key key;
	UT_hash_handle hh;
};

static struct line *lines;

int ms_blame_add(uint32_t rec, uint64_t birth, enum ms_blame_kind kind,
		 ms_stack_id stack, uint64_t ticks)
{
	struct key k;
	memset(&k, 0, sizeof k);
	k.birth = birth;
	k.rec = rec;
	k.kind = kind;
	k.stack = stack;
	struct line *l;
	int rc = 0;
	if (!ms_depot_lock_for_update())
		return -1; /* another thread is forking: not charged */
	HASH_FIND(hh, lines, &k, sizeof k, l);
	if (!l && (l = alloc(sizeof *l)) != NULL) {
		l->key = k;
		l->b.rec = rec;
		l->b.birth = birth;
		l->b.kind = kind;
		l->b.stack = stack;
		oom = 0;
		HASH_ADD(hh, lines, key, sizeof k, l);
		if (oom)
			l = NULL;
		else {
			/* newest first in the mutex's list */
			struct ms_cold *c = ms_cold(rec);
			l->b.next = c->blame;
			__atomic_store_n(&c->blame, &l->b, __ATOMIC_RELEASE);
		}
	}
	if (l) {
		l->b.count++;
		l->b.total += ticks;
		if (ticks > l->b.max)
			l->b.max = ticks;
	} else
		rc = -1;
	ms_depot_unlock();
	return rc;
}

const struct ms_blame *ms_blame_of(uint32_t rec, uint64_t birth)
{
	if (!(LOAD(&ms_rec(rec)->flags) & MS_F_COLD))
		return NULL;
	const struct ms_blame *b =
		__atomic_load_n(&ms_table.cold[rec].blame, __ATOMIC_ACQUIRE);
	while (b && b->birth != birth)
		b = b->next;
	return b;
}
