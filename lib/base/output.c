/* output.c - the report's destination; see output.h. */
#define _GNU_SOURCE
#include "base/output.h"
#include "base/environ.h"
#include "base/fds.h"
#include "base/fmt.h"
#include "base/options.h"
#include "base/run_began.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int saved_fd = -1;
static dev_t saved_dev;
static ino_t saved_ino;
static int saved_stream; /* a pipe or socket: its reader waits for its end */

static int same_file(int fd)
{
	struct stat st;
	return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == saved_dev &&
	       st.st_ino == saved_ino;
}

static char program_name[256];

/* When this process began (a fork child: its parent), by the clock of
 * file times: a report file written since is another process's of this
 * run. */
static struct timespec began;

/* The directory the process started in, where a relative MUTEXSTAT_OUTPUT
 * is: a daemon that moves to / (or a program that chdirs into its work)
 * would otherwise put its report there, or fail to.  Empty if unknown
 * (the path then stays relative). */
static char start_dir[4096];

const char *ms_program_name(void)
{
	return program_name[0] ? program_name : program_invocation_short_name;
}

void ms_output_init(void)
{
	int saved = errno;
	const char *name = ms_program_short_name();
	size_t n = strlen(name);
	if (n < sizeof program_name)
		memcpy(program_name, name, n + 1);
	clock_gettime(CLOCK_REALTIME, &began);
	if (!getcwd(start_dir, sizeof start_dir) || start_dir[0] != '/')
		start_dir[0] = 0; /* too long, or the directory is gone */
	struct stat st;
	if (fstat(2, &st) == 0) {
		saved_dev = st.st_dev;
		saved_ino = st.st_ino;
		saved_stream = S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode);
		/* A high number, out of the way of programs that expect their
		 * next open() to return 3 (fds.h); close-on-exec so children
		 * have only their own. */
		saved_fd = ms_fd_dup_anywhere(2);
	}
	errno = saved;
}

int ms_output_stderr(void)
{
	/* ours, and still that file (the program may have put its own copy
	 * of it at the number, which is its to write to, not ours) */
	if (ms_fd_is_ours(saved_fd)) /* (its file, too: fds.h) */
		return saved_fd;
	if (same_file(2)) /* ours was closed, but fd 2 is still the original */
		return 2;
	return -1;
}

static int detached; /* ms_output_detached: no copy, by our choice */

void ms_output_detached(void)
{
	__atomic_store_n(&detached, 1, __ATOMIC_RELEASE);
	int fd = __atomic_load_n(&saved_fd, __ATOMIC_ACQUIRE);
	int saved = errno;
	/* only ours: a daemon that closed every descriptor and opened its
	 * log at the number (or a program that put its own copy of stderr
	 * there) wrote into /dev/null after its setsid */
	if (fd <= 2 || !ms_fd_is_ours(fd)) {
		errno = saved;
		return;
	}
	/* /dev/null over it rather than a close: a report being written on
	 * another thread writes there, never into a file of the program's
	 * that took the number.  System calls, as fds.h's: not a program's
	 * own open() or dup3(), nor ours. */
	int null = (int)syscall(SYS_openat, AT_FDCWD, "/dev/null", O_WRONLY | O_CLOEXEC);
	if (null < 0 || syscall(SYS_dup3, null, fd, O_CLOEXEC) < 0)
		(void)ms_fd_close(fd);
	if (null >= 0)
		(void)ms_fd_close(null);
	errno = saved;
}

void ms_output_std_moved(void)
{
	if (!saved_stream || __atomic_load_n(&detached, __ATOMIC_ACQUIRE))
		return;
	int saved = errno;
	/* still the program's (2>&1, or a descriptor it moves back later:
	 * ms_output_stderr finds it at fd 2 again); a copy already gone, or
	 * replaced by one of the program's */
	int fd = __atomic_load_n(&saved_fd, __ATOMIC_ACQUIRE);
	int keep = same_file(0) || same_file(1) || same_file(2) || fd <= 2 ||
		   !ms_fd_is_ours(fd);
	errno = saved;
	if (!keep)
		ms_output_detached();
}

