/* pid_namespace.c - a process-shared mutex held by a process in another pid
 * namespace, for tests/pid_namespace.sh.
 *
 *   holder FILE  the program maps a process-shared mutex (MAP_SHARED) and
 *                forks; the child moves into a new pid namespace
 *                (unshare) and forks the holder, thread 1 there, which
 *                locks the mutex, says "inside 1 holds it", and unlocks it
 *                once FILE exists.  The program then locks it in a thread
 *                of its own (it waits for the holder; with a thread the
 *                library has its dump thread with any malloc, the
 *                sanitizers' too) and says "parent got it".  glibc's owner
 *                field says 1: the holder's own number for itself. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

struct shared {
	pthread_mutex_t m;
	volatile int held;
};

static void *take(void *arg)
{
	struct shared *s = arg;
	pthread_mutex_lock(&s->m);
	printf("parent got it\n");
	pthread_mutex_unlock(&s->m);
	return NULL;
}

static int holder(const char *file)
{
	struct shared *s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (s == MAP_FAILED)
		return 1;
	pthread_mutexattr_t attr;
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
	pthread_mutex_init(&s->m, &attr);
	pid_t child = fork();
	if (child == 0) {
		if (unshare(CLONE_NEWPID) != 0) {
			printf("unshare: %s\n", strerrorname_np(errno));
			s->held = -1;
			_exit(0);
		}
		pid_t inside = fork();
		if (inside == 0) {
			pthread_mutex_lock(&s->m);
			printf("inside %d holds it\n", (int)getpid());
			s->held = 1;
			struct stat st;
			while (stat(file, &st) != 0)
				usleep(10000);
			pthread_mutex_unlock(&s->m);
			_exit(0);
		}
		int status;
		waitpid(inside, &status, 0);
		_exit(0);
	}
	while (!s->held)
		usleep(1000);
	if (s->held < 0)
		return 77;
	pthread_t t;
	pthread_create(&t, NULL, take, s);
	pthread_join(t, NULL);
	int status;
	waitpid(child, &status, 0);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 2 && !strcmp(argv[1], "holder"))
		return holder(argv[2]);
	fprintf(stderr, "usage: %s holder FILE\n", argv[0]);
	return 2;
}
