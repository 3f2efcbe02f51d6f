/* altstack.c - see altstack.h.  The switch is makecontext's: the
 * report stays on the thread that exits (its thread record, its signal
 * mask), only its frames move. */
#define _GNU_SOURCE
#include "report/altstack.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <ucontext.h>
#include <unistd.h>

/* The bytes of the calling thread's stack: ulimit -s for the main thread
 * (its stack grows to that), the size it was made with for others. */
static size_t stack_size_here(void)
{
	if (gettid() == getpid()) {
		struct rlimit rl;
		if (getrlimit(RLIMIT_STACK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
			return (size_t)-1;
		return rl.rlim_cur;
	}
	pthread_attr_t attr;
	void *lo = NULL;
	size_t size = (size_t)-1;
	if (pthread_getattr_np(pthread_self(), &attr) != 0)
		return size;
	if (pthread_attr_getstack(&attr, &lo, &size) != 0)
		size = (size_t)-1;
	pthread_attr_destroy(&attr);
	return size;
}

/* What the new stack is to run, read there with every signal blocked: a
 * handler that wrote a report of its own meanwhile would leave its own. */
static __thread void (*run_fn)(void *);
static __thread void *run_arg;
static __thread sigset_t run_mask;

static void trampoline(void)
{
	void (*fn)(void *) = run_fn;
	void *arg = run_arg;
	pthread_sigmask(SIG_SETMASK, &run_mask, NULL);
	fn(arg);
}

void ms_report_stack_run(void (*fn)(void *), void *arg)
{
	ucontext_t back, there;
	volatile int saved = errno; /* kept across swapcontext (returns twice) */
	if (stack_size_here() >= MS_REPORT_STACK) {
		errno = saved;
		fn(arg);
		return;
	}
	void *stack = mmap(NULL, MS_REPORT_STACK, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
	/* cppcheck-suppress getcontextCalled ; a stack switch, not a coroutine */
	if (stack == MAP_FAILED || getcontext(&there) != 0) {
		if (stack != MAP_FAILED)
			munmap(stack, MS_REPORT_STACK);
		errno = saved;
		fn(arg); /* no room for one: as before */
		return;
	}
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	there.uc_stack.ss_sp = stack;
	there.uc_stack.ss_size = MS_REPORT_STACK;
	there.uc_link = &back;
	there.uc_sigmask = all;
	run_fn = fn;
	run_arg = arg;
	run_mask = old;
	/* cppcheck-suppress makecontextCalled */
	makecontext(&there, trampoline, 0);
	errno = saved;
	/* cppcheck-suppress swapcontextCalled */
	int switched = swapcontext(&back, &there) == 0;
	saved = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!switched) {
		errno = saved;
		fn(arg);
		saved = errno;
	}
	munmap(stack, MS_REPORT_STACK);
	errno = saved;
}
