/* test_options.c - the MUTEXSTAT_* settings (lib/base/options.c): defaults,
 * every accepted form of each value, rounding to powers of two, and the one
 * warning -- naming the variable, the value and the default used -- that
 * each unacceptable value earns.
 *
 * The environment is a fake one (a small name=value table handed to
 * ms_options_load as its getter), and warnings are collected instead of
 * printed. */
#include "suites.h"

#include "base/options.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ---- a fake environment and a warning collector ------------------------- */

#define MAX_VARS 24
static struct {
	const char *name, *value;
} env[MAX_VARS];
static unsigned nenv;

static char warnings[4096];
static unsigned nwarnings;

static void setup(void)
{
	nenv = 0;
	nwarnings = 0;
	warnings[0] = 0;
	memset(&ms_opt, 0xa5, sizeof ms_opt); /* nothing left from before */
}

static void env_set(const char *name, const char *value)
{
	ck_assert_uint_lt(nenv, MAX_VARS);
	env[nenv].name = name;
	env[nenv].value = value;
	nenv++;
}

static const char *fake_getenv(const char *name)
{
	for (unsigned i = 0; i < nenv; i++)
		if (!strcmp(env[i].name, name))
			return env[i].value;
	return NULL;
}

static void collect_warning(const char *msg)
{
	size_t len = strlen(warnings);
	ck_assert_uint_lt(len + strlen(msg), sizeof warnings);
	strcpy(warnings + len, msg);
	nwarnings++;
}

static void load(void)
{
	ms_options_load(fake_getenv, collect_warning);
}

#define DEF_TABLE_SIZE 1048576u
#define DEF_HISTORY 16u
#define DEF_TOP 10u

static void assert_defaults(void)
{
	ck_assert_uint_eq(ms_opt.table_size, DEF_TABLE_SIZE);
	ck_assert_uint_eq(ms_opt.history, DEF_HISTORY);
	ck_assert_uint_eq(ms_opt.top, DEF_TOP);
	ck_assert_uint_eq(ms_opt.sort, MS_SORT_WAIT);
	ck_assert_uint_eq(ms_opt.exit_report, 1);
	ck_assert_ptr_null(ms_opt.output);
	ck_assert_uint_eq(ms_opt.frames, 16);
	ck_assert_uint_eq(ms_opt.stack_sample, 8);
	ck_assert_uint_eq(ms_opt.stack_memory, 64);
	ck_assert_uint_eq(ms_opt.exit_code, 0);
	ck_assert_uint_eq(ms_opt.on_crash, 0); /* off: see doc/processes-and-signals.md */
	ck_assert_uint_eq(ms_opt.follow, 1);
	ck_assert_uint_eq(ms_opt.track, 7); /* mutex, rwlock, spin */
	ck_assert_uint_eq(ms_opt.quiet, 0);
	ck_assert_ptr_null(ms_opt.run_dir);
	ck_assert_uint_eq(ms_opt.run_root, 0);
	ck_assert_ptr_null(ms_opt.suppressions);
	ck_assert_uint_eq(ms_opt.interval_ms, 0); /* off */
	ck_assert_uint_eq(ms_opt.keep, 0);        /* all */
}

/* ---- defaults ----------------------------------------------------------- */

START_TEST(test_options_empty_environment_gives_defaults_without_warning)
{
	load();
	assert_defaults();
	ck_assert_uint_eq(nwarnings, 0);
}
END_TEST

START_TEST(test_options_no_getter_gives_defaults)
{
	ms_options_load(NULL, collect_warning);
	assert_defaults();
	ck_assert_uint_eq(nwarnings, 0);
}
END_TEST

START_TEST(test_options_reload_forgets_previous_values)
{
	env_set("MUTEXSTAT_TOP", "5");
	env_set("MUTEXSTAT_SORT", "hold");
	env_set("MUTEXSTAT_OUTPUT", "/tmp/report");
	load();
	ck_assert_uint_eq(ms_opt.top, 5);
	nenv = 0;
	load();
	assert_defaults();
}
END_TEST

/* The run's directory and the report's path are two settings with
 * copies of their own: one never shows through the other. */
