/* run.c - a run of many processes under the launcher (run.h). */
#define _GNU_SOURCE /* F_OFD_SETLK */
#include "report/run.h"
#include "core/forked.h"
#include "base/fds.h"
#include "base/fmt.h"
#include "base/options.h"
#include "base/output.h"
#include "report/json_writer.h"
#include "report/report.h"
#include "report/suppress.h"
#include "stacks/symbols.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Each process's lines go in one write(2) to a file opened O_APPEND, so
 * processes that end together do not mix them. */
#define NOTE_MAX 16384
#define RUN_TOP 10          /* a process's mutexes noted */
#define MAX_FINDINGS 1024   /* distinct findings in a summary */
#define CODE_MAX 100        /* the functions a finding names, as the summary lists them */
#define MAX_SITES 4096      /* distinct sites in a summary */
#define SUMMARY_TOP 10      /* sites the summary lists */
#define SUMMARY_WIDTH 120   /* columns of a summary line, as of a report's */
#define SITE_MAX 255        /* of a site's text, what is fitted to a line */
#define MAX_READ (64u << 20) /* .processes read back, at most */

static int own_failing;
static int notes_fd = -1; /* .processes, opened as the process started */
/* In a run, but not able to open its list as it started (ms_run_start):
 * the process reports as outside a run, and keeps its exit status as the
 * run's processes do (MUTEXSTAT_EXIT_CODE is the launcher's). */
static int left_run;

int ms_run_active(void)
{
	return ms_opt.run_dir != NULL;
}

int ms_run_is_root(void)
{
	return ms_opt.run_dir && getpid() == (pid_t)ms_opt.run_root;
}

static int run_path(char *out, size_t cap, const char *name)
{
	struct ms_fmt f;
	ms_fmt_init(&f, out, cap, -1);
	ms_fmt(&f, "%s/%s", ms_opt.run_dir, name);
	ms_fmt_str(&f);
	return f.len + 1 < cap ? 0 : -1;
}

int ms_run_dir_gone(void)
{
	struct stat st;
	int saved = errno;
	int gone = ms_opt.run_dir && stat(ms_opt.run_dir, &st) != 0 && errno == ENOENT;
	errno = saved;
	return gone;
}

void ms_run_say_gone(const char *name)
{
	int fd = ms_output_stderr();
	if (fd < 0)
		return;
	char buf[4400];
	struct ms_fmt f;
	ms_fmt_init(&f, buf, sizeof buf, -1);
	ms_fmt(&f, "mutexstat: the run's directory '");
	ms_fmt_quoted(&f, ms_opt.run_dir, 200);
	if (name)
		ms_fmt(&f, "' was removed while the run went on; the %s report is lost\n", name);
	else
		ms_fmt(&f, "' was removed while the run went on; the report goes to stderr\n");
	const char *line = ms_fmt_str(&f);
	ms_write_all(fd, line, strlen(line));
}

/* ---- a process's lines ---------------------------------------------- */

/* Each process of the run that opened .processes holds a lock on the
 * byte at its pid through that open file (an open file description lock:
 * it lasts while any process has the file open, and a fork child shares
 * its parent's -- from the fork on, with no step of its own that the
 * parent could outrun).  The first process, ending, lets go of its own
 * and sees whether others live on (a daemon it forked, a server started
 * in the background): then the last of them to end removes the
 * directory if no report came. */
static void hold_alive(void)
{
	/* a read lock: a fork child that outlives an exec of its parent
	 * holds the old file's lock on the same byte, which a write lock of
	 * the new program's would conflict with */
	struct flock fl = { .l_type = F_RDLCK, .l_whence = SEEK_SET,
			    .l_start = (off_t)getpid(), .l_len = 1 };
	int saved = errno;
	(void)fcntl(notes_fd, F_OFD_SETLK, &fl);
	errno = saved;
}

/* Calls fn with each name in directory path until it returns 0 (readdir
 * without opendir's allocation); 0 if it stopped so. */
static int each_name(const char *path, int (*fn)(const char *name, void *arg), void *arg)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 1;
	char dents[4096];
	long got;
	int go = 1;
	while (go && (got = syscall(SYS_getdents64, fd, dents, sizeof dents)) > 0)
		for (long at = 0; go && at < got;) {
			const struct dirent64 *e = (const struct dirent64 *)(dents + at);
			at += e->d_reclen;
			go = fn(e->d_name, arg);
		}
	ms_fd_close(fd);
	return go;
}

/* The start of the file at path, NUL-ended in buf[cap] ("" if it cannot
 * be read). */
static const char *read_start(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t got = fd >= 0 ? read(fd, buf, cap - 1) : -1;
	if (fd >= 0)
		ms_fd_close(fd);
	buf[got > 0 ? got : 0] = 0;
	return buf;
}

/* Whether process pid lives (not a zombie). */
static int process_lives(long pid)
{
	char path[64], stat[128];
	struct ms_fmt f;
	ms_fmt_init(&f, path, sizeof path, -1);
	ms_fmt(&f, "/proc/%ld/stat", pid);
	const char *paren = strrchr(read_start(ms_fmt_str(&f), stat, sizeof stat), ')');
	char state = 0;
	if (paren && paren[1])
		state = paren[2];
	return state && state != 'Z' && state != 'X';
}

/* fn for each_name of /proc/self/task: 0 (stop) at a task with a child
 * that lives. */
