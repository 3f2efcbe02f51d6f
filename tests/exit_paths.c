/* tests/exit_paths.c - programs that end in the less usual ways, for
 * tests/exit_paths.sh.  Each prints what it did; the test compares that and
 * the exit status with and without the library, and reads the report.
 *
 *   exit_paths main-pthread-exit N   main starts two workers that lock one
 *                                    mutex N times each, and calls
 *                                    pthread_exit: the last worker's end
 *                                    ends the process (exit(0))
 *   exit_paths alone-pthread-exit    main locks a mutex 10 times, starts and
 *                                    joins a thread, and calls pthread_exit:
 *                                    no thread of the program is left
 *   exit_paths last-holds            main calls pthread_exit; the last
 *                                    worker ends holding a mutex
 *   exit_paths closed-all            a worker locks a mutex 1000 times and
 *                                    is joined; main closes every descriptor
 *                                    but 0-2, raises SIGUSR1 at once and
 *                                    waits for its dump (under the
 *                                    library), starts another such worker
 *                                    (it waits for main to have left) and
 *                                    calls pthread_exit
 *   exit_paths closed-at-end         main calls pthread_exit; the worker
 *                                    locks a mutex 1000 times, closes every
 *                                    descriptor but 0-2 and ends: the last
 *                                    thread; an exit handler waits for the
 *                                    dump thread to wait again, then
 *                                    prints the total
 *   exit_paths closed-often          a worker locks a mutex 1000 times and
 *                                    is joined; closes every descriptor but
 *                                    0-2 21 times; prints whether the
 *                                    dump thread waits, whether the process
 *                                    used under 0.5 s of CPU in the second
 *                                    after, and (under the library)
 *                                    whether a dump signal then writes its
 *                                    dump
 *   exit_paths handler-in-report     SIGTERM's handler calls exit(3); it
 *                                    interrupts main inside mutexstat_dump
 *                                    (blocked writing to a full pipe), or,
 *                                    without the library, inside write()
 *   exit_paths daemon DIR            becomes a daemon (fork, setsid, fork,
 *                                    chdir DIR, every descriptor closed,
 *                                    /dev/null on 0-2), locks a mutex 100
 *                                    times and exits
 *   exit_paths handler-in-pause      a worker locks a mutex 1000 times and
 *                                    is joined; SIGALRM's handler calls
 *                                    exit(4), interrupting main in pause()
 *   exit_paths handler-in-phdr       SIGTERM's handler calls exit(3); it
 *                                    interrupts main inside a callback of
 *                                    dl_iterate_phdr (which holds the
 *                                    dynamic linker's lock that a dlopen
 *                                    needs: the report's, of libdw)
 *   exit_paths timer-exit USEC       SIGALRM's handler calls exit(3) after
 *                                    USEC microseconds, while three threads
 *                                    make, nest and share mutexes
 *   exit_paths two-exits             a worker locks a mutex 1000 times,
 *                                    then it and main call exit(3) at once
 *                                    (a barrier before): glibc 2.36 lets
 *                                    the two race */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include "proc_wait.h"

static pthread_mutex_t shared = PTHREAD_MUTEX_INITIALIZER;
static long rounds, total;

static void *worker(void *arg)
{
	for (long i = 0; i < rounds; i++) {
		pthread_mutex_lock(&shared);
		total++;
		pthread_mutex_unlock(&shared);
	}
	return arg;
}

/* after main has left: the exit(0) of the last thread runs it */
static void print_total(void)
{
	printf("total %ld\n", total);
}

static int main_pthread_exit(long n)
{
	pthread_t t[2];
	rounds = n;
	atexit(print_total);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	printf("main leaves\n");
	fflush(stdout);
	pthread_exit(NULL);
}

static void *nothing(void *arg)
{
	return arg;
}

