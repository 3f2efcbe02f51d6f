/* crash.c - programs that die of a fatal signal, for tests/crash.sh.
 *
 *   crash MODE
 *
 * Each mode locks the mutex `held` (and keeps it), prints "before the
 * crash" on stdout, then:
 *   segv         writes to address 0x10 (SIGSEGV, a fault)
 *   segv-thread  the same in a second thread, which holds `held`
 *   segv-two     two threads write to address 0x10 at the same moment
 *   abort        abort() (SIGABRT, raised by the process itself)
 *   bus          touches a page of an empty file it mapped (SIGBUS)
 *   fpe          divides by zero (SIGFPE)
 *   ill          executes an invalid instruction (SIGILL)
 *   bad-mutex    locks a mutex at address 0x10: glibc faults inside the
 *                library's pthread_mutex_lock
 *   fork-segv    a child made by fork (no exec) writes to address 0x10; the
 *                parent prints how the child ended, and exits 0
 *   vfork-segv [abort]  the same with vfork: the child, in its parent's
 *                memory, faults before any exec; with "abort" the parent
 *                then aborts
 *   vfork-exit [exit]  takes two mutexes in both orders (a POTENTIAL
 *                DEADLOCK), then a vfork child whose exec fails calls
 *                exit(3), not _exit: it runs the parent's exit handlers;
 *                the parent prints how the child ended, and returns 0 from
 *                main (with "exit": calls exit(0))
 *   wait         prints "ready" and waits to be killed
 *   own-after    installs its own SIGSEGV handler (it prints "own handler"
 *                and exits 42), then segv
 *   own-chain    installs its own SIGSEGV handler that prints "own handler"
 *                and passes the signal on to the handler it replaced, then
 *                segv
 *   stuck FIFO   asks for a live dump (SIGUSR1) written to the FIFO, which
 *                it opens for reading and never reads, waits until that
 *                pipe is full (the dump thread is stuck), then segv
 *   dispositions prints the action of each fatal signal and exits
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t both;

static void say(const char *s)
{
	fputs(s, stdout);
	fflush(stdout);
}

static void fault(void)
{
	volatile int *volatile at = (volatile int *)16;
	*at = 1; /* CRASH_FAULT */
}

static void *crash_thread(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&held); /* CRASH_THREAD_HELD */
	say("before the crash\n");
	fault();
	return NULL;
}

static void *crash_twice(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&both);
	fault();
	return NULL;
}

static struct sigaction replaced;

static void own_exit(int sig)
{
	(void)sig;
	static const char msg[] = "own handler\n";
	if (write(1, msg, sizeof msg - 1) < 0) {
	}
	_exit(42);
}

static void own_chain(int sig, siginfo_t *si, void *uc)
{
	static const char msg[] = "own handler\n";
	if (write(1, msg, sizeof msg - 1) < 0) {
	}
	if (replaced.sa_flags & SA_SIGINFO)
		replaced.sa_sigaction(sig, si, uc);
	else if (replaced.sa_handler == SIG_DFL)
		signal(sig, SIG_DFL); /* returning faults again, by default */
	else if (replaced.sa_handler != SIG_IGN)
		replaced.sa_handler(sig);
}

static void dispositions(void)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
	for (unsigned i = 0; i < 5; i++) {
		struct sigaction cur;
		sigaction(sigs[i], NULL, &cur);
		printf("SIG%s %s\n", sigabbrev_np(sigs[i]),
		       cur.sa_handler == SIG_DFL ? "default"
		       : cur.sa_handler == SIG_IGN ? "ignored" : "handled");
	}
}

