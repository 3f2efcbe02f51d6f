/* ended.c - what a mutex life that waited, failed or was named leaves on
 * its first-lock site's line when it ends: its blame lines and a copy of
 * its recent operations, in the stack depot's memory.  The table calls
 * these through its hooks (core/table.h), which start-up registers. */
#include "analysis/ended.h"
#include "analysis/blame.h"
#include "analysis/misuse.h"
#include "base/clock.h"
#include "base/internal.h"
#include "core/table.h"
#include "core/thread.h"
#include "stacks/depot.h"
#include "stacks/site.h"

/* Room for a copy of a life's history (the depot's lock held); NULL when
 * the depot's memory is spent, or the copies have had their share of it:
 * a sixteenth (4 MiB of the default 64: 6,898 copies of 16 entries, more
 * than there are site lines; 169 of MUTEXSTAT_HISTORY=1024), so that they
 * never take the memory of call stacks. */
static struct ms_site_history *site_history_new(const struct ms_table *t)
{
	static size_t history_bytes;
	struct ms_depot_stats st;
	uint32_t cap = t->history_len + MS_FAIL_RING;
	size_t bytes = sizeof(struct ms_site_history) +
		       cap * (sizeof(struct ms_op) + sizeof(uint64_t));
	ms_depot_stats(&st);
	if (history_bytes + bytes > st.budget / 16)
		return NULL;
	struct ms_site_history *h = ms_depot_alloc(bytes);
	if (!h)
		return NULL;
	history_bytes += bytes;
	h->cap = cap;
	h->ops = (struct ms_op *)(h + 1);
	h->ticks = (uint64_t *)(h->ops + cap);
	return h;
}

/* Entry e, unless empty (side ring entries not used); once the copy is
 * full, in place of its oldest entry if e is newer (a read-write lock's
 * reads have a history of their own beside the main one). */
static inline void history_copy(struct ms_site_history *h, const struct ms_op *e,
				const uint64_t *ticks)
{
	uint64_t stamp = LOAD(&e->stamp);
	if (!stamp)
		return;
	uint32_t at = h->n;
	if (h->n == h->cap) {
		at = 0;
		for (uint32_t i = 1; i < h->n; i++)
			if (h->ops[i].stamp >> MS_OP_TID_BITS < h->ops[at].stamp >> MS_OP_TID_BITS)
				at = i;
		if (stamp >> MS_OP_TID_BITS <= h->ops[at].stamp >> MS_OP_TID_BITS)
			return;
	} else
		h->n++;
	h->ops[at].stamp = stamp;
	h->ops[at].what = LOAD(&e->what);
	h->ticks[at] = LOAD(ticks);
}

/* The copy's last entry: the destroy that ended the life (at the caller
 * ms_table_remove keeps; none for a life an init of its address ended,
 * whose entry begins the next life), after every entry of the life and
 * of the destroying thread (a Lamport clock, as the others: doc/model.md).
 * The life's own history has it only where the destroy was a misuse
 * (destroy of a locked rwlock, which glibc destroys): then it is kept. */
static void history_ends(struct ms_site_history *h)
{
	struct ms_thread *self = &ms_self;
	uintptr_t caller = ms_table_destroyed_at();
	if (!caller)
		return;
	uint64_t newest = 0;
	for (uint32_t i = 0; i < h->n; i++)
		if (h->ops[i].stamp >> MS_OP_TID_BITS > newest)
			newest = h->ops[i].stamp >> MS_OP_TID_BITS;
	/* the misuse's own entry: among the newest (a failure on the same
	 * hold as the one before shares its order: record.c's log_other) */
	for (uint32_t i = 0; i < h->n; i++) {
		struct ms_op_view v;
		if (h->ops[i].stamp >> MS_OP_TID_BITS != newest)
			continue;
		ms_op_read(&h->ops[i], &h->ticks[i], &v);
		if (v.op == MS_OP_DESTROY)
			return;
	}
	uint64_t o = (newest > self->clock ? newest : self->clock) + 1;
	self->clock = o;
	struct ms_op e;
	uint64_t ticks = 0;
	ms_op_write(&e, &ticks, o, self->tid, caller, MS_OP_DESTROY, 0, 0, ms_ticks());
	history_copy(h, &e, &ticks);
}

