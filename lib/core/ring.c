/* ring.c - reading history entries consistently; see ring.h. */
#include "core/ring.h"

void ms_op_read(const struct ms_op *e, const uint64_t *ticks_word,
		struct ms_op_view *v)
{
	uint64_t s1 = __atomic_load_n(&e->stamp, __ATOMIC_ACQUIRE);
	uint64_t what = __atomic_load_n(&e->what, __ATOMIC_RELAXED);
	uint64_t ticks = __atomic_load_n(ticks_word, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	uint64_t s2 = __atomic_load_n(&e->stamp, __ATOMIC_RELAXED);
	v->state = s1 == 0 && s2 == 0 && what == 0 ? 0 : (s1 == s2 && s1) ? 1 : -1;
	v->order = s1 >> MS_OP_TID_BITS;
	v->tid = (uint32_t)(s1 & ((1u << MS_OP_TID_BITS) - 1));
	v->caller = (uintptr_t)(what & 0xffffffffffffull);
	v->op = (unsigned)(what >> 48) & 0x1f;
	v->waited = (what & MS_OP_WAITED) != 0;
	v->err = (int)(what >> 56);
	v->ticks = (what & MS_OP_TIMED) ? ticks : 0;
}

const char *ms_op_name(unsigned op)
{
	static const char *const names[MS_OP_COUNT] = {
		"?", "init", "lock", "trylock", "timedlock", "clocklock",
		"unlock", "destroy", "cond-wait release", "cond-wait retake",
		"rdlock", "tryrdlock", "timedrdlock", "clockrdlock",
		"wrlock", "trywrlock", "timedwrlock", "clockwrlock",
		"unlock (read)", "unlock (write)",
	};
	_Static_assert(MS_OP_COUNT <= 32, "an entry keeps five bits of op");
	return op < MS_OP_COUNT ? names[op] : "?";
}
