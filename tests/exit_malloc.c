/* tests/exit_malloc.c - exit() from a signal handler that interrupted
 * malloc, for tests/exit_paths.sh.
 *
 * glibc's malloc gives each thread an arena with a lock that is not
 * recursive: a handler that interrupts malloc holding it and calls exit()
 * -- whose report allocates -- would wait for it for ever on that thread,
 * while another thread (using another arena) would not.  This program's
 * malloc does the same, deterministically: a lock of the calling thread's,
 * held around glibc's malloc; armed, it raises SIGTERM while it holds it,
 * and SIGTERM's handler calls exit(3).  Without the library exit() mallocs
 * nothing and the program ends with status 3.
 *
 *   exit_malloc      a worker locks a mutex 1000 times and is joined, then
 *                    main mallocs with the trap armed */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

extern void *__libc_malloc(size_t size);

static __thread volatile int arena_held; /* this thread's "arena lock" */
static volatile int armed;

void *malloc(size_t size)
{
	while (__atomic_exchange_n(&arena_held, 1, __ATOMIC_ACQUIRE))
		; /* a handler on this thread, inside malloc: waits for ever */
	if (armed) {
		armed = 0;
		raise(SIGTERM); /* the handler exits, with the lock held */
	}
	void *p = __libc_malloc(size);
	__atomic_store_n(&arena_held, 0, __ATOMIC_RELEASE);
	return p;
}

static pthread_mutex_t shared = PTHREAD_MUTEX_INITIALIZER;

static void *thousand(void *arg)
{
	for (int i = 0; i < 1000; i++) {
		pthread_mutex_lock(&shared);
		pthread_mutex_unlock(&shared);
	}
	return arg;
}

static void exit_3(int sig)
{
	(void)sig;
	exit(3);
}

int main(void)
{
	pthread_t t;
	pthread_create(&t, NULL, thousand, NULL);
	pthread_join(t, NULL);
	signal(SIGTERM, exit_3);
	printf("mallocing\n");
	fflush(stdout);
	armed = 1;
	void *volatile p = malloc(64);
	free(p);
	return 0; /* never: the handler exits */
}
