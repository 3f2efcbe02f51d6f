/* shared.c - mutexes shared between processes and owners that die, for
 * tests/shared.sh.  The mutexes live in a file both processes map with
 * MAP_SHARED; the second process is exec'd, so it maps the file at an
 * address of its own, and each side prints where it sees the mutex and how
 * often it locked it.
 *
 *   counts N FILE   two threads here and two in a child lock the same
 *                   process-shared mutex N times each, adding 1 to a
 *                   counter it guards: the counter must come out 4N.
 *   robust FILE     robust mutexes whose owner dies: a thread here, then
 *                   twice a child process; the first time the lock that
 *                   gets EOWNERDEAD repairs it with pthread_mutex_consistent,
 *                   the second time it does not, and the mutex is not
 *                   recoverable after.  Every return value is printed (the
 *                   script compares them with a run without the library).
 *   repaired FILE   the same, the child process dying once: each owner's
 *                   death is repaired by the lock that gets EOWNERDEAD
 *                   (correct code).
 *   abandoned       a thread dies holding two robust mutexes: one is
 *                   repaired, the other unlocked without that, not
 *                   recoverable after.
 *   ended           the same, and both are destroyed.
 *   recursive       a thread dies holding a recursive robust mutex; the
 *                   next owner locks it again inside (an inner level),
 *                   and that level's unlock and a condition wait on it
 *                   answer ENOTRECOVERABLE (glibc's, for a level let go
 *                   before the repair); then it is repaired, unlocked
 *                   and locked again: recoverable all along.
 *   wait FILE       a child holds a process-shared mutex and waits; here,
 *                   the main thread blocks on it (the script takes dumps,
 *                   then kills the child: the mutex's owner is gone).
 *   waitrw FILE     the same with a process-shared rwlock the child
 *                   write-locks and the main thread waits to read.
 *
 * The child's side (exec'd by the parent): map N FILE ADDR, die FILE,
 * hold FILE, holdrw FILE. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

struct area {
	pthread_mutex_t m;      /* process-shared */
	pthread_mutex_t robust; /* process-shared, robust */
	pthread_rwlock_t rw;    /* process-shared */
	long counter;
	int ready;
};

static const char *self;