static int alone_pthread_exit(void)
{
	pthread_t t;
	for (int i = 0; i < 10; i++) {
		pthread_mutex_lock(&shared);
		pthread_mutex_unlock(&shared);
	}
	pthread_create(&t, NULL, nothing, NULL);
	pthread_join(t, NULL);
	printf("main leaves alone\n");
	fflush(stdout);
	pthread_exit(NULL);
}

static pthread_mutex_t kept = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t go = PTHREAD_MUTEX_INITIALIZER;

static void *keeper(void *arg)
{
	pthread_mutex_lock(&go); /* main has left */
	pthread_mutex_unlock(&go);
	pthread_mutex_lock(&kept); /* the line the finding names */
	return arg;
}

static int last_holds(void)
{
	pthread_t t;
	pthread_mutex_lock(&go);
	pthread_create(&t, NULL, keeper, NULL);
	printf("main leaves the keeper\n");
	fflush(stdout);
	pthread_mutex_unlock(&go);
	pthread_exit(NULL);
}

static void *thousand(void *arg)
{
	pthread_mutex_lock(&go); /* main has left (or is not waited for) */
	pthread_mutex_unlock(&go);
	for (int i = 0; i < 1000; i++) {
		pthread_mutex_lock(&shared);
		total++;
		pthread_mutex_unlock(&shared);
	}
	return arg;
}

/* Where the dump thread (the thread named "mutexstat") is: 1 waiting on
 * its futex word (for a signal's request, or its next look), 0 on its way
 * (writing a dump), -1 if there is no such thread. */
static int dump_thread_state(void)
{
	char path[320], line[256];
	int state = -1;
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
		FILE *f = fopen(path, "r");
		int ours = f && fgets(line, sizeof line, f) && !strcmp(line, "mutexstat\n");
		if (f)
			fclose(f);
		if (!ours)
			continue;
		snprintf(path, sizeof path, "/proc/self/task/%s/syscall", e->d_name);
		f = fopen(path, "r");
		long nr = -1;
		state = f && fgets(line, sizeof line, f) && sscanf(line, "%ld", &nr) == 1 &&
			nr == SYS_futex;
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return state;
}

/* Under the library (MUTEXSTAT_OUTPUT set): until its dump thread, which
 * starts with the program's first thread, has named itself and waits (5 s
 * at most).  Returns the thread's state. */
static int dump_thread_waits(void)
{
	int state = -1;
	for (int tries = 0; getenv("MUTEXSTAT_OUTPUT") && tries < 500 &&
			    (state = dump_thread_state()) != 1; tries++)
		usleep(10000);
	return state;
}

/* The dump signal, and its dump's file PREFIX.1 read until it is whole
 * (10 s at most).  Returns whether it was. */
static int dump_written(const char *out)
{
	char first[4096];
	snprintf(first, sizeof first, "%s.1", out);
	raise(SIGUSR1);
	for (int tries = 0; tries < 1000 && !file_has(first, "\nTop "); tries++)
		usleep(10000);
	return file_has(first, "\nTop ");
}

/* closed-at-end: the last thread closes the descriptors and ends; while
 * its exit() runs the program's exit handlers, the dump thread goes on
 * waiting (the handler waits for that).  When the dump thread had a pipe,
 * it saw it gone at that moment and once ended then. */
static void *thousand_then_close(void *arg)
{
	thousand(arg);
	for (int fd = 3; fd < 1024; fd++)
		close(fd);
	return arg;
}

static void wait_then_print_total(void)
{
	dump_thread_waits();
	print_total();
}

static int closed_at_end(void)
{
	pthread_t t;
	/* main's pthread_exit opens libgcc_s (glibc unwinds with it) while
	 * the worker closes every descriptor: loaded now, it is found
	 * without a file.  Without this, 3 runs in 25 on a loaded machine
	 * aborted, "libgcc_s.so.1 must be installed for pthread_exit to
	 * work", with the library or not. */
	if (!dlopen("libgcc_s.so.1", RTLD_NOW))
		fprintf(stderr, "exit_paths: %s\n", dlerror());
	atexit(wait_then_print_total);
	pthread_create(&t, NULL, thousand_then_close, NULL);
	pthread_exit(NULL);
}

