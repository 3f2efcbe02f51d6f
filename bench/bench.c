/* bench.c - the workloads behind `make bench`.  `bench <workload> [n]` runs
 * one workload and prints one line:
 *
 *   workload=<name> ops=<N> ns_per_op=<float> peak_rss_kb=<N> checksum=<N>
 *
 * (handoff adds chunk_ns_per_op=<float>, million init_ns, lock_ns and
 * destroy_ns=<float>, and faults=<N>, the page faults of the whole run:
 * see there.)
 *
 * The program is plain pthread code: it does not know whether mutexstat is
 * preloaded, so bench/run can time the same binary bare and with the library.
 * n overrides the default size (pairs, rounds or items; see `workloads`).
 * Every pthread call is checked; an unexpected result aborts.  The checksum
 * is verified where the answer is known, so a broken lock shows up here. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHECK(call)                                                        \
	do {                                                               \
		int check_rc_ = (call);                                    \
		if (check_rc_ != 0) {                                      \
			fprintf(stderr, "bench: %s:%d: %s returned %d (%s)\n", \
				__FILE__, __LINE__, #call, check_rc_,      \
				strerror(check_rc_));                      \
			abort();                                           \
		}                                                          \
	} while (0)

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);
	if (!p) {
		fprintf(stderr, "bench: out of memory\n");
		abort();
	}
	return p;
}

static void expect(const char *what, unsigned long got, unsigned long want)
{
	if (got != want) {
		fprintf(stderr, "bench: %s: got %lu, want %lu\n", what, got, want);
		abort();
	}
}

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The result of one workload: ops performed, time they took, checksum;
 * chunk_ns: per op, from the run's quicker chunks (handoff only; 0 = none). */
struct result {
	unsigned long ops;
	double ns;
	unsigned long checksum;
	double chunk_ns;
};

/* ---- threads: start together, the clock runs from release to join ------ */

struct crew {
	int n;
	pthread_t *tid;
	pthread_barrier_t start;
};

/* Starts n threads running fn(index); each calls crew_wait first. */
static void crew_start(struct crew *c, int n, void *(*fn)(void *))
{
	c->n = n;
	c->tid = xcalloc((size_t)n, sizeof *c->tid);
	CHECK(pthread_barrier_init(&c->start, NULL, (unsigned)n + 1));
	for (int i = 0; i < n; i++)
		CHECK(pthread_create(&c->tid[i], NULL, fn, (void *)(long)i));
}

/* Releases the workers; returns the time. */
static double crew_release(struct crew *c)
{
	int rc = pthread_barrier_wait(&c->start);
	if (rc != 0 && rc != PTHREAD_BARRIER_SERIAL_THREAD)
		CHECK(rc);
	return now_ns();
}

static void crew_wait(struct crew *c)
{
	int rc = pthread_barrier_wait(&c->start);
	if (rc != 0 && rc != PTHREAD_BARRIER_SERIAL_THREAD)
		CHECK(rc);
}

static double crew_join(struct crew *c)
{
	for (int i = 0; i < c->n; i++)
		CHECK(pthread_join(c->tid[i], NULL));
	double t = now_ns();
	CHECK(pthread_barrier_destroy(&c->start));
	free(c->tid);
	return t;
}

/* ---- pair, pair1024, callgrind_pair: one thread, no contention --------- */

static unsigned long counter;

/* n lock/unlock pairs on m.  Kept out of line and unclonable so that
 * `valgrind --tool=callgrind --toggle-collect=bench_pairs` finds it by name
 * and counts just this loop and what it calls. */
__attribute__((noinline, noclone)) void bench_pairs(pthread_mutex_t *m, long n)
{
	for (long i = 0; i < n; i++) {
		CHECK(pthread_mutex_lock(m));
		counter++;
		CHECK(pthread_mutex_unlock(m));
	}
}

static struct result run_pair(long n)
{
	pthread_mutex_t m;
	CHECK(pthread_mutex_init(&m, NULL));
	bench_pairs(&m, 1000);
	counter = 0;
	double t0 = now_ns();
	bench_pairs(&m, n);
	double t1 = now_ns();
	CHECK(pthread_mutex_destroy(&m));
	expect("pair counter", counter, (unsigned long)n);
	return (struct result){ (unsigned long)n, t1 - t0, counter, 0 };
}

static struct result run_callgrind_pair(long n)
{
	pthread_mutex_t m;
	CHECK(pthread_mutex_init(&m, NULL));
	double t0 = now_ns();
	bench_pairs(&m, 10);	/* warm-up: first use, lazy binding */
	bench_pairs(&m, n);
	double t1 = now_ns();
	CHECK(pthread_mutex_destroy(&m));
	expect("callgrind_pair counter", counter, (unsigned long)n + 10);
	return (struct result){ (unsigned long)n, t1 - t0, counter, 0 };
}

#define MANY 1024

static struct result run_pair1024(long n)
{
	static pthread_mutex_t m[MANY];
	for (int i = 0; i < MANY; i++)
		CHECK(pthread_mutex_init(&m[i], NULL));
	for (int i = 0; i < MANY; i++) {	/* warm-up: first use of each */
		CHECK(pthread_mutex_lock(&m[i]));
		CHECK(pthread_mutex_unlock(&m[i]));
	}
	unsigned long sum = 0;
	double t0 = now_ns();
	for (long i = 0; i < n; i++) {
		pthread_mutex_t *p = &m[i & (MANY - 1)];
		CHECK(pthread_mutex_lock(p));
		sum += (unsigned long)i;
		CHECK(pthread_mutex_unlock(p));
	}
	double t1 = now_ns();
	for (int i = 0; i < MANY; i++)
		CHECK(pthread_mutex_destroy(&m[i]));
	return (struct result){ (unsigned long)n, t1 - t0, sum, 0 };
}

