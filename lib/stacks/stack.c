/* stack.c - stack capture with a privately opened libunwind; see stack.h.
 *
 * Across fork.  libunwind takes locks of its own while it walks a stack (a
 * pthread mutex around its register-state cache, and the dynamic linker's
 * lock inside dl_iterate_phdr), and a fork child gets them as they were:
 * one held by a capture on another thread of the parent stays held for
 * ever, and the child's first capture -- at its first mutex call, where the
 * program itself takes no such lock -- would wait for it for ever.  So a
 * fork waits for the captures under way (briefly: they take microseconds),
 * none starts meanwhile, and a child forked while one was still under way
 * takes no stacks at all. */
#define _GNU_SOURCE
#include "stacks/stack.h"
#include "base/environ.h"
#include "base/output.h"
#include "base/fmt.h"
#include "base/address_space.h"
#include "stacks/cfi.h"
#include "glibc/loader_lock.h"
#include "base/spin.h"
#include "core/thread.h"
#include "base/internal.h"
#include "glibc/unwind_fds.h"
#include "glibc/tls_block.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/auxv.h>
#include <sys/syscall.h>

typedef int (*backtrace_fn)(void **buffer, int size);

static backtrace_fn unw_backtrace_p;
uint64_t ms_stack_walks_by_libunwind;
static void *unw_handle; /* libunwind, opened privately */
static char unw_why[80];  /* why it is not there, in the loader's words */
static uintptr_t self_lo, self_hi; /* our own code, trimmed from stacks */
static uintptr_t unw_lo, unw_hi;   /* libunwind's code */
/* the C library's code and the dynamic linker's, where threads and the
 * process start */
static uintptr_t libc_code[2], ld_code[2]; /* [lo, hi) */
static struct ms_tls_module unw_tls; /* its TLS module; modid 0: none */

static int captures;      /* under way, on every thread */
static int creations;     /* threads being created, on every thread */
static int forking;       /* a fork is on its way: no capture starts */
static int off_since_fork; /* this fork child takes no stacks: MS_OFF_* */
/* under way on this thread: a fork from a signal handler that interrupted
 * a capture must not wait for it */
static __thread int capturing __attribute__((tls_model("initial-exec")));
static __thread int creating __attribute__((tls_model("initial-exec")));
/* this thread is forking (between its prepare and parent or child handler) */
static __thread int forking_here __attribute__((tls_model("initial-exec")));
/* this thread is allocating libunwind's TLS block: the malloc that does it
 * may be the thread's first, where the allocator sets the thread up and
 * locks mutexes; a capture of theirs would ask for the block again, from
 * inside that malloc */
static __thread int tls_setup __attribute__((tls_model("initial-exec")));
/* this thread has no libunwind block and is to take no stacks (room, or
 * malloc could not give the block) */
static __thread int tls_none __attribute__((tls_model("initial-exec")));
/* this thread has its block */
static __thread int tls_made __attribute__((tls_model("initial-exec")));

struct range {
	uintptr_t here, lo, hi;
};

/* Find the executable segment of the object holding range->here. */
static int find_segment(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct range *rg = arg;
	uintptr_t here = rg->here;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
		if (here >= lo && here < hi) {
			rg->lo = lo;
			rg->hi = hi;
			return 1;
		}
	}
	return 0;
}

/* The program's entry point, its _start (ms_stack_program_start). */
static uintptr_t entry_point;

/* The executable segments of libc and the dynamic linker, by their
 * file names (they stay loaded). */
static int find_c_library(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	const char *base = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
	base = base ? base + 1 : info->dlpi_name ? info->dlpi_name : "";
	uintptr_t *code = !strncmp(base, "libc.so", 7)    ? libc_code
			  : !strncmp(base, "ld-linux", 8) ? ld_code
							  : NULL;
	for (int i = 0; code && !code[0] && i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		code[0] = info->dlpi_addr + ph->p_vaddr;
		code[1] = code[0] + ph->p_memsz;
	}
	return 0;
}

/* The main thread's: its top as the program began, and as far below it
 * as it may reach (base/environ.h), so that a dump does not walk it on
 * a coroutine's stack either (ms_stack_switched).  Only where the library
 * starts in the main thread. */
