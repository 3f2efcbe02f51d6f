/* fork.c - fork and exec under the library, one scenario per mode, for
 * tests/fork.sh.  Every count the script checks is printed here, so the
 * script compares the report with what the program really did.
 *
 *   stress N     four threads lock hard -- a hot mutex, mutexes made and
 *                destroyed, one held for long stretches -- while the main
 *                thread forks N children, holding a mutex of its own across
 *                each fork; each child unlocks that mutex (the pthread_atfork
 *                pattern), locks one of its own 10 times and exits (every
 *                tenth child with exit(), writing its report; the others
 *                with _exit).  A child that hangs stops the run: the script
 *                runs it under timeout.
 *   counts       exact counts on both sides: the parent locks `shared` 100
 *                times, has a lock-order inversion and a thread that exits
 *                holding a mutex, and a thread holds `held` across the
 *                fork; the child locks `shared` 7 times and `own` 5 times;
 *                the parent then locks `shared` 50 more times.
 *   bare         _Fork, glibc's fork without fork handlers, from a process
 *                of one thread that locked `shared` 3 times and holds
 *                `across`: the child unlocks `across`, locks `shared` 4
 *                times, and says whose thread id glibc's owner field holds
 *                while it has `shared` ("owner self": its own, as glibc
 *                writes it), then exits with exit().
 *   usr1         the child locks `own` 3 times, says "child <pid> ready",
 *                and waits to be killed (the script sends it SIGUSR1 first).
 *   late FILE    the child locks nothing until FILE exists, then locks
 *                `own` once and waits to be killed (its dump thread starts
 *                at that call, or with another malloc than glibc's when
 *                fork() returns).
 *   daemon       daemon() (which forks inside glibc) keeps stdout; the
 *                daemon says "daemon <pid> ready" and waits to be killed.
 *   detach FILE  the child leaves the session (setsid), puts /dev/null on
 *                descriptors 0 to 2, as a daemon does, writes its pid to
 *                FILE and waits to be killed; the parent exits at once.
 *   closefds FILE  the child closes every descriptor above 2, as a child
 *                about to exec may, puts FILE on descriptors 3 to 63
 *                (the library's pipe had two of those numbers) and waits
 *                for SIGUSR2, then says "usr2" and exits: a dump signal
 *                sent before must not have written into FILE.
 *   hang         a thread holds `held` across the fork; the child locks it
 *                and never returns (nobody in the child can unlock it).
 *   readhang     the same with an rwlock two threads read across the fork;
 *                the child writes it and never returns.
 *   sharedheld WHO FILE  a process-shared mutex in MAP_SHARED memory is
 *                held at the fork -- by the forking thread (WHO "forker")
 *                or another thread (WHO "thread") -- and the child locks
 *                it: it waits until the parent's thread unlocks it, once
 *                FILE exists, and then has it ("child got it").
 *   sharedspin FILE  the same with a process-shared spin lock that a
 *                thread holds
 *   exec PROG... the parent (with a thread) forks; the child execs PROG.
 *   system CMD   the parent runs CMD with system() (posix_spawn inside).
 *   ownenv LIB PROG...  the child execs PROG with an environment the
 *                program made itself: only LD_PRELOAD=LIB in it.
 *   lock N       lock a mutex N times, then say whether the library is
 *                loaded here and what LD_PRELOAD is.
 *   capturing    a fork while another thread holds the dynamic linker's
 *                lock: a thread sits in a dl_iterate_phdr callback until
 *                the fork is over; a second thread's first lock, whose
 *                call stack the library captures, is made meanwhile (with
 *                libunwind's walk alone it waited for that lock, holding
 *                libunwind's); the main thread forks then, and the child
 *                locks a mutex of its own and calls exit(7).  A report
 *                written here first has opened libdw.
 *   loaderheld   the same with no report first and no second thread: the
 *                child's exit report must not open libdw, nor walk the
 *                modules, nor capture with libunwind. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t shared = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t own = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t across = PTHREAD_MUTEX_INITIALIZER; /* main holds it at each fork */