START_TEST(test_options_run_dir_and_output_kept_apart)
{
	env_set("MUTEXSTAT_OUTPUT", "/tmp/report.%p");
	env_set("MUTEXSTAT_RUN_DIR", "/tmp/run.x");
	env_set("MUTEXSTAT_RUN_ROOT", "4242");
	env_set("MUTEXSTAT_QUIET", "1");
	load();
	ck_assert_str_eq(ms_opt.output, "/tmp/report.%p");
	ck_assert_str_eq(ms_opt.run_dir, "/tmp/run.x");
	ck_assert_uint_eq(ms_opt.run_root, 4242);
	ck_assert_uint_eq(ms_opt.quiet, 1);
	ck_assert_uint_eq(nwarnings, 0);
}
END_TEST

START_TEST(test_options_bad_run_root_and_quiet_warn_and_default)
{
	env_set("MUTEXSTAT_RUN_ROOT", "-1");
	env_set("MUTEXSTAT_QUIET", "yes");
	load();
	ck_assert_uint_eq(ms_opt.run_root, 0);
	ck_assert_uint_eq(ms_opt.quiet, 0);
	ck_assert_uint_eq(nwarnings, 2);
}
END_TEST

START_TEST(test_options_every_default_is_itself_valid)
{
	ck_assert_uint_eq(ms_options_count(), 23);
	for (size_t i = 0; i < ms_options_count(); i++) {
		ck_assert_int_eq(strncmp(ms_option_name(i), "MUTEXSTAT_", 10), 0);
		ck_assert_ptr_nonnull(ms_option_help(i));
		ck_assert_uint_gt(strlen(ms_option_help(i)), 0);
		env_set(ms_option_name(i), ms_option_default(i));
	}
	load();
	ck_assert_uint_eq(nwarnings, 0);
	assert_defaults();
}
END_TEST

/* ---- valid values ------------------------------------------------------- */

enum field { TABLE_SIZE, HISTORY, TOP, SORT, EXIT_REPORT, INTERVAL, KEEP };

static uint64_t field_value(enum field f)
{
	switch (f) {
	case TABLE_SIZE: return ms_opt.table_size;
	case HISTORY: return ms_opt.history;
	case TOP: return ms_opt.top;
	case SORT: return ms_opt.sort;
	case EXIT_REPORT: return ms_opt.exit_report;
	case INTERVAL: return ms_opt.interval_ms;
	case KEEP: return ms_opt.keep;
	}
	return 0;
}

