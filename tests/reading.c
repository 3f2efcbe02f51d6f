/* reading.c - small programs whose report tests/reading.sh reads line by
 * line, as a user would, one per argument.  Each prints the addresses of
 * its mutexes, so the test can find their lines; threads are ordered by
 * joins, never by sleeps.
 *
 *   tie       the main thread locks m1; a thread's trylock finds it busy
 *             (EBUSY) and the thread is joined; then main unlocks m1.  In
 *             m1's recent operations the busy trylock comes before the
 *             unlock.
 *   sites     first_lock() locks a mutex at one line for two callers:
 *             from_alpha() with m1, then from_beta() with m2 -- two mutexes
 *             first locked at the same line, from different functions (a
 *             wrapper: each gets a stack of its own).  Then shared_lock()
 *             locks 4000 lives of a mutex for from_loop() (the same stack
 *             each time: the site's stack is shared), then m3 for
 *             from_late(), which shows the line alone.
 *   wrapended wrapped_life() inits, locks and destroys a heap mutex: 3
 *             lives for from_three(), then 2 for from_two() -- ended lives
 *             of a wrapper, which is known as one at from_two's first.
 *   onecaller one_life() inits, locks and destroys a mutex, called from
 *             one line of many_lives(), which main calls and then a
 *             thread: stacks that differ below the caller, one site.
 *   exited    a thread locks m1 and ends without unlocking it; main joins
 *             it and returns.
 *   exitwrapped  from_delta() locks m2 through lock_only() and unlocks
 *             it; a thread's leave_wrapped() then takes m3 through
 *             lock_only() (its first lock: lock_only is now a wrapper) and
 *             ends holding it; main joins it and returns.
 *   wrapabba  inv_one() takes m1 then m3 through lock_only() (their first
 *             locks, at two lines: lock_only is a wrapper); a thread then
 *             takes m3 then m1 through it: a POTENTIAL DEADLOCK whose
 *             mutexes were first locked in the wrapper.
 *   wraphang  from_delta() takes m2 through lock_only(); then two threads
 *             each take m1 or m3 through it, then the other's: a DEADLOCK
 *             of mutexes taken in a wrapper.
 *   wrapself  an errorcheck mutex locked through lock_only() (a wrapper
 *             since from_delta's lock), then again: EDEADLK, a relock
 *             refused (MISUSE) whose "taken at" is the wrapper's line.
 *   longended a mutex inited, locked and destroyed in a function whose
 *             name is too long for the end of its ended line's heading.
 *   ended     4 mutexes initialised and destroyed, 3 of them never locked,
 *             one locked once.
 *   destroyed lock_only() locks m2 for from_delta(), then a destroyed
 *             mutex for from_gamma(): EINVAL, a MISUSE at the line where m2
 *             was first locked, from another caller.
 *   names     m1 named "a" and 20 times "é" (41 bytes; through the API,
 *             found with dlsym, so the program runs with and without the
 *             library), locked once and unlocked twice (a MISUSE); m2 named
 *             "queue_for_incoming_requests", locked once.
 *   counters  counters with many digits on m1, each 10,000,000: trylocks
 *             that find it busy (another thread holds it), timedlocks that
 *             time out at once (a deadline before 1970: glibc makes no
 *             system call), trylocks that get it and condition waits whose
 *             deadline has passed. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t m1 = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t m2 = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t m3 = PTHREAD_MUTEX_INITIALIZER;

static void *try_busy(void *arg)
{
	(void)arg;
	int rc = pthread_mutex_trylock(&m1);
	printf("trylock: %s\n", rc ? strerrorname_np(rc) : "0");
	return NULL;
}

static int tie(void)
{
	pthread_t t;
	pthread_mutex_lock(&m1);
	pthread_create(&t, NULL, try_busy, NULL);
	pthread_join(t, NULL);
	pthread_mutex_unlock(&m1);
	return 0;
}

/* Not inlined, so each caller is a frame of its own under the lock. */
__attribute__((noinline)) void first_lock(pthread_mutex_t *m)
{
	pthread_mutex_lock(m); /* FIRST_LOCK */
	pthread_mutex_unlock(m);
}

