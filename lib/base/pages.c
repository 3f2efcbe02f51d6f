/* pages.c - the library's own memory; see pages.h. */
#include "base/pages.h"

#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

void *ms_pages_map(size_t bytes)
{
	int saved = errno; /* a lock path maps some (order.c) */
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	errno = saved;
	if (p == MAP_FAILED)
		return NULL;
	return p;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

void ms_pages_populate(void *p, size_t bytes)
{
	uintptr_t start = (uintptr_t)p & ~(uintptr_t)4095;
	int saved = errno;
	(void)madvise((void *)start, bytes + ((uintptr_t)p - start),
		      MADV_POPULATE_WRITE); /* older kernels: EINVAL */
	errno = saved;
}

/* Arrays filled in order -- the table's records, their first history
 * group and init stacks, the depot's arena of stacks and lock-order edges
 * -- may use the kernel's huge pages past their first part: a program
 * with a hundred thousand mutexes, or ten thousand lock orders, then
 * takes a page fault per 2 MiB of them instead of one per 4 KiB (a first
 * write costs microseconds on some virtual machines even to a page made
 * resident before), and its pages are full but the last (up to 2 MiB
 * more an array).  Not the first part, which a small program would round
 * up to a whole huge page (each caller says how much); nor what is
 * touched here and there (the table's index, where addresses hash to; the
 * later history groups, the times and the cold parts of some mutexes),
 * which huge pages would fill with memory nobody uses -- left unmarked,
 * as the program's own memory is, for the kernel's THP setting
 * ("madvise", Debian's, uses huge pages only where marked; "always"
 * anywhere).  A program that opted out with PR_SET_THP_DISABLE stays
 * out. */
#define HUGE_PAGE ((size_t)2 << 20)

void *ms_pages_map_filled_in_order(size_t bytes, size_t dense, size_t small)
{
	if (dense <= small + HUGE_PAGE)
		return ms_pages_map(bytes);
	/* mapped so that p + small begins a huge page: the kernel uses
	 * them only for a whole aligned 2 MiB that is marked (a mapping
	 * 2 MiB larger has such a place; the rest is given back, whole
	 * pages: munmap refuses an address inside one, and an array's
	 * bytes need not be pages -- (cap + 1) records) */
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t mapped = (bytes + page - 1) / page * page;
	char *room = ms_pages_map(mapped + HUGE_PAGE);
	if (!room)
		return ms_pages_map(bytes);
	uintptr_t huge = ((uintptr_t)room + small + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
	char *p = (char *)(huge - small);
	if (p > room)
		munmap(room, (size_t)(p - room));
	munmap(p + mapped, (size_t)(room + HUGE_PAGE - p));
	(void)madvise(p + small, dense - small, MADV_HUGEPAGE);
	return p;
}