void ms_output_say_stderr_gone(void)
{
	static int said;
	struct stat st;
	/* (a process that left its session: the copy went by our choice,
	 * and its fd 2 is a stream of its own now) */
	if (saved_fd < 0 || __atomic_load_n(&detached, __ATOMIC_ACQUIRE) ||
	    __atomic_exchange_n(&said, 1, __ATOMIC_RELAXED) ||
	    fstat(2, &st) != 0 ||
	    !(S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
		return;
	static const char msg[] =
		"mutexstat: no report: the program closed the stderr it started with, and "
		"mutexstat's copy of it (closefrom?); MUTEXSTAT_OUTPUT=FILE keeps reports\n";
	struct pollfd p = { 2, POLLOUT, 0 };
	if (poll(&p, 1, 0) == 1 && (p.revents & POLLOUT))
		ms_write_all(2, msg, sizeof msg - 1);
}

void ms_output_note(const char *msg)
{
	int fd = ms_output_stderr();
	struct pollfd p = { fd, POLLOUT, 0 };
	if (fd >= 0 && poll(&p, 1, 0) == 1 && (p.revents & POLLOUT))
		ms_write_all(fd, msg, strlen(msg));
}

void ms_output_start_dir(struct ms_fmt *f, const char *path)
{
	if (path[0] != '/' && start_dir[0])
		ms_fmt(f, "%s%s", start_dir, start_dir[1] ? "/" : "");
}

static char kept[2048]; /* zeros past what is written: always a string */
static size_t kept_len;

static int in_run_not_first(void)
{
	return ms_opt.run_dir && getpid() != (pid_t)ms_opt.run_root;
}

static void keep(const char *msg)
{
	static const char prefix[] = "mutexstat: ";
	if (!strncmp(msg, prefix, sizeof prefix - 1))
		msg += sizeof prefix - 1;
	size_t n = strlen(msg);
	if (n && msg[n - 1] == '\n')
		n--;
	if (!n || kept_len + n + 2 > sizeof kept)
		return;
	for (size_t i = 0; i < n; i++) /* the NUL after stays until the end */
		kept[kept_len + i] = msg[i];
	kept[kept_len + n] = '\n';
	kept_len += n + 1;
}

void ms_output_say(const char *msg)
{
	if (!in_run_not_first())
		ms_output_note(msg);
	keep(msg);
}

void ms_output_say_beside_report(const char *msg)
{
	/* where the text report goes to stderr: the same place -- if a
	 * report comes whatever the process does.  With no exit report, or
	 * none from a process that locks nothing (MUTEXSTAT_QUIET, as the
	 * launcher sets it), the line would stand alone in stderr that the
	 * program's parent may read (make, cargo): a report says it. */
	if (ms_opt.formats == MS_FORMAT_TEXT && !ms_opt.output && !in_run_not_first() &&
	    ms_opt.exit_report && !ms_opt.quiet)
		ms_output_note(msg);
	keep(msg);
}

void ms_output_keep(const char *msg)
{
	keep(msg);
}

size_t ms_output_kept_mark(void)
{
	return kept_len;
}

void ms_output_kept_trim(size_t mark)
{
	if (mark >= kept_len)
		return;
	/* zeros past the end again, the last one first: a reader (a report
	 * on another thread) sees a string that ends sooner */
	for (size_t i = kept_len; i-- > mark;)
		kept[i] = 0;
	kept_len = mark;
}

const char *ms_output_kept(void)
{
	return kept;
}

static void expand_path(struct ms_fmt *f, const char *pattern)
{
	for (const char *p = pattern; *p; p++) {
		if (p[0] == '%' && p[1] == 'p') {
			ms_fmt(f, "%d", (int)getpid());
			p++;
		} else
			ms_fmt(f, "%c", *p);
	}
}

/* MUTEXSTAT_OUTPUT as given (%p not expanded), from the start directory:
 * into path[4096]; its length in *len. */
static const char *output_as_given(char *path, size_t *len)
{
	struct ms_fmt f;
	ms_fmt_init(&f, path, 4096, -1);
	ms_output_start_dir(&f, ms_opt.output);
	ms_fmt(&f, "%s", ms_opt.output);
	*len = f.len;
	return ms_fmt_str(&f);
}

/* MUTEXSTAT_OUTPUT names a device or a FIFO: every process may write its
 * report there in turn.  (Not /dev/stdout, each process's own: in a run,
 * the first process's report goes there, and the others' to the run's
 * directory, not into outputs a test may compare.) */
static int output_is_stream(void)
{
	int saved = errno;
	char path[4096];
	size_t len;
	struct stat st;
	const char *p = output_as_given(path, &len);
	int stream = ms_output_stream_of(p) < 0 && stat(p, &st) == 0 &&
		     (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode));
	errno = saved;
	return stream;
}

/* MUTEXSTAT_OUTPUT names a directory -- it ends with '/', or is one --
 * (of `len` bytes, expanded, in path): the reports go into it, each
 * process's as mutexstat.PID.  Before, with several formats, a directory
 * as the prefix got files named .txt and .json, hidden from ls. */
static int names_dir(const char *path, size_t len)
{
	if (len && path[len - 1] == '/')
		return 1;
	int saved = errno;
	struct stat st;
	int dir = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
	errno = saved;
	return dir;
}

static int output_is_dir(void)
{
	char path[4096];
	size_t len;
	const char *p = output_as_given(path, &len);
	return names_dir(p, len);
}

int ms_output_run_uses_dir(void)
{
	/* a path with %p is a file per process, and so is one in a
	 * directory it names; a file without would be replaced by each
	 * process's report in turn, the last one's left: it is the first
	 * process's, and the others' go to the directory */
	return !ms_opt.output || (!strstr(ms_opt.output, "%p") && !output_is_stream() &&
				  !output_is_dir());
}

int ms_output_in_run_other(void)
{
	return in_run_not_first();
}

int ms_output_in_run_dir(void)
{
	return in_run_not_first() && ms_output_run_uses_dir();
}

/* A run's file is named by its program, so a list of the directory reads
 * as the run did; a name is one path component whatever the program's. */
static void run_file(struct ms_fmt *f)
{
	ms_output_start_dir(f, ms_opt.run_dir);
	ms_fmt(f, "%s/", ms_opt.run_dir);
	for (const char *p = ms_program_name(); *p; p++)
		ms_fmt(f, "%c", *p == '/' || (unsigned char)*p < ' ' ? '_' : *p);
	ms_fmt(f, ".%d", (int)getpid());
}

int ms_output_path(char *out, size_t cap, const char *infix, unsigned seq, const char *ext)
{
	struct ms_fmt f;
	ms_fmt_init(&f, out, cap, -1);
	const char *pattern = ms_opt.output ? ms_opt.output : "mutexstat.%p";
	if (ms_output_in_run_dir())
		run_file(&f);
	else {
		ms_output_start_dir(&f, pattern);
		expand_path(&f, pattern);
		/* a stream of the process's own (/dev/stdout): every report
		 * and every format goes there, as they would on stderr
		 * ("/dev/stdout.json" is no file to make) */
		if (ms_opt.output && ms_output_stream_of(ms_fmt_str(&f)) >= 0)
			return f.len + 1 < cap ? 0 : -1;
		if (ms_opt.output && f.len + 1 < cap && names_dir(ms_fmt_str(&f), f.len)) {
			if (out[f.len - 1] != '/')
				ms_fmt(&f, "/");
			ms_fmt(&f, "mutexstat.%d", (int)getpid());
		}
	}
	if (*infix)
		ms_fmt(&f, ".%s", infix);
	if (seq)
		ms_fmt(&f, ".%u", seq);
	ms_fmt(&f, "%s", ext);
	return f.len + 1 < cap ? 0 : -1;
}

static void say(char *why, size_t cap, const char *text, unsigned long n)
{
	struct ms_fmt f;
	ms_fmt_init(&f, why, cap, -1);
	ms_fmt(&f, text, n);
	ms_fmt_str(&f);
}

/* Report files being written (locked by take_whole), for a fork child to
 * let go of (ms_output_after_fork_child). */
static int writing[4] = { -1, -1, -1, -1 };

/* Two processes writing one report file at once -- a parent and its fork
 * children exiting together, with no %p in MUTEXSTAT_OUTPUT -- each emptied
 * it and wrote from its start in 8 KB pieces: the file held pieces of
 * several reports.  So a regular file is locked (flock, let go by the
 * close) before it is emptied and written, and each report replaces the
 * one before whole.  A writer that has not finished in 10 s (stopped, say)
 * is waited for no longer; a file system without locks is written as
 * before. */
static void lock_for_report(int fd)
{
	int saved = errno;
	for (int tries = 0; tries < 1000; tries++) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			for (unsigned i = 0; i < 4; i++) {
				int none = -1;
				if (__atomic_compare_exchange_n(&writing[i], &none, fd, 0,
								__ATOMIC_ACQ_REL,
								__ATOMIC_ACQUIRE))
					break;
			}
			break;
		}
		if (errno != EWOULDBLOCK && errno != EINTR)
			break;
		struct timespec pause = { 0, 10000000L }; /* 10 ms */
		nanosleep(&pause, NULL);
	}
	errno = saved;
}