static void main_thread_bounds(void)
{
	struct ms_thread *t = &ms_self;
	uintptr_t top = ms_main_stack_top(), reach = ms_main_stack_reach();
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	if (gettid() != getpid() || !top || top < reach || sp > top || sp <= top - reach)
		return;
	t->stack_low = top - reach;
	t->stack_high = top;
}

int ms_stack_init(void)
{
	int saved = errno;
	ms_loader_lock_find();
	ms_cfi_start();
	struct range self = { (uintptr_t)ms_stack_init, 0, 0 };
	dl_iterate_phdr(find_segment, &self);
	self_lo = self.lo;
	self_hi = self.hi;
	dl_iterate_phdr(find_c_library, NULL);
	entry_point = (uintptr_t)getauxval(AT_ENTRY);
	main_thread_bounds();
	/* RTLD_LOCAL keeps libunwind's symbols -- _Unwind_RaiseException and
	 * the rest of the GCC unwinder ABI among them -- out of the program's
	 * global scope; RTLD_NOW so no lazy binding happens later on a lock
	 * path. */
	int cancel = ms_cancel_off(); /* dlopen opens files */
	void *h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
	ms_cancel_restore(cancel);
	if (h) {
		unw_backtrace_p = (backtrace_fn)dlsym(h, "unw_backtrace");
	} else {
		/* "libunwind.so.8: cannot open shared object file: REASON":
		 * the reason (not installed, or EMFILE in a process out of
		 * descriptors) */
		const char *err = dlerror(), *why = err ? strrchr(err, ':') : NULL;
		(void)snprintf(unw_why, sizeof unw_why, "%s", why ? why + 2 : "");
	}
	unw_handle = unw_backtrace_p ? h : NULL;
	if (unw_backtrace_p) {
		ms_unwind_fds_init((const void *)unw_backtrace_p);
		struct range unw = { (uintptr_t)unw_backtrace_p, 0, 0 };
		dl_iterate_phdr(find_segment, &unw);
		unw_lo = unw.lo;
		unw_hi = unw.hi;
		ms_tls_module_of(h, &unw_tls);
		ms_stack_thread_ready();
	}
	/* after libunwind: the modules the library loads itself are no
	 * program's that locks may lie in */
	ms_loader_adds_find();
	errno = saved;
	/* cppcheck-suppress resourceLeak ; h stays open for the life of the
	 * process: unw_backtrace_p points into it */
	return unw_backtrace_p ? 0 : -1;
}

int ms_stack_thread_ready(void)
{
	if (!unw_tls.modid)
		return 0;
	if (tls_made || tls_none)
		return 1;
	tls_setup++;
	if (ms_tls_blocks_make(&unw_tls, 1) == 0)
		tls_made = 1;
	else
		tls_none = 1; /* glibc would end the process */
	tls_setup--;
	return 1;
}

/* The arenas the library's share of ulimit -v pays for; UINT64_MAX (no
 * limit) is every thread.  And how many threads took a block. */
static uint64_t arena_budget = UINT64_MAX;
static uint64_t arenas_taken;

uint64_t ms_stack_arena_max(void)
{
	const char *env = ms_getenv("MALLOC_ARENA_MAX");
	if (env && *env >= '1' && *env <= '9')
		return strtoull(env, NULL, 10);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	return 8 * (uint64_t)(cpus > 0 ? cpus : 1);
}

void ms_stack_set_arena_budget(uint64_t arenas)
{
	arena_budget = arenas >= ms_stack_arena_max() ? UINT64_MAX : arenas;
}

/* Not the last of the room either way: a new arena maps twice its size
 * for a moment (to align it). */
#define ARENA_LEAVES (2 * MS_STACK_ARENA_BYTES)

void ms_stack_thread_starts(void)
{
	static int said;
	if (arena_budget == UINT64_MAX) {
		ms_stack_thread_ready();
		return;
	}
	uint64_t left = ms_address_space_left();
	if (left >= ARENA_LEAVES &&
	    __atomic_fetch_add(&arenas_taken, 1, __ATOMIC_RELAXED) < arena_budget) {
		ms_stack_thread_ready();
		return;
	}
	tls_none = 1;
	if (unw_tls.modid && !__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED)) {
		char buf[240];
		struct ms_fmt f;
		ms_fmt_init(&f, buf, sizeof buf, -1);
		if (arena_budget == 0)
			ms_fmt(&f, "mutexstat: under ulimit -v the threads the program "
				   "starts take no call stacks");
		else
			ms_fmt(&f, "mutexstat: under ulimit -v the first %llu thread%s the "
				   "program starts take call stacks, the others none",
			       (unsigned long long)arena_budget, arena_budget == 1 ? "" : "s");
		ms_fmt(&f, " (each would get a malloc arena, 64 MiB, beyond the "
			   "library's half)\n");
		ms_output_say(ms_fmt_str(&f));
	}
}