/* CPU time this process has used, in ms. */
static long cpu_ms(void)
{
	struct rusage u;
	getrusage(RUSAGE_SELF, &u);
	return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1000 +
	       (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1000;
}

/* closed-often: the program closes every descriptor 21 times (a daemon
 * that does it again and again).  The dump thread had a pipe there: it
 * made a new one each time, then gave up after 20, and dumps ended; with
 * the write end alone closed its poll answered at once, for ever, a CPU
 * spinning.  It needs no descriptor now. */
static int closed_often(void)
{
	pthread_t t;
	pthread_create(&t, NULL, thousand, NULL);
	pthread_join(t, NULL);
	dump_thread_waits();
	for (int round = 0; round < 21; round++) {
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
		usleep(20000);
	}
	int state = dump_thread_waits();
	printf("closed 21 times, dump thread %s\n",
	       state == -1 ? "absent" : state == 1 ? "waits" : "busy");
	long before = cpu_ms();
	sleep(1);
	printf("a second after: %s\n", cpu_ms() - before < 500 ? "idle" : "busy");
	const char *out = getenv("MUTEXSTAT_OUTPUT");
	if (out && state != -1)
		printf("the dump signal: %s\n", dump_written(out) ? "dumped" : "nothing");
	return 0;
}

static int closed_all(void)
{
	pthread_t t;
	atexit(print_total);
	pthread_create(&t, NULL, thousand, NULL);
	pthread_join(t, NULL);
	const char *out = getenv("MUTEXSTAT_OUTPUT");
	int state = dump_thread_waits();
	for (int fd = 3; fd < 1024; fd++)
		close(fd);
	/* the dump thread needs no descriptor: it writes the dump at once */
	if (state != -1 && out)
		dump_written(out);
	pthread_mutex_lock(&go);
	pthread_create(&t, NULL, thousand, NULL);
	printf("main leaves\n");
	fflush(stdout);
	pthread_mutex_unlock(&go);
	pthread_exit(NULL);
}

/* ---- exit() from a signal handler ------------------------------------- */

static void exit_3(int sig)
{
	(void)sig;
	exit(3);
}

static pid_t main_tid;
static pthread_t main_thread;

/* Whether thread tid is inside write(2) now (its /proc syscall line). */
static int in_write(pid_t tid)
{
	char path[64], line[64] = "";
	snprintf(path, sizeof path, "/proc/self/task/%d/syscall", (int)tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	if (!fgets(line, sizeof line, f))
		line[0] = 0;
	fclose(f);
	return atoi(line) == SYS_write && line[0] != '-';
}

static void *interrupter(void *arg)
{
	struct timespec nap = { 0, 1000000 };
	while (!in_write(main_tid))
		nanosleep(&nap, NULL);
	pthread_kill(main_thread, SIGTERM);
	return arg;
}

static int handler_in_report(void)
{
	int fd[2];
	if (pipe(fd) != 0)
		return 1;
	(void)fcntl(fd[1], F_SETPIPE_SZ, 4096);
	fcntl(fd[1], F_SETFL, O_NONBLOCK);
	char block[512];
	memset(block, 'x', sizeof block);
	while (write(fd[1], block, sizeof block) > 0)
		;
	fcntl(fd[1], F_SETFL, 0); /* full: the next write blocks */
	for (int i = 0; i < 10; i++) {
		pthread_mutex_lock(&shared);
		pthread_mutex_unlock(&shared);
	}
	signal(SIGTERM, exit_3);
	main_tid = (pid_t)syscall(SYS_gettid);
	main_thread = pthread_self();
	pthread_t t;
	pthread_create(&t, NULL, interrupter, NULL);
	printf("blocked writing\n");
	fflush(stdout);
	int (*dump)(int) = (int (*)(int))dlsym(RTLD_DEFAULT, "mutexstat_dump");
	if (dump)
		dump(fd[1]);
	else if (write(fd[1], block, sizeof block) < 0)
		return 1;
	return 0; /* never: the handler exits */
}

static int daemon_in(const char *dir)
{
	if (fork() != 0)
		return 0;
	setsid();
	if (fork() != 0)
		_exit(0);
	if (chdir(dir) != 0)
		_exit(1);
	for (int fd = 0; fd < 1024; fd++)
		close(fd);
	int null = open("/dev/null", O_RDWR);
	dup2(null, 1);
	dup2(null, 2);
	for (int i = 0; i < 100; i++) {
		pthread_mutex_lock(&shared);
		pthread_mutex_unlock(&shared);
	}
	return 0;
}

static void exit_4(int sig)
{
	(void)sig;
	exit(4);
}

static int handler_in_pause(void)
{
	pthread_t t;
	pthread_create(&t, NULL, thousand, NULL);
	pthread_join(t, NULL);
	signal(SIGALRM, exit_4);
	alarm(1);
	for (;;)
		pause();
}

static int in_phdr(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)info;
	(void)size;
	(void)arg;
	raise(SIGTERM); /* the handler exits */
	return 1;
}

static int handler_in_phdr(void)
{
	pthread_t t;
	pthread_create(&t, NULL, thousand, NULL);
	pthread_join(t, NULL);
	signal(SIGTERM, exit_3);
	printf("iterating\n");
	fflush(stdout);
	dl_iterate_phdr(in_phdr, NULL);
	return 0; /* never: the handler exits */
}

static void *busy(void *arg)
{
	for (;;) {
		pthread_mutex_t *m = malloc(sizeof *m);
		pthread_mutex_init(m, NULL);
		pthread_mutex_lock(m);
		pthread_mutex_lock(&shared); /* a new lock-order edge each life */
		pthread_mutex_unlock(&shared);
		pthread_mutex_unlock(m);
		pthread_mutex_destroy(m);
		free(m);
	}
	return arg;
}

static int timer_exit(long usec)
{
	signal(SIGALRM, exit_3);
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, busy, NULL);
	struct itimerval it = { { 0, 0 }, { usec / 1000000, usec % 1000000 } };
	setitimer(ITIMER_REAL, &it, NULL);
	busy(NULL);
	return 0;
}

