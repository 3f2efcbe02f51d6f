/* rwlocks.c - read-write and spin lock scenarios for tests/rwlocks.sh: each
 * argument names one, which does a known number of operations or one
 * known mistake.  Lock calls the test looks for in the report carry a
 * marker comment (the test finds their lines by it). */
#define _GNU_SOURCE
#include "proc_wait.h"
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "deadline.h"
#include "proc_wait.h"

static pthread_rwlock_t a = PTHREAD_RWLOCK_INITIALIZER;
static pthread_rwlock_t b = PTHREAD_RWLOCK_INITIALIZER;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_spinlock_t s;

static void check(int got, int want, const char *what)
{
	if (got != want) {
		fprintf(stderr, "%s: %d, not %d\n", what, got, want);
		exit(2);
	}
}

/* Exact counts on one rwlock and one spin lock, one thread: 1000 reads, 10
 * writes, 5 + 3 tries that get it and 2 + 2 that do not; 100 spin pairs,
 * 4 spin tries that get it and 1 that does not. */
static void counts(void)
{
	for (int i = 0; i < 1000; i++) {
		check(pthread_rwlock_rdlock(&a), 0, "rdlock");
		check(pthread_rwlock_unlock(&a), 0, "unlock");
	}
	for (int i = 0; i < 10; i++) {
		check(pthread_rwlock_wrlock(&a), 0, "wrlock");
		check(pthread_rwlock_unlock(&a), 0, "unlock");
	}
	for (int i = 0; i < 5; i++) {
		check(pthread_rwlock_tryrdlock(&a), 0, "tryrdlock");
		check(pthread_rwlock_unlock(&a), 0, "unlock");
	}
	for (int i = 0; i < 3; i++) {
		check(pthread_rwlock_trywrlock(&a), 0, "trywrlock");
		check(pthread_rwlock_unlock(&a), 0, "unlock");
	}
	check(pthread_rwlock_rdlock(&a), 0, "rdlock");
	for (int i = 0; i < 2; i++)
		check(pthread_rwlock_trywrlock(&a), EBUSY, "trywrlock while read");
	check(pthread_rwlock_unlock(&a), 0, "unlock");
	check(pthread_rwlock_wrlock(&a), 0, "wrlock");
	for (int i = 0; i < 2; i++)
		check(pthread_rwlock_tryrdlock(&a), EBUSY, "tryrdlock while written");
	check(pthread_rwlock_unlock(&a), 0, "unlock");

	check(pthread_spin_init(&s, PTHREAD_PROCESS_PRIVATE), 0, "spin_init");
	for (int i = 0; i < 100; i++) {
		check(pthread_spin_lock(&s), 0, "spin_lock");
		check(pthread_spin_unlock(&s), 0, "spin_unlock");
	}
	for (int i = 0; i < 4; i++) {
		check(pthread_spin_trylock(&s), 0, "spin_trylock");
		check(pthread_spin_unlock(&s), 0, "spin_unlock");
	}
	check(pthread_spin_lock(&s), 0, "spin_lock");
	check(pthread_spin_trylock(&s), EBUSY, "spin_trylock while held");
	check(pthread_spin_unlock(&s), 0, "spin_unlock");
}

/* A writes then reads B; B writes then reads A: two threads doing this at
 * once can deadlock (each waits for the other's write lock). */
static void inversion(void)
{
	pthread_rwlock_wrlock(&a); /* inv-a1 */
	pthread_rwlock_rdlock(&b); /* inv-b1 */
	pthread_rwlock_unlock(&b);
	pthread_rwlock_unlock(&a);
	pthread_rwlock_wrlock(&b); /* inv-b2 */
	pthread_rwlock_rdlock(&a); /* inv-a2 */
	pthread_rwlock_unlock(&a);
	pthread_rwlock_unlock(&b);
}

/* Reads only, each order once: with reader-preferring locks no thread
 * waits for a reader, so this cannot deadlock; with writer-preferring
 * ones a writer waiting at each lock makes the second reads wait. */
static void read_read(int writer_preferring)
{
	pthread_rwlock_t c, d;
	pthread_rwlockattr_t attr;
	pthread_rwlockattr_init(&attr);
	if (writer_preferring)
		pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&c, &attr);
	pthread_rwlock_init(&d, &attr);
	pthread_rwlock_rdlock(&c);
	pthread_rwlock_rdlock(&d);
	pthread_rwlock_unlock(&d);
	pthread_rwlock_unlock(&c);
	pthread_rwlock_rdlock(&d);
	pthread_rwlock_rdlock(&c);
	pthread_rwlock_unlock(&c);
	pthread_rwlock_unlock(&d);
	pthread_rwlock_destroy(&c);
	pthread_rwlock_destroy(&d);
}

/* A mutex then the rwlock for write; the rwlock for read then the mutex. */
static void mixed(void)
{
	pthread_mutex_lock(&m); /* mix-m1 */
	pthread_rwlock_wrlock(&a); /* mix-a1 */
	pthread_rwlock_unlock(&a);
	pthread_mutex_unlock(&m);
	pthread_rwlock_rdlock(&a); /* mix-a2 */
	pthread_mutex_lock(&m); /* mix-m2 */
	pthread_mutex_unlock(&m);
	pthread_rwlock_unlock(&a);
}

/* The inversion on locks made and destroyed before the report. */
static void destroyed(void)
{
	pthread_rwlock_t *x = malloc(sizeof *x), *y = malloc(sizeof *y);
	pthread_rwlock_init(x, NULL);
	pthread_rwlock_init(y, NULL);
	pthread_rwlock_wrlock(x);
	pthread_rwlock_wrlock(y);
	pthread_rwlock_unlock(y);
	pthread_rwlock_unlock(x);
	pthread_rwlock_rdlock(y);
	pthread_rwlock_wrlock(x);
	pthread_rwlock_unlock(x);
	pthread_rwlock_unlock(y);
	pthread_rwlock_destroy(x); /* destroy-x */
	pthread_rwlock_destroy(y);
	free(x);
	free(y);
}

/* A reader waits for the mutex a writer-to-be holds, which waits for the
 * reader's read lock: a deadlock, live (the test kills it).  The reader's
 * long name: the report's lines keep to 120 columns all the same. */
static pthread_barrier_t both;
static void *live_reader_with_a_name_long_enough_to_take_a_report_line_past_its_width(void *arg)
{
	pthread_rwlock_rdlock(&a); /* live-rd */
	pthread_barrier_wait(&both);
	usleep(100000);
	pthread_mutex_lock(&m); /* live-m */
	return arg;
}

static void *live_writer(void *arg)
{
	pthread_mutex_lock(&m); /* live-m-taken */
	pthread_barrier_wait(&both);
	pthread_rwlock_wrlock(&a); /* live-wr */
	return arg;
}

static void live(void)
{
	pthread_t r, w;
	pthread_barrier_init(&both, NULL, 2);
	pthread_create(&r, NULL, live_reader_with_a_name_long_enough_to_take_a_report_line_past_its_width, NULL);
	pthread_create(&w, NULL, live_writer, NULL);
	pthread_join(r, NULL);
}

/* Misuse glibc does not refuse: an unlock of a free rwlock, a spin lock
 * let go by a thread that does not hold it, a read-locked rwlock
 * destroyed. */
