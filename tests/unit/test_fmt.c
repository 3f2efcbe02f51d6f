/* test_fmt.c - the report's formatter (lib/base/fmt.c): human durations with
 * three significant digits, the printf subset (%d %i %u %x %c %s %p %%,
 * flags '-' '0', widths, '*', %.Ns, l/ll/z), truncation into a small buffer,
 * flushing to a file descriptor, and padding that counts a UTF-8 character
 * as one column. */
#include "suites.h"

#include "base/fmt.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#define MU "\xc2\xb5" /* µ in UTF-8 */

/* Format into a fresh buffer that never flushes. */
static char out[512];

static const char *vfmt(const char *format, va_list ap)
{
	struct ms_fmt f;
	ms_fmt_init(&f, out, sizeof out, -1);
	ms_vfmt(&f, format, ap);
	return ms_fmt_str(&f);
}

static const char *fmt(const char *format, ...)
	__attribute__((format(printf, 1, 2)));
static const char *fmt(const char *format, ...)
{
	va_list ap;
	va_start(ap, format);
	const char *s = vfmt(format, ap);
	va_end(ap);
	return s;
}

/* For formats the compiler would rightly warn about. */
static const char *fmt_unchecked(const char *format, ...)
{
	va_list ap;
	va_start(ap, format);
	const char *s = vfmt(format, ap);
	va_end(ap);
	return s;
}

static const char *duration(uint64_t ns)
{
	static char d[16];
	memset(d, 0x7f, sizeof d);
	return ms_duration(d, ns);
}

/* ---- durations ---------------------------------------------------------- */

static const struct {
	uint64_t ns;
	const char *text;
} durations[] = {
	{ 0, "0 ns" },
	{ 1, "1 ns" },
	{ 812, "812 ns" },
	{ 999, "999 ns" },
	{ 1000, "1.00 " MU "s" },
	{ 1004, "1.00 " MU "s" },
	{ 1005, "1.01 " MU "s" },
	{ 1234, "1.23 " MU "s" },
	{ 1235, "1.24 " MU "s" },
	{ 9994, "9.99 " MU "s" },
	{ 10000, "10.0 " MU "s" },
	{ 12345, "12.3 " MU "s" },
	{ 99949, "99.9 " MU "s" },
	{ 100000, "100 " MU "s" },
	{ 999499, "999 " MU "s" },
	{ 999500, "1.00 ms" },
	{ 999999, "1.00 ms" },
	{ 1000000, "1.00 ms" },
	{ 4500000, "4.50 ms" },
	{ 123456789, "123 ms" },
	{ 999499999, "999 ms" },
	{ 999500000, "1.00 s" },
	{ 1000000000, "1.00 s" },
	{ 2010000000, "2.01 s" },
	{ 59000000000ull, "59.0 s" },
	{ 999999999999ull, "1000 s" },
	{ 3600000000000ull, "3600 s" },
	{ 86400000000000ull, "86400 s" },
};

START_TEST(test_fmt_duration_three_significant_digits_at_unit_boundaries)
{
	const char *got = duration(durations[_i].ns);
	ck_assert_msg(!strcmp(got, durations[_i].text), "%llu ns: \"%s\", expected \"%s\"",
		      (unsigned long long)durations[_i].ns, got, durations[_i].text);
}
END_TEST

/* 9.995 us rounds up to 10.0 us: three digits, not "10.00 us". */
static const struct {
	uint64_t ns;
	const char *text;
} decade_carries[] = {
	{ 9995, "10.0 " MU "s" },
	{ 9999, "10.0 " MU "s" },
	{ 99950, "100 " MU "s" },
	{ 99999, "100 " MU "s" },
	{ 9995000, "10.0 ms" },
	{ 99950000, "100 ms" },
	{ 9995000000ull, "10.0 s" },
	{ 99950000000ull, "100 s" },
};

START_TEST(test_fmt_duration_rounding_into_next_decade_keeps_three_digits)
{
	char report[1024] = "";
	size_t len = 0;
	unsigned bad = 0;
	for (size_t i = 0; i < sizeof decade_carries / sizeof *decade_carries; i++) {
		const char *got = duration(decade_carries[i].ns);
		if (strcmp(got, decade_carries[i].text)) {
			bad++;
			len += (size_t)snprintf(report + len, sizeof report - len,
						" %llu ns: \"%s\" (expected \"%s\");",
						(unsigned long long)decade_carries[i].ns,
						got, decade_carries[i].text);
		}
	}
	ck_assert_msg(bad == 0, "%u wrong:%s", bad, report);
}
END_TEST