static volatile int stop, holding;

static void lock_n(pthread_mutex_t *m, int n)
{
	for (int i = 0; i < n; i++) {
		pthread_mutex_lock(m);
		pthread_mutex_unlock(m);
	}
}

/* How a child ended, in words. */
static const char *ended(int status)
{
	static char buf[64];
	if (WIFEXITED(status))
		snprintf(buf, sizeof buf, "exited %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, sizeof buf, "killed by SIG%s", sigabbrev_np(WTERMSIG(status)));
	else
		snprintf(buf, sizeof buf, "status %d", status);
	return buf;
}

static int wait_child(pid_t pid)
{
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return status;
}

/* ---- stress ----------------------------------------------------------- */

#define WORKERS 4
static unsigned long hot_count[WORKERS];

static void *worker(void *arg)
{
	long i = (long)arg;
	unsigned long n = 0;
	while (!stop) {
		pthread_mutex_t made;
		pthread_mutex_init(&made, NULL); /* the table's insert path */
		pthread_mutex_lock(&shared);     /* contended: stacks, blame */
		pthread_mutex_lock(&made);       /* a lock-order edge */
		pthread_mutex_unlock(&made);
		pthread_mutex_unlock(&shared);
		pthread_mutex_destroy(&made);    /* the table's removal path */
		n++;
		if (i == 0 && n % 64 == 0) { /* one thread holds `held` a while */
			pthread_mutex_lock(&held);
			holding = 1;
			for (volatile int k = 0; k < 20000; k++)
				;
			holding = 0;
			pthread_mutex_unlock(&held);
		}
	}
	hot_count[i] = n;
	return NULL;
}

static int stress(int forks)
{
	pthread_t t[WORKERS];
	for (long i = 0; i < WORKERS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	int ok = 0, reports = 0;
	for (int k = 0; k < forks; k++) {
		pthread_mutex_lock(&across);
		pid_t pid = fork();
		if (pid == 0) {
			pthread_mutex_unlock(&across); /* as a pthread_atfork child handler would */
			lock_n(&own, 10);
			if (k % 10 == 0)
				exit(0); /* the exit report */
			_exit(0);
		}
		pthread_mutex_unlock(&across);
		if (pid < 0) {
			perror("fork");
			break;
		}
		int status = wait_child(pid);
		ok += WIFEXITED(status) && WEXITSTATUS(status) == 0;
		reports += k % 10 == 0;
	}
	stop = 1;
	unsigned long total = 0;
	for (int i = 0; i < WORKERS; i++) {
		pthread_join(t[i], NULL);
		total += hot_count[i];
	}
	printf("%d of %d children exited 0\n", ok, forks);
	printf("shared %p locked %lu times\n", (void *)&shared, total);
	printf("across %p locked %d times\n", (void *)&across, forks);
	return ok == forks ? 0 : 1;
}

/* ---- the others --------------------------------------------------------- */

/* held has a name of the longest a report shows (30 characters): the
 * child's line for it is then too long for its "taken at" */
#define HELD_NAME "held_by_a_thread_of_the_parent"

static void *hold_held(void *arg)
{
	(void)arg;
	int (*name)(const pthread_mutex_t *, const char *) =
		(int (*)(const pthread_mutex_t *, const char *))dlsym(RTLD_DEFAULT, "mutexstat_name");
	if (name)
		name(&held, HELD_NAME);
	pthread_mutex_lock(&held);
	holding = 1;
	for (;;)
		pause();
	return NULL;
}

static pid_t holder_thread(void)
{
	pthread_t t;
	pthread_create(&t, NULL, hold_held, NULL);
	while (!holding)
		usleep(1000);
	return 0;
}

/* A process with one thread starts its dump thread at its next mutex call
 * after a dump signal: so, after each signal, one (on a mutex of its own
 * that no check counts). */
static pthread_mutex_t tick = PTHREAD_MUTEX_INITIALIZER;

static void wait_to_be_killed(void)
{
	for (;;) {
		pause();
		pthread_mutex_lock(&tick);
		pthread_mutex_unlock(&tick);
	}
}

/* Before the fork, findings of the parent's: a lock-order inversion (a
 * then b here, b then a in a thread) and a thread that exits holding a
 * mutex. */
static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t gone = PTHREAD_MUTEX_INITIALIZER;

static void *b_then_a(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&b);
	pthread_mutex_lock(&a);
	pthread_mutex_unlock(&a);
	pthread_mutex_unlock(&b);
	pthread_mutex_lock(&gone);
	return NULL; /* holding gone */
}

static void parent_findings(void)
{
	pthread_mutex_lock(&a);
	pthread_mutex_lock(&b);
	pthread_mutex_unlock(&b);
	pthread_mutex_unlock(&a);
	pthread_t t;
	pthread_create(&t, NULL, b_then_a, NULL);
	pthread_join(t, NULL);
}

static int counts(void)
{
	lock_n(&shared, 100);
	parent_findings();
	holder_thread();
	printf("shared %p\nheld %p\nown %p\n", (void *)&shared, (void *)&held, (void *)&own);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		lock_n(&shared, 7);
		lock_n(&own, 5);
		exit(0);
	}
	printf("child %d %s\n", (int)pid, ended(wait_child(pid)));
	lock_n(&shared, 50);
	return 0;
}