static void *spin_holder(void *arg)
{
	pthread_spin_lock(&s);
	return arg;
}

static void misuse(void)
{
	pthread_rwlock_t c;
	pthread_rwlock_init(&c, NULL);
	pthread_rwlock_wrlock(&c);
	pthread_rwlock_unlock(&c);
	printf("unlock free: %d\n", pthread_rwlock_unlock(&c)); /* misuse-unlock */
	pthread_spin_init(&s, PTHREAD_PROCESS_PRIVATE);
	pthread_t th;
	pthread_create(&th, NULL, spin_holder, NULL);
	pthread_join(th, NULL);
	printf("spin unlock not held: %d\n", pthread_spin_unlock(&s)); /* misuse-spin */
	/* (glibc took that unlock for a reader's: c is broken now) */
	pthread_rwlock_t e;
	pthread_rwlock_init(&e, NULL);
	pthread_rwlock_rdlock(&e);
	printf("destroy read-locked: %d\n", pthread_rwlock_destroy(&e)); /* misuse-destroy */
	/* two read unlocks too many leave glibc's count below zero: two
	 * MISUSEs, and a destroy glibc answers 0 for, as for a free lock */
	pthread_rwlock_t u;
	pthread_rwlock_init(&u, NULL);
	pthread_rwlock_rdlock(&u);
	pthread_rwlock_unlock(&u);
	int once = pthread_rwlock_unlock(&u);
	int twice = pthread_rwlock_unlock(&u); /* misuse-below-zero */
	printf("below zero: %d %d, destroy: %d\n", once, twice, pthread_rwlock_destroy(&u));
}

/* A thread reads c twice; another unlocks it once (glibc lets it: a
 * MISUSE), then the reader once: c is free, and the reader holds nothing
 * as it ends. */
static pthread_rwlock_t twice = PTHREAD_RWLOCK_INITIALIZER;
static pthread_barrier_t read_twice, unlocked_once;
static void *reads_twice(void *arg)
{
	check(pthread_rwlock_rdlock(&twice), 0, "rdlock");
	check(pthread_rwlock_rdlock(&twice), 0, "rdlock");
	pthread_barrier_wait(&read_twice);
	pthread_barrier_wait(&unlocked_once);
	check(pthread_rwlock_unlock(&twice), 0, "unlock");
	return arg;
}

static void *unlocks_others(void *arg)
{
	pthread_barrier_wait(&read_twice);
	printf("unlock of another's read: %d\n", pthread_rwlock_unlock(&twice)); /* misuse-other */
	pthread_barrier_wait(&unlocked_once);
	return arg;
}

static void misuse_other_reader(void)
{
	pthread_t r, o;
	pthread_barrier_init(&read_twice, NULL, 2);
	pthread_barrier_init(&unlocked_once, NULL, 2);
	pthread_create(&r, NULL, reads_twice, NULL);
	pthread_create(&o, NULL, unlocks_others, NULL);
	pthread_join(r, NULL);
	pthread_join(o, NULL);
	printf("free after: %d\n", pthread_rwlock_trywrlock(&twice));
}

/* Two readers of k; another thread unlocks k once (a MISUSE); the first
 * reader unlocks its read, the second lets its read go in the destructor
 * of a key of its own (made after the library's), as a thread-exit hook
 * would: a legitimate unlock, not a second MISUSE, and no HELD AT THREAD
 * EXIT. */
static pthread_rwlock_t k = PTHREAD_RWLOCK_INITIALIZER;
static pthread_barrier_t k_read, k_unlocked;
static pthread_key_t k_key;
static void k_let_go(void *arg)
{
	(void)arg;
	printf("read let go at exit: %d\n", pthread_rwlock_unlock(&k)); /* key-letgo */
}

static void *k_reader(void *arg)
{
	check(pthread_rwlock_rdlock(&k), 0, "rdlock");
	if (arg)
		pthread_setspecific(k_key, arg);
	pthread_barrier_wait(&k_read);
	pthread_barrier_wait(&k_unlocked);
	if (!arg)
		check(pthread_rwlock_unlock(&k), 0, "unlock");
	return NULL;
}

static void *k_other(void *arg)
{
	pthread_barrier_wait(&k_read);
	printf("unlock by another: %d\n", pthread_rwlock_unlock(&k)); /* key-other */
	pthread_barrier_wait(&k_unlocked);
	return arg;
}

static void misuse_key_reader(void)
{
	pthread_t a, b, o;
	pthread_key_create(&k_key, k_let_go);
	pthread_barrier_init(&k_read, NULL, 3);
	pthread_barrier_init(&k_unlocked, NULL, 3);
	pthread_create(&a, NULL, k_reader, NULL);
	pthread_create(&b, NULL, k_reader, (void *)1);
	pthread_create(&o, NULL, k_other, NULL);
	pthread_join(b, NULL);
	pthread_join(a, NULL);
	pthread_join(o, NULL);
}

/* One thread reads c, then locks m; another locks m, then writes c (an
 * inversion); a third, after them, locks m, then reads c -- with the
 * first's read, no deadlock: only the writer's is the finding. */
static pthread_rwlock_t c_modes = PTHREAD_RWLOCK_INITIALIZER;
static void *read_then_m(void *arg)
{
	pthread_rwlock_rdlock(&c_modes);
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	pthread_rwlock_unlock(&c_modes);
	return arg;
}

static void *m_then_write(void *arg)
{
	pthread_mutex_lock(&m);
	pthread_rwlock_wrlock(&c_modes); /* modes-write */
	pthread_rwlock_unlock(&c_modes);
	pthread_mutex_unlock(&m);
	return arg;
}

static void *m_then_read(void *arg)
{
	pthread_mutex_lock(&m);
	pthread_rwlock_rdlock(&c_modes); /* modes-read */
	pthread_rwlock_unlock(&c_modes);
	pthread_mutex_unlock(&m);
	return arg;
}

/* ... or the writer first, then the later reader, then the inversion's
 * reader: the finding still names the writer. */
static void modes_later(int writer_first)
{
	void *(*turns[])(void *) = { read_then_m, m_then_write, m_then_read };
	if (writer_first) {
		turns[0] = m_then_write;
		turns[1] = m_then_read;
		turns[2] = read_then_m;
	}
	for (int i = 0; i < 3; i++) {
		pthread_t th;
		pthread_create(&th, NULL, turns[i], NULL);
		pthread_join(th, NULL);
	}
}

/* A thread ends holding a read lock. */
static void *exits_reading(void *arg)
{
	pthread_rwlock_rdlock(&b); /* exit-rd */
	return arg;
}

/* A reader exits holding b, a thread goes on locking a mutex, and main
 * write-locks b: for ever, since nobody can let that read go (a DEADLOCK,
 * not a STALL: the other thread works). */
static void *keeps_working(void *arg)
{
	for (;;) {
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
		usleep(10000);
	}
	return arg;
}

static void exit_then_write(void)
{
	pthread_t th;
	pthread_create(&th, NULL, exits_reading, NULL);
	pthread_join(th, NULL);
	pthread_create(&th, NULL, keeps_working, NULL);
	pthread_rwlock_wrlock(&b); /* exit-wr */
}

/* The same, main calling mutexstat_reset() before it waits: the read
 * stays held, and still makes the wait a DEADLOCK. */