static pthread_barrier_t both;

static void *exits_too(void *arg)
{
	for (int i = 0; i < 1000; i++) {
		pthread_mutex_lock(&shared);
		total++;
		pthread_mutex_unlock(&shared);
	}
	pthread_barrier_wait(&both);
	exit(3);
	return arg;
}

static int two_exits(void)
{
	pthread_barrier_init(&both, NULL, 2);
	pthread_t t;
	pthread_create(&t, NULL, exits_too, NULL);
	pthread_barrier_wait(&both);
	exit(3);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	long n = argc > 2 ? atol(argv[2]) : 0;
	if (!strcmp(mode, "main-pthread-exit"))
		return main_pthread_exit(n);
	if (!strcmp(mode, "alone-pthread-exit"))
		return alone_pthread_exit();
	if (!strcmp(mode, "last-holds"))
		return last_holds();
	if (!strcmp(mode, "closed-all"))
		return closed_all();
	if (!strcmp(mode, "closed-at-end"))
		return closed_at_end();
	if (!strcmp(mode, "closed-often"))
		return closed_often();
	if (!strcmp(mode, "handler-in-report"))
		return handler_in_report();
	if (!strcmp(mode, "daemon") && argc > 2)
		return daemon_in(argv[2]);
	if (!strcmp(mode, "handler-in-pause"))
		return handler_in_pause();
	if (!strcmp(mode, "handler-in-phdr"))
		return handler_in_phdr();
	if (!strcmp(mode, "timer-exit"))
		return timer_exit(n);
	if (!strcmp(mode, "two-exits"))
		return two_exits();
	fprintf(stderr, "usage: exit_paths MODE [N] (see the file)\n");
	return 2;
}
