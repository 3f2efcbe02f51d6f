/* fds.c - the library's descriptors at high numbers; see fds.h. */
#define _GNU_SOURCE
#include "base/fds.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* System calls made directly, not through libc's functions: a program may
 * define close(), fcntl() or fstat() itself, and those run in its thread
 * inside a stack capture, under whatever lock it is taking (chromium's
 * close takes a guard of a function-local static, whose first use was the
 * lock being taken: the crash handler waited for itself, every signal
 * blocked). */
int ms_fd_close(int fd)
{
	return (int)syscall(SYS_close, fd);
}

static int sys_fcntl(int fd, int cmd, long arg)
{
	return (int)syscall(SYS_fcntl, fd, cmd, arg);
}

static int sys_fstat(int fd, struct stat *st)
{
	return (int)syscall(SYS_fstat, fd, st);
}

static int sys_nofile_limit(struct rlimit *lim)
{
	return (int)syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, lim);
}

/* The descriptors made here: a handful (a copy of stderr, libunwind's
 * pipe), each number remembered with its open file.  Entries are written
 * once: a number made again (libunwind's pipe made anew after the program
 * closed it) takes a new entry, and a reader finds the number's entries
 * whole -- never one being rewritten, which a signal handler could read
 * torn.  More than 64 are not remembered (only the EBADF answer is lost
 * for them, never a descriptor). */
#define OURS_MAX 64
#define FORGOTTEN (-2)
static struct ours {
	int fd; /* 0: free, -1: being written (ours are all above 2),
		   FORGOTTEN: the program closed it or put another there */
	dev_t dev;
	ino_t ino;
} ours[OURS_MAX];

static void remember(int fd)
{
	struct stat st;
	if (sys_fstat(fd, &st) != 0)
		return;
	for (unsigned i = 0; i < OURS_MAX; i++) {
		int free = 0;
		if (!__atomic_compare_exchange_n(&ours[i].fd, &free, -1, 0, __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE))
			continue;
		ours[i].dev = st.st_dev;
		ours[i].ino = st.st_ino;
		__atomic_store_n(&ours[i].fd, fd, __ATOMIC_RELEASE);
		return;
	}
}

int ms_fd_is_ours(int fd)
{
	struct stat st;
	/* ours are close-on-exec, every one: a descriptor the program put at
	 * the number since (dup2, open) is not, even one of the same file (a
	 * copy of its stderr where ours was) */
	int flags = fd > 2 ? sys_fcntl(fd, F_GETFD, 0) : -1;
	if (flags < 0 || !(flags & FD_CLOEXEC) || sys_fstat(fd, &st) != 0)
		return 0;
	for (unsigned i = 0; i < OURS_MAX; i++) {
		int at = __atomic_load_n(&ours[i].fd, __ATOMIC_ACQUIRE);
		if (!at)
			break; /* entries are taken in order: no more */
		if (at == fd && st.st_dev == ours[i].dev && st.st_ino == ours[i].ino)
			return 1;
	}
	return 0;
}

/* No room from the floors up (a descriptor limit of 11 or less, or the
 * numbers up there all taken): the highest free number below the limit,
 * above fd, -1 if none -- the program's open()s take the lowest. */
static int dup_top(int fd)
{
	struct rlimit lim;
	if (sys_nofile_limit(&lim) != 0 || lim.rlim_cur > 1024)
		return -1;
	for (int at = (int)lim.rlim_cur - 1; at > fd; at--) {
		int high = sys_fcntl(fd, F_DUPFD_CLOEXEC, at);
		if (high >= 0)
			return high;
	}
	return -1;
}

int ms_fd_dup_high(int fd)
{
	static const int floors[] = { 1000, 200, 10 };
	int saved = errno, high = -1;
	for (unsigned i = 0; i < sizeof floors / sizeof floors[0] && high < 0; i++)
		if (fd < floors[i])
			high = sys_fcntl(fd, F_DUPFD_CLOEXEC, floors[i]);
	if (high < 0)
		high = dup_top(fd);
	if (high >= 0)
		remember(high);
	errno = saved;
	return high;
}

int ms_fd_dup_anywhere(int fd)
{
	int d = ms_fd_dup_high(fd);
	if (d < 0) {
		int saved = errno;
		d = sys_fcntl(fd, F_DUPFD_CLOEXEC, 3);
		if (d >= 0)
			remember(d);
		errno = saved;
	}
	return d;
}

/* Whether one of ours is among first..last; with forget, each such is
 * no longer ours: a number never again, as entries are written once (a
 * new one of ours takes a new entry). */
static int ours_in(unsigned first, unsigned last, int forget)
{
	int found = 0;
	for (unsigned i = 0; i < OURS_MAX; i++) {
		int at = __atomic_load_n(&ours[i].fd, __ATOMIC_ACQUIRE);
		if (!at)
			break;
		if (at <= 0 || (unsigned)at < first || (unsigned)at > last)
			continue;
		if (!forget)
			return 1;
		found = 1;
		__atomic_compare_exchange_n(&ours[i].fd, &at, FORGOTTEN, 0, __ATOMIC_ACQ_REL,
					    __ATOMIC_ACQUIRE);
	}
	return found;
}

int ms_fds_in(unsigned first, unsigned last)
{
	return ours_in(first, last, 0);
}

void ms_fds_forget(unsigned first, unsigned last)
{
	(void)ours_in(first, last, 1);
}

int ms_fd_move_high(int fd)
{
	int high = ms_fd_dup_high(fd);
	if (high < 0) {
		remember(fd); /* where it is, but ours all the same */
		return fd;
	}
	int saved = errno;
	ms_fd_close(fd);
	errno = saved;
	return high;
}