static int no_child_lives(const char *task, void *arg)
{
	(void)arg;
	if (task[0] < '0' || task[0] > '9')
		return 1;
	char path[320], list[4096];
	struct ms_fmt f;
	ms_fmt_init(&f, path, sizeof path, -1);
	ms_fmt(&f, "/proc/self/task/%s/children", task);
	const char *p = read_start(ms_fmt_str(&f), list, sizeof list);
	while (*p >= '0' && *p <= '9') {
		if (process_lives((long)ms_scan_number(&p, 10)))
			return 0;
		while (*p == ' ' || *p == '\n')
			p++;
	}
	return 1;
}

/* A child of this process that has not ended: between an exec and the
 * new program's start-up, where it takes its lock, a child holds none
 * (.processes is closed on exec). */
static int children_alive(void)
{
	return !each_name("/proc/self/task", no_child_lives, NULL);
}

/* This process's hold goes: its open .processes, if the number is still
 * ours (a program that closed it may have it for a file of its own).
 * forget 0: notes_fd is left as it is (an _exit, maybe of a vfork child,
 * whose memory is its parent's). */
static void let_go(int forget)
{
	int saved = errno;
	if (notes_fd >= 0 && ms_fd_is_ours(notes_fd))
		ms_fd_close(notes_fd);
	if (forget)
		notes_fd = -1;
	errno = saved;
}

/* After let_go: a hold left is another process's -- or a child of this
 * one is alive. */
static int others_alive(void)
{
	char path[4200];
	if (run_path(path, sizeof path, ".processes") != 0)
		return 0;
	int saved = errno;
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0 };
	int alive = fd >= 0 && fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
	if (fd >= 0)
		ms_fd_close(fd);
	alive = alive || children_alive();
	errno = saved;
	return alive;
}

static void run_memory_reserve(void);
static char *note_memory(size_t bytes);
static void note_memory_done(char *p, size_t bytes);

void ms_run_start(void)
{
	char path[4200];
	if (!ms_run_active() || run_path(path, sizeof path, ".processes") != 0)
		return;
	int fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd >= 0) {
		notes_fd = ms_fd_move_high(fd);
		hold_alive();
		if (ms_run_is_root())
			run_memory_reserve();
		return;
	}
	/* A directory removed while the run went on (a test suite that
	 * cleans $TMPDIR), one of another user's, or a bad value: the
	 * process's report and findings would be lost unsaid, and
	 * MUTEXSTAT_EXIT_CODE would not fail the run for them.  The process
	 * reports as outside a run instead, and says why. */
	const char *e = strerrorname_np(errno);
	char buf[4400];
	struct ms_fmt f;
	ms_fmt_init(&f, buf, sizeof buf, -1);
	ms_fmt(&f, "mutexstat: MUTEXSTAT_RUN_DIR '");
	ms_fmt_quoted(&f, ms_opt.run_dir, 200);
	ms_fmt(&f, "': cannot open the run's list in it (%s); this process reports as "
		   "outside a run\n", e ? e : "error");
	ms_opt.run_dir = NULL;
	left_run = ms_opt.run_root != 0; /* a launcher's run, not a bad value alone */
	ms_output_say(ms_fmt_str(&f)); /* no longer in a run: on stderr too */
}

/* One field: tabs and newlines would end it early. */
static void field(struct ms_fmt *f, const char *s)
{
	for (; *s; s++)
		ms_fmt(f, "%c", *s == '\t' || *s == '\n' || *s == '\r' ? ' ' : *s);
}

static void note_site(const struct ms_top_line *l, void *arg)
{
	struct ms_fmt *f = arg;
	if (!l->wait_ns && !l->contended)
		return;
	ms_fmt(f, "S\t%d\t%llu\t%llu\t%llu\t", (int)getpid(),
	       (unsigned long long)l->wait_ns, (unsigned long long)l->contended,
	       (unsigned long long)l->acquisitions);
	if (l->name) {
		field(f, l->name);
		ms_fmt(f, ": ");
	}
	field(f, l->site);
	ms_fmt(f, "\n");
}

/* The heading of each finding in text (ms_report_findings_text's), and
 * the functions its lines name: two findings with one heading (two
 * inversions of two mutexes each) are told apart by their code. */
static void note_findings(struct ms_fmt *f, const char *text)
{
	for (const char *p = text; *p;) {
		const char *end = strchr(p, '\n');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (ms_suppress_heading_len(p, len)) {
			/* its body: up to the next heading */
			const char *q = p + len + (end != NULL);
			while (*q) {
				const char *e = strchr(q, '\n');
				size_t l = e ? (size_t)(e - q) : strlen(q);
				if (ms_suppress_heading_len(q, l))
					break;
				q += l + (e != NULL);
			}
			char code[CODE_MAX];
			ms_suppress_finding_code(p + len, (size_t)(q - (p + len)), code, sizeof code);
			ms_fmt(f, "F\t%d\t%.*s\t%s\n", (int)getpid(), (int)len, p, code);
		}
		p += len + (end != NULL);
	}
}

/* Whether a text report written (and not lost) went to stderr. */
static int report_on_stderr(int written, int unwritten)
{
	return written && (unwritten || (!ms_opt.output && ms_opt.formats == MS_FORMAT_TEXT &&
					 !ms_output_in_run_dir()));
}

/* The path of the report a reader opens first: the text, else the first
 * format's; 0, or -1 (too long). */
static int first_report_path(char *out, size_t cap)
{
	uint64_t fm = ms_opt.formats;
	const char *ext = fm == MS_FORMAT_TEXT ? "" : fm & MS_FORMAT_TEXT ? ".txt"
			: fm & MS_FORMAT_JSON ? ".json" : fm & MS_FORMAT_PPROF ? ".pb.gz"
			: fm & MS_FORMAT_DOT ? ".dot" : ".wait.folded";
	return ms_output_path(out, cap, "", 0, ext);
}