/* The report files this process wrote (a few: its own to replace). */
static struct {
	dev_t dev;
	ino_t ino;
} mine[4];
static unsigned nmine;

static int is_mine(const struct stat *st)
{
	for (unsigned i = 0; i < nmine && i < 4; i++)
		if (mine[i].dev == st->st_dev && mine[i].ino == st->st_ino)
			return 1;
	return 0;
}

static int not_before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec > b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec >= b->tv_nsec);
}

/* Whether the file at fd was written by another process since this one
 * began, or its run did (base/run_began.h: a sibling a shell ran before
 * it, the programs of a build). */
static int others_since_began(int fd)
{
	struct stat st;
	if (fstat(fd, &st) != 0 || !st.st_size || is_mine(&st))
		return 0;
	struct timespec since = began, run;
	if (ms_run_began(&run) && !not_before(&run, &since))
		since = run;
	return not_before(&st.st_mtim, &since);
}

static void note_mine(int fd)
{
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || is_mine(&st))
		return;
	unsigned i = nmine++ % 4;
	mine[i].dev = st.st_dev;
	mine[i].ino = st.st_ino;
}

/* A regular report file, locked, emptied -- or, for a text report
 * (keep_others), left as it is if another process of the run wrote its
 * report there while this one lived (a parent and the child it waited
 * for, with no %p in MUTEXSTAT_OUTPUT): this one goes after it, a blank
 * line between.  0, or -1 with errno. */
