/* first_alloc.c - 64 threads whose first call is malloc_usable_size() on a
 * block the main thread allocated, then free(): jemalloc sets each new
 * thread up there and locks mutexes it has not locked before, so the
 * library's first stack capture on the thread comes from inside the
 * allocator (tests/allocators.sh).  Each thread returns the size it read;
 * the main thread checks it got them back through pthread_join. */
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 64

static void *worker(void *block)
{
	size_t n = malloc_usable_size(block);
	free(block);
	return (void *)(uintptr_t)n;
}

int main(void)
{
	pthread_t t[THREADS];
	size_t want[THREADS];
	for (int i = 0; i < THREADS; i++) {
		void *block = malloc(100 + (size_t)i * 64);
		want[i] = malloc_usable_size(block);
		if (pthread_create(&t[i], NULL, worker, block) != 0)
			return 1;
	}
	int same = 0;
	for (int i = 0; i < THREADS; i++) {
		void *got;
		pthread_join(t[i], &got);
		same += (size_t)(uintptr_t)got == want[i];
	}
	printf("%d threads, %d returned their block's size\n", THREADS, same);
	return 0;
}
