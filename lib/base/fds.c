/* fds.c - the library's descriptors at high numbers; see fds.h. */
#define _GNU_SOURCE
#include "base/fds.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

/* The descriptors made here: a handful (a copy of stderr, the live dump's
 * pipe, libunwind's pipe), each number remembered with its open file.  A
 * number made again (a pipe made anew) takes its entry over; more numbers
 * than entries are not remembered (then only fstat's answer is lost, never
 * a descriptor). */
#define OURS_MAX 16
static struct ours {
	int fd; /* 0: free (ours are all above 2) */
	dev_t dev;
	ino_t ino;
} ours[OURS_MAX];

static void remember(int fd)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		return;
	for (unsigned i = 0; i < OURS_MAX; i++) {
		int was = __atomic_load_n(&ours[i].fd, __ATOMIC_ACQUIRE);
		if (was != fd && (was != 0 || !__atomic_compare_exchange_n(
							 &ours[i].fd, &was, -1, 0,
							 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)))
			continue;
		/* claimed (-1) or the same number: readers see -1 meanwhile */
		__atomic_store_n(&ours[i].fd, -1, __ATOMIC_RELAXED);
		ours[i].dev = st.st_dev;
		ours[i].ino = st.st_ino;
		__atomic_store_n(&ours[i].fd, fd, __ATOMIC_RELEASE);
		return;
	}
}

int ms_fd_is_ours(int fd)
{
	struct stat st;
	if (fd <= 2)
		return 0;
	for (unsigned i = 0; i < OURS_MAX; i++)
		if (__atomic_load_n(&ours[i].fd, __ATOMIC_ACQUIRE) == fd)
			return fstat(fd, &st) == 0 && st.st_dev == ours[i].dev &&
			       st.st_ino == ours[i].ino;
	return 0;
}

int ms_fd_dup_high(int fd)
{
	static const int floors[] = { 1000, 200, 10 };
	int saved = errno, high = -1;
	for (unsigned i = 0; i < sizeof floors / sizeof floors[0] && high < 0; i++)
		if (fd < floors[i])
			high = fcntl(fd, F_DUPFD_CLOEXEC, floors[i]);
	if (high >= 0)
		remember(high);
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