static void exit_reset_write(void)
{
	void (*reset)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "mutexstat_reset");
	pthread_t th;
	pthread_create(&th, NULL, exits_reading, NULL);
	pthread_join(th, NULL);
	pthread_create(&th, NULL, keeps_working, NULL);
	if (reset)
		reset();
	pthread_rwlock_wrlock(&b);
}

/* A reader exits holding b and main lets that read go (a MISUSE glibc
 * takes): then one thread holds b for read 3 s, another reads it in a
 * loop, and main waits to write -- a wait that ends, no deadlock.  The
 * exited reader, believed while glibc's count ran ahead of the held sets,
 * made it one, and the watchdog aborted the program. */
static volatile int long_read_over;

static void *reads_long(void *arg)
{
	pthread_rwlock_rdlock(&b);
	sleep(3);
	long_read_over = 1;
	pthread_rwlock_unlock(&b);
	return arg;
}

static void *reads_again(void *arg)
{
	while (!long_read_over) {
		pthread_rwlock_rdlock(&b);
		pthread_rwlock_unlock(&b);
	}
	return arg;
}

static void exit_unlocked_write(void)
{
	pthread_t th, r1, r2;
	pthread_create(&th, NULL, exits_reading, NULL);
	pthread_join(th, NULL);
	pthread_rwlock_unlock(&b); /* the exited reader's read */
	pthread_create(&r1, NULL, reads_long, NULL);
	usleep(100000);
	pthread_create(&r2, NULL, reads_again, NULL);
	pthread_rwlock_wrlock(&b);
	pthread_rwlock_unlock(&b);
	pthread_join(r1, NULL);
	pthread_join(r2, NULL);
	puts("the writer got it");
}

/* A process-shared rwlock a child process reads (with a record of its
 * own) while this one waits to write it: a reader this process did not
 * see.  The child dies with this process.  (A thread first, so that the
 * library's own thread, the watchdog's, starts beside any malloc.) */
static void *nothing(void *arg)
{
	return arg;
}

static void shared_reader(void)
{
	pthread_t th;
	pthread_create(&th, NULL, nothing, NULL);
	pthread_join(th, NULL);
	pthread_rwlock_t *l = mmap(NULL, sizeof *l, PROT_READ | PROT_WRITE,
				   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pthread_rwlockattr_t attr;
	int ready[2];
	char c;
	if (l == MAP_FAILED || pipe(ready))
		exit(2);
	pthread_rwlockattr_init(&attr);
	pthread_rwlockattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
	pthread_rwlock_init(l, &attr);
	pid_t child = fork();
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		pthread_rwlock_rdlock(l); /* ps-rd */
		check((int)write(ready[1], "r", 1), 1, "write");
		for (;;)
			pause();
	}
	check((int)read(ready[0], &c, 1), 1, "read");
	pthread_rwlock_wrlock(l); /* ps-wr */
}

/* Names for an rwlock (before its first use) and a spin lock (after its
 * init), through the library's API, found in the preloaded library. */
static void named(void)
{
	int (*name)(const void *, const char *) =
		(int (*)(const void *, const char *))dlsym(RTLD_DEFAULT, "mutexstat_name_lock");
	if (!name) {
		fprintf(stderr, "rwlocks: no mutexstat_name_lock\n");
		exit(2);
	}
	check(name(&a, "table lock"), 0, "name the rwlock");
	pthread_spin_init(&s, PTHREAD_PROCESS_PRIVATE);
	check(name((const void *)&s, "counter spin"), 0, "name the spin lock");
	for (int i = 0; i < 3; i++) {
		pthread_rwlock_rdlock(&a);
		pthread_rwlock_unlock(&a);
		pthread_spin_lock(&s);
		pthread_spin_unlock(&s);
	}
}

/* More rwlocks alive at once than there are slots for their reads (64,
 * with MUTEXSTAT_TABLE_SIZE=1024): each written once and read twice. */
static void many(void)
{
	static pthread_rwlock_t locks[100];
	for (int i = 0; i < 100; i++) {
		pthread_rwlock_init(&locks[i], NULL);
		pthread_rwlock_wrlock(&locks[i]);
		pthread_rwlock_unlock(&locks[i]);
		for (int k = 0; k < 2; k++) {
			pthread_rwlock_rdlock(&locks[i]);
			pthread_rwlock_unlock(&locks[i]);
		}
	}
}

/* A write lock with a 100 ms deadline, behind the main thread's read
 * lock: it times out. */
static void *writes_in_time(void *arg)
{
	struct timespec dl = deadline_in(CLOCK_REALTIME, 100);
	printf("timedwrlock: %s\n", strerrorname_np(pthread_rwlock_timedwrlock(&a, &dl)));
	return arg;
}

static void timed_write(void)
{
	pthread_t th;
	pthread_rwlock_rdlock(&a);
	pthread_create(&th, NULL, writes_in_time, NULL);
	pthread_join(th, NULL);
	pthread_rwlock_unlock(&a);
}

/* timed-behind-writer: main writes a; a reader waits for it (300 ms
 * deadline), then a writer (100 ms): both time out.  glibc counts the
 * waiting reader in its readers word, but it holds nothing -- the writer
 * waited behind main, a writer. */
static volatile pid_t waiting_reader;
static void *reads_in_time(void *arg)
{
	waiting_reader = (pid_t)syscall(SYS_gettid);
	struct timespec dl = deadline_in(CLOCK_REALTIME, 300);
	printf("timedrdlock: %s\n", strerrorname_np(pthread_rwlock_timedrdlock(&a, &dl)));
	return arg;
}

static void timed_behind_writer(void)
{
	pthread_t rd, wr;
	pthread_rwlock_wrlock(&a);
	pthread_create(&rd, NULL, reads_in_time, NULL);
	while (!waiting_reader || !sleeps_on_futex(waiting_reader, NULL))
		sched_yield();
	pthread_create(&wr, NULL, writes_in_time, NULL);
	pthread_join(wr, NULL);
	pthread_join(rd, NULL);
	pthread_rwlock_unlock(&a);
}

/* Eight threads write one rwlock in a loop while the main thread exits:
 * the exit report finds most of them waiting, and its holder, on 2 CPUs,
 * often preempted between glibc's lock and its record.  No thread holds
 * anything else, so no deadlock is possible. */
static void *writes_for_ever(void *arg)
{
	static volatile unsigned long n;
	for (;;) {
		pthread_rwlock_wrlock(&a);
		n++;
		pthread_rwlock_unlock(&a);
	}
	return arg;
}

static void writers_exit(void)
{
	pthread_t th;
	for (int i = 0; i < 8; i++)
		pthread_create(&th, NULL, writes_for_ever, NULL);
	struct timespec t = { 0, 50 * 1000 * 1000 };
	while (nanosleep(&t, &t))
		;
	exit(0);
}

/* Lives that only lock and unlock, of both kinds, each from a site of
 * its own (three rwlocks: 5 reads and a write; three mutexes: 5 locks),
 * and a mutex that lives on, locked 20 times: the ended lines count them
 * and keep no recent operations, and the report says locks. */
