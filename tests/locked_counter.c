/* locked_counter.c - two threads add to a counter under one mutex, 2000
 * times each, and the sum is printed: the plainest correct program, for
 * checkers of the program's locking (tests/memcheck.sh runs it under
 * helgrind, which must find no race in it). */
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long counter;

static void *add(void *arg)
{
	(void)arg;
	for (int i = 0; i < 2000; i++) {
		pthread_mutex_lock(&lock);
		counter++;
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

int main(void)
{
	pthread_t a, b;
	pthread_create(&a, NULL, add, NULL);
	pthread_create(&b, NULL, add, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("%ld\n", counter);
	return 0;
}