static const struct valid {
	const char *name, *value;
	enum field field;
	uint64_t expect;
} valid[] = {
	{ "MUTEXSTAT_TABLE_SIZE", "64", TABLE_SIZE, 64 },
	{ "MUTEXSTAT_TABLE_SIZE", "1024", TABLE_SIZE, 1024 },
	{ "MUTEXSTAT_TABLE_SIZE", "1048576", TABLE_SIZE, 1048576 },
	{ "MUTEXSTAT_TABLE_SIZE", "67108864", TABLE_SIZE, 67108864 },
	{ "MUTEXSTAT_TABLE_SIZE", "0004096", TABLE_SIZE, 4096 },
	/* rounded up to a power of two */
	{ "MUTEXSTAT_TABLE_SIZE", "100", TABLE_SIZE, 128 },
	{ "MUTEXSTAT_TABLE_SIZE", "65", TABLE_SIZE, 128 },
	{ "MUTEXSTAT_TABLE_SIZE", "1000000", TABLE_SIZE, 1048576 },
	{ "MUTEXSTAT_TABLE_SIZE", "67108863", TABLE_SIZE, 67108864 },
	{ "MUTEXSTAT_HISTORY", "1", HISTORY, 1 },
	{ "MUTEXSTAT_HISTORY", "2", HISTORY, 2 },
	{ "MUTEXSTAT_HISTORY", "3", HISTORY, 4 },
	{ "MUTEXSTAT_HISTORY", "5", HISTORY, 8 },
	{ "MUTEXSTAT_HISTORY", "16", HISTORY, 16 },
	{ "MUTEXSTAT_HISTORY", "17", HISTORY, 32 },
	{ "MUTEXSTAT_HISTORY", "1000", HISTORY, 1024 },
	{ "MUTEXSTAT_HISTORY", "1024", HISTORY, 1024 },
	{ "MUTEXSTAT_TOP", "1", TOP, 1 },
	{ "MUTEXSTAT_TOP", "25", TOP, 25 },
	{ "MUTEXSTAT_TOP", "007", TOP, 7 },
	{ "MUTEXSTAT_TOP", "100000", TOP, 100000 },
	{ "MUTEXSTAT_SORT", "wait", SORT, MS_SORT_WAIT },
	{ "MUTEXSTAT_SORT", "wait-max", SORT, MS_SORT_WAIT_MAX },
	{ "MUTEXSTAT_SORT", "contended", SORT, MS_SORT_CONTENDED },
	{ "MUTEXSTAT_SORT", "acquired", SORT, MS_SORT_ACQUIRED },
	{ "MUTEXSTAT_SORT", "hold", SORT, MS_SORT_HOLD },
	{ "MUTEXSTAT_SORT", "hold-max", SORT, MS_SORT_HOLD_MAX },
	{ "MUTEXSTAT_SORT", "changes", SORT, MS_SORT_CHANGES },
	{ "MUTEXSTAT_EXIT_REPORT", "0", EXIT_REPORT, 0 },
	{ "MUTEXSTAT_EXIT_REPORT", "1", EXIT_REPORT, 1 },
	/* seconds, kept as milliseconds; unset or empty is off */
	{ "MUTEXSTAT_INTERVAL", "", INTERVAL, 0 },
	{ "MUTEXSTAT_INTERVAL", "10", INTERVAL, 10000 },
	{ "MUTEXSTAT_INTERVAL", "0.1", INTERVAL, 100 },
	{ "MUTEXSTAT_INTERVAL", "0.5", INTERVAL, 500 },
	{ "MUTEXSTAT_INTERVAL", "0", INTERVAL, 0 }, /* off, as the watchdog's 0 */
	{ "MUTEXSTAT_INTERVAL", "0.0", INTERVAL, 0 },
	{ "MUTEXSTAT_INTERVAL", "2.25", INTERVAL, 2250 },
	{ "MUTEXSTAT_INTERVAL", "1.005", INTERVAL, 1005 },
	{ "MUTEXSTAT_INTERVAL", "86400", INTERVAL, 86400000 },
	{ "MUTEXSTAT_KEEP", "0", KEEP, 0 },
	{ "MUTEXSTAT_KEEP", "24", KEEP, 24 },
};

START_TEST(test_options_valid_value_is_used_without_warning)
{
	const struct valid *c = &valid[_i];
	env_set(c->name, c->value);
	load();
	ck_assert_msg(field_value(c->field) == c->expect,
		      "%s=%s gave %llu, expected %llu", c->name, c->value,
		      (unsigned long long)field_value(c->field),
		      (unsigned long long)c->expect);
	ck_assert_msg(nwarnings == 0, "%s=%s warned: %s", c->name, c->value,
		      warnings);
}
END_TEST

START_TEST(test_options_output_path_is_kept_and_empty_means_stderr)
{
	env_set("MUTEXSTAT_OUTPUT", "/tmp/mutexstat.%p.txt");
	load();
	ck_assert_ptr_nonnull(ms_opt.output);
	ck_assert_str_eq(ms_opt.output, "/tmp/mutexstat.%p.txt");
	ck_assert_uint_eq(nwarnings, 0);

	env[0].value = "";
	load();
	ck_assert_ptr_null(ms_opt.output);
	ck_assert_uint_eq(nwarnings, 0);
}
END_TEST

START_TEST(test_options_sort_names_round_trip)
{
	const char *names[] = { "wait", "wait-max", "contended", "acquired",
				"hold", "hold-max", "changes" };
	for (uint64_t i = 0; i < sizeof names / sizeof *names; i++) {
		ck_assert_str_eq(ms_sort_name(i), names[i]);
		nenv = 0;
		env_set("MUTEXSTAT_SORT", ms_sort_name(i));
		load();
		ck_assert_uint_eq(ms_opt.sort, i);
	}
	ck_assert_str_eq(ms_sort_name(7), "?");
	ck_assert_str_eq(ms_sort_name(UINT64_MAX), "?");
	ck_assert_uint_eq(nwarnings, 0);
}
END_TEST

/* ---- invalid values ----------------------------------------------------- */

