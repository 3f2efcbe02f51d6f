/* scale.c - the scale workloads of tests/scale.sh, each checking its own
 * results so the program proves it ran the same with the library:
 *
 *   threads NT NM ROUNDS   NT threads alive at once, each locking the NM
 *                          mutexes in turns ROUNDS times (every mutex is
 *                          locked exactly NT*ROUNDS/NM times)
 *   churn NT LIVES RING    NT threads create, lock and destroy LIVES
 *                          mutexes in all, RING alive per thread at a time,
 *                          at three first-lock sites (half locked once at
 *                          churn_once, 3 in 10 twice at churn_twice, 1 in 5
 *                          three times at churn_thrice); prints the peak
 *                          resident memory after a tenth and at the end
 *   full NT NM ROUNDS      like threads, then all NM mutexes destroyed and
 *                          10 new ones used (MUTEXSTAT_TABLE_SIZE small)
 *   deep N                 one thread takes N mutexes, lets them go in the
 *                          order it took them, then in reverse; then takes
 *                          Z; a second thread later takes Z then M[N/2]
 *                          and M[N-10]: no cycle (a held set that kept a
 *                          mutex after its unlock would invent one)
 *   deep_inversion N       the same, but the first thread, holding all N,
 *                          also takes Y, and the second takes M[10] while
 *                          holding Y: one real inversion, M[10] <-> Y
 *   held N                 the main thread takes N mutexes and exits
 *                          holding them (the report lists each)
 *   million N              N mutexes initialised, locked and left alive;
 *                          prints the resident memory (VmRSS) in kB
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc_wait.h"

static pthread_t start(void *(*fn)(void *), void *arg)
{
	pthread_attr_t a;
	pthread_t t;
	CHECK(pthread_attr_init(&a));
	CHECK(pthread_attr_setstacksize(&a, 64 * 1024));
	CHECK(pthread_create(&t, &a, fn, arg));
	pthread_attr_destroy(&a);
	return t;
}

/* ---- threads: NT threads on NM mutexes ------------------------------------ */
static int nt, nm, rounds;
static pthread_mutex_t *mutexes;
static long *counters;
static pthread_barrier_t all_started;

static void *turns(void *arg)
{
	long id = (long)arg;
	pthread_barrier_wait(&all_started); /* every thread alive at once */
	for (int r = 0; r < rounds; r++) {
		int i = (int)((id + r) % nm);
		CHECK(pthread_mutex_lock(&mutexes[i]));
		counters[i]++;
		CHECK(pthread_mutex_unlock(&mutexes[i]));
	}
	return NULL;
}

static int run_turns(void)
{
	pthread_t *t = calloc((size_t)nt, sizeof *t);
	CHECK(pthread_barrier_init(&all_started, NULL, (unsigned)nt));
	for (long i = 0; i < nt; i++)
		t[i] = start(turns, (void *)i);
	for (int i = 0; i < nt; i++)
		CHECK(pthread_join(t[i], NULL));
	long want = (long)nt * rounds / nm, exact = 0;
	for (int i = 0; i < nm; i++)
		exact += counters[i] == want;
	printf("%d threads, %d mutexes: %ld of %d locked exactly %ld times\n",
	       nt, nm, exact, nm, want);
	free(t);
	return exact == nm ? 0 : 1;
}

static int threads_main(void)
{
	mutexes = calloc((size_t)nm, sizeof *mutexes);
	counters = calloc((size_t)nm, sizeof *counters);
	for (int i = 0; i < nm; i++)
		CHECK(pthread_mutex_init(&mutexes[i], NULL));
	return run_turns();
}

static int full_main(void)
{
	int rc = threads_main();
	for (int i = 0; i < nm; i++)
		CHECK(pthread_mutex_destroy(&mutexes[i]));
	/* The table has room again: new mutexes are tracked. */
	static pthread_mutex_t fresh[10];
	for (int i = 0; i < 10; i++) {
		CHECK(pthread_mutex_init(&fresh[i], NULL));
		for (int j = 0; j <= i; j++) {
			CHECK(pthread_mutex_lock(&fresh[i]));
			CHECK(pthread_mutex_unlock(&fresh[i]));
		}
	}
	printf("then 10 new mutexes, locked 55 times\n");
	return rc;
}

/* ---- churn: many lives, few alive at once ----------------------------------- */
static long lives_per_thread;
static int ring;
static long done_lives; /* for the peak-memory sample */
static long hwm_tenth = -1;
static pthread_mutex_t sample_lock = PTHREAD_MUTEX_INITIALIZER;