static void append_note(int written, int unwritten)
{
	char path[4200], report[4200];
	if (run_path(path, sizeof path, ".processes") != 0)
		return;
	/* the first process's from its reserve (run_memory_take), which a
	 * limit lowered since needs; the cap's after the note's */
	size_t cap = 1u << 20;
	char *buf = note_memory(NOTE_MAX + cap);
	if (!buf)
		return;
	struct ms_fmt f;
	ms_fmt_init(&f, buf, NOTE_MAX, -1);
	if (report_on_stderr(written, 0))
		strcpy(report, "(stderr)");
	else if (!written || unwritten || first_report_path(report, sizeof report) != 0)
		strcpy(report, "-");
	/* its findings' text first, for the count of failing ones */
	char *text = written ? buf + NOTE_MAX : NULL;
	if (text)
		own_failing = ms_report_findings_text(text, cap);
	/* the user it ends as: one that cannot write into the directory */
	/* took locks: a report that says more than "locked no mutexes"
	 * (MUTEXSTAT_QUIET=0 writes that one too) */
	ms_fmt(&f, "P\t%d\t%d\t%d\t%d\t%d\t%u\t", (int)getpid(), (int)getppid(), written,
	       written && !ms_report_locked_nothing(), own_failing, (unsigned)geteuid());
	field(&f, report);
	ms_fmt(&f, "\t");
	field(&f, ms_program_name());
	ms_fmt(&f, "\n");
	if (text)
		note_findings(&f, text);
	if (written)
		ms_report_each_top(note_site, &f);
	/* a block cut short by the buffer ends at its last whole line */
	size_t len = f.len;
	while (len && buf[len - 1] != '\n')
		len--;
	/* the file opened at the start, unless the program closed it since */
	int fd = notes_fd >= 0 && ms_fd_is_ours(notes_fd)
			 ? notes_fd
			 : open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd >= 0) {
		(void)ms_write_all(fd, buf, len);
		if (fd != notes_fd)
			ms_fd_close(fd);
	}
	note_memory_done(buf, NOTE_MAX + cap);
}

/* ---- reading the run back ------------------------------------------- */

struct finding {
	const char *text; /* the first process's heading */
	size_t len;
	const char *code; /* the functions it names (note_findings) */
	unsigned processes;
	int pid[4]; /* the first few */
	const char *prog[4];
};

struct site {
	const char *text;
	size_t len;
	uint64_t wait_ns, contended, acquisitions;
	unsigned processes;
};

struct run {
	char *data; /* .processes, in a private mapping we may write */
	size_t len;
	unsigned processes, recorded, others, failing_others, unwritten;
	unsigned took_locks; /* ... of the processes recorded */
	unsigned unwritten_as_other; /* ... of processes that ended as another user */
	unsigned other_uid;          /* the first such user */
	int dir_gone;                /* the directory was removed meanwhile */
	int unreadable;              /* the list could not be read: its errno */
	struct finding *findings;
	unsigned nfindings, findings_dropped;
	struct site *sites;
	unsigned nsites, sites_dropped;
};

static const char *next_field(char **p)
{
	char *s = *p, *tab = strchr(s, '\t');
	if (tab) {
		*tab = 0;
		*p = tab + 1;
	} else
		*p = s + strlen(s);
	return s;
}

static int pid_of(const char *s)
{
	int v = 0;
	for (; *s >= '0' && *s <= '9'; s++)
		v = v * 10 + (*s - '0');
	return v;
}

static uint64_t num_of(const char *s)
{
	return ms_scan_number(&s, 10);
}

/* Findings are the same across processes when their headings are,
 * numbers aside (thread ids, addresses, counts differ from run to run). */
static int same_but_numbers(const char *a, size_t alen, const char *b, size_t blen)
{
	size_t i = 0, j = 0;
	while (i < alen && j < blen) {
		int da = (a[i] >= '0' && a[i] <= '9'), db = (b[j] >= '0' && b[j] <= '9');
		if (da && db) {
			/* a number, hex or decimal: skip both */
			while (i < alen && ((a[i] >= '0' && a[i] <= '9') || (a[i] >= 'a' && a[i] <= 'f') || a[i] == 'x'))
				i++;
			while (j < blen && ((b[j] >= '0' && b[j] <= '9') || (b[j] >= 'a' && b[j] <= 'f') || b[j] == 'x'))
				j++;
			continue;
		}
		if (a[i] != b[j])
			return 0;
		i++, j++;
	}
	return i == alen && j == blen;
}

static void add_finding(struct run *run, const char *text, const char *code, int pid,
			const char *prog)
{
	size_t len = strlen(text);
	for (unsigned i = 0; i < run->nfindings; i++) {
		struct finding *x = &run->findings[i];
		if (same_but_numbers(x->text, x->len, text, len) && !strcmp(x->code, code)) {
			if (x->processes < 4) {
				x->pid[x->processes] = pid;
				x->prog[x->processes] = prog;
			}
			x->processes++;
			return;
		}
	}
	if (run->nfindings == MAX_FINDINGS) {
		run->findings_dropped++;
		return;
	}
	struct finding *x = &run->findings[run->nfindings++];
	x->text = text;
	x->len = len;
	x->code = code;
	x->processes = 1;
	x->pid[0] = pid;
	x->prog[0] = prog;
}

static void add_site(struct run *run, const char *text, uint64_t wait, uint64_t contended,
		     uint64_t acquisitions)
{
	size_t len = strlen(text);
	for (unsigned i = 0; i < run->nsites; i++) {
		struct site *s = &run->sites[i];
		if (s->len == len && !memcmp(s->text, text, len)) {
			s->wait_ns += wait;
			s->contended += contended;
			s->acquisitions += acquisitions;
			s->processes++;
			return;
		}
	}
	if (run->nsites == MAX_SITES) {
		run->sites_dropped++;
		return;
	}
	run->sites[run->nsites++] = (struct site){ text, len, wait, contended, acquisitions, 1 };
}