static int take_whole(int fd, int keep_others)
{
	lock_for_report(fd);
	if (keep_others && others_since_began(fd)) {
		if (lseek(fd, 0, SEEK_END) < 0)
			return -1;
		return write(fd, "\n", 1) == 1 ? 0 : -1;
	}
	return ftruncate(fd, 0);
}

void ms_output_done(int fd)
{
	for (unsigned i = 0; i < 4; i++) {
		int was = fd;
		if (__atomic_compare_exchange_n(&writing[i], &was, -1, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			return;
	}
}

/* The stderr the program started with is shared by its children, and
 * their reports, written there at once in 8 KB pieces, came out cut into
 * each other (in a pipe, mid-line).  They take turns as on a report file,
 * with a lock on a second open of the same pipe, file or terminal: the
 * descriptor they share is one open file, whose flock would be one lock for
 * them all.  Opened for writing (a pipe's reading end, opened here, would
 * keep a pipe nobody reads from failing with EPIPE), without blocking (a
 * FIFO whose reader is gone: ENXIO, and no lock); /dev/null, sockets (the
 * journal) and the like are not locked. */
int ms_output_stderr_lock(int fd)
{
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 ||
	    !(S_ISFIFO(st.st_mode) || S_ISREG(st.st_mode) || isatty(fd)))
		return -1;
	char path[64];
	struct ms_fmt f;
	ms_fmt_init(&f, path, sizeof path, -1);
	ms_fmt(&f, "/proc/self/fd/%d", fd);
	int saved = errno;
	int lock = open(ms_fmt_str(&f), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	errno = saved;
	if (lock < 0)
		return -1;
	lock_for_report(lock);
	return lock;
}

void ms_output_stderr_unlock(int lock)
{
	if (lock < 0)
		return;
	int saved = errno;
	ms_output_done(lock);
	ms_fd_close(lock);
	errno = saved;
}

/* The child of a fork made while another thread wrote a report has that
 * file open too, and with it the lock (one open file, shared): a child
 * that lived on would keep every later writer of the file waiting.  It
 * writes nothing of that report: it closes its copy (close is
 * async-signal-safe). */
void ms_output_after_fork_child(void)
{
	/* `began` stays the parent's: a report written since then is the
	 * run's, another child's the parent waited for among them.  (Begun
	 * at its fork, each of children run one after another replaced the
	 * report of the one before: 3 of 4 lost.) */
	nmine = 0; /* the parent's reports are another process's */
	for (unsigned i = 0; i < 4; i++) {
		int fd = __atomic_exchange_n(&writing[i], -1, __ATOMIC_ACQ_REL);
		if (fd >= 0)
			ms_fd_close(fd);
	}
}

/* An existing name: used only if it cannot be someone else's data.  A
 * regular file is ours to replace if it belongs to the user we run as and
 * has no other name (a hard link planted in /tmp could name /etc/shadow,
 * which root owns).  Writing to a character device (/dev/null, a
 * terminal) or a FIFO clobbers nothing; O_NONBLOCK makes the open of a
 * FIFO without a reader fail (ENXIO) instead of waiting forever. */
static int open_existing(const char *path, int keep_others, char *why, size_t cap)
{
	int fd = open(path, O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ELOOP)
			say(why, cap, "a symlink: not followed", 0);
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) != 0) {
		ms_fd_close(fd);
		return -1;
	}
	if (S_ISREG(st.st_mode)) {
		if (st.st_uid != geteuid())
			say(why, cap, "another user's file (uid %lu): not replaced",
			    (unsigned long)st.st_uid);
		else if (st.st_nlink != 1)
			say(why, cap, "a file with %lu links: not replaced",
			    (unsigned long)st.st_nlink);
		else if (take_whole(fd, keep_others) == 0)
			goto use;
	} else if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))
		goto use;
	else
		say(why, cap, "not a regular file: not written", 0);
	ms_fd_close(fd);
	return -1;