static int bare(void)
{
	lock_n(&shared, 3);
	printf("shared %p\nacross %p\n", (void *)&shared, (void *)&across);
	fflush(stdout);
	pthread_mutex_lock(&across);
	pid_t pid = _Fork();
	if (pid == 0) {
		pthread_mutex_unlock(&across);
		lock_n(&shared, 3);
		pthread_mutex_lock(&shared);
		int owner = shared.__data.__owner;
		printf("child owner %s\n", owner == gettid() ? "self"
			: owner == getppid() ? "parent" : "another");
		pthread_mutex_unlock(&shared);
		exit(0);
	}
	pthread_mutex_unlock(&across);
	printf("child %d %s\n", (int)pid, ended(wait_child(pid)));
	return 0;
}

static int usr1(void)
{
	holder_thread();
	printf("own %p\n", (void *)&own);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		lock_n(&own, 3);
		printf("child %d ready\n", (int)getpid());
		fflush(stdout);
		wait_to_be_killed();
	}
	printf("child %d %s\n", (int)pid, ended(wait_child(pid)));
	return 0;
}

static int late(const char *file)
{
	holder_thread();
	pid_t pid = fork();
	if (pid == 0) {
		printf("child %d ready\n", (int)getpid());
		fflush(stdout);
		struct stat st;
		while (stat(file, &st) != 0)
			usleep(10000);
		lock_n(&own, 1);
		printf("child locked\n");
		fflush(stdout);
		wait_to_be_killed();
	}
	printf("child %d %s\n", (int)pid, ended(wait_child(pid)));
	return 0;
}

/* A daemon's own steps (redis-server --daemonize, nginx): fork, setsid,
 * /dev/null on the standard descriptors. */
static int detach(const char *file)
{
	lock_n(&own, 2);
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid > 0)
		return 0;
	if (setsid() < 0)
		return 1;
	int fd = open("/dev/null", O_RDWR);
	if (fd < 0)
		return 1;
	dup2(fd, 0);
	dup2(fd, 1);
	dup2(fd, 2);
	close(fd);
	lock_n(&own, 2);
	FILE *f = fopen(file, "w");
	if (!f)
		return 1;
	fprintf(f, "%d\n", (int)getpid());
	fclose(f);
	wait_to_be_killed();
	return 0;
}

static int run_daemon(void)
{
	holder_thread();
	if (daemon(1, 1) != 0) {
		perror("daemon");
		return 1;
	}
	lock_n(&own, 2);
	printf("daemon %d ready\n", (int)getpid());
	fflush(stdout);
	wait_to_be_killed();
	return 0;
}

