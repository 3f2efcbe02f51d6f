/* api_stress.c - the public API under stress, for tests/api_stress.sh.
 *
 *   reset   four threads lock one mutex as fast as they can while the main
 *           thread calls mutexstat_reset() ten times; after each reset it
 *           stops them (it holds the mutex), prints the bounds the
 *           acquisitions since that reset must lie in, and dumps
 *   nested  a timer's signal handler calls mutexstat_dump() while the
 *           thread it interrupts is inside mutexstat_dump()
 *   names   mutexes named with a newline, a tab, bytes that are not UTF-8,
 *           a name cut inside a character, an empty name
 *   badfd   mutexstat_dump() to -1, to a descriptor not open, to one open
 *           read-only, to the library's own: what each returns, and errno
 *   ownfd   mutexstat_dump() to the program's copy of stderr, put where
 *           the library's was
 *   resetwait  a thread waits for `hot` (the main thread holds it) across
 *           a mutexstat_reset(), another starts waiting after it: a dump
 *           while both wait, then one after both got it and let go
 *   updates a timer's signal handler calls mutexstat_reset() and
 *           mutexstat_name() while the thread it interrupts makes and
 *           destroys mutexes (the table's updates): each call returns, and
 *           one that fails sets EDEADLK
 *
 * Run under the library (LD_PRELOAD); the API is found with dlsym. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include "proc_wait.h"

static int (*dump)(int);
static void (*reset)(void);
static int (*name)(const pthread_mutex_t *, const char *);

static pthread_mutex_t hot = PTHREAD_MUTEX_INITIALIZER;
static int stop;
static long counts[4];

static void *worker(void *arg)
{
	long i = (long)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		pthread_mutex_lock(&hot);
		counts[i]++;
		pthread_mutex_unlock(&hot);
	}
	return NULL;
}

static long sum(void)
{
	long s = 0;
	for (int i = 0; i < 4; i++)
		s += __atomic_load_n(&counts[i], __ATOMIC_RELAXED);
	return s;
}

static int resets(void)
{
	pthread_t th[4];
	for (long i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	for (int k = 0; k < 10; k++) {
		usleep(20000);
		long before = sum();
		reset();
		long mid = sum();
		usleep(20000);
		pthread_mutex_lock(&hot);
		long now = sum();
		/* since the reset: what the workers did after it and this
		 * lock -- at least now - mid (less one: a worker may have
		 * locked before the reset read the count and counted after
		 * mid was read), at most now - before */
		printf("bounds %ld %ld\n", now - mid, now - before + 1);
		fflush(stdout);
		dump(1);
		pthread_mutex_unlock(&hot);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	return 0;
}

static volatile sig_atomic_t refused, written;
static int sink = -1;

static void on_alarm(int sig)
{
	(void)sig;
	int e = errno;
	int r = dump(sink);
	if (r == -1 && errno == EDEADLK)
		refused++;
	else if (r == 0)
		written++;
	errno = e;
}

static int nested(void)
{
	sink = open("/dev/null", O_WRONLY);
	signal(SIGALRM, on_alarm);
	pthread_mutex_lock(&hot);
	pthread_mutex_unlock(&hot);
	for (int k = 0; k < 10; k++) {
		struct itimerval it = { { 0, 0 }, { 0, 200 } };
		setitimer(ITIMER_REAL, &it, NULL);
		dump(sink);
		while (refused + written < k + 1)
			usleep(100); /* the timer went off after the dump */
	}
	printf("nested: %d calls, %d refused (EDEADLK), %d written\n",
	       refused + written, refused, written);
	return 0;
}

static pthread_mutex_t named[5] = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
				    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
				    PTHREAD_MUTEX_INITIALIZER };

static int names(void)
{
	char cut[80];
	memset(cut, 'x', 62);
	strcpy(cut + 62, "\xc3\xa9"); /* 64 bytes: the é does not fit in 63 */
	const char *given[5] = { "new\nline\ttab", "bad \xff\xfe bytes",
				 cut, "a\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", "" };
	for (int i = 0; i < 5; i++) {
		printf("m%d %p %d\n", i, (void *)&named[i], name(&named[i], given[i]));
		for (int k = 0; k <= i; k++) {
			pthread_mutex_lock(&named[i]);
			pthread_mutex_unlock(&named[i]);
		}
	}
	return 0;
}

static void *idle(void *arg)
{
	return arg;
}