uintptr_t ms_stack_exit_entry;

int ms_stack_own_code(uintptr_t addr)
{
	return addr >= self_lo && addr < self_hi;
}

int ms_stack_c_library_code(uintptr_t addr)
{
	return (addr >= libc_code[0] && addr < libc_code[1]) ||
	       (addr >= ld_code[0] && addr < ld_code[1]);
}

/* _start is a few instructions: glibc's x86-64 one calls
 * __libc_start_main 0x21 bytes in (crt1.o), other ports' within 64. */
#define START_BYTES 64

int ms_stack_program_start(uintptr_t addr)
{
	return entry_point && addr > entry_point && addr <= entry_point + START_BYTES;
}

int ms_stack_helper_code(uintptr_t addr)
{
	return addr >= unw_lo && addr < unw_hi;
}

const char *ms_stack_unavailable_why(void)
{
	return unw_why[0] ? unw_why : "it has no unw_backtrace";
}

int ms_stack_available(void)
{
	return unw_backtrace_p != NULL;
}

int ms_stack_off_since_fork(void)
{
	return off_since_fork;
}

/* Until *count is down to this thread's own (mine), or ns have passed. */
static void wait_down(const int *count, int mine, long ns)
{
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (unsigned spins = 0; __atomic_load_n(count, __ATOMIC_SEQ_CST) > mine; spins++) {
		if (spins < 100) {
			__builtin_ia32_pause();
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - start.tv_sec) * 1000000000L + now.tv_nsec - start.tv_nsec > ns)
			break;
		sched_yield();
	}
}

void ms_stack_fork_prepare(void)
{
	forking_here = 1;
	__atomic_store_n(&forking, 1, __ATOMIC_SEQ_CST);
	/* 50 ms at most: a thread stopped or starved inside a capture must
	 * not hold the program's fork; its child then takes no stacks */
	wait_down(&captures, capturing, 50000000L);
	/* a creation is a few system calls, but one preempted on a loaded
	 * machine may take longer: 1 s (a thread stopped in one, SIGSTOP,
	 * would hold every fork for that long) */
	wait_down(&creations, creating, 1000000000L);
}

/* Counts this thread in *count (and *mine, its own part) once no fork is
 * on its way, waiting for one that is -- unless this thread is the one
 * forking (a report from the program's own fork handler must not wait
 * for its own fork).  Counted first, then the flag read: as
 * ms_stack_begin. */
static void enter_when_no_fork(int *count, int *mine)
{
	int saved = errno;
	for (;;) {
		__atomic_add_fetch(count, 1, __ATOMIC_SEQ_CST);
		++*mine;
		if (!__atomic_load_n(&forking, __ATOMIC_SEQ_CST) || forking_here)
			break;
		--*mine;
		__atomic_sub_fetch(count, 1, __ATOMIC_SEQ_CST);
		while (__atomic_load_n(&forking, __ATOMIC_SEQ_CST)) {
			/* not glibc's nanosleep, a cancellation point: a
			 * thread cancelled in pthread_create (none) or a
			 * report would end where it cannot */
			struct timespec nap = { 0, 100000 };
			syscall(SYS_nanosleep, &nap, NULL);
		}
	}
	errno = saved;
}

void ms_stack_create_begin(void)
{
	enter_when_no_fork(&creations, &creating);
}

void ms_stack_create_end(void)
{
	creating--;
	__atomic_sub_fetch(&creations, 1, __ATOMIC_SEQ_CST);
}

void ms_stack_fork_parent(void)
{
	__atomic_store_n(&forking, 0, __ATOMIC_SEQ_CST);
	forking_here = 0;
}

