/* top_table.c - the report's table of its top locks; see top_table.h. */
#define _GNU_SOURCE
#include "report/top_table.h"
#include "base/fmt.h"
#include "base/options.h"
#include "stacks/symbols.h"

#define WIDTH 120
#define LINE(lines, i) ((const struct ms_line *)((const char *)(lines) + (i) * size))

static const char *mutex_label(char *out, size_t cap, const struct ms_line *l)
{
	struct ms_fmt f;
	ms_fmt_init(&f, out, cap, -1);
	if (l->ended)
		ms_fmt(&f, "%llu ended", (unsigned long long)l->mutexes);
	else if (l->name)
		ms_fmt_name(&f, l->name, 18);
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

void ms_top_table(struct ms_fmt *f, const void *lines, size_t size, size_t n,
		  const char *when)
{
	/* A program of mutexes alone sees the table it always did; one
	 * with other locks gets "locks" and a kind column. */
	uint32_t classes = 0;
	for (size_t i = 0; i < n; i++)
		classes |= LINE(lines, i)->classes;
	int kinds = (classes & ~(1u << MS_CLASS_MUTEX)) != 0;
	ms_fmt(f, "\nTop %zu %s by %s%s:\n", n,
	       kinds ? (n == 1 ? "lock" : "locks") : (n == 1 ? "mutex" : "mutexes"),
	       ms_sort_name(ms_opt.sort), when);
	ms_fmt(f, "%3s %-18s %10s %10s %9s %9s %9s %9s %8s  %s%s\n", "#", kinds ? "lock" : "mutex",
	       "acquired", "contended", "wait tot", "wait max", "hold avg",
	       "hold max", "changes", kinds ? "kind    " : "", "first locked at");
	for (size_t i = 0; i < n; i++) {
		const struct ms_line *l = LINE(lines, i);
		char label[40], a[16], b[16], c[16], d[16], site[256], kind[16];
		int held_known = l->holds > 0;
		struct ms_fmt kf;
		ms_fmt_init(&kf, kind, sizeof kind, -1);
		if (kinds)
			ms_fmt(&kf, "%-8s", kind_column(l->classes));
		ms_fmt(f, "%3zu %-18s %10llu %10llu %9s %9s %9s %9s %8llu  %s%s\n",
		       i + 1, mutex_label(label, sizeof label, l),
		       (unsigned long long)l->acquisitions,
		       (unsigned long long)l->contended,
		       dur(a, l->wait_total, 1), dur(b, l->wait_max, 1),
		       dur(c, held_known ? l->hold_total / l->holds : 0, held_known),
		       dur(d, l->hold_max, held_known),
		       (unsigned long long)l->changes, ms_fmt_str(&kf),
		       !l->first_caller ? "(never locked)" :
		       ms_symbol_fit((char *)ms_symbolize_short(ms_line_site(l), site, sizeof site),
				WIDTH - 96 - (kinds ? 8 : 0)));
	}
}

