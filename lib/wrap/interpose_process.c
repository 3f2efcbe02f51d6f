/* interpose_process.c - the entry points about threads, processes and
 * owners' deaths, beside the mutex calls of interpose.c.  Each calls
 * glibc's function and returns its answer and errno as they are.
 *   pthread_create        the dump thread starts with the second thread
 *                         (dump.c); the new thread gets libunwind's TLS
 *                         block before it runs (stack.h);
 *   _Fork                 its child runs our fork handler (fork.c);
 *   pthread_mutex_consistent(_np)  a robust mutex repaired (robust.c);
 *   pthread_setcanceltype asynchronous cancellation, which sections of
 *                         ours defer (thread.h, ms_async_defer);
 *   _exit, _Exit          the exit report, and a run's first process ending
 *                         so (a shell does) still ends the run with its
 *                         summary (run.h);
 *   quick_exit            the same, after the program's at_quick_exit
 *                         handlers (init.c);
 *   daemon                glibc's ends its parent with an _exit of its
 *                         own, past ours: done here, the same steps, so
 *                         that the parent ends through ours;
 *   setsid                a process that leaves its session (a daemon)
 *                         lets go of the stderr it started with
 *                         (output.h, ms_output_detached);
 *   close, dup2, dup3,    so does one whose fds 0-2 all leave that
 *   close_range,          stderr, where it is a pipe or a socket
 *   closefrom             (ms_output_std_moved). */
#define _GNU_SOURCE
#include "stacks/cfi.h"
#include "core/forked.h"
#include "runtime/init.h"
#include "base/internal.h"
#include "runtime/dump.h"
#include "glibc/real.h"
#include "analysis/robust.h"
#include "stacks/stack.h"
#include "core/table.h"
#include "core/thread.h"
#include "base/fds.h"
#include "base/output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* What a new thread starts with.  From a pool of our own, not malloc:
 * freed by the new thread, a start block was its first free, and glibc
 * gives a thread its own arena then (64 MiB of address space: under
 * ulimit -v, room a program whose threads never allocate keeps for its
 * stacks).  A full pool falls back to malloc. */
struct start {
	void *(*fn)(void *);
	void *arg;
	size_t stack_size; /* the attr's, or the default's (0: not known) */
};

#define STARTS 64
static struct start starts[STARTS];
static int start_used[STARTS];

/* A free block of the pool, or NULL if all are taken. */
static struct start *start_pooled(void)
{
	for (unsigned i = 0; i < STARTS; i++)
		if (!__atomic_load_n(&start_used[i], __ATOMIC_RELAXED) &&
		    !__atomic_exchange_n(&start_used[i], 1, __ATOMIC_ACQUIRE))
			return &starts[i];
	return NULL;
}

MS_BEFORE_ASAN_THREAD static void start_unpool(struct start *s)
{
	__atomic_store_n(&start_used[s - starts], 0, __ATOMIC_RELEASE);
}

/* The new thread: libunwind's TLS block first, while no allocator lock is
 * held (stack.h), then the program's function (a tail call: no frame of
 * ours stays under it, and its return value is the thread's). */
MS_BEFORE_ASAN_THREAD static void *thread_start_pooled(void *p)
{
	struct start s = *(struct start *)p;
	start_unpool(p);
	ms_stack_thread_bounds(s.stack_size);
	ms_cfi_thread_starts();
	if (!MS_SANITIZED_BUILD)
		ms_stack_thread_starts();
	return s.fn(s.arg);
}

/* The same, when the pool was empty.  The block is freed after the TLS
 * block is made: the free may be the thread's first call into the
 * allocator, which locks its mutexes -- a capture of the first lock of
 * one, from a thread without its libunwind block, asked for that block
 * from inside the allocator (jemalloc: the thread waited for itself). */
MS_BEFORE_ASAN_THREAD static void *thread_start_malloced(void *p)
{
	struct start s = *(struct start *)p;
	ms_stack_thread_bounds(s.stack_size);
	ms_cfi_thread_starts();
	if (!MS_SANITIZED_BUILD)
		ms_stack_thread_starts();
	free(p);
	return s.fn(s.arg);
}

/* The size of the stack a thread made with attr gets (glibc's default
 * for NULL, or an attr that sets none), 0 if not known. */
