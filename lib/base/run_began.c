/* run_began.c - when the run a process belongs to began; see run_began.h. */
#define _GNU_SOURCE
#include "base/run_began.h"
#include "base/fmt.h"

#include <fcntl.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#define OUTPUT_ENTRY "MUTEXSTAT_OUTPUT="
#define ENTRY_MAX 4200 /* the name and a path of up to PATH_MAX */
#define ANCESTORS_MAX 64

/* The entry of /proc/PID/environ (pid 0: this process's) that begins
 * with OUTPUT_ENTRY, copied NUL-ended into out[ENTRY_MAX]: its length, or
 * 0 if there is none, it is longer, or the file cannot be read (another
 * user's process). */
static size_t output_entry(long pid, char *out)
{
	char path[64], buf[4096];
	struct ms_fmt f;
	ms_fmt_init(&f, path, sizeof path, -1);
	if (pid)
		ms_fmt(&f, "/proc/%ld/environ", pid);
	else
		ms_fmt(&f, "/proc/self/environ");
	int fd = open(ms_fmt_str(&f), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	const size_t plen = sizeof OUTPUT_ENTRY - 1;
	size_t n = 0, found = 0;
	int other = 0; /* the entry read is not the one */
	ssize_t got;
	while (!found && (got = read(fd, buf, sizeof buf)) > 0)
		for (ssize_t i = 0; i < got; i++) {
			char c = buf[i];
			if (!c) {
				if (!other && n >= plen) {
					found = n;
					break;
				}
				n = 0;
				other = 0;
			} else if (other) {
				continue;
			} else if (n < plen ? c != OUTPUT_ENTRY[n] : n + 1 >= ENTRY_MAX) {
				other = 1;
			} else
				out[n++] = c;
		}
	close(fd);
	out[found] = 0;
	return found;
}

/* Process pid's parent and its start, in clock ticks since boot, from
 * /proc/PID/stat (its 4th and 22nd fields): 0 if it cannot be read. */
static int parent_and_start(long pid, long *ppid, unsigned long long *start)
{
	char path[64], buf[1024];
	struct ms_fmt f;
	ms_fmt_init(&f, path, sizeof path, -1);
	ms_fmt(&f, "/proc/%ld/stat", pid);
	int fd = open(ms_fmt_str(&f), O_RDONLY | O_CLOEXEC);
	ssize_t got = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (got <= 0)
		return 0;
	buf[got] = 0;
	/* the name in parentheses may hold spaces and parentheses: the
	 * fields are counted from its last ')' on, the state the 3rd */
	const char *p = strrchr(buf, ')');
	if (!p)
		return 0;
	p++;
	for (int field = 3; field <= 22; field++) {
		while (*p == ' ')
			p++;
		if (*p == '-' && field != 3) /* tpgid -1: no terminal */
			p++;
		if (*p < '0' || *p > '9') {
			if (field != 3) /* (the state, a letter) */
				return 0;
			while (*p && *p != ' ')
				p++;
			continue;
		}
		unsigned long long v = ms_scan_number(&p, 10);
		if (field == 4)
			*ppid = (long)v;
		else if (field == 22)
			*start = v;
	}
	return 1;
}

int ms_run_began(struct timespec *start)
{
	char mine[ENTRY_MAX], theirs[ENTRY_MAX];
	if (!output_entry(0, mine))
		return 0;
	long pid = getpid(), ppid = 0;
	unsigned long long ticks = 0;
	if (!parent_and_start(pid, &ppid, &ticks))
		return 0;
	/* up the line while a parent was started with the same entry */
	for (int n = 0; n < ANCESTORS_MAX && ppid > 1; n++) {
		long up;
		unsigned long long t;
		if (!output_entry(ppid, theirs) || strcmp(mine, theirs) != 0 ||
		    !parent_and_start(ppid, &up, &t))
			break;
		ticks = t;
		ppid = up;
	}
	unsigned long hz = getauxval(AT_CLKTCK);
	if (!hz)
		hz = 100;
	struct timespec boot, now;
	if (clock_gettime(CLOCK_BOOTTIME, &boot) || clock_gettime(CLOCK_REALTIME, &now))
		return 0;
	/* the end of the start's tick, as a time since boot, then how long
	 * before now that was */
	unsigned long long began_ns = (ticks + 1) * (1000000000ull / hz);
	unsigned long long boot_ns = (unsigned long long)boot.tv_sec * 1000000000ull +
				     (unsigned long long)boot.tv_nsec;
	unsigned long long ago = boot_ns > began_ns ? boot_ns - began_ns : 0;
	unsigned long long now_ns = (unsigned long long)now.tv_sec * 1000000000ull +
				    (unsigned long long)now.tv_nsec;
	if (ago > now_ns)
		return 0;
	now_ns -= ago;
	start->tv_sec = (time_t)(now_ns / 1000000000ull);
	start->tv_nsec = (long)(now_ns % 1000000000ull);
	return 1;
}