/* One site per function, never inlined: the first-lock sites of the report. */
__attribute__((noinline)) static void churn_once(pthread_mutex_t *m)
{
	CHECK(pthread_mutex_lock(m));
	CHECK(pthread_mutex_unlock(m));
}

__attribute__((noinline)) static void churn_twice(pthread_mutex_t *m)
{
	for (int i = 0; i < 2; i++) {
		CHECK(pthread_mutex_lock(m));
		CHECK(pthread_mutex_unlock(m));
	}
}

__attribute__((noinline)) static void churn_thrice(pthread_mutex_t *m)
{
	for (int i = 0; i < 3; i++) {
		CHECK(pthread_mutex_lock(m));
		CHECK(pthread_mutex_unlock(m));
	}
}

static void *churn(void *arg)
{
	(void)arg;
	pthread_mutex_t *slots = calloc((size_t)ring, sizeof *slots);
	long total = (long)nt * lives_per_thread;
	for (long i = 0; i < lives_per_thread; i++) {
		pthread_mutex_t *m = &slots[i % ring];
		if (i >= ring)
			CHECK(pthread_mutex_destroy(m));
		CHECK(pthread_mutex_init(m, NULL));
		switch (i % 10) {
		case 0: case 1: case 2: case 3: case 4: churn_once(m); break;
		case 5: case 6: case 7: churn_twice(m); break;
		default: churn_thrice(m); break;
		}
		if ((i & 4095) == 4095) {
			CHECK(pthread_mutex_lock(&sample_lock));
			done_lives += 4096;
			if (hwm_tenth < 0 && done_lives >= total / 10)
				hwm_tenth = status_kb("VmHWM");
			CHECK(pthread_mutex_unlock(&sample_lock));
		}
	}
	for (long i = 0; i < ring && i < lives_per_thread; i++)
		CHECK(pthread_mutex_destroy(&slots[i]));
	free(slots);
	return NULL;
}

static int churn_main(long lives)
{
	lives_per_thread = lives / nt;
	pthread_t *t = calloc((size_t)nt, sizeof *t);
	for (int i = 0; i < nt; i++)
		t[i] = start(churn, NULL);
	for (int i = 0; i < nt; i++)
		CHECK(pthread_join(t[i], NULL));
	long hwm = status_kb("VmHWM");
	printf("%ld mutex lives on %d threads, %d alive at a time each\n",
	       lives_per_thread * nt, nt, ring);
	printf("peak resident: %ld kB after a tenth, %ld kB at the end: grew %ld kB\n",
	       hwm_tenth, hwm, hwm - hwm_tenth);
	free(t);
	return 0;
}

/* ---- deep held sets --------------------------------------------------------- */
static int deep_n;
static pthread_mutex_t *deep_m;
static pthread_mutex_t mz = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t my = PTHREAD_MUTEX_INITIALIZER;
static int inversion;

static void *deep_first(void *arg)
{
	(void)arg;
	for (int i = 0; i < deep_n; i++)
		CHECK(pthread_mutex_lock(&deep_m[i]));
	if (inversion) {
		CHECK(pthread_mutex_lock(&my));
		CHECK(pthread_mutex_unlock(&my));
	}
	for (int i = 0; i < deep_n; i++) /* oldest first */
		CHECK(pthread_mutex_unlock(&deep_m[i]));
	for (int i = 0; i < deep_n; i++)
		CHECK(pthread_mutex_lock(&deep_m[i]));
	for (int i = deep_n; i-- > 0;) /* newest first */
		CHECK(pthread_mutex_unlock(&deep_m[i]));
	/* Holding nothing now: Z comes after nothing. */
	CHECK(pthread_mutex_lock(&mz));
	CHECK(pthread_mutex_unlock(&mz));
	return NULL;
}

static void *deep_second(void *arg)
{
	(void)arg;
	CHECK(pthread_mutex_lock(&mz));
	CHECK(pthread_mutex_lock(&deep_m[deep_n / 2]));
	CHECK(pthread_mutex_unlock(&deep_m[deep_n / 2]));
	CHECK(pthread_mutex_lock(&deep_m[deep_n - 10]));
	CHECK(pthread_mutex_unlock(&deep_m[deep_n - 10]));
	CHECK(pthread_mutex_unlock(&mz));
	if (inversion) {
		CHECK(pthread_mutex_lock(&my));
		CHECK(pthread_mutex_lock(&deep_m[10]));
		CHECK(pthread_mutex_unlock(&deep_m[10]));
		CHECK(pthread_mutex_unlock(&my));
	}
	return NULL;
}

