/* stripped_lock.c - a key-value store's library in small, built stripped
 * as libkeyvaluestore-test.so.3 by tests/reading.sh: its two tables'
 * mutexes are first locked through lock wrappers of its own, one
 * exported (after strip the dynamic symbol table still names it), one
 * hidden (after strip nothing names it), from its own code only. */
#include <pthread.h>
#include <stdlib.h>

static pthread_mutex_t tables = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cache = PTHREAD_MUTEX_INITIALIZER;

/* Not a tail call: the wrapper's frame is the lock's caller. */
__attribute__((noinline)) void kvs_mutex_lock(pthread_mutex_t *m)
{
	if (pthread_mutex_lock(m))
		abort();
}

__attribute__((noinline, visibility("hidden"))) void kvs_hidden_lock(pthread_mutex_t *m)
{
	if (pthread_mutex_lock(m))
		abort();
}

void kvs_use(int n)
{
	for (int i = 0; i < n; i++) {
		kvs_mutex_lock(&tables);
		pthread_mutex_unlock(&tables);
		kvs_hidden_lock(&cache);
		pthread_mutex_unlock(&cache);
	}
}
