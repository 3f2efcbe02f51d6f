/* no_room.c - mutexes whose addresses all hash to one home slot of the
 * index, more than a probe may pass (128), in a table far from full: the
 * report must say that calls found no room near their home, not that
 * the table is full.  For tests/lifetimes.sh.
 *
 *   no_room N    N mutexes (N > 128) with one home in a table of 1024
 *                (MUTEXSTAT_TABLE_SIZE=1024: an index of 2048 slots)
 *   no_room spins N  an array of N spin locks, each locked once: 4 bytes
 *                apart, two to each 8 bytes, which every mutex has alone
 *
 * The addresses are made from the library's hash (lib/core/table.h, ms_hash),
 * which this copies: if that changes, this test says so by failing. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "proc_wait.h"

#define SHIFT 11 /* log2 of the index's 2048 slots */
#define MASK ((1u << SHIFT) - 1)
#define BLOCK ((uintptr_t)8 << SHIFT) /* bytes per value of the high part */

static uint64_t added(uint64_t high)
{
	return (high * 0x9e3779b97f4a7c15ull) >> 32;
}

static int spins(int n)
{
	pthread_spinlock_t *s = calloc((size_t)n, sizeof *s);
	if (!s)
		return 1;
	for (int i = 0; i < n; i++) {
		CHECK(pthread_spin_init(&s[i], PTHREAD_PROCESS_PRIVATE));
		CHECK(pthread_spin_lock(&s[i]));
		CHECK(pthread_spin_unlock(&s[i]));
	}
	printf("%d spin locks locked\n", n);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "spins"))
		return spins(atoi(argv[2]));
	int n = argc > 1 ? atoi(argv[1]) : 0;
	if (n < 1 || n > 1000) {
		fprintf(stderr, "usage: no_room N\n");
		return 2;
	}
	/* one mutex a block of 16 KiB: key k = high << 11 | low, low chosen
	 * so that low + added(high) is the same home.  A block whose low
	 * leaves no room for a whole mutex before its end is skipped, not
	 * moved back: moved, it would have another home (1 block in 512,
	 * so the blocks to spare below are plenty). */
	size_t blocks = (size_t)n * 2 + 1;
	char *area = mmap(NULL, blocks * BLOCK, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		return 1;
	uintptr_t first = ((uintptr_t)area + BLOCK - 1) & ~(BLOCK - 1);
	const uint64_t home = 1000;
	int locked = 0;
	for (size_t c = 0; c + 1 < blocks && locked < n; c++) {
		uint64_t high = (first / BLOCK) + (uint64_t)c;
		uint64_t low = (home - added(high)) & MASK;
		if (low * 8 + sizeof(pthread_mutex_t) > BLOCK)
			continue;
		pthread_mutex_t *m = (pthread_mutex_t *)(((high << SHIFT) | low) << 3);
		CHECK(pthread_mutex_init(m, NULL));
		CHECK(pthread_mutex_lock(m));
		CHECK(pthread_mutex_unlock(m));
		locked++;
	}
	printf("%d mutexes locked\n", locked);
	return 0;
}
