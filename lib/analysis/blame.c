/* blame.c - waits charged to (mutex life or site line, waiting or holding
 * stack); see blame.h.  A uthash in the depot's memory, under the depot's lock. */
#define _GNU_SOURCE
#include "analysis/blame.h"
#include "base/internal.h"
#include "core/table.h"
#include "core/thread.h"

#include <string.h>

struct key {
	uint64_t birth;
	uint32_t rec, kind, stack, pad;
};

#include "base/word_hash.h"
#define HASH_FUNCTION MS_WORD_HASH
#include "stacks/depot_hash.h"

struct line {
	struct ms_blame b; /* first: the part others see */
	struct key key;
	UT_hash_handle hh;
};

static struct line *lines;

/* A life's lines go to its site line as it ends (ms_blame_life_ends):
 * added to the site's line of the same stack, so a site keeps one line
 * per stack however many lives it had -- a program whose mutexes of a
 * request or an object make threads wait would otherwise spend
 * MUTEXSTAT_STACK_MEMORY on them, about 150 bytes a line, and then keep
 * no new call stack, line or lock-order edge.  The memory of lines no
 * longer needed goes to free_lines, and new lines are made from it
 * first.  Not while a report reads lines without our lock (readers):
 * those of a life ending then stay where they are, spent, and the site
 * gets copies.  Both under the depot's lock. */
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

static struct line *line_alloc(void);

int ms_blame_reading(void)
{
	return readers != 0;
}

/* Back to the free lines (out of the hash already, or never in it). */
static void line_free(struct line *l)
{
	l->b.next = free_lines ? &free_lines->b : NULL;
	free_lines = l;
}

/* Site lines are keyed apart from lives' by a kind bit, and by the number
 * of resets so far in place of a birth: a site line's number is another
 * site's after a reset. */
#define SITE_LINE 0x100u
static uint64_t sites_gen;

static struct key site_key(uint32_t site, uint32_t kind, ms_stack_id stack)
{
	struct key k;
	memset(&k, 0, sizeof k);
	k.birth = sites_gen;
	k.rec = site;
	k.kind = kind | SITE_LINE;
	k.stack = stack;
	return k;
}

/* Put line l, keyed k, in the hash and at the head of *list; 0 if the
 * hash could not grow (l is then in neither). */
static int line_insert(struct line *l, const struct key *k, void **list)
{
	l->key = *k;
	oom = 0;
	HASH_ADD(hh, lines, key, sizeof *k, l);
	if (oom)
		return 0;
	l->b.next = *list;
	__atomic_store_n(list, &l->b, __ATOMIC_RELEASE);
	return 1;
}

static void line_charge(struct ms_blame *to, const struct ms_blame *from)
{
	STORE(&to->count, to->count + from->count);
	STORE(&to->total, to->total + from->total);
	if (from->max > to->max)
		STORE(&to->max, from->max);
	for (int f = 0; f < MS_BLAME_FORMATS; f++) {
		to->shown[f][0] += from->shown[f][0];
		to->shown[f][1] += from->shown[f][1];
	}
}

/* Line l's numbers went to its site: none of them is l's to show in an
 * interval profile any more (a report reading l now finds nothing new). */
static void line_moved(struct ms_blame *l)
{
	for (int f = 0; f < MS_BLAME_FORMATS; f++) {
		l->shown[f][0] = l->count;
		l->shown[f][1] = l->total;
	}
}

/* Line l of a life that ended goes to its site's line of the same kind
 * and stack: added to one there, or, as one there, l itself (rekeyed) --
 * a copy of it while a report reads l.  Returns whether l's memory is
 * free for new lines. */
static int line_to_site(struct line *l, uint32_t site, void **list)
{
	struct key k = site_key(site, l->b.kind, l->b.stack);
	struct line *to;
	HASH_FIND(hh, lines, &k, sizeof k, to);
	if (to) {
		line_charge(&to->b, &l->b);
		line_moved(&l->b);
		return !readers;
	}
	if (readers) {
		to = line_alloc();
		if (!to)
			return 0;
		to->b = l->b;
		line_moved(&l->b);
	} else {
		HASH_DELETE(hh, lines, l);
		to = l;
	}
	to->b.rec = site;
	to->b.birth = 0;
	if (!line_insert(to, &k, list))
		line_free(to);
	return 0;
}

void ms_blame_life_ends(uint32_t rec, uint32_t site, void **site_lines)
{
	struct ms_cold *c = &ms_table.cold[rec];
	struct ms_blame *b = c->blame;
	uint64_t birth = LOAD(&ms_rec(rec)->birth);
	if (!b)
		return;
	if (!readers)
		__atomic_store_n(&c->blame, NULL, __ATOMIC_RELEASE);
	while (b && lines) { /* lines: never NULL once a line was made (the
				sentinel stays), for the analyzer */
		struct line *l = (struct line *)b;
		b = b->next;
		/* (a list may hold an older life's lines, from a reset while
		 * threads ran: they are spent with it) */
		int freed = l->b.birth == birth ? line_to_site(l, site, site_lines) : !readers;
		if (freed) {
			HASH_DELETE(hh, lines, l);
			line_free(l);
		}
	}
}

void ms_blame_sites_reset(struct ms_site *sites, uint32_t n)
{
	sites_gen++;
	for (uint32_t i = 0; i < n && !readers && lines; i++) {
		struct ms_blame *b = sites[i].blame;
		sites[i].blame = NULL;
		while (b && lines) {
			struct line *l = (struct line *)b;
			b = b->next;
			HASH_DELETE(hh, lines, l);
			line_free(l);
		}
	}
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
			line_free(l); /* its memory, for the next */
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

void ms_blame_since(struct ms_blame *b, enum ms_blame_format format, uint64_t *count,
		    uint64_t *total)
{
	uint64_t *shown = b->shown[format];
	ms_depot_lock();
	/* (never below: a line only grows, and one made after a reset
	 * starts from nothing) */
	*count = b->count >= shown[0] ? b->count - shown[0] : b->count;
	*total = b->total >= shown[1] ? b->total - shown[1] : b->total;
	shown[0] = b->count;
	shown[1] = b->total;
	ms_depot_unlock();
}

int ms_blame_unshown(const struct ms_blame *list, uint64_t birth,
		     enum ms_blame_format format)
{
	for (const struct ms_blame *b = list; b; b = b->next)
		if (b->birth == birth && LOAD(&b->count) > LOAD(&b->shown[format][0]))
			return 1;
	return 0;
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

void ms_blame_each_site(void (*fn)(const struct ms_site *, const struct ms_blame *,
				   void *),
			void *arg)
{
	const struct ms_table *t = &ms_table;
	for (uint32_t i = 0; i < LOAD(&t->nsites); i++) {
		const struct ms_blame *lines =
			__atomic_load_n(&t->sites[i].blame, __ATOMIC_ACQUIRE);
		if (lines)
			fn(&t->sites[i], lines, arg);
	}
}