static void parse(struct run *run, unsigned run_owner)
{
	int self = (int)getpid(), block = 0; /* a block's P line comes first */
	const char *prog = NULL;
	for (char *line = run->data; line < run->data + run->len;) {
		char *end = memchr(line, '\n', (size_t)(run->data + run->len - line));
		if (!end)
			break; /* a block still being written */
		*end = 0;
		char *p = line;
		const char *kind = next_field(&p);
		int pid = pid_of(next_field(&p));
		if (!strcmp(kind, "P")) {
			(void)next_field(&p); /* parent */
			int written = pid_of(next_field(&p));
			int locked = pid_of(next_field(&p));
			int failing = pid_of(next_field(&p));
			unsigned uid = (unsigned)num_of(next_field(&p));
			const char *report = next_field(&p);
			block = pid;
			prog = p;
			run->processes++;
			run->recorded += written != 0;
			run->took_locks += locked != 0;
			if (written && !strcmp(report, "-")) {
				run->unwritten++;
				if (uid != run_owner && !run->unwritten_as_other++)
					run->other_uid = uid;
			}
			if (pid != self) {
				run->others++;
				run->failing_others += failing;
			}
		} else if (!strcmp(kind, "F")) {
			const char *heading = next_field(&p);
			add_finding(run, heading, p, pid, pid == block ? prog : NULL);
		} else if (!strcmp(kind, "S")) {
			uint64_t wait = num_of(next_field(&p));
			uint64_t contended = num_of(next_field(&p));
			uint64_t acquisitions = num_of(next_field(&p));
			add_site(run, p, wait, contended, acquisitions);
		}
		line = end + 1;
	}
}

/* The memory a summary reads the run into: the run's list (at most
 * MAX_READ), and its findings and sites.  Reserved by the first process
 * as it starts (no access, no memory), and made usable with mprotect when
 * the summary is made: a shell that lowers its address-space limit below
 * what it has mapped (`ulimit -v` in the launched script) can map nothing
 * more, and the summary -- MUTEXSTAT_EXIT_CODE with it -- was lost without
 * a word.  A process that could not reserve it maps it then. */
#define PAGE_UP(n) (((n) + 4095) & ~(size_t)4095)
#define DATA_ROOM PAGE_UP((size_t)MAX_READ + 1)
#define FINDINGS_ROOM PAGE_UP(MAX_FINDINGS * sizeof(struct finding))
#define SITES_ROOM PAGE_UP(MAX_SITES * sizeof(struct site))
#define RUN_MEMORY (DATA_ROOM + FINDINGS_ROOM + SITES_ROOM)
static char *run_memory;
static int run_memory_reserved; /* 1: reserved at start, kept for good */