__attribute__((noinline)) void from_alpha(void)
{
	first_lock(&m1);
	__asm__ volatile("" ::: "memory"); /* not a tail call */
}

__attribute__((noinline)) void from_beta(void)
{
	first_lock(&m2);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) int lock_only(pthread_mutex_t *m)
{
	int rc = pthread_mutex_lock(m); /* LOCK_ONLY */
	__asm__ volatile("" ::: "memory");
	return rc;
}

__attribute__((noinline)) void from_delta(void)
{
	lock_only(&m2);
	pthread_mutex_unlock(&m2);
}

__attribute__((noinline)) void from_gamma(pthread_mutex_t *gone)
{
	printf("lock of a destroyed mutex: %s\n", strerrorname_np(lock_only(gone)));
}

static int destroyed(void)
{
	pthread_mutex_t gone;
	pthread_mutex_init(&gone, NULL);
	pthread_mutex_destroy(&gone);
	from_delta();
	from_gamma(&gone);
	return 0;
}

__attribute__((noinline)) void shared_lock(pthread_mutex_t *m)
{
	pthread_mutex_lock(m); /* SHARED_LOCK */
	pthread_mutex_unlock(m);
}

/* 4000 lives of one mutex, each first locked at one line from here: the
 * line's stack is shared from the fourth, and looked at again less and
 * less often (1 in 16 lives, then 32, ... 1024) */
