/* loader_lock.c - the dynamic linker's module lock, found once and looked
 * at in a fork child; see loader_lock.h.
 *
 * glibc keeps the lock in _rtld_global, a private structure of ld.so whose
 * layout changes between versions, so it is found by what it is, not by an
 * offset: while dl_iterate_phdr calls back, the lock is a recursive mutex
 * held once by the calling thread.  No other mutex of that structure is
 * held then.  One such mutex, or none is used. */
#define _GNU_SOURCE
#include "loader_lock.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <unistd.h>
#include <sys/syscall.h>

static pthread_mutex_t *module_lock;
static int locked_since_fork;

static int find_held(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)info;
	(void)size;
	(void)arg;
	void *globals = dlsym(RTLD_DEFAULT, "_rtld_global");
	Dl_info where;
	const ElfW(Sym) *sym = NULL;
	if (!globals || !dladdr1(globals, &where, (void **)&sym, RTLD_DL_SYMENT) ||
	    !sym || sym->st_size < sizeof(pthread_mutex_t))
		return 1;
	int tid = (int)syscall(SYS_gettid);
	pthread_mutex_t *found = NULL;
	int matches = 0;
	for (size_t off = 0; off + sizeof(pthread_mutex_t) <= sym->st_size;
	     off += sizeof(void *)) {
		pthread_mutex_t *m = (pthread_mutex_t *)((char *)globals + off);
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
	dl_iterate_phdr(find_held, NULL);
}

void ms_loader_lock_fork_child(void)
{
	locked_since_fork =
		module_lock && __atomic_load_n(&module_lock->__data.__owner, __ATOMIC_RELAXED);
}

int ms_loader_locked_since_fork(void)
{
	return locked_since_fork;
}