static void run_memory_reserve(void)
{
	run_memory = mmap(NULL, RUN_MEMORY, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	run_memory_reserved = run_memory != MAP_FAILED;
	if (!run_memory_reserved)
		run_memory = NULL;
}

/* Usable memory for a list of len bytes (zero, as mapped), or 0. */
static int run_memory_take(size_t len)
{
	if (!run_memory_reserved) {
		run_memory = mmap(NULL, RUN_MEMORY, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (run_memory == MAP_FAILED)
			run_memory = NULL;
		return run_memory != NULL;
	}
	/* the list's pages, and the tables after it */
	return mprotect(run_memory, PAGE_UP(len + 1), PROT_READ | PROT_WRITE) == 0 &&
	       mprotect(run_memory + DATA_ROOM, FINDINGS_ROOM + SITES_ROOM,
			PROT_READ | PROT_WRITE) == 0;
}

static void run_memory_give(void)
{
	if (!run_memory_reserved) {
		munmap(run_memory, RUN_MEMORY);
		run_memory = NULL;
		return;
	}
	/* reserved again, its pages given back: a second read starts at zero */
	(void)madvise(run_memory, RUN_MEMORY, MADV_DONTNEED);
	(void)mprotect(run_memory, RUN_MEMORY, PROT_NONE);
}

/* Memory for a process's note of bytes (zero), or NULL: the first
 * process's reserve (read_run takes it after), else a mapping. */
static char *note_memory(size_t bytes)
{
	/* (not a vfork child's: the reserve is in its parent's memory, and
	 * may hold the parent's reading of the run) */
	if (run_memory_reserved && ms_run_is_root())
		return run_memory_take(bytes) ? run_memory : NULL;
	char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	return p; /* note_memory_done unmaps it */
}

static void note_memory_done(char *p, size_t bytes)
{
	if (p == run_memory)
		run_memory_give();
	else
		munmap(p, bytes);
}

/* The run's list could not be read (its memory, or its file): what other
 * processes found is not known, and the summary says so. */
static int read_failed(struct run *run)
{
	run->unreadable = errno ? errno : EIO;
	return -1;
}

static int read_run(struct run *run)
{
	char path[4200];
	memset(run, 0, sizeof *run);
	if (run_path(path, sizeof path, ".processes") != 0)
		return -1;
	/* Through the file opened at the start if this process still has
	 * it: the directory may have been removed since, the run's list
	 * with it, which the processes that had it open still wrote.  Opened
	 * anew (/proc), not dup'ed: the mapping would keep the hold of
	 * hold_alive() past let_go(), and the run would seem to live on. */
	int nofollow = O_NOFOLLOW;
	if (notes_fd >= 0 && ms_fd_is_ours(notes_fd)) {
		struct ms_fmt f;
		ms_fmt_init(&f, path, sizeof path, -1);
		ms_fmt(&f, "/proc/self/fd/%d", notes_fd);
		ms_fmt_str(&f);
		nofollow = 0; /* the link is the way */
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC | nofollow);
	if (fd < 0 && !nofollow && run_path(path, sizeof path, ".processes") == 0)
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW); /* no /proc */
	if (fd < 0)
		return read_failed(run);
	struct stat st;
	struct stat dir;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
		ms_fd_close(fd);
		return -1;
	}
	if (stat(ms_opt.run_dir, &dir) != 0) {
		run->dir_gone = 1;
		dir.st_uid = geteuid();
	}
	size_t len = (size_t)st.st_size < MAX_READ ? (size_t)st.st_size : MAX_READ;
	if (!run_memory_take(len)) {
		ms_fd_close(fd);
		return read_failed(run);
	}
	run->data = run_memory;
	run->findings = (struct finding *)(run_memory + DATA_ROOM);
	run->sites = (struct site *)(run_memory + DATA_ROOM + FINDINGS_ROOM);
	/* read, not mapped: a mapping of the file kept the hold of
	 * hold_alive() past let_go(), and the run seemed to live on */
	while (run->len < len) {
		ssize_t n = read(fd, run->data + run->len, len - run->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		run->len += (size_t)n;
	}
	ms_fd_close(fd);
	parse(run, (unsigned)dir.st_uid);
	return 0;
}

static void free_run(struct run *run)
{
	if (!run->data)
		return;
	run_memory_give();
	run->data = NULL;
}

/* ---- the summary ---------------------------------------------------- */

/* Where the reports of the run's other processes are: the run's
 * directory, or where MUTEXSTAT_OUTPUT sent them (base/output.h). */
/* "as DIR/r.%p.txt (%p the pid)", "in DIR/r.txt": where -o puts reports. */
static void reports_at(struct ms_fmt *f, const char *out)
{
	ms_fmt(f, "%s ", strstr(out, "%p") ? "as" : "in");
	ms_output_start_dir(f, out);
	ms_fmt(f, "%s%s", out, strstr(out, "%p") ? " (%p the pid)" : "");
}

static int first_reported; /* the first process wrote its report (summary) */

static void where_reports(struct ms_fmt *f, const struct run *run)
{
	const char *out = ms_opt.output;
	if (run->dir_gone) {
		ms_fmt(f, "the run's directory %s/ was removed while the run went on: the "
			  "reports written there are lost", ms_opt.run_dir);
		return;
	}
	if (ms_output_run_uses_dir()) {
		/* none locked: none wrote a report, and the directory the
		 * launcher made goes (remove_empty_run) */
		if (run->recorded)
			ms_fmt(f, "reports in %s/", ms_opt.run_dir);
		else
			ms_fmt(f, "no reports");
		/* -o FILE without %p: the first process's is there (the man
		 * page says the summary tells which) */
		if (out && first_reported && ms_opt.formats == MS_FORMAT_TEXT) {
			ms_fmt(f, ", the first process's ");
			reports_at(f, out);
		}
		return;
	}
	ms_fmt(f, "reports ");
	reports_at(f, out);
}

/* "processes of this run live on (a daemon?): ..." after head, where
 * their reports will be, and tail. */
static void say_living(struct ms_fmt *f, const char *head, const char *tail)
{
	ms_fmt(f, "%sprocesses of this run live on (a daemon?): ", head);
	if (!ms_output_run_uses_dir()) { /* -o with %p: not the directory's */
		ms_fmt(f, "their reports, if any, will be ");
		reports_at(f, ms_opt.output);
	} else if (ms_run_dir_gone())
		ms_fmt(f, "the run's directory was removed, so their reports, if any, will go "
			  "to their stderr");
	else
		ms_fmt(f, "their reports, if any, will be in %s/", ms_opt.run_dir);
	ms_fmt(f, "%s\n", tail);
}

/* The run's summary; after_report: below this process's report on
 * stderr, after a blank line -- else it is stderr's first line.  living:
 * processes of the run live on, whose reports come after it. */
static void summary(struct ms_fmt *f, const struct run *run, int reported, int after_report,
		    int living)
{
	char name[64];
	const char *dir = ms_opt.run_dir;
	first_reported = reported;
	if (run->unreadable) {
		const char *e = strerrorname_np(run->unreadable);
		ms_fmt(f, "%smutexstat: the run of %s (pid %d): its list of processes could not "
			  "be read (%s%s); the run's findings are not known: ",
		       after_report ? "\n" : "",
		       ms_name_cut(name, sizeof name, ms_program_name(), 40), (int)getpid(),
		       e ? e : "error",
		       run->unreadable == ENOMEM ? ": an address-space limit lowered since it started?"
						  : "");
		if (ms_output_run_uses_dir())
			ms_fmt(f, "their reports are in %s/", dir);
		else {
			ms_fmt(f, "their reports are ");
			reports_at(f, ms_opt.output);
		}
		ms_fmt(f, "\n");
		return;
	}
	ms_fmt(f, "%smutexstat: the run of %s (pid %d): %u process%s (%u took locks); ",
	       after_report ? "\n" : "",
	       ms_name_cut(name, sizeof name, ms_program_name(), 40), (int)getpid(),
	       run->processes, run->processes == 1 ? "" : "es", run->took_locks);
	where_reports(f, run);
	ms_fmt(f, "\n");
	/* a daemon's findings come later: "no findings" (and the exit code)
	 * is of the processes that have ended */
	if (living)
		say_living(f, "  (", ",\n   not in this summary)");
	/* -o FILE without %p is the first process's report: a user looking
	 * for it (mutexstat -o r.txt make check) is told why there is none */
	if (ms_opt.output && ms_output_run_uses_dir() && !reported) {
		ms_fmt(f, "  (no ");
		ms_fmt_quoted(f, ms_opt.output, 200);
		ms_fmt(f, ": that is the first process's report, and it locked nothing)\n");
	}
	if (run->unwritten_as_other && ms_output_run_uses_dir())
		ms_fmt(f, "  (%u report%s could not be written there, %u by %s that became "
			  "uid %u and may not write\n   into the directory: mutexstat "
			  "--run-user gives the directory to that user)\n",
		       run->unwritten, run->unwritten == 1 ? "" : "s", run->unwritten_as_other,
		       run->unwritten_as_other == 1 ? "a process" : "processes", run->other_uid);
	else if (run->unwritten_as_other)
		ms_fmt(f, "  (%u report%s could not be written there, %u by %s that became "
			  "uid %u and may not write\n   there: -o into a directory that user "
			  "may write to keeps them)\n",
		       run->unwritten, run->unwritten == 1 ? "" : "s", run->unwritten_as_other,
		       run->unwritten_as_other == 1 ? "a process" : "processes", run->other_uid);
	else if (run->unwritten)
		ms_fmt(f, "  (%u report%s could not be written there)\n", run->unwritten,
		       run->unwritten == 1 ? "" : "s");
	if (run->nfindings) {
		ms_fmt(f, "findings, each once, with the processes that had it:\n");
		for (unsigned i = 0; i < run->nfindings; i++) {
			const struct finding *x = &run->findings[i];
			ms_fmt(f, "  %.*s\n", (int)x->len, x->text);
			if (x->code[0])
				ms_fmt(f, "    code: %s\n", x->code);
			ms_fmt(f, "    in");
			for (unsigned j = 0; j < x->processes && j < 4; j++)
				ms_fmt(f, "%s %s (pid %d)", j ? "," : "",
				       ms_name_cut(name, sizeof name, x->prog[j] ? x->prog[j] : "?", 40),
				       x->pid[j]);
			if (x->processes > 4)
				ms_fmt(f, " and %u more", x->processes - 4);
			ms_fmt(f, "\n");
		}
		if (run->findings_dropped)
			ms_fmt(f, "  (%u more findings not listed)\n", run->findings_dropped);
	} else if (run->dir_gone)
		ms_fmt(f, "no findings in the run's list; processes started after the directory "
			  "went reported as outside a run\n");
	else
		ms_fmt(f, "no findings\n");
	if (run->nsites) {
		/* the most wait, then the most contended: a selection of the
		 * first SUMMARY_TOP, the list being short */
		unsigned order[SUMMARY_TOP], n = 0;
		for (unsigned i = 0; i < run->nsites; i++) {
			const struct site *s = &run->sites[i];
			unsigned at = n;
			while (at > 0) {
				const struct site *o = &run->sites[order[at - 1]];
				if (o->wait_ns > s->wait_ns ||
				    (o->wait_ns == s->wait_ns && o->contended >= s->contended))
					break;
				at--;
			}
			if (at >= SUMMARY_TOP)
				continue;
			if (n < SUMMARY_TOP)
				n++;
			memmove(&order[at + 1], &order[at], (n - 1 - at) * sizeof order[0]);
			order[at] = i;
		}
		ms_fmt(f, "most waited-for mutexes of the run, by where they were first locked:\n");
		ms_fmt(f, "  %10s %10s %12s %9s  %s\n", "wait tot", "contended", "acquired",
		       "processes", "first locked at");
		for (unsigned k = 0; k < n; k++) {
			const struct site *s = &run->sites[order[k]];
			char wait[16], site[SITE_MAX + 1];
			size_t len = s->len < SITE_MAX ? s->len : SITE_MAX;
			memcpy(site, s->text, len);
			site[len] = 0;
			ms_fmt(f, "  %10s %10llu %12llu %9u  %s\n", ms_duration(wait, s->wait_ns),
			       (unsigned long long)s->contended,
			       (unsigned long long)s->acquisitions, s->processes,
			       ms_symbol_fit(site, SUMMARY_WIDTH - 49));
		}
	}
	if (run->dir_gone && ms_opt.exit_code)
		ms_fmt(f, "the run fails (MUTEXSTAT_EXIT_CODE): the findings of processes started "
			  "after the directory went are not counted here\n");
	else if (run->recorded && !run->dir_gone)
		ms_fmt(f, "(and as JSON in %s/summary.json)\n", dir);
	ms_fmt(f, "mutexstat: end of the run's summary; ");
	where_reports(f, run);
	ms_fmt(f, "\n");
}

/* A string of the .processes text (not NUL-terminated there), cut at 1 KB. */
static void text_field(struct ms_jw *j, const char *key, const char *s, size_t len)
{
	char text[1024];
	size_t n = len < sizeof text - 1 ? len : sizeof text - 1;
	memcpy(text, s, n);
	text[n] = 0;
	ms_jw_str(j, key, text);
}

/* The same as JSON, in DIR/summary.json, for scripts (and the comparison
 * of two runs): times in nanoseconds, every finding's processes listed. */
static void summary_json(int fd, const struct run *run, int living)
{
	char buf[8192];
	struct ms_jw j = { 0 };
	ms_fmt_init(&j.f, buf, sizeof buf, fd);
	ms_jw_obj(&j, NULL);
	ms_jw_num(&j, "version", 1);
	ms_jw_str(&j, "program", ms_program_name());
	ms_jw_num(&j, "pid", (uint64_t)getpid());
	ms_jw_str(&j, "directory", ms_opt.run_dir);
	ms_jw_num(&j, "processes", run->processes);
	ms_jw_num(&j, "recorded", run->recorded);
	ms_jw_num(&j, "took_locks", run->took_locks);
	ms_jw_num(&j, "reports_unwritten", run->unwritten);
	ms_jw_num(&j, "reports_unwritten_by_another_user", run->unwritten_as_other);
	ms_jw_num(&j, "failing", (uint64_t)(own_failing + ms_report_failing != 0) +
				    run->failing_others);
	ms_jw_boolean(&j, "processes_live_on", living);
	ms_jw_arr(&j, "findings");
	for (unsigned i = 0; i < run->nfindings; i++) {
		const struct finding *x = &run->findings[i];
		ms_jw_obj(&j, NULL);
		text_field(&j, "heading", x->text, x->len);
		ms_jw_str_or_null(&j, "code", x->code);
		ms_jw_num(&j, "processes", x->processes);
		ms_jw_arr(&j, "first_processes");
		for (unsigned k = 0; k < x->processes && k < 4; k++) {
			ms_jw_obj(&j, NULL);
			ms_jw_num(&j, "pid", (uint64_t)x->pid[k]);
			ms_jw_str(&j, "program", x->prog[k]);
			ms_jw_obj_end(&j);
		}
		ms_jw_arr_end(&j);
		ms_jw_obj_end(&j);
	}
	ms_jw_arr_end(&j);
	ms_jw_arr(&j, "sites");
	for (unsigned i = 0; i < run->nsites; i++) {
		const struct site *x = &run->sites[i];
		ms_jw_obj(&j, NULL);
		text_field(&j, "first_locked_at", x->text, x->len);
		ms_jw_num(&j, "wait_ns", x->wait_ns);
		ms_jw_num(&j, "contended", x->contended);
		ms_jw_num(&j, "acquisitions", x->acquisitions);
		ms_jw_num(&j, "processes", x->processes);
		ms_jw_obj_end(&j);
	}
	ms_jw_arr_end(&j);
	ms_jw_obj_end(&j);
	ms_fmt(&j.f, "\n");
	ms_fmt_flush(&j.f);
}

static void write_summary_json(const struct run *run, int living)
{
	char path[4200], why[96];
	if (run_path(path, sizeof path, "summary.json") != 0)
		return;
	int fd = ms_output_create(path, 0, why, sizeof why);
	if (fd < 0)
		return;
	summary_json(fd, run, living);
	ms_output_done(fd);
	ms_fd_close(fd);
}

static struct run root_run; /* read once by the first process */
static int root_read;

static struct run *the_run(void)
{
	if (!root_read) {
		root_read = 1;
		if (read_run(&root_run) != 0) {
			int unreadable = root_run.unreadable;
			memset(&root_run, 0, sizeof root_run);
			root_run.unreadable = unreadable;
		}
	}
	return &root_run;
}

int ms_run_root_alone(void)
{
	return the_run()->others == 0;
}

/* The launcher's mark in a run directory it made; 1 if there was one. */
static int unmark(void)
{
	char path[4200];
	return run_path(path, sizeof path, ".made") == 0 && unlink(path) == 0;
}

/* The first process's mark that it ended while others lived on: the
 * last of them removes the directory if it is empty then. */
#define LEFT ".left"

static void remove_run_files(void)
{
	char path[4200];
	if (run_path(path, sizeof path, ".processes") == 0)
		(void)unlink(path);
	if (run_path(path, sizeof path, LEFT) == 0)
		(void)unlink(path);
	/* only a directory the launcher made: one the user had before the
	 * run stays */
	if (unmark())
		(void)rmdir(ms_opt.run_dir); /* fails, as it should, if reports are there */
}

/* The run's directory, with no report in it, goes -- unless a process
 * of the run lives on (a daemon the first one forked): its reports and
 * live dumps will be there, and the last process removes it if none
 * came. */
static void remove_empty_run(int say)
{
	char path[4200];
	/* the mark before the look: a process ending meanwhile lets go of
	 * its hold before it looks for the mark (last_one_out), so one of
	 * the two sees the other */
	if (run_path(path, sizeof path, LEFT) == 0) {
		int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd >= 0)
			ms_fd_close(fd);
	}
	let_go(1);
	if (!others_alive()) {
		remove_run_files();
		return;
	}
	int fd = say ? ms_output_stderr() : -1; /* else the summary said it */
	if (fd >= 0) {
		char buf[4400];
		struct ms_fmt f;
		ms_fmt_init(&f, buf, sizeof buf, fd);
		int lock = ms_output_stderr_lock(fd);
		say_living(&f, "mutexstat: ", "");
		ms_fmt_flush(&f);
		ms_output_stderr_unlock(lock);
	}
}