START_TEST(test_fmt_duration_largest_value_does_not_wrap)
{
	/* 18446744073.709551615 s */
	ck_assert_str_eq(duration(UINT64_MAX), "18446744074 s");
	ck_assert_str_eq(duration(UINT64_MAX - 1000000000u), "18446744073 s");
}
END_TEST

START_TEST(test_fmt_duration_always_fits_16_bytes)
{
	char d[32];
	for (uint64_t ns = 1; ns && ns < UINT64_MAX / 10; ns *= 10)
		for (uint64_t m = 1; m <= 9; m++) {
			const uint64_t vals[] = { ns * m, ns * m - 1, ns * m + ns / 2 };
			for (int j = 0; j < 3; j++) {
				memset(d, 'Z', sizeof d);
				ms_duration(d, vals[j]);
				if (memchr(d, 0, 16) == NULL)
					ck_abort_msg("%llu ns: no NUL in 16 bytes",
						     (unsigned long long)vals[j]);
				for (int k = 16; k < 32; k++)
					if (d[k] != 'Z')
						ck_abort_msg("%llu ns: wrote past 16 bytes",
							     (unsigned long long)vals[j]);
			}
		}
}
END_TEST

/* ---- the printf subset -------------------------------------------------- */

START_TEST(test_fmt_signed_integers)
{
	ck_assert_str_eq(fmt("%d", 0), "0");
	ck_assert_str_eq(fmt("%d", 42), "42");
	ck_assert_str_eq(fmt("%d", -42), "-42");
	ck_assert_str_eq(fmt("%i", -7), "-7");
	ck_assert_str_eq(fmt("%d", INT_MAX), "2147483647");
	ck_assert_str_eq(fmt("%d", INT_MIN), "-2147483648");
	ck_assert_str_eq(fmt("%ld", LONG_MIN), "-9223372036854775808");
	ck_assert_str_eq(fmt("%lld", LLONG_MIN), "-9223372036854775808");
	ck_assert_str_eq(fmt("%lld", LLONG_MAX), "9223372036854775807");
	ck_assert_str_eq(fmt("%lld", -1LL), "-1");
	ck_assert_str_eq(fmt("%zd", (ssize_t)-5), "-5");
	/* an int argument after a long long one is read as an int */
	ck_assert_str_eq(fmt("%lld %d", LLONG_MIN, -3), "-9223372036854775808 -3");
}
END_TEST

START_TEST(test_fmt_unsigned_and_hex_integers)
{
	ck_assert_str_eq(fmt("%u", 0u), "0");
	ck_assert_str_eq(fmt("%u", UINT_MAX), "4294967295");
	ck_assert_str_eq(fmt("%lu", ULONG_MAX), "18446744073709551615");
	ck_assert_str_eq(fmt("%llu", ULLONG_MAX), "18446744073709551615");
	ck_assert_str_eq(fmt("%zu", SIZE_MAX), "18446744073709551615");
	ck_assert_str_eq(fmt("%x", 0u), "0");
	ck_assert_str_eq(fmt("%x", 255u), "ff");
	ck_assert_str_eq(fmt("%x", 0xdeadbeefu), "deadbeef");
	ck_assert_str_eq(fmt("%lx", 0x123456789abcUL), "123456789abc");
	ck_assert_str_eq(fmt("%llx", ULLONG_MAX), "ffffffffffffffff");
	ck_assert_str_eq(fmt("%zx", (size_t)4096), "1000");
}
END_TEST

START_TEST(test_fmt_width_and_flags)
{
	ck_assert_str_eq(fmt("[%5d]", 42), "[   42]");
	ck_assert_str_eq(fmt("[%-5d]", 42), "[42   ]");
	ck_assert_str_eq(fmt("[%05d]", 42), "[00042]");
	ck_assert_str_eq(fmt_unchecked("[%-05d]", 42), "[42   ]"); /* '-' wins over '0' */
	ck_assert_str_eq(fmt("[%5d]", -42), "[  -42]");
	ck_assert_str_eq(fmt("[%-5d]", -42), "[-42  ]");
	ck_assert_str_eq(fmt("[%2d]", 12345), "[12345]"); /* never cut */
	ck_assert_str_eq(fmt("[%08x]", 0xbeefu), "[0000beef]");
	ck_assert_str_eq(fmt("[%20llu]", ULLONG_MAX), "[18446744073709551615]");
	ck_assert_str_eq(fmt("[%*d]", 6, 42), "[    42]");
	ck_assert_str_eq(fmt("[%-*d]", 6, 42), "[42    ]");
	ck_assert_str_eq(fmt("[%*d]", -6, 42), "[42    ]"); /* negative: left */
	ck_assert_str_eq(fmt("[%0*u]", 4, 7u), "[0007]");
	ck_assert_str_eq(fmt("[%3c]", 'x'), "[  x]");
	ck_assert_str_eq(fmt("[%-3c]", 'x'), "[x  ]");
	ck_assert_str_eq(fmt("[%c%c]", 'o', 'k'), "[ok]");
}
END_TEST