static int badfds(void)
{
	int ro = open("/dev/null", O_RDONLY);
	int fds[3] = { -1, 999, ro };
	for (int i = 0; i < 3; i++) {
		errno = 0;
		int r = dump(fds[i]);
		printf("dump(%s) %d %s\n", i == 0 ? "-1" : i == 1 ? "999" : "read-only", r,
		       errno ? strerrorname_np(errno) : "0");
	}
	/* The library's own descriptors, the ones from 1000 on (this program
	 * opens none there: the library's copy of stderr), are not the
	 * program's to write to.  A thread started first, as the dump thread
	 * once had a pipe there. */
	pthread_t th;
	if (pthread_create(&th, NULL, idle, NULL) == 0)
		pthread_join(th, NULL);
	int seen = 0, ebadf = 0;
	for (int fd = 1000; fd < 1100; fd++) {
		if (fcntl(fd, F_GETFD) < 0)
			continue;
		seen++;
		errno = 0;
		ebadf += dump(fd) == -1 && errno == EBADF;
	}
	printf("dump(the library's %s) %s\n", seen >= 1 ? "1 or more" : "none",
	       ebadf == seen ? "-1 EBADF each" : "wrote to one");
	return 0;
}

/* A program that closed the library's copy of stderr and put its own
 * descriptor there -- a copy of its stderr, the very file the library's
 * was -- may dump to it. */
static int ownfd(void)
{
	for (int fd = 1000; fd < 1100; fd++)
		close(fd);
	int own = dup2(2, 1000);
	errno = 0;
	int r = dump(own);
	printf("dump(the program's own at 1000) %d %s\n", r, errno ? strerrorname_np(errno) : "0");
	return 0;
}

static pid_t waiter_tids[2];

static void *wait_for_hot(void *arg)
{
	__atomic_store_n(&waiter_tids[(long)arg], (pid_t)syscall(SYS_gettid),
			 __ATOMIC_RELEASE);
	pthread_mutex_lock(&hot);
	pthread_mutex_unlock(&hot);
	return NULL;
}

/* Thread tid sleeps in the futex of `hot` (/proc's system call and its
 * first argument: no other wait can pass for it). */
static int waits_for_hot(pid_t tid)
{
	return sleeps_on_futex(tid, &hot.__data.__lock);
}

static void start_waiter(pthread_t *th, long i)
{
	pthread_create(th, NULL, wait_for_hot, (void *)i);
	pid_t tid;
	while (!(tid = __atomic_load_n(&waiter_tids[i], __ATOMIC_ACQUIRE)) ||
	       !waits_for_hot(tid))
		usleep(1000);
}

static int resetwait(void)
{
	pthread_t th[2];
	pthread_mutex_lock(&hot);
	start_waiter(&th[0], 0);
	reset();
	start_waiter(&th[1], 1);
	printf("both wait\n");
	fflush(stdout);
	dump(1);
	pthread_mutex_unlock(&hot);
	pthread_join(th[0], NULL);
	pthread_join(th[1], NULL);
	printf("none waits\n");
	fflush(stdout);
	dump(1);
	return 0;
}

static volatile sig_atomic_t update_calls, update_other;
static pthread_mutex_t to_name = PTHREAD_MUTEX_INITIALIZER;

static void reset_or_name(int sig)
{
	(void)sig;
	int e = errno;
	errno = 0;
	if (update_calls % 2) {
		reset();
		if (errno != 0 && errno != EDEADLK)
			update_other++;
	} else if (name(&to_name, "to_name") != 0 && errno != EDEADLK) {
		update_other++;
	}
	update_calls++;
	errno = e;
}

static int updates(void)
{
	static pthread_mutex_t pool[256];
	signal(SIGALRM, reset_or_name);
	struct itimerval it = { { 0, 200 }, { 0, 200 } };
	setitimer(ITIMER_REAL, &it, NULL);
	while (update_calls < 3000)
		for (int i = 0; i < 256; i++) { /* each init and destroy updates the table */
			pthread_mutex_init(&pool[i], NULL);
			pthread_mutex_lock(&pool[i]);
			pthread_mutex_unlock(&pool[i]);
			pthread_mutex_destroy(&pool[i]);
		}
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_REAL, &off, NULL);
	printf("updates: %d failed without EDEADLK\n", update_other);
	return 0;
}

int main(int argc, char **argv)
{
	dump = (int (*)(int))dlsym(RTLD_DEFAULT, "mutexstat_dump");
	reset = (void (*)(void))dlsym(RTLD_DEFAULT, "mutexstat_reset");
	name = (int (*)(const pthread_mutex_t *, const char *))dlsym(RTLD_DEFAULT,
								       "mutexstat_name");
	if (argc < 2 || !dump || !reset || !name) {
		fprintf(stderr, "usage: api_stress reset|nested|names|badfd|ownfd|resetwait|updates, "
				"under the library\n");
		return 2;
	}
	if (!strcmp(argv[1], "reset"))
		return resets();
	if (!strcmp(argv[1], "nested"))
		return nested();
	if (!strcmp(argv[1], "names"))
		return names();
	if (!strcmp(argv[1], "badfd"))
		return badfds();
	if (!strcmp(argv[1], "ownfd"))
		return ownfd();
	if (!strcmp(argv[1], "resetwait"))
		return resetwait();
	if (!strcmp(argv[1], "updates"))
		return updates();
	return 2;
}