#define NUM_TOP "a number from 1 to 100000; using 10\n"
#define NUM_TABLE "a number from 64 to 67108864; using 1048576\n"
#define NUM_HISTORY "a number from 1 to 1024; using 16\n"
#define ONE_OF_SORT                                                        \
	"one of wait, wait-max, contended, acquired, hold, hold-max, changes; " \
	"using wait\n"
#define ONE_OF_EXIT "one of 0, 1; using 1\n"
#define SECONDS_INTERVAL                                                  \
	"0 (off) or a number of seconds from 0.1 to 86400 (up to 3 decimals); using none (off)\n"
#define NUM_KEEP "a number from 0 to 1000000; using 0\n"

static const struct invalid {
	const char *name, *value, *expected_tail;
} invalid[] = {
	{ "MUTEXSTAT_TOP", "abc", NUM_TOP },
	{ "MUTEXSTAT_TOP", "", NUM_TOP },
	{ "MUTEXSTAT_TOP", "0", NUM_TOP },
	{ "MUTEXSTAT_TOP", "100001", NUM_TOP },
	{ "MUTEXSTAT_TOP", "-5", NUM_TOP },
	{ "MUTEXSTAT_TOP", "10x", NUM_TOP },
	{ "MUTEXSTAT_TOP", " 10", NUM_TOP },
	{ "MUTEXSTAT_TOP", "10 ", NUM_TOP },
	{ "MUTEXSTAT_TOP", "1e3", NUM_TOP },
	{ "MUTEXSTAT_TOP", "0x10", NUM_TOP },
	{ "MUTEXSTAT_TOP", "99999999999999999999999", NUM_TOP },
	{ "MUTEXSTAT_TOP", "18446744073709551617", NUM_TOP },
	{ "MUTEXSTAT_TABLE_SIZE", "63", NUM_TABLE },
	{ "MUTEXSTAT_TABLE_SIZE", "0", NUM_TABLE },
	{ "MUTEXSTAT_TABLE_SIZE", "", NUM_TABLE },
	{ "MUTEXSTAT_TABLE_SIZE", "67108865", NUM_TABLE },
	{ "MUTEXSTAT_TABLE_SIZE", "1048576k", NUM_TABLE },
	{ "MUTEXSTAT_TABLE_SIZE", "-1024", NUM_TABLE },
	{ "MUTEXSTAT_HISTORY", "0", NUM_HISTORY },
	{ "MUTEXSTAT_HISTORY", "1025", NUM_HISTORY },
	{ "MUTEXSTAT_HISTORY", "2048", NUM_HISTORY },
	{ "MUTEXSTAT_HISTORY", "-1", NUM_HISTORY },
	{ "MUTEXSTAT_HISTORY", "sixteen", NUM_HISTORY },
	{ "MUTEXSTAT_SORT", "fastest", ONE_OF_SORT },
	{ "MUTEXSTAT_SORT", "", ONE_OF_SORT },
	{ "MUTEXSTAT_SORT", "wait ", ONE_OF_SORT },
	{ "MUTEXSTAT_SORT", "hold_max", ONE_OF_SORT },
	{ "MUTEXSTAT_SORT", "0", ONE_OF_SORT },
	{ "MUTEXSTAT_EXIT_REPORT", "yes", ONE_OF_EXIT },
	{ "MUTEXSTAT_EXIT_REPORT", "2", ONE_OF_EXIT },
	{ "MUTEXSTAT_EXIT_REPORT", "", ONE_OF_EXIT },
	{ "MUTEXSTAT_EXIT_REPORT", "true", ONE_OF_EXIT },
	{ "MUTEXSTAT_INTERVAL", "0.09", SECONDS_INTERVAL },
	{ "MUTEXSTAT_INTERVAL", "-5", SECONDS_INTERVAL },
	{ "MUTEXSTAT_INTERVAL", "ten", SECONDS_INTERVAL },
	{ "MUTEXSTAT_INTERVAL", "10s", SECONDS_INTERVAL },
	{ "MUTEXSTAT_INTERVAL", "10.", SECONDS_INTERVAL },
	{ "MUTEXSTAT_INTERVAL", ".5", SECONDS_INTERVAL },
	{ "MUTEXSTAT_INTERVAL", "1.0001", SECONDS_INTERVAL },
	{ "MUTEXSTAT_INTERVAL", "1.2.3", SECONDS_INTERVAL },
	{ "MUTEXSTAT_INTERVAL", "86401", SECONDS_INTERVAL },
	{ "MUTEXSTAT_INTERVAL", "99999999999999999999", SECONDS_INTERVAL },
	{ "MUTEXSTAT_INTERVAL", "18446744073709551.999", SECONDS_INTERVAL }, /* wraps */
	{ "MUTEXSTAT_KEEP", "-1", NUM_KEEP },
	{ "MUTEXSTAT_KEEP", "all", NUM_KEEP },
};