void ms_stack_fork_child(void)
{
	/* this thread's own capture, if a signal handler forked inside it,
	 * goes on in the child and lets go of libunwind's locks there */
	ms_loader_lock_fork_child();
	if (ms_loader_locked_since_fork())
		off_since_fork = MS_OFF_LOADER; /* libunwind would wait for it */
	else if (__atomic_load_n(&captures, __ATOMIC_SEQ_CST) > capturing)
		off_since_fork = MS_OFF_CAPTURE;
	captures = capturing;
	creations = creating;
	forking = 0;
	forking_here = 0;
}

void *ms_stack_symbol(const char *name)
{
	return unw_handle ? dlsym(unw_handle, name) : NULL;
}

int ms_stack_begin(void)
{
	if (!unw_backtrace_p || off_since_fork || tls_setup || tls_none)
		return 0;
	/* counted before the fork flag is read, as the fork sets the flag
	 * before it reads the count: one of the two sees the other */
	__atomic_add_fetch(&captures, 1, __ATOMIC_SEQ_CST);
	capturing++;
	if (__atomic_load_n(&forking, __ATOMIC_SEQ_CST)) {
		ms_spin_skipped_call(); /* this stack is not recorded */
		ms_stack_end();
		return 0;
	}
	return 1;
}

void ms_stack_report_begin(void)
{
	enter_when_no_fork(&captures, &capturing);
}

void ms_stack_end(void)
{
	capturing--;
	__atomic_sub_fetch(&captures, 1, __ATOMIC_SEQ_CST);
}

/* The room libunwind's walk may use: its first in a thread sets up its
 * caches, a few KB deep, and an alternate stack of SIGSTKSZ (8 KB, a
 * third of it the signal frame's on a machine with AVX-512) that a
 * handler locks on overflowed.  There the stack is not captured (the
 * call's line, its caller's address, is still kept): ms_stack_near_end
 * for the alternate stack the library knows of, little_room, where cfi.c's
 * walk gave up (a signal frame, a stack not the thread's own), for one
 * set behind its back since (a raw system call) while the thread is on
 * it. */
#define UNWIND_ROOM ((uintptr_t)16 << 10)
static int little_room(void)
{
	stack_t alt;
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	return syscall(SYS_sigaltstack, NULL, &alt) == 0 && (alt.ss_flags & SS_ONSTACK) &&
	       sp - (uintptr_t)alt.ss_sp < UNWIND_ROOM;
}

/* The thread's stack ends at most stack_size below its descriptor, which
 * glibc puts at the top of the stack's block (a stack the program gave
 * too): the bound taken is that, below the real one by the descriptor
 * and the guard page (6-7 KB), so the room it gives is that much more
 * than there is. */
void ms_stack_thread_bounds(size_t stack_size)
{
	struct ms_thread *t = &ms_self;
	uintptr_t top = (uintptr_t)pthread_self();
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	if (!stack_size || top < stack_size || sp <= top - stack_size || sp > top)
		return; /* not a stack of the shape above */
	t->stack_low = top - stack_size;
	t->stack_high = top;
}

/* Less room left on the thread's own stack than a walk takes, with the
 * bound's slack: a live dump's capture, made in a signal handler whose
 * frame the kernel put below the interrupted code, crashed a thread
 * deep in a recursion on a 16 KB stack with 5 KB left (8 KB too; 10 KB
 * was enough).  The main thread's bounds are where its stack began and
 * how far it may reach (main_thread_bounds); not known (a thread started
 * before the library was loaded, or one on a stack of its own that it
 * switched to): room. */
#define OWN_STACK_ROOM ((uintptr_t)20 << 10)

/* This thread's alternate signal stack, as the kernel has it now. */
static void alt_learn(struct ms_thread *t)
{
	stack_t alt;
	int saved = errno;
	t->alt_low = t->alt_high = 0;
	if (syscall(SYS_sigaltstack, NULL, &alt) == 0 && !(alt.ss_flags & SS_DISABLE) &&
	    alt.ss_size) {
		t->alt_low = (uintptr_t)alt.ss_sp;
		t->alt_high = t->alt_low + alt.ss_size;
	}
	t->alt_known = 1;
	if (t->ts)
		t->ts->alt_size = t->alt_high - t->alt_low;
	errno = saved;
}

void ms_stack_alt_changed(void)
{
	alt_learn(&ms_self);
}

