/* maps.c - /proc/PID/maps, line by line; see maps.h. */
#define _GNU_SOURCE
#include "base/maps.h"
#include "base/fds.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

static const char *hex(const char *p, uintptr_t *out)
{
	uintptr_t v = 0;
	for (;; p++) {
		unsigned d = *p >= '0' && *p <= '9' ? (unsigned)(*p - '0')
			     : *p >= 'a' && *p <= 'f' ? (unsigned)(*p - 'a' + 10)
						       : 16;
		if (d == 16)
			break;
		v = v << 4 | d;
	}
	*out = v;
	return p;
}

static const char *field_end(const char *p)
{
	while (*p && *p != ' ')
		p++;
	while (*p == ' ')
		p++;
	return p;
}

static void parse(const char *line, struct ms_mapping *m)
{
	const char *p = hex(line, &m->lo);
	p = hex(*p == '-' ? p + 1 : p, &m->hi);
	while (*p == ' ')
		p++;
	m->shared = p[0] && p[1] && p[2] && p[3] == 's';
	p = field_end(field_end(p)); /* perms, offset */
	unsigned d = 0;
	while (*p && *p != ' ' && d < sizeof m->dev - 1)
		m->dev[d++] = *p++;
	m->dev[d] = 0;
	while (*p == ' ')
		p++;
	m->inode = 0;
	for (; *p >= '0' && *p <= '9'; p++)
		m->inode = m->inode * 10 + (unsigned)(*p - '0');
}

int ms_maps_each(const char *path, int (*fn)(const struct ms_mapping *m, void *arg),
		 void *arg)
{
	int saved = errno;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		errno = saved;
		return -1;
	}
	/* the first 255 bytes of a line: its path, which may be long, is not
	 * needed */
	char buf[4096], line[256];
	unsigned len = 0;
	int answer = 0;
	ssize_t n;
	while (!answer && (n = read(fd, buf, sizeof buf)) > 0)
		for (ssize_t i = 0; i < n && !answer; i++) {
			if (buf[i] != '\n') {
				if (len < sizeof line - 1)
					line[len++] = buf[i];
				continue;
			}
			line[len] = 0;
			len = 0;
			struct ms_mapping m;
			parse(line, &m);
			answer = fn(&m, arg);
		}
	ms_fd_close(fd);
	errno = saved;
	return answer;
}

struct find {
	uintptr_t addr;
	struct ms_mapping *out;
};

static int holds(const struct ms_mapping *m, void *arg)
{
	struct find *f = arg;
	if (f->addr < m->lo || f->addr >= m->hi)
		return 0;
	*f->out = *m;
	return 1;
}

int ms_maps_find(uintptr_t addr, struct ms_mapping *out)
{
	struct find f = { addr, out };
	return ms_maps_each("/proc/self/maps", holds, &f) == 1;
}