static void plain_ended(void)
{
	static pthread_mutex_t live = PTHREAD_MUTEX_INITIALIZER;
	for (int i = 0; i < 3; i++) {
		pthread_rwlock_t rw;
		pthread_rwlock_init(&rw, NULL);
		for (int k = 0; k < 5; k++) {
			pthread_rwlock_rdlock(&rw);
			pthread_rwlock_unlock(&rw);
		}
		pthread_rwlock_wrlock(&rw);
		pthread_rwlock_unlock(&rw);
		pthread_rwlock_destroy(&rw);
	}
	for (int i = 0; i < 3; i++) {
		pthread_mutex_t m;
		pthread_mutex_init(&m, NULL);
		for (int k = 0; k < 5; k++) {
			pthread_mutex_lock(&m);
			pthread_mutex_unlock(&m);
		}
		pthread_mutex_destroy(&m);
	}
	for (int k = 0; k < 20; k++) {
		pthread_mutex_lock(&live);
		pthread_mutex_unlock(&live);
	}
}

/* The reads' history beside the main one (lib/record/other_locks.c): 10
 * read pairs, a write pair, 3 read pairs on a lock made by init.  The
 * newest 16 operations, the report's, are 4 read pairs, the write pair and
 * the 3 read pairs, in that order. */
static void read_history(void)
{
	static pthread_rwlock_t rh;
	pthread_rwlock_init(&rh, NULL);
	for (int i = 0; i < 10; i++) {
		pthread_rwlock_rdlock(&rh); /* rh-read-1 */
		pthread_rwlock_unlock(&rh);
	}
	pthread_rwlock_wrlock(&rh); /* rh-write */
	pthread_rwlock_unlock(&rh);
	for (int i = 0; i < 3; i++) {
		pthread_rwlock_rdlock(&rh); /* rh-read-2 */
		pthread_rwlock_unlock(&rh);
	}
}

/* A life that failed once (a trywrlock while it reads) ends: its ended
 * line keeps its recent operations, reads among them. */
static void read_ended(void)
{
	pthread_rwlock_t re;
	pthread_rwlock_init(&re, NULL);
	for (int i = 0; i < 2; i++) {
		pthread_rwlock_rdlock(&re); /* re-read */
		pthread_rwlock_unlock(&re);
	}
	pthread_rwlock_rdlock(&re);
	check(pthread_rwlock_trywrlock(&re), EBUSY, "trywrlock while reading"); /* re-try */
	pthread_rwlock_unlock(&re);
	pthread_rwlock_destroy(&re);
}

/* A writer's try that finds readers: its failure is ordered after the
 * reads it found (the side ring's entry goes past the reads' history
 * too), so it is listed after the last rdlock, not before the reads. */
static pthread_rwlock_t rb = PTHREAD_RWLOCK_INITIALIZER;
static void *tries_to_write(void *arg)
{
	check(pthread_rwlock_trywrlock(&rb), EBUSY, "trywrlock while read"); /* rb-try */
	return arg;
}

static void read_busy(void)
{
	pthread_t th;
	pthread_rwlock_wrlock(&rb);
	pthread_rwlock_unlock(&rb);
	for (int i = 0; i < 3; i++) {
		pthread_rwlock_rdlock(&rb);
		pthread_rwlock_unlock(&rb);
	}
	pthread_rwlock_rdlock(&rb); /* rb-read */
	pthread_create(&th, NULL, tries_to_write, NULL);
	pthread_join(th, NULL);
	pthread_rwlock_unlock(&rb);
}

/* Every slot for reads taken (MUTEXSTAT_TABLE_SIZE=1024: 64), then one
 * freed: the lock that found none keeps its reads and writes together
 * for the rest of its life, though a busy tryrdlock would take the slot
 * freed (which would count all it did before as reads). */
static void spent_late(void)
{
	static pthread_rwlock_t many[64], sp = PTHREAD_RWLOCK_INITIALIZER;
	for (int i = 0; i < 64; i++) {
		pthread_rwlock_init(&many[i], NULL);
		pthread_rwlock_wrlock(&many[i]);
		pthread_rwlock_unlock(&many[i]);
	}
	for (int i = 0; i < 10; i++) {
		pthread_rwlock_wrlock(&sp);
		pthread_rwlock_unlock(&sp);
	}
	pthread_rwlock_destroy(&many[0]);
	pthread_rwlock_wrlock(&sp);
	check(pthread_rwlock_tryrdlock(&sp), EBUSY, "tryrdlock by the writer");
	pthread_rwlock_unlock(&sp);
	for (int i = 0; i < 3; i++) {
		pthread_rwlock_rdlock(&sp);
		pthread_rwlock_unlock(&sp);
	}
}

/* A reader whose clock is far ahead (200 operations on a mutex of its
 * own), then a write by the main thread, whose clock is not: the write
 * is ordered after the read all the same. */
static pthread_rwlock_t ro;
static void *reads_late(void *arg)
{
	pthread_mutex_t own = PTHREAD_MUTEX_INITIALIZER;
	for (int i = 0; i < 100; i++) {
		pthread_mutex_lock(&own);
		pthread_mutex_unlock(&own);
	}
	pthread_rwlock_rdlock(&ro); /* ro-read */
	pthread_rwlock_unlock(&ro);
	return arg;
}

static void read_order(void)
{
	pthread_t th;
	pthread_rwlock_init(&ro, NULL);
	pthread_create(&th, NULL, reads_late, NULL);
	pthread_join(th, NULL);
	pthread_rwlock_wrlock(&ro); /* ro-write */
	pthread_rwlock_unlock(&ro);
}

/* Four threads reading one lock at once, each 5,000 operations of which
 * every 100th is a write: 19,800 reads and 200 writes. */
static pthread_rwlock_t rt = PTHREAD_RWLOCK_INITIALIZER;
static pthread_barrier_t rt_start;
static unsigned long rt_counter;
static void *reads_together(void *arg)
{
	unsigned long seen = 0;
	(void)arg;
	pthread_barrier_wait(&rt_start);
	for (int i = 1; i <= 5000; i++) {
		if (i % 100 == 0) {
			pthread_rwlock_wrlock(&rt);
			rt_counter++;
		} else {
			pthread_rwlock_rdlock(&rt);
			seen += rt_counter;
		}
		pthread_rwlock_unlock(&rt);
	}
	return (void *)seen;
}

static void read_threads(void)
{
	pthread_t th[4];
	pthread_barrier_init(&rt_start, NULL, 4);
	for (int i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, reads_together, NULL);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	check((int)rt_counter, 200, "writes");
}

/* readers-at-once: two threads that have each read the lock once, one
 * after the other, hold it together: the most readers at once is 2, seen
 * by main's second read, the plain case (its first filled its cache). */
static pthread_rwlock_t ra = PTHREAD_RWLOCK_INITIALIZER;
static pthread_barrier_t ra_step;
static void *reads_alongside(void *arg)
{
	(void)arg;
	check(pthread_rwlock_rdlock(&ra), 0, "rdlock");
	check(pthread_rwlock_unlock(&ra), 0, "unlock");
	pthread_barrier_wait(&ra_step); /* its read is over */
	pthread_barrier_wait(&ra_step); /* main's too */
	check(pthread_rwlock_rdlock(&ra), 0, "rdlock, first");
	pthread_barrier_wait(&ra_step); /* it holds the lock */
	pthread_barrier_wait(&ra_step); /* both do */
	check(pthread_rwlock_unlock(&ra), 0, "unlock");
	return NULL;
}

