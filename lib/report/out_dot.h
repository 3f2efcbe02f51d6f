/* out_dot.h - the lock graphs in Graphviz's DOT language: the lock-order
 * graph (the edges the POTENTIAL DEADLOCK and GUARDED INVERSION findings
 * come from) and the wait-for graph at the time of the report (where the
 * DEADLOCK findings come from).  View with: dot -Tsvg FILE > graph.svg */
#ifndef MUTEXSTAT_OUT_DOT_H
#define MUTEXSTAT_OUT_DOT_H

/* One digraph with two clusters, "lock order" and "waiting now":
 *   lock order   a node per live mutex with an edge (its name or address,
 *                and where it was first locked); an edge A -> B per order
 *                seen (B taken while A was held: where B was taken, by
 *                which thread); edges on a POTENTIAL DEADLOCK cycle red,
 *                on a GUARDED INVERSION cycle dashed;
 *   waiting now  threads (boxes) and mutexes (ellipses): thread -> mutex
 *                "waits for", mutex -> thread "held by"; the edges of a
 *                wait-for cycle (a DEADLOCK) red.
 * Read-write and spin locks are nodes labelled "rwlock ...", "spin lock
 * ..."; an edge at a read-write lock says its mode ("held for write, taken
 * for read", "waits to read", "held for read by") where it is known
 * (out_modes.h).
 * Report time only (it symbolises and maps memory).  Returns 0, or -1 if
 * writing failed (errno says why). */
int ms_write_dot(int fd);

#endif
