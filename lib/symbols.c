/* symbols.c - naming code addresses with dladdr: the nearest exported symbol
 * and the module.  Functions the module does not export show as an offset in
 * the module (addr2line -e module offset tells the line).  C++ names are
 * demangled when the program has libstdc++ loaded. */
#define _GNU_SOURCE
#include "symbols.h"
#include "fmt.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

const char *ms_symbolize(uintptr_t addr, char *out, size_t cap)
{
	struct ms_fmt f;
	ms_fmt_init(&f, out, cap, -1);
	Dl_info info;
	if (!addr) {
		ms_fmt(&f, "?");
		return ms_fmt_str(&f);
	}
	if (!dladdr((void *)addr, &info) || !info.dli_fname) {
		ms_fmt(&f, "%p", (void *)addr);
		return ms_fmt_str(&f);
	}
	const char *module = info.dli_fname[0] ? base_name(info.dli_fname)
					       : program_invocation_short_name;
	if (info.dli_sname && info.dli_saddr) {
		static demangle_fn demangle;
		static int looked;
		char *plain = NULL;
		if (!looked) {
			demangle = (demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
			looked = 1;
		}
		if (demangle && info.dli_sname[0] == '_' && info.dli_sname[1] == 'Z') {
			int status = -1;
			plain = demangle(info.dli_sname, NULL, NULL, &status);
			if (status != 0)
				plain = NULL;
		}
		ms_fmt(&f, "%s+0x%lx (%s)", plain ? plain : info.dli_sname,
		       (unsigned long)(addr - (uintptr_t)info.dli_saddr), module);
		free(plain);
	} else
		ms_fmt(&f, "%s+0x%lx", module,
		       (unsigned long)(addr - (uintptr_t)info.dli_fbase));
	return ms_fmt_str(&f);
}
