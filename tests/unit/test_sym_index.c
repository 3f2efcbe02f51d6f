/* test_sym_index.c - naming code addresses by a module's sorted symbols
 * (lib/stacks/sym_index.c): the rules on made-up tables, and the names of
 * real code the same as libdw's own search gives (ms_symbols_by_scan), for
 * a static function, a C++ function, an address no symbol covers, and every
 * few bytes of stretches of this program, libc and libstdc++. */
#define _GNU_SOURCE
#include "suites.h"

#include "stacks/sym_index.h"
#include "stacks/symbols.h"

#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- made-up tables ----------------------------------------------------- */

static int any_section(const struct ms_sym *label, uint64_t addr, void *arg)
{
	(void)label;
	(void)addr;
	return arg == NULL;
}

/* A symbol of a made-up table, with its name (a real table's is found by
 * its order). */
struct named {
	struct ms_sym sym;
	const char *name;
};

static struct named sym(uint64_t value, uint32_t size, const char *name,
			uint32_t order, unsigned char bind)
{
	return (struct named){ .sym = { .value = value, .size = size,
					.order = order, .bind = bind },
			       .name = name };
}

/* The name find gives addr in a table of n symbols (copied: the index
 * takes its array over), "" for none. */
static const char *name_in(const struct named *table, size_t n,
			   uint32_t first_global, uint64_t addr, void *arg)
{
	static char name[64];
	struct ms_sym *copy = malloc((n ? n : 1) * sizeof *copy);
	ck_assert_ptr_nonnull(copy);
	for (size_t i = 0; i < n; i++)
		copy[i] = table[i].sym;
	struct ms_sym_index *ix = ms_sym_index_make(copy, n, first_global, NULL, 0);
	ck_assert_ptr_nonnull(ix);
	const struct ms_sym *s = ms_sym_index_find(ix, addr, any_section, arg);
	strcpy(name, "");
	for (size_t i = 0; s && i < n; i++)
		if (table[i].sym.order == s->order)
			strcpy(name, table[i].name);
	ck_assert(!s || name[0]);
	ms_sym_index_free(ix);
	return name;
}

START_TEST(test_sym_index_nearest_covering_symbol)
{
	const struct named t[] = {
		sym(0x1000, 0x100, "first", 1, STB_GLOBAL),
		sym(0x1200, 0x80, "second", 2, STB_GLOBAL),
	};
	ck_assert_str_eq(name_in(t, 2, 0, 0x1000, NULL), "first");
	ck_assert_str_eq(name_in(t, 2, 0, 0x10ff, NULL), "first");
	ck_assert_str_eq(name_in(t, 2, 0, 0x1100, NULL), ""); /* the gap */
	ck_assert_str_eq(name_in(t, 2, 0, 0x1250, NULL), "second");
	ck_assert_str_eq(name_in(t, 2, 0, 0x0fff, NULL), "");
}
END_TEST

START_TEST(test_sym_index_aliases_global_then_weak_then_local)
{
	const struct named t[] = {
		sym(0x1000, 0x40, "local_alias", 1, STB_LOCAL),
		sym(0x1000, 0x40, "weak_alias", 2, STB_WEAK),
		sym(0x1000, 0x40, "global_name", 3, STB_GLOBAL),
		sym(0x1000, 0x40, "second_global", 4, STB_GLOBAL),
	};
	/* one table part: the strongest binding, then the first in order */
	ck_assert_str_eq(name_in(t, 4, 0, 0x1010, NULL), "global_name");
	ck_assert_str_eq(name_in(t, 2, 0, 0x1010, NULL), "weak_alias");
}
END_TEST

/* How many symbols start at an address, in both parts of the table: the
 * report asks the dynamic linker which alias is exported only where more
 * than one does (symbols.c). */
