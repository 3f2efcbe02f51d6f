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
#include <string.h>

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
	struct ms_sym_big *big; /* by order */
	size_t nbig;
};

/* s's size, its own where it is too large for struct ms_sym. */
static uint64_t size_of(const struct ms_sym_index *ix, const struct ms_sym *s)
{
	if (s->size != MS_SYM_SIZE_BIG)
		return s->size;
	size_t lo = 0, hi = ix->nbig;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ix->big[mid].order < s->order)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ix->nbig && ix->big[lo].order == s->order ? ix->big[lo].size
							       : MS_SYM_SIZE_BIG;
}

/* The digits of the sort: the address's bytes, then its part. */
#define DIGITS 9

static unsigned digit(const struct ms_sym *s, int d, uint32_t first_global)
{
	return d < 8 ? (s->value >> (8 * d)) & 0xff : s->order >= first_global;
}

/* Sorts syms[0..n), which come in table order, into the local part then
 * the global part, each by address and then table order: a stable radix
 * sort a byte at a time through spare[0..n), passing over the digits
 * every symbol shares (a module's high bytes, mostly four of the eight).
 * Returns the array that holds the result.  qsort of 40-byte symbols was
 * most of what a `java -version` exit report cost (libjvm's 58,000). */
static struct ms_sym *sort_symbols(struct ms_sym *syms, struct ms_sym *spare,
				   size_t n, uint32_t first_global,
				   size_t (*counts)[256])
{
	memset(counts, 0, DIGITS * sizeof *counts);
	for (size_t i = 0; i < n; i++)
		for (int d = 0; d < DIGITS; d++)
			counts[d][digit(&syms[i], d, first_global)]++;
	struct ms_sym *from = syms, *to = spare;
	for (int d = 0; d < DIGITS && n; d++) {
		size_t *count = counts[d];
		if (count[digit(&syms[0], d, first_global)] == n)
			continue; /* one value of this digit: order unchanged */
		size_t at = 0;
		for (int v = 0; v < 256; v++) {
			size_t c = count[v];
			count[v] = at;
			at += c;
		}
		for (size_t i = 0; i < n; i++)
			to[count[digit(&from[i], d, first_global)]++] = from[i];
		struct ms_sym *t = from;
		from = to;
		to = t;
	}
	return from;
}

static void part_make(const struct ms_sym_index *ix, struct part *p,
		      struct ms_sym *syms, uint64_t *reach, size_t n)
{
	p->syms = syms;
	p->reach = reach;
	p->n = n;
	uint64_t high = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t end = syms[i].value + size_of(ix, &syms[i]);
		if (end > high)
			high = end;
		reach[i] = high;
	}
}

struct ms_sym_index *ms_sym_index_make(struct ms_sym *syms, size_t n,
				       uint32_t first_global,
				       struct ms_sym_big *big, size_t nbig)
{
	size_t room = n ? n : 1;
	struct ms_sym_index *ix = malloc(sizeof *ix);
	uint64_t *reach = malloc(room * sizeof *reach);
	struct ms_sym *spare = malloc(room * sizeof *spare);
	size_t (*counts)[256] = malloc(DIGITS * sizeof *counts);
	if (!ix || !reach || !spare || !counts) {
		free(ix);
		free(reach);
		free(spare);
		free(counts);
		free(syms);
		free(big);
		return NULL;
	}
	/* (a table with no local part: all global, whatever their binding,
	 * as libdw reads it) */
	struct ms_sym *sorted = sort_symbols(syms, spare, n, first_global,
					     counts);
	free(sorted == syms ? spare : syms);
	free(counts);
	size_t locals = 0;
	while (locals < n && sorted[locals].order < first_global)
		locals++;
	ix->big = big;
	ix->nbig = big ? nbig : 0;
	part_make(ix, &ix->local, sorted, reach, locals);
	part_make(ix, &ix->global, sorted + locals, reach + locals, n - locals);
	ix->syms = sorted;
	ix->reach = reach;
	return ix;
}

void ms_sym_index_free(struct ms_sym_index *ix)
{
	if (!ix)
		return;
	free(ix->syms);
	free(ix->reach);
	free(ix->big);
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

size_t ms_sym_index_starting_at(const struct ms_sym_index *ix, uint64_t addr)
{
	size_t n = 0;
	const struct part *parts[2] = { &ix->global, &ix->local };
	for (int i = 0; i < 2; i++)
		n += starting_by(parts[i], addr) - (addr ? starting_by(parts[i], addr - 1) : 0);
	return n;
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
static int takes_over(const struct ms_sym_index *ix, const struct ms_sym *have,
		      const struct ms_sym *s)
{
	if (!have || have->value < s->value || bind_rank(have) < bind_rank(s))
		return 1;
	return have->value == s->value && size_of(ix, have) > size_of(ix, s) &&
	       bind_rank(have) <= bind_rank(s);
}

/* What one part's read leaves: the sized symbol chosen, and the highest
 * end of every symbol at or below the address (libdw's min_label). */
struct pick {
	const struct ms_sym *sized;
	uint64_t reach;
};

static void read_part(const struct ms_sym_index *ix, const struct part *p,
		      uint64_t addr, struct pick *k)
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
			if (s->size && addr - s->value < size_of(ix, s) &&
			    (!last || s->order > last->order) &&
			    (!next || s->order < next->order))
				next = s;
		}
		if (!next)
			break;
		if (takes_over(ix, k->sized, next))
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
	read_part(ix, &ix->global, addr, &k);
	if (k.sized)
		return k.sized;
	/* a global label at addr itself: libdw reads no further */
	const struct ms_sym *label = label_at(&ix->global, k.reach, addr,
					      same_section, arg);
	if (label && label->value == addr)
		return label;
	read_part(ix, &ix->local, addr, &k);
	if (k.sized)
		return k.sized;
	const struct ms_sym *local = label_at(&ix->local, k.reach, addr,
					      same_section, arg);
	if (local)
		return local;
	return label && label->value == k.reach ? label : NULL;
}
