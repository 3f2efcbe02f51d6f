/* order.h - lock-order edges and the inversions among them.
 *
 * When a thread takes (or blocks on) B while holding A, the edge A->B is
 * recorded once per pair of mutex lives, with the thread, where A was
 * taken, B's stack and the other mutexes held then (possible gates).  A
 * cycle among edges is an inversion that could deadlock even if this run
 * did not; if one gate mutex was held on every edge of the cycle, it
 * cannot, and is reported as guarded.  Edges of a mutex life that ended
 * (destroy, init again) are ignored. */
#ifndef MUTEXSTAT_ORDER_H
#define MUTEXSTAT_ORDER_H

#include "fmt.h"
#include "thread.h"
#include "threads.h"

#include <stdint.h>

/* The thread (record ts) takes or waits for mutex `key` (record r, life
 * birth) at `caller`; note an edge from each mutex it holds.  Cheap when
 * the edges are known (the thread's cache). */
void ms_order_note(struct ms_thread *t, struct ms_tstate *ts, uint32_t r,
		   uintptr_t key, uintptr_t caller);

/* Print POTENTIAL DEADLOCK and GUARDED INVERSION findings; returns the
 * number of potential deadlocks. */
int ms_order_print(struct ms_fmt *f);

struct ms_order_stats {
	uint64_t edges, dropped;
};
void ms_order_stats(struct ms_order_stats *out);

#endif
