/* test_follow.c - MUTEXSTAT_FOLLOW=0 taking the library out of LD_PRELOAD
 * (lib/runtime/follow.c): which entries go (by file name, by path, by another name
 * of the same file), what stays and in which order, separators, a list
 * too long to rewrite, and the edit of environ itself (the entry replaced
 * or removed, never the strings the program's environment holds). */
#include "suites.h"

#include "runtime/follow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char out[256];

static const char *strip(const char *in, const char *self)
{
	int n = ms_follow_strip(in, self, out, sizeof out);
	ck_assert_int_eq(n, (int)strlen(out));
	return out;
}

START_TEST(test_follow_strip_drops_the_library_by_file_name)
{
	ck_assert_str_eq(strip("/usr/lib/libmutexstat.so.0", NULL), "");
	ck_assert_str_eq(strip("libmutexstat.so", NULL), "");
	ck_assert_str_eq(strip("/x/liba.so:/b/libmutexstat.so.0", NULL), "/x/liba.so");
	ck_assert_str_eq(strip("/b/libmutexstat.so.0 /x/liba.so", NULL), "/x/liba.so");
}
END_TEST

START_TEST(test_follow_strip_keeps_the_others_in_order_with_their_separators)
{
	ck_assert_str_eq(strip("a.so:/b/libmutexstat.so:c.so", NULL), "a.so:c.so");
	ck_assert_str_eq(strip("a.so  c.so", NULL), "a.so  c.so");
	ck_assert_str_eq(strip("::a.so::", NULL), "a.so");
	ck_assert_str_eq(strip("liba.so libmutexstatx.so", NULL), "liba.so libmutexstatx.so");
	ck_assert_str_eq(strip("libnotmutexstat.so", NULL), "libnotmutexstat.so");
}
END_TEST

START_TEST(test_follow_strip_drops_another_name_of_the_same_file)
{
	char dir[] = "/tmp/ms-follow.XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char self[64], link[64], list[160];
	snprintf(self, sizeof self, "%s/ours.so", dir);
	snprintf(link, sizeof link, "%s/renamed.so", dir);
	FILE *f = fopen(self, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	ck_assert_int_eq(symlink(self, link), 0);
	snprintf(list, sizeof list, "/x/a.so:%s:%s", link, self);
	ck_assert_str_eq(strip(list, self), "/x/a.so");
	unlink(link);
	unlink(self);
	rmdir(dir);
}
END_TEST

START_TEST(test_follow_strip_refuses_a_list_longer_than_its_room)
{
	char small[8];
	ck_assert_int_eq(ms_follow_strip("/x/liba.so", NULL, small, sizeof small), -1);
}
END_TEST

extern char **environ;

START_TEST(test_follow_stop_replaces_the_entry_and_leaves_the_strings)
{
	char a[] = "A=1", pre[] = "LD_PRELOAD=/x/liba.so:/b/libmutexstat.so.0", b[] = "B=2";
	char *env[] = { a, pre, b, NULL };
	environ = env;
	ms_follow_stop();
	ck_assert_str_eq(env[0], "A=1");
	ck_assert_str_eq(env[1], "LD_PRELOAD=/x/liba.so");
	ck_assert_str_eq(env[2], "B=2");
	ck_assert_ptr_null(env[3]);
	ck_assert_str_eq(pre, "LD_PRELOAD=/x/liba.so:/b/libmutexstat.so.0");
}
END_TEST

START_TEST(test_follow_stop_removes_a_variable_left_empty)
{
	char a[] = "A=1", pre[] = "LD_PRELOAD=/b/libmutexstat.so.0", b[] = "B=2";
	char *env[] = { a, pre, b, NULL };
	environ = env;
	ms_follow_stop();
	ck_assert_str_eq(env[0], "A=1");
	ck_assert_str_eq(env[1], "B=2");
	ck_assert_ptr_null(env[2]);
	ck_assert_ptr_null(getenv("LD_PRELOAD"));
}
END_TEST

Suite *follow_suite(void)
{
	Suite *s = suite_create("follow");
	TCase *tc = tcase_create("strip");
	tcase_add_test(tc, test_follow_strip_drops_the_library_by_file_name);
	tcase_add_test(tc, test_follow_strip_keeps_the_others_in_order_with_their_separators);
	tcase_add_test(tc, test_follow_strip_drops_another_name_of_the_same_file);
	tcase_add_test(tc, test_follow_strip_refuses_a_list_longer_than_its_room);
	suite_add_tcase(s, tc);
	tc = tcase_create("environ");
	tcase_add_test(tc, test_follow_stop_replaces_the_entry_and_leaves_the_strings);
	tcase_add_test(tc, test_follow_stop_removes_a_variable_left_empty);
	suite_add_tcase(s, tc);
	return s;
}