/* Life r's history, into its site line s's copy: the side ring, and of
 * the main ring the positions this life wrote (all once it has wrapped);
 * the depot's lock held, no report reading. */
static void keep_history(struct ms_table *t, uint32_t r, struct ms_site *s)
{
	struct ms_site_history *h = s->history ? s->history : site_history_new(t);
	if (!h)
		return;
	const struct ms_record *rec = ms_rec(r);
	const struct ms_cold *c = &t->cold[r];
	uint32_t ops = LOAD(&rec->ops);
	uint32_t used = ops >= t->history_len || (!ops && ms_history_wrapped(rec))
				? t->history_len : ops;
	h->n = 0;
	h->birth = LOAD(&rec->birth);
	uint32_t next = LOAD(&c->fail_pos);
	for (uint32_t i = 0; i < MS_FAIL_RING; i++) /* oldest first: ms_history_read */
		history_copy(h, &c->fail[(next + i) % MS_FAIL_RING],
			     &c->fail_ticks[(next + i) % MS_FAIL_RING]);
	for (uint32_t i = 0; i < used; i++) {
		const struct ms_op *e = ms_history_at(r, i);
		history_copy(h, e, ms_history_ticks(e));
	}
	const struct ms_read_stats *rd = ms_reads_peek(r);
	for (uint32_t i = 0; rd && i < t->history_len; i++) {
		const struct ms_op *e = ms_read_ring_at(rd, i);
		history_copy(h, e, ms_read_ring_ticks(e));
	}
	history_ends(h);
	__atomic_store_n(&s->history, h, __ATOMIC_RELEASE);
}

/* Life r's newest misuse of each kind, on its site line s, as the
 * report shows a live lock's: where the misuse was, not only where its
 * lock was first locked (a lock never locked has no such place). */
static void keep_misuse(uint32_t r, struct ms_site *s)
{
	const struct ms_cold *c = &ms_table.cold[r];
	for (int k = 0; k < MS_M_COUNT; k++) {
		struct ms_op_view v;
		uint32_t at;
		if (!LOAD(&c->misuse[k]) || !ms_misuse_last(r, (enum ms_misuse)k, &v, &at))
			continue;
		if (!at)
			at = ms_site_stack_known(v.caller);
		if (at)
			STORE(&s->misuse_last[k], ms_site_misuse_make(at, v.tid, v.err));
	}
}

static void keep_life(uint32_t r, struct ms_site *s, int history)
{
	struct ms_table *t = &ms_table;
	struct ms_thread *self = &ms_self;
	ms_guard_enter(self); /* a signal handler must not spin on our lock */
	keep_misuse(r, s); /* (before the depot's lock: it may put a stack) */
	if (ms_depot_lock_for_update()) {
		ms_blame_life_ends(r, (uint32_t)(s - t->sites), &s->blame);
		if (history && !ms_blame_reading()) /* a report reads the copy */
			keep_history(t, r, s);
		ms_depot_unlock();
	}
	ms_guard_leave(self);
}

static int sites_reset(struct ms_site *sites, uint32_t n)
{
	ms_depot_lock();
	ms_blame_sites_reset(sites, n);
	int reading = ms_blame_reading();
	ms_depot_unlock();
	return reading;
}

void ms_ended_init(void)
{
	static const struct ms_table_hooks hooks = {
		.site_beyond_wrapper = ms_site_beyond_wrapper,
		.keep_life = keep_life,
		.sites_reset = sites_reset,
	};
	ms_table_set_hooks(&hooks);
}
