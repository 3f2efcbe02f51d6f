/* ring.h - one recent operation, as kept in each mutex's history.
 *
 * An entry is 16 bytes: `stamp` (Lamport order and thread id; zero while
 * the entry is written, set last) and `what` (caller, operation, result).
 * A wait's time goes in a word apart (`ticks`): most entries have none,
 * and smaller entries touch fewer pages.  A reader takes stamp, what, then
 * stamp again: stamps that differ or are zero mean it was rewritten.
 * Writers never wait: the holder writes the main ring at a position only
 * it advances; other threads (a failed trylock, a timeout, an error,
 * misuse) a small side ring with an atomic position.  See doc/model.md. */
#ifndef MUTEXSTAT_RING_H
#define MUTEXSTAT_RING_H

#include <stdint.h>

enum ms_opcode {
	MS_OP_NONE, MS_OP_INIT, MS_OP_LOCK, MS_OP_TRYLOCK, MS_OP_TIMEDLOCK,
	MS_OP_CLOCKLOCK, MS_OP_UNLOCK, MS_OP_DESTROY, MS_OP_COND_RELEASE,
	MS_OP_COND_REACQUIRE,
	/* read-write locks: each way of taking one, by mode, and the two
	 * unlocks (an unlock whose mode is unknown, misuse, is MS_OP_UNLOCK) */
	MS_OP_RDLOCK, MS_OP_TRYRDLOCK, MS_OP_TIMEDRDLOCK, MS_OP_CLOCKRDLOCK,
	MS_OP_WRLOCK, MS_OP_TRYWRLOCK, MS_OP_TIMEDWRLOCK, MS_OP_CLOCKWRLOCK,
	MS_OP_RDUNLOCK, MS_OP_WRUNLOCK,
	MS_OP_COUNT, /* at most 32: five bits of an entry */
};

/* A try: it cannot block, so it orders nothing. */
static inline __attribute__((always_inline)) int ms_op_try(unsigned op)
{
	return op == MS_OP_TRYLOCK || op == MS_OP_TRYRDLOCK || op == MS_OP_TRYWRLOCK;
}

/* A lock with a deadline (timed or clock). */
static inline int ms_op_deadline(unsigned op)
{
	return op == MS_OP_TIMEDLOCK || op == MS_OP_CLOCKLOCK ||
	       op == MS_OP_TIMEDRDLOCK || op == MS_OP_CLOCKRDLOCK ||
	       op == MS_OP_TIMEDWRLOCK || op == MS_OP_CLOCKWRLOCK;
}

/* An operation in read mode (shared). */
static inline int ms_op_read_mode(unsigned op)
{
	return op >= MS_OP_RDLOCK && op <= MS_OP_CLOCKRDLOCK ? 1 : op == MS_OP_RDUNLOCK;
}

struct ms_op {
	uint64_t stamp; /* order << 24 | tid; 0 while being written */
	uint64_t what;  /* caller (48 bits) | op << 48 | MS_OP_WAITED |
			   MS_OP_TIMED | errno << 56 */
};

#define MS_OP_TID_BITS 24

#define MS_OP_WAITED (1ull << 53)
#define MS_OP_TIMED (1ull << 54) /* the entry's ticks word holds a time */

/* Write entry e; `ticks` (0: none) goes to *ticks_word. */
static inline __attribute__((always_inline)) void
ms_op_write(struct ms_op *e, uint64_t *ticks_word, uint64_t order,
	    uint32_t tid, uintptr_t caller, unsigned op, int waited, int err,
	    uint64_t ticks)
{
	/* user-space code addresses fit in 47 bits */
	uint64_t what = (uint64_t)caller | (uint64_t)op << 48 |
			(uint64_t)(unsigned char)err << 56;
	if (waited)
		what |= MS_OP_WAITED;
	__atomic_store_n(&e->stamp, 0, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_RELEASE);
	if (ticks) {
		what |= MS_OP_TIMED;
		__atomic_store_n(ticks_word, ticks, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&e->what, what, __ATOMIC_RELAXED);
	__atomic_store_n(&e->stamp, order << MS_OP_TID_BITS | tid, __ATOMIC_RELEASE);
}

/* A consistent copy of an entry, decoded. */
struct ms_op_view {
	int state; /* 0 empty, 1 valid, -1 overwritten while read */
	uint64_t order;
	uint32_t tid;
	uintptr_t caller;
	unsigned op;
	int waited, err;
	uint64_t ticks;
};

void ms_op_read(const struct ms_op *e, const uint64_t *ticks_word,
		struct ms_op_view *v);
const char *ms_op_name(unsigned op);

#endif