START_TEST(test_sym_index_counts_the_symbols_starting_at_an_address)
{
	struct ms_sym t[] = {
		{ .value = 0x1000, .size = 0x40, .order = 1, .bind = STB_LOCAL },
		{ .value = 0x1040, .size = 0x10, .order = 2, .bind = STB_LOCAL },
		{ .value = 0x1000, .size = 0x40, .order = 3, .bind = STB_GLOBAL },
		{ .value = 0x1000, .size = 0x40, .order = 4, .bind = STB_WEAK },
		{ .value = 0x2000, .size = 0x20, .order = 5, .bind = STB_GLOBAL },
	};
	struct ms_sym *copy = malloc(sizeof t);
	ck_assert_ptr_nonnull(copy);
	memcpy(copy, t, sizeof t);
	struct ms_sym_index *ix = ms_sym_index_make(copy, 5, 3, NULL, 0);
	ck_assert_ptr_nonnull(ix);
	ck_assert_uint_eq(ms_sym_index_starting_at(ix, 0x1000), 3);
	ck_assert_uint_eq(ms_sym_index_starting_at(ix, 0x1040), 1);
	ck_assert_uint_eq(ms_sym_index_starting_at(ix, 0x2000), 1);
	ck_assert_uint_eq(ms_sym_index_starting_at(ix, 0x1010), 0); /* inside */
	ck_assert_uint_eq(ms_sym_index_starting_at(ix, 0), 0);
	ms_sym_index_free(ix);
}
END_TEST

START_TEST(test_sym_index_global_part_before_local_part)
{
	/* a local function inside a global symbol's range: libdw reads the
	 * local part only when no global symbol covers the address */
	const struct named t[] = {
		sym(0x1010, 0x10, "inner_static", 1, STB_LOCAL),
		sym(0x1000, 0x100, "outer_global", 2, STB_GLOBAL),
		sym(0x2000, 0x10, "lone_static", 3, STB_LOCAL),
	};
	ck_assert_str_eq(name_in(t, 3, 2, 0x1014, NULL), "outer_global");
	ck_assert_str_eq(name_in(t, 3, 2, 0x2004, NULL), "lone_static");
	/* in one part too, a stronger binding wins over a nearer start */
	ck_assert_str_eq(name_in(t, 3, 0, 0x1014, NULL), "outer_global");
	/* and of equal bindings the nearer start, in either order */
	const struct named u[] = {
		sym(0x1010, 0x10, "inner", 1, STB_GLOBAL),
		sym(0x1000, 0x100, "outer", 2, STB_GLOBAL),
		sym(0x1010, 0x10, "inner_after", 3, STB_GLOBAL),
	};
	ck_assert_str_eq(name_in(u, 2, 0, 0x1014, NULL), "inner");
	ck_assert_str_eq(name_in(u + 1, 2, 0, 0x1014, NULL), "inner_after");
}
END_TEST

START_TEST(test_sym_index_labels_past_every_symbol)
{
	const struct named t[] = {
		sym(0x1000, 0x10, "sized", 1, STB_GLOBAL),
		sym(0x1008, 0, "label_inside", 2, STB_GLOBAL),
		sym(0x1020, 0, "label_after", 3, STB_GLOBAL),
	};
	/* no sized symbol covers 0x1030: the label at the highest end */
	ck_assert_str_eq(name_in(t, 3, 0, 0x1030, NULL), "label_after");
	/* a label is passed over where a sized symbol covers the address */
	ck_assert_str_eq(name_in(t, 3, 0, 0x100c, NULL), "sized");
	/* a label inside a sized symbol's range names nothing past it */
	ck_assert_str_eq(name_in(t, 2, 0, 0x1018, NULL), "");
	/* nor one in another section (any_section says no with an arg) */
	ck_assert_str_eq(name_in(t, 3, 0, 0x1030, (void *)1), "");
}
END_TEST

/* Addresses that differ in every byte, high ones included, in no order,
 * each with a symbol of the local part inside its global one: each names
 * its own global symbol (the sort goes through every byte, and keeps the
 * parts apart: bound alike, in one part the nearer would win). */
START_TEST(test_sym_index_sorts_by_every_byte)
{
	enum { N = 2000 };
	static struct named t[2 * N];
	static char names[N][16];
	uint64_t x = 0x9e3779b97f4a7c15ull;
	for (uint32_t i = 0; i < N; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		uint64_t value = x & ~(uint64_t)0xf; /* 16 apart at least */
		snprintf(names[i], sizeof names[i], "g%u", i);
		t[i] = sym(value + 2, 2, "inner", i + 1, STB_GLOBAL);
		t[N + i] = sym(value, 8, names[i], N + i + 1, STB_GLOBAL);
	}
	struct ms_sym *copy = malloc(sizeof t / sizeof t[0] * sizeof *copy);
	ck_assert_ptr_nonnull(copy);
	for (size_t i = 0; i < 2 * N; i++)
		copy[i] = t[i].sym;
	struct ms_sym_index *ix = ms_sym_index_make(copy, 2 * N, N + 1, NULL, 0);
	ck_assert_ptr_nonnull(ix);
	for (uint32_t i = 0; i < N; i++) {
		uint64_t value = t[N + i].sym.value;
		const struct ms_sym *s =
			ms_sym_index_find(ix, value + 3, any_section, NULL);
		ck_assert_ptr_nonnull(s);
		ck_assert_uint_eq(s->order, N + i + 1);
		ck_assert_uint_eq(s->value, value);
		ck_assert_ptr_null(ms_sym_index_find(ix, value + 8, any_section,
						     NULL));
	}
	ms_sym_index_free(ix);
}
END_TEST

