/* cfi.h - call stacks walked with the program's own unwind tables (the
 * DWARF call frame information in .eh_frame), x86-64.
 *
 * libunwind's fast walk keeps a cache of frame rules per thread, dear in
 * memory and in each thread's first capture (doc/internals.md, "The
 * walker").  This walker keeps one cache for the process: a return
 * address's rule is read from .eh_frame once, then found by every thread.
 * It reads only the common rules (CFA = rsp or rbp + offset, return
 * address at CFA-8, rbp kept or saved beside it); any other frame -- a
 * signal frame, code without unwind tables, a DWARF expression -- makes it
 * give up, and the caller walks the whole stack with libunwind. */
#ifndef MUTEXSTAT_CFI_H
#define MUTEXSTAT_CFI_H

#include <stdint.h>

struct ms_walk_memo;

/* The return addresses of the calling thread, innermost first (the first
 * is the caller's: this function's own return address), at most max.
 * Returns how many, or -1 if a frame needs libunwind (or this walker is
 * not built: not x86-64, or a C library without _dl_find_object).  memo:
 * the thread's memory of its walk before (core/thread.h), which this one
 * reads and rewrites unless another walk holds it; NULL: none. */
int ms_cfi_backtrace(uintptr_t *frames, int max, struct ms_walk_memo *memo);

/* The stack's top, which bounds every read of the walk: for a new thread
 * as it starts (interpose_process.c's start function); the main thread's
 * is read at start-up (ms_cfi_start, on whichever thread) and taken at
 * its first walk, where another thread the library did not see start
 * takes glibc's descriptor of it, as a start does. */
void ms_cfi_thread_starts(void);
void ms_cfi_start(void);
/* Set it (the tests). */
void ms_cfi_stack_top(uintptr_t top);

/* Whether this build has the walker (for the tests). */
int ms_cfi_available(void);

/* Rules computed and cache entries written, for the tests: a capture at a
 * known stack computes none. */
uint64_t ms_cfi_rules_computed(void);

#endif
