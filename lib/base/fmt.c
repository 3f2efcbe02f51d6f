/* fmt.c - the report's formatter; see fmt.h. */
#include "base/fmt.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <string.h>
#include <unistd.h>

void ms_fmt_init(struct ms_fmt *f, char *buf, size_t cap, int fd)
{
	f->buf = buf;
	f->cap = cap;
	f->len = 0;
	f->fd = fd;
	f->failed = 0;
	if (cap)
		buf[0] = 0;
}

/* Takes back sig if it is pending now and was not before the write. */
static void discard_new(const sigset_t *before, int sig)
{
	sigset_t now, one;
	if (sigismember(before, sig) || sigpending(&now) != 0 ||
	    !sigismember(&now, sig))
		return;
	struct timespec zero = { 0, 0 };
	sigemptyset(&one);
	sigaddset(&one, sig);
	sigtimedwait(&one, NULL, &zero);
}

unsigned long ms_report_progress;
int ms_report_in_write;

int ms_write_all(int fd, const char *buf, size_t len)
{
	__atomic_add_fetch(&ms_report_progress, 1, __ATOMIC_RELAXED);
	/* A write to a pipe nobody reads any more raises SIGPIPE, and one past
	 * the file-size limit (ulimit -f) SIGXFSZ: either would end a program
	 * that never asked for this write.  Both are sent to the writing
	 * thread, so they are blocked here for the write, and one it raised
	 * is taken back; the write fails with EPIPE or EFBIG instead. */
	sigset_t quiet, old, before;
	sigemptyset(&quiet);
	sigaddset(&quiet, SIGPIPE);
	sigaddset(&quiet, SIGXFSZ);
	int masked = pthread_sigmask(SIG_BLOCK, &quiet, &old) == 0;
	if (masked && sigpending(&before) != 0)
		sigfillset(&before); /* cannot tell: take nothing back */
	int saved = errno, err = 0;
	__atomic_add_fetch(&ms_report_in_write, 1, __ATOMIC_RELAXED);
	while (len) {
		ssize_t n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? errno : EIO;
			break;
		}
		buf += n;
		len -= (size_t)n;
	}
	__atomic_sub_fetch(&ms_report_in_write, 1, __ATOMIC_RELAXED);
	if (masked) {
		if (err == EPIPE)
			discard_new(&before, SIGPIPE);
		if (err == EFBIG)
			discard_new(&before, SIGXFSZ);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	errno = saved;
	return err;
}

void ms_fmt_flush(struct ms_fmt *f)
{
	if (f->fd < 0 || !f->len)
		return;
	int err;
	if (!f->failed && (err = ms_write_all(f->fd, f->buf, f->len)))
		f->failed = err;
	f->len = 0;
}

static void put(struct ms_fmt *f, char c)
{
	if (f->len + 1 >= f->cap) {
		if (f->fd < 0)
			return;
		ms_fmt_flush(f);
	}
	f->buf[f->len++] = c;
}

static void put_padded(struct ms_fmt *f, const char *s, size_t n, int width,
		       int left, char pad)
{
	/* Width counts characters: UTF-8 continuation bytes take no column. */
	int cols = 0;
	for (size_t i = 0; i < n; i++)
		cols += ((unsigned char)s[i] & 0xc0) != 0x80;
	int fill = width > cols ? width - cols : 0;
	if (!left)
		while (fill-- > 0)
			put(f, pad);
	for (size_t i = 0; i < n; i++)
		put(f, s[i]);
	if (left)
		while (fill-- > 0)
			put(f, ' ');
}

