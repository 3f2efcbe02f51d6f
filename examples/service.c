/* service.c - a service that runs for a while: the subject of interval
 * profiles (MUTEXSTAT_INTERVAL).  Worker threads take requests for the
 * given time, in generations of a quarter of a second: each generation's
 * threads share a session mutex, made for it and destroyed after it (the
 * report keeps such lives by their first-lock site).  Each request also
 * gets a mutex of its own, and updates a shared cache under one hot
 * mutex, where the workers queue.  Half-way through, a second kind of
 * request starts: it also logs under a second mutex, so the profile of
 * the run changes over time.
 *
 *   MUTEXSTAT_INTERVAL=1 MUTEXSTAT_FORMAT=pprof mutexstat ./examples/service [seconds] [threads] [fork]
 *
 * With "fork", a child is forked half-way and serves beside its parent
 * for the rest of the time, as a pre-forking server's worker does.
 * Prints the number of requests served, which is the sum of both kinds'
 * counts, with or without mutexstat (the child's line first, with its
 * parent's requests before the fork in it). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <time.h>

/* Thread functions are not static: the examples link with -rdynamic so
 * that the report can name them without debug information. */

static pthread_mutex_t cache = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static long cache_hits, logged, served[2];
static struct timespec start;
static double seconds = 3, generation_end;

struct session {
	pthread_mutex_t lock;
	long requests;
};

static double elapsed(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) / 1e9;
}

__attribute__((noinline)) void spin(int n)
{
	volatile unsigned x = 0;
	for (int i = 0; i < n; i++)
		x += (unsigned)i;
}

__attribute__((noinline)) void update_cache(void)
{
	pthread_mutex_lock(&cache);
	cache_hits++;
	spin(2000); /* long enough for the others to queue */
	pthread_mutex_unlock(&cache);
}

__attribute__((noinline)) void write_log(void)
{
	pthread_mutex_lock(&log_lock);
	logged++;
	spin(4000); /* longer than the cache's: the workers queue here too */
	pthread_mutex_unlock(&log_lock);
}

__attribute__((noinline)) void count_in_session(struct session *s)
{
	pthread_mutex_lock(&s->lock);
	s->requests++;
	spin(500);
	pthread_mutex_unlock(&s->lock);
}

/* One request: a mutex of its own for its life, the cache, and from the
 * second half on, the log. */
__attribute__((noinline)) void handle_request(struct session *s, int late)
{
	count_in_session(s);
	pthread_mutex_t request;
	pthread_mutex_init(&request, NULL);
	pthread_mutex_lock(&request);
	update_cache();
	if (late)
		write_log();
	pthread_mutex_unlock(&request);
	pthread_mutex_destroy(&request);
}

void *worker(void *arg)
{
	long mine[2] = { 0, 0 };
	struct session *s = arg;
	for (double t; (t = elapsed()) < generation_end;) {
		int late = t >= seconds / 2;
		handle_request(s, late);
		mine[late]++;
		spin(3000); /* outside any lock */
	}
	pthread_mutex_lock(&cache);
	served[0] += mine[0];
	served[1] += mine[1];
	pthread_mutex_unlock(&cache);
	return NULL;
}

/* Generations of nthreads workers until `until` seconds; returns the
 * requests counted in their sessions. */
static long serve(int nthreads, double until)
{
	long in_sessions = 0;
	while (elapsed() < until) {
		generation_end = elapsed() + 0.25;
		if (generation_end > until)
			generation_end = until;
		struct session s = { .requests = 0 };
		pthread_mutex_init(&s.lock, NULL);
		pthread_t th[256];
		for (int i = 0; i < nthreads; i++)
			pthread_create(&th[i], NULL, worker, &s);
		for (int i = 0; i < nthreads; i++)
			pthread_join(th[i], NULL);
		pthread_mutex_destroy(&s.lock);
		in_sessions += s.requests;
	}
	return in_sessions;
}

int main(int argc, char **argv)
{
	int nthreads = 4, forks = argc > 3 && !strcmp(argv[3], "fork");
	if (argc > 1)
		seconds = atof(argv[1]);
	if (argc > 2)
		nthreads = atoi(argv[2]);
	if (seconds <= 0 || nthreads < 1 || nthreads > 256 || (argc > 3 && !forks)) {
		fprintf(stderr, "usage: service [seconds > 0] [threads 1..256] [fork]\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &start);
	/* fork: half the time alone, then a child serves the other half
	 * beside its parent, with the parent's numbers so far in its copy of
	 * memory (as a pre-forking server's workers) */
	long in_sessions = forks ? serve(nthreads, seconds / 2) : 0;
	pid_t child = forks ? fork() : 0;
	if (child < 0) {
		perror("fork");
		return 2;
	}
	in_sessions += serve(nthreads, seconds);
	long all = served[0] + served[1];
	printf("%s %ld requests (%ld early, %ld late)\n", forks && !child ? "child served" : "served",
	       all, served[0], served[1]);
	int ok = cache_hits == all && logged == served[1] && in_sessions == all;
	if (forks && child) {
		int status;
		if (waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			ok = 0;
	}
	return ok ? 0 : 1;
}