__attribute__((noinline)) void from_loop(void)
{
	pthread_mutex_t m;
	/* volatile: one call instruction, not a loop peeled or unrolled */
	for (volatile int i = 0; i < 4000; i++) {
		pthread_mutex_init(&m, NULL);
		shared_lock(&m);
		pthread_mutex_destroy(&m);
	}
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void from_late(void)
{
	shared_lock(&m3);
	__asm__ volatile("" ::: "memory");
}

/* A wrapper and another line whose call sites take one slot of the site
 * cache (two functions alike, 4096-aligned): the wrapper's mutexes,
 * locked from two callers, then the other line's, which takes the slot. */
__attribute__((noinline, aligned(4096))) void wrap_slot(pthread_mutex_t *m)
{
	pthread_mutex_lock(m); /* WRAP_SLOT */
	pthread_mutex_unlock(m);
}

__attribute__((noinline, aligned(4096))) void same_slot(pthread_mutex_t *m)
{
	pthread_mutex_lock(m);
	pthread_mutex_unlock(m);
}

static pthread_mutex_t w1 = PTHREAD_MUTEX_INITIALIZER, w2 = PTHREAD_MUTEX_INITIALIZER,
		       w3 = PTHREAD_MUTEX_INITIALIZER, taker = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) void wraps_one(void)
{
	wrap_slot(&w1);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void wraps_two(void)
{
	wrap_slot(&w2);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void wraps_three(void)
{
	wrap_slot(&w3);
	__asm__ volatile("" ::: "memory");
}

static int slottaken(void)
{
	wraps_one();
	wraps_two();
	same_slot(&taker);
	wraps_three(); /* the wrapper back in the slot */
	printf("w1 %p\nw2 %p\nw3 %p\n", (void *)&w1, (void *)&w2, (void *)&w3);
	printf("slots %s\n", ((uintptr_t)wrap_slot & 4095) == ((uintptr_t)same_slot & 4095) ? "alike" : "differ");
	return 0;
}

static int sites(void)
{
	from_alpha();
	from_beta();
	from_loop();
	from_late();
	printf("m3 %p\n", (void *)&m3);
	return 0;
}

__attribute__((noinline)) void wrapped_life(void)
{
	pthread_mutex_t *m = malloc(sizeof *m);
	pthread_mutex_init(m, NULL);
	pthread_mutex_lock(m); /* WRAPPED_LOCK */
	pthread_mutex_unlock(m);
	pthread_mutex_destroy(m);
	free(m);
}

__attribute__((noinline)) void from_three(void)
{
	for (volatile int i = 0; i < 3; i++)
		wrapped_life(); /* FROM_THREE */
}

__attribute__((noinline)) void from_two(void)
{
	for (volatile int i = 0; i < 2; i++)
		wrapped_life(); /* FROM_TWO */
}

static int wrapended(void)
{
	from_three();
	from_two();
	return 0;
}

__attribute__((noinline)) void one_life(void)
{
	pthread_mutex_t m;
	pthread_mutex_init(&m, NULL);
	pthread_mutex_lock(&m); /* ONE_LIFE */
	pthread_mutex_unlock(&m);
	pthread_mutex_destroy(&m);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void many_lives(void)
{
	for (volatile int i = 0; i < 1000; i++)
		one_life();
}

static void *many_lives_thread(void *arg)
{
	many_lives();
	return arg;
}

static int onecaller(void)
{
	pthread_t t;
	many_lives();
	pthread_create(&t, NULL, many_lives_thread, NULL);
	pthread_join(t, NULL);
	return 0;
}

static void *take_and_leave(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m1);
	return NULL;
}

static void *leave_wrapped(void *arg)
{
	(void)arg;
	lock_only(&m3); /* LEAVE_WRAPPED */
	__asm__ volatile("" ::: "memory");
	return NULL;
}

/* A thread running fn, joined. */
static int in_a_thread(void *(*fn)(void *))
{
	pthread_t t;
	pthread_create(&t, NULL, fn, NULL);
	pthread_join(t, NULL);
	return 0;
}

static int exited(void)
{
	return in_a_thread(take_and_leave);
}

static int exitwrapped(void)
{
	from_delta();
	in_a_thread(leave_wrapped);
	printf("m3 %p\n", (void *)&m3);
	return 0;
}

__attribute__((noinline)) void inv_one(void)
{
	lock_only(&m1); /* INV_ONE_A */
	lock_only(&m3); /* INV_ONE_B */
	pthread_mutex_unlock(&m3);
	pthread_mutex_unlock(&m1);
}

static void *inv_two(void *arg)
{
	(void)arg;
	lock_only(&m3);
	lock_only(&m1);
	pthread_mutex_unlock(&m1);
	pthread_mutex_unlock(&m3);
	return NULL;
}

static int wrapabba(void)
{
	inv_one();
	in_a_thread(inv_two);
	printf("m3 %p\n", (void *)&m3);
	return 0;
}

/* wrapself: an errorcheck mutex locked twice through lock_only (a wrapper
 * since from_delta's lock): glibc answers EDEADLK. */
__attribute__((noinline)) static int wrapself(void)
{
	pthread_mutexattr_t a;
	pthread_mutex_t ec;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&ec, &a);
	from_delta();
	lock_only(&ec); /* SELF_FIRST */
	printf("relock: %s\n", strerrorname_np(lock_only(&ec)));
	pthread_mutex_unlock(&ec);
	pthread_mutex_destroy(&ec);
	return 0;
}

/* A name too long to end the heading of its ended line. */
__attribute__((noinline)) void a_function_whose_name_leaves_no_room_at_the_end_of_a_heading(void)
{
	pthread_mutex_t m;
	pthread_mutex_init(&m, NULL);
	pthread_mutex_lock(&m); /* LONG_NAMED */
	pthread_mutex_unlock(&m);
	pthread_mutex_destroy(&m);
}

static int longended(void)
{
	a_function_whose_name_leaves_no_room_at_the_end_of_a_heading();
	return 0;
}

static int ended(void)
{
	pthread_mutex_t m[4];
	for (int i = 0; i < 4; i++)
		pthread_mutex_init(&m[i], NULL);
	pthread_mutex_lock(&m[0]);
	pthread_mutex_unlock(&m[0]);
	for (int i = 0; i < 4; i++)
		pthread_mutex_destroy(&m[i]);
	return 0;
}

static sem_t m1_taken, m1_may_go; /* semaphores: the library sees none */

/* wraphang: each thread takes one mutex through lock_only, then, once the
 * other holds its own, the other's: they wait for each other forever. */
static sem_t hang_held[2];

static void *hang_side(void *arg)
{
	int me = (int)(intptr_t)arg;
	pthread_mutex_t *mine = me ? &m3 : &m1, *theirs = me ? &m1 : &m3;
	lock_only(mine); /* HANG_FIRST */
	sem_post(&hang_held[me]);
	sem_wait(&hang_held[!me]);
	lock_only(theirs);
	return NULL;
}

static int wraphang(void)
{
	pthread_t t[2];
	printf("m3 %p\n", (void *)&m3);
	fflush(stdout);
	from_delta(); /* lock_only is called from two places: a wrapper */
	sem_init(&hang_held[0], 0, 0);
	sem_init(&hang_held[1], 0, 0);
	for (intptr_t i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, hang_side, (void *)i);
	pthread_join(t[0], NULL); /* never */
	return 0;
}

static void *hold_m1(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m1);
	sem_post(&m1_taken);
	sem_wait(&m1_may_go);
	pthread_mutex_unlock(&m1);
	return NULL;
}

