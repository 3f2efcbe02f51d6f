/* options.c - every MUTEXSTAT_* variable in one table: name, default, limits,
 * one line of help.  Values are read once at start-up; a bad value earns one
 * warning naming the variable, the value and the default that is used. */
#include "base/options.h"
#include "base/fmt.h"

#include <limits.h>
#include <string.h>

struct ms_options ms_opt;

enum kind { NUM, POW2, CHOICE, PATH, LIST, SECONDS };

static const char *const sort_names[] = {
	"wait", "wait-max", "contended", "acquired", "hold", "hold-max",
	"changes", NULL,
};
static const char *const bool_names[] = { "0", "1", NULL };
static const char *const signal_names[] = { "USR1", "USR2", "none", NULL };
static const char *const deadlock_actions[] = { "report", "abort", NULL };
static const char *const crash_actions[] = { "off", "report", NULL };
/* MUTEXSTAT_FORMAT: bit i of ms_opt.formats is format_names[i] */
static const char *const format_names[] = { "text", "folded", "pprof", "dot",
					       "json", NULL };

/* MUTEXSTAT_TRACK: bit i of ms_opt.track is lock_kind_names[i] (the
 * record's class, table.h) */
static const char *const lock_kind_names[] = { "mutex", "rwlock", "spin", NULL };
/* A path is kept in a copy of its own: the text getenv gives is in the
 * environment's block, which a program may overwrite once it has started
 * (setproctitle in redis, nginx, postgres moves the environment and writes
 * its title over the block), and the path is read again at exit. */
static char path_copy[PATH_MAX], run_dir_copy[PATH_MAX], suppressions_copy[PATH_MAX];

static const struct option {
	const char *name;
	enum kind kind;
	const char *def;
	uint64_t min, max;
	const char *const *choices;
	void *dest;
	const char *help;
	char *copy; /* a PATH's own copy of its text (below) */
} options[] = {
	{ "MUTEXSTAT_OUTPUT", PATH, "", 0, 0, NULL, &ms_opt.output,
	  "write the report to this file (%p = pid) instead of stderr", path_copy },
	{ "MUTEXSTAT_TABLE_SIZE", POW2, "1048576", 64, 1u << 26, NULL,
	  &ms_opt.table_size,
	  "mutexes tracked at once (rounded up to a power of two)", NULL },
	{ "MUTEXSTAT_HISTORY", POW2, "16", 1, 1024, NULL, &ms_opt.history,
	  "recent operations kept per mutex (rounded up to a power of two)", NULL },
	{ "MUTEXSTAT_TOP", NUM, "10", 1, 100000, NULL, &ms_opt.top,
	  "mutexes listed in the report", NULL },
	{ "MUTEXSTAT_SORT", CHOICE, "wait", 0, 0, sort_names, &ms_opt.sort,
	  "rank by wait|wait-max|contended|acquired|hold|hold-max|changes", NULL },
	{ "MUTEXSTAT_EXIT_REPORT", CHOICE, "1", 0, 0, bool_names,
	  &ms_opt.exit_report, "1 = write the report at exit, 0 = only on demand", NULL },
	{ "MUTEXSTAT_FRAMES", NUM, "16", 1, 64, NULL, &ms_opt.frames,
	  "frames kept per call stack", NULL },
	{ "MUTEXSTAT_STACK_SAMPLE", NUM, "8", 1, 1000000, NULL,
	  &ms_opt.stack_sample,
	  "after a mutex's first 256 contentions, capture stacks of 1 in N", NULL },
	{ "MUTEXSTAT_STACK_MEMORY", NUM, "64", 1, 4096, NULL, &ms_opt.stack_memory,
	  "MiB for call stacks; when spent, new stacks are counted as dropped", NULL },
	{ "MUTEXSTAT_EXIT_CODE", NUM, "0", 0, 255, NULL, &ms_opt.exit_code,
	  "exit with this status if the report finds a (potential) deadlock, a "
	  "stall or an owner death left not recoverable; 0 = off", NULL },
	{ "MUTEXSTAT_FORMAT", LIST, "text", 0, 0, format_names, &ms_opt.formats,
	  "report formats, comma-separated: text, folded, pprof, dot, json", NULL },
	{ "MUTEXSTAT_TRACK", LIST, "mutex,rwlock,spin", 0, 0, lock_kind_names, &ms_opt.track,
	  "kinds of lock recorded, comma-separated: mutex, rwlock, spin", NULL },
	{ "MUTEXSTAT_SIGNAL", CHOICE, "USR1", 0, 0, signal_names, &ms_opt.signal,
	  "signal that writes a report while the program runs: USR1|USR2|none", NULL },
	{ "MUTEXSTAT_WATCHDOG", NUM, "0", 0, 86400, NULL, &ms_opt.watchdog,
	  "report once when a thread has waited this many seconds for a mutex; 0 = off", NULL },
	{ "MUTEXSTAT_ON_DEADLOCK", CHOICE, "report", 0, 0, deadlock_actions,
	  &ms_opt.on_deadlock, "after the watchdog's report: report|abort", NULL },
	{ "MUTEXSTAT_ON_CRASH", CHOICE, "off", 0, 0, crash_actions, &ms_opt.on_crash,
	  "report: on SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT write the report, then die of it", NULL },
	{ "MUTEXSTAT_FOLLOW", CHOICE, "1", 0, 0, bool_names, &ms_opt.follow,
	  "1 = child processes (fork, exec) are recorded too, 0 = only this one", NULL },
	{ "MUTEXSTAT_QUIET", CHOICE, "0", 0, 0, bool_names, &ms_opt.quiet,
	  "1 = a process that locked nothing writes no exit report", NULL },
	{ "MUTEXSTAT_RUN_DIR", PATH, "", 0, 0, NULL, &ms_opt.run_dir,
	  "a run of many processes (the launcher's): their reports and summary lines go here",
	  run_dir_copy },
	{ "MUTEXSTAT_SUPPRESSIONS", PATH, "", 0, 0, NULL, &ms_opt.suppressions,
	  "findings left out of the report: a file of KIND:PATTERN lines",
	  suppressions_copy },
	{ "MUTEXSTAT_INTERVAL", SECONDS, "", 100, 86400000, NULL, &ms_opt.interval_ms,
	  "seconds (0.1 or more, decimals allowed): write each format every "
	  "interval, each with what happened since the one before; unset = off", NULL },
	{ "MUTEXSTAT_KEEP", NUM, "0", 0, 1000000, NULL, &ms_opt.keep,
	  "interval files kept per format, the newest; 0 = all", NULL },
	{ "MUTEXSTAT_RUN_ROOT", NUM, "0", 0, 4194304, NULL, &ms_opt.run_root,
	  "the pid of the run's first process, which writes the run's summary", NULL },
};

