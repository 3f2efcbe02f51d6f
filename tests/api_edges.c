/* api_edges.c - the public API at its edges, for tests/api_edges.sh.
 *
 *   blocked  a thread's mutexstat_dump() blocks writing to a pipe nobody
 *            reads, and main returns: the process must end, as it would
 *            without the library (the exit report waited for ever)
 *   renames  one mutex renamed 2,000,000 times between two names: every
 *            call succeeds (each copy used to take arena memory, which ran
 *            out after 838,848)
 *   preinit  a mutex named before its pthread_mutex_init, then locked 4
 *            times, and a dump: the name stays, and the init is its first
 *            (it was counted "initialised again", without its name); then
 *            destroyed, made again and locked twice
 *   prenamed locks of every kind named by mutexstat_name_lock before their
 *            init or first use: a static rwlock read once, a spin lock
 *            named before pthread_spin_init and locked, a mutex named
 *            twice then initialised and locked (the second name), one
 *            named then unnamed, an rwlock never used; then 300 names for
 *            unused addresses, which wait until the 256 names that can
 *            wait at once are taken; prints each call's answer
 *   fds      dumps to a non-blocking pipe until it is full, to a socket and
 *            a pipe whose reader is gone (SIGPIPE left at its default: it
 *            would end the program), to a file opened O_APPEND
 *   forkdump a fork child's mutexstat_dump(): with MUTEXSTAT_FOLLOW=0 the
 *            child records nothing, and the dump says so with errno
 *
 * Linked with the library (the API called directly). */
#define _GNU_SOURCE
#include <mutexstat.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static void lock_some(pthread_mutex_t *mx, int n)
{
	for (int i = 0; i < n; i++) {
		pthread_mutex_lock(mx);
		pthread_mutex_unlock(mx);
	}
}

static int pipe_fds[2];

static void *dump_for_ever(void *arg)
{
	(void)arg;
	for (;;) /* the pipe fills, and a dump blocks in write(2) */
		mutexstat_dump(pipe_fds[1]);
	return NULL;
}

static int blocked(void)
{
	pthread_t t;
	if (pipe(pipe_fds) != 0)
		return 1;
	lock_some(&m, 100);
	pthread_create(&t, NULL, dump_for_ever, NULL);
	/* until the pipe stops filling: the dumper is blocked for good */
	for (int n = 0, last = -1, same = 0; n < 1000 && same < 10; n++) {
		int queued = 0;
		usleep(10000);
		if (ioctl(pipe_fds[1], FIONREAD, &queued) != 0)
			return 1;
		same = queued > 0 && queued == last ? same + 1 : 0;
		last = queued;
	}
	lock_some(&m, 100);
	puts("main returns");
	fflush(stdout);
	return 0;
}

static int renames(void)
{
	long failed = 0;
	for (long i = 0; i < 2000000; i++)
		failed += mutexstat_name(&m, i & 1 ? "busy" : "idle") != 0;
	lock_some(&m, 3);
	printf("%ld renames failed\n", failed);
	return 0;
}

static int preinit(void)
{
	pthread_mutex_t *q = calloc(1, sizeof *q);
	if (!q || mutexstat_name(q, "queue") != 0)
		return 1;
	pthread_mutex_init(q, NULL);
	lock_some(q, 4);
	mutexstat_dump(STDOUT_FILENO);
	pthread_mutex_destroy(q);
	pthread_mutex_init(q, NULL); /* a new mutex: no name */
	lock_some(q, 2);
	free(q); /* not destroyed: the report shows it as it was */
	puts("done");
	return 0;
}

static pthread_rwlock_t read_once = PTHREAD_RWLOCK_INITIALIZER;
static pthread_rwlock_t never_used = PTHREAD_RWLOCK_INITIALIZER;
static pthread_spinlock_t spin;
static pthread_mutex_t later, unnamed;

static int prenamed(void)
{
	static char unused[300];
	printf("rwlock %d\n", mutexstat_name_lock(&read_once, "read once"));
	printf("never used %d\n", mutexstat_name_lock(&never_used, "never used"));
	printf("spin %d\n", mutexstat_name_lock(&spin, "spin"));
	printf("mutex %d", mutexstat_name_lock(&later, "first name"));
	printf(" %d\n", mutexstat_name_lock(&later, "second name"));
	printf("unnamed %d", mutexstat_name_lock(&unnamed, "gone"));
	printf(" %d\n", mutexstat_name_lock(&unnamed, NULL));
	int ok = 0;
	for (int i = 0; i < 300; i++)
		ok += mutexstat_name_lock(&unused[i], "unused") == 0;
	printf("unused: %d of 300 kept\n", ok);
	pthread_rwlock_rdlock(&read_once);
	pthread_rwlock_unlock(&read_once);
	pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE);
	for (int i = 0; i < 2; i++) {
		pthread_spin_lock(&spin);
		pthread_spin_unlock(&spin);
	}
	pthread_mutex_init(&later, NULL);
	lock_some(&later, 3);
	pthread_mutex_init(&unnamed, NULL);
	lock_some(&unnamed, 2);
	return 0;
}

static void show(const char *what, int rc)
{
	const char *e = rc ? strerrorname_np(errno) : NULL;
	printf("%s: %d %s\n", what, rc, e ? e : "-");
}

static int fds(void)
{
	int p[2], s[2], rc = 0;
	lock_some(&m, 1);
	if (pipe2(p, O_NONBLOCK) != 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, s) != 0)
		return 1;
	for (int i = 0; i < 1000 && !rc; i++)
		rc = mutexstat_dump(p[1]);
	show("non-blocking pipe, full", rc);
	close(s[1]);
	show("socket, reader gone", mutexstat_dump(s[0]));
	close(p[0]);
	show("pipe, reader gone", mutexstat_dump(p[1]));
	int fd = open("append.txt", O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
	if (fd < 0 || write(fd, "before\n", 7) != 7)
		return 1;
	show("O_APPEND file", mutexstat_dump(fd));
	if (write(fd, "after\n", 6) != 6)
		return 1;
	close(fd);
	return 0;
}

static int forkdump(void)
{
	lock_some(&m, 1);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		errno = 0;
		int rc = mutexstat_dump(STDOUT_FILENO);
		const char *e = strerrorname_np(errno);
		printf("child: dump %d %s\n", rc, e ? e : "0");
		fflush(stdout);
		_exit(0);
	}
	int status;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "blocked"))
		return blocked();
	if (argc == 2 && !strcmp(argv[1], "renames"))
		return renames();
	if (argc == 2 && !strcmp(argv[1], "preinit"))
		return preinit();
	if (argc == 2 && !strcmp(argv[1], "prenamed"))
		return prenamed();
	if (argc == 2 && !strcmp(argv[1], "fds"))
		return fds();
	if (argc == 2 && !strcmp(argv[1], "forkdump"))
		return forkdump();
	fprintf(stderr, "usage: api_edges blocked|renames|preinit|prenamed|fds|forkdump\n");
	return 2;
}