static void readers_at_once(void)
{
	pthread_t th;
	pthread_barrier_init(&ra_step, NULL, 2);
	pthread_create(&th, NULL, reads_alongside, NULL);
	pthread_barrier_wait(&ra_step);
	check(pthread_rwlock_rdlock(&ra), 0, "rdlock");
	check(pthread_rwlock_unlock(&ra), 0, "unlock");
	pthread_barrier_wait(&ra_step);
	pthread_barrier_wait(&ra_step);
	check(pthread_rwlock_rdlock(&ra), 0, "rdlock, second");
	pthread_barrier_wait(&ra_step);
	check(pthread_rwlock_unlock(&ra), 0, "unlock");
	pthread_join(th, NULL);
}

/* plain-writes: write locks of the plain case (write_plain.h), each
 * after a try that gets the lock, by a thread holding nothing.  Main reads
 * pw twice (its first lock: the record has no owner yet), then writes it
 * twice -- the first with no owner before it, no owner change -- a thread
 * writes it three times (an owner change), main once more (another), and
 * the thread reads it, its clock behind main's write: 9 acquisitions, 6
 * writes, 2 owner changes, and the history in the order they were taken,
 * the read after the write that let it in. */
static pthread_rwlock_t pw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_barrier_t pw_turn;
static void *writes_between(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&pw_turn);
	for (int i = 0; i < 3; i++) {
		check(pthread_rwlock_wrlock(&pw), 0, "wrlock, the thread");
		check(pthread_rwlock_unlock(&pw), 0, "unlock");
	}
	pthread_barrier_wait(&pw_turn);
	pthread_barrier_wait(&pw_turn);
	check(pthread_rwlock_rdlock(&pw), 0, "rdlock, the thread");
	check(pthread_rwlock_unlock(&pw), 0, "unlock");
	return NULL;
}

static void plain_writes(void)
{
	pthread_t th;
	pthread_barrier_init(&pw_turn, NULL, 2);
	pthread_create(&th, NULL, writes_between, NULL);
	for (int i = 0; i < 2; i++) {
		check(pthread_rwlock_rdlock(&pw), 0, "rdlock");
		check(pthread_rwlock_unlock(&pw), 0, "unlock");
	}
	for (int i = 0; i < 2; i++) {
		check(pthread_rwlock_wrlock(&pw), 0, "wrlock");
		check(pthread_rwlock_unlock(&pw), 0, "unlock");
	}
	pthread_barrier_wait(&pw_turn);
	pthread_barrier_wait(&pw_turn);
	check(pthread_rwlock_wrlock(&pw), 0, "wrlock, after the thread");
	check(pthread_rwlock_unlock(&pw), 0, "unlock");
	pthread_barrier_wait(&pw_turn);
	pthread_join(th, NULL);
}

/* timed-reads, timed-writes: a read waits for a writer (a write for a
 * reader), so the lock's holds are timed from then on: its first
 * MS_HOLD_EXACT (4096) of that mode, then one in MS_HOLD_SAMPLE (16), those
 * numbered 16k + 1.  Then, the other thread gone, 10,000 of that mode by a
 * thread that holds nothing -- the lock path's plain case
 * (lib/record/read_plain.h, write_plain.h) -- and one under a mutex, which
 * is not: of the 10,002, 4096 + 370 (4097 to 10,001) are timed. */
static pthread_barrier_t th_held;
static int th_write;

static int lock_in_mode(pthread_rwlock_t *l, int write)
{
	return write ? pthread_rwlock_wrlock(l) : pthread_rwlock_rdlock(l);
}

static void *holds_a_while(void *arg)
{
	check(lock_in_mode(arg, !th_write), 0, "the other mode's lock");
	pthread_barrier_wait(&th_held);
	usleep(100000);
	check(pthread_rwlock_unlock(arg), 0, "unlock");
	return NULL;
}

static void timed_holds(int write)
{
	static pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	pthread_t th;
	th_write = write;
	pthread_barrier_init(&th_held, NULL, 2);
	pthread_create(&th, NULL, holds_a_while, &l);
	pthread_barrier_wait(&th_held);
	check(lock_in_mode(&l, write), 0, "lock behind the other mode");
	check(pthread_rwlock_unlock(&l), 0, "unlock");
	pthread_join(th, NULL);
	for (int i = 0; i < 10000; i++) {
		check(lock_in_mode(&l, write), 0, "lock");
		check(pthread_rwlock_unlock(&l), 0, "unlock");
	}
	pthread_mutex_lock(&m);
	check(lock_in_mode(&l, write), 0, "lock under m");
	check(pthread_rwlock_unlock(&l), 0, "unlock");
	pthread_mutex_unlock(&m);
}

/* write-nested: write locks the cache knows, taken while the thread holds
 * another lock -- never the plain case, which adds no lock-order edge:
 * wn.m then wn.a, later wn.a then wn.m, is a POTENTIAL DEADLOCK.  Then
 * wn.a and wn.b written together and let go of first taken first: each
 * unlock is its own lock's, though the other is on top of the held set.
 * One object, so that the three get different entries of the first
 * level of the thread's cache (two statics may share one). */
static struct {
	pthread_mutex_t m;
	pthread_rwlock_t a, b;
} wn = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_RWLOCK_INITIALIZER, PTHREAD_RWLOCK_INITIALIZER };

static void write_nested(void)
{
	/* first locks (each captures its site, which empties the first level
	 * of the thread's cache), then each again: the level knows all three */
	for (int i = 0; i < 3; i++) {
		pthread_mutex_lock(&wn.m);
		pthread_mutex_unlock(&wn.m);
		check(pthread_rwlock_wrlock(&wn.b), 0, "wrlock b");
		check(pthread_rwlock_unlock(&wn.b), 0, "unlock");
		check(pthread_rwlock_wrlock(&wn.a), 0, "wrlock a");
		check(pthread_rwlock_unlock(&wn.a), 0, "unlock");
	}
	pthread_mutex_lock(&wn.m);
	check(pthread_rwlock_wrlock(&wn.a), 0, "wrlock a under m");
	check(pthread_rwlock_unlock(&wn.a), 0, "unlock");
	pthread_mutex_unlock(&wn.m);
	check(pthread_rwlock_wrlock(&wn.a), 0, "wrlock a");
	pthread_mutex_lock(&wn.m);
	pthread_mutex_unlock(&wn.m);
	check(pthread_rwlock_unlock(&wn.a), 0, "unlock");

	check(pthread_rwlock_wrlock(&wn.a), 0, "wrlock a, then b");
	check(pthread_rwlock_wrlock(&wn.b), 0, "wrlock b");
	check(pthread_rwlock_unlock(&wn.a), 0, "unlock a first"); /* FIRST_OUT */
	check(pthread_rwlock_unlock(&wn.b), 0, "unlock b"); /* LAST_OUT */
}

/* A thread read-locks 70 rwlocks -- 6 beyond the 64 a held set follows --
 * lets go of them all (first taken first, or last first) and ends; then
 * a writer takes each: nothing is held, nothing reported. */
#define BEYOND 70
static pthread_rwlock_t beyond_locks[BEYOND];