#define N_OPTIONS (sizeof options / sizeof options[0])

static int parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	if (!*s)
		return 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10)
			return 0;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return 1;
}

/* Seconds with up to three decimals ("10", "0.5", "2.25") as
 * milliseconds. */
static int parse_ms(const char *s, uint64_t *out)
{
	char whole[24];
	const char *dot = strchr(s, '.');
	size_t n = dot ? (size_t)(dot - s) : strlen(s);
	uint64_t sec, ms = 0;
	if (n >= sizeof whole)
		return 0;
	memcpy(whole, s, n);
	whole[n] = 0;
	if (!parse_u64(whole, &sec) || sec > (UINT64_MAX - 999) / 1000)
		return 0; /* (sec * 1000 + 999 fits) */
	if (dot) {
		const char *d = dot + 1;
		int k = 0;
		if (!*d)
			return 0; /* "10." */
		for (; *d; d++, k++)
			if (k >= 3 || *d < '0' || *d > '9')
				return 0;
		uint64_t frac;
		if (!parse_u64(dot + 1, &frac))
			return 0;
		for (; k < 3; k++)
			frac *= 10;
		ms = frac;
	}
	*out = sec * 1000 + ms;
	return 1;
}

static uint64_t round_pow2(uint64_t v)
{
	uint64_t p = 1;
	while (p < v)
		p <<= 1;
	return p;
}


