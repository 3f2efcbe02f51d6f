/* descriptors.c - the program's file descriptors under the library, for
 * tests/descriptors.sh.  Everything it prints must be the same with and
 * without the library: the script compares the two outputs.
 *
 *   numbers   threads contend for a mutex (the library captures stacks,
 *             libunwind starts), then the program opens /dev/null three
 *             times and prints the numbers it got: the lowest free ones,
 *             3 4 5 in a process started with 0, 1 and 2 open.
 *   reuse     threads contend for a mutex; then the program closes every
 *             descriptor above 2, as daemons and ssh do (closefrom), and
 *             makes pipes of its own, which get
 *             the numbers the library's descriptors had; it puts a line in
 *             each, then threads contend for a mutex (stack captures), it
 *             forks, and the child adds a line to each pipe; the parent
 *             prints what each pipe holds: exactly the two lines. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define THREADS 4
#define ROUNDS 20000
#define PIPES 8

static pthread_mutex_t hot = PTHREAD_MUTEX_INITIALIZER;

static void *contend(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		pthread_mutex_lock(&hot);
		pthread_mutex_unlock(&hot);
	}
	return NULL;
}

/* Threads that take one mutex by turns: waits, so stack captures. */
static void contention(void)
{
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, contend, NULL);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
}

static int numbers(void)
{
	contention();
	for (int i = 0; i < 3; i++)
		printf("open: %d\n", open("/dev/null", O_RDONLY));
	return 0;
}

static int reuse(void)
{
	int p[PIPES][2];
	contention(); /* the library's descriptors are open now */
	for (int fd = 3; fd < 4096; fd++)
		close(fd);
	for (int i = 0; i < PIPES; i++) {
		if (pipe(p[i]) != 0)
			return 1;
		dprintf(p[i][1], "pipe %d (%d, %d)\n", i, p[i][0], p[i][1]);
	}
	contention();
	pid_t child = fork();
	if (child == 0) {
		for (int i = 0; i < PIPES; i++)
			dprintf(p[i][1], "child of pipe %d: %s\n", i,
				write(p[i][1], "", 0) == 0 ? "open" : strerrorname_np(errno));
		_exit(0);
	}
	int status;
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	printf("child: %s %d\n", WIFEXITED(status) ? "exited" : "killed",
	       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	for (int i = 0; i < PIPES; i++) {
		char buf[512];
		fcntl(p[i][0], F_SETFL, O_NONBLOCK);
		ssize_t n = read(p[i][0], buf, sizeof buf);
		printf("pipe %d holds %zd bytes:\n%.*s", i, n, n > 0 ? (int)n : 0, buf);
	}
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *mode = argc > 1 ? argv[1] : "";
	if (!strcmp(mode, "numbers"))
		return numbers();
	if (!strcmp(mode, "reuse"))
		return reuse();
	fprintf(stderr, "usage: %s numbers | reuse\n", argv[0]);
	return 2;
}