static void *read_beyond(void *arg)
{
	int fifo = arg != NULL;
	for (int i = 0; i < BEYOND; i++)
		check(pthread_rwlock_rdlock(&beyond_locks[i]), 0, "rdlock");
	for (int i = 0; i < BEYOND; i++)
		check(pthread_rwlock_unlock(&beyond_locks[fifo ? i : BEYOND - 1 - i]), 0,
		      "unlock");
	return NULL;
}

static void *read_beyond_and_end(void *arg)
{
	for (int i = 0; i < BEYOND; i++)
		check(pthread_rwlock_rdlock(&beyond_locks[i]), 0, "rdlock");
	return arg; /* holding all 70 */
}

/* beyond-two: two threads each read 70 rwlocks of their own, all held at
 * once, then let go of them: nothing held (a striped table's snapshots) */
static pthread_rwlock_t beyond_other[BEYOND];
static pthread_barrier_t both_read;

static void *read_own_beyond(void *arg)
{
	pthread_rwlock_t *locks = arg;
	for (int i = 0; i < BEYOND; i++)
		check(pthread_rwlock_rdlock(&locks[i]), 0, "rdlock");
	pthread_barrier_wait(&both_read);
	for (int i = 0; i < BEYOND; i++)
		check(pthread_rwlock_unlock(&locks[i]), 0, "unlock");
	return NULL;
}

static void beyond_two(void)
{
	pthread_t t[2];
	for (int i = 0; i < BEYOND; i++) {
		check(pthread_rwlock_init(&beyond_locks[i], NULL), 0, "init");
		check(pthread_rwlock_init(&beyond_other[i], NULL), 0, "init");
	}
	pthread_barrier_init(&both_read, NULL, 2);
	pthread_create(&t[0], NULL, read_own_beyond, beyond_locks);
	pthread_create(&t[1], NULL, read_own_beyond, beyond_other);
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
}

/* beyond-held: a thread ends holding 70 reads */
static void beyond_held(void)
{
	pthread_t t;
	for (int i = 0; i < BEYOND; i++)
		check(pthread_rwlock_init(&beyond_locks[i], NULL), 0, "init");
	pthread_create(&t, NULL, read_beyond_and_end, NULL);
	pthread_join(t, NULL);
}

static void beyond_followed(int fifo)
{
	pthread_t t;
	for (int i = 0; i < BEYOND; i++)
		check(pthread_rwlock_init(&beyond_locks[i], NULL), 0, "init");
	pthread_create(&t, NULL, read_beyond, fifo ? &t : NULL);
	pthread_join(t, NULL);
	for (int i = 0; i < BEYOND; i++) {
		check(pthread_rwlock_trywrlock(&beyond_locks[i]), 0, "trywrlock");
		check(pthread_rwlock_unlock(&beyond_locks[i]), 0, "unlock");
	}
}

/* Memory that held a spin lock and a read-write lock, neither destroyed,
 * used as mutexes with no init (as a static initialiser or a std::mutex
 * would): each mutex is a new life, counted as a mutex.  The read-write
 * lock was in an inversion with m first: the finding says where its life
 * ended. */
static union {
	pthread_spinlock_t spin;
	pthread_rwlock_t rw;
	pthread_mutex_t mutex;
} was_spin, was_rw;

static void reused(void)
{
	const pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
	check(pthread_spin_init(&was_spin.spin, 0), 0, "spin_init");
	for (int i = 0; i < 5; i++) {
		check(pthread_spin_lock(&was_spin.spin), 0, "spin_lock");
		check(pthread_spin_unlock(&was_spin.spin), 0, "spin_unlock");
	}
	check(pthread_rwlock_init(&was_rw.rw, NULL), 0, "rwlock_init");
	check(pthread_rwlock_wrlock(&was_rw.rw), 0, "wrlock");
	check(pthread_mutex_lock(&m), 0, "lock");
	check(pthread_mutex_unlock(&m), 0, "unlock");
	check(pthread_rwlock_unlock(&was_rw.rw), 0, "unlock");
	check(pthread_mutex_lock(&m), 0, "lock");
	check(pthread_rwlock_rdlock(&was_rw.rw), 0, "rdlock");
	check(pthread_rwlock_unlock(&was_rw.rw), 0, "unlock");
	check(pthread_mutex_unlock(&m), 0, "unlock");
	memcpy(&was_spin.mutex, &fresh, sizeof fresh);
	memcpy(&was_rw.mutex, &fresh, sizeof fresh);
	for (int i = 0; i < 3; i++) {
		check(pthread_mutex_lock(&was_spin.mutex), 0, "lock"); /* reused-spin */
		check(pthread_mutex_unlock(&was_spin.mutex), 0, "unlock");
	}
	check(pthread_mutex_lock(&was_rw.mutex), 0, "lock"); /* reused-rw */
	check(pthread_mutex_unlock(&was_rw.mutex), 0, "unlock");
	for (int i = 0; i < 6; i++) {
		check(pthread_mutex_trylock(&was_rw.mutex), 0, "trylock");
		check(pthread_mutex_unlock(&was_rw.mutex), 0, "unlock");
	}
	printf("spin %p rw %p\n", (void *)&was_spin, (void *)&was_rw);
}

/* The memory of a spin lock, never destroyed, becomes a mutex named
 * before its first lock: the name is the mutex's, not the old spin
 * lock's. */
static void reused_named(void)
{
	const pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
	int (*name)(const pthread_mutex_t *, const char *) =
		(int (*)(const pthread_mutex_t *, const char *))dlsym(RTLD_DEFAULT,
									"mutexstat_name");
	if (!name) {
		fprintf(stderr, "rwlocks: no mutexstat_name\n");
		exit(2);
	}
	check(pthread_spin_init(&was_spin.spin, 0), 0, "spin_init");
	for (int i = 0; i < 5; i++) {
		check(pthread_spin_lock(&was_spin.spin), 0, "spin_lock");
		check(pthread_spin_unlock(&was_spin.spin), 0, "spin_unlock");
	}
	memcpy(&was_spin.mutex, &fresh, sizeof fresh);
	check(name(&was_spin.mutex, "the new mutex"), 0, "name");
	for (int i = 0; i < 3; i++) {
		check(pthread_mutex_lock(&was_spin.mutex), 0, "lock");
		check(pthread_mutex_unlock(&was_spin.mutex), 0, "unlock");
	}
}

/* The memory of a mutex, never destroyed, becomes a spin lock: with
 * MUTEXSTAT_TRACK=mutex the spin lock is not recorded. */
static void reused_spin(void)
{
	for (int i = 0; i < 3; i++) {
		check(pthread_mutex_lock(&was_rw.mutex), 0, "lock");
		check(pthread_mutex_unlock(&was_rw.mutex), 0, "unlock");
	}
	check(pthread_spin_init(&was_rw.spin, 0), 0, "spin_init");
	for (int i = 0; i < 4; i++) {
		check(pthread_spin_lock(&was_rw.spin), 0, "spin_lock");
		check(pthread_spin_unlock(&was_rw.spin), 0, "spin_unlock");
	}
}

/* A static read-write lock whose only call failed (a bad deadline:
 * EINVAL, nothing counted as an operation), its memory then a spin lock
 * with no init: a new life, a spin lock's -- not the rwlock's record with
 * both kinds noted, which took the spin unlocks for a thread's that did
 * not hold it. */