/* Returns 1 and stores the value, or 0 if the text is not acceptable. */
static int apply(const struct option *o, const char *text)
{
	uint64_t v;
	switch (o->kind) {
	case PATH:
		if (strlen(text) >= PATH_MAX)
			return 0;
		memcpy(o->copy, text, strlen(text) + 1);
		*(const char **)o->dest = *text ? o->copy : NULL;
		return 1;
	case NUM:
	case POW2:
		if (!parse_u64(text, &v) || v < o->min || v > o->max)
			return 0;
		*(uint64_t *)o->dest = o->kind == POW2 ? round_pow2(v) : v;
		return 1;
	case SECONDS: /* "" is off (the default); a value is in range */
		if (!*text) {
			*(uint64_t *)o->dest = 0;
			return 1;
		}
		if (!parse_ms(text, &v) || (v && v < o->min) || v > o->max)
			return 0;
		*(uint64_t *)o->dest = v; /* 0 is off too, as MUTEXSTAT_WATCHDOG's */
		return 1;
	case CHOICE:
		for (v = 0; o->choices[v]; v++)
			if (!strcmp(o->choices[v], text)) {
				*(uint64_t *)o->dest = v;
				return 1;
			}
		return 0;
	case LIST: {
		uint64_t mask = 0;
		const char *p = text;
		do {
			const char *end = strchr(p, ',');
			size_t len = end ? (size_t)(end - p) : strlen(p);
			for (v = 0; o->choices[v]; v++)
				if (strlen(o->choices[v]) == len &&
				    !strncmp(o->choices[v], p, len))
					break;
			if (!o->choices[v])
				return 0; /* an unknown word, or an empty one */
			mask |= 1ull << v;
			p = end ? end + 1 : NULL;
		} while (p);
		*(uint64_t *)o->dest = mask;
		return 1;
	}
	}
	return 0;
}

static void describe_expected(struct ms_fmt *f, const struct option *o)
{
	switch (o->kind) {
	case PATH:
		ms_fmt(f, "a path shorter than %u bytes", (unsigned)PATH_MAX);
		break;
	case NUM:
	case POW2:
		ms_fmt(f, "a number from %llu to %llu",
		       (unsigned long long)o->min, (unsigned long long)o->max);
		break;
	case SECONDS:
		ms_fmt(f, "0 (off) or a number of seconds from %llu.%llu to %llu (up to 3 decimals)",
		       (unsigned long long)(o->min / 1000),
		       (unsigned long long)(o->min % 1000 / 100),
		       (unsigned long long)(o->max / 1000));
		break;
	case LIST:
		ms_fmt(f, "a comma-separated list of");
		for (size_t i = 0; o->choices[i]; i++)
			ms_fmt(f, "%s %s", i ? "," : "", o->choices[i]);
		break;
	case CHOICE:
		ms_fmt(f, "one of");
		for (size_t i = 0; o->choices[i]; i++)
			ms_fmt(f, "%s %s", i ? "," : "", o->choices[i]);
		break;
	}
}

/* What a bad value is replaced with, in words.  A bad MUTEXSTAT_OUTPUT
 * means the default destination, which depends on MUTEXSTAT_FORMAT: it is
 * read last for that. */
static const char *default_words(const struct option *o)
{
	if (o->kind == SECONDS && !*o->def)
		return "none (off)";
	if (o->kind != PATH || *o->def)
		return o->def;
	if (o->dest != &ms_opt.output)
		return "none";
	return ms_opt.formats == MS_FORMAT_TEXT ? "stderr" : "the prefix mutexstat.%p";
}

void ms_options_load(ms_getenv_fn get, ms_warn_fn warn)
{
	for (size_t k = 0; k < 2 * N_OPTIONS; k++) {
		/* first every other option, then the path */
		const struct option *o = &options[k % N_OPTIONS];
		if ((o->kind == PATH) != (k >= N_OPTIONS))
			continue;
		apply(o, o->def);
		const char *v = get ? get(o->name) : NULL;
		if (!v || apply(o, v))
			continue;
		char buf[400];
		struct ms_fmt f;
		ms_fmt_init(&f, buf, sizeof buf, -1);
		ms_fmt(&f, "mutexstat: %s='", o->name);
		ms_fmt_quoted(&f, v, 80); /* one line, whatever the value holds */
		ms_fmt(&f, "' is not ");
		describe_expected(&f, o);
		ms_fmt(&f, "; using %s\n", default_words(o));
		warn(ms_fmt_str(&f));
	}
}

size_t ms_options_count(void) { return N_OPTIONS; }
const char *ms_option_name(size_t i) { return options[i].name; }
const char *ms_option_default(size_t i) { return options[i].def; }
const char *ms_option_help(size_t i) { return options[i].help; }

const char *ms_sort_name(uint64_t sort)
{
	return sort < sizeof sort_names / sizeof *sort_names - 1 ? sort_names[sort]
								    : "?";
}
