/* fmt.h - a small printf into a caller's buffer, flushed to a file
 * descriptor when full.  The report uses it instead of stdio: it never
 * allocates, never takes a lock, and keeps errno as it found it, so it is
 * safe at exit, in mutexstat_dump() and from a signal handler. */
#ifndef MUTEXSTAT_FMT_H
#define MUTEXSTAT_FMT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

struct ms_fmt {
	char *buf;
	size_t cap, len;
	int fd;     /* -1: keep in the buffer, truncating */
	int failed; /* errno of a failed write; later output is dropped */
};

void ms_fmt_init(struct ms_fmt *f, char *buf, size_t cap, int fd);
/* Conversions: %d %i %u %x %c %s %p %%, with flags '-' '0', a width or '*',
 * a precision for %s (digits or '*'), and the length modifiers l, ll, z. */
void ms_fmt(struct ms_fmt *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void ms_vfmt(struct ms_fmt *f, const char *fmt, va_list ap);
void ms_fmt_flush(struct ms_fmt *f);
const char *ms_fmt_str(struct ms_fmt *f); /* NUL-terminated contents */

/* Text a user gave (a setting's value, a path) on one printable line:
 * control characters become '?', and text longer than max bytes is cut
 * before the UTF-8 character that does not fit, with "..." after it. */
void ms_fmt_quoted(struct ms_fmt *f, const char *s, size_t max);

/* The length of the UTF-8 sequence at s (at most n bytes), 0 if it is not
 * one (a stray continuation byte, an overlong form, a surrogate, past
 * U+10FFFF, or cut short). */
size_t ms_utf8_len(const unsigned char *s, size_t n);

/* Text from outside (a thread's name from /proc) made one printable line
 * in place, as names are kept (core/names.c): a control character and a
 * byte that is not UTF-8 become '?', so no name can start a line of its
 * own in the report -- a heading a script or the suppressions read. */
char *ms_printable_in_place(char *s);

/* A mutex's name in at most cols bytes: whole, or cut before the UTF-8
 * character that does not fit with "..." after it -- never cut inside a
 * character, nor shorter without saying so. */
void ms_fmt_name(struct ms_fmt *f, const char *name, size_t cols);
/* The same into out (cols + 4 bytes at least); "" for NULL. */
const char *ms_name_cut(char *out, size_t cap, const char *name, size_t cols);

/* Durations in human units with three significant digits: "812 ns",
 * "12.3 µs", "4.50 ms", "2.01 s".  Writes into out (>= 16 bytes). */
const char *ms_duration(char *out, uint64_t ns);

/* write() all of buf to fd, retrying on EINTR; keeps errno.  Returns 0 or
 * the errno of the failure.  A write to a pipe without a reader or past
 * the file-size limit fails (EPIPE, EFBIG) without the SIGPIPE or SIGXFSZ
 * that would end the program. */
int ms_write_all(int fd, const char *buf, size_t len);

/* Bumped by every write and symbol lookup of a report, so a crash handler
 * waiting for one can tell a report that progresses from one that is stuck. */
extern unsigned long ms_report_progress;

/* Threads inside ms_write_all's write(2) now: a report that makes no
 * progress while one is in there is stuck on its reader, not slow. */
extern int ms_report_in_write;

/* The number in base 8, 10 or 16 (lower-case digits) at *p, which moves
 * past it (/proc's files). */
uint64_t ms_scan_number(const char **p, unsigned base);

#endif
