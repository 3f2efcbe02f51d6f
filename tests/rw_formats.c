/* rw_formats.c - read-write and spin locks for the tests of the other
 * formats (json.sh, dot.sh, pprof.sh, folded.sh): each argument names a
 * scenario with known counts, waits or orders, and the program prints
 * the address of each lock it uses ("rw 0x..").  Lines the tests look for
 * carry a marker comment. */
#define _GNU_SOURCE
#include "proc_wait.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_rwlock_t wo = PTHREAD_RWLOCK_INITIALIZER;
static pthread_rwlock_t a = PTHREAD_RWLOCK_INITIALIZER;
static pthread_rwlock_t b = PTHREAD_RWLOCK_INITIALIZER;
static pthread_spinlock_t sp;

/* One thread: 1000 reads and 10 writes of rw, the last read after the
 * writes (so the recent operations, 16 by default, hold both modes); 100
 * spin lock pairs. */
static void counts(void)
{
	for (int i = 0; i < 999; i++) {
		CHECK(pthread_rwlock_rdlock(&rw));
		CHECK(pthread_rwlock_unlock(&rw));
	}
	for (int i = 0; i < 10; i++) {
		CHECK(pthread_rwlock_wrlock(&rw));
		CHECK(pthread_rwlock_unlock(&rw));
	}
	CHECK(pthread_rwlock_rdlock(&rw));
	CHECK(pthread_rwlock_unlock(&rw));
	for (int i = 0; i < 100; i++) {
		CHECK(pthread_spin_lock(&sp));
		CHECK(pthread_spin_unlock(&sp));
	}
}

/* A written then B read; B written then A read: two threads doing this
 * at once can deadlock. */
static void inversion(void)
{
	CHECK(pthread_rwlock_wrlock(&a));
	CHECK(pthread_rwlock_rdlock(&b)); /* INV_B_READ */
	CHECK(pthread_rwlock_unlock(&b));
	CHECK(pthread_rwlock_unlock(&a));
	CHECK(pthread_rwlock_wrlock(&b));
	CHECK(pthread_rwlock_rdlock(&a)); /* INV_A_READ */
	CHECK(pthread_rwlock_unlock(&a));
	CHECK(pthread_rwlock_unlock(&b));
}

/* ---- contend: one wait in each mode, at lines of their own ------------- */

struct waiter {
	pthread_t thread;
	pthread_rwlock_t *l;
	_Atomic pid_t tid;
	_Atomic long started; /* its CPU ticks when it set tid */
};

/* The CPU time (user + system, clock ticks) thread tid has used. */
static long cpu_ticks(pid_t tid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')'); /* the name may hold spaces */
	unsigned long ut = 0, st = 0;
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
			 &ut, &st) != 2)
		return -1;
	return (long)(ut + st);
}

static void *read_waiter(void *arg)
{
	struct waiter *w = arg;
	w->tid = (pid_t)gettid();
	CHECK(pthread_rwlock_rdlock(w->l)); /* RD_WAITS */
	CHECK(pthread_rwlock_unlock(w->l));
	return NULL;
}

static void *write_waiter(void *arg)
{
	struct waiter *w = arg;
	w->tid = (pid_t)gettid();
	CHECK(pthread_rwlock_wrlock(w->l)); /* WR_WAITS */
	CHECK(pthread_rwlock_unlock(w->l));
	return NULL;
}

static void *spin_waiter(void *arg)
{
	struct waiter *w = arg;
	w->started = cpu_ticks((pid_t)gettid());
	w->tid = (pid_t)gettid();
	CHECK(pthread_spin_lock(&sp)); /* SPIN_WAITS */
	CHECK(pthread_spin_unlock(&sp));
	return NULL;
}

/* Start a thread that waits, and return once it does: asleep in the
 * kernel (an rwlock), or spinning for two clock ticks (a spin lock). */
static void start_waiter(struct waiter *w, pthread_rwlock_t *l, void *(*fn)(void *))
{
	w->l = l;
	w->tid = 0;
	CHECK(pthread_create(&w->thread, NULL, fn, w));
	while (!w->tid)
		usleep(1000);
	if (fn == spin_waiter)
		while (cpu_ticks(w->tid) < w->started + 2)
			usleep(1000);
	else
		while (!sleeps_on_futex(w->tid, NULL))
			usleep(1000);
}

