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

#endif
