/* c11_threads.c - C11 threads (mtx_*, cnd_*) for tests/c11_threads.sh.
 *
 *   c11_threads answers   every mtx_* and cnd_* call and error path this
 *                         program can make safely, one line each: the test
 *                         compares them with and without the library
 *   c11_threads use       4 threads lock one mtx_t 1000 times each; two
 *                         mutexes taken in both orders (an inversion, no
 *                         hang: one thread); a producer and a consumer
 *                         with a cnd_t, 100 items; prints the totals */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <threads.h>
#include <time.h>

static const char *answer(int rc)
{
	switch (rc) {
	case thrd_success:
		return "thrd_success";
	case thrd_busy:
		return "thrd_busy";
	case thrd_error:
		return "thrd_error";
	case thrd_nomem:
		return "thrd_nomem";
	case thrd_timedout:
		return "thrd_timedout";
	default:
		return "?";
	}
}

#define SAY(what, call) printf("%-40s %s\n", what, answer(call))

static struct timespec in_ms(long ms)
{
	struct timespec t;
	timespec_get(&t, TIME_UTC);
	t.tv_nsec += ms * 1000000L;
	t.tv_sec += t.tv_nsec / 1000000000L;
	t.tv_nsec %= 1000000000L;
	return t;
}

static mtx_t held;

static int hold_for_a_while(void *arg)
{
	(void)arg;
	struct timespec t = in_ms(50);
	printf("%-40s %s\n", "other thread: trylock of a held mutex", answer(mtx_trylock(&held)));
	printf("%-40s %s\n", "other thread: timedlock, 50 ms", answer(mtx_timedlock(&held, &t)));
	return 0;
}

static int answers(void)
{
	static const struct { const char *name; int type; } types[] = {
		{ "plain", mtx_plain }, { "timed", mtx_timed },
		{ "plain|recursive", mtx_plain | mtx_recursive },
		{ "timed|recursive", mtx_timed | mtx_recursive }, { "99", 99 },
	};
	for (unsigned i = 0; i < sizeof types / sizeof *types; i++) {
		mtx_t m;
		char what[64];
		snprintf(what, sizeof what, "init %s", types[i].name);
		SAY(what, mtx_init(&m, types[i].type));
		SAY("  lock", mtx_lock(&m));
		int again = mtx_trylock(&m); /* a recursive one is taken twice */
		SAY("  trylock, held by this thread", again);
		if (again == thrd_success)
			SAY("  unlock", mtx_unlock(&m));
		SAY("  unlock", mtx_unlock(&m));
		mtx_destroy(&m);
	}
	mtx_t r;
	SAY("init recursive", mtx_init(&r, mtx_plain | mtx_recursive));
	SAY("  lock", mtx_lock(&r));
	SAY("  lock again", mtx_lock(&r));
	SAY("  unlock", mtx_unlock(&r));
	SAY("  unlock", mtx_unlock(&r));
	SAY("  unlock of an unlocked recursive mutex", mtx_unlock(&r));
	mtx_destroy(&r);

	SAY("init timed", mtx_init(&held, mtx_timed));
	SAY("  lock", mtx_lock(&held));
	thrd_t t;
	thrd_create(&t, hold_for_a_while, NULL);
	thrd_join(t, NULL);
	struct timespec bad = { 0, 1000000000L };
	SAY("  timedlock, bad deadline, held", mtx_timedlock(&held, &bad));
	SAY("  unlock", mtx_unlock(&held));
	SAY("  timedlock, free", mtx_timedlock(&held, &bad));
	SAY("  unlock", mtx_unlock(&held));

	cnd_t c;
	SAY("cnd_init", cnd_init(&c));
	SAY("  lock", mtx_lock(&held));
	struct timespec soon = in_ms(20);
	SAY("  cnd_timedwait, 20 ms, nobody signals", cnd_timedwait(&c, &held, &soon));
	SAY("  cnd_timedwait, bad deadline", cnd_timedwait(&c, &held, &bad));
	SAY("  unlock", mtx_unlock(&held));
	cnd_destroy(&c);
	mtx_destroy(&held);
	return 0;
}

static mtx_t counter_lock, a, b, queue_lock;
static cnd_t queue_ready;
static long counter;
static int queued, produced_all;
/* Set by the consumer holding queue_lock: the producer starts only then,
 * so its first lock can be had only once the consumer waits (cnd_wait
 * lets go of it), and the test counts at least one condition wait
 * however the threads are scheduled. */
static int consumer_in;

static int count(void *arg)
{
	(void)arg;
	for (int i = 0; i < 1000; i++) {
		mtx_lock(&counter_lock); /* C11_COUNTS */
		counter++;
		mtx_unlock(&counter_lock);
	}
	return 0;
}

static int produce(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&consumer_in, __ATOMIC_ACQUIRE))
		thrd_yield();
	for (int i = 0; i < 100; i++) {
		mtx_lock(&queue_lock);
		queued++;
		cnd_signal(&queue_ready);
		mtx_unlock(&queue_lock);
	}
	mtx_lock(&queue_lock);
	produced_all = 1;
	cnd_broadcast(&queue_ready);
	mtx_unlock(&queue_lock);
	return 0;
}

static __attribute__((noinline)) int use(void)
{
	mtx_init(&counter_lock, mtx_plain);
	thrd_t t[4];
	for (int i = 0; i < 4; i++)
		thrd_create(&t[i], count, NULL);
	for (int i = 0; i < 4; i++)
		thrd_join(t[i], NULL);

	mtx_init(&a, mtx_plain);
	mtx_init(&b, mtx_plain);
	mtx_lock(&a); /* C11_A_THEN_B */
	mtx_lock(&b);
	mtx_unlock(&b);
	mtx_unlock(&a);
	mtx_lock(&b); /* C11_B_THEN_A */
	mtx_lock(&a);
	mtx_unlock(&a);
	mtx_unlock(&b);

	mtx_init(&queue_lock, mtx_plain);
	cnd_init(&queue_ready);
	thrd_t p;
	thrd_create(&p, produce, NULL);
	int taken = 0;
	mtx_lock(&queue_lock);
	__atomic_store_n(&consumer_in, 1, __ATOMIC_RELEASE);
	for (;;) {
		while (!queued && !produced_all)
			cnd_wait(&queue_ready, &queue_lock); /* C11_WAITS */
		if (!queued)
			break;
		queued--;
		taken++;
	}
	mtx_unlock(&queue_lock);
	thrd_join(p, NULL);
	printf("counter %ld, items %d\n", counter, taken);
	printf("counter_lock %p\n", (void *)&counter_lock);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "answers"))
		return answers();
	if (argc == 2 && !strcmp(argv[1], "use"))
		return use();
	fprintf(stderr, "usage: c11_threads answers|use\n");
	return 2;
}