START_TEST(test_fmt_zero_padded_negative_number_keeps_sign_first)
{
	/* as printf: the zeros go between the sign and the digits */
	ck_assert_str_eq(fmt("[%05d]", -42), "[-0042]");
	ck_assert_str_eq(fmt("[%06lld]", -1LL), "[-00001]");
}
END_TEST

START_TEST(test_fmt_strings_and_precision)
{
	ck_assert_str_eq(fmt("%s", "abc"), "abc");
	ck_assert_str_eq(fmt("%s", ""), "");
	ck_assert_str_eq(fmt("[%10s]", "abc"), "[       abc]");
	ck_assert_str_eq(fmt("[%-10s]", "abc"), "[abc       ]");
	ck_assert_str_eq(fmt("[%.3s]", "abcdef"), "[abc]");
	ck_assert_str_eq(fmt("[%.10s]", "abc"), "[abc]");
	ck_assert_str_eq(fmt("[%.0s]", "abc"), "[]");
	ck_assert_str_eq(fmt("[%5.2s]", "abc"), "[   ab]");
	ck_assert_str_eq(fmt("[%-5.2s]", "abc"), "[ab   ]");
	ck_assert_str_eq(fmt("[%*s]", 4, "ab"), "[  ab]");
	ck_assert_str_eq(fmt_unchecked("%s", (const char *)NULL), "(null)");
	ck_assert_str_eq(fmt("%s=%s", "a", "b"), "a=b");
}
END_TEST

START_TEST(test_fmt_pointers_and_percent)
{
	ck_assert_str_eq(fmt("%p", (void *)0x1234), "0x1234");
	ck_assert_str_eq(fmt("%p", (void *)0x7ffd3c2a9e58ull), "0x7ffd3c2a9e58");
	ck_assert_str_eq(fmt("[%16p]", (void *)0x7ffd3c2a9e58ull),
			 "[  0x7ffd3c2a9e58]");
	ck_assert_str_eq(fmt("[%-16p]", (void *)0x7ffd3c2a9e58ull),
			 "[0x7ffd3c2a9e58  ]");
	ck_assert_str_eq(fmt("%%"), "%");
	ck_assert_str_eq(fmt("100%%"), "100%");
	ck_assert_str_eq(fmt("a%%b%dc", 5), "a%b5c");
	/* an unknown conversion is copied; a lone '%' at the end ends output */
	ck_assert_str_eq(fmt_unchecked("[%q]", 0), "[%q]");
	ck_assert_str_eq(fmt_unchecked("abc%", 0), "abc");
}
END_TEST

/* ---- truncation, flushing, errors --------------------------------------- */

START_TEST(test_fmt_small_buffer_truncates_and_never_overruns)
{
	char buf[16];
	struct ms_fmt f;
	memset(buf, 'Z', sizeof buf);
	ms_fmt_init(&f, buf, 8, -1);
	ms_fmt(&f, "%s", "hello, world");
	ck_assert_str_eq(ms_fmt_str(&f), "hello, ");
	ck_assert_uint_eq(f.len, 7);
	ms_fmt(&f, "%d%100s%-50d%p", 12345, "x", 1, (void *)&f);
	ck_assert_str_eq(ms_fmt_str(&f), "hello, ");
	for (int i = 8; i < 16; i++)
		ck_assert_int_eq(buf[i], 'Z');

	memset(buf, 'Z', sizeof buf);
	ms_fmt_init(&f, buf, 8, -1);
	ms_fmt(&f, "%100d", 7);
	ck_assert_str_eq(ms_fmt_str(&f), "       ");
	for (int i = 8; i < 16; i++)
		ck_assert_int_eq(buf[i], 'Z');

	memset(buf, 'Z', sizeof buf);
	ms_fmt_init(&f, buf, 1, -1);
	ms_fmt(&f, "abc%d", 1);
	ck_assert_str_eq(ms_fmt_str(&f), "");
	ck_assert_int_eq(buf[1], 'Z');

	memset(buf, 'Z', sizeof buf);
	ms_fmt_init(&f, buf, 0, -1);
	ms_fmt(&f, "abc%d", 1);
	ms_fmt_str(&f);
	for (int i = 0; i < 16; i++)
		ck_assert_int_eq(buf[i], 'Z');
}
END_TEST