static size_t stack_size_of(const pthread_attr_t *attr)
{
	size_t size = 0;
	pthread_attr_t def;
	if (attr) {
		if (pthread_attr_getstacksize(attr, &size) != 0)
			size = 0;
	} else if (pthread_getattr_default_np(&def) == 0) {
		if (pthread_attr_getstacksize(&def, &size) != 0)
			size = 0;
		pthread_attr_destroy(&def);
	}
	return size;
}

/* The program's second thread: the dump thread may start now (dump.c). */
MS_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr,
			     void *(*fn)(void *), void *arg)
{
	/* Not recording (stepped aside for a sanitizer, see init.c): a tail
	 * call, so no frame of ours sits under the caller's -- TSan's
	 * interceptor behind us names its caller as the thread's creator. */
	if (!__atomic_load_n(&ms_active, __ATOMIC_ACQUIRE) &&
	    !__atomic_load_n(&ms_dump_pending, __ATOMIC_ACQUIRE))
		return ms_real.thread_create(th, attr, fn, arg);
	int rc, saved = errno;
	struct start *pooled = NULL, *malloced = NULL;
	if (ms_stack_thread_ready() && !(pooled = start_pooled()))
		malloced = malloc(sizeof *malloced);
	size_t stack_size = pooled || malloced ? stack_size_of(attr) : 0;
	errno = saved;
	ms_stack_create_begin();
	if (pooled) {
		*pooled = (struct start){ fn, arg, stack_size };
		rc = ms_real.thread_create(th, attr, thread_start_pooled, pooled);
		if (rc != 0)
			start_unpool(pooled);
	} else if (malloced) {
		*malloced = (struct start){ fn, arg, stack_size };
		rc = ms_real.thread_create(th, attr, thread_start_malloced, malloced);
		if (rc != 0) {
			saved = errno;
			free(malloced);
			errno = saved;
		}
	} else /* without a start block the thread starts as without us */
		rc = ms_real.thread_create(th, attr, fn, arg);
	ms_stack_create_end();
	if (rc == 0 && unlikely(__atomic_load_n(&ms_dump_pending, __ATOMIC_ACQUIRE))) {
		saved = errno;
		ms_dump_thread_created();
		errno = saved;
	}
	return rc;
}

/* glibc's fork without the fork handlers: its child is a fork child all
 * the same, which our handler makes (fork.c) -- or it would go on under
 * the parent's thread id, which the lock path writes into the mutexes it
 * takes (glibc_fast.h) where glibc writes the child's, with the parent's
 * numbers in its report.  Async-signal-safe as _Fork is: a system call
 * and the fork handler's own work. */
MS_EXPORT pid_t _Fork(void)
{
	int parent = getpid();
	pid_t pid = ms_real.fork_bare();
	if (pid == 0) {
		int saved = errno;
		ms_fork_child_unhandled(parent);
		errno = saved;
	}
	return pid;
}

MS_EXPORT int pthread_mutex_consistent(pthread_mutex_t *m)
{
	int rc = ms_real.mutex_consistent(m);
	if (rc == 0 && __atomic_load_n(&ms_active, __ATOMIC_ACQUIRE) &&
	    !ms_self.guard) {
		ms_fork_settle();
		uint32_t r = ms_table_find((uintptr_t)m);
		if (r != MS_REC_NONE && r != MS_REC_UNTRACKED)
			ms_robust_made_consistent(r);
	}
	return rc;
}

MS_EXPORT int pthread_setcanceltype(int type, int *old)
{
	struct ms_thread *t = &ms_self;
	if (t->async_deferred && (type == PTHREAD_CANCEL_DEFERRED ||
				  type == PTHREAD_CANCEL_ASYNCHRONOUS)) {
		/* a signal handler's, inside a section of ours that defers
		 * cancellation: the type it asks for comes as that ends */
		if (old)
			*old = t->cancel_asked ? t->cancel_asked - 1
			       : t->cancel_async ? PTHREAD_CANCEL_ASYNCHRONOUS
						 : PTHREAD_CANCEL_DEFERRED;
		t->cancel_asked = (uint8_t)(1 + type);
		return 0;
	}
	int rc = ms_real.cancel_type(type, old);
	if (rc == 0)
		t->cancel_async = type == PTHREAD_CANCEL_ASYNCHRONOUS;
	return rc;
}

