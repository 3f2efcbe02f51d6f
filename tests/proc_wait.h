/* proc_wait.h - what the test programs read from files and wait for: a
 * line in a report, a thread asleep in a futex (/proc shows its system
 * call), the process's memory; and CHECK, for calls that must succeed.
 * Waits on what the program can see, never on time. */
#ifndef MUTEXSTAT_TESTS_PROC_WAIT_H
#define MUTEXSTAT_TESTS_PROC_WAIT_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

/* Whether the first 8 KB of the file at path hold text. */
static inline int file_has(const char *path, const char *text)
{
	char buf[8192];
	int fd = open(path, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : 0;
	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = 0;
	return strstr(buf, text) != NULL;
}

/* Thread tid of this process's system call now and its first argument,
 * from /proc (-1: running, or not known). */
static inline long proc_syscall(pid_t tid, unsigned long *arg0)
{
	char path[64], buf[256];
	snprintf(path, sizeof path, "/proc/self/task/%d/syscall", (int)tid);
	int fd = open(path, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : 0;
	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = 0;
	long nr = -1;
	unsigned long at = 0;
	if (sscanf(buf, "%ld %lx", &nr, &at) < 1)
		nr = -1;
	if (arg0)
		*arg0 = at;
	return nr;
}

/* Whether thread tid of this process sleeps in futex() on word (any
 * futex if word is NULL). */
static inline int sleeps_on_futex(pid_t tid, const void *word)
{
	unsigned long at;
	return proc_syscall(tid, &at) == SYS_futex &&
	       (!word || at == (unsigned long)word);
}

/* A pthread call that must return 0, or the program ends with status 2
 * and the call on stderr. */
#define CHECK(call)                                                          \
	do {                                                                 \
		int rc_ = (call);                                            \
		if (rc_) {                                                   \
			fprintf(stderr, "%s:%d: %s = %d\n", __FILE__,        \
				__LINE__, #call, rc_);                       \
			exit(2);                                             \
		}                                                            \
	} while (0)

/* A line of /proc/self/status, in kB. */
static inline long status_kb(const char *field)
{
	char line[256];
	long kb = -1;
	size_t n = strlen(field);
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, field, n) && line[n] == ':')
			kb = strtol(line + n + 1, NULL, 10);
	fclose(f);
	return kb;
}

#endif