/* fn for each_name of the run's directory: 0 (stop) at a report. */
static int run_file(const char *name, void *arg)
{
	(void)arg;
	return !strcmp(name, ".") || !strcmp(name, "..") || !strcmp(name, ".processes") ||
	       !strcmp(name, ".made") || !strcmp(name, LEFT);
}

/* Whether the directory holds only the run's own files (no report). */
static int only_run_files(void)
{
	return each_name(ms_opt.run_dir, run_file, NULL);
}

/* A process of the run other than the first, ending: the last one alive
 * after the first ended removes the directory if no report came.  Its
 * hold goes first (see remove_empty_run). */
static void last_one_out(int forget)
{
	char path[4200];
	let_go(forget);
	if (run_path(path, sizeof path, LEFT) != 0 || access(path, F_OK) != 0 || others_alive())
		return;
	if (only_run_files()) {
		remove_run_files();
		return;
	}
	(void)unlink(path); /* reports came: the directory stays, theirs */
	(void)unmark();
}

/* What this process wrote on stderr at its end: its text report, the
 * run's summary or the line naming its report's file
 * (ms_run_say_exit_code writes only below one of them). */
static int report_was_on_stderr, summary_was_on_stderr;

/* The run's first process alone, its report in files: where they are. */
static void say_where_alone(void)
{
	int fd = ms_output_stderr();
	char path[4200];
	if (fd < 0 || first_report_path(path, sizeof path) != 0)
		return;
	char buf[4600], name[64];
	struct ms_fmt f;
	ms_fmt_init(&f, buf, sizeof buf, fd);
	int lock = ms_output_stderr_lock(fd);
	ms_fmt(&f, "mutexstat: %s (pid %d): the report is in ",
	       ms_name_cut(name, sizeof name, ms_program_name(), 40), (int)getpid());
	ms_output_start_dir(&f, path);
	ms_fmt(&f, "%s%s\n", path,
	       (ms_opt.formats & (ms_opt.formats - 1)) ? " (the other formats beside it)" : "");
	summary_was_on_stderr = 1; /* the exit status's line may follow it */
	ms_fmt_flush(&f);
	ms_output_stderr_unlock(lock);
}

