/* misuse.c - the newest misuse of each kind of a record; see misuse.h. */
#include "analysis/misuse.h"
#include "base/internal.h"

#include <errno.h>

/* The stack of the newest misuse of each kind of a record, beside the cold
 * part rather than in it (every record's cold part is address space a
 * program under ulimit -v needs): a small table by record and kind, whose
 * entry names the side-ring entry it goes with by its order.  A misuse of
 * another record in the same slot takes it over: the older one's report
 * shows its call site alone. */
#define MISUSE_STACKS 256
static struct misuse_stack {
	uint64_t order; /* 0 while written */
	uint32_t r, stack;
	/* the thread: two threads' failures may share an order (a failure
	 * moves no mutex's order, so the next thread's is not past it) */
	uint32_t tid;
} misuse_stacks[MISUSE_STACKS];

static struct misuse_stack *misuse_stack_slot(uint32_t r, enum ms_misuse kind)
{
	return &misuse_stacks[(r * MS_M_COUNT + kind) % MISUSE_STACKS];
}

/* The newest side-ring entry of this life that a misuse of this kind
 * wrote: its operation, or for a use of a destroyed mutex (any
 * operation) the one glibc answered EINVAL.  Both kinds of bad unlock
 * write an unlock: the entry whose order the kind's stack slot keeps is
 * this kind's, where the slot is still this record's. */
int ms_misuse_last(uint32_t r, enum ms_misuse kind, struct ms_op_view *out, uint32_t *stack)
{
	static const unsigned op_of[MS_M_COUNT] = {
		MS_OP_UNLOCK, MS_OP_UNLOCK, MS_OP_DESTROY, 0, MS_OP_COND_RELEASE,
	};
	const unsigned op = op_of[kind];
	const struct ms_cold *c = &ms_table.cold[r]; /* read only: MS_F_COLD is set */
	const uint64_t birth = LOAD(&ms_rec(r)->birth);
	const struct misuse_stack *slot = misuse_stack_slot(r, kind);
	uint64_t kinds = __atomic_load_n(&slot->order, __ATOMIC_ACQUIRE);
	uint32_t kinds_tid = LOAD(&slot->tid);
	if (LOAD(&slot->r) != r)
		kinds = 0;
	int found = 0, kept = 0;
	/* oldest to newest, so that of two with one order the newer wins --
	 * also of the slot's: a thread's failures one after another may
	 * share a number (record.c), and the slot keeps the newest's stack */
	uint32_t end = LOAD(&c->fail_pos);
	for (uint32_t n = 0; n < MS_FAIL_RING; n++) {
		uint32_t i = (end + n) % MS_FAIL_RING;
		struct ms_op_view v;
		ms_op_read(&c->fail[i], &c->fail_ticks[i], &v);
		if (v.state != 1 || v.order <= birth ||
		    (op ? v.op != op : v.err != EINVAL))
			continue;
		if (kinds && v.order == kinds && v.tid == kinds_tid) {
			*out = v;
			found = kept = 1;
			continue;
		}
		if (!kept && (!found || v.order >= out->order)) {
			*out = v;
			found = 1;
		}
	}
	*stack = 0;
	if (found) { /* its stack, if the slot still holds it whole */
		const struct misuse_stack *m = misuse_stack_slot(r, kind);
		uint64_t o = __atomic_load_n(&m->order, __ATOMIC_ACQUIRE);
		uint32_t who = LOAD(&m->r), id = LOAD(&m->stack), tid = LOAD(&m->tid);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (o == out->order && who == r && tid == out->tid && LOAD(&m->order) == o)
			*stack = id;
	}
	return found;
}

void ms_misuse_keep(uint32_t r, enum ms_misuse kind, uint64_t o, uint32_t stack, uint32_t tid)
{
	struct misuse_stack *m = misuse_stack_slot(r, kind);
	__atomic_store_n(&m->order, 0, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	STORE(&m->r, r);
	STORE(&m->stack, stack);
	STORE(&m->tid, tid);
	__atomic_store_n(&m->order, o, __ATOMIC_RELEASE);
}
