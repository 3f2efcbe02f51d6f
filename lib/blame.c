/* blame.c - waits charged to (mutex life, waiting or holding stack); see
 * blame.h.  A uthash in the depot's memory, under the depot's lock. */
#define _GNU_SOURCE
#include "blame.h"
#include "internal.h"
#include "table.h"
#include "thread.h"

#include <string.h>

struct key {
	uint64_t birth;
	uint32_t rec, kind, stack, pad;
};

/* A key's hash, a word at a time: uthash's own (Jenkins') goes byte by
 * byte, and every wait charged and every line of a life that ends hashes
 * a key. */
static inline unsigned key_hash(const void *key)
{
	const uint64_t *w = key;
	uint64_t h = 0;
	for (size_t i = 0; i < sizeof(struct key) / sizeof *w; i++) {
		h = (h ^ w[i]) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
	}
	return (unsigned)(h ^ (h >> 32));
}
#define HASH_FUNCTION(keyptr, keylen, hashv) ((void)(keylen), (hashv) = key_hash(keyptr))
#include "depot_hash.h"

struct line {
	struct ms_blame b; /* first: the part others see */
	struct key key;
	UT_hash_handle hh;
};

static struct line *lines;

/* The lines of a life that ended are of no use any more (a report shows
 * live mutexes' lines; the ended ones' waits are summed by site), but they
 * were kept for ever: a program whose mutexes of a request or an object
 * make threads wait spent MUTEXSTAT_STACK_MEMORY on them -- about 150
 * bytes each -- and then kept no new call stack, line or lock-order edge.
 * So a life's lines go to free_lines as it ends (ms_blame_life_ends), and
 * new lines are made from them first.  Not while a report reads lines
 * without our lock (readers): those of a life ending then stay spent, as
 * before.  Both under the depot's lock. */
static struct line *free_lines; /* linked by b.next */
static uint32_t readers;
/* Always in the hash: uthash frees its table when the last line goes and
 * makes a new one at the next add, and what uthash frees stays spent
 * (depot_hash.h).  Record 0 is no mutex's. */
static struct line sentinel;

void ms_blame_readers(int delta)
{
	ms_depot_lock();
	readers += (uint32_t)delta;
	ms_depot_unlock();
}

void ms_blame_after_fork_child(void)
{
	readers = 0; /* the parent's reports go on there, not here */
}

void ms_blame_life_ends(uint32_t rec)
{
	struct ms_cold *c = &ms_table.cold[rec];
	if (!__atomic_load_n(&c->blame, __ATOMIC_ACQUIRE) ||
	    __atomic_load_n(&readers, __ATOMIC_ACQUIRE))
		return;
	struct ms_thread *t = &ms_self;
	ms_guard_enter(t); /* a signal handler must not spin on our lock */
	if (ms_depot_lock_for_update()) {
		if (!readers) {
			struct ms_blame *b = c->blame;
			__atomic_store_n(&c->blame, NULL, __ATOMIC_RELEASE);
			while (b && lines) { /* lines: never NULL, the sentinel
						stays (for the analyzer) */
				struct line *l = (struct line *)b;
				b = b->next;
				HASH_DELETE(hh, lines, l);
				l->b.next = free_lines ? &free_lines->b : NULL;
				free_lines = l;
			}
		}
		ms_depot_unlock();
	}
	ms_guard_leave(t);
}

/* Memory for a new line, zeroed; NULL when the budget is spent. */
static struct line *line_alloc(void)
{
	if (!lines) { /* the sentinel first */
		oom = 0;
		HASH_ADD(hh, lines, key, sizeof sentinel.key, &sentinel);
		if (oom)
			lines = NULL;
	}
	struct line *l = free_lines;
	if (!l)
		return alloc(sizeof *l);
	free_lines = (struct line *)l->b.next;
	memset(l, 0, sizeof *l);
	return l;
}

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
	if (!l && (l = line_alloc()) != NULL) {
		l->key = k;
		l->b.rec = rec;
		l->b.birth = birth;
		l->b.kind = kind;
		l->b.stack = stack;
		oom = 0;
		HASH_ADD(hh, lines, key, sizeof k, l);
		if (oom) {
			l->b.next = free_lines ? &free_lines->b : NULL; /* its memory, for the next */
			free_lines = l;
			l = NULL;
		} else {
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
