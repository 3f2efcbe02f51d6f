/* cfi.h - call stacks walked with the program's own unwind tables (the
 * DWARF call frame information each object carries in .eh_frame), x86-64.
 *
 * Why not libunwind's unw_backtrace alone: its fast path keeps a cache of
 * frame rules per thread, 256 KiB made resident on each thread's first
 * capture (16,384 entries, each set at creation) and kept until the thread
 * ends.  A server whose 500 threads have each waited once for a mutex paid
 * 128 MB for it, and each thread's first capture some 1.5 ms.  This walker
 * keeps one cache for the whole process: the rule for a return address
 * (where the caller's frame is, where its saved rbp is) is read from the
 * object's .eh_frame once, then found by every thread.
 *
 * It reads only the common rules: the frame's CFA is rsp or rbp plus an
 * offset, the return address is at CFA-8, rbp is kept or saved beside it.
 * A frame it cannot read that way -- a signal frame, code with no unwind
 * table (JIT code), a rule given as a DWARF expression -- makes it give up,
 * and the caller walks the whole stack with libunwind instead. */
#ifndef MUTEXSTAT_CFI_H
#define MUTEXSTAT_CFI_H

#include <stdint.h>

/* The return addresses of the calling thread, innermost first (the first
 * is the caller's: this function's own return address), at most max.
 * Returns how many, or -1 if a frame needs libunwind (or this walker is
 * not built: not x86-64, or a C library without _dl_find_object). */
int ms_cfi_backtrace(uintptr_t *frames, int max);

/* The stack's top, which bounds every read of the walk: for a new thread
 * as it starts (interpose_process.c's start function), for the main thread
 * at start-up.  A thread without it has its stacks walked by libunwind. */
void ms_cfi_thread_starts(void);
void ms_cfi_main_thread(void);
/* Set it (the tests). */
void ms_cfi_stack_top(uintptr_t top);

/* Whether this build has the walker (for the tests). */
int ms_cfi_available(void);

/* Rules computed and cache entries written, for the tests: a capture at a
 * known stack computes none. */
uint64_t ms_cfi_rules_computed(void);

#endif
