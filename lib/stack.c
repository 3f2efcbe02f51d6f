/* stack.c - stack capture with a privately opened libunwind; see stack.h. */
#define _GNU_SOURCE
#include "stack.h"
#include "internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>

typedef int (*backtrace_fn)(void **buffer, int size);

static backtrace_fn unw_backtrace_p;
static uintptr_t self_lo, self_hi; /* our own code, trimmed from stacks */
static uintptr_t unw_lo, unw_hi;   /* libunwind's code */

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

int ms_stack_init(void)
{
	int saved = errno;
	struct range self = { (uintptr_t)ms_stack_init, 0, 0 };
	dl_iterate_phdr(find_segment, &self);
	self_lo = self.lo;
	self_hi = self.hi;
	/* RTLD_LOCAL keeps libunwind's symbols -- _Unwind_RaiseException and
	 * the rest of the GCC unwinder ABI among them -- out of the program's
	 * global scope; RTLD_NOW so no lazy binding happens later on a lock
	 * path. */
	int cancel = ms_cancel_off(); /* dlopen opens files */
	void *h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
	ms_cancel_restore(cancel);
	if (h)
		unw_backtrace_p = (backtrace_fn)dlsym(h, "unw_backtrace");
	if (unw_backtrace_p) {
		struct range unw = { (uintptr_t)unw_backtrace_p, 0, 0 };
		dl_iterate_phdr(find_segment, &unw);
		unw_lo = unw.lo;
		unw_hi = unw.hi;
	}
	errno = saved;
	/* cppcheck-suppress resourceLeak ; h stays open for the life of the
	 * process: unw_backtrace_p points into it */
	return unw_backtrace_p ? 0 : -1;
}

int ms_stack_helper_code(uintptr_t addr)
{
	return addr >= unw_lo && addr < unw_hi;
}

int ms_stack_available(void)
{
	return unw_backtrace_p != NULL;
}

int ms_stack_capture(uintptr_t *frames, int max)
{
	void *buf[MS_MAX_FRAMES + 16];
	if (!unw_backtrace_p)
		return 0;
	if (max > MS_MAX_FRAMES)
		max = MS_MAX_FRAMES;
	int saved = errno;
	int cancel = ms_cancel_off(); /* libunwind read()s to probe memory */
	int n = unw_backtrace_p(buf, max + 16);
	ms_cancel_restore(cancel);
	errno = saved;
	int i = 0, out = 0;
	while (i < n && (uintptr_t)buf[i] >= self_lo && (uintptr_t)buf[i] < self_hi)
		i++; /* our own frames */
	for (; i < n && out < max; i++)
		frames[out++] = (uintptr_t)buf[i];
	return out;
}
