/* signals.c - programs that use signals their own way, or end without
 * exit(), for tests/signals.sh.
 *
 *   signals MODE
 *
 *   own-usr1     installs its own SIGUSR1 handler, raises SIGUSR1 three
 *                times, prints how often its handler ran
 *   raise-usr1   raises SIGUSR1, then prints "after raise"
 *   vfork-usr1   a vfork child sets SIGUSR1's default (as before an exec),
 *                then execs true; then the parent raises SIGUSR1
 *   sigwait      blocks every signal, then starts a thread that locks a
 *                mutex; prints "ready" and takes SIGUSR1 with sigwait
 *   sigwait-inherited  the same, with the signals blocked by its parent
 *   blocked-hang blocks every signal; one thread takes a mutex and sleeps
 *                in sigwait (SIGTERM), another waits for that mutex;
 *                prints "ready" and waits to be killed
 *   sigwait-any  blocks every signal; one thread takes a mutex and waits
 *                in sigwaitinfo for any signal, prints the one it got and
 *                unlocks; another waits for the mutex; prints "ready"
 *   blocked-spin the same, but the holder runs (a loop) instead of
 *                sleeping: only a signal could ask it where it is
 *   own-rtmax    installs its own SIGRTMAX-3 handler; one thread takes a
 *                mutex and reads a line from stdin, another waits for the
 *                mutex; prints "ready"; once the line came, prints how
 *                often its SIGRTMAX-3 handler ran
 *   own-rtmax-spin  the same, with a holder that runs (a loop) until the
 *                main thread has read the line
 *   sees-usr1    prints what sigaction and signal say SIGUSR1 and
 *                SIGRTMAX-3 do, installs its own SIGUSR1 handler and
 *                puts back the disposition it replaced, raises SIGUSR1
 *   _exit        locks a mutex in a thread, prints a line, _exit(3)
 *   quick_exit   the same with quick_exit(4); an at_quick_exit handler
 *                locks and unlocks n, prints a line
 *   thread-exit  the same with exit(5) from the thread (exit handlers run)
 *   abba-_exit   takes m then n, then n then m (a lock-order inversion),
 *                prints a line, _exit(0)
 *   abba-quick_exit  takes m then n; an at_quick_exit handler takes n
 *                then m (the inversion); quick_exit(0)
 *   fork-_exit   locks m; a fork child locks it too and ends with _exit(6);
 *                the parent waits for it, prints its status, returns 0
 *   term-_exit   a SIGTERM handler of its own ends the process with
 *                _exit(7); main locks m, raises SIGTERM
 *   nothing-_exit  locks nothing, _exit(8)
 *   handler-locks  three threads make, nest and destroy pairs of mutexes
 *                (a new lock-order edge each time) under a storm of
 *                SIGUSR2 whose handler locks and unlocks one mutex, for
 *                MS milliseconds (argv[2]); prints how many pairs and
 *                "ok" -- with a handler that interrupted the library's
 *                edge bookkeeping, that mutex's holder waited for it
 *                for ever
 *   handler-timer  an interval timer sends the process SIGALRM every
 *                200 us for MS milliseconds (argv[2]), whose handler locks
 *                one mutex and makes, locks and destroys another under
 *                it; two threads take a mutex of their own and make new
 *                ones under it; main sleeps, then prints "ok" -- with the
 *                library's wait for its own lock (a second, then 2 ms
 *                each) in the handler, while the thread that held that
 *                lock was stopped in a handler waiting for the first
 *                mutex, main ran nothing but handlers: it hung every run
 *   altstack     a SIGUSR2 handler on an alternate stack of argv[2]
 *                bytes locks two mutexes it never locked before (their
 *                first use: where the library captures a stack), twice;
 *                prints "got 2" -- on an 8 KB one (SIGSTKSZ) the first
 *                stack capture, libunwind's, overflowed it
 *   altstack-contended  the same on a SIGUSR2 handler that locks m while
 *                another thread holds it (a wait: a capture), then prints
 *                "got 1" -- on a 4 KB one the capture's walk went below
 *                the stack
 *   altstack-dump  a thread runs a SIGUSR2 handler on an alternate stack
 *                of argv[2] bytes holding m, which another thread waits
 *                for, until the report argv[3] is there (a watchdog's live
 *                dump); prints "ok" -- asked where it was, the thread on a
 *                6 KB one died
 *   seccomp-ask  as altstack-dump, on the thread's own stack, in a process
 *                whose seccomp filter refuses tgkill (EPERM) in every
 *                thread: the dump cannot ask the holder where it is;
 *                exits 77 if the filter cannot be set
 *   handler-steps  single-steps (x86-64's trap flag) through lock and
 *                unlock pairs -- plain, nested, a read lock -- with a
 *                SIGTRAP handler that locks and unlocks a mutex of its own
 *                between every two instructions; then takes a mutex the
 *                handler's is known to be taken under; prints "ok" and
 *                how many steps (exits 77 elsewhere than x86-64) -- where
 *                the handler came between the library's writes of a
 *                held-set entry, its mutex stayed in the thread's held
 *                set, a false POTENTIAL DEADLOCK
 *   stop-world   a garbage collector's stop-the-world: a thread makes,
 *                nests and destroys mutexes and read-write locks; main,
 *                for MS milliseconds (argv[2]), parks it again and again
 *                in a SIGPWR handler that waits on a semaphore, and while
 *                it is parked makes, locks and destroys locks of its own;
 *                prints "ok" -- with the thread parked inside the
 *                library holding the lock of its record pool or of its
 *                read-write locks' slots, main waited for it for ever
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "new_edges.h"
#include "proc_wait.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t n = PTHREAD_MUTEX_INITIALIZER;
static volatile sig_atomic_t ran;
static int go[2]; /* a holder says it has the mutex */

