/* new_edges.h - a thread that keeps adding lock-order edges: two mutexes
 * made, nested and destroyed in turn, each pair a new life and so a new
 * edge, which the library adds under its depot lock (tests/signals.c and
 * tests/cancel.c, whose scenarios need that lock busy). */
#ifndef MUTEXSTAT_TESTS_NEW_EDGES_H
#define MUTEXSTAT_TESTS_NEW_EDGES_H

#include <pthread.h>

/* Pairs of new mutexes until *over; returns how many. */
static inline long new_edge_pairs(const volatile int *over)
{
	long pairs = 0;
	while (!*over) {
		pthread_mutex_t x, y;
		pthread_mutex_init(&x, NULL);
		pthread_mutex_init(&y, NULL);
		pthread_mutex_lock(&x);
		pthread_mutex_lock(&y);
		pthread_mutex_unlock(&y);
		pthread_mutex_unlock(&x);
		pthread_mutex_destroy(&y);
		pthread_mutex_destroy(&x);
		pairs++;
	}
	return pairs;
}

#endif
