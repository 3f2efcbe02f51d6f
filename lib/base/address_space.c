/* address_space.c - see address_space.h.  Keeps errno: it runs at
 * start-up and in reports, between the program's calls. */
#include "base/address_space.h"
#include "base/fds.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

/* Field `field` (0 the first) of /proc/self/statm, in bytes; 0 if it
 * cannot be read. */
static uint64_t statm_bytes(int field)
{
	char buf[128];
	int saved = errno;
	int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : 0;
	if (fd >= 0)
		ms_fd_close(fd);
	errno = saved;
	ssize_t i = 0;
	for (int skip = 0; skip < field; skip++) {
		while (i < n && buf[i] != ' ')
			i++;
		i++;
	}
	uint64_t pages = 0;
	for (; i < n && buf[i] >= '0' && buf[i] <= '9'; i++)
		pages = pages * 10 + (uint64_t)(buf[i] - '0');
	return pages * (uint64_t)sysconf(_SC_PAGESIZE);
}

uint64_t ms_mapped_now(void)
{
	return statm_bytes(0);
}

uint64_t ms_data_now(void)
{
	return statm_bytes(5);
}

/* What limit `resource` leaves when what counts against it now, and
 * `more` bytes besides, are taken. */
static uint64_t left_under(int resource, uint64_t (*used_now)(void), uint64_t more)
{
	struct rlimit rl;
	if (getrlimit(resource, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
		return UINT64_MAX;
	uint64_t used = used_now() + more;
	return rl.rlim_cur > used ? rl.rlim_cur - used : 0;
}

uint64_t ms_address_space_left_after(uint64_t more)
{
	return left_under(RLIMIT_AS, ms_mapped_now, more);
}

uint64_t ms_data_left_after(uint64_t more)
{
	return left_under(RLIMIT_DATA, ms_data_now, more);
}

uint64_t ms_address_space_left(void)
{
	return ms_address_space_left_after(0);
}

uint64_t ms_data_left(void)
{
	return ms_data_left_after(0);
}
