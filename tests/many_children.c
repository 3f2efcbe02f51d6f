/* many_children.c - many fork children that end at the same moment, each
 * writing its exit report, for tests/many_children.sh.
 *
 *   together N   forks N children, which wait on a pipe until all are
 *                made, then each locks its mutexes -- 40 for even children,
 *                2 for odd ones, so their reports differ in length -- i+1
 *                times each, says "child PID locked M mutexes K times" and
 *                calls exit() (its report).  The parent waits for them and
 *                ends with _exit (no report of its own): the reports in the
 *                file are the children's. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MUTEXES 40

static pthread_mutex_t m[MUTEXES];

static int together(int n)
{
	int go[2];
	if (pipe(go) != 0)
		return 1;
	for (int j = 0; j < MUTEXES; j++)
		pthread_mutex_init(&m[j], NULL);
	for (int i = 0; i < n; i++) {
		pid_t p = fork();
		if (p < 0)
			return 1;
		if (p > 0)
			continue;
		char c;
		close(go[1]);
		if (read(go[0], &c, 1) != 0) /* 0: the parent closed it */
			_exit(3);
		int mutexes = i % 2 ? 2 : MUTEXES;
		for (int j = 0; j < mutexes; j++)
			for (int k = 0; k <= i; k++) {
				pthread_mutex_lock(&m[j]);
				pthread_mutex_unlock(&m[j]);
			}
		printf("child %d locked %d mutexes %d times\n", (int)getpid(), mutexes, i + 1);
		exit(0);
	}
	close(go[1]); /* all of them go */
	int bad = 0, status;
	while (wait(&status) > 0)
		bad += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
	printf("%d children failed\n", bad);
	fflush(stdout);
	_exit(bad != 0);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 2 && !strcmp(argv[1], "together"))
		return together(atoi(argv[2]));
	fprintf(stderr, "usage: %s together N\n", argv[0]);
	return 2;
}