/* Symbols of 4 GiB or more (a 5 GiB array in .bss) have their sizes apart
 * (struct ms_sym_big): an address past 4 GiB into one is in it, one past
 * its end is not, and of two at one address the smaller is taken, as
 * libdw takes it.  (Such a symbol gave the whole module no index.) */
START_TEST(test_sym_index_symbols_over_4_gib)
{
	const uint64_t gib = 1ull << 30, at = 0x10000;
	struct ms_sym t[] = {
		{ .value = at, .size = MS_SYM_SIZE_BIG, .order = 1, .bind = STB_GLOBAL },
		{ .value = at + 5 * gib, .size = 0x40, .order = 2, .bind = STB_GLOBAL },
		{ .value = at + 6 * gib, .size = MS_SYM_SIZE_BIG, .order = 3, .bind = STB_GLOBAL },
		{ .value = at + 6 * gib, .size = MS_SYM_SIZE_BIG, .order = 4, .bind = STB_GLOBAL },
	};
	struct ms_sym *copy = malloc(sizeof t);
	struct ms_sym_big *big = malloc(3 * sizeof *big);
	ck_assert_ptr_nonnull(copy);
	ck_assert_ptr_nonnull(big);
	memcpy(copy, t, sizeof t);
	big[0] = (struct ms_sym_big){ 1, 5 * gib };
	big[1] = (struct ms_sym_big){ 3, 8 * gib };
	big[2] = (struct ms_sym_big){ 4, 7 * gib };
	struct ms_sym_index *ix = ms_sym_index_make(copy, 4, 0, big, 3);
	ck_assert_ptr_nonnull(ix);
	const struct ms_sym *s = ms_sym_index_find(ix, at + 4 * gib + 0x10, any_section, NULL);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(s->order, 1);
	s = ms_sym_index_find(ix, at + 5 * gib + 0x10, any_section, NULL);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(s->order, 2);
	ck_assert_ptr_null(ms_sym_index_find(ix, at + 5 * gib + 0x40, any_section, NULL));
	s = ms_sym_index_find(ix, at + 12 * gib, any_section, NULL);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(s->order, 4); /* 7 GiB, not 8 */
	s = ms_sym_index_find(ix, at + 13 * gib + 0x10, any_section, NULL);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(s->order, 3); /* past the smaller one's end */
	ck_assert_ptr_null(ms_sym_index_find(ix, at + 14 * gib, any_section, NULL));
	ms_sym_index_free(ix);
}
END_TEST

/* ---- real code, against libdw's own search ------------------------------ */

static __attribute__((noinline)) int static_helper(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 3 + 1;
}

START_TEST(test_symbols_name_a_static_function)
{
	int (*volatile fn)(int) = static_helper;
	ck_assert_int_eq(fn(1), 4);
	struct ms_frame fr;
	ms_symbols_begin();
	ck_assert_int_eq(ms_symbolize_frame((uintptr_t)fn, 0, &fr), 0);
	ms_symbols_end();
	ck_assert_str_eq(fr.func, "static_helper");
	ck_assert_uint_eq(fr.offset, 0);
}
END_TEST

/* libstdc++, opened so its demangler is found; NULL if it is missing. */
static void *libstdcxx(void)
{
	return dlopen("libstdc++.so.6", RTLD_NOW | RTLD_GLOBAL);
}