START_TEST(test_fmt_small_buffer_flushes_everything_to_fd)
{
	int p[2];
	char buf[8], got[4096], want[4096];
	struct ms_fmt f;
	ck_assert_int_eq(pipe(p), 0);
	ms_fmt_init(&f, buf, sizeof buf, p[1]);
	size_t wlen = 0;
	for (int i = 0; i < 100; i++) {
		ms_fmt(&f, "line %d: %-6s|%5x|%s\n", i, "ab", (unsigned)i * 977,
		       "µs");
		wlen += (size_t)snprintf(want + wlen, sizeof want - wlen,
					 "line %d: %-6s|%5x|%s\n", i, "ab",
					 (unsigned)i * 977, "µs");
	}
	ms_fmt_flush(&f);
	ck_assert_int_eq(f.failed, 0);
	ck_assert_uint_eq(f.len, 0);
	close(p[1]);
	size_t glen = 0;
	ssize_t n;
	while ((n = read(p[0], got + glen, sizeof got - glen)) > 0)
		glen += (size_t)n;
	close(p[0]);
	ck_assert_uint_eq(glen, wlen);
	ck_assert_int_eq(memcmp(got, want, wlen), 0);
}
END_TEST

START_TEST(test_fmt_failed_write_is_remembered_and_keeps_errno)
{
	char buf[8];
	struct ms_fmt f;
	int fd = open("/dev/full", O_WRONLY);
	if (fd < 0)
		return; /* no /dev/full here: nothing to test */
	ms_fmt_init(&f, buf, sizeof buf, fd);
	errno = 1234;
	ms_fmt(&f, "%s", "more than eight bytes");
	ms_fmt_flush(&f);
	ck_assert_int_eq(f.failed, ENOSPC); /* the errno of the failed write */
	ms_fmt(&f, "%s", "dropped, not written");
	ck_assert_uint_lt(f.len, sizeof buf);
	ck_assert_int_eq(errno, 1234);
	ck_assert_int_eq(ms_write_all(fd, "x", 1), ENOSPC);
	ck_assert_int_eq(errno, 1234);
	close(fd);
}
END_TEST

/* ---- UTF-8 -------------------------------------------------------------- */

START_TEST(test_fmt_padding_counts_utf8_character_as_one_column)
{
	ck_assert_str_eq(fmt("[%-8s]", MU "s"), "[" MU "s      ]");
	ck_assert_str_eq(fmt("[%8s]", MU "s"), "[      " MU "s]");
	ck_assert_str_eq(fmt("[%8s]", "12.3 " MU "s"), "[ 12.3 " MU "s]");
	ck_assert_str_eq(fmt("[%5s]", "\xc3\xa9"), "[    \xc3\xa9]"); /* é */
	/* a three-byte character: one column */
	ck_assert_str_eq(fmt("[%-3s]", "\xe2\x86\x92"), "[\xe2\x86\x92  ]"); /* → */
	/* columns line up whatever the unit */
	char d1[16], d2[16];
	char a[64], b[64];
	strcpy(a, fmt("[%10s]", ms_duration(d1, 12345)));   /* 12.3 µs */
	strcpy(b, fmt("[%10s]", ms_duration(d2, 4500000))); /* 4.50 ms */
	ck_assert_str_eq(a, "[   12.3 " MU "s]");
	ck_assert_str_eq(b, "[   4.50 ms]");
}
END_TEST

Suite *fmt_suite(void)
{
	Suite *s = suite_create("fmt");
	TCase *tc = tcase_create("duration");
	tcase_add_loop_test(tc, test_fmt_duration_three_significant_digits_at_unit_boundaries,
			    0, (int)(sizeof durations / sizeof *durations));
	tcase_add_test(tc, test_fmt_duration_rounding_into_next_decade_keeps_three_digits);
	tcase_add_test(tc, test_fmt_duration_largest_value_does_not_wrap);
	tcase_add_test(tc, test_fmt_duration_always_fits_16_bytes);
	suite_add_tcase(s, tc);

	tc = tcase_create("printf");
	tcase_add_test(tc, test_fmt_signed_integers);
	tcase_add_test(tc, test_fmt_unsigned_and_hex_integers);
	tcase_add_test(tc, test_fmt_width_and_flags);
	tcase_add_test(tc, test_fmt_zero_padded_negative_number_keeps_sign_first);
	tcase_add_test(tc, test_fmt_strings_and_precision);
	tcase_add_test(tc, test_fmt_pointers_and_percent);
	suite_add_tcase(s, tc);

	tc = tcase_create("buffer");
	tcase_add_test(tc, test_fmt_small_buffer_truncates_and_never_overruns);
	tcase_add_test(tc, test_fmt_small_buffer_flushes_everything_to_fd);
	tcase_add_test(tc, test_fmt_failed_write_is_remembered_and_keeps_errno);
	tcase_add_test(tc, test_fmt_padding_counts_utf8_character_as_one_column);
	suite_add_tcase(s, tc);
	return s;
}
