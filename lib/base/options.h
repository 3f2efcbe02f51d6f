/* options.h - the MUTEXSTAT_* settings, read once from the environment. */
#ifndef MUTEXSTAT_OPTIONS_H
#define MUTEXSTAT_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

enum ms_sort {
	MS_SORT_WAIT, MS_SORT_WAIT_MAX, MS_SORT_CONTENDED, MS_SORT_ACQUIRED,
	MS_SORT_HOLD, MS_SORT_HOLD_MAX, MS_SORT_CHANGES,
};

#define MS_FORMAT_TEXT 1u
#define MS_FORMAT_FOLDED 2u
#define MS_FORMAT_PPROF 4u
#define MS_FORMAT_DOT 8u
#define MS_FORMAT_JSON 16u

struct ms_options {
	uint64_t table_size;   /* tracked mutexes at once, a power of two */
	uint64_t history;      /* recent operations kept per mutex, power of two */
	uint64_t top;          /* mutexes listed in the report */
	uint64_t sort;         /* enum ms_sort */
	uint64_t exit_report;  /* write the report at exit */
	uint64_t frames;       /* frames per captured stack */
	uint64_t stack_sample; /* capture one contention event in N */
	uint64_t stack_memory; /* MiB for the stack depot */
	uint64_t exit_code;    /* exit status when a deadlock is found; 0 off */
	uint64_t formats;      /* MS_FORMAT_* bits */
	uint64_t track;        /* kinds of lock recorded: bit 1 << class (table.h) */
	uint64_t signal;       /* live dump signal: 0 USR1, 1 USR2, 2 none */
	uint64_t watchdog;     /* seconds a wait may last before a report; 0 off */
	uint64_t on_deadlock;  /* 0 report, 1 abort (after the watchdog's report) */
	uint64_t on_crash;     /* 0 off, 1 report on a fatal signal */
	uint64_t follow;       /* 1: children are recorded too; 0: this process only */
	uint64_t quiet;        /* 1: no exit report from a process that locked nothing */
	uint64_t interval_ms;  /* interval profiles every this many ms; 0 off */
	uint64_t keep;         /* interval files kept per format; 0 all */
	uint64_t run_root;     /* pid of a run's first process (MUTEXSTAT_RUN_DIR) */
	const char *output;    /* report path, %p = pid; NULL = stderr */
	const char *run_dir;   /* a run's directory (report/run.h); NULL: none */
	const char *suppressions; /* the rules' file (report/suppress.h); NULL: none */
};

extern struct ms_options ms_opt;

/* Whether interval files are asked for (runtime/interval.h): every
 * format writes them. */
static inline int ms_opt_intervals(void)
{
	return ms_opt.interval_ms != 0;
}

/* Parse the environment (via the getter, normally secure_getenv) into
 * ms_opt; each invalid value is reported through warn() once. */
typedef const char *(*ms_getenv_fn)(const char *name);
typedef void (*ms_warn_fn)(const char *msg);
void ms_options_load(ms_getenv_fn get, ms_warn_fn warn);

/* One line per option for --help: "NAME=default  description". */
size_t ms_options_count(void);
const char *ms_option_name(size_t i);
const char *ms_option_default(size_t i);
const char *ms_option_help(size_t i);
const char *ms_sort_name(uint64_t sort);

#endif