/* ---- rwpair_read, rwpair_write, spinpair: one thread, no contention -----
 * The uncontended pair of the other two kinds of lock the library
 * interposes, each on one lock.  A read pair reads a counter (an atomic
 * load, so that the compiler keeps the read inside the pair, not hoisted
 * out of the loop); a write pair and a spin pair increment it.
 * bench_rdpairs and bench_spinpairs are kept out of line for callgrind, as
 * bench_pairs (callgrind_rwpair_read, callgrind_spinpair). */

static unsigned long rw_one = 1;	/* what read pairs read */

__attribute__((noinline, noclone)) unsigned long bench_rdpairs(pthread_rwlock_t *l,
							       long n)
{
	unsigned long sum = 0;
	for (long i = 0; i < n; i++) {
		CHECK(pthread_rwlock_rdlock(l));
		sum += __atomic_load_n(&rw_one, __ATOMIC_RELAXED);
		CHECK(pthread_rwlock_unlock(l));
	}
	return sum;
}

static void bench_wrpairs(pthread_rwlock_t *l, long n)
{
	for (long i = 0; i < n; i++) {
		CHECK(pthread_rwlock_wrlock(l));
		counter++;
		CHECK(pthread_rwlock_unlock(l));
	}
}

__attribute__((noinline, noclone)) void bench_spinpairs(pthread_spinlock_t *s,
							long n)
{
	for (long i = 0; i < n; i++) {
		CHECK(pthread_spin_lock(s));
		counter++;
		CHECK(pthread_spin_unlock(s));
	}
}

static struct result run_rwpair_read(long n)
{
	pthread_rwlock_t l;
	CHECK(pthread_rwlock_init(&l, NULL));
	bench_rdpairs(&l, 1000);
	double t0 = now_ns();
	unsigned long sum = bench_rdpairs(&l, n);
	double t1 = now_ns();
	CHECK(pthread_rwlock_destroy(&l));
	expect("rwpair_read sum", sum, (unsigned long)n);
	return (struct result){ (unsigned long)n, t1 - t0, sum, 0 };
}

static struct result run_rwpair_write(long n)
{
	pthread_rwlock_t l;
	CHECK(pthread_rwlock_init(&l, NULL));
	bench_wrpairs(&l, 1000);
	counter = 0;
	double t0 = now_ns();
	bench_wrpairs(&l, n);
	double t1 = now_ns();
	CHECK(pthread_rwlock_destroy(&l));
	expect("rwpair_write counter", counter, (unsigned long)n);
	return (struct result){ (unsigned long)n, t1 - t0, counter, 0 };
}

static struct result run_spinpair(long n)
{
	pthread_spinlock_t s;
	CHECK(pthread_spin_init(&s, PTHREAD_PROCESS_PRIVATE));
	bench_spinpairs(&s, 1000);
	counter = 0;
	double t0 = now_ns();
	bench_spinpairs(&s, n);
	double t1 = now_ns();
	CHECK(pthread_spin_destroy(&s));
	expect("spinpair counter", counter, (unsigned long)n);
	return (struct result){ (unsigned long)n, t1 - t0, counter, 0 };
}

/* As callgrind_pair: a 10-pair warm-up (first use, lazy binding), then n
 * pairs, all inside the function callgrind collects. */
static struct result run_callgrind_rwpair_read(long n)
{
	pthread_rwlock_t l;
	CHECK(pthread_rwlock_init(&l, NULL));
	double t0 = now_ns();
	unsigned long sum = bench_rdpairs(&l, 10);
	sum += bench_rdpairs(&l, n);
	double t1 = now_ns();
	CHECK(pthread_rwlock_destroy(&l));
	expect("callgrind_rwpair_read sum", sum, (unsigned long)n + 10);
	return (struct result){ (unsigned long)n, t1 - t0, sum, 0 };
}

static struct result run_callgrind_spinpair(long n)
{
	pthread_spinlock_t s;
	CHECK(pthread_spin_init(&s, PTHREAD_PROCESS_PRIVATE));
	double t0 = now_ns();
	bench_spinpairs(&s, 10);
	bench_spinpairs(&s, n);
	double t1 = now_ns();
	CHECK(pthread_spin_destroy(&s));
	expect("callgrind_spinpair counter", counter, (unsigned long)n + 10);
	return (struct result){ (unsigned long)n, t1 - t0, counter, 0 };
}

/* ---- hot2, hot4: T threads on one mutex, tiny critical section --------- */

static pthread_mutex_t hot_m = PTHREAD_MUTEX_INITIALIZER;
static unsigned long hot_counter;
static long hot_each;
static struct crew hot_crew;

static void *hot_worker(void *arg)
{
	(void)arg;
	crew_wait(&hot_crew);
	for (long i = 0; i < hot_each; i++) {
		CHECK(pthread_mutex_lock(&hot_m));
		hot_counter++;
		CHECK(pthread_mutex_unlock(&hot_m));
	}
	return NULL;
}