START_TEST(test_symbols_name_a_cxx_function)
{
	void *h = libstdcxx();
	if (!h)
		return; /* no libstdc++6: nothing to name */
	uintptr_t fn = (uintptr_t)dlsym(h, "_ZNSt6thread20hardware_concurrencyEv");
	ck_assert(fn != 0);
	struct ms_frame fr;
	ms_symbols_begin();
	ck_assert_int_eq(ms_symbolize_frame(fn + 4, 0, &fr), 0);
	ms_symbols_end();
	ck_assert_str_eq(fr.func, "std::thread::hardware_concurrency()");
	ck_assert_uint_eq(fr.offset, 4);
	ck_assert(!strncmp(fr.module, "libstdc++.so", 12));
}
END_TEST

START_TEST(test_symbols_name_no_symbol_by_module_and_offset)
{
	Dl_info info;
	/* a function of glibc's own that no sanitizer intercepts */
	ck_assert(dladdr((void *)&gnu_get_libc_version, &info) && info.dli_fbase);
	uintptr_t header = (uintptr_t)info.dli_fbase + 0x10; /* the ELF header */
	struct ms_frame fr;
	ms_symbols_begin();
	ck_assert_int_eq(ms_symbolize_frame(header, 0, &fr), 0);
	ms_symbols_end();
	ck_assert_str_eq(fr.func, "");
	ck_assert_uint_eq(fr.offset, 0x10);
	ck_assert(!strncmp(fr.module, "libc.so", 7));
}
END_TEST

/* Every step bytes of [from, from + len): the same function, offset and
 * module by the index as by libdw's scan of the whole table. */
static void names_agree(uintptr_t from, size_t len, size_t step)
{
	size_t n = len / step;
	struct ms_frame *by_index = malloc(n * sizeof *by_index);
	ck_assert_ptr_nonnull(by_index);
	ms_symbols_begin();
	for (size_t i = 0; i < n; i++)
		ms_symbolize_frame(from + i * step, 0, &by_index[i]);
	ms_symbols_by_scan(1);
	size_t named = 0;
	for (size_t i = 0; i < n; i++) {
		struct ms_frame fr;
		ms_symbolize_frame(from + i * step, 0, &fr);
		ck_assert_msg(!strcmp(fr.func, by_index[i].func) &&
				      fr.offset == by_index[i].offset &&
				      !strcmp(fr.module, by_index[i].module),
			      "%#lx: libdw says %s+%#lx (%s), the index %s+%#lx (%s)",
			      (unsigned long)(from + i * step), fr.func, fr.offset,
			      fr.module, by_index[i].func, by_index[i].offset,
			      by_index[i].module);
		named += fr.func[0] != 0;
	}
	ms_symbols_by_scan(0);
	ms_symbols_end();
	ck_assert_uint_gt(named, 0); /* (libc's exported functions only: a few) */
	free(by_index);
}

START_TEST(test_symbols_index_names_as_libdw_does)
{
	names_agree((uintptr_t)static_helper & ~(uintptr_t)0xfff, 0x4000, 3);
	names_agree((uintptr_t)&strlen & ~(uintptr_t)0xfff, 0x8000, 7);
	void *h = libstdcxx();
	void *fn = h ? dlsym(h, "_ZNSt6thread20hardware_concurrencyEv") : NULL;
	if (fn)
		names_agree((uintptr_t)fn & ~(uintptr_t)0xfff, 0x8000, 7);
}
END_TEST

Suite *sym_index_suite(void)
{
	Suite *s = suite_create("sym_index");
	TCase *tc = tcase_create("tables");
	tcase_add_test(tc, test_sym_index_nearest_covering_symbol);
	tcase_add_test(tc, test_sym_index_aliases_global_then_weak_then_local);
	tcase_add_test(tc, test_sym_index_counts_the_symbols_starting_at_an_address);
	tcase_add_test(tc, test_sym_index_global_part_before_local_part);
	tcase_add_test(tc, test_sym_index_labels_past_every_symbol);
	tcase_add_test(tc, test_sym_index_sorts_by_every_byte);
	tcase_add_test(tc, test_sym_index_symbols_over_4_gib);
	suite_add_tcase(s, tc);
	tc = tcase_create("names");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_symbols_name_a_static_function);
	tcase_add_test(tc, test_symbols_name_a_cxx_function);
	tcase_add_test(tc, test_symbols_name_no_symbol_by_module_and_offset);
	tcase_add_test(tc, test_symbols_index_names_as_libdw_does);
	suite_add_tcase(s, tc);
	return s;
}
