#define _GNU_SOURCE /* strerrorname_np */
/* misuse.c - four mistakes glibc lets a program make, each once.  glibc
 * answers each as it always does (the program's results do not change);
 * the report lists each under MISUSE with where it happened.
 *
 *   1. unlock of a mutex that is not locked       (normal mutex: glibc says 0)
 *   2. unlock by a thread that does not hold it   (errorcheck: EPERM)
 *   3. destroy of a locked mutex                  (EBUSY)
 *   4. lock of a destroyed mutex                  (EINVAL) */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static pthread_mutex_t held_elsewhere;

static void *take_and_keep(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&held_elsewhere);
	return NULL; /* and never unlock: the main thread will try */
}

static void say(const char *what, int rc)
{
	printf("%-40s -> %s\n", what, rc ? strerrorname_np(rc) : "0");
}

int main(void)
{
	pthread_mutex_t never_locked = PTHREAD_MUTEX_INITIALIZER;
	say("unlock of a mutex that is not locked",
	    pthread_mutex_unlock(&never_locked));

	pthread_mutexattr_t attr;
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&held_elsewhere, &attr);
	pthread_t t;
	pthread_create(&t, NULL, take_and_keep, NULL);
	pthread_join(t, NULL);
	say("unlock by a thread that does not hold it",
	    pthread_mutex_unlock(&held_elsewhere));

	pthread_mutex_t busy;
	pthread_mutex_init(&busy, NULL);
	pthread_mutex_lock(&busy);
	say("destroy of a locked mutex", pthread_mutex_destroy(&busy));
	pthread_mutex_unlock(&busy);

	pthread_mutex_t gone;
	pthread_mutex_init(&gone, NULL);
	pthread_mutex_destroy(&gone);
	say("lock of a destroyed mutex", pthread_mutex_lock(&gone));
	return 0;
}
