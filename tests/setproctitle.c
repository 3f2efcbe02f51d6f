/* setproctitle.c - a program that sets its process title the way redis,
 * nginx and postgres do: it copies its environment elsewhere and writes
 * the title over the block that held argv[] and the environment strings
 * (tests/setproctitle.sh).  Then it locks a mutex in locker() and exits. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static void __attribute__((noinline)) locker(void)
{
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
}

int main(int argc, char **argv)
{
	(void)argc;
	char *end = argv[0] + strlen(argv[0]) + 1;
	size_t n = 0;
	while (environ[n])
		n++;
	char **moved = calloc(n + 1, sizeof *moved);
	if (!moved)
		return 1;
	for (size_t i = 0; i < n; i++) {
		if (environ[i] == end)
			end += strlen(end) + 1;
		moved[i] = strdup(environ[i]);
	}
	environ = moved;
	memset(argv[0], 0, (size_t)(end - argv[0]));
	snprintf(argv[0], (size_t)(end - argv[0]), "title: serving 127.0.0.1:6379");
	locker();
	printf("title set: %s\n", argv[0]);
	return 0;
}
