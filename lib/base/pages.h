/* pages.h - the library's own memory, mapped from the kernel (never the
 * program's malloc, whose locks the program may hold): reserved, not
 * committed, zero until written; for arrays filled in order, in huge
 * pages past their first part. */
#ifndef MUTEXSTAT_PAGES_H
#define MUTEXSTAT_PAGES_H

#include <stddef.h>

/* bytes of fresh memory, NULL if none could be mapped; errno is left as
 * it was. */
void *ms_pages_map(size_t bytes);

/* The same for an array whose first `dense` bytes are handed out one
 * after another: past its first `small` bytes (a multiple of 4 KiB), in
 * the kernel's huge pages where it has them. */
void *ms_pages_map_filled_in_order(size_t bytes, size_t dense, size_t small);

/* Make the pages of [p, p + bytes) resident now, in one call, rather than
 * by a page fault at each one's first write: on some virtual machines a
 * fault costs ten microseconds, the call one a page.  p need not begin a
 * page (the page it begins in is made resident too).  errno is left as
 * it was; a kernel before 5.14 does nothing (the faults come as before). */
void ms_pages_populate(void *p, size_t bytes);

#endif
