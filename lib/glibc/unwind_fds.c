/* unwind_fds.c - libunwind's pipe at a high number; see unwind_fds.h.
 *
 * libunwind 1.6 checks that a stack address can be read by writing its
 * byte into a pipe it makes at the lowest free numbers; a program that
 * closes every descriptor and opens its own files there has its data read
 * and written by our captures (libunwind's issues 274 and 291).  The
 * numbers can only be chosen where the pipe is made, so libunwind's one
 * import of pipe2 (its GOT slot, filled in by our RTLD_NOW dlopen) is
 * pointed at pipe2_high once at start-up: nothing is exported, no other
 * pipe2 caller changes.  doc/processes-and-signals.md, "Descriptors". */
#define _GNU_SOURCE
#include "glibc/unwind_fds.h"
#include "base/fds.h"

#include <elf.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef int (*pipe2_fn)(int fds[2], int flags);

static pipe2_fn real_pipe2; /* what libunwind's slot held */

static int pipe2_high(int fds[2], int flags)
{
	int rc = real_pipe2(fds, flags);
	if (rc == 0) { /* close-on-exec, as libunwind asks (O_CLOEXEC) */
		fds[0] = ms_fd_move_high(fds[0]);
		fds[1] = ms_fd_move_high(fds[1]);
	}
	return rc;
}

/* A dynamic section's address entry: the dynamic linker has made most of
 * them absolute, but not on every architecture. */
static uintptr_t dyn_addr(uintptr_t base, uintptr_t ptr)
{
	return ptr < base ? base + ptr : ptr;
}

/* Write value into slot, which may lie in the module's RELRO part (read-only
 * after relocation, with -z relro -z now). */
static void write_slot(uintptr_t *slot, uintptr_t value, uintptr_t relro_lo,
		       uintptr_t relro_hi)
{
	uintptr_t at = (uintptr_t)slot;
	if (at >= relro_lo && at < relro_hi) {
		uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
		void *start = (void *)(at & ~(page - 1));
		if (mprotect(start, page, PROT_READ | PROT_WRITE) != 0)
			return;
		__atomic_store_n(slot, value, __ATOMIC_RELEASE);
		mprotect(start, page, PROT_READ);
	} else
		__atomic_store_n(slot, value, __ATOMIC_RELEASE);
}

struct module {
	uintptr_t code;             /* an address in it */
	uintptr_t base;             /* its load bias */
	const ElfW(Dyn) *dynamic;
	uintptr_t relro_lo, relro_hi;
};

static int find_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct module *mod = arg;
	int here = 0;
	const ElfW(Dyn) *dynamic = NULL;
	uintptr_t lo = 0, hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && mod->code >= start &&
		    mod->code < start + ph->p_memsz)
			here = 1;
		else if (ph->p_type == PT_DYNAMIC)
			dynamic = (const ElfW(Dyn) *)start;
		else if (ph->p_type == PT_GNU_RELRO) {
			lo = start;
			hi = start + ph->p_memsz;
		}
	}
	if (!here || !dynamic)
		return 0;
	mod->base = info->dlpi_addr;
	mod->dynamic = dynamic;
	mod->relro_lo = lo;
	mod->relro_hi = hi;
	return 1;
}

/* In a table of relocations with addends, the slot of symbol `name` that
 * holds `value` now; NULL if none. */
static uintptr_t *find_slot(const struct module *mod, const ElfW(Rela) *rel,
			    size_t bytes, const ElfW(Sym) *symtab,
			    const char *strtab, const char *name, uintptr_t value)
{
	for (size_t i = 0; rel && i < bytes / sizeof *rel; i++) {
		size_t sym = ELF64_R_SYM(rel[i].r_info);
		if (!sym || strcmp(strtab + symtab[sym].st_name, name) != 0)
			continue;
		uintptr_t *slot = (uintptr_t *)(mod->base + rel[i].r_offset);
		if (__atomic_load_n(slot, __ATOMIC_ACQUIRE) == value)
			return slot;
	}
	return NULL;
}

void ms_unwind_fds_init(const void *unwind_code)
{
#if defined(__LP64__) && (defined(__x86_64__) || defined(__aarch64__))
	struct module mod = { (uintptr_t)unwind_code, 0, NULL, 0, 0 };
	/* the pipe2 libunwind's slot holds: the one its lookup found */
	uintptr_t target = (uintptr_t)pipe2;
	if (!unwind_code || !dl_iterate_phdr(find_module, &mod))
		return;
	const ElfW(Rela) *plt = NULL, *dyn = NULL;
	size_t plt_bytes = 0, dyn_bytes = 0;
	const ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL;
	int plt_rela = 0;
	for (const ElfW(Dyn) *d = mod.dynamic; d->d_tag != DT_NULL; d++) {
		switch (d->d_tag) {
		case DT_JMPREL:
			plt = (const ElfW(Rela) *)dyn_addr(mod.base, d->d_un.d_ptr);
			break;
		case DT_PLTRELSZ:
			plt_bytes = d->d_un.d_val;
			break;
		case DT_PLTREL:
			plt_rela = d->d_un.d_val == DT_RELA;
			break;
		case DT_RELA:
			dyn = (const ElfW(Rela) *)dyn_addr(mod.base, d->d_un.d_ptr);
			break;
		case DT_RELASZ:
			dyn_bytes = d->d_un.d_val;
			break;
		case DT_SYMTAB:
			symtab = (const ElfW(Sym) *)dyn_addr(mod.base, d->d_un.d_ptr);
			break;
		case DT_STRTAB:
			strtab = (const char *)dyn_addr(mod.base, d->d_un.d_ptr);
			break;
		default:
			break;
		}
	}
	if (!symtab || !strtab)
		return;
	/* a lazy (PLT) slot, or a GOT entry (-fno-plt) */
	uintptr_t *slot = plt_rela ? find_slot(&mod, plt, plt_bytes, symtab, strtab,
					       "pipe2", target)
				   : NULL;
	if (!slot)
		slot = find_slot(&mod, dyn, dyn_bytes, symtab, strtab, "pipe2", target);
	if (!slot)
		return;
	real_pipe2 = (pipe2_fn)target;
	write_slot(slot, (uintptr_t)pipe2_high, mod.relro_lo, mod.relro_hi);
#else
	(void)unwind_code;
#endif
}