static int counters(void)
{
	pthread_t t;
	struct timespec past = { -1, 0 }; /* glibc gives up at once, no system call */
	pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
	long busy = 0, timeouts = 0, got = 0, waits = 0;
	sem_init(&m1_taken, 0, 0);
	sem_init(&m1_may_go, 0, 0);
	pthread_create(&t, NULL, hold_m1, NULL);
	sem_wait(&m1_taken);
	for (long i = 0; i < 10000000; i++)
		busy += pthread_mutex_trylock(&m1) == EBUSY;
	for (long i = 0; i < 10000000; i++)
		timeouts += pthread_mutex_timedlock(&m1, &past) == ETIMEDOUT;
	sem_post(&m1_may_go);
	pthread_join(t, NULL);
	for (long i = 0; i < 10000000; i++)
		if (pthread_mutex_trylock(&m1) == 0) {
			got++;
			pthread_mutex_unlock(&m1);
		}
	pthread_mutex_lock(&m1);
	for (long i = 0; i < 10000000; i++)
		waits += pthread_cond_timedwait(&cond, &m1, &past) == ETIMEDOUT;
	pthread_mutex_unlock(&m1);
	printf("busy %ld, timed out %ld, got %ld, condition waits %ld\n", busy, timeouts, got,
	       waits);
	return 0;
}

static int names(void)
{
	void (*name)(pthread_mutex_t *, const char *) =
		(void (*)(pthread_mutex_t *, const char *))dlsym(RTLD_DEFAULT, "mutexstat_name");
	if (name) {
		char accents[64] = "a";
		for (int i = 0; i < 20; i++)
			strcat(accents, "\xc3\xa9"); /* é */
		name(&m1, accents);
		name(&m2, "queue_for_incoming_requests");
	}
	pthread_mutex_lock(&m1);
	pthread_mutex_unlock(&m1);
	pthread_mutex_unlock(&m1);
	pthread_mutex_lock(&m2);
	pthread_mutex_unlock(&m2);
	return 0;
}

int main(int argc, char **argv)
{
	printf("m1 %p\nm2 %p\n", (void *)&m1, (void *)&m2);
	fflush(stdout);
	const char *what = argc > 1 ? argv[1] : "";
	if (!strcmp(what, "tie"))
		return tie();
	if (!strcmp(what, "sites"))
		return sites();
	if (!strcmp(what, "slottaken"))
		return slottaken();
	if (!strcmp(what, "exited"))
		return exited();
	if (!strcmp(what, "exitwrapped"))
		return exitwrapped();
	if (!strcmp(what, "wrapself"))
		return wrapself();
	if (!strcmp(what, "wraphang"))
		return wraphang();
	if (!strcmp(what, "longended"))
		return longended();
	if (!strcmp(what, "wrapabba"))
		return wrapabba();
	if (!strcmp(what, "wrapended"))
		return wrapended();
	if (!strcmp(what, "onecaller"))
		return onecaller();
	if (!strcmp(what, "counters"))
		return counters();
	if (!strcmp(what, "ended"))
		return ended();
	if (!strcmp(what, "destroyed"))
		return destroyed();
	if (!strcmp(what, "names"))
		return names();
	fprintf(stderr, "usage: reading tie|sites|exited|exitwrapped|wrapabba|wraphang|wrapself|longended|counters|ended|destroyed|names\n");
	return 2;
}
