/* stack.h - capturing call stacks with libunwind.
 *
 * libunwind is opened at start-up with dlopen(RTLD_LOCAL): its symbols --
 * among them the GCC unwinder ABI (_Unwind_RaiseException, ...) that C++
 * exceptions and pthread_exit use -- stay private to us and never enter the
 * global scope of the program (see doc/report.md, "Call stacks").  Only the
 * contended path, first uses and the report ever capture. */
#ifndef MUTEXSTAT_STACK_H
#define MUTEXSTAT_STACK_H

#include <stddef.h>
#include <stdint.h>

#define MS_MAX_FRAMES 64

/* Open libunwind privately; returns 0, or -1 (stacks unavailable; the
 * report says so) */
int ms_stack_init(void);
int ms_stack_available(void);
/* Why not, once ms_stack_init failed: the loader's reason for libunwind
 * ("No such file or directory", "Too many open files"). */
const char *ms_stack_unavailable_why(void);

/* Whether a code address is libunwind's: mutexes it locks (at thread exit,
 * outside any capture) are its business, not the program's. */
int ms_stack_helper_code(uintptr_t addr);

/* libunwind keeps a cache in thread-local storage, and being dlopen'ed,
 * its block is allocated with malloc on a thread's first capture -- which
 * may be a mutex call from inside the program's allocator (jemalloc locks
 * mutexes in malloc_usable_size on a new thread), re-entering it half-way
 * and crashing it.  ms_stack_thread_ready allocates the calling thread's
 * block now, where malloc is safe: at start-up and before a new thread
 * runs the program's code (interpose_process.c).  Returns nonzero if
 * there is such a block to allocate. */
int ms_stack_thread_ready(void);

/* The same for a new thread before it runs the program's code -- unless
 * an address-space limit (ulimit -v) leaves little room: that malloc is
 * the thread's first, and glibc gives a thread its own arena at its first,
 * 64 MiB of address space, which a program whose threads never allocate
 * would not have spent (a thread it starts later then found no room for
 * its stack).  Threads past the arena budget below take no call stacks;
 * one line says so. */
void ms_stack_thread_starts(void);
/* A new thread, before the program's code, with the stack size its
 * pthread_create was given (0: not known): where its stack ends, so that a
 * capture near that end is not made (a live dump's, in a signal handler,
 * on top of a deep recursion: the walk needs some 10 KB). */
void ms_stack_thread_bounds(size_t stack_size);
/* Whether this thread is that near its stack's end now, or less than
 * 16 KB above the end of its alternate signal stack, on it (no capture is
 * made there). */
int ms_stack_near_end(void);
/* Whether this thread runs on a stack it switched to (makecontext: a
 * coroutine's), neither its own, whose bounds are known, nor its
 * alternate signal stack: how much room is left there is not known. */
int ms_stack_switched(void);
/* The program set or removed this thread's alternate signal stack
 * (sigaltstack): its bounds, for ms_stack_near_end. */
void ms_stack_alt_changed(void);
/* The malloc arenas (ms_stack_arena_bytes each) the library's share of an
 * address-space limit leaves room for, set at start-up (init.c): only
 * that many threads the program starts take a libunwind block, unless
 * that is glibc's most (8 per CPU, or MALLOC_ARENA_MAX), past which no
 * new arena is made.  Without a limit every thread takes one. */
void ms_stack_set_arena_budget(uint64_t arenas);
uint64_t ms_stack_arena_max(void);
#define MS_STACK_ARENA_BYTES (64ull << 20) /* glibc's HEAP_MAX_SIZE */

/* Whether a code address is ours (a thread's start, interpose_process.c:
 * the bottom of a stack). */
int ms_stack_own_code(uintptr_t addr);
/* Where the library's exit() goes on into glibc's (runtime/init.c sets
 * it): a frame there is no call of the program's into a lock, though
 * ours, but exit() running the program's exit handlers.  0 until then.
 * Its call of glibc's exit comes within 256 bytes after (23 in a -O2
 * build, 123 in a sanitized one). */
extern uintptr_t ms_stack_exit_entry;
/* Whether it is the C library's or the dynamic linker's (libc.so*,
 * ld-linux*: where the process and its threads start), known from
 * start-up on without a call into the dynamic linker. */
int ms_stack_c_library_code(uintptr_t addr);
/* Whether a return address is in the program's _start, known by the
 * entry point the kernel gave it (AT_ENTRY), symbols or none: the frame
 * that ends the main thread's stack, even in a stripped program. */
int ms_stack_program_start(uintptr_t addr);

/* The calling thread's return addresses, innermost first, without the
 * library's own frames, at most `max` (<= MS_MAX_FRAMES).  Returns the
 * number of frames, 0 if capture is unavailable. */
int ms_stack_capture(uintptr_t *frames, int max);
/* Captures that cfi.c's walker left to libunwind (a frame it does not
 * read): a thread's first such capture maps libunwind's cache. */
extern uint64_t ms_stack_walks_by_libunwind;

/* Around a walk of a stack with libunwind (here, and stack_blocked.c):
 * begin returns 0 if no walk may start (no libunwind, a fork on its way or
 * taken during one); after a 1, end when the walk is over. */
int ms_stack_begin(void);
void ms_stack_end(void);
/* Around a report, which walks the loaded modules too (dladdr,
 * dl_iterate_phdr, libdw's reading of the maps) and so holds the dynamic
 * linker's locks at moments: a fork child inheriting one held would wait
 * for it for ever at its first stack capture (libunwind blocks every
 * signal there: not even its own alarm() ends it).  So a fork waits for
 * a report under way as for a capture (50 ms at most), and a report does
 * not start while a fork is on its way -- it waits for it, never skipped.
 * Nested reports count once each. */
void ms_stack_report_begin(void);
#define ms_stack_report_end ms_stack_end
/* Around glibc's pthread_create (interpose_process.c), much the same: a
 * fork waits for a creation under way (1 s at most), and none starts
 * during a fork.  The library gives every thread a dynamic TLS block
 * (libunwind's), which glibc frees when it hands a cached stack to a new
 * thread; a fork while another thread was between those frees and
 * clearing the stack's list of blocks gave a child that freed them again
 * at its own pthread_create: "double free or corruption", SIGABRT (4 runs
 * of 20 of a torture of forks beside thread creations). */
void ms_stack_create_begin(void);
void ms_stack_create_end(void);

/* A function of the privately opened libunwind, NULL if none. */
void *ms_stack_symbol(const char *name);

/* Around fork (fork.c): prepare waits for the captures under way on other
 * threads (at most 50 ms) and lets none start until parent or child; a
 * child forked while one was still under way takes no stacks, since
 * libunwind's locks may be held there for ever, nor does one forked while
 * another thread held the dynamic linker's lock (loader_lock.h), which
 * libunwind takes.  ms_stack_off_since_fork says which, for the report:
 * 0 (stacks are taken), MS_OFF_CAPTURE or MS_OFF_LOADER. */
#define MS_OFF_CAPTURE 1
#define MS_OFF_LOADER 2
void ms_stack_fork_prepare(void);
void ms_stack_fork_parent(void);
void ms_stack_fork_child(void);
int ms_stack_off_since_fork(void);

#endif