static void count(int sig)
{
	(void)sig;
	ran++;
}

static void say(const char *s)
{
	fputs(s, stdout);
	fflush(stdout);
}

static void *lock_once(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	return NULL;
}

/* Takes the mutex, then waits in sigwait for a signal nobody sends. */
static void *hold_and_sleep(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	write(go[1], "x", 1);
	sigset_t term;
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	int sig;
	sigwait(&term, &sig);
	return NULL;
}

/* Takes the mutex, waits in sigwaitinfo for any signal (a program's
 * signal thread), says which one came, then unlocks. */
static void *hold_and_sigwait_any(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	write(go[1], "x", 1);
	sigset_t all;
	sigfillset(&all);
	siginfo_t si;
	int sig = sigwaitinfo(&all, &si);
	if (sig == SIGRTMAX - 3)
		printf("sigwaitinfo got SIGRTMAX-3\n");
	else
		printf("sigwaitinfo got SIG%s\n", sig > 0 ? sigabbrev_np(sig) : "?");
	fflush(stdout);
	pthread_mutex_unlock(&m);
	return NULL;
}

/* Takes the mutex, then runs until told to stop. */
static volatile int stop_spinning;

static void *hold_and_spin(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	write(go[1], "x", 1);
	while (!stop_spinning)
		;
	pthread_mutex_unlock(&m);
	return NULL;
}

/* Takes the mutex, then waits for a line on stdin. */
static void *hold_and_read(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	write(go[1], "x", 1);
	char line[64];
	if (!fgets(line, sizeof line, stdin)) {
	}
	pthread_mutex_unlock(&m);
	return NULL;
}

static void term_exit(int sig)
{
	(void)sig;
	_exit(7);
}

static void block_all(void)
{
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
}

static void lock_n_at_quick_exit(void)
{
	pthread_mutex_lock(&n);
	pthread_mutex_unlock(&n);
	say("at_quick_exit handler\n");
}

