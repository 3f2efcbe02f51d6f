/* libc_frames.c - a mutex first locked inside the C library: in a
 * pthread_once routine, so the stack that first locks it runs through a
 * C library frame (pthread_once's) between two of the program's, and ends
 * in the process's start (__libc_start_main, _start); with an argument,
 * locked in main alone.  tests/stacks.sh runs it as built and stripped:
 * the report names the program's frames, the C library's without a source
 * line, and leaves the start out without a look at its debug file. */
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void __attribute__((noinline)) set_up(void)
{
	pthread_mutex_lock(&m); /* FIRST_LOCK */
	pthread_mutex_unlock(&m);
}

int main(int argc, char **argv)
{
	(void)argv;
	if (argc == 1) /* "plain" (any argument): main's lock alone */
		pthread_once(&once, set_up); /* ONCE */
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	puts("once");
	return 0;
}