static size_t utoa(char *out, unsigned long long v, unsigned base)
{
	char tmp[24];
	size_t n = 0, i;
	do {
		unsigned d = (unsigned)(v % base);
		tmp[n++] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
		v /= base;
	} while (v);
	for (i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	return n;
}

void ms_vfmt(struct ms_fmt *f, const char *fmt, va_list ap)
{
	for (const char *p = fmt; *p; p++) {
		if (*p != '%') {
			put(f, *p);
			continue;
		}
		int left = 0, width = 0, prec = -1, lng = 0;
		char pad = ' ';
		for (p++; *p == '-' || *p == '0'; p++) {
			if (*p == '-')
				left = 1;
			else
				pad = '0';
		}
		if (*p == '*') {
			width = va_arg(ap, int);
			if (width < 0) {
				left = 1;
				width = -width;
			}
			p++;
		}
		for (; *p >= '0' && *p <= '9'; p++)
			width = width * 10 + (*p - '0');
		if (*p == '.') {
			prec = 0;
			if (p[1] == '*') {
				prec = va_arg(ap, int);
				p += 2;
				if (prec < 0)
					prec = -1; /* as printf: no precision */
			} else
				for (p++; *p >= '0' && *p <= '9'; p++)
					prec = prec * 10 + (*p - '0');
		}
		for (; *p == 'l' || *p == 'z'; p++)
			lng = *p == 'z' ? 2 : lng + 1;
		char num[32];
		size_t n;
		unsigned long long u;
		long long s;
		switch (*p) {
		case 'd':
		case 'i':
			s = lng >= 2 ? va_arg(ap, long long)
			    : lng == 1 ? va_arg(ap, long)
				       : va_arg(ap, int);
			n = utoa(num, s < 0 ? 0ull - (unsigned long long)s
					    : (unsigned long long)s,
				 10);
			if (s < 0 && pad == '0' && !left) {
				put(f, '-'); /* the sign goes before the zeros */
				put_padded(f, num, n, width - 1, left, pad);
				break;
			}
			if (s < 0) {
				memmove(num + 1, num, n++);
				num[0] = '-';
			}
			put_padded(f, num, n, width, left, pad);
			break;
		case 'u':
		case 'x':
			u = lng >= 2 ? va_arg(ap, unsigned long long)
			    : lng == 1 ? va_arg(ap, unsigned long)
				       : va_arg(ap, unsigned);
			n = utoa(num, u, *p == 'x' ? 16 : 10);
			put_padded(f, num, n, width, left, pad);
			break;
		case 'p':
			num[0] = '0';
			num[1] = 'x';
			n = 2 + utoa(num + 2, (uintptr_t)va_arg(ap, void *), 16);
			put_padded(f, num, n, width, left, ' ');
			break;
		case 'c':
			num[0] = (char)va_arg(ap, int);
			put_padded(f, num, 1, width, left, ' ');
			break;
		case 's': {
			const char *str = va_arg(ap, const char *);
			if (!str)
				str = "(null)";
			size_t len = strlen(str);
			if (prec >= 0 && (size_t)prec < len) {
				/* cut before a character, never inside one */
				len = (size_t)prec;
				while (len && ((unsigned char)str[len] & 0xc0) == 0x80)
					len--;
			}
			put_padded(f, str, len, width, left, ' ');
			break;
		}
		case '%':
			put(f, '%');
			break;
		case 0:
			return;
		default:
			put(f, '%');
			put(f, *p);
		}
	}
	if (f->cap)
		f->buf[f->len < f->cap ? f->len : f->cap - 1] = 0;
}

void ms_fmt(struct ms_fmt *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ms_vfmt(f, fmt, ap);
	va_end(ap);
}

const char *ms_fmt_str(struct ms_fmt *f)
{
	if (f->cap)
		f->buf[f->len < f->cap ? f->len : f->cap - 1] = 0;
	return f->buf;
}

void ms_fmt_quoted(struct ms_fmt *f, const char *s, size_t max)
{
	size_t n = strlen(s), cut = n > max ? max : n;
	if (cut < n) /* not inside a character: back over continuation bytes */
		while (cut > 0 && ((unsigned char)s[cut] & 0xc0) == 0x80)
			cut--;
	for (size_t i = 0; i < cut; i++) {
		unsigned char c = (unsigned char)s[i];
		ms_fmt(f, "%c", c < 0x20 || c == 0x7f ? '?' : (char)c);
	}
	if (cut < n)
		ms_fmt(f, "...");
}

size_t ms_utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t len = c < 0x80 ? 1 : c >= 0xc2 && c < 0xe0 ? 2 : c >= 0xe0 && c < 0xf0 ? 3
		     : c >= 0xf0 && c < 0xf5 ? 4 : 0;
	if (!len || len > n)
		return 0;
	for (size_t i = 1; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0) ||
	    (c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] >= 0x90))
		return 0;
	return len;
}

char *ms_printable_in_place(char *s)
{
	unsigned char *u = (unsigned char *)s;
	size_t n = strlen(s);
	for (size_t i = 0; i < n;) {
		size_t len = ms_utf8_len(u + i, n - i);
		if (len > 1) {
			i += len;
			continue;
		}
		if (!len || u[i] < 0x20 || u[i] == 0x7f)
			u[i] = '?';
		i++;
	}
	return s;
}

void ms_fmt_name(struct ms_fmt *f, const char *name, size_t cols)
{
	ms_fmt_quoted(f, name, strlen(name) <= cols || cols < 4 ? cols : cols - 3);
}

const char *ms_name_cut(char *out, size_t cap, const char *name, size_t cols)
{
	struct ms_fmt f;
	ms_fmt_init(&f, out, cap, -1);
	if (name)
		ms_fmt_name(&f, name, cols);
	return ms_fmt_str(&f);
}

const char *ms_duration(char *out, uint64_t ns)
{
	static const char *const unit[] = { "ns", "\xc2\xb5s", "ms", "s" };
	struct ms_fmt f;
	ms_fmt_init(&f, out, 16, -1);
	if (ns < 1000) {
		ms_fmt(&f, "%llu ns", (unsigned long long)ns);
		return ms_fmt_str(&f);
	}
	/* Three significant digits, rounded, in the largest unit that keeps
	 * the integer part non-zero (seconds go on past 999). */
	unsigned u = 0;
	uint64_t scale = 1;
	while (u < 3 && ns >= scale * 1000) {
		scale *= 1000;
		u++;
	}
	/* The most decimals (2, 1, 0) that keep three significant digits
	 * after rounding; a rounding that reaches 1000 moves up a unit. */
	int decimals;
	uint64_t pow, fixed;
	for (;;) {
		for (decimals = 2, pow = 100;; decimals--, pow /= 10) {
			fixed = (uint64_t)(((unsigned __int128)ns * pow + scale / 2) / scale);
			if (fixed < 1000 || decimals == 0)
				break;
		}
		if (fixed < 1000 || u == 3)
			break;
		scale *= 1000; /* e.g. 999.9 us is 1.00 ms */
		u++;
	}
	ms_fmt(&f, "%llu", (unsigned long long)(fixed / pow));
	if (decimals)
		ms_fmt(&f, ".%0*llu", decimals, (unsigned long long)(fixed % pow));
	ms_fmt(&f, " %s", unit[u]);
	return ms_fmt_str(&f);
}

uint64_t ms_scan_number(const char **p, unsigned base)
{
	uint64_t v = 0;
	for (;; (*p)++) {
		int d = **p >= '0' && **p <= '9'   ? **p - '0'
			: **p >= 'a' && **p <= 'f' ? **p - 'a' + 10
						   : 99;
		if (d >= (int)base)
			return v;
		v = v * base + (uint64_t)d;
	}
}