static void lock_nm_at_quick_exit(void)
{
	pthread_mutex_lock(&n);
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	pthread_mutex_unlock(&n);
}

static void *ending(void *arg)
{
	const char *how = arg;
	pthread_mutex_lock(&m);
	say("before the end\n");
	if (!strcmp(how, "_exit"))
		_exit(3);
	if (!strcmp(how, "quick_exit"))
		quick_exit(4);
	exit(5);
}

/* A holder (which writes to go once it has taken m), then a thread that
 * waits for m; "ready" once both are on their way.  2 if go fails. */
static int holder_then_waiter(void *(*holder)(void *), pthread_t *a, pthread_t *b)
{
	if (pipe(go) != 0)
		return 2;
	pthread_create(a, NULL, holder, NULL);
	char c;
	if (read(go[0], &c, 1) != 1)
		return 2;
	pthread_create(b, NULL, lock_once, NULL);
	say("ready\n");
	return 0;
}

static const char *disposition(void (*h)(int))
{
	return h == SIG_DFL ? "default" : h == SIG_IGN ? "ignored" : "a handler";
}

/* What the program sees of SIGUSR1 and SIGRTMAX-3, then a save and
 * restore of SIGUSR1 around a handler of its own. */
static void sees_usr1(void)
{
	struct sigaction now, mine, saved;
	sigaction(SIGUSR1, NULL, &now);
	printf("sigaction: SIGUSR1 %s\n", disposition(now.sa_handler));
	sigaction(SIGRTMAX - 3, NULL, &now);
	printf("sigaction: SIGRTMAX-3 %s\n", disposition(now.sa_handler));
	void (*before)(int) = signal(SIGUSR1, count);
	printf("signal: SIGUSR1 was %s\n", disposition(before));
	signal(SIGUSR1, before);
	memset(&mine, 0, sizeof mine);
	mine.sa_handler = count;
	sigaction(SIGUSR1, &mine, &saved);
	printf("sigaction: SIGUSR1 was %s\n", disposition(saved.sa_handler));
	sigaction(SIGUSR1, &saved, NULL);
	lock_once(NULL);
	fflush(stdout);
	raise(SIGUSR1); /* the default again: the end of the process */
	say("after raise\n");
}

/* handler-locks */
static pthread_mutex_t in_handler = PTHREAD_MUTEX_INITIALIZER;
static volatile long handled;
static volatile int storm_over;

static void lock_in_handler(int sig)
{
	(void)sig;
	pthread_mutex_lock(&in_handler);
	handled++;
	pthread_mutex_unlock(&in_handler);
}

static void *new_edges(void *arg)
{
	(void)arg;
	return (void *)new_edge_pairs(&storm_over);
}

static void handler_locks(long ms)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = lock_in_handler;
	sigaction(SIGUSR2, &sa, NULL);
	pthread_t t[3];
	for (int i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, new_edges, NULL);
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		for (int i = 0; i < 3; i++)
			pthread_kill(t[i], SIGUSR2);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((now.tv_sec - start.tv_sec) * 1000 +
			 (now.tv_nsec - start.tv_nsec) / 1000000 < ms);
	storm_over = 1;
	long pairs = 0;
	for (int i = 0; i < 3; i++) {
		void *n;
		pthread_join(t[i], &n);
		pairs += (long)n;
	}
	printf("%s\n", pairs > 0 ? "ok" : "no pairs");
}

/* handler-timer */
static pthread_mutex_t timer_handlers = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t timer_workers = PTHREAD_MUTEX_INITIALIZER;

static void make_one_under(pthread_mutex_t *outer)
{
	pthread_mutex_t x;
	pthread_mutex_lock(outer);
	pthread_mutex_init(&x, NULL);
	pthread_mutex_lock(&x);
	pthread_mutex_unlock(&x);
	pthread_mutex_destroy(&x);
	pthread_mutex_unlock(outer);
}

static void on_timer(int sig)
{
	(void)sig;
	make_one_under(&timer_handlers);
	handled++;
}

