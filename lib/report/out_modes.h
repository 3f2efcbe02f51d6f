/* out_modes.h - the kinds of lock and their modes as the machine-read
 * formats name them (JSON, pprof, folded, DOT): one word each, where the
 * text report writes phrases (report.h's ms_lock_noun, ms_edge_mode_text).
 *
 * The stacks of who waited and who made them wait are not kept by mode
 * (blame.h), nor are the lock-order edges the graph hands out (order.h).
 * A stack's mode is known where every acquisition of its lock was in one
 * mode (ms_out_one_mode), or else where the lock's recent operations show
 * the call at its innermost frame in one mode (struct ms_out_calls): one
 * call instruction calls one function, pthread_rwlock_rdlock or _wrlock,
 * and an unlock's history entry says which hold it let go. */
#ifndef MUTEXSTAT_OUT_MODES_H
#define MUTEXSTAT_OUT_MODES_H

#include "base/internal.h"
#include "core/ring.h"
#include "core/table.h"
#include "report/report.h"

#include <stdint.h>

/* A record's kind of lock: "mutex", "rwlock", "spin". */
static inline const char *ms_out_class_name(unsigned lock_class)
{
	static const char *const name[MS_CLASS_COUNT + 1] = { "mutex", "rwlock", "spin",
							      "lock" };
	return name[lock_class < MS_CLASS_COUNT ? lock_class : MS_CLASS_COUNT];
}

static inline const char *ms_out_lock_name(uint32_t flags)
{
	return ms_out_class_name(ms_lock_class(flags));
}

/* The kinds of a site line's lives (1 << class each): one name, or
 * "mixed" (lives of one first-lock call are of one kind, but the call
 * site of a wrapper may take several). */
static inline const char *ms_out_classes_name(uint32_t classes)
{
	switch (classes) {
	case 0: /* as report.c reads a line without kinds: mutexes */
	case 1u << MS_CLASS_MUTEX: return "mutex";
	case 1u << MS_CLASS_RWLOCK: return "rwlock";
	case 1u << MS_CLASS_SPIN: return "spin";
	default: return "mixed";
	}
}

/* The mode every acquisition was in: "read" if all were reads, "write"
 * if none was, NULL if some of each (or none at all). */
static inline const char *ms_out_one_mode(uint64_t acquisitions, uint64_t reads)
{
	if (!acquisitions)
		return NULL;
	return reads == acquisitions ? "read" : reads ? NULL : "write";
}

/* The one mode of every acquisition of live record r: ms_out_one_mode
 * for a read-write lock, NULL for another kind. */
static inline const char *ms_out_rec_one_mode(uint32_t r)
{
	if (ms_lock_class(LOAD(&ms_rec(r)->flags)) != MS_CLASS_RWLOCK)
		return NULL;
	return ms_out_one_mode(ms_rec_acquisitions(r), ms_rw_reads(r));
}

/* The one mode of a site line's lives: for a line of read-write locks
 * alone. */
static inline const char *ms_out_site_one_mode(const struct ms_site *s)
{
	if (LOAD(&s->classes) != 1u << MS_CLASS_RWLOCK)
		return NULL;
	return ms_out_one_mode(LOAD(&s->acquisitions), LOAD(&s->rd.acquisitions));
}

/* The mode of an operation of a read-write lock's history: "read",
 * "write", or NULL (init, destroy, an unlock whose mode was not known). */
static inline const char *ms_out_op_mode(unsigned op)
{
	if (ms_op_read_mode(op))
		return "read";
	if ((op >= MS_OP_WRLOCK && op <= MS_OP_CLOCKWRLOCK) || op == MS_OP_WRUNLOCK)
		return "write";
	return NULL;
}

/* An edge's modes (lockgraph.h: bit 2 * (a held for read) + (b taken for
 * read)) at one end, the held lock's (taken 0) or the taken one's:
 * "read", "write", or "read or write" for an order seen in both. */
static inline const char *ms_out_edge_mode(uint32_t modes, int taken)
{
	uint32_t read = taken ? modes & 0xa : modes & 0xc;
	uint32_t write = taken ? modes & 0x5 : modes & 0x3;
	return read && write ? "read or write" : read ? "read" : "write";
}

/* The modes a read-write lock's calls were seen in by its recent
 * operations: each call site (return address) with MODE_READ, MODE_WRITE
 * or both (a call through a pointer, or an unlock that lets go of
 * either).  The first MS_OUT_CALLS sites; the others are not known. */
#define MS_OUT_CALLS 64
enum { MS_OUT_READ = 1, MS_OUT_WRITE = 2 };
struct ms_out_calls {
	const char *one;  /* the mode of every acquisition, NULL if both */
	uint32_t n;
	struct {
		uintptr_t caller;
		uint32_t modes;
	} c[MS_OUT_CALLS];
};

/* The calls of live record r (site NULL), or those a site line keeps of
 * its newest life that waited, failed or was named (site).  Report time:
 * it reads the history. */
void ms_out_calls_of(struct ms_out_calls *out, uint32_t r, const struct ms_site *site);

/* The mode of the call at `caller`: "read", "write", NULL not known. */
const char *ms_out_call_mode(const struct ms_out_calls *calls, uintptr_t caller);

/* The mode of a stack (depot id) of the lock: its innermost frame's call,
 * or the lock's one mode; NULL not known (not captured, not seen). */
const char *ms_out_stack_mode(const struct ms_out_calls *calls, uint32_t stack);

#endif
