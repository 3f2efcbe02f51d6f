/* pages.h - the library's own memory, mapped from the kernel (never the
 * program's malloc, whose locks the program may hold): reserved, not
 * committed, zero until written; for arrays filled in order, in huge
 * pages past their first part. */
#ifndef MUTEXSTAT_PAGES_H
#define MUTEXSTAT_PAGES_H

#include <stddef.h>

/* bytes of fresh memory, NULL if none could be mapped. */
void *ms_pages_map(size_t bytes);

/* The same for an array whose first `dense` bytes are handed out one
 * after another: past its first `small` bytes (a multiple of 4 KiB), in
 * the kernel's huge pages where it has them. */
void *ms_pages_map_filled_in_order(size_t bytes, size_t dense, size_t small);

#endif
