/* spaced_pools.c - threads that each make their mutexes in a pool of their
 * own, the pools a power of two apart: as glibc's malloc gives each thread
 * an arena (a 64 MiB-aligned heap), and as thread stacks and 2 MiB huge
 * pages are spaced.  Every mutex is locked LOCKS times and left alive, so
 * the exit report lists them all.
 *
 *   pools NT N SPACING   thread i's N mutexes lie 48 bytes apart (malloc's
 *                        spacing of 40-byte objects) from i * SPACING bytes
 *                        into one mapped area
 *   heap NT N            thread i mallocs its N mutexes (its own arena);
 *                        prints how many distinct 64 MiB regions they
 *                        were in
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "proc_wait.h"

#define LOCKS 3
#define OBJ 48

static int nt, n, use_heap;
static size_t spacing;
static char *area;
static pthread_mutex_t **made; /* [nt * n] */
static pthread_barrier_t all_started;

static void *maker(void *arg)
{
	long id = (long)arg;
	pthread_barrier_wait(&all_started); /* each thread its own arena */
	for (int j = 0; j < n; j++) {
		pthread_mutex_t *m = use_heap ? malloc(sizeof *m)
			: (pthread_mutex_t *)(area + (size_t)id * spacing + (size_t)j * OBJ);
		if (!m)
			abort();
		CHECK(pthread_mutex_init(m, NULL));
		for (int k = 0; k < LOCKS; k++) {
			CHECK(pthread_mutex_lock(m));
			CHECK(pthread_mutex_unlock(m));
		}
		made[(size_t)id * n + j] = m;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	nt = argc > 2 ? atoi(argv[2]) : 0;
	n = argc > 3 ? atoi(argv[3]) : 0;
	use_heap = !strcmp(mode, "heap");
	if (!strcmp(mode, "pools") && argc > 4)
		spacing = strtoull(argv[4], NULL, 0);
	if (nt < 1 || nt > 256 || n < 1 || (!use_heap && (size_t)n * OBJ > spacing)) {
		fprintf(stderr, "usage: spaced_pools pools NT N SPACING | heap NT N\n");
		return 2;
	}
	if (!use_heap) {
		area = mmap(NULL, (size_t)nt * spacing, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (area == MAP_FAILED)
			return 1;
	}
	made = calloc((size_t)nt * n, sizeof *made);
	pthread_t *t = calloc((size_t)nt, sizeof *t);
	CHECK(pthread_barrier_init(&all_started, NULL, (unsigned)nt));
	for (long i = 0; i < nt; i++)
		CHECK(pthread_create(&t[i], NULL, maker, (void *)i));
	for (int i = 0; i < nt; i++)
		CHECK(pthread_join(t[i], NULL));
	if (use_heap) {
		/* regions of 64 MiB that hold mutexes: one per arena used */
		uintptr_t *region = calloc((size_t)nt * n, sizeof *region);
		size_t regions = 0;
		for (size_t i = 0; i < (size_t)nt * n; i++) {
			uintptr_t r = (uintptr_t)made[i] >> 26;
			size_t k = 0;
			while (k < regions && region[k] != r)
				k++;
			if (k == regions)
				region[regions++] = r;
		}
		printf("%d mutexes in %zu regions of 64 MiB\n", nt * n, regions);
		free(region);
	} else
		printf("%d mutexes in %d pools\n", nt * n, nt);
	free(t);
	return 0;
}