/* Signals pending together are all delivered before pause() returns, so
 * once the main thread sees this one, the dump signal sent before it has
 * been handled too. */
static volatile sig_atomic_t got_usr2;

static void note_usr2(int sig)
{
	(void)sig;
	got_usr2 = 1;
}

static int closefds(const char *file)
{
	pid_t pid = fork();
	if (pid == 0) {
		signal(SIGUSR2, note_usr2);
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
		int a = open(file, O_WRONLY | O_CREAT | O_APPEND, 0600);
		for (int fd = 3; fd < 64; fd++)
			if (fd != a)
				dup2(a, fd);
		printf("child %d ready\n", (int)getpid());
		fflush(stdout);
		while (!got_usr2)
			pause();
		printf("usr2\n");
		_exit(0);
	}
	printf("child %d %s\n", (int)pid, ended(wait_child(pid)));
	return 0;
}

static int hang(void)
{
	holder_thread();
	printf("held %p\n", (void *)&held);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		printf("child %d locks held\n", (int)getpid());
		fflush(stdout);
		pthread_mutex_lock(&held); /* its holder is not in this process */
		printf("child got held\n");
		_exit(1);
	}
	printf("child %d %s\n", (int)pid, ended(wait_child(pid)));
	return 0;
}

/* readhang: the same with an rwlock two threads read across the fork;
 * the child writes it (never returns) */
static pthread_rwlock_t read_held = PTHREAD_RWLOCK_INITIALIZER;
static int readers_in;

static void *hold_read(void *arg)
{
	(void)arg;
	pthread_rwlock_rdlock(&read_held); /* READ_HELD */
	__atomic_add_fetch(&readers_in, 1, __ATOMIC_RELEASE);
	for (;;)
		pause();
	return NULL;
}

static int read_hang(void)
{
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, hold_read, NULL);
	while (__atomic_load_n(&readers_in, __ATOMIC_ACQUIRE) < 2)
		usleep(1000);
	printf("read_held %p\n", (void *)&read_held);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		printf("child %d writes read_held\n", (int)getpid());
		fflush(stdout);
		pthread_rwlock_wrlock(&read_held); /* its reader is not here */
		printf("child got read_held\n");
		_exit(1);
	}
	printf("child %d %s\n", (int)pid, ended(wait_child(pid)));
	return 0;
}

/* The lock in MAP_SHARED memory: a process-shared mutex or, for
 * sharedspin, spin lock. */
static union {
	pthread_mutex_t m;
	pthread_spinlock_t s;
} *shm_lock;
static int shm_spin;
static volatile int shm_go;

static void shm_take(void)
{
	if (shm_spin)
		pthread_spin_lock(&shm_lock->s);
	else
		pthread_mutex_lock(&shm_lock->m);
}

static void shm_give(void)
{
	if (shm_spin)
		pthread_spin_unlock(&shm_lock->s);
	else
		pthread_mutex_unlock(&shm_lock->m);
}

static void wait_for_file(const char *file)
{
	struct stat st;
	while (stat(file, &st) != 0)
		usleep(10000);
}

static void *hold_shared(void *arg)
{
	shm_take();
	holding = 1;
	while (!shm_go)
		usleep(1000);
	wait_for_file(arg);
	shm_give();
	return NULL;
}

/* who: "forker", "thread", or "spin" (a spin lock a thread holds: glibc
 * keeps no owner in its word, so the child's wait has no holder to name) */
