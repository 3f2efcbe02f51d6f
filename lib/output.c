/* output.c - the report's destination; see output.h. */
#define _GNU_SOURCE
#include "output.h"
#include "fmt.h"
#include "options.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int saved_fd = -1;
static dev_t saved_dev;
static ino_t saved_ino;

static int same_file(int fd)
{
	struct stat st;
	return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == saved_dev &&
	       st.st_ino == saved_ino;
}

void ms_output_init(void)
{
	int saved = errno;
	struct stat st;
	if (fstat(2, &st) == 0) {
		saved_dev = st.st_dev;
		saved_ino = st.st_ino;
		/* A high number, out of the way of programs that expect their
		 * next open() to return 3; close-on-exec so children have only
		 * their own. */
		static const int floors[] = { 1000, 200, 10, 3 };
		for (unsigned i = 0; i < 4 && saved_fd < 0; i++)
			saved_fd = fcntl(2, F_DUPFD_CLOEXEC, floors[i]);
	}
	errno = saved;
}

int ms_output_stderr(void)
{
	if (same_file(saved_fd))
		return saved_fd;
	if (same_file(2)) /* ours was closed, but fd 2 is still the original */
		return 2;
	return -1;
}

static void expand_path(char *out, size_t cap, const char *pattern)
{
	struct ms_fmt f;
	ms_fmt_init(&f, out, cap, -1);
	for (const char *p = pattern; *p; p++) {
		if (p[0] == '%' && p[1] == 'p') {
			ms_fmt(&f, "%d", (int)getpid());
			p++;
		} else
			ms_fmt(&f, "%c", *p);
	}
	ms_fmt_str(&f);
}

static int open_path(const char *pattern, const char *suffix, int *close_it);

int ms_output_open(int *close_it)
{
	return ms_output_open_suffix("", close_it);
}

/* One file of a report in several formats: MUTEXSTAT_OUTPUT (or
 * mutexstat.%p in the current directory) as a prefix, then the dump's
 * number, then the format's extension. */
int ms_output_open_format(unsigned seq, const char *ext, int *close_it)
{
	char suffix[64];
	struct ms_fmt f;
	ms_fmt_init(&f, suffix, sizeof suffix, -1);
	if (seq)
		ms_fmt(&f, ".%u", seq);
	ms_fmt(&f, "%s", ext);
	*close_it = 0;
	return open_path(ms_opt.output ? ms_opt.output : "mutexstat.%p",
			 ms_fmt_str(&f), close_it);
}

static int open_path(const char *pattern, const char *suffix, int *close_it)
{
	char path[4096];
	expand_path(path, sizeof path - 40, pattern);
	strncat(path, suffix, 32);
	int saved = errno;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		      0644);
	int err = errno;
	errno = saved;
	if (fd >= 0) {
		*close_it = 1;
		return fd;
	}
	int e = ms_output_stderr();
	if (e >= 0) {
		char buf[4300];
		struct ms_fmt f;
		ms_fmt_init(&f, buf, sizeof buf, e);
		const char *name = strerrorname_np(err);
		ms_fmt(&f,
		       "mutexstat: cannot write MUTEXSTAT_OUTPUT '%s' (%s); "
		       "the report goes to stderr\n",
		       path, name ? name : "error");
		ms_fmt_flush(&f);
	}
	return e;
}

int ms_output_open_suffix(const char *suffix, int *close_it)
{
	*close_it = 0;
	if (!ms_opt.output)
		return ms_output_stderr();
	return open_path(ms_opt.output, suffix, close_it);
}
