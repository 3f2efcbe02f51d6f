/* loader_lock.c - the dynamic linker's module lock, found once and looked
 * at in a fork child; see loader_lock.h.
 *
 * glibc keeps the lock in _rtld_global, a private structure of ld.so whose
 * layout changes between versions, so it is found by what it is, not by an
 * offset: while dl_iterate_phdr calls back, the lock is a recursive mutex
 * held once by the calling thread.  No other mutex of that structure is
 * held then.  One such mutex, or none is used (then only the module
 * list's state below is looked at). */
#define _GNU_SOURCE
#include "glibc/loader_lock.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stddef.h>
#include <pthread.h>
#include <unistd.h>
#include <sys/syscall.h>

static pthread_mutex_t *module_lock;
/* The loader's other lock, which dlopen and dlclose hold while they run a
 * library's constructors and destructors, and dladdr and dlopen take:
 * glibc declares it just before the module lock (_dl_load_lock, then
 * _dl_load_write_lock), so it is the mutex before, if that is a recursive
 * one held by nobody else now.  NULL if not. */
static pthread_mutex_t *load_lock;
static int locked_since_fork;
const unsigned long long *ms_loader_adds_at;
unsigned long long ms_loader_adds_base;

struct globals {
	const char *at;
	size_t size;
};

/* The loader's count of the modules it has loaded, dlpi_adds (glibc's
 * _dl_load_adds): it follows the module lock and the TLS lock, so it is
 * the one word of that value within the two mutexes after the module
 * lock, if there is just one.  (Checked again against dl_iterate_phdr's
 * at report time: ms_loader_adds_sure.) */
static struct globals rtld_globals;

static void find_adds(const struct globals *g, unsigned long long adds)
{
	const char *from = (const char *)(module_lock + 1);
	const char *to = (const char *)(module_lock + 3) + sizeof adds;
	const unsigned long long *found = NULL;
	int matches = 0;
	if (to > g->at + g->size)
		to = g->at + g->size;
	for (const char *p = from; p + sizeof adds <= to; p += sizeof adds)
		if (*(const unsigned long long *)(const void *)p == adds) {
			found = (const unsigned long long *)(const void *)p;
			matches++;
		}
	if (matches == 1) {
		ms_loader_adds_base = adds;
		ms_loader_adds_at = found;
	}
}

static int find_held(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)info;
	(void)size;
	const struct globals *g = arg;
	int tid = (int)syscall(SYS_gettid);
	pthread_mutex_t *found = NULL;
	int matches = 0;
	for (size_t off = 0; off + sizeof(pthread_mutex_t) <= g->size;
	     off += sizeof(void *)) {
		pthread_mutex_t *m = (pthread_mutex_t *)(void *)(g->at + off);
		if (m->__data.__owner == tid && m->__data.__count == 1 &&
		    (m->__data.__kind & 0x7f) == PTHREAD_MUTEX_RECURSIVE_NP &&
		    m->__data.__lock != 0) {
			found = m;
			matches++;
		}
	}
	if (matches == 1)
		module_lock = found;
	return 1; /* one call is enough */
}

void ms_loader_lock_find(void)
{
	/* looked up before: dlsym and dladdr take the loader's other lock,
	 * which dlopen takes before this one */
	struct globals g = { dlsym(RTLD_DEFAULT, "_rtld_global"), 0 };
	Dl_info where;
	const ElfW(Sym) *sym = NULL;
	if (!g.at || !dladdr1(g.at, &where, (void **)&sym, RTLD_DL_SYMENT) || !sym)
		return;
	g.size = sym->st_size;
	dl_iterate_phdr(find_held, &g);
	rtld_globals = g;
	pthread_mutex_t *before = module_lock ? module_lock - 1 : NULL;
	int tid = (int)syscall(SYS_gettid);
	if (before && (const char *)before >= g.at &&
	    (before->__data.__kind & 0x7f) == PTHREAD_MUTEX_RECURSIVE_NP &&
	    (before->__data.__owner == 0 || before->__data.__owner == tid))
		load_lock = before;
}

static int read_adds(struct dl_phdr_info *info, size_t size, void *arg)
{
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs))
		*(unsigned long long *)arg = info->dlpi_adds;
	return 1;
}

void ms_loader_adds_find(void)
{
	unsigned long long adds = 0;
	if (!module_lock)
		return;
	dl_iterate_phdr(read_adds, &adds);
	if (adds)
		find_adds(&rtld_globals, adds);
}

int ms_loader_adds_sure(unsigned long long adds)
{
	if (ms_loader_adds_at && __atomic_load_n(ms_loader_adds_at, __ATOMIC_RELAXED) != adds)
		ms_loader_adds_at = NULL; /* not that word: never again */
	return ms_loader_adds_at != NULL;
}

int ms_loader_busy(void)
{
	if (!load_lock)
		return 0;
	/* a thread that is only passing through (a dlopen, a dladdr) comes
	 * out within moments; one blocked in a constructor does not: half a
	 * second's wait, once per holder and time it holds it */
	static int stuck_owner;
	int tid = (int)syscall(SYS_gettid);
	for (int tries = 0; tries < 50; tries++) {
		int owner = __atomic_load_n(&load_lock->__data.__owner, __ATOMIC_RELAXED);
		if (owner == 0 || owner == tid)
			return 0;
		if (owner == __atomic_load_n(&stuck_owner, __ATOMIC_RELAXED))
			return 1;
		usleep(10000);
	}
	__atomic_store_n(&stuck_owner, __atomic_load_n(&load_lock->__data.__owner,
							 __ATOMIC_RELAXED), __ATOMIC_RELAXED);
	return 1;
}

void ms_loader_lock_fork_child(void)
{
	/* the lock word, not the owner: glibc sets the owner after it takes
	 * the word and clears it before it lets go.  And a module list
	 * being changed (another thread inside dlopen or dlclose, whose lock
	 * glibc does reset): a dlopen here could stop on ld.so's assertion */
	locked_since_fork =
		(module_lock && __atomic_load_n(&module_lock->__data.__lock, __ATOMIC_RELAXED)) ||
		_r_debug.r_state != RT_CONSISTENT;
}

int ms_loader_locked_since_fork(void)
{
	return locked_since_fork;
}
