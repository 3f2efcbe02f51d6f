/* unload_lib.c - a library tests/unload.c opens, uses and closes: its
 * lock_here() locks a mutex of its own, once made to wait, and takes two
 * more in both orders (a lock-order inversion in its static data). */
#include <pthread.h>
#include <unistd.h>

static pthread_mutex_t lib_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lib_a = PTHREAD_MUTEX_INITIALIZER, lib_b = PTHREAD_MUTEX_INITIALIZER;

static void *holder(void *arg)
{
	pthread_mutex_lock(&lib_mutex);
	usleep(20000);
	pthread_mutex_unlock(&lib_mutex);
	return arg;
}

int lock_here(void)
{
	pthread_t t;
	pthread_mutex_lock(&lib_mutex); /* the holder waits for this one... */
	pthread_create(&t, NULL, holder, NULL);
	usleep(20000);
	pthread_mutex_unlock(&lib_mutex);
	usleep(1000);
	pthread_mutex_lock(&lib_mutex); /* ...and this one for the holder */
	pthread_mutex_unlock(&lib_mutex);
	pthread_mutex_lock(&lib_a);
	pthread_mutex_lock(&lib_b);
	pthread_mutex_unlock(&lib_b);
	pthread_mutex_unlock(&lib_a);
	pthread_mutex_lock(&lib_b);
	pthread_mutex_lock(&lib_a);
	pthread_mutex_unlock(&lib_a);
	pthread_mutex_unlock(&lib_b);
	return pthread_join(t, NULL);
}