static void *under_timer(void *arg)
{
	(void)arg;
	long made = 0;
	while (!storm_over) {
		make_one_under(&timer_workers);
		made++;
	}
	return (void *)made;
}

static void handler_timer(long ms)
{
	signal(SIGALRM, on_timer);
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, under_timer, NULL);
	struct itimerval every = { { 0, 200 }, { 0, 200 } }, off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_REAL, &every, NULL);
	struct timespec left = { ms / 1000, ms % 1000 * 1000000 };
	while (nanosleep(&left, &left))
		;
	setitimer(ITIMER_REAL, &off, NULL);
	storm_over = 1;
	long made = 0;
	for (int i = 0; i < 2; i++) {
		void *n;
		pthread_join(t[i], &n);
		made += (long)n;
	}
	printf("%s\n", made > 0 ? "ok" : "none made");
}

/* altstack */
static pthread_mutex_t first_a = PTHREAD_MUTEX_INITIALIZER, first_b;
static volatile int got;

static void lock_two(int sig)
{
	(void)sig;
	pthread_mutex_lock(&first_a);
	pthread_mutex_lock(&first_b);
	got++;
	pthread_mutex_unlock(&first_b);
	pthread_mutex_unlock(&first_a);
}

static void set_altstack(long size)
{
	/* a guard page below it: an overflow is a SIGSEGV, not a write
	 * into whatever lies there */
	char *p = mmap(NULL, (size_t)size + 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED || mprotect(p, 4096, PROT_NONE) != 0)
		exit(2);
	stack_t ss = { .ss_sp = p + 4096, .ss_size = (size_t)size, .ss_flags = 0 };
	if (sigaltstack(&ss, NULL) != 0)
		exit(2);
}

static void on_signal(int sig, void (*handler)(int))
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sa.sa_flags = SA_ONSTACK;
	sigaction(sig, &sa, NULL);
}

static void on_altstack(long size)
{
	pthread_mutexattr_t attr;
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&first_b, &attr);
	set_altstack(size);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = lock_two;
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR2, &sa, NULL);
	raise(SIGUSR2);
	raise(SIGUSR2);
	printf("got %d\n", got);
}

/* altstack-contended */
static void lock_m(int sig)
{
	(void)sig;
	pthread_mutex_lock(&m);
	got++;
	pthread_mutex_unlock(&m);
}

static pid_t main_tid;

static void *hold_m_until_waited(void *arg)
{
	pthread_mutex_lock(&m);
	while (!sleeps_on_futex(main_tid, &m))
		usleep(1000);
	pthread_mutex_unlock(&m);
	return arg;
}

static void contended_on_altstack(long size)
{
	pthread_t t;
	pthread_mutex_lock(&m); /* its first use, and lazy binding: on this stack */
	pthread_mutex_unlock(&m);
	main_tid = (pid_t)syscall(SYS_gettid);
	set_altstack(size);
	on_signal(SIGUSR2, lock_m);
	pthread_create(&t, NULL, hold_m_until_waited, NULL);
	while (pthread_mutex_trylock(&m) == 0) {
		pthread_mutex_unlock(&m); /* not taken yet */
		usleep(1000);
	}
	raise(SIGUSR2);
	pthread_join(t, NULL);
	printf("got %d\n", got);
}

/* altstack-dump */
static volatile int dump_held, dump_over;

/* Holds m, running, until the dump is over. */
static void hold_m_until_over(void)
{
	pthread_mutex_lock(&m);
	dump_held = 1;
	while (!dump_over)
		; /* running, holding m */
	pthread_mutex_unlock(&m);
}

static void hold_m_running(int sig)
{
	(void)sig;
	hold_m_until_over(); /* on the alternate stack */
}

static void *on_small_altstack(void *arg)
{
	set_altstack((long)arg);
	pthread_mutex_lock(&m); /* lazy binding, on the thread's own stack */
	pthread_mutex_unlock(&m);
	raise(SIGUSR2);
	return NULL;
}