static int ended; /* this process's lines are written */

void ms_run_end(int reported, int unwritten)
{
	report_was_on_stderr = report_on_stderr(reported, unwritten);
	if (!ms_run_active() || ended)
		return;
	if (ms_in_vfork_child()) {
		/* its line, and no more: the memory is its parent's, whose own
		 * end (its summary, if it is the run's first) is still to come */
		append_note(reported, unwritten);
		return;
	}
	ended = 1;
	if (ms_run_is_root()) {
		root_read = 0; /* again: with this process's own lines */
		free_run(&root_run); /* (its memory is the note's first) */
	}
	append_note(reported, unwritten);
	if (!ms_run_is_root()) {
		last_one_out(1);
		return;
	}
	struct run *run = the_run();
	/* no exit reports (MUTEXSTAT_EXIT_REPORT=0): no summary of them
	 * either, only the directory cleared if nothing came */
	if ((!run->others && !run->dir_gone && !run->unreadable) ||
	    !(ms_opt.exit_report || ms_opt.exit_code)) {
		/* one process alone: its report said it all -- but one
		 * written to files alone (other formats, intervals) in the
		 * directory the launcher made is pointed at, or the user
		 * finds nothing on the terminal and no name of it (-o: the
		 * user named the place) */
		if (!run->others && !run->dir_gone && reported && !report_was_on_stderr &&
		    ms_opt.exit_report && !ms_opt.output)
			say_where_alone();
		free_run(run);
		remove_empty_run(1);
		return;
	}
	/* this process's hold first: one left is another's (remove_empty_run
	 * lets go again, a no-op) */
	let_go(1);
	int living = others_alive();
	int fd = ms_output_stderr();
	if (fd >= 0) {
		char buf[8192];
		struct ms_fmt f;
		ms_fmt_init(&f, buf, sizeof buf, fd);
		int lock = ms_output_stderr_lock(fd);
		summary(&f, run, reported, report_was_on_stderr, living);
		summary_was_on_stderr = 1;
		ms_fmt_flush(&f);
		ms_output_stderr_unlock(lock);
	}
	if (run->recorded) {
		write_summary_json(run, living);
		(void)unmark(); /* the directory stays, with the reports */
	} else
		remove_empty_run(0);
}