START_TEST(test_options_invalid_value_warns_once_and_uses_default)
{
	const struct invalid *c = &invalid[_i];
	char expected[512];
	snprintf(expected, sizeof expected, "mutexstat: %s='%s' is not %s",
		 c->name, c->value, c->expected_tail);
	env_set(c->name, c->value);
	load();
	assert_defaults();
	ck_assert_msg(nwarnings == 1, "%s='%s': %u warnings", c->name, c->value,
		      nwarnings);
	ck_assert_str_eq(warnings, expected);
}
END_TEST

START_TEST(test_options_several_invalid_values_warn_once_each)
{
	env_set("MUTEXSTAT_TOP", "abc");
	env_set("MUTEXSTAT_SORT", "fastest");
	env_set("MUTEXSTAT_HISTORY", "0");
	env_set("MUTEXSTAT_TABLE_SIZE", "100");   /* valid: rounded */
	env_set("MUTEXSTAT_EXIT_REPORT", "0");    /* valid */
	load();
	ck_assert_uint_eq(nwarnings, 3);
	ck_assert_str_eq(warnings,
			 "mutexstat: MUTEXSTAT_HISTORY='0' is not " NUM_HISTORY
			 "mutexstat: MUTEXSTAT_TOP='abc' is not " NUM_TOP
			 "mutexstat: MUTEXSTAT_SORT='fastest' is not " ONE_OF_SORT);
	ck_assert_uint_eq(ms_opt.table_size, 128);
	ck_assert_uint_eq(ms_opt.exit_report, 0);
	ck_assert_uint_eq(ms_opt.history, DEF_HISTORY);
	ck_assert_uint_eq(ms_opt.top, DEF_TOP);
	ck_assert_uint_eq(ms_opt.sort, MS_SORT_WAIT);
}
END_TEST

START_TEST(test_options_long_invalid_value_keeps_whole_warning_line)
{
	char value[1000];
	memset(value, 'x', sizeof value - 1);
	value[sizeof value - 1] = 0;
	env_set("MUTEXSTAT_TOP", value);
	load();
	ck_assert_uint_eq(nwarnings, 1);
	ck_assert_int_eq(strncmp(warnings, "mutexstat: MUTEXSTAT_TOP='xxx", 29), 0);
	size_t len = strlen(warnings), tail = strlen("' is not " NUM_TOP);
	ck_assert_uint_lt(len, 400);
	ck_assert_str_eq(warnings + len - tail, "' is not " NUM_TOP);
	ck_assert_uint_eq(ms_opt.top, DEF_TOP);
}
END_TEST

Suite *options_suite(void)
{
	Suite *s = suite_create("options");
	TCase *tc = tcase_create("options");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_options_empty_environment_gives_defaults_without_warning);
	tcase_add_test(tc, test_options_no_getter_gives_defaults);
	tcase_add_test(tc, test_options_reload_forgets_previous_values);
	tcase_add_test(tc, test_options_every_default_is_itself_valid);
	tcase_add_test(tc, test_options_run_dir_and_output_kept_apart);
	tcase_add_test(tc, test_options_bad_run_root_and_quiet_warn_and_default);
	tcase_add_loop_test(tc, test_options_valid_value_is_used_without_warning, 0,
			    (int)(sizeof valid / sizeof *valid));
	tcase_add_test(tc, test_options_output_path_is_kept_and_empty_means_stderr);
	tcase_add_test(tc, test_options_sort_names_round_trip);
	tcase_add_loop_test(tc, test_options_invalid_value_warns_once_and_uses_default,
			    0, (int)(sizeof invalid / sizeof *invalid));
	tcase_add_test(tc, test_options_several_invalid_values_warn_once_each);
	tcase_add_test(tc, test_options_long_invalid_value_keeps_whole_warning_line);
	suite_add_tcase(s, tc);
	return s;
}