static struct result run_hot(int threads, long n)
{
	hot_each = n / threads;
	hot_counter = 0;
	crew_start(&hot_crew, threads, hot_worker);
	double t0 = crew_release(&hot_crew);
	double t1 = crew_join(&hot_crew);
	unsigned long total = (unsigned long)(hot_each * threads);
	expect("hot counter", hot_counter, total);
	return (struct result){ total, t1 - t0, hot_counter, 0 };
}

static struct result run_hot2(long n) { return run_hot(2, n); }
static struct result run_hot4(long n) { return run_hot(4, n); }

/* ---- rw4_read99: 4 threads on one rwlock, 99 % reads --------------------
 * A lock guarding data that is mostly read, as a configuration or a cache:
 * each thread's every 100th op takes the lock to write (increments the
 * counter), the others take it to read (read the counter).  The choice is
 * by op number, not random, so the final counter -- the checksum -- is
 * known.  The readers' sum only keeps the reads from being optimised away:
 * what they see depends on the interleaving. */

#define RW_THREADS 4
#define RW_WRITE_EVERY 100

static pthread_rwlock_t rw_l = PTHREAD_RWLOCK_INITIALIZER;
static unsigned long rw_counter;
static unsigned long rw_seen[RW_THREADS];
static long rw_each;
static struct crew rw_crew;

static void *rw_worker(void *arg)
{
	long id = (long)arg;
	unsigned long seen = 0;
	crew_wait(&rw_crew);
	for (long i = 0; i < rw_each; i++) {
		if (i % RW_WRITE_EVERY == RW_WRITE_EVERY - 1) {
			CHECK(pthread_rwlock_wrlock(&rw_l));
			rw_counter++;
		} else {
			CHECK(pthread_rwlock_rdlock(&rw_l));
			seen += __atomic_load_n(&rw_counter, __ATOMIC_RELAXED);
		}
		CHECK(pthread_rwlock_unlock(&rw_l));
	}
	rw_seen[id] = seen;
	return NULL;
}

static struct result run_rw4_read99(long n)
{
	rw_each = n / RW_THREADS;
	rw_counter = 0;
	crew_start(&rw_crew, RW_THREADS, rw_worker);
	double t0 = crew_release(&rw_crew);
	double t1 = crew_join(&rw_crew);
	expect("rw4_read99 counter", rw_counter,
	       (unsigned long)(rw_each / RW_WRITE_EVERY * RW_THREADS));
	unsigned long total = (unsigned long)(rw_each * RW_THREADS);
	return (struct result){ total, t1 - t0, rw_counter, 0 };
}

/* ---- spin2: 2 threads on one spin lock, tiny critical section -----------
 * hot2 with a spin lock: a waiter never sleeps, so this counts handovers
 * without futex calls.  2 threads for 2 CPUs: more would spin while the
 * holder waits for a CPU. */

#define SPIN_THREADS 2

static pthread_spinlock_t spin_s;
static unsigned long spin_counter;
static long spin_each;
static struct crew spin_crew;

static void *spin_worker(void *arg)
{
	(void)arg;
	crew_wait(&spin_crew);
	for (long i = 0; i < spin_each; i++) {
		CHECK(pthread_spin_lock(&spin_s));
		spin_counter++;
		CHECK(pthread_spin_unlock(&spin_s));
	}
	return NULL;
}

static struct result run_spin2(long n)
{
	CHECK(pthread_spin_init(&spin_s, PTHREAD_PROCESS_PRIVATE));
	spin_each = n / SPIN_THREADS;
	spin_counter = 0;
	crew_start(&spin_crew, SPIN_THREADS, spin_worker);
	double t0 = crew_release(&spin_crew);
	double t1 = crew_join(&spin_crew);
	CHECK(pthread_spin_destroy(&spin_s));
	unsigned long total = (unsigned long)(spin_each * SPIN_THREADS);
	expect("spin2 counter", spin_counter, total);
	return (struct result){ total, t1 - t0, spin_counter, 0 };
}

/* ---- tenxtwenty: 10 threads lock 20 mutexes in turn, unlock all 20 ----- */

#define TT_THREADS 10
#define TT_MUTEXES 20

static pthread_mutex_t tt_m[TT_MUTEXES];
static unsigned long tt_rounds_done;
static long tt_rounds;
static struct crew tt_crew;

static void *tt_worker(void *arg)
{
	(void)arg;
	crew_wait(&tt_crew);
	for (long r = 0; r < tt_rounds; r++) {
		for (int i = 0; i < TT_MUTEXES; i++)
			CHECK(pthread_mutex_lock(&tt_m[i]));
		tt_rounds_done++;
		for (int i = TT_MUTEXES - 1; i >= 0; i--)
			CHECK(pthread_mutex_unlock(&tt_m[i]));
	}
	return NULL;
}

static struct result run_tenxtwenty(long rounds)
{
	for (int i = 0; i < TT_MUTEXES; i++)
		CHECK(pthread_mutex_init(&tt_m[i], NULL));
	tt_rounds = rounds;
	tt_rounds_done = 0;
	crew_start(&tt_crew, TT_THREADS, tt_worker);
	double t0 = crew_release(&tt_crew);
	double t1 = crew_join(&tt_crew);
	for (int i = 0; i < TT_MUTEXES; i++)
		CHECK(pthread_mutex_destroy(&tt_m[i]));
	expect("tenxtwenty rounds", tt_rounds_done,
	       (unsigned long)(rounds * TT_THREADS));
	unsigned long ops = (unsigned long)rounds * TT_THREADS * TT_MUTEXES;
	return (struct result){ ops, t1 - t0, tt_rounds_done, 0 };
}

