/* misuse.c - the newest misuse of each kind of a record; see misuse.h. */
#include "analysis/misuse.h"
#include "base/internal.h"

#include <errno.h>

/* The newest misuse of each kind of a record, beside the cold part rather
 * than in it (every record's cold part is address space a program under
 * ulimit -v needs): a small table by record and kind, whose entry keeps
 * the call whole -- its order, thread, caller, glibc's answer and stack --
 * since the side ring's entry may be gone: its 8 entries are every failed
 * operation's, and both kinds of bad unlock write an unlock.  A misuse of
 * another record in the same slot takes it over: the older one's report
 * falls back on the side ring. */
#define MISUSE_STACKS 256
static struct misuse_stack {
	uint64_t order; /* 0 while written */
	uintptr_t caller;
	uint32_t r, stack;
	/* the thread: two threads' failures may share an order (a failure
	 * moves no mutex's order, so the next thread's is not past it) */
	uint32_t tid;
	uint16_t op, err;
} misuse_stacks[MISUSE_STACKS];

static struct misuse_stack *misuse_stack_slot(uint32_t r, enum ms_misuse kind)
{
	return &misuse_stacks[(r * MS_M_COUNT + kind) % MISUSE_STACKS];
}

/* The misuse r's slot for this kind keeps, if the slot is whole and still
 * r's, of the life born at `birth`: every misuse of the kind rewrites it,
 * so it is the newest. */
static int misuse_slot_read(uint32_t r, enum ms_misuse kind, uint64_t birth,
			    struct ms_op_view *out, uint32_t *stack)
{
	const struct misuse_stack *m = misuse_stack_slot(r, kind);
	uint64_t o = __atomic_load_n(&m->order, __ATOMIC_ACQUIRE);
	struct ms_op_view v = {
		.state = 1, .order = o, .tid = LOAD(&m->tid), .caller = LOAD(&m->caller),
		.op = LOAD(&m->op), .err = LOAD(&m->err),
	};
	uint32_t who = LOAD(&m->r), id = LOAD(&m->stack);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (o <= birth || who != r || LOAD(&m->order) != o)
		return 0;
	*out = v;
	*stack = id;
	return 1;
}

/* With the slot another record's: the newest side-ring entry of this
 * life that a misuse of this kind may have written -- its operation, or
 * for a use of a destroyed mutex (any operation) the one glibc answered
 * EINVAL -- leaving out the one the other kind of bad unlock's slot
 * names.  Of two with one order the newer wins (a thread's failures one
 * after another may share a number: record.c). */
static int misuse_ring_read(uint32_t r, enum ms_misuse kind, uint64_t birth,
			    struct ms_op_view *out)
{
	static const unsigned op_of[MS_M_COUNT] = {
		MS_OP_UNLOCK, MS_OP_UNLOCK, MS_OP_DESTROY, 0, MS_OP_COND_RELEASE,
	};
	const unsigned op = op_of[kind];
	const struct ms_cold *c = &ms_table.cold[r]; /* read only: MS_F_COLD is set */
	struct ms_op_view other;
	uint32_t unused;
	int other_known = op == MS_OP_UNLOCK &&
		misuse_slot_read(r, kind == MS_M_UNLOCK_UNLOCKED ? MS_M_UNLOCK_NOT_OWNER
								 : MS_M_UNLOCK_UNLOCKED,
				 birth, &other, &unused);
	int found = 0;
	uint32_t end = LOAD(&c->fail_pos);
	for (uint32_t n = 0; n < MS_FAIL_RING; n++) { /* oldest to newest */
		uint32_t i = (end + n) % MS_FAIL_RING;
		struct ms_op_view v;
		ms_op_read(&c->fail[i], &c->fail_ticks[i], &v);
		if (v.state != 1 || v.order <= birth ||
		    (op ? v.op != op : v.err != EINVAL))
			continue;
		if (other_known && v.order == other.order && v.tid == other.tid)
			continue;
		if (!found || v.order >= out->order) {
			*out = v;
			found = 1;
		}
	}
	return found;
}

int ms_misuse_last(uint32_t r, enum ms_misuse kind, struct ms_op_view *out, uint32_t *stack)
{
	const uint64_t birth = LOAD(&ms_rec(r)->birth);
	if (misuse_slot_read(r, kind, birth, out, stack))
		return 1;
	*stack = 0;
	return misuse_ring_read(r, kind, birth, out);
}

void ms_misuse_keep(uint32_t r, enum ms_misuse kind, const struct ms_op_view *v, uint32_t stack)
{
	struct misuse_stack *m = misuse_stack_slot(r, kind);
	__atomic_store_n(&m->order, 0, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	STORE(&m->r, r);
	STORE(&m->stack, stack);
	STORE(&m->tid, v->tid);
	STORE(&m->caller, v->caller);
	STORE(&m->op, (uint16_t)v->op);
	STORE(&m->err, (uint16_t)v->err);
	__atomic_store_n(&m->order, v->order, __ATOMIC_RELEASE);
}