/* Whether sp is on the thread's alternate signal stack with less than a
 * walk's room left (UNWIND_ROOM: there, in a handler, cfi.c's walk gives
 * up at the signal frame and libunwind's goes on).  Its bounds are
 * compared with, not the kernel's SS_ONSTACK, which is clear once the
 * stack pointer is below them -- as it was when a capture's buffer had
 * already gone there, and the walk wrote below the stack.  Known from the
 * program's sigaltstack (interpose_signal.c), and asked of the kernel at
 * the thread's first capture, for one set before the library saw it (one
 * set with SS_AUTODISARM reads as none inside its handler, hence not
 * asked there only). */
static int on_alt(struct ms_thread *t, uintptr_t sp)
{
	if (!t->alt_known)
		alt_learn(t);
	return sp >= t->alt_low && sp <= t->alt_high;
}

static int alt_near_end(struct ms_thread *t, uintptr_t sp)
{
	return on_alt(t, sp) && sp - t->alt_low < UNWIND_ROOM;
}

/* Whether sp is on the thread's own stack, whose bounds are known. */
static int on_own(const struct ms_thread *t, uintptr_t sp)
{
	return t->stack_low && sp > t->stack_low && sp <= t->stack_high;
}

int ms_stack_near_end(void)
{
	struct ms_thread *t = &ms_self;
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	/* the alternate stack first: it may lie inside the thread's own
	 * (an array of a frame there) */
	return alt_near_end(t, sp) || (on_own(t, sp) && sp - t->stack_low < OWN_STACK_ROOM);
}

int ms_stack_switched(void)
{
	struct ms_thread *t = &ms_self;
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	return t->stack_low && !on_own(t, sp) && !on_alt(t, sp);
}

/* The walk: cfi.c's with its cache for the whole process, else (a frame
 * it does not read) libunwind's, with its cache for each thread -- only
 * in a thread that has its libunwind TLS block already: making it here
 * mallocs, and the thread may hold the allocator's own mutex (the first
 * lock of one is captured while it is held), which the malloc would wait
 * for.  Without it the stack is not captured.  (A sanitized build makes
 * no blocks, ms_stack_thread_starts: there libunwind makes its own, as
 * the test suite has always run it.) */
static int walk(uintptr_t *buf, int max)
{
	if (ms_stack_near_end())
		return 0;
	struct ms_tstate *ts = ms_self.ts;
	int n = ms_cfi_backtrace(buf, max, ts ? &ts->walk_memo : NULL);
	if (n >= 0)
		return n;
	if (!MS_SANITIZED_BUILD && unw_tls.modid && !tls_made)
		return 0;
	int saved_errno = errno;
	int cramped = little_room();
	errno = saved_errno;
	if (cramped)
		return 0;
	__atomic_add_fetch(&ms_stack_walks_by_libunwind, 1, __ATOMIC_RELAXED);
	int saved = errno;
	int cancel = ms_cancel_off(); /* libunwind read()s to probe memory */
	n = unw_backtrace_p((void **)buf, max);
	ms_cancel_restore(cancel);
	errno = saved;
	return n;
}

static __attribute__((noinline)) int capture(uintptr_t *frames, int max)
{
	uintptr_t buf[MS_MAX_FRAMES + 16];
	if (max > MS_MAX_FRAMES)
		max = MS_MAX_FRAMES;
	struct ms_thread *t = &ms_self;
	ms_async_defer(t); /* the count of captures under way (thread.h) */
	if (!ms_stack_begin()) {
		ms_async_resume(t);
		return 0;
	}
	int n = walk(buf, max + 16);
	ms_stack_end();
	ms_async_resume(t);
	/* Our own frames at the top are left out.  Further down they stay:
	 * an entry point of ours that calls the program back (quick_exit,
	 * whose handlers lock) is where the program called, and in the unit
	 * tests, linked with the library, the program's frames are ours. */
	uintptr_t lo = self_lo, hi = self_hi; /* read once: frames may alias */
	int i = 0;
	while (i < n && buf[i] >= lo && buf[i] < hi)
		i++;
	int out = n - i < max ? n - i : max;
	for (int k = 0; k < out; k++)
		frames[k] = buf[i + k];
	return out > 0 ? out : 0;
}

int ms_stack_capture(uintptr_t *frames, int max)
{
	/* decided before the walk's buffer is on the stack: on a small
	 * alternate stack that alone went below it */
	return ms_stack_near_end() ? 0 : capture(frames, max);
}
