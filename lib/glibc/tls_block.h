/* tls_block.h - the thread-local blocks of the libraries the library
 * dlopens (libunwind, libdw, libelf), made only when malloc can give
 * them.  glibc makes a dlopened library's block with malloc at a thread's
 * first use of it, and when that malloc fails it ends the process
 * ("cannot allocate memory for thread-local data: ABORT", status 127):
 * under the library, a program whose malloc failed at the wrong moment
 * (a live dump's libdw, a new thread's libunwind block) was ended. */
#ifndef MUTEXSTAT_TLS_BLOCK_H
#define MUTEXSTAT_TLS_BLOCK_H

#include <stddef.h>

struct ms_tls_module {
	size_t modid; /* 0: no thread-local storage */
	size_t bytes; /* what glibc's malloc asks for the block */
};

/* The module of dlopen handle h.  Takes the dynamic loader's lock: call
 * it where the library loads the module, not on a thread's way. */
void ms_tls_module_of(void *h, struct ms_tls_module *m);
/* The same for the loaded module whose file name starts with base
 * ("libelf.so."): a dependency, with no handle of ours. */
void ms_tls_module_named(const char *base, struct ms_tls_module *m);

/* Make the calling thread's blocks of the n modules (those it has not yet
 * made), each from a chunk malloc just gave and took back, so glibc's
 * malloc of the same size is answered from it.  0, or -1 if malloc could
 * not give one: then the modules must not be used on this thread. */
int ms_tls_blocks_make(const struct ms_tls_module *m, unsigned n);

#endif