static int shared_held(const char *who, const char *file)
{
	shm_lock = mmap(NULL, sizeof *shm_lock, PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shm_lock == MAP_FAILED)
		return 1;
	shm_spin = !strcmp(who, "spin");
	if (shm_spin)
		pthread_spin_init(&shm_lock->s, PTHREAD_PROCESS_SHARED);
	else {
		pthread_mutexattr_t attr;
		pthread_mutexattr_init(&attr);
		pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
		pthread_mutex_init(&shm_lock->m, &attr);
	}
	int by_thread = strcmp(who, "forker") != 0;
	pthread_t t;
	if (by_thread) {
		pthread_create(&t, NULL, hold_shared, (void *)file);
		while (!holding)
			usleep(1000);
	} else
		shm_take();
	printf("shared %p\n", (void *)shm_lock);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		printf("child %d locks shared\n", (int)getpid());
		fflush(stdout);
		shm_take(); /* the parent's thread unlocks it */
		printf("child got it\n");
		shm_give();
		exit(0);
	}
	if (by_thread) {
		shm_go = 1;
		pthread_join(t, NULL);
	} else {
		wait_for_file(file);
		shm_give();
	}
	printf("child %d %s\n", (int)pid, ended(wait_child(pid)));
	return 0;
}

static int exec_child(char **argv)
{
	holder_thread();
	lock_n(&shared, 3);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		execv(argv[0], argv);
		perror("execv");
		_exit(127);
	}
	printf("child %s\n", ended(wait_child(pid)));
	return 0;
}

static int run_system(const char *cmd)
{
	lock_n(&shared, 3);
	fflush(stdout);
	int status = system(cmd);
	printf("system: %s\n", ended(status));
	return 0;
}

static int ownenv(const char *lib, char **argv)
{
	char preload[4200];
	snprintf(preload, sizeof preload, "LD_PRELOAD=%s", lib);
	char *envp[] = { preload, NULL };
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		execve(argv[0], argv, envp);
		perror("execve");
		_exit(127);
	}
	printf("child %s\n", ended(wait_child(pid)));
	return 0;
}

static int lock_and_say(int n)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	lock_n(&m, n);
	const char *pre = getenv("LD_PRELOAD");
	printf("pid %d locked %p %d times; library %s; LD_PRELOAD%s%s\n", (int)getpid(),
	       (void *)&m, n, dlsym(RTLD_DEFAULT, "mutexstat_dump") ? "loaded" : "absent",
	       pre ? "=" : " unset", pre ? pre : "");
	return 0;
}

/* ---- capturing --------------------------------------------------------- */

static volatile int sitting, forked, locked;
static volatile pid_t locker_tid;

static int sit(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)info;
	(void)size;
	(void)arg;
	sitting = 1;
	while (!forked)
		usleep(1000);
	return 1;
}

static void *sitter(void *arg)
{
	(void)arg;
	dl_iterate_phdr(sit, NULL);
	return NULL;
}

static void *first_locker(void *arg)
{
	(void)arg;
	locker_tid = gettid();
	lock_n(&shared, 1);
	locked = 1;
	return NULL;
}

/* Whether thread tid sleeps in a futex (202), per /proc: the first
 * lock's capture waiting for the dynamic linker's lock. */
static int in_futex(pid_t tid)
{
	char path[64], line[32] = "";
	snprintf(path, sizeof path, "/proc/self/task/%d/syscall", (int)tid);
	FILE *f = fopen(path, "r");
	if (f) {
		if (!fgets(line, sizeof line, f))
			line[0] = 0;
		fclose(f);
	}
	return !strncmp(line, "202 ", 4);
}

static int capturing(int with_locker)
{
	pthread_t s, l;
	int (*dump)(int) = (int (*)(int))dlsym(RTLD_DEFAULT, "mutexstat_dump");
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (dump && with_locker)
		dump(null);
	close(null);
	pthread_create(&s, NULL, sitter, NULL);
	while (!sitting)
		usleep(1000);
	if (with_locker) {
		pthread_create(&l, NULL, first_locker, NULL);
		while (!locked && !(locker_tid && in_futex(locker_tid)))
			usleep(1000);
	}
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		pthread_mutex_t mine = PTHREAD_MUTEX_INITIALIZER;
		lock_n(&mine, 4);
		exit(7);
	}
	forked = 1;
	printf("child %s\n", ended(wait_child(pid)));
	pthread_join(s, NULL);
	if (with_locker)
		pthread_join(l, NULL);
	return 0;
}