/* ---- condvar: bounded queue, one producer, one consumer ---------------- */

#define QUEUE_CAP 64

static struct {
	pthread_mutex_t m;
	pthread_cond_t not_empty, not_full;
	unsigned long item[QUEUE_CAP];
	unsigned head, count;
} q = { .m = PTHREAD_MUTEX_INITIALIZER,
	.not_empty = PTHREAD_COND_INITIALIZER,
	.not_full = PTHREAD_COND_INITIALIZER };
static long q_items;
static unsigned long q_sum;
static struct crew q_crew;

static void *producer(void *arg)
{
	(void)arg;
	crew_wait(&q_crew);
	for (long i = 1; i <= q_items; i++) {
		CHECK(pthread_mutex_lock(&q.m));
		while (q.count == QUEUE_CAP)
			CHECK(pthread_cond_wait(&q.not_full, &q.m));
		q.item[(q.head + q.count) % QUEUE_CAP] = (unsigned long)i;
		q.count++;
		CHECK(pthread_cond_signal(&q.not_empty));
		CHECK(pthread_mutex_unlock(&q.m));
	}
	return NULL;
}

static void *consumer(void *arg)
{
	(void)arg;
	crew_wait(&q_crew);
	for (long i = 0; i < q_items; i++) {
		CHECK(pthread_mutex_lock(&q.m));
		while (q.count == 0)
			CHECK(pthread_cond_wait(&q.not_empty, &q.m));
		q_sum += q.item[q.head];
		q.head = (q.head + 1) % QUEUE_CAP;
		q.count--;
		CHECK(pthread_cond_signal(&q.not_full));
		CHECK(pthread_mutex_unlock(&q.m));
	}
	return NULL;
}

/* Thread 0 of the crew produces, thread 1 consumes. */
static void *q_worker(void *index)
{
	return index == 0 ? producer(NULL) : consumer(NULL);
}

static struct result run_condvar(long n)
{
	q_items = n;
	q_sum = 0;
	crew_start(&q_crew, 2, q_worker);
	double t0 = crew_release(&q_crew);
	double t1 = crew_join(&q_crew);
	expect("condvar sum", q_sum, (unsigned long)n * ((unsigned long)n + 1) / 2);
	return (struct result){ (unsigned long)n, t1 - t0, q_sum, 0 };
}

/* ---- handoff: every acquisition a contention event ---------------------- */

/* Two threads take one mutex in turns, and each turn makes the other wait:
 * the holder lets go only once the other thread is blocked in lock, so
 * every acquisition but the first is a contention event -- a failed try,
 * a wait, a wake-up -- and, with mutexstat capturing, a stack capture of
 * the waiter and of the unlock that lets it in.  No sleeps: the threads
 * spin (pause, then sched_yield) on the lock word and on ho_holder.
 *
 * The lock word is glibc's (0 free, 1 locked, 2 locked and maybe waited
 * for).  A thread that got the mutex after waiting finds it at 2 whether
 * or not anyone waits now, so before it announces itself in ho_holder --
 * while the other thread is certainly not locking -- it puts the word back
 * to 1: seeing 2 again then means the other thread is waiting.  glibc's
 * unlock still wakes a waiter whenever one set the word to 2.
 *
 * A handoff needs both threads on a CPU at once; on a shared machine a
 * third process often takes one of them, and a run's mean mixes the two
 * regimes.  So thread 0 also reads the clock every HO_CHUNK turns, and
 * chunk_ns_per_op is the chunk at the 10th percentile, fastest first:
 * what a contention event costs when both threads run.
 *
 * handoff locks four frames from the top of its thread (handoff_turns,
 * handoff_worker, and the C library's thread start); handoff16 first
 * descends 14 calls deeper, so a capture has MUTEXSTAT_FRAMES' default 16
 * frames to walk, as in most real programs. */

#define HO_CHUNK 500
#define HO_MAX_CHUNKS 100000

static pthread_mutex_t ho_m = PTHREAD_MUTEX_INITIALIZER;
static int ho_holder = -1;	/* thread that took the last turn */
static long ho_turns;		/* turns 1..ho_turns are contended */
static unsigned long ho_acquired;
static double *ho_stamp;	/* [k]: time of turn k * HO_CHUNK */
static struct crew ho_crew;

static void relax(unsigned *spins)
{
	if (++*spins < 200)
		__builtin_ia32_pause();
	else
		sched_yield();
}

static int ho_depth;		/* calls between handoff_worker and the turns */

