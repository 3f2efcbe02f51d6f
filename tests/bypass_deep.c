/* bypass_deep.c - a library tests/bypass.c opens with RTLD_DEEPBIND: its own
 * calls bind to glibc first, past the preloaded library. */
#include <pthread.h>

int deep_lock(pthread_mutex_t *m)
{
	return pthread_mutex_lock(m);
}

int deep_unlock(pthread_mutex_t *m)
{
	return pthread_mutex_unlock(m);
}
