/* mutexstat_dump.c - `mutexstat dump PID`: asks a process that runs with
 * libmutexstat for a live dump, without interrupting any of its threads.
 *
 * kill -USR1 PID is a signal to the process: the kernel hands it to a thread
 * of the program (the main thread first), whose nanosleep, poll or
 * epoll_wait then ends early with EINTR -- a holder asleep with its mutex,
 * the very thing a dump of a hang is for, woke up and went on.  The
 * library's own thread ("mutexstat" in /proc/PID/task/TID/comm) takes the
 * where-now signal, SIGRTMAX-3, as a request for a dump; this program
 * sends it there, to that thread alone (tgkill).
 *
 * Where that cannot be -- a process of one thread has no such thread yet,
 * or the program took SIGRTMAX-3 for itself -- it falls back to the dump
 * signal to the process, as kill would, and says so.
 *
 * Exit status: 0 asked, 1 not asked (no such process, not ours, live dumps
 * off), 2 usage. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *me = "mutexstat dump";

/* The whole of a small /proc file into buf (NUL-terminated); its length,
 * or -1. */
static ssize_t slurp(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t len = 0;
	for (;;) {
		ssize_t n = read(fd, buf + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		if (len == cap - 1)
			break;
	}
	close(fd);
	buf[len] = 0;
	return (ssize_t)len;
}

/* Whether the process has libmutexstat loaded: a line of its maps. */
static int has_library(long pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%ld/maps", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	char line[4096];
	int found = 0;
	while (!found && fgets(line, sizeof line, f))
		found = strstr(line, "/libmutexstat.so") != NULL;
	fclose(f);
	return found;
}

/* The process's MUTEXSTAT_SIGNAL as it started: the dump signal, 0 for
 * none. */
static int dump_signal(long pid)
{
	char path[64], env[65536];
	snprintf(path, sizeof path, "/proc/%ld/environ", pid);
	ssize_t n = slurp(path, env, sizeof env);
	for (ssize_t i = 0; i < n; i += (ssize_t)strlen(env + i) + 1) {
		const char *v = env + i;
		if (strncmp(v, "MUTEXSTAT_SIGNAL=", 17) != 0)
			continue;
		v += 17;
		return !strcmp(v, "none") ? 0 : !strcmp(v, "USR2") ? SIGUSR2 : SIGUSR1;
	}
	return SIGUSR1;
}

/* The library's thread: the task named "mutexstat"; 0 if none. */
static long dump_thread(long pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%ld/task", pid);
	DIR *d = opendir(path);
	if (!d)
		return 0;
	long tid = 0;
	struct dirent *e;
	while (!tid && (e = readdir(d)) != NULL) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		char comm[64], p[320];
		snprintf(p, sizeof p, "/proc/%ld/task/%s/comm", pid, e->d_name);
		if (slurp(p, comm, sizeof comm) > 0 && !strcmp(comm, "mutexstat\n"))
			tid = strtol(e->d_name, NULL, 10);
	}
	closedir(d);
	return tid;
}

/* Whether thread tid of pid takes signal sig: not in its SigBlk. */
static int takes(long pid, long tid, int sig)
{
	char path[96], status[8192];
	snprintf(path, sizeof path, "/proc/%ld/task/%ld/status", pid, tid);
	if (slurp(path, status, sizeof status) <= 0)
		return 0;
	const char *b = strstr(status, "\nSigBlk:");
	if (!b)
		return 0;
	unsigned long long blocked = strtoull(b + 8, NULL, 16);
	return !(blocked >> (sig - 1) & 1);
}

int main(int argc, char **argv)
{
	char *end;
	long pid = argc == 2 ? strtol(argv[1], &end, 10) : 0;
	if (argc != 2 || pid <= 0 || *end) {
		fprintf(stderr, "usage: %s PID\n", me);
		return 2;
	}
	int ours = has_library(pid);
	if (ours < 0) {
		fprintf(stderr, "%s: no process %ld (or not yours to read)\n", me, pid);
		return 1;
	}
	if (!ours) {
		fprintf(stderr, "%s: process %ld does not run with libmutexstat\n", me, pid);
		return 1;
	}
	long tid = dump_thread(pid);
	int sig = SIGRTMAX - 3;
	if (tid && takes(pid, tid, sig)) {
		if (syscall(SYS_tgkill, (pid_t)pid, (pid_t)tid, sig) != 0) {
			fprintf(stderr, "%s: cannot signal process %ld: %s\n", me, pid,
				strerror(errno));
			return 1;
		}
		printf("%s: asked process %ld for a live dump (its thread %ld)\n", me, pid, tid);
		return 0;
	}
	int dump = dump_signal(pid);
	if (!dump) {
		fprintf(stderr, "%s: live dumps are off in process %ld (MUTEXSTAT_SIGNAL=none)\n", me,
			pid);
		return 1;
	}
	if (kill((pid_t)pid, dump) != 0) {
		fprintf(stderr, "%s: cannot signal process %ld: %s\n", me, pid, strerror(errno));
		return 1;
	}
	printf("%s: asked process %ld for a live dump with SIG%s, as kill would: %s\n", me, pid,
	       sigabbrev_np(dump),
	       tid ? "its own thread takes no signal" : "it has no thread of mutexstat's yet");
	return 0;
}