static void *wait_for_m(void *arg)
{
	while (!dump_held)
		usleep(1000);
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	return arg;
}

/* holder (a thread) holds m while another waits for it, until the
 * watchdog's dump is written to report, or 20 s; prints "ok". */
static void dump_while_held(void *(*holder)(void *), void *arg, const char *report)
{
	pthread_t t, w;
	pthread_create(&t, NULL, holder, arg);
	pthread_create(&w, NULL, wait_for_m, NULL);
	for (int i = 0; i < 2000 && access(report, F_OK) != 0; i++)
		usleep(10000);
	usleep(200000); /* written whole */
	dump_over = 1;
	pthread_join(t, NULL);
	pthread_join(w, NULL);
	puts("ok");
}

static void dump_on_altstack(long size, const char *report)
{
	on_signal(SIGUSR2, hold_m_running);
	dump_while_held(on_small_altstack, (void *)size, report);
}

/* seccomp-ask */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

static void *hold_m_spinning(void *arg)
{
	hold_m_until_over();
	return arg;
}

static int dump_without_tgkill(const char *report)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_tgkill, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof f / sizeof f[0], f };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0)
		return 77;
	dump_while_held(hold_m_spinning, NULL, report);
	return 0;
}

/* stop-world */
#include <semaphore.h>
static sem_t parked, resume;
static volatile int world_over;

static void park(int sig)
{
	(void)sig;
	sem_post(&parked);
	while (sem_wait(&resume) != 0)
		;
}

static void make_locks(int n, int nest)
{
	pthread_mutex_t m[64];
	pthread_rwlock_t rw[4];
	for (int i = 0; i < n; i++) {
		pthread_mutex_init(&m[i], NULL);
		pthread_mutex_lock(&m[i]);
		if (nest && i) { /* a new lock-order edge */
			pthread_mutex_lock(&m[i - 1]);
			pthread_mutex_unlock(&m[i - 1]);
		}
		pthread_mutex_unlock(&m[i]);
	}
	for (int i = 0; i < n; i++)
		pthread_mutex_destroy(&m[i]);
	for (int i = 0; i < 4; i++) {
		pthread_rwlock_init(&rw[i], NULL);
		pthread_rwlock_rdlock(&rw[i]);
		pthread_rwlock_unlock(&rw[i]);
		pthread_rwlock_wrlock(&rw[i]);
		pthread_rwlock_unlock(&rw[i]);
		pthread_rwlock_destroy(&rw[i]);
	}
}

static void *world(void *arg)
{
	(void)arg;
	while (!world_over)
		make_locks(64, 1);
	return NULL;
}