static union {
	pthread_rwlock_t rw;
	pthread_spinlock_t spin;
} failed_rw = { .rw = PTHREAD_RWLOCK_INITIALIZER };

static void reused_failed(void)
{
	const struct timespec bad = { 0, -1 };
	pthread_spinlock_t fresh;
	check(pthread_rwlock_timedwrlock(&failed_rw.rw, &bad), EINVAL, "timedwrlock");
	check(pthread_spin_init(&fresh, 0), 0, "spin_init");
	failed_rw.spin = fresh;
	for (int i = 0; i < 3; i++) {
		check(pthread_spin_lock(&failed_rw.spin), 0, "spin_lock"); /* reused-failed */
		check(pthread_spin_unlock(&failed_rw.spin), 0, "spin_unlock");
	}
	printf("spin %p\n", (void *)&failed_rw);
}

/* A reader's lock destroyed under it (a MISUSE), then a new life at the
 * same address, which main holds to write: the reader's write lock of
 * the new lock is a wait for main like any -- not a write lock of a lock
 * it reads (its read was of the life that ended), no SELF-DEADLOCK; and it
 * leaves holding nothing, no HELD AT THREAD EXIT. */
static pthread_rwlock_t dr_lock;
static pthread_barrier_t dr_read, dr_go;
static pid_t dr_tid;

static void *dr_reader(void *arg)
{
	__atomic_store_n(&dr_tid, gettid(), __ATOMIC_RELEASE);
	check(pthread_rwlock_rdlock(&dr_lock), 0, "rdlock"); /* dr-read */
	pthread_barrier_wait(&dr_read);
	pthread_barrier_wait(&dr_go);
	if (arg) { /* "unlock": its read's unlock, of the new life */
		pthread_rwlock_unlock(&dr_lock); /* dr-unlock */
		return NULL;
	}
	check(pthread_rwlock_wrlock(&dr_lock), 0, "wrlock"); /* dr-write */
	check(pthread_rwlock_unlock(&dr_lock), 0, "unlock");
	return arg;
}

/* The same reader, whose lock is destroyed and made again (free), then
 * lets go of its read: an unlock of a lock it does not hold (a MISUSE),
 * not its read's release -- its read's entry was at the top of its held
 * set, which the unlock trusted. */
static void destroyed_then_unlock(void)
{
	pthread_t t;
	check(pthread_rwlock_init(&dr_lock, NULL), 0, "rwlock_init");
	pthread_barrier_init(&dr_read, NULL, 2);
	pthread_barrier_init(&dr_go, NULL, 2);
	check(pthread_create(&t, NULL, dr_reader, (void *)1), 0, "create");
	pthread_barrier_wait(&dr_read);
	check(pthread_rwlock_destroy(&dr_lock), 0, "destroy");
	check(pthread_rwlock_init(&dr_lock, NULL), 0, "rwlock_init");
	check(pthread_rwlock_rdlock(&dr_lock), 0, "rdlock"); /* its new life, locked once */
	pthread_barrier_wait(&dr_go);
	check(pthread_join(t, NULL), 0, "join");
	printf("rwlock %p\n", (void *)&dr_lock);
}

static void destroyed_while_read(void)
{
	pthread_t t;
	check(pthread_rwlock_init(&dr_lock, NULL), 0, "rwlock_init");
	pthread_barrier_init(&dr_read, NULL, 2);
	pthread_barrier_init(&dr_go, NULL, 2);
	check(pthread_create(&t, NULL, dr_reader, NULL), 0, "create");
	pthread_barrier_wait(&dr_read);
	check(pthread_rwlock_destroy(&dr_lock), 0, "destroy"); /* dr-destroy */
	check(pthread_rwlock_init(&dr_lock, NULL), 0, "rwlock_init");
	check(pthread_rwlock_wrlock(&dr_lock), 0, "wrlock");
	pthread_barrier_wait(&dr_go);
	while (!sleeps_on_futex(__atomic_load_n(&dr_tid, __ATOMIC_ACQUIRE), NULL))
		usleep(200);
	check(pthread_rwlock_unlock(&dr_lock), 0, "unlock");
	check(pthread_join(t, NULL), 0, "join");
	printf("rwlock %p\n", (void *)&dr_lock);
}

/* A write lock with no deadline (NULL, which glibc takes as none) waits
 * like any: a thread holding m waits for main's read, main waits for m --
 * a DEADLOCK, for ever. */
static pthread_rwlock_t nd = PTHREAD_RWLOCK_INITIALIZER;
static pthread_mutex_t nd_m = PTHREAD_MUTEX_INITIALIZER;
static const struct timespec *volatile nd_none; /* NULL, out of the compiler's sight */
static void *nd_writer(void *arg)
{
	pthread_mutex_lock(&nd_m);
	pthread_rwlock_timedwrlock(&nd, nd_none); /* nd-write */
	return arg;
}

static void null_deadline(void)
{
	pthread_t t;
	pthread_rwlock_rdlock(&nd);
	pthread_create(&t, NULL, nd_writer, NULL);
	usleep(200000); /* the writer holds m and waits */
	pthread_mutex_lock(&nd_m);
}

/* Who let a waiter in, kept while other readers come and go: main's
 * write lets a reader in; while that reader holds, a writer waits and
 * main reads 40 times (each unlock saw the waiting writer and took a
 * release number once, and four numbers later the reader's had been
 * overwritten before it read it: its wait went unattributed).  Then the
 * reader, the last one out, lets the writer in.  Each wait is charged to
 * the unlock that ended it, and main's 40 unlocks ended none. */
static pthread_rwlock_t bk = PTHREAD_RWLOCK_INITIALIZER;
static int bk_reader_tid, bk_writer_tid, bk_reading, bk_done_reading;

static void *bk_reader(void *arg)
{
	__atomic_store_n(&bk_reader_tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
	CHECK(pthread_rwlock_rdlock(&bk));
	__atomic_store_n(&bk_reading, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&bk_done_reading, __ATOMIC_ACQUIRE))
		usleep(1000);
	CHECK(pthread_rwlock_unlock(&bk)); /* bk-last-reader */
	return arg;
}