static struct area *map_file(const char *file, int create)
{
	int fd = open(file, O_RDWR | (create ? O_CREAT | O_TRUNC : 0), 0600);
	if (fd < 0 || (create && ftruncate(fd, sizeof(struct area)) != 0)) {
		perror(file);
		exit(2);
	}
	struct area *a = mmap(NULL, sizeof *a, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (a == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	return a;
}

static void init_shared(struct area *a)
{
	pthread_mutexattr_t at;
	pthread_mutexattr_init(&at);
	pthread_mutexattr_setpshared(&at, PTHREAD_PROCESS_SHARED);
	pthread_mutex_init(&a->m, &at);
	pthread_mutexattr_setrobust(&at, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&a->robust, &at);
	pthread_mutexattr_destroy(&at);
	pthread_rwlockattr_t rat;
	pthread_rwlockattr_init(&rat);
	pthread_rwlockattr_setpshared(&rat, PTHREAD_PROCESS_SHARED);
	pthread_rwlock_init(&a->rw, &rat);
	pthread_rwlockattr_destroy(&rat);
}

static const char *name_of(int rc)
{
	return rc ? strerrorname_np(rc) : "0";
}

static const char *ended(int status)
{
	static char buf[64];
	if (WIFEXITED(status))
		snprintf(buf, sizeof buf, "exited %d", WEXITSTATUS(status));
	else
		snprintf(buf, sizeof buf, "killed by SIG%s", sigabbrev_np(WTERMSIG(status)));
	return buf;
}

/* Run this program again as a child: a new process, its own mapping. */
static pid_t spawn(char *const argv[])
{
	pid_t pid = fork();
	if (pid == 0) {
		execv(self, argv);
		perror("execv");
		_exit(127);
	}
	return pid;
}

static int wait_child(pid_t pid)
{
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return status;
}

/* ---- counts ------------------------------------------------------------- */

static struct area *area;
static int rounds;

static void *locker(void *arg)
{
	(void)arg;
	for (int i = 0; i < rounds; i++) {
		pthread_mutex_lock(&area->m);
		area->counter++;
		pthread_mutex_unlock(&area->m);
	}
	return NULL;
}

static void lock_hard(const char *who)
{
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, locker, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("%s %d mutex %p locked %d times\n", who, (int)getpid(), (void *)&area->m,
	       2 * rounds);
}

static int counts(const char *n, const char *file)
{
	area = map_file(file, 1);
	init_shared(area);
	rounds = atoi(n);
	char where[32];
	snprintf(where, sizeof where, "%p", (void *)area);
	pid_t pid = spawn((char *const[]){ "shared", "map", (char *)n, (char *)file, where, NULL });
	while (!__atomic_load_n(&area->ready, __ATOMIC_ACQUIRE))
		usleep(1000); /* both sides lock at once */
	lock_hard("parent");
	printf("child %s\n", ended(wait_child(pid)));
	printf("counter %ld\n", area->counter);
	return 0;
}

static int map_side(const char *n, const char *file, const char *parent_addr)
{
	area = map_file(file, 0);
	char here[32];
	snprintf(here, sizeof here, "%p", (void *)area);
	if (!strcmp(here, parent_addr)) /* same address by chance: map again */
		area = map_file(file, 0);
	rounds = atoi(n);
	__atomic_store_n(&area->ready, 1, __ATOMIC_RELEASE);
	lock_hard("child");
	return 0;
}

/* ---- robust ------------------------------------------------------------- */

static pthread_mutex_t local; /* robust, this process's own */

/* A robust mutex of this process's own. */
static void init_robust(pthread_mutex_t *m)
{
	pthread_mutexattr_t at;
	pthread_mutexattr_init(&at);
	pthread_mutexattr_setrobust(&at, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(m, &at);
	pthread_mutexattr_destroy(&at);
}

static void *die_holding(void *arg)
{
	pthread_mutex_lock(arg);
	return NULL; /* the thread ends holding it */
}

/* Lock m, whose owner died, and repair it or not; then unlock. */
static void take_over(const char *what, pthread_mutex_t *m, int repair)
{
	int rc = pthread_mutex_lock(m); /* TAKE_OVER_LOCK */
	printf("%s: lock %s\n", what, name_of(rc));
	if (rc == EOWNERDEAD && repair)
		printf("consistent %s\n", name_of(pthread_mutex_consistent(m)));
	printf("unlock %s\n", name_of(pthread_mutex_unlock(m)));
}

/* A lock and an unlock of m, after its owner's death was dealt with. */
static void lock_again(pthread_mutex_t *m)
{
	printf("lock again %s\n", name_of(pthread_mutex_lock(m)));
	printf("unlock %s\n", name_of(pthread_mutex_unlock(m)));
}

/* robust and repaired: a process dies holding the shared mutex `deaths`
 * times, and only the first is repaired. */
static int owners_die(const char *file, int deaths)
{
	struct area *a = map_file(file, 1);
	init_shared(a);
	init_robust(&local);
	printf("local %p\n", (void *)&local);
	printf("shared %p\n", (void *)&a->robust);

	/* a thread dies holding it */
	pthread_t t;
	pthread_create(&t, NULL, die_holding, &local);
	pthread_join(t, NULL);
	take_over("thread died", &local, 1);
	lock_again(&local);

	/* a process dies holding it */
	for (int round = 0; round < deaths; round++) {
		pid_t pid = spawn((char *const[]){ "shared", "die", (char *)file, NULL });
		printf("child %s\n", ended(wait_child(pid)));
		take_over("process died", &a->robust, round == 0);
	}
	if (deaths == 1) {
		lock_again(&a->robust);
		return 0;
	}
	/* not made consistent the second time: not recoverable */
	printf("lock %s\n", name_of(pthread_mutex_lock(&a->robust)));
	printf("trylock %s\n", name_of(pthread_mutex_trylock(&a->robust)));
	printf("consistent %s\n", name_of(pthread_mutex_consistent(&a->robust)));
	return 0;
}

static pthread_mutex_t second; /* robust, this process's own */

static void *die_holding_both(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&local); /* FIRST_OF_TWO */
	pthread_mutex_lock(&second);
	return NULL; /* the thread ends holding both */
}

static int abandoned(int destroy)
{
	init_robust(&local);
	init_robust(&second);
	printf("local %p\n", (void *)&local);
	printf("second %p\n", (void *)&second);
	pthread_t t;
	pthread_create(&t, NULL, die_holding_both, NULL);
	pthread_join(t, NULL);
	take_over("repaired", &second, 1);
	take_over("abandoned", &local, 0);
	printf("lock again %s\n", name_of(pthread_mutex_lock(&local)));
	if (destroy) {
		printf("destroy %s\n", name_of(pthread_mutex_destroy(&local)));
		printf("destroy %s\n", name_of(pthread_mutex_destroy(&second)));
	}
	return 0;
}

/* recursive: an inner level of a recursive robust mutex let go before the
 * repair is refused (ENOTRECOVERABLE), and the mutex stays recoverable. */
static int recursive(void)
{
	pthread_mutexattr_t at;
	pthread_mutexattr_init(&at);
	pthread_mutexattr_setrobust(&at, PTHREAD_MUTEX_ROBUST);
	pthread_mutexattr_settype(&at, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&local, &at);
	pthread_mutexattr_destroy(&at);
	printf("local %p\n", (void *)&local);
	pthread_t t;
	pthread_create(&t, NULL, die_holding, &local);
	pthread_join(t, NULL);
	printf("lock %s\n", name_of(pthread_mutex_lock(&local)));
	printf("inner lock %s\n", name_of(pthread_mutex_lock(&local)));
	printf("inner unlock %s\n", name_of(pthread_mutex_unlock(&local)));
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	printf("inner lock %s\n", name_of(pthread_mutex_lock(&local)));
	printf("condition wait %s\n", name_of(pthread_cond_timedwait(&c, &local, &now)));
	printf("consistent %s\n", name_of(pthread_mutex_consistent(&local)));
	printf("unlock %s\n", name_of(pthread_mutex_unlock(&local)));
	lock_again(&local);
	return 0;
}

static int die(const char *file)
{
	struct area *a = map_file(file, 0);
	pthread_mutex_lock(&a->robust);
	raise(SIGKILL); /* dies holding it, as a crash would: no report */
	return 1;
}

/* ---- wait --------------------------------------------------------------- */

static int wait_other(const char *file, int rw)
{
	struct area *a = map_file(file, 1);
	init_shared(a);
	printf("mutex %p\n", rw ? (void *)&a->rw : (void *)&a->m);
	/* the holder is a grandchild, so init reaps it when it is killed
	 * (this process, blocked, could not) */
	pid_t mid = fork();
	if (mid == 0) {
		setsid();
		spawn((char *const[]){ "shared", rw ? "holdrw" : "hold", (char *)file, NULL });
		_exit(0);
	}
	wait_child(mid);
	while (!__atomic_load_n(&a->ready, __ATOMIC_ACQUIRE))
		usleep(1000);
	printf("locking\n");
	fflush(stdout);
	if (rw)
		pthread_rwlock_rdlock(&a->rw); /* until the script kills us */
	else
		pthread_mutex_lock(&a->m);
	printf("got it\n");
	return 1;
}

static int hold(const char *file, int rw)
{
	struct area *a = map_file(file, 0);
	/* a process names itself with any bytes: the waiter's report shows
	 * the name on its line, a newline as '?' (before, a line of its
	 * own, which read as a DEADLOCK heading) */
	if (rw)
		prctl(PR_SET_NAME, "sh\nDEADLOCK: x", 0, 0, 0);
	if (rw)
		pthread_rwlock_wrlock(&a->rw);
	else
		pthread_mutex_lock(&a->m);
	printf("holder %d holds it\n", (int)getpid());
	fflush(stdout);
	__atomic_store_n(&a->ready, 1, __ATOMIC_RELEASE);
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	self = "/proc/self/exe";
	static char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = 0;
		self = exe;
	}
	const char *mode = argc > 1 ? argv[1] : "";
	if (!strcmp(mode, "counts") && argc > 3)
		return counts(argv[2], argv[3]);
	if (!strcmp(mode, "map") && argc > 4)
		return map_side(argv[2], argv[3], argv[4]);
	if (!strcmp(mode, "robust") && argc > 2)
		return owners_die(argv[2], 2);
	if (!strcmp(mode, "repaired") && argc > 2)
		return owners_die(argv[2], 1);
	if (!strcmp(mode, "abandoned") || !strcmp(mode, "ended"))
		return abandoned(!strcmp(mode, "ended"));
	if (!strcmp(mode, "recursive"))
		return recursive();
	if (!strcmp(mode, "die") && argc > 2)
		return die(argv[2]);
	if (!strcmp(mode, "wait") && argc > 2)
		return wait_other(argv[2], 0);
	if (!strcmp(mode, "waitrw") && argc > 2)
		return wait_other(argv[2], 1);
	if (!strcmp(mode, "hold") && argc > 2)
		return hold(argv[2], 0);
	if (!strcmp(mode, "holdrw") && argc > 2)
		return hold(argv[2], 1);
	fprintf(stderr, "usage: %s counts N FILE | robust FILE | repaired FILE | abandoned | "
		"ended | wait FILE | waitrw FILE\n", argv[0]);
	return 2;
}
