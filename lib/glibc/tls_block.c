/* tls_block.c - see tls_block.h. */
#define _GNU_SOURCE
#include "glibc/tls_block.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

/* The loader's: the calling thread's block of a TLS module, allocated if
 * it is not yet (the x86-64 and AArch64 ABI's argument). */
struct tls_index {
	unsigned long module, offset;
};
/* the loader's own name, which we call, not define */
// NOLINTNEXTLINE(bugprone-reserved-identifier,cert-dcl37-c)
extern void *__tls_get_addr(struct tls_index *ti);

struct wanted {
	struct ms_tls_module *m;
	const char *base; /* by name: the file's name starts so; or by modid */
};

static int find_tls(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct wanted *w = arg;
	struct ms_tls_module *m = w->m;
	if (w->base) {
		const char *slash = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
		if (!slash || strncmp(slash + 1, w->base, strlen(w->base)) != 0 ||
		    !info->dlpi_tls_modid)
			return 0;
		m->modid = info->dlpi_tls_modid;
	} else if (info->dlpi_tls_modid != m->modid)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_TLS)
			continue;
		/* glibc's allocate_dtv_entry: malloc(size), or size +
		 * alignment where malloc's alignment is not enough */
		m->bytes = ph->p_memsz;
		if (ph->p_align > alignof(max_align_t))
			m->bytes += ph->p_align;
		return 1;
	}
	return 0;
}

void ms_tls_module_of(void *h, struct ms_tls_module *m)
{
	int saved = errno;
	m->modid = 0;
	m->bytes = 0;
	size_t modid = 0;
	if (h && dlinfo(h, RTLD_DI_TLS_MODID, &modid) == 0 && modid) {
		m->modid = modid;
		struct wanted w = { m, NULL };
		dl_iterate_phdr(find_tls, &w);
	}
	errno = saved;
}

void ms_tls_module_named(const char *base, struct ms_tls_module *m)
{
	int saved = errno;
	m->modid = 0;
	m->bytes = 0;
	struct wanted w = { m, base };
	dl_iterate_phdr(find_tls, &w);
	errno = saved;
}

int ms_tls_blocks_make(const struct ms_tls_module *m, unsigned n)
{
	int saved = errno;
	void *probe[4] = { NULL };
	if (n > 4)
		n = 4;
	for (unsigned i = 0; i < n; i++)
		if (m[i].modid && !(probe[i] = malloc(m[i].bytes ? m[i].bytes : 1))) {
			for (unsigned k = 0; k < i; k++)
				free(probe[k]);
			errno = saved;
			return -1;
		}
	for (unsigned i = n; i-- > 0;)
		free(probe[i]);
	for (unsigned i = 0; i < n; i++)
		if (m[i].modid) {
			struct tls_index ti = { m[i].modid, 0 };
			__tls_get_addr(&ti);
		}
	errno = saved;
	return 0;
}