/* The first process's run fails for the others: one had a failing
 * finding, or the directory went and later ones could not say, or their
 * list could not be read. */
static int others_fail(void)
{
	const struct run *run = the_run();
	return run->failing_others || run->dir_gone || run->unreadable;
}

int ms_run_exit_failing(void)
{
	if (!ms_run_active())
		return !left_run && ms_report_failing != 0;
	if (!ms_run_is_root())
		return 0;
	return own_failing || ms_report_failing || others_fail();
}

void ms_run_say_exit_code(int program_status)
{
	/* stderr is the program's alone (ms_output_say_beside_report) --
	 * but not a launcher's program's: its user asked for us, and a
	 * status changed with -o FILE went unexplained */
	if (!report_was_on_stderr && !summary_was_on_stderr &&
	    !(ms_run_active() && ms_run_is_root()))
		return;
	if (program_status == (int)ms_opt.exit_code)
		return; /* no change to tell */
	const char *why = "a failing finding in its report";
	if (ms_run_active() && ms_run_is_root() && !own_failing && !ms_report_failing)
		why = the_run()->dir_gone ? "the run's directory was removed: its findings are lost"
		      : the_run()->unreadable ? "the run's list could not be read: its findings are "
						"not known"
					      : "a failing finding in another process of the run";
	char line[200];
	struct ms_fmt f;
	ms_fmt_init(&f, line, sizeof line, -1);
	ms_fmt(&f, "mutexstat: exit status %u, not the program's %d: %s (MUTEXSTAT_EXIT_CODE)\n",
	       (unsigned)ms_opt.exit_code, program_status, why);
	ms_output_note(ms_fmt_str(&f));
}

void ms_run_before_exit_now(int *status)
{
	if (!ms_run_active() || ended)
		return;
	if (!ms_run_is_root()) {
		/* a process that writes no lines at _exit (a fork child, a
		 * shell's subshell) may still be the run's last */
		char path[4200];
		if (run_path(path, sizeof path, LEFT) == 0 && access(path, F_OK) == 0)
			last_one_out(0);
		return;
	}
	ms_run_end(0, 0);
	if (!*status && ms_opt.exit_code && others_fail()) {
		ms_run_say_exit_code(*status);
		*status = (int)ms_opt.exit_code;
	}
}