static void stuck(const char *fifo)
{
	int fd = open(fifo, O_RDONLY | O_NONBLOCK);
	if (fd < 0) {
		perror(fifo);
		exit(2);
	}
	/* a report long enough to fill the pipe (64 KiB, less the ends of
	 * writes that did not fit): a few thousand mutexes */
	static pthread_mutex_t many[3000];
	for (int i = 0; i < 3000; i++) {
		pthread_mutex_init(&many[i], NULL);
		pthread_mutex_lock(&many[i]);
		pthread_mutex_unlock(&many[i]);
	}
	raise(SIGUSR1);
	int queued = 0;
	for (int i = 0; i < 2000 && queued < 60000; i++) { /* up to 20 s */
		usleep(10000);
		if (ioctl(fd, FIONREAD, &queued) != 0)
			queued = 0;
	}
	fault();
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	const char *mode = argv[1];
	if (!strcmp(mode, "dispositions")) {
		dispositions();
		return 0;
	}
	if (!strcmp(mode, "segv-thread")) {
		pthread_t t;
		pthread_create(&t, NULL, crash_thread, NULL);
		pthread_join(t, NULL);
		return 1;
	}
	pthread_mutex_lock(&held); /* CRASH_HELD */
	if (!strcmp(mode, "wait")) {
		say("before the crash\nready\n");
		for (;;)
			pause();
	}
	if (!strcmp(mode, "own-after")) {
		signal(SIGSEGV, own_exit);
	} else if (!strcmp(mode, "own-chain")) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_sigaction = own_chain;
		sa.sa_flags = SA_SIGINFO;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGSEGV, &sa, &replaced);
	}
	say("before the crash\n");
	if (!strcmp(mode, "segv") || !strcmp(mode, "own-after") ||
	    !strcmp(mode, "own-chain")) {
		fault();
	} else if (!strcmp(mode, "segv-two")) {
		pthread_t a, b;
		pthread_barrier_init(&both, NULL, 2);
		pthread_create(&a, NULL, crash_twice, NULL);
		pthread_create(&b, NULL, crash_twice, NULL);
		pthread_join(a, NULL);
	} else if (!strcmp(mode, "abort")) {
		abort();
	} else if (!strcmp(mode, "bus")) {
		char path[] = "/tmp/crash-bus.XXXXXX";
		int fd = mkstemp(path);
		unlink(path);
		volatile char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED)
			return 3;
		p[0] = 1; /* beyond the end of the (empty) file */
	} else if (!strcmp(mode, "fpe")) {
		volatile int seven = 7, zero = 0;
		printf("%d\n", seven / zero);
	} else if (!strcmp(mode, "ill")) {
		__builtin_trap();
	} else if (!strcmp(mode, "fork-segv")) {
		pid_t child = fork();
		if (child == 0)
			fault();
		int status;
		waitpid(child, &status, 0);
		printf("child: %s\n", WIFSIGNALED(status) ? sigabbrev_np(WTERMSIG(status)) : "exit");
		return 0;
	} else if (!strcmp(mode, "vfork-segv")) {
		pid_t child = vfork();
		if (child == 0)
			fault();
		int status;
		waitpid(child, &status, 0);
		printf("child: %s\n", WIFSIGNALED(status) ? sigabbrev_np(WTERMSIG(status)) : "exit");
		fflush(stdout);
		if (argc > 2 && !strcmp(argv[2], "abort"))
			abort();
		return 0;
	} else if (!strcmp(mode, "vfork-exit")) {
		static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;
		pthread_mutex_unlock(&held); /* no guard: the orders can deadlock */
		pthread_mutex_lock(&a);
		pthread_mutex_lock(&b);
		pthread_mutex_unlock(&b);
		pthread_mutex_unlock(&a);
		pthread_mutex_lock(&b);
		pthread_mutex_lock(&a);
		pthread_mutex_unlock(&a);
		pthread_mutex_unlock(&b);
		fflush(stdout);
		pid_t child = vfork();
		if (child == 0) {
			execl("/nonexistent/mutexstat-test", "x", (char *)NULL);
			exit(3);
		}
		int status;
		waitpid(child, &status, 0);
		printf("child: exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		if (argc > 2 && !strcmp(argv[2], "exit"))
			exit(0);
		return 0;
	} else if (!strcmp(mode, "bad-mutex")) {
		pthread_mutex_t *volatile bad = (pthread_mutex_t *)16;
		pthread_mutex_lock(bad);
	} else if (!strcmp(mode, "stuck") && argc > 2) {
		stuck(argv[2]);
	}
	return 1; /* not reached */
}
