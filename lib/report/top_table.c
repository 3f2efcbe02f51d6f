/* top_table.c - the report's table of its top locks; see top_table.h. */
#define _GNU_SOURCE
#include "report/top_table.h"
#include "base/fmt.h"
#include "base/options.h"
#include "report/kinds.h"
#include "stacks/symbols.h"

#include <string.h>

#define WIDTH 120
#define LINE(lines, i) ((const struct ms_line *)((const char *)(lines) + (i) * size))

#define VAR_COLS 24

/* A live line's lock with no name is called by its variable: its key;
 * 0 for the others. */
static uintptr_t variable_key(const struct ms_line *l)
{
	return l->ended || l->name ? 0 : l->key;
}

/* alike: its variable reads as another row's, of another module's */
static const char *mutex_label(char *out, size_t cap, const struct ms_line *l, int alike)
{
	struct ms_fmt f;
	char var[MS_VARIABLE_CAP];
	struct ms_names_room room = { VAR_COLS, 0, WIDTH, alike }; /* VAR_COLS its most */
	ms_fmt_init(&f, out, cap, -1);
	if (l->ended)
		ms_fmt(&f, "%llu ended", (unsigned long long)l->mutexes);
	else if (l->name)
		ms_fmt_name(&f, l->name, 18);
	else if (ms_lock_names(var, sizeof var, l->key, NULL, &room)[0])
		ms_fmt(&f, "%s", var + 1); /* its section has the address */
	else
		ms_fmt(&f, "%p", (void *)l->key);
	return ms_fmt_str(&f);
}

static const char *dur(char *out, uint64_t ns, int known)
{
	if (!known) {
		out[0] = '-';
		out[1] = 0;
		return out;
	}
	return ms_duration(out, ns);
}

/* The top table's kind column: the kinds of a line's locks. */
static const char *kind_column(uint32_t classes)
{
	switch (classes) {
	case 1u << MS_CLASS_MUTEX: return "mutex";
	case 1u << MS_CLASS_RWLOCK: return "rwlock";
	case 1u << MS_CLASS_SPIN: return "spin";
	default: return "mixed";
	}
}

/* The columns a string takes: UTF-8 continuation bytes take none (a
 * name given by the program, "µs"). */
static size_t cols_of(const char *s)
{
	size_t cols = 0;
	for (; *s; s++)
		cols += ((unsigned char)*s & 0xc0) != 0x80;
	return cols;
}

static size_t digits(uint64_t v)
{
	size_t n = 1;
	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

static size_t at_least(size_t have, size_t want)
{
	return have > want ? have : want;
}

/* A row's texts, made once for the widths and once to print. */
struct row {
	char label[128], wait_tot[16], wait_max[16], hold_avg[16], hold_max[16];
};

static void row_of(struct row *w, const struct ms_line *l, int alike)
{
	int held_known = l->holds > 0;
	mutex_label(w->label, sizeof w->label, l, alike);
	dur(w->wait_tot, l->wait_total, 1);
	dur(w->wait_max, l->wait_max, 1);
	dur(w->hold_avg, held_known ? l->hold_total / l->holds : 0, held_known);
	dur(w->hold_max, l->hold_max, held_known);
}

void ms_top_table(struct ms_fmt *f, const void *lines, size_t size, size_t n,
		  const char *when, uint32_t classes)
{
	/* A program of mutexes alone sees the table it always did; one
	 * with other locks gets "locks" and a kind column. */
	for (size_t i = 0; i < n; i++)
		classes |= LINE(lines, i)->classes;
	int kinds = (classes & ~(1u << MS_CLASS_MUTEX)) != 0;
	const char *noun = kinds ? "lock" : "mutex";
	/* Each column as wide as its widest text, its heading's at least: the
	 * room left is the site's, where a reader finds the code -- a
	 * wide fixed layout left it 24 columns, 16 with the kind column, and
	 * cut "update_cache" and "libcrypto.so.3" to a few letters. */
	size_t w_label = strlen(noun), w_acq = strlen("acquired"), w_cont = strlen("contended");
	size_t w_dur = strlen("wait tot"), w_chg = strlen("changes");
	/* two libraries' static `lock` among the first rows: which is which */
	uintptr_t keys[MS_ALIKE_MAX] = { 0 };
	unsigned char alike[MS_ALIKE_MAX] = { 0 };
	size_t compared = n < MS_ALIKE_MAX ? n : MS_ALIKE_MAX;
	for (size_t i = 0; i < compared; i++)
		keys[i] = variable_key(LINE(lines, i));
	ms_locks_alike(alike, keys, compared, VAR_COLS);
	for (size_t i = 0; i < n; i++) {
		const struct ms_line *l = LINE(lines, i);
		struct row w;
		row_of(&w, l, i < compared && alike[i]);
		w_label = at_least(w_label, cols_of(w.label));
		w_acq = at_least(w_acq, digits(l->acquisitions));
		w_cont = at_least(w_cont, digits(l->contended));
		w_chg = at_least(w_chg, digits(l->changes));
		w_dur = at_least(w_dur, cols_of(w.wait_tot));
		w_dur = at_least(w_dur, cols_of(w.wait_max));
		w_dur = at_least(w_dur, cols_of(w.hold_avg));
		w_dur = at_least(w_dur, cols_of(w.hold_max));
	}
	const int w_kind = kinds ? 7 : 0; /* "rwlock " */
	size_t used = 3 + 1 + w_label + 1 + w_acq + 1 + w_cont + 4 * (1 + w_dur) + 1 + w_chg +
		      2 + (size_t)w_kind;
	size_t w_site = used + 16 < WIDTH ? WIDTH - used : 16;
	ms_fmt(f, "\nTop %zu %s%s by %s%s:\n", n, noun, n == 1 ? "" : kinds ? "s" : "es",
	       ms_sort_name(ms_opt.sort), when);
	ms_fmt(f, "%3s %-*s %*s %*s %*s %*s %*s %*s %*s  %-*s%s\n", "#", (int)w_label, noun,
	       (int)w_acq, "acquired", (int)w_cont, "contended", (int)w_dur, "wait tot",
	       (int)w_dur, "wait max", (int)w_dur, "hold avg", (int)w_dur, "hold max",
	       (int)w_chg, "changes", w_kind, kinds ? "kind" : "", "first locked at");
	for (size_t i = 0; i < n; i++) {
		const struct ms_line *l = LINE(lines, i);
		struct row w;
		char site[256];
		row_of(&w, l, i < compared && alike[i]);
		ms_fmt(f, "%3zu %-*s %*llu %*llu %*s %*s %*s %*s %*llu  %-*s%s\n", i + 1,
		       (int)w_label, w.label, (int)w_acq, (unsigned long long)l->acquisitions,
		       (int)w_cont, (unsigned long long)l->contended, (int)w_dur, w.wait_tot,
		       (int)w_dur, w.wait_max, (int)w_dur, w.hold_avg, (int)w_dur, w.hold_max,
		       (int)w_chg, (unsigned long long)l->changes, w_kind,
		       kinds ? kind_column(l->classes) : "",
		       !l->first_caller ? "(never locked)" :
		       ms_symbol_fit((char *)ms_site_name(ms_line_site(l), site, sizeof site, 1),
				     w_site));
	}
}
