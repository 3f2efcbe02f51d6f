/* sym_index.c - a module's symbols sorted by address, and the symbol that
 * names an address (see sym_index.h).
 *
 * libdw (elfutils 0.188, libdwfl/dwfl_module_addrsym.c) reads the table in
 * order, the global part first and the local part only if no global symbol
 * covers the address, and keeps a symbol over the one it has when it is
 * closer, or binds more strongly (global, weak, local), or starts at the
 * same place with a smaller size.  Which symbol wins can depend on the
 * table's order, so the symbols that cover an address are taken here in
 * that order too, and the answers are libdw's own (tests/unit/test_symbols.c
 * compares them on every symbol of the modules it has loaded). */
#include "stacks/sym_index.h"

#include <elf.h>
#include <stdlib.h>

/* One part of the table, sorted by address, then by order. */
struct part {
	struct ms_sym *syms;
	uint64_t *reach; /* reach[i]: the highest end of syms[0..i] */
	size_t n;
};

struct ms_sym_index {
	struct part global, local;
	struct ms_sym *syms; /* both parts */
	uint64_t *reach;
};

static int by_address(const void *a, const void *b)
{
	const struct ms_sym *x = a, *y = b;
	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static void part_make(struct part *p, struct ms_sym *syms, uint64_t *reach,
		      size_t n)
{
	p->syms = syms;
	p->reach = reach;
	p->n = n;
	qsort(syms, n, sizeof *syms, by_address);
	uint64_t high = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t end = syms[i].value + syms[i].size;
		if (end > high)
			high = end;
		reach[i] = high;
	}
}

struct ms_sym_index *ms_sym_index_make(struct ms_sym *syms, size_t n,
				       uint32_t first_global)
{
	struct ms_sym_index *ix = malloc(sizeof *ix);
	uint64_t *reach = malloc((n ? n : 1) * sizeof *reach);
	if (!ix || !reach) {
		free(ix);
		free(reach);
		free(syms);
		return NULL;
	}
	/* the local part to the front (a table with no local part: all
	 * global, whatever their binding, as libdw reads it) */
	size_t locals = 0;
	for (size_t i = 0; i < n; i++)
		if (syms[i].order < first_global) {
			struct ms_sym s = syms[locals];
			syms[locals++] = syms[i];
			syms[i] = s;
		}
	part_make(&ix->local, syms, reach, locals);
	part_make(&ix->global, syms + locals, reach + locals, n - locals);
	ix->syms = syms;
	ix->reach = reach;
	return ix;
}

void ms_sym_index_free(struct ms_sym_index *ix)
{
	if (!ix)
		return;
	free(ix->syms);
	free(ix->reach);
	free(ix);
}

/* How many of p's symbols start at or below addr. */
static size_t starting_by(const struct part *p, uint64_t addr)
{
	size_t lo = 0, hi = p->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->syms[mid].value <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The first of syms[0..n) whose reach passes addr: none before it covers
 * addr. */
static size_t first_reaching(const struct part *p, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->reach[mid] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* GELF_ST_BIND ranked as libdw ranks it: higher is preferred. */
static int bind_rank(const struct ms_sym *s)
{
	switch (s->bind) {
	case STB_GLOBAL:
		return 3;
	case STB_WEAK:
		return 2;
	case STB_LOCAL:
		return 1;
	default:
		return 0;
	}
}

/* Whether libdw takes s, a sized symbol covering the address and after
 * have in the table, over have. */
static int takes_over(const struct ms_sym *have, const struct ms_sym *s)
{
	if (!have || have->value < s->value || bind_rank(have) < bind_rank(s))
		return 1;
	return have->value == s->value && have->size > s->size &&
	       bind_rank(have) <= bind_rank(s);
}

/* What one part's read leaves: the sized symbol chosen, and the highest
 * end of every symbol at or below the address (libdw's min_label). */
struct pick {
	const struct ms_sym *sized;
	uint64_t reach;
};

static void read_part(const struct part *p, uint64_t addr, struct pick *k)
{
	size_t n = starting_by(p, addr);
	if (!n)
		return;
	if (p->reach[n - 1] > k->reach)
		k->reach = p->reach[n - 1];
	/* The symbols covering addr, in table order: a few (aliases, a
	 * function and the labels in it), so each round looks for the next. */
	size_t from = first_reaching(p, n, addr);
	const struct ms_sym *last = NULL;
	for (;;) {
		const struct ms_sym *next = NULL;
		for (size_t i = from; i < n; i++) {
			const struct ms_sym *s = &p->syms[i];
			if (s->size && addr - s->value < s->size &&
			    (!last || s->order > last->order) &&
			    (!next || s->order < next->order))
				next = s;
		}
		if (!next)
			break;
		if (takes_over(k->sized, next))
			k->sized = next;
		last = next;
	}
}

/* The label libdw falls back on: of the labels in addr's section that
 * start where every symbol below addr ends (at), the last in the table. */
static const struct ms_sym *label_at(const struct part *p, uint64_t at,
				     uint64_t addr,
				     ms_sym_same_section_fn *same_section,
				     void *arg)
{
	const struct ms_sym *found = NULL;
	for (size_t i = starting_by(p, at); i > 0 && p->syms[i - 1].value == at; i--) {
		const struct ms_sym *s = &p->syms[i - 1];
		if (!s->size && (!found || s->order > found->order) &&
		    same_section(s, addr, arg))
			found = s;
	}
	return found;
}

const struct ms_sym *ms_sym_index_find(const struct ms_sym_index *ix,
				       uint64_t addr,
				       ms_sym_same_section_fn *same_section,
				       void *arg)
{
	struct pick k = { NULL, 0 };
	read_part(&ix->global, addr, &k);
	if (k.sized)
		return k.sized;
	/* a global label at addr itself: libdw reads no further */
	const struct ms_sym *label = label_at(&ix->global, k.reach, addr,
					      same_section, arg);
	if (label && label->value == addr)
		return label;
	read_part(&ix->local, addr, &k);
	if (k.sized)
		return k.sized;
	const struct ms_sym *local = label_at(&ix->local, k.reach, addr,
					      same_section, arg);
	if (local)
		return local;
	return label && label->value == k.reach ? label : NULL;
}
