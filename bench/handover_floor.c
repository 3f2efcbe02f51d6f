/* handover_floor.c - the least an interposer that records a lock's
 * acquisitions can cost where threads hand the lock over (hot2, spin2).
 *
 * A pass-through of pthread_mutex_lock/unlock and pthread_spin_lock/unlock
 * that does, around glibc's, only what HANDOVER_FLOOR (0-6) says, for one
 * lock (the benchmarks' rows take one):
 *   0  nothing
 *   1  a count, in a line of its own that every thread writes
 *   2  owner changes, exact: the last owner read, written when it changed
 *   3  a count in each thread, no shared line
 *   4  the count and the owner in one line, a history entry in another
 *   5  as 4, and the owner and an entry at the unlock too, the entry's
 *      order after the newest entry's (the library's shape)
 *   6  as 5, with the count, the owner and the newest entries in one line
 * None of it is the library's code; each is the bare minimum of that
 * bookkeeping, so that the row with it is a floor for any design that
 * keeps it (doc/benchmark.md, "The floor of a handover").  At exit it
 * prints its numbers on stderr. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static int (*real_lock)(pthread_mutex_t *), (*real_unlock)(pthread_mutex_t *);
static int (*real_spin_lock)(pthread_spinlock_t *), (*real_spin_unlock)(pthread_spinlock_t *);
static int mode;

struct entry {
	unsigned long stamp, what;
};
static struct {
	_Alignas(64) unsigned long count, changes;
	unsigned owner, pos;
} rec;
static _Alignas(64) struct entry ring[16];
static struct {
	_Alignas(64) unsigned long count;
	unsigned owner, pos;
	struct entry newest[3];
} one;
static unsigned next_id;
static __thread unsigned me __attribute__((tls_model("initial-exec")));
static __thread volatile unsigned long mine __attribute__((tls_model("initial-exec"))); /* (volatile: never read, kept) */

__attribute__((constructor)) static void find_glibc(void)
{
	real_lock = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_mutex_lock");
	real_unlock = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_mutex_unlock");
	real_spin_lock = (int (*)(pthread_spinlock_t *))dlsym(RTLD_NEXT, "pthread_spin_lock");
	real_spin_unlock = (int (*)(pthread_spinlock_t *))dlsym(RTLD_NEXT, "pthread_spin_unlock");
	const char *m = getenv("HANDOVER_FLOOR");
	mode = m ? atoi(m) : 0;
}

__attribute__((destructor)) static void say(void)
{
	fprintf(stderr, "handover_floor: mode %d count %lu changes %lu\n", mode,
		rec.count + one.count, rec.changes);
}

static inline unsigned id(void)
{
	if (!me)
		me = __atomic_add_fetch(&next_id, 1, __ATOMIC_RELAXED);
	return me;
}

static inline void log_at(struct entry *e, unsigned long order, unsigned long what)
{
	e->what = what;
	__atomic_store_n(&e->stamp, order << 20 | me, __ATOMIC_RELEASE);
}

static inline void acquired(void)
{
	switch (mode) {
	case 1:
		rec.count++;
		break;
	case 2:
		if (rec.owner != id()) {
			rec.owner = me;
			rec.changes++;
		}
		break;
	case 3:
		mine++;
		break;
	case 4:
	case 5: {
		id();
		unsigned long order = mode == 5
			? __atomic_load_n(&ring[(rec.pos - 1) & 15].stamp, __ATOMIC_ACQUIRE) >> 20
			: rec.pos;
		unsigned pos = rec.pos++;
		rec.count++;
		rec.changes += rec.owner != me;
		rec.owner = me;
		log_at(&ring[pos & 15], order + 1, 1);
		break;
	}
	case 6: {
		id();
		unsigned pos = one.pos++;
		one.count++;
		one.owner = me;
		log_at(&one.newest[pos % 3], pos + 1, 1);
		break;
	}
	}
}

static inline void releasing(void)
{
	if (mode == 5) {
		unsigned pos = rec.pos++;
		rec.owner = me;
		log_at(&ring[pos & 15], pos + 1, 2);
	} else if (mode == 6) {
		unsigned pos = one.pos++;
		one.owner = me;
		log_at(&one.newest[pos % 3], pos + 1, 2);
	}
}

int pthread_mutex_lock(pthread_mutex_t *m)
{
	int rc = real_lock(m);
	acquired();
	return rc;
}

int pthread_mutex_unlock(pthread_mutex_t *m)
{
	releasing();
	return real_unlock(m);
}

int pthread_spin_lock(pthread_spinlock_t *s)
{
	int rc = real_spin_lock(s);
	acquired();
	return rc;
}

int pthread_spin_unlock(pthread_spinlock_t *s)
{
	releasing();
	return real_spin_unlock(s);
}