static int deep_main(void)
{
	deep_m = calloc((size_t)deep_n, sizeof *deep_m);
	for (int i = 0; i < deep_n; i++)
		CHECK(pthread_mutex_init(&deep_m[i], NULL));
	CHECK(pthread_join(start(deep_first, NULL), NULL));
	CHECK(pthread_join(start(deep_second, NULL), NULL));
	printf("one thread held %d mutexes at once, twice\n", deep_n);
	printf("M10 %p\nM%d %p\nY %p\nZ %p\n", (void *)&deep_m[10], deep_n - 1,
	       (void *)&deep_m[deep_n - 1], (void *)&my, (void *)&mz);
	return 0;
}

__attribute__((noinline)) static int held_main(void)
{
	deep_m = calloc((size_t)deep_n, sizeof *deep_m);
	for (int i = 0; i < deep_n; i++) {
		CHECK(pthread_mutex_init(&deep_m[i], NULL));
		CHECK(pthread_mutex_lock(&deep_m[i]));
	}
	printf("exiting holding %d mutexes\n", deep_n);
	return 0;
}

/* ---- a million live mutexes -------------------------------------------------- */
static int million_main(long n)
{
	pthread_mutex_t *m = calloc((size_t)n, sizeof *m);
	long before = status_kb("VmRSS");
	for (long i = 0; i < n; i++) {
		CHECK(pthread_mutex_init(&m[i], NULL));
		CHECK(pthread_mutex_lock(&m[i]));
		CHECK(pthread_mutex_unlock(&m[i]));
	}
	long after = status_kb("VmRSS");
	printf("%ld live mutexes: resident %ld kB before, %ld kB after\n", n,
	       before, after);
	free(m); /* freed without destroy, as many programs do */
	return 0;
}

/* ---- waiters: N threads, each waits once for a mutex ---------------------
 * Each thread's first wait captures its stack: the memory that costs is
 * measured with all N threads alive, after every one has waited. */
static pthread_mutex_t waited_for = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t waited_all;
static int arrived;

static void *waiter(void *arg)
{
	__atomic_add_fetch(&arrived, 1, __ATOMIC_SEQ_CST);
	CHECK(pthread_mutex_lock(&waited_for)); /* held by main: a wait */
	CHECK(pthread_mutex_unlock(&waited_for));
	pthread_barrier_wait(&waited_all); /* all have waited */
	pthread_barrier_wait(&waited_all); /* main has measured */
	return arg;
}

static int waiters_main(int n)
{
	pthread_t *t = calloc((size_t)n, sizeof *t);
	CHECK(pthread_barrier_init(&waited_all, NULL, (unsigned)n + 1));
	long before = status_kb("RssAnon");
	CHECK(pthread_mutex_lock(&waited_for));
	for (int i = 0; i < n; i++)
		t[i] = start(waiter, NULL);
	while (__atomic_load_n(&arrived, __ATOMIC_SEQ_CST) < n)
		usleep(1000);
	usleep(100000); /* the last ones into their lock calls */
	CHECK(pthread_mutex_unlock(&waited_for));
	pthread_barrier_wait(&waited_all);
	long after = status_kb("RssAnon");
	pthread_barrier_wait(&waited_all);
	for (int i = 0; i < n; i++)
		CHECK(pthread_join(t[i], NULL));
	printf("%d threads waited: resident %ld kB before, %ld kB after\n", n,
	       before, after);
	free(t);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	long a = argc > 2 ? atol(argv[2]) : 0;
	long b = argc > 3 ? atol(argv[3]) : 0;
	long c = argc > 4 ? atol(argv[4]) : 0;
	if (!strcmp(mode, "threads") && c > 0) {
		nt = (int)a, nm = (int)b, rounds = (int)c;
		return threads_main();
	}
	if (!strcmp(mode, "full") && c > 0) {
		nt = (int)a, nm = (int)b, rounds = (int)c;
		return full_main();
	}
	if (!strcmp(mode, "churn") && c > 0) {
		nt = (int)a, ring = (int)c;
		return churn_main(b);
	}
	if ((!strcmp(mode, "deep") || !strcmp(mode, "deep_inversion")) && a > 20) {
		deep_n = (int)a;
		inversion = !strcmp(mode, "deep_inversion");
		return deep_main();
	}
	if (!strcmp(mode, "held") && a > 0) {
		deep_n = (int)a;
		return held_main();
	}
	if (!strcmp(mode, "million") && a > 0)
		return million_main(a);
	if (!strcmp(mode, "waiters") && a > 0)
		return waiters_main((int)a);
	fprintf(stderr, "usage: scale threads NT NM ROUNDS | full NT NM ROUNDS |"
			" churn NT LIVES RING | deep N | deep_inversion N |"
			" held N | million N | waiters N\n");
	return 2;
}