use:
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

int ms_output_stream_of(const char *path)
{
	static const char *const dirs[] = { "/dev/fd/", "/proc/self/fd/" };
	if (!strcmp(path, "/dev/stdout"))
		return 1;
	if (!strcmp(path, "/dev/stderr"))
		return 2;
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		size_t n = strlen(dirs[i]);
		if (strncmp(path, dirs[i], n) != 0)
			continue;
		const char *d = path + n;
		size_t digits = strspn(d, "0123456789");
		if (!digits || digits > 7 || d[digits] || (digits > 1 && d[0] == '0'))
			return -1;
		int fd = 0;
		for (size_t k = 0; k < digits; k++)
			fd = fd * 10 + (d[k] - '0');
		return fd;
	}
	return -1;
}

int ms_output_create(const char *path, int keep_others, char *why, size_t cap)
{
	int saved = errno, fd = -1;
	why[0] = 0;
	int stream = ms_output_stream_of(path);
	if (stream >= 0) {
		/* the program's descriptor as it is now, never one of ours */
		if (ms_fd_is_ours(stream))
			say(why, cap, "the library's own descriptor: not written", 0);
		else if ((fd = fcntl(stream, F_DUPFD_CLOEXEC, 3)) < 0) {
			const char *name = strerrorname_np(errno);
			say(why, cap, name ? name : "error", 0);
		}
		errno = saved;
		return fd;
	}
	/* A few tries: the name may vanish or appear between two opens. */
	for (int tries = 0; fd < 0 && tries < 4; tries++) {
		why[0] = 0;
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
			  0644);
		if (fd >= 0) {
			/* another process may have found it and begun */
			(void)take_whole(fd, keep_others);
			break;
		}
		if (errno != EEXIST)
			break;
		fd = open_existing(path, keep_others, why, cap);
		if (fd < 0 && (why[0] || errno != ENOENT))
			break;
	}
	if (fd >= 0)
		note_mine(fd);
	if (fd < 0 && !why[0]) {
		const char *name = strerrorname_np(errno);
		say(why, cap, name ? name : "error", 0);
	}
	errno = saved;
	return fd;
}