__attribute__((noinline)) void handoff_turns(int me)
{
	int other = 1 - me;
	crew_wait(&ho_crew);
	for (long turn = me; turn <= ho_turns; turn += 2) {
		unsigned spins = 0;
		if (turn > 0) /* the other thread has the mutex ... */
			while (__atomic_load_n(&ho_holder, __ATOMIC_ACQUIRE) != other)
				relax(&spins);
		CHECK(pthread_mutex_lock(&ho_m)); /* ... so this waits */
		ho_acquired++;
		if (turn % HO_CHUNK == 0) /* HO_CHUNK is even: thread 0's turns */
			ho_stamp[turn / HO_CHUNK] = now_ns();
		int two = 2; /* see above: 2 now means "the other one waits" */
		__atomic_compare_exchange_n(&ho_m.__data.__lock, &two, 1, 0,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
		__atomic_store_n(&ho_holder, me, __ATOMIC_RELEASE);
		spins = 0;
		if (turn < ho_turns) /* let go once the other thread waits */
			while (__atomic_load_n(&ho_m.__data.__lock,
					       __ATOMIC_ACQUIRE) != 2)
				relax(&spins);
		CHECK(pthread_mutex_unlock(&ho_m));
	}
}

/* depth more frames, then the turns; noinline and the barrier after the
 * call keep each frame a real call, not a jump. */
__attribute__((noinline)) void handoff_descend(int depth, int me)
{
	if (depth > 0)
		handoff_descend(depth - 1, me);
	else
		handoff_turns(me);
	__asm__ volatile("" ::: "memory");
}

static void *handoff_worker(void *arg)
{
	if (ho_depth > 0)
		handoff_descend(ho_depth - 1, (int)(long)arg);
	else
		handoff_turns((int)(long)arg);
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static struct result run_handoff_at(long n, int depth)
{
	long chunks = n / HO_CHUNK;
	if (chunks > HO_MAX_CHUNKS) {
		fprintf(stderr, "bench: handoff: at most %ld turns\n",
			(long)HO_CHUNK * HO_MAX_CHUNKS);
		exit(2);
	}
	ho_stamp = xcalloc((size_t)chunks + 1, sizeof *ho_stamp);
	ho_depth = depth;
	ho_turns = n;
	ho_acquired = 0;
	ho_holder = -1;
	crew_start(&ho_crew, 2, handoff_worker);
	double t0 = crew_release(&ho_crew);
	double t1 = crew_join(&ho_crew);
	expect("handoff acquisitions", ho_acquired, (unsigned long)n + 1);
	double chunk_ns = 0;
	if (chunks > 0) {
		double *d = xcalloc((size_t)chunks, sizeof *d);
		for (long k = 0; k < chunks; k++)
			d[k] = ho_stamp[k + 1] - ho_stamp[k];
		qsort(d, (size_t)chunks, sizeof *d, cmp_double);
		chunk_ns = d[chunks / 10] / HO_CHUNK;
		free(d);
	}
	free(ho_stamp);
	return (struct result){ (unsigned long)n, t1 - t0, ho_acquired, chunk_ns };
}

static struct result run_handoff(long n) { return run_handoff_at(n, 0); }
static struct result run_handoff16(long n) { return run_handoff_at(n, 14); }

/* ---- million: a million live mutexes in one array ---------------------- */

#define MILLION 1000000L

/* n is the number of rounds; each round allocates the array, initialises
 * all, locks and unlocks each once, destroys all and frees the array.  The
 * default is one round, although it is quicker than the other workloads:
 * peak RSS should show the cost of a million live mutexes, and later rounds
 * would add whatever is kept of the destroyed ones.  The three passes are
 * also timed apart (phase_ns: init, lock+unlock, destroy), to show where
 * the library's cost goes, and the run's page faults are counted: a
 * machine where a fault is slow makes this row the ratio of pages
 * touched. */
static double million_phase_ns[3];

static struct result run_million(long rounds)
{
	unsigned long sum = 0;
	double t0 = now_ns();
	for (long r = 0; r < rounds; r++) {
		pthread_mutex_t *m = xcalloc((size_t)MILLION, sizeof *m);
		double p0 = now_ns();
		for (long i = 0; i < MILLION; i++)
			CHECK(pthread_mutex_init(&m[i], NULL));
		double p1 = now_ns();
		for (long i = 0; i < MILLION; i++) {
			CHECK(pthread_mutex_lock(&m[i]));
			sum += (unsigned long)i;
			CHECK(pthread_mutex_unlock(&m[i]));
		}
		double p2 = now_ns();
		for (long i = 0; i < MILLION; i++)
			CHECK(pthread_mutex_destroy(&m[i]));
		double p3 = now_ns();
		free(m);
		million_phase_ns[0] += p1 - p0;
		million_phase_ns[1] += p2 - p1;
		million_phase_ns[2] += p3 - p2;
	}
	double t1 = now_ns();
	for (int i = 0; i < 3; i++)
		million_phase_ns[i] /= (double)(rounds * MILLION);
	return (struct result){ (unsigned long)(rounds * MILLION), t1 - t0, sum, 0 };
}

/* ---- lives1, lives2, lives4: threads make, lock and destroy mutexes ----
 * Each thread keeps 16 mutexes of its own on its stack and gives each many
 * short lives (init, lock, unlock, destroy): the cost of the table's adds
 * and removals, alone (lives1: the main thread, in a process of one thread,
 * as a tool that makes a mutex per object) and when threads do them at the
 * same time (objects with a mutex made and freed by every thread of a
 * server).  lives4 against lives1 tells whether adds scale as bare ones do
 * (bench/run prints it). */

#define LIVES_MAX_THREADS 4
static long lives_each;
static struct crew lives_crew;
static unsigned long lives_done[LIVES_MAX_THREADS];

static void *lives_worker(void *arg)
{
	long id = (long)arg;
	pthread_mutex_t m[16];
	unsigned long done = 0;
	if (id >= 0)
		crew_wait(&lives_crew);
	else
		id = 0;
	for (long i = 0; i < lives_each; i++) {
		pthread_mutex_t *p = &m[i & 15];
		CHECK(pthread_mutex_init(p, NULL));
		CHECK(pthread_mutex_lock(p));
		done++;
		CHECK(pthread_mutex_unlock(p));
		CHECK(pthread_mutex_destroy(p));
	}
	lives_done[id] = done;
	return NULL;
}

/* n lives in all over `threads` threads; 0 threads: the main thread's. */
static struct result run_lives(long n, int threads)
{
	int k = threads ? threads : 1;
	lives_each = n / k;
	for (int i = 0; i < k; i++)
		lives_done[i] = 0;
	double t0, t1;
	if (threads) {
		crew_start(&lives_crew, threads, lives_worker);
		t0 = crew_release(&lives_crew);
		t1 = crew_join(&lives_crew);
	} else {
		t0 = now_ns();
		lives_worker((void *)-1L);
		t1 = now_ns();
	}
	unsigned long total = 0;
	for (int i = 0; i < k; i++)
		total += lives_done[i];
	expect("lives", total, (unsigned long)(lives_each * k));
	return (struct result){ total, t1 - t0, total, 0 };
}

static struct result run_lives1(long n)
{
	return run_lives(n, 0);
}

static struct result run_lives2(long n)
{
	return run_lives(n, 2);
}

static struct result run_lives4(long n)
{
	return run_lives(n, 4);
}

/* ---- nested: lock A, lock B, unlock B, unlock A -------------------------
 * One thread, no contention: the cost of lock-order bookkeeping when a
 * mutex is taken while another is held (the edge A->B is known after the
 * first round: a look into the thread's cache). */

static struct result run_nested(long n)
{
	pthread_mutex_t a, b;
	CHECK(pthread_mutex_init(&a, NULL));
	CHECK(pthread_mutex_init(&b, NULL));
	counter = 0;
	double t0 = now_ns();
	for (long i = 0; i < n; i++) {
		CHECK(pthread_mutex_lock(&a));
		CHECK(pthread_mutex_lock(&b));
		counter++;
		CHECK(pthread_mutex_unlock(&b));
		CHECK(pthread_mutex_unlock(&a));
	}
	double t1 = now_ns();
	CHECK(pthread_mutex_destroy(&b));
	CHECK(pthread_mutex_destroy(&a));
	expect("nested counter", counter, (unsigned long)n);
	return (struct result){ (unsigned long)n, t1 - t0, counter, 0 };
}

/* ---- edges10k: 10,000 lock orders, a million nested acquisitions --------
 * One thread, no contention: 100 outer mutexes, each held in turn while
 * each of 100 inner mutexes is taken -- 10,000 distinct lock-order edges,
 * as a server whose table locks are each held while connection locks are
 * taken -- round after round.  The first round adds the edges (and
 * searches each for a cycle); later ones take known edges, more than a
 * thread's cache of them holds.  op = one nested acquisition (two
 * lock+unlock pairs). */
#define E10K_OUTER 100
#define E10K_INNER 100

static struct result run_edges10k(long rounds)
{
	pthread_mutex_t *outer = xcalloc(E10K_OUTER, sizeof *outer);
	pthread_mutex_t *inner = xcalloc(E10K_INNER, sizeof *inner);
	for (int i = 0; i < E10K_OUTER; i++)
		CHECK(pthread_mutex_init(&outer[i], NULL));
	for (int i = 0; i < E10K_INNER; i++)
		CHECK(pthread_mutex_init(&inner[i], NULL));
	counter = 0;
	double t0 = now_ns();
	for (long r = 0; r < rounds; r++)
		for (int o = 0; o < E10K_OUTER; o++) {
			CHECK(pthread_mutex_lock(&outer[o]));
			for (int i = 0; i < E10K_INNER; i++) {
				CHECK(pthread_mutex_lock(&inner[i]));
				counter++;
				CHECK(pthread_mutex_unlock(&inner[i]));
			}
			CHECK(pthread_mutex_unlock(&outer[o]));
		}
	double t1 = now_ns();
	for (int i = 0; i < E10K_OUTER; i++)
		CHECK(pthread_mutex_destroy(&outer[i]));
	for (int i = 0; i < E10K_INNER; i++)
		CHECK(pthread_mutex_destroy(&inner[i]));
	free(outer);
	free(inner);
	unsigned long n = (unsigned long)rounds * E10K_OUTER * E10K_INNER;
	expect("edges10k counter", counter, n);
	return (struct result){ n, t1 - t0, counter, 0 };
}

/* ---- the table of workloads -------------------------------------------- */

/* ---- waited: a mutex that has made a thread wait, then one that has not --
 * A thread that once waited for a mutex: its holds of it are timed (the
 * first 4096, then one in 16) and the other mutex's are not.  Before the
 * loop, a helper holds w until this thread sleeps in its lock. */
static pthread_mutex_t wd_w = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t wd_o = PTHREAD_MUTEX_INITIALIZER;
static struct crew wd_crew;

static void *wd_holder(void *arg)
{
	(void)arg;
	CHECK(pthread_mutex_lock(&wd_w));
	crew_wait(&wd_crew);
	/* glibc marks a mutex with a sleeping waiter by __lock == 2 */
	while (__atomic_load_n(&wd_w.__data.__lock, __ATOMIC_RELAXED) != 2)
		sched_yield();
	CHECK(pthread_mutex_unlock(&wd_w));
	return NULL;
}

static struct result run_waited(long n)
{
	crew_start(&wd_crew, 1, wd_holder);
	crew_release(&wd_crew);
	CHECK(pthread_mutex_lock(&wd_w)); /* waits for the helper */
	CHECK(pthread_mutex_unlock(&wd_w));
	crew_join(&wd_crew);
	for (int i = 0; i < 5000; i++) { /* past the exactly timed holds */
		CHECK(pthread_mutex_lock(&wd_w));
		CHECK(pthread_mutex_unlock(&wd_w));
		CHECK(pthread_mutex_lock(&wd_o));
		CHECK(pthread_mutex_unlock(&wd_o));
	}
	counter = 0;
	double t0 = now_ns();
	for (long i = 0; i < n; i++) {
		CHECK(pthread_mutex_lock(&wd_w));
		counter++;
		CHECK(pthread_mutex_unlock(&wd_w));
		CHECK(pthread_mutex_lock(&wd_o));
		counter++;
		CHECK(pthread_mutex_unlock(&wd_o));
	}
	double t1 = now_ns();
	expect("waited counter", counter, 2 * (unsigned long)n);
	return (struct result){ (unsigned long)n, t1 - t0, counter, 0 };
}

/* ---- processes: short programs, as a test suite runs them --------------
 * Each is this program again (bench child): it locks one mutex and
 * exits, so with the library it pays its start, its first lock and its
 * exit report.  The child inherits LD_PRELOAD and MUTEXSTAT_OUTPUT. */
static const char *self_path = "/proc/self/exe";

static int run_child(void)
{
	static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	CHECK(pthread_mutex_lock(&m));
	counter++;
	CHECK(pthread_mutex_unlock(&m));
	return counter == 1 ? 0 : 1;
}

/* Runs child(arg) in a new process (it execs); 1 if that exited with 0. */
static int spawned(void (*child)(const void *arg), const void *arg)
{
	pid_t pid = fork();
	if (pid < 0) {
		perror("bench: fork");
		abort();
	}
	if (pid == 0) {
		child(arg);
		_exit(127); /* the exec failed */
	}
	int status;
	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	       WEXITSTATUS(status) == 0;
}

static void exec_child(const void *arg)
{
	(void)arg;
	execl(self_path, "bench", "child", (char *)NULL);
}

static struct result run_processes(long n)
{
	unsigned long ok = 0;
	double t0 = now_ns();
	for (long i = 0; i < n; i++)
		ok += spawned(exec_child, NULL);
	double t1 = now_ns();
	expect("processes that ran", ok, (unsigned long)n);
	return (struct result){ (unsigned long)n, t1 - t0, ok, 0 };
}

/* ---- big_exit: the exit report of a big program -----------------------
 * `java -version` (libjvm.so, 58,000 symbols, in every frame of its
 * stacks), or where java is missing `clang --version` (a short C++ program
 * on Debian's libLLVM and libclang-cpp), run n times one after another with
 * its report to a file: with the library, each names the frames its
 * report prints.  The children inherit LD_PRELOAD.  Without either
 * program it says so and exits 3: bench/run leaves the row out. */
static const char *const big_programs[][2] = {
	{ "java", "-version" },
	{ "clang", "--version" },
};

/* Whether name is an executable file in a directory of PATH. */
static int in_path(const char *name)
{
	const char *path = getenv("PATH");
	char file[4096];
	while (path && *path) {
		size_t n = strcspn(path, ":");
		if (snprintf(file, sizeof file, "%.*s/%s", (int)n, path, name) <
			    (int)sizeof file &&
		    access(file, X_OK) == 0)
			return 1;
		path += n + (path[n] == ':');
	}
	return 0;
}

struct big_child {
	const char *const *prog;
	const char *report;
};

static void exec_big(const void *arg)
{
	const struct big_child *c = arg;
	if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
		_exit(126);
	setenv("MUTEXSTAT_OUTPUT", c->report, 1);
	execlp(c->prog[0], c->prog[0], c->prog[1], (char *)NULL);
}

static struct result run_big_exit(long n)
{
	const char *const *prog = NULL;
	for (size_t i = 0; i < sizeof big_programs / sizeof big_programs[0] && !prog; i++)
		if (in_path(big_programs[i][0]))
			prog = big_programs[i];
	if (!prog) {
		fprintf(stderr, "bench: big_exit: neither java nor clang is installed "
				"(Debian: default-jre-headless or clang)\n");
		exit(3);
	}
	const char *tmp = getenv("TMPDIR");
	char report[4096];
	(void)snprintf(report, sizeof report, "%s/mutexstat-bench-big_exit.%d.txt",
		       tmp && tmp[0] ? tmp : "/tmp", (int)getpid());
	unsigned long ok = 0;
	double t0 = now_ns();
	struct big_child c = { prog, report };
	for (long i = 0; i < n; i++)
		ok += spawned(exec_big, &c);
	double t1 = now_ns();
	unlink(report);
	expect("big programs that ran", ok, (unsigned long)n);
	fprintf(stderr, "bench: big_exit: %s %s, %ld times\n", prog[0], prog[1], n);
	return (struct result){ (unsigned long)n, t1 - t0, ok, 0 };
}

static const struct workload {
	const char *name;
	struct result (*run)(long n);
	long n;			/* default size */
	const char *what;	/* what n counts, and what one op is */
} workloads[] = {
	{ "pair", run_pair, 40000000, "pairs on one mutex; op = lock+unlock" },
	{ "pair1024", run_pair1024, 40000000,
	  "pairs over 1024 mutexes in turn; op = lock+unlock" },
	{ "nested", run_nested, 20000000,
	  "rounds of A, B held together (a known edge); op = 2 lock+unlock" },
	{ "edges10k", run_edges10k, 100,
	  "rounds of 100 outer x 100 inner mutexes (10,000 edges); op = one nested acquisition" },
	{ "waited", run_waited, 20000000,
	  "rounds of a mutex this thread once waited for, then another; op = 2 lock+unlock" },
	{ "rwpair_read", run_rwpair_read, 40000000,
	  "pairs on one rwlock; op = rdlock+unlock" },
	{ "rwpair_write", run_rwpair_write, 40000000,
	  "pairs on one rwlock; op = wrlock+unlock" },
	{ "spinpair", run_spinpair, 40000000,
	  "pairs on one spin lock; op = lock+unlock" },
	{ "hot2", run_hot2, 20000000,
	  "total pairs, 2 threads on one mutex; op = lock+unlock" },
	{ "hot4", run_hot4, 20000000,
	  "total pairs, 4 threads on one mutex; op = lock+unlock" },
	{ "rw4_read99", run_rw4_read99, 20000000,
	  "total ops, 4 threads on one rwlock, every 100th a write; op = rdlock+unlock or wrlock+unlock" },
	{ "spin2", run_spin2, 20000000,
	  "total pairs, 2 threads on one spin lock; op = lock+unlock" },
	{ "tenxtwenty", run_tenxtwenty, 100000,
	  "rounds, 10 threads x 20 mutexes; op = lock+unlock" },
	{ "condvar", run_condvar, 500000,
	  "items through a 64-slot queue; op = one item" },
	{ "handoff", run_handoff, 50000,
	  "turns, 2 threads, each turn contended; op = one contention event" },
	{ "handoff16", run_handoff16, 50000,
	  "the same, 16 frames deep; op = one contention event" },
	{ "lives1", run_lives1, 4000000,
	  "mutex lives, the main thread alone; op = init+lock+unlock+destroy" },
	{ "lives2", run_lives2, 4000000,
	  "mutex lives in all, 2 threads at once; op = init+lock+unlock+destroy" },
	{ "lives4", run_lives4, 4000000,
	  "mutex lives in all, 4 threads at once; op = init+lock+unlock+destroy" },
	{ "million", run_million, 1,
	  "rounds over 1e6 mutexes; op = init+lock+unlock+destroy" },
	{ "processes", run_processes, 300,
	  "short programs, each one lock and an exit; op = one program" },
	{ "big_exit", run_big_exit, 100,
	  "runs of java -version (or clang --version), report to a file; op = one run" },
	{ "callgrind_pair", run_callgrind_pair, 100000,
	  "pairs in bench_pairs after a 10-pair warm-up; op = lock+unlock" },
	{ "callgrind_rwpair_read", run_callgrind_rwpair_read, 100000,
	  "pairs in bench_rdpairs after a 10-pair warm-up; op = rdlock+unlock" },
	{ "callgrind_spinpair", run_callgrind_spinpair, 100000,
	  "pairs in bench_spinpairs after a 10-pair warm-up; op = lock+unlock" },
};

#define N_WORKLOADS (sizeof workloads / sizeof workloads[0])

static void usage(void)
{
	fprintf(stderr, "usage: bench <workload> [n]\n");
	for (size_t i = 0; i < N_WORKLOADS; i++)
		fprintf(stderr, "  %-21s n = %ld %s\n", workloads[i].name,
			workloads[i].n, workloads[i].what);
	exit(2);
}

int main(int argc, char **argv)
{
	const struct workload *w = NULL;
	if (argc == 2 && strcmp(argv[1], "child") == 0)
		return run_child(); /* one of processes' programs */
	if (argc < 2 || argc > 3)
		usage();
	for (size_t i = 0; i < N_WORKLOADS; i++)
		if (strcmp(argv[1], workloads[i].name) == 0)
			w = &workloads[i];
	if (!w)
		usage();
	long n = w->n;
	if (argc == 3) {
		char *end;
		n = strtol(argv[2], &end, 10);
		if (*end || n <= 0)
			usage();
	}

	struct result r = w->run(n);

	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) != 0) {
		perror("bench: getrusage");
		abort();
	}
	printf("workload=%s ops=%lu ns_per_op=%.2f peak_rss_kb=%ld checksum=%lu",
	       w->name, r.ops, r.ns / (double)r.ops, ru.ru_maxrss, r.checksum);
	if (r.chunk_ns > 0)
		printf(" chunk_ns_per_op=%.2f", r.chunk_ns);
	if (w->run == run_million)
		printf(" init_ns=%.2f lock_ns=%.2f destroy_ns=%.2f faults=%ld",
		       million_phase_ns[0], million_phase_ns[1], million_phase_ns[2],
		       ru.ru_minflt + ru.ru_majflt);
	printf("\n");
	return fflush(stdout) == 0 ? 0 : 1;
}
