/* sym_index.h - one module's symbols sorted by address, and the symbol that
 * names a code address, found by binary search: the one elfutils'
 * dwfl_module_addrinfo names, which reads the module's whole symbol table
 * again for every address (2-3 ms an address in libjvm.so's 58,000
 * symbols: most of a `java -version` run's exit report).
 *
 * It knows nothing of libdw: symbols.c reads the table once a session and
 * hands its symbols over.  Report time only (it allocates). */
#ifndef MUTEXSTAT_SYM_INDEX_H
#define MUTEXSTAT_SYM_INDEX_H

#include <stddef.h>
#include <stdint.h>

/* A symbol libdw's search looks at: named, defined, and not a section, a
 * source file or a thread-local variable.  16 bytes: libjvm.so's 58,000
 * make an index of 1.4 MB, and the pages an index first touches are most
 * of what it costs.  Its name and section are the table's, by order. */
struct ms_sym {
	uint64_t value;     /* its address in the process */
	uint32_t size;      /* 0: a label, as hand-written assembly has */
	uint32_t order : 28; /* its index in the table: libdw's ties go by it */
	uint32_t bind : 4;  /* STB_LOCAL, STB_GLOBAL, STB_WEAK, ... */
};

/* A symbol this large or larger (a 5 GiB array in .bss) has this size in
 * struct ms_sym and its own in a struct ms_sym_big.  A table with more
 * symbols gets no index. */
#define MS_SYM_SIZE_BIG UINT32_MAX
#define MS_SYM_ORDER_MAX ((1u << 28) - 1)

/* The size of a symbol of size MS_SYM_SIZE_BIG, by its order: a few in a
 * table, if any, so they cost struct ms_sym nothing. */
struct ms_sym_big {
	uint32_t order;
	uint64_t size;
};

struct ms_sym_index;

/* An index of syms[0..n), given in table order (order ascending), which
 * it takes over (freed with it, or at once if malloc fails: NULL), as it
 * does big[0..nbig), the sizes of its symbols of size MS_SYM_SIZE_BIG in
 * table order (NULL if none).  first_global: the table's first global
 * symbol, as dwfl_module_getsymtab_first_global says (0: the table has no
 * local part). */
struct ms_sym_index *ms_sym_index_make(struct ms_sym *syms, size_t n,
				       uint32_t first_global,
				       struct ms_sym_big *big, size_t nbig);
void ms_sym_index_free(struct ms_sym_index *ix);

/* Whether addr lies in the section of label, the symbol of that order in
 * the table (libdw names an address after a label of its own section
 * only). */
typedef int ms_sym_same_section_fn(const struct ms_sym *label, uint64_t addr,
				   void *arg);

/* The symbol dwfl_module_addrinfo names addr after, or NULL: the nearest
 * sized symbol below addr that covers it, a global one before any local
 * one (libdw looks at the local part only when no global symbol covers
 * addr), of aliases the global one before a weak one before a local one
 * and then the first in the table; failing that, a label at addr or past
 * every symbol below it, in addr's section. */
const struct ms_sym *ms_sym_index_find(const struct ms_sym_index *ix,
				       uint64_t addr,
				       ms_sym_same_section_fn *same_section,
				       void *arg);

/* How many of the index's symbols start at addr (aliases: more than one). */
size_t ms_sym_index_starting_at(const struct ms_sym_index *ix, uint64_t addr);

#endif