/* Its name before glibc 2.12, pthread_mutex_consistent_np (GLIBC_2.4).
 * Today's pthread.h turns it into pthread_mutex_consistent, but a program
 * built against glibc before 2.34 asks for the old name, which glibc still
 * exports: that repair went past us, and the report said the mutex was made
 * consistent 0 times.  The same function under the old name. */
MS_EXPORT int ms_mutex_consistent_np(pthread_mutex_t *m)
	__asm__("pthread_mutex_consistent_np");
MS_EXPORT int ms_mutex_consistent_np(pthread_mutex_t *m)
{
	return pthread_mutex_consistent(m);
}

/* exit() on two threads at once, which glibc 2.36 lets race: the later
 * one's end cut the first one's exit report short (an empty file).  It
 * waits for that report now (runtime/init.c). */
MS_EXPORT void exit(int status)
{
	ms_exit_begin(status);
	void (*next)(int) = __atomic_load_n(&ms_real.exit, __ATOMIC_ACQUIRE);
	if (!next) /* before start-up */
		next = (void (*)(int))ms_real_next("exit", NULL);
	if (next)
		next(status);
	ms_exit_group(status);
}

/* glibc's exit() ends with its own _exit, which does not come here. */
MS_EXPORT void _exit(int status)
{
	ms_exit_now(__atomic_load_n(&ms_real.exit_now, __ATOMIC_ACQUIRE), status);
}

MS_EXPORT void _Exit(int status)
{
	ms_exit_now(__atomic_load_n(&ms_real.exit_now_c99, __ATOMIC_ACQUIRE), status);
}

/* glibc's quick_exit ends with its own _exit, past the two above: the
 * status goes to the handler start-up registered with at_quick_exit,
 * which writes the report once the program's handlers have run
 * (runtime/init.c). */
MS_EXPORT void quick_exit(int status)
{
	ms_quick_exit_begin(status);
	/* once a process: looked up here, also where start-up stepped aside */
	void (*next)(int) = (void (*)(int))ms_real_next("quick_exit", NULL);
	if (next)
		next(status);
	ms_exit_now(__atomic_load_n(&ms_real.exit_now_c99, __ATOMIC_ACQUIRE), status);
}

/* close, dup2, dup3, close_range and closefrom: the next library's or
 * glibc's (ms_real, looked up here on a call before start-up: a
 * descriptor tracker preloaded after us sees the program's calls from
 * its constructors too), then: a descriptor of ours the call closed or
 * replaced is no longer ours (the program may put its own copy of
 * stderr there, close-on-exec too); and for fds 0-2, in a process that
 * is not a vfork child (which shares our memory with its parent, and
 * whose exec closes the copy), whether the stderr the process started
 * with is still held by the program (ms_output_std_moved). */
static void *next_of(void **slot, const char *name)
{
	void *fn = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	if (!fn) {
		fn = ms_real_next(name, NULL);
		__atomic_store_n(slot, fn, __ATOMIC_RELEASE);
	}
	return fn;
}

static void fds_changed(unsigned first, unsigned last)
{
	/* most calls touch neither ours nor 0-2: a look, and no system call
	 * (the vfork question is getpid) */
	int ours = ms_fds_in(first, last);
	if (!ours && first > STDERR_FILENO)
		return;
	int saved = errno;
	/* a vfork child's descriptors are its own, its memory its parent's
	 * (python's subprocess closes every descriptor there: the parent's
	 * copy would have been forgotten, and its reports lost) */
	if (!ms_in_vfork_child()) {
		if (ours)
			ms_fds_forget(first, last);
		if (first <= STDERR_FILENO)
			ms_output_std_moved();
	}
	errno = saved;
}

// NOLINTNEXTLINE(bugprone-reserved-identifier,cert-dcl37-c)
int __close(int fd); /* glibc's close, by its other exported name */
MS_EXPORT int close(int fd)
{
	int (*next)(int) = (int (*)(int))next_of((void **)&ms_real.close, "close");
	int rc = next ? next(fd) : __close(fd);
	if (rc == 0 && fd >= 0)
		fds_changed((unsigned)fd, (unsigned)fd);
	return rc;
}