static void stop_world(long ms)
{
	sem_init(&parked, 0, 0);
	sem_init(&resume, 0, 0);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = park;
	sigfillset(&sa.sa_mask);
	sigaction(SIGPWR, &sa, NULL);
	pthread_t t;
	pthread_create(&t, NULL, world, NULL);
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	long stops = 0;
	do {
		pthread_kill(t, SIGPWR);
		while (sem_wait(&parked) != 0)
			;
		make_locks(16, 0);
		sem_post(&resume);
		stops++;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((now.tv_sec - start.tv_sec) * 1000 +
			 (now.tv_nsec - start.tv_nsec) / 1000000 < ms);
	world_over = 1;
	pthread_join(t, NULL);
	printf("%s\n", stops > 0 ? "ok" : "no stops");
}

/* handler-steps */
static pthread_mutex_t stepped = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t stepped_rw = PTHREAD_RWLOCK_INITIALIZER;
static volatile int stepping;
static volatile long steps;

#if defined(__x86_64__)
#define TRAP_FLAG 0x100 /* EFLAGS.TF: a SIGTRAP after each instruction */

/* Between every two instructions while stepping: lock and unlock
 * in_handler.  The kernel runs the handler with the flag off and puts it
 * back at its return; once stepping is over the handler takes it off. */
static void step_trap(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	(void)sig;
	(void)si;
	if (!stepping) {
		uc->uc_mcontext.gregs[REG_EFL] &= ~TRAP_FLAG;
		return;
	}
	pthread_mutex_lock(&in_handler);
	steps++;
	pthread_mutex_unlock(&in_handler);
}

static void step_on(void)
{
	stepping = 1;
	__asm__ volatile("pushfq; orq $0x100, (%%rsp); popfq" ::: "memory", "cc");
}

static void step_off(void)
{
	stepping = 0; /* the next trap takes the flag off */
}

static int handler_steps(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = step_trap;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGTRAP, &sa, NULL);
	/* every lock known first (no first use, no stack capture stepped),
	 * and in_handler taken under m: a true order, which a false one the
	 * other way round would close into a cycle */
	pthread_rwlock_rdlock(&stepped_rw);
	pthread_mutex_lock(&stepped);
	pthread_mutex_lock(&m);
	pthread_mutex_lock(&in_handler);
	pthread_mutex_unlock(&in_handler);
	pthread_mutex_unlock(&m);
	pthread_mutex_unlock(&stepped);
	pthread_rwlock_unlock(&stepped_rw);
	for (int i = 0; i < 2; i++) {
		step_on();
		pthread_mutex_lock(&m); /* the plain case */
		pthread_mutex_unlock(&m);
		pthread_rwlock_rdlock(&stepped_rw); /* a read, nested */
		pthread_mutex_lock(&stepped);
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
		pthread_mutex_unlock(&stepped);
		pthread_rwlock_unlock(&stepped_rw);
		step_off();
	}
	/* in_handler left in the held set: an edge from it to m */
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	printf("ok%s\n", steps > 100 ? ", stepped" : ", not stepped");
	return 0;
}
#else
static int handler_steps(void)
{
	return 77;
}
#endif

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	const char *mode = argv[1];
	pthread_t a, b;
	if (!strcmp(mode, "own-usr1")) {
		signal(SIGUSR1, count);
		for (int i = 0; i < 3; i++)
			raise(SIGUSR1);
		lock_once(NULL);
		printf("own handler ran %d times\n", (int)ran);
	} else if (!strcmp(mode, "vfork-usr1")) {
		lock_once(NULL);
		pid_t child = vfork();
		if (child == 0) {
			signal(SIGUSR1, SIG_DFL);
			execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
		int status;
		waitpid(child, &status, 0);
		raise(SIGUSR1);
		say("after raise\n");
	} else if (!strcmp(mode, "sees-usr1")) {
		sees_usr1();
	} else if (!strcmp(mode, "raise-usr1")) {
		lock_once(NULL);
		raise(SIGUSR1);
		say("after raise\n");
	} else if (!strcmp(mode, "sigwait") || !strcmp(mode, "sigwait-inherited")) {
		if (!strcmp(mode, "sigwait"))
			block_all();
		pthread_create(&a, NULL, lock_once, NULL);
		pthread_join(a, NULL);
		sigset_t usr1;
		sigemptyset(&usr1);
		sigaddset(&usr1, SIGUSR1);
		say("ready\n");
		int sig;
		sigwait(&usr1, &sig);
		printf("sigwait got SIG%s\n", sigabbrev_np(sig));
	} else if (!strcmp(mode, "blocked-exit") && argc > 2) {
		/* every signal blocked, then a normal exit once argv[2] exists
		 * (the test makes it after its kill -USR1) */
		block_all();
		pthread_create(&a, NULL, lock_once, NULL);
		pthread_join(a, NULL);
		say("ready\n");
		while (access(argv[2], F_OK) != 0)
			usleep(10000);
	} else if (!strcmp(mode, "blocked-hang") || !strcmp(mode, "blocked-spin")) {
		block_all();
		if (holder_then_waiter(strcmp(mode, "blocked-hang") ? hold_and_spin : hold_and_sleep,
				       &a, &b) != 0)
			return 2;
		pthread_join(b, NULL);
	} else if (!strcmp(mode, "sigwait-any")) {
		block_all();
		if (holder_then_waiter(hold_and_sigwait_any, &a, &b) != 0)
			return 2;
		pthread_join(a, NULL);
		pthread_join(b, NULL);
	} else if (!strcmp(mode, "own-rtmax")) {
		signal(SIGRTMAX - 3, count);
		if (holder_then_waiter(hold_and_read, &a, &b) != 0)
			return 2;
		pthread_join(a, NULL);
		pthread_join(b, NULL);
		printf("own SIGRTMAX-3 handler ran %d times\n", (int)ran);
	} else if (!strcmp(mode, "own-rtmax-spin")) {
		signal(SIGRTMAX - 3, count);
		if (holder_then_waiter(hold_and_spin, &a, &b) != 0)
			return 2;
		char line[64];
		if (!fgets(line, sizeof line, stdin)) {
		}
		stop_spinning = 1;
		pthread_join(a, NULL);
		pthread_join(b, NULL);
		printf("own SIGRTMAX-3 handler ran %d times\n", (int)ran);
	} else if (!strcmp(mode, "abba-_exit")) {
		pthread_mutex_lock(&m);
		pthread_mutex_lock(&n);
		pthread_mutex_unlock(&n);
		pthread_mutex_unlock(&m);
		pthread_mutex_lock(&n);
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
		pthread_mutex_unlock(&n);
		say("before the end\n");
		_exit(0);
	} else if (!strcmp(mode, "abba-quick_exit")) {
		at_quick_exit(lock_nm_at_quick_exit);
		pthread_mutex_lock(&m);
		pthread_mutex_lock(&n);
		pthread_mutex_unlock(&n);
		pthread_mutex_unlock(&m);
		say("before the end\n");
		quick_exit(0);
	} else if (!strcmp(mode, "fork-_exit")) {
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
		pid_t pid = fork();
		if (pid == 0) {
			pthread_mutex_lock(&m);
			pthread_mutex_unlock(&m);
			_exit(6);
		}
		int st = 0;
		waitpid(pid, &st, 0);
		printf("child exit %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	} else if (!strcmp(mode, "handler-locks") && argc > 2) {
		handler_locks(atol(argv[2]));
	} else if (!strcmp(mode, "handler-timer") && argc > 2) {
		handler_timer(atol(argv[2]));
	} else if (!strcmp(mode, "altstack") && argc > 2) {
		on_altstack(atol(argv[2]));
	} else if (!strcmp(mode, "altstack-contended") && argc > 2) {
		contended_on_altstack(atol(argv[2]));
	} else if (!strcmp(mode, "seccomp-ask") && argc > 2) {
		return dump_without_tgkill(argv[2]);
	} else if (!strcmp(mode, "altstack-dump") && argc > 3) {
		dump_on_altstack(atol(argv[2]), argv[3]);
	} else if (!strcmp(mode, "handler-steps")) {
		return handler_steps();
	} else if (!strcmp(mode, "stop-world") && argc > 2) {
		stop_world(atol(argv[2]));
	} else if (!strcmp(mode, "nothing-_exit")) {
		_exit(8);
	} else if (!strcmp(mode, "term-_exit")) {
		signal(SIGTERM, term_exit);
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
		raise(SIGTERM);
	} else if (!strcmp(mode, "_exit") || !strcmp(mode, "quick_exit") ||
		   !strcmp(mode, "thread-exit")) {
		if (!strcmp(mode, "quick_exit"))
			at_quick_exit(lock_n_at_quick_exit);
		pthread_create(&a, NULL, ending, (void *)mode);
		pthread_join(a, NULL);
	} else
		return 2;
	return 0;
}
