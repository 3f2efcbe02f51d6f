/* altstack.c - see altstack.h.  The switch is makecontext's: the
 * report stays on the thread that exits (its thread record, its signal
 * mask), only its frames move. */
#define _GNU_SOURCE
#include "report/altstack.h"
#include "base/environ.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

/* The bytes of stack left below the caller: on the main thread's stack,
 * what ms_main_stack_reach() leaves of it; on another's, down to the end of
 * the stack it was made with.  0 on a stack neither is (a coroutine's,
 * makecontext): its room is not known, and an exit() there on a 16 KB
 * one ran the report into its guard page. */
static size_t stack_room_here(void)
{
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	if (gettid() == getpid()) {
		uintptr_t top = ms_main_stack_top(), reach = ms_main_stack_reach();
		if (!top)
			return (size_t)-1;
		if (sp > top || top - sp >= reach)
			return 0;
		return reach - (top - sp);
	}
	pthread_attr_t attr;
	void *lo = NULL;
	size_t size = 0;
	if (pthread_getattr_np(pthread_self(), &attr) != 0)
		return (size_t)-1;
	if (pthread_attr_getstack(&attr, &lo, &size) != 0)
		size = (size_t)-1;
	pthread_attr_destroy(&attr);
	if (size == (size_t)-1)
		return size;
	if (sp < (uintptr_t)lo || sp - (uintptr_t)lo > size)
		return 0;
	return sp - (uintptr_t)lo;
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
	if (stack_room_here() >= MS_REPORT_STACK) {
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
