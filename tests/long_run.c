/* long_run.c - the workloads of tests/long_run.sh: what a program that runs
 * for a long time does over and over, with the memory it should not cost.
 *
 *   threads N     N short threads, four alive at a time; each makes a
 *                 mutex of its own, and takes the program's global mutex
 *                 while holding it (a lock-order edge: the library takes a
 *                 stack, so libunwind sets the thread up and, as the thread
 *                 ends, locks a mutex of its own after the library's
 *                 thread-exit handler has run).  Prints the peak resident
 *                 memory after a quarter of the threads and at the end.
 *   lives N       one thread makes N mutexes one after another, each
 *                 locked while it holds the global mutex, then destroyed
 *                 (a new lock-order edge each, of a life that ends); then
 *                 takes two mutexes A and B both ways round, a real
 *                 inversion that the report must still find.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                          \
	do {                                                                 \
		int rc_ = (call);                                            \
		if (rc_) {                                                   \
			fprintf(stderr, "%s:%d: %s = %d\n", __FILE__,        \
				__LINE__, #call, rc_);                       \
			exit(2);                                             \
		}                                                            \
	} while (0)

static pthread_mutex_t global = PTHREAD_MUTEX_INITIALIZER;
static long counted;

/* A line of /proc/self/status, in kB. */
static long status_kb(const char *field)
{
	char line[256];
	long kb = -1;
	size_t n = strlen(field);
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, field, n) && line[n] == ':')
			kb = strtol(line + n + 1, NULL, 10);
	fclose(f);
	return kb;
}

/* ---- threads: many short threads ------------------------------------------- */
static void *short_thread(void *arg)
{
	pthread_mutex_t own;
	CHECK(pthread_mutex_init(&own, NULL));
	CHECK(pthread_mutex_lock(&own));
	CHECK(pthread_mutex_lock(&global));
	counted++;
	CHECK(pthread_mutex_unlock(&global));
	CHECK(pthread_mutex_unlock(&own));
	CHECK(pthread_mutex_destroy(&own));
	return arg;
}

static int threads_main(long n)
{
	long quarter = -1;
	for (long i = 0; i < n; i += 4) {
		pthread_t t[4];
		for (int j = 0; j < 4; j++)
			CHECK(pthread_create(&t[j], NULL, short_thread, NULL));
		for (int j = 0; j < 4; j++)
			CHECK(pthread_join(t[j], NULL));
		if (quarter < 0 && i >= n / 4)
			quarter = status_kb("VmHWM");
	}
	long end = status_kb("VmHWM");
	printf("%ld threads, the global mutex taken %ld times\n", n, counted);
	printf("peak resident: %ld kB after a quarter, %ld kB at the end: grew %ld kB\n",
	       quarter, end, end - quarter);
	return counted == n ? 0 : 1;
}

/* ---- lives: edges of mutexes that end ---------------------------------------- */
static pthread_mutex_t mutex_a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t mutex_b = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) static void a_then_b(void)
{
	CHECK(pthread_mutex_lock(&mutex_a));
	CHECK(pthread_mutex_lock(&mutex_b));
	CHECK(pthread_mutex_unlock(&mutex_b));
	CHECK(pthread_mutex_unlock(&mutex_a));
}

__attribute__((noinline)) static void b_then_a(void)
{
	CHECK(pthread_mutex_lock(&mutex_b));
	CHECK(pthread_mutex_lock(&mutex_a));
	CHECK(pthread_mutex_unlock(&mutex_a));
	CHECK(pthread_mutex_unlock(&mutex_b));
}

static int lives_main(long n)
{
	for (long i = 0; i < n; i++) {
		pthread_mutex_t *m = malloc(sizeof *m);
		if (!m)
			return 2;
		CHECK(pthread_mutex_init(m, NULL));
		CHECK(pthread_mutex_lock(&global));
		CHECK(pthread_mutex_lock(m));
		counted++;
		CHECK(pthread_mutex_unlock(m));
		CHECK(pthread_mutex_unlock(&global));
		CHECK(pthread_mutex_destroy(m));
		free(m);
	}
	a_then_b();
	b_then_a();
	printf("%ld lives under the global mutex, then A and B both ways\n", counted);
	printf("A %p\nB %p\n", (void *)&mutex_a, (void *)&mutex_b);
	return counted == n ? 0 : 1;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	long n = argc > 2 ? atol(argv[2]) : 0;
	if (!strcmp(mode, "threads") && n > 0)
		return threads_main(n);
	if (!strcmp(mode, "lives") && n > 0)
		return lives_main(n);
	fprintf(stderr, "usage: long_run threads N | lives N\n");
	return 2;
}