static void *bk_writer(void *arg)
{
	__atomic_store_n(&bk_writer_tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
	CHECK(pthread_rwlock_wrlock(&bk));
	CHECK(pthread_rwlock_unlock(&bk));
	return arg;
}

/* until thread *tid (once known) sleeps in futex() */
static void bk_wait_asleep(const int *tid)
{
	int t;
	while (!(t = __atomic_load_n(tid, __ATOMIC_ACQUIRE)) || !sleeps_on_futex(t, NULL))
		usleep(1000);
}

static void blame_kept(void)
{
	pthread_t r, w;
	CHECK(pthread_rwlock_wrlock(&bk));
	CHECK(pthread_create(&r, NULL, bk_reader, NULL));
	bk_wait_asleep(&bk_reader_tid);
	CHECK(pthread_rwlock_unlock(&bk)); /* bk-let-in */
	while (!__atomic_load_n(&bk_reading, __ATOMIC_ACQUIRE))
		usleep(1000);
	CHECK(pthread_create(&w, NULL, bk_writer, NULL));
	bk_wait_asleep(&bk_writer_tid);
	for (int i = 0; i < 40; i++) {
		CHECK(pthread_rwlock_rdlock(&bk));
		CHECK(pthread_rwlock_unlock(&bk)); /* bk-other-reads */
	}
	__atomic_store_n(&bk_done_reading, 1, __ATOMIC_RELEASE);
	CHECK(pthread_join(r, NULL));
	CHECK(pthread_join(w, NULL));
}

int main(int argc, char **argv)
{
	alarm(60);
	const char *what = argc > 1 ? argv[1] : "";
	if (!strcmp(what, "counts"))
		counts();
	else if (!strcmp(what, "inversion"))
		inversion();
	else if (!strcmp(what, "read-read"))
		read_read(0);
	else if (!strcmp(what, "read-read-writer-preferring"))
		read_read(1);
	else if (!strcmp(what, "read-history"))
		read_history();
	else if (!strcmp(what, "read-busy"))
		read_busy();
	else if (!strcmp(what, "spent-late"))
		spent_late();
	else if (!strcmp(what, "read-ended"))
		read_ended();
	else if (!strcmp(what, "read-order"))
		read_order();
	else if (!strcmp(what, "read-threads"))
		read_threads();
	else if (!strcmp(what, "timed-reads"))
		timed_holds(0);
	else if (!strcmp(what, "readers-at-once"))
		readers_at_once();
	else if (!strcmp(what, "plain-writes"))
		plain_writes();
	else if (!strcmp(what, "write-nested"))
		write_nested();
	else if (!strcmp(what, "timed-writes"))
		timed_holds(1);
	else if (!strcmp(what, "plain-ended"))
		plain_ended();
	else if (!strcmp(what, "many"))
		many();
	else if (!strcmp(what, "beyond-fifo"))
		beyond_followed(1);
	else if (!strcmp(what, "beyond-lifo"))
		beyond_followed(0);
	else if (!strcmp(what, "beyond-held"))
		beyond_held();
	else if (!strcmp(what, "beyond-two"))
		beyond_two();
	else if (!strcmp(what, "named"))
		named();
	else if (!strcmp(what, "misuse-other-reader"))
		misuse_other_reader();
	else if (!strcmp(what, "modes-later"))
		modes_later(0);
	else if (!strcmp(what, "modes-writer-first"))
		modes_later(1);
	else if (!strcmp(what, "null-deadline"))
		null_deadline();
	else if (!strcmp(what, "reused-named"))
		reused_named();
	else if (!strcmp(what, "reused-spin"))
		reused_spin();
	else if (!strcmp(what, "misuse-key-reader"))
		misuse_key_reader();
	else if (!strcmp(what, "reused"))
		reused();
	else if (!strcmp(what, "reused-failed"))
		reused_failed();
	else if (!strcmp(what, "destroyed-while-read"))
		destroyed_while_read();
	else if (!strcmp(what, "destroyed-then-unlock"))
		destroyed_then_unlock();
	else if (!strcmp(what, "mixed"))
		mixed();
	else if (!strcmp(what, "destroyed"))
		destroyed();
	else if (!strcmp(what, "live"))
		live();
	else if (!strcmp(what, "write-after-read")) {
		pthread_rwlock_rdlock(&a); /* war-rd */
		pthread_rwlock_wrlock(&a); /* war-wr */
	} else if (!strcmp(what, "spin-relock")) {
		pthread_spin_init(&s, PTHREAD_PROCESS_PRIVATE);
		pthread_spin_lock(&s); /* spin-1 */
		pthread_spin_lock(&s); /* spin-2 */
	} else if (!strcmp(what, "edeadlk")) {
		pthread_rwlock_wrlock(&a);
		printf("rdlock by the writer: %s\n", strerrorname_np(pthread_rwlock_rdlock(&a)));
		printf("wrlock by the writer: %s\n", strerrorname_np(pthread_rwlock_wrlock(&a)));
		pthread_rwlock_unlock(&a);
	} else if (!strcmp(what, "edeadlk-alive")) {
		/* two rwlocks alive together, relocked by the same code, the
		 * first destroyed before the second's relock: two findings */
		pthread_rwlock_t l[2];
		for (int i = 0; i < 2; i++)
			pthread_rwlock_init(&l[i], NULL);
		for (int i = 0; i < 2; i++) {
			pthread_rwlock_wrlock(&l[i]);
			printf("%s\n", strerrorname_np(pthread_rwlock_rdlock(&l[i])));
			pthread_rwlock_unlock(&l[i]);
			if (i == 0)
				pthread_rwlock_destroy(&l[0]);
		}
		pthread_rwlock_destroy(&l[1]);
	} else if (!strcmp(what, "destroy-after-busy")) {
		/* a read, a busy try (its entry shares the read's order), then
		 * the destroy of the read-locked rwlock: a MISUSE, whose entry
		 * ends the kept history once */
		pthread_rwlock_t l;
		pthread_rwlock_init(&l, NULL);
		pthread_rwlock_rdlock(&l);
		printf("%s ", strerrorname_np(pthread_rwlock_trywrlock(&l)));
		printf("%d\n", pthread_rwlock_destroy(&l));
	} else if (!strcmp(what, "edeadlk-lives")) {
		/* the same refused relock on five lives of a lock made anew */
		for (int i = 0; i < 5; i++) {
			pthread_rwlock_t l;
			pthread_rwlock_init(&l, NULL);
			pthread_rwlock_wrlock(&l);
			printf("%s\n", strerrorname_np(pthread_rwlock_rdlock(&l))); /* edeadlk-lives */
			pthread_rwlock_unlock(&l);
			pthread_rwlock_destroy(&l);
		}
	} else if (!strcmp(what, "misuse"))
		misuse();
	else if (!strcmp(what, "timed-behind-writer"))
		timed_behind_writer();
	else if (!strcmp(what, "timed-write"))
		timed_write();
	else if (!strcmp(what, "blame-kept"))
		blame_kept();
	else if (!strcmp(what, "writers-exit"))
		writers_exit();
	else if (!strcmp(what, "exit-then-write"))
		exit_then_write();
	else if (!strcmp(what, "exit-reset-write"))
		exit_reset_write();
	else if (!strcmp(what, "exit-unlocked-write"))
		exit_unlocked_write();
	else if (!strcmp(what, "shared-reader"))
		shared_reader();
	else if (!strcmp(what, "main-reads")) {
		pthread_rwlock_rdlock(&b); /* main-rd */
	} else if (!strcmp(what, "exit")) {
		pthread_t th;
		pthread_create(&th, NULL, exits_reading, NULL);
		pthread_join(th, NULL);
	} else if (!strcmp(what, "exit-unlocked-exit")) {
		/* a reader exits; main lets its read go (a MISUSE); a second
		 * reader exits: glibc still counts that one */
		pthread_t th;
		pthread_create(&th, NULL, exits_reading, NULL);
		pthread_join(th, NULL);
		printf("unlock %d\n", pthread_rwlock_unlock(&b));
		pthread_create(&th, NULL, exits_reading, NULL);
		pthread_join(th, NULL);
		printf("trywrlock %d\n", pthread_rwlock_trywrlock(&b));
	} else {
		fprintf(stderr, "rwlocks: unknown scenario '%s'\n", what);
		return 2;
	}
	return 0;
}
