/* run_began.c - when the run a process belongs to began; see run_began.h. */
#define _GNU_SOURCE
#include "base/run_began.h"
#include "base/fds.h"
#include "base/fmt.h"

#include <fcntl.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#define OUTPUT_ENTRY "MUTEXSTAT_OUTPUT="
#define ENTRY_MAX 4200 /* the name and a path of up to PATH_MAX */
#define ANCESTORS_MAX 64

/* /proc/self/NAME (pid 0), or /proc/PID/NAME, opened for reading. */
static int proc_open(long pid, const char *name)
{
	char path[64];
	struct ms_fmt f;
	ms_fmt_init(&f, path, sizeof path, -1);
	if (pid)
		ms_fmt(&f, "/proc/%ld/%s", pid, name);
	else
		ms_fmt(&f, "/proc/self/%s", name);
	return open(ms_fmt_str(&f), O_RDONLY | O_CLOEXEC);
}

/* The entry of /proc/PID/environ (pid 0: this process's) that begins
 * with OUTPUT_ENTRY: copied NUL-ended into out[ENTRY_MAX] if `want` is
 * NULL, else compared with want.  Returns its length (with want, only if
 * it is want), or 0 if there is none, it is longer than ENTRY_MAX, or the
 * file cannot be read (another user's process).  Read in pieces, copied
 * nowhere but out: a report may be written on a small stack. */
static size_t output_entry(long pid, char *out, const char *want)
{
	char buf[1024];
	int fd = proc_open(pid, "environ");
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
				if (!other && n >= plen && (!want || !want[n])) {
					found = n;
					break;
				}
				n = 0;
				other = 0;
			} else if (other) {
				continue;
			} else if (n < plen ? c != OUTPUT_ENTRY[n]
				   : want ? c != want[n] : n + 1 >= ENTRY_MAX) {
				other = 1;
			} else {
				if (!want)
					out[n] = c;
				n++;
			}
		}
	ms_fd_close(fd);
	if (!want)
		out[found] = 0;
	return found;
}

struct proc_stat {
	long ppid, session;
	unsigned long long start; /* clock ticks since boot */
};

/* Process pid's parent, session and start, from /proc/PID/stat (pid 0:
 * /proc/self/stat, whose pids are that /proc's, as the parent's is):
 * its 4th, 6th and 22nd fields.  0 if it cannot be read. */
static int stat_of(long pid, struct proc_stat *st)
{
	char buf[512];
	int fd = proc_open(pid, "stat");
	ssize_t got = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
	if (fd >= 0)
		ms_fd_close(fd);
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
			st->ppid = (long)v;
		else if (field == 6)
			st->session = (long)v;
		else if (field == 22)
			st->start = v;
	}
	return 1;
}

int ms_run_began(struct timespec *start)
{
	char mine[ENTRY_MAX];
	struct proc_stat self, up;
	if (!output_entry(0, mine, NULL) || !stat_of(0, &self))
		return 0;
	unsigned long long ticks = self.start;
	long pid = self.ppid;
	/* Up the line while a parent was started with the same entry -- but
	 * not to a session's leader (a terminal's shell, a container's:
	 * started with the variable, every program run from it for hours
	 * would be one run, its file never replaced), nor to one that began
	 * after its child (its pid reused). */
	for (int n = 0; n < ANCESTORS_MAX && pid > 1; n++) {
		if (!output_entry(pid, NULL, mine) || !stat_of(pid, &up) || up.session == pid ||
		    up.start > ticks)
			break;
		ticks = up.start;
		pid = up.ppid;
	}
	unsigned long hz = getauxval(AT_CLKTCK);
	if (!hz)
		hz = 100;
	const unsigned long long tick_ns = 1000000000ull / hz;
	struct timespec boot, now;
	if (clock_gettime(CLOCK_BOOTTIME, &boot) || clock_gettime(CLOCK_REALTIME, &now))
		return 0;
	unsigned long long boot_ns = (unsigned long long)boot.tv_sec * 1000000000ull +
				     (unsigned long long)boot.tv_nsec;
	if (ticks >= boot_ns / tick_ns) /* (a time namespace's offset: not known) */
		return 0;
	/* the end of the start's tick, as a time since boot, then how long
	 * before now that was */
	unsigned long long ago = boot_ns - (ticks + 1) * tick_ns;
	unsigned long long now_ns = (unsigned long long)now.tv_sec * 1000000000ull +
				    (unsigned long long)now.tv_nsec;
	if (ago > now_ns)
		return 0;
	now_ns -= ago;
	start->tv_sec = (time_t)(now_ns / 1000000000ull);
	start->tv_nsec = (long)(now_ns % 1000000000ull);
	return 1;
}
