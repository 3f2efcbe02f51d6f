/* loader_lock.h - whether a fork child may call into the dynamic linker.
 *
 * dl_iterate_phdr, dlopen and dlclose take a lock of the dynamic linker
 * (glibc's dl_load_write_lock) that glibc does not reset in a fork child.
 * If another thread of the parent was inside dl_iterate_phdr when it forked
 * (C++ exception unwinding, a profiler, the program's own module walk), the
 * child finds the lock held by a thread it does not have, and its first
 * such call waits for ever.  The program's child may never make one; the
 * library's report would (dlopen of libdw, libz; the module walk).  So the
 * child looks at the lock's owner first. */
#ifndef MUTEXSTAT_LOADER_LOCK_H
#define MUTEXSTAT_LOADER_LOCK_H

#include <stdint.h>

/* At start-up: find the lock (inside dl_iterate_phdr, the one recursive
 * mutex of the dynamic linker's globals this thread holds).  If it cannot
 * be found for sure, the check below always answers 0. */
void ms_loader_lock_find(void);

/* In a fork child: whether the lock is held (by a thread of the parent),
 * or the module list was being changed (dlopen, dlclose) at the fork.
 * Set by ms_loader_lock_fork_child(), read by the report's callers of
 * dlopen and dl_iterate_phdr. */
void ms_loader_lock_fork_child(void);
int ms_loader_locked_since_fork(void);

/* Whether dlopen, dladdr and dlsym would wait for ever now: the loader's
 * other lock (the one glibc resets in a fork child) is held by another
 * thread that does not let go within half a second -- one blocked in a
 * library's constructor or destructor, in a deadlock a live dump is asked
 * to report.  The report then names code without them. */
int ms_loader_busy(void);

/* The dynamic linker's count of the modules it has loaded so far (glibc's
 * _dl_load_adds, dl_iterate_phdr's dlpi_adds), read without a call: a
 * lock's life records it when it begins, and its variable is named only
 * after a module loaded before that (symbols.c).  Found at start-up by
 * its value (ms_loader_lock_find); NULL if not for sure. */
extern const unsigned long long *ms_loader_adds_at;
extern unsigned long long ms_loader_adds_base; /* its value then */

/* The count in 16 bits, for a lock's life: the modules loaded since
 * start-up (at most 0xffff: fewer than there were names none but a lock of
 * the newest modules loses; 0 if unknown).  ms_loader_adds_of() reads it
 * back as a count, fewer or as many as there were (0 unknown). */
static inline uint16_t ms_loader_adds_short(void)
{
	const unsigned long long *at = ms_loader_adds_at;
	if (!at)
		return 0;
	unsigned long long since = __atomic_load_n(at, __ATOMIC_RELAXED) - ms_loader_adds_base;
	return (uint16_t)(since < 0xffff ? since : 0xffff);
}

static inline unsigned long long ms_loader_adds_of(uint16_t since)
{
	return ms_loader_adds_base ? ms_loader_adds_base + since : 0;
}

/* Finds it, at the end of start-up (ms_stack_init): the lives begun
 * before count as begun then. */
void ms_loader_adds_find(void);

/* Whether *ms_loader_adds_at is the count, now that dl_iterate_phdr says it
 * is `adds`: if it is not, it is never read again. */
int ms_loader_adds_sure(unsigned long long adds);

#endif
