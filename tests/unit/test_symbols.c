/* test_symbols.c - cutting a named code address to a report's column
 * (ms_symbol_fit, lib/stacks/symbols.c): the source line is what stays longest. */
#include "suites.h"

#include "stacks/symbols.h"

#include <string.h>

static char buf[256];

static const char *fit(const char *s, size_t cols)
{
	strcpy(buf, s);
	return ms_symbol_fit(buf, cols);
}

#define LONG_FORM "transfer+0x2d (examples/deadlock_abba.c:61, deadlock_abba)"

START_TEST(test_symbol_fit_leaves_what_fits)
{
	ck_assert_str_eq(fit(LONG_FORM, 60), LONG_FORM);
	ck_assert_str_eq(fit("worker (contention.c:33)", 24), "worker (contention.c:33)");
}
END_TEST

START_TEST(test_symbol_fit_drops_module_offset_directory_parentheses_in_turn)
{
	ck_assert_str_eq(fit(LONG_FORM, 50), "transfer+0x2d (examples/deadlock_abba.c:61)");
	ck_assert_str_eq(fit(LONG_FORM, 43), "transfer+0x2d (examples/deadlock_abba.c:61)");
	ck_assert_str_eq(fit(LONG_FORM, 42), "transfer (examples/deadlock_abba.c:61)");
	ck_assert_str_eq(fit(LONG_FORM, 37), "transfer (deadlock_abba.c:61)");
	ck_assert_str_eq(fit(LONG_FORM, 28), "transfer deadlock_abba.c:61");
	ck_assert_str_eq(fit("churn_twice (scale.c:123)", 24), "churn_twice scale.c:123");
	/* without a line, the offset is the way to the code: it stays */
	ck_assert_str_eq(fit("helper+0x2a (libfoo.so.1)", 24), "helper+0x2a libfoo.so.1");
}
END_TEST

START_TEST(test_symbol_fit_cuts_the_function_to_its_end)
{
	/* ".." and at least the function's last 8 characters */
	ck_assert_str_eq(fit("bob_pays_alice+0x8d (examples/deadlock_abba.c:107, deadlock_abba)", 30),
			 "..ys_alice deadlock_abba.c:107");
	ck_assert_str_eq(fit("(anonymous namespace)::consumer(int)+0x177 (examples/cxx_mutex.cpp:63, "
			     "cxx_mutex)", 32),
			 "..consumer(int) cxx_mutex.cpp:63");
}
END_TEST

START_TEST(test_symbol_fit_keeps_the_source_line_alone_when_the_function_cannot)
{
	ck_assert_str_eq(fit("transfer (deadlock_abba.c:61)", 24), "deadlock_abba.c:61");
	ck_assert_str_eq(fit(LONG_FORM, 26), "deadlock_abba.c:61");
	/* and the source line's end, if it is too long itself */
	ck_assert_str_eq(fit(LONG_FORM, 12), ".._abba.c:61");
}
END_TEST

/* A frame in a stripped library has no source line: what finds the code
 * is the function and its offset, or the module and its offset -- never
 * the module's name alone, which every row of a program whose mutexes are
 * locked in such a library read. */
START_TEST(test_symbol_fit_without_a_line_keeps_function_and_offset)
{
	ck_assert_str_eq(fit("helper+0x2a (libfoo.so.1)", 20), "helper+0x2a");
	ck_assert_str_eq(fit("kvs_mutex_lock+0x9 (libkeyvaluestore-test.so.3)", 24),
			 "kvs_mutex_lock+0x9");
	ck_assert_str_eq(fit("leveldb::port::Mutex::Lock+0x9 (libleveldb.so.1d)", 24),
			 "..:port::Mutex::Lock+0x9");
	/* a C++ function's "(...)" goes before any of its name (a top
	 * table's column of node's rows read "..read(...)+0xe8") */
	ck_assert_str_eq(fit("node::worker::MessagePort::Start(...)+0x8e (node)", 24),
			 "..essagePort::Start+0x8e");
	ck_assert_str_eq(fit("node::InitializeLibuv(...)+0x16c (node)", 27),
			 "node::InitializeLibuv+0x16c");
}
END_TEST

START_TEST(test_symbol_fit_without_a_symbol_keeps_module_start_and_offset)
{
	ck_assert_str_eq(fit("libkeyvaluestore-test.so.3+0x1179", 24), "libkeyvaluestor..+0x1179");
	ck_assert_str_eq(fit("libleveldb.so.1d+0x5a0f0", 24), "libleveldb.so.1d+0x5a0f0");
	ck_assert_str_eq(fit("libleveldb.so.1d+0x5a0f0", 16), "liblev..+0x5a0f0");
}
END_TEST

START_TEST(test_symbol_fit_cuts_other_forms_at_their_end)
{
	/* (too narrow for 4 characters of the module and the offset) */
	ck_assert_str_eq(fit("libfoo.so.1+0x12345678", 12), "libfoo.so...");
	ck_assert_str_eq(fit("0x7f1234567890", 8), "0x7f1...");
	ck_assert_str_eq(fit("?", 8), "?");
}
END_TEST

Suite *symbols_suite(void)
{
	Suite *s = suite_create("symbols");
	TCase *tc = tcase_create("fit");
	tcase_add_test(tc, test_symbol_fit_leaves_what_fits);
	tcase_add_test(tc, test_symbol_fit_drops_module_offset_directory_parentheses_in_turn);
	tcase_add_test(tc, test_symbol_fit_cuts_the_function_to_its_end);
	tcase_add_test(tc, test_symbol_fit_keeps_the_source_line_alone_when_the_function_cannot);
	tcase_add_test(tc, test_symbol_fit_without_a_line_keeps_function_and_offset);
	tcase_add_test(tc, test_symbol_fit_without_a_symbol_keeps_module_start_and_offset);
	tcase_add_test(tc, test_symbol_fit_cuts_other_forms_at_their_end);
	suite_add_tcase(s, tc);
	return s;
}