// NOLINTNEXTLINE(bugprone-reserved-identifier,cert-dcl37-c)
int __dup2(int oldfd, int newfd); /* glibc's dup2, the same */
MS_EXPORT int dup2(int oldfd, int newfd)
{
	int (*next)(int, int) = (int (*)(int, int))next_of((void **)&ms_real.dup2, "dup2");
	int rc = next ? next(oldfd, newfd) : __dup2(oldfd, newfd);
	if (rc >= 0 && oldfd != newfd)
		fds_changed((unsigned)rc, (unsigned)rc);
	return rc;
}

MS_EXPORT int dup3(int oldfd, int newfd, int flags)
{
	int (*next)(int, int, int) =
		(int (*)(int, int, int))next_of((void **)&ms_real.dup3, "dup3");
	int rc = next ? next(oldfd, newfd, flags)
		      : (int)syscall(SYS_dup3, oldfd, newfd, flags);
	if (rc >= 0)
		fds_changed((unsigned)rc, (unsigned)rc);
	return rc;
}

/* (Python's os.closerange(0, 3) is close_range(0, 2, 0)) */
MS_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
	int (*next)(unsigned, unsigned, int) = (int (*)(unsigned, unsigned, int))next_of(
		(void **)&ms_real.close_range, "close_range");
	int rc = next ? next(first, last, flags)
		      : (int)syscall(SYS_close_range, first, last, flags);
	if (rc == 0 && !(flags & CLOSE_RANGE_CLOEXEC) && first <= last)
		fds_changed(first, last);
	return rc;
}

MS_EXPORT void closefrom(int lowfd)
{
	void (*next)(int) = (void (*)(int))next_of((void **)&ms_real.closefrom, "closefrom");
	if (next)
		next(lowfd);
	else /* a glibc before 2.34: no program calls it */
		(void)syscall(SYS_close_range, lowfd < 0 ? 0u : (unsigned)lowfd, ~0u, 0);
	fds_changed(lowfd < 0 ? 0u : (unsigned)lowfd, ~0u);
}

/* glibc's setsid is its system call, made here the same way. */
MS_EXPORT pid_t setsid(void)
{
	pid_t sid = (pid_t)syscall(SYS_setsid);
	if (sid >= 0 && !ms_in_vfork_child()) /* (its parent's memory) */
		ms_output_detached();
	return sid;
}

/* daemon(3) as glibc's does it -- fork (the program's fork handlers and
 * ours run), the parent ends with _exit(0), the child starts a session,
 * goes to "/" unless nochdir, and unless noclose puts /dev/null (the
 * character device 1:3, else ENODEV) on its standard input, output and
 * error -- with the parent's end through our _exit: its report, and a
 * run's first process saying where the daemon's will be.  Where the
 * library is off (stepped aside, MUTEXSTAT_FOLLOW=0's child), glibc's. */
MS_EXPORT int daemon(int nochdir, int noclose)
{
	if (ms_start_lazily()) {
		int (*next)(int, int) = (int (*)(int, int))ms_real_next("daemon", NULL);
		if (next)
			return next(nochdir, noclose);
	}
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid > 0)
		ms_exit_now(__atomic_load_n(&ms_real.exit_now, __ATOMIC_ACQUIRE), 0);
	if (setsid() < 0)
		return -1;
	if (!nochdir)
		(void)chdir("/");
	if (noclose)
		return 0;
	/* system calls, as glibc's daemon makes them (its own, not the
	 * program's open or close, should it define one) */
	int fd = (int)syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDWR);
	if (fd < 0)
		return -1;
	struct stat st;
	int err = syscall(SYS_fstat, fd, &st) != 0		     ? errno
		  : !S_ISCHR(st.st_mode) || st.st_rdev != makedev(1, 3) ? ENODEV
									     : 0;
	if (err) {
		(void)ms_fd_close(fd);
		errno = err;
		return -1;
	}
	for (int std = STDIN_FILENO; std <= STDERR_FILENO; std++)
		if (fd != std)
			(void)syscall(SYS_dup3, fd, std, 0);
	if (fd > STDERR_FILENO)
		(void)ms_fd_close(fd);
	return 0;
}