/* ---- spares: a thread made in the child settles its table ----------------
 * The forking thread had records spare (a mutex made and destroyed before
 * the fork); in the child a new thread makes the first mutex calls, then
 * the forking thread makes mutexes of its own.  Each mutex of each thread
 * keeps its own record: 14 and 100 acquisitions, 24 mutexes. */
#define SPARES 12
static pthread_mutex_t by_new[SPARES], by_forker[SPARES];
static int new_done[2];

static void *new_thread_makes(void *arg)
{
	(void)arg;
	for (int i = 0; i < SPARES; i++) {
		pthread_mutex_init(&by_new[i], NULL);
		lock_n(&by_new[i], 7);
	}
	char c = 1;
	if (write(new_done[1], &c, 1) != 1)
		abort();
	return NULL;
}

static int spares(void)
{
	pthread_mutex_t once;
	pthread_mutex_init(&once, NULL);
	lock_n(&once, 1);
	pthread_mutex_destroy(&once);
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		pthread_t th;
		char c;
		if (pipe(new_done) != 0 || pthread_create(&th, NULL, new_thread_makes, NULL))
			_exit(1);
		/* no mutex call here until the new thread's are done (a join
		 * would be one): it settles the table */
		if (read(new_done[0], &c, 1) != 1)
			_exit(1);
		pthread_join(th, NULL);
		for (int i = 0; i < SPARES; i++) {
			pthread_mutex_init(&by_forker[i], NULL);
			lock_n(&by_forker[i], 100);
		}
		for (int i = 0; i < SPARES; i++)
			lock_n(&by_new[i], 7);
		printf("child %d\n", (int)getpid());
		exit(0);
	}
	return wait_child(pid);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *mode = argc > 1 ? argv[1] : "";
	/* the script runs some modes in the background under timeout: this
	 * is how it knows the program's pid */
	printf("parent %d\n", (int)getpid());
	if (!strcmp(mode, "stress") && argc > 2)
		return stress(atoi(argv[2]));
	if (!strcmp(mode, "counts"))
		return counts();
	if (!strcmp(mode, "bare"))
		return bare();
	if (!strcmp(mode, "usr1"))
		return usr1();
	if (!strcmp(mode, "late") && argc > 2)
		return late(argv[2]);
	if (!strcmp(mode, "hang"))
		return hang();
	if (!strcmp(mode, "detach") && argc > 2)
		return detach(argv[2]);
	if (!strcmp(mode, "daemon"))
		return run_daemon();
	if (!strcmp(mode, "closefds") && argc > 2)
		return closefds(argv[2]);
	if (!strcmp(mode, "sharedheld") && argc > 3)
		return shared_held(argv[2], argv[3]);
	if (!strcmp(mode, "readhang"))
		return read_hang();
	if (!strcmp(mode, "sharedspin") && argc > 2)
		return shared_held("spin", argv[2]);
	if (!strcmp(mode, "exec") && argc > 2)
		return exec_child(argv + 2);
	if (!strcmp(mode, "system") && argc > 2)
		return run_system(argv[2]);
	if (!strcmp(mode, "ownenv") && argc > 3)
		return ownenv(argv[2], argv + 3);
	if (!strcmp(mode, "lock") && argc > 2)
		return lock_and_say(atoi(argv[2]));
	if (!strcmp(mode, "capturing"))
		return capturing(1);
	if (!strcmp(mode, "loaderheld"))
		return capturing(0);
	if (!strcmp(mode, "spares"))
		return spares();
	fprintf(stderr, "usage: %s stress N | counts | usr1 | late FILE | hang | "
			"readhang | sharedheld forker|thread FILE | sharedspin FILE | exec PROG... | system CMD | ownenv LIB PROG... | lock N | daemon | "
			"closefds FILE | capturing | loaderheld | spares\n", argv[0]);
	return 2;
}