static long long now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000LL + t.tv_nsec / 1000;
}

/* Lock l held for read makes a writer wait, then held for write makes a
 * reader wait: each wait's and each holder's stack is one mode's.  The
 * read waits 100 ms longer than the write's whole phase took, so that the
 * lock's longest wait is the read's whatever the machine's load (the
 * writes' maximum is then only bounded: rwlocks.sh). */
static void both_modes(pthread_rwlock_t *l)
{
	struct waiter w;
	long long begun = now_us();
	CHECK(pthread_rwlock_rdlock(l));
	start_waiter(&w, l, write_waiter);
	CHECK(pthread_rwlock_unlock(l)); /* RD_LETS_IN */
	CHECK(pthread_join(w.thread, NULL));
	long long write_phase = now_us() - begun;
	CHECK(pthread_rwlock_wrlock(l));
	start_waiter(&w, l, read_waiter);
	usleep((useconds_t)(write_phase + 100000));
	CHECK(pthread_rwlock_unlock(l)); /* WR_LETS_IN */
	CHECK(pthread_join(w.thread, NULL));
}

static void contend(void)
{
	struct waiter w;
	both_modes(&rw);
	/* a lock written only: every stack is a write's */
	CHECK(pthread_rwlock_wrlock(&wo));
	start_waiter(&w, &wo, write_waiter);
	CHECK(pthread_rwlock_unlock(&wo)); /* WO_LETS_IN */
	CHECK(pthread_join(w.thread, NULL));
	CHECK(pthread_spin_lock(&sp));
	start_waiter(&w, NULL, spin_waiter);
	CHECK(pthread_spin_unlock(&sp)); /* SPIN_LETS_IN */
	CHECK(pthread_join(w.thread, NULL));
}

/* The same waits on an rwlock that is then destroyed: its site line. */
static void ended(void)
{
	pthread_rwlock_t l;
	CHECK(pthread_rwlock_init(&l, NULL));
	both_modes(&l);
	CHECK(pthread_rwlock_destroy(&l));
}

/* ---- hang: a deadlock through a read hold ------------------------------ */

static _Atomic pid_t main_tid;

/* Holds B for write, then waits to write A, which main holds for read. */
static void *hang_writer(void *arg)
{
	struct waiter *w = arg;
	CHECK(pthread_rwlock_wrlock(&b));
	w->tid = (pid_t)gettid();
	CHECK(pthread_rwlock_wrlock(&a)); /* HANG_WRITER_WAITS */
	return NULL;
}

/* Says "deadlocked" once main waits too. */
static void *hang_watch(void *arg)
{
	(void)arg;
	while (!sleeps_on_futex(main_tid, NULL))
		usleep(1000);
	printf("deadlocked\n");
	fflush(stdout);
	return NULL;
}

/* Main holds A for read and waits to write B; the other thread holds B
 * for write and waits to write A.  Never returns: the test kills it. */
static void hang(void)
{
	struct waiter w = { .tid = 0 };
	pthread_t watch;
	main_tid = (pid_t)gettid();
	CHECK(pthread_rwlock_rdlock(&a)); /* HANG_MAIN_READS */
	CHECK(pthread_create(&w.thread, NULL, hang_writer, &w));
	while (!w.tid || !sleeps_on_futex(w.tid, NULL))
		usleep(1000);
	CHECK(pthread_create(&watch, NULL, hang_watch, NULL));
	CHECK(pthread_rwlock_wrlock(&b)); /* HANG_MAIN_WAITS */
}

int main(int argc, char **argv)
{
	CHECK(pthread_spin_init(&sp, PTHREAD_PROCESS_PRIVATE));
	printf("rw %p\nwo %p\nspin %p\nA %p\nB %p\n", (void *)&rw, (void *)&wo, (void *)&sp,
	       (void *)&a, (void *)&b);
	fflush(stdout);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "counts"))
			counts();
		else if (!strcmp(argv[i], "inversion"))
			inversion();
		else if (!strcmp(argv[i], "contend"))
			contend();
		else if (!strcmp(argv[i], "ended"))
			ended();
		else if (!strcmp(argv[i], "hang"))
			hang();
		else {
			fprintf(stderr, "usage: %s counts|inversion|contend|ended|hang...\n",
				argv[0]);
			return 2;
		}
	}
	return 0;
}
