/* fds.c - the library's descriptors at high numbers; see fds.h. */
#define _GNU_SOURCE
#include "base/fds.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

int ms_fd_dup_high(int fd)
{
	static const int floors[] = { 1000, 200, 10 };
	int saved = errno, high = -1;
	for (unsigned i = 0; i < sizeof floors / sizeof floors[0] && high < 0; i++)
		if (fd < floors[i])
			high = fcntl(fd, F_DUPFD_CLOEXEC, floors[i]);
	errno = saved;
	return high;
}

int ms_fd_move_high(int fd)
{
	int high = ms_fd_dup_high(fd);
	if (high < 0)
		return fd;
	int saved = errno;
	close(fd);
	errno = saved;
	return high;
}
