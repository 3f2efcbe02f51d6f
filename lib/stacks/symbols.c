/* symbols.c - naming code addresses at report time: function, offset, source
 * line and module (see symbols.h and doc/report.md, "Symbols").
 *
 * elfutils' libdw is opened with dlopen(RTLD_LOCAL) on first use and every
 * function is found with dlsym, so nothing of it is loaded before a report
 * and none of its symbols (or libelf's, libz's, ...) enter the program's
 * global scope.  A session is one Dwfl describing this process, read from
 * /proc/<pid>/maps, plus a small cache of answers.  When libdw or /proc is
 * missing, dladdr answers instead: exported symbols, no lines. */
#define _GNU_SOURCE
#include "stacks/symbols.h"
#include "base/fds.h"
#include "base/address_space.h"
#include "glibc/tls_block.h"
#include "base/output.h"
#include "base/fmt.h"
#include "core/thread.h"
#include "stacks/stack.h"
#include "stacks/sym_index.h"
#include "glibc/loader_lock.h"

#include <dlfcn.h>
#include <link.h>
#include <dwarf.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef MS_LIBDW_SONAME
#define MS_LIBDW_SONAME "libdw.so.1" /* Debian package libdw1 */
#endif

/* ---- libdw, opened privately ------------------------------------------ */

static struct libdw {
	__typeof__(dwfl_begin) *begin;
	__typeof__(dwfl_end) *end;
	__typeof__(dwfl_report_begin) *report_begin;
	__typeof__(dwfl_report_end) *report_end;
	__typeof__(dwfl_linux_proc_report) *linux_proc_report;
	__typeof__(dwfl_linux_proc_maps_report) *linux_proc_maps_report;
	__typeof__(dwfl_linux_proc_find_elf) *linux_proc_find_elf;
	__typeof__(dwfl_build_id_find_debuginfo) *build_id_find_debuginfo;
	__typeof__(dwfl_module_build_id) *module_build_id;
	__typeof__(dwfl_addrmodule) *addrmodule;
	__typeof__(dwfl_module_info) *module_info;
	__typeof__(dwfl_module_addrinfo) *module_addrinfo;
	__typeof__(dwfl_module_getsymtab) *module_getsymtab;
	__typeof__(dwfl_module_getsymtab_first_global) *module_getsymtab_first_global;
	__typeof__(dwfl_module_getsym_info) *module_getsym_info;
	__typeof__(dwfl_module_address_section) *module_address_section;
	__typeof__(dwfl_module_getelf) *module_getelf;
	__typeof__(dwfl_module_getsrc) *module_getsrc;
	__typeof__(dwfl_lineinfo) *lineinfo;
	__typeof__(dwfl_module_addrdie) *module_addrdie;
	__typeof__(dwarf_haspc) *haspc;
	__typeof__(dwarf_getscopes) *getscopes;
	__typeof__(dwarf_getscopes_die) *getscopes_die;
	__typeof__(dwarf_tag) *tag;
	__typeof__(dwarf_attr) *attr;
	__typeof__(dwarf_formudata) *formudata;
	__typeof__(dwarf_getsrcfiles) *getsrcfiles;
	__typeof__(dwarf_cu_info) *cu_info;
	__typeof__(dwarf_ranges) *ranges;
	__typeof__(dwarf_formref_die) *formref_die;
	__typeof__(dwarf_dieoffset) *dieoffset;
	__typeof__(dwarf_filesrc) *filesrc;
	__typeof__(dwfl_module_nextcu) *module_nextcu;
	__typeof__(dwarf_getsrc_die) *getsrc_die;
	__typeof__(dwarf_lineno) *lineno;
	__typeof__(dwarf_linesrc) *linesrc;
	__typeof__(dwarf_child) *child;
	__typeof__(dwfl_module_getdwarf) *module_getdwarf;
	__typeof__(dwarf_getaranges) *getaranges;
	__typeof__(dwarf_siblingof) *siblingof;
	__typeof__(dwelf_elf_gnu_build_id) *elf_gnu_build_id;
	__typeof__(elf_begin) *elf_begin; /* libelf: a dependency of libdw, */
	__typeof__(elf_end) *elf_end;     /* so dlsym on libdw finds it */
} dw;

static const struct {
	const char *name;
	size_t at;
} dw_names[] = {
	{ "dwfl_begin", offsetof(struct libdw, begin) },
	{ "dwfl_end", offsetof(struct libdw, end) },
	{ "dwfl_report_begin", offsetof(struct libdw, report_begin) },
	{ "dwfl_report_end", offsetof(struct libdw, report_end) },
	{ "dwfl_linux_proc_report", offsetof(struct libdw, linux_proc_report) },
	{ "dwfl_linux_proc_maps_report", offsetof(struct libdw, linux_proc_maps_report) },
	{ "dwfl_linux_proc_find_elf", offsetof(struct libdw, linux_proc_find_elf) },
	{ "dwfl_build_id_find_debuginfo",
	  offsetof(struct libdw, build_id_find_debuginfo) },
	{ "dwfl_module_build_id", offsetof(struct libdw, module_build_id) },
	{ "dwfl_addrmodule", offsetof(struct libdw, addrmodule) },
	{ "dwfl_module_info", offsetof(struct libdw, module_info) },
	{ "dwfl_module_addrinfo", offsetof(struct libdw, module_addrinfo) },
	{ "dwfl_module_getsymtab", offsetof(struct libdw, module_getsymtab) },
	{ "dwfl_module_getsymtab_first_global",
	  offsetof(struct libdw, module_getsymtab_first_global) },
	{ "dwfl_module_getsym_info", offsetof(struct libdw, module_getsym_info) },
	{ "dwfl_module_address_section",
	  offsetof(struct libdw, module_address_section) },
	{ "dwfl_module_getelf", offsetof(struct libdw, module_getelf) },
	{ "dwfl_module_getsrc", offsetof(struct libdw, module_getsrc) },
	{ "dwfl_lineinfo", offsetof(struct libdw, lineinfo) },
	{ "dwfl_module_addrdie", offsetof(struct libdw, module_addrdie) },
	{ "dwarf_haspc", offsetof(struct libdw, haspc) },
	{ "dwarf_getscopes", offsetof(struct libdw, getscopes) },
	{ "dwarf_getscopes_die", offsetof(struct libdw, getscopes_die) },
	{ "dwarf_tag", offsetof(struct libdw, tag) },
	{ "dwarf_attr", offsetof(struct libdw, attr) },
	{ "dwarf_formudata", offsetof(struct libdw, formudata) },
	{ "dwarf_getsrcfiles", offsetof(struct libdw, getsrcfiles) },
	{ "dwarf_cu_info", offsetof(struct libdw, cu_info) },
	{ "dwarf_ranges", offsetof(struct libdw, ranges) },
	{ "dwarf_formref_die", offsetof(struct libdw, formref_die) },
	{ "dwarf_dieoffset", offsetof(struct libdw, dieoffset) },
	{ "dwarf_filesrc", offsetof(struct libdw, filesrc) },
	{ "dwfl_module_nextcu", offsetof(struct libdw, module_nextcu) },
	{ "dwarf_getsrc_die", offsetof(struct libdw, getsrc_die) },
	{ "dwarf_lineno", offsetof(struct libdw, lineno) },
	{ "dwarf_linesrc", offsetof(struct libdw, linesrc) },
	{ "dwarf_child", offsetof(struct libdw, child) },
	{ "dwfl_module_getdwarf", offsetof(struct libdw, module_getdwarf) },
	{ "dwarf_getaranges", offsetof(struct libdw, getaranges) },
	{ "dwarf_siblingof", offsetof(struct libdw, siblingof) },
	{ "dwelf_elf_gnu_build_id", offsetof(struct libdw, elf_gnu_build_id) },
	{ "elf_begin", offsetof(struct libdw, elf_begin) },
	{ "elf_end", offsetof(struct libdw, elf_end) },
};

static int find_debuginfo(Dwfl_Module *, void **, const char *, Dwarf_Addr,
			  const char *, const char *, GElf_Word, char **);

static char *debuginfo_path; /* NULL: libdw's ":.debug:/usr/lib/debug" */
static Dwfl_Callbacks callbacks = {
	/* .find_elf = dwfl_linux_proc_find_elf, set once libdw is open */
	.find_debuginfo = find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

static struct ms_tls_module dw_tls[2]; /* libdw's, libelf's */

/* zlib's crc32, which libdw links: .gnu_debuglink's checksum is that CRC
 * of the whole debug file, and libdw exports no function that computes it.
 * NULL without it. */
typedef unsigned long crc32_fn(unsigned long, const unsigned char *, unsigned);
static crc32_fn *dw_crc32;

/* Opens libdw once per process.  Returns NULL, or why it is not used. */
static const char *load_libdw(void)
{
	static int state; /* 0 not tried, 1 open, -1 unavailable */
	static char why[96];
	if (state)
		return state > 0 ? NULL : why;
	if (ms_loader_locked_since_fork()) { /* dlopen would wait for ever */
		state = -1;
		(void)snprintf(why, sizeof why, "not loaded: another thread was "
			       "in ld.so at the fork");
		return why;
	}
	if (ms_loader_busy()) { /* so would it now: a later report may load it */
		(void)snprintf(why, sizeof why,
			       "not loaded: another thread is stuck in dlopen or dlclose");
		return why;
	}
	state = -1;
	void *h = dlopen(MS_LIBDW_SONAME, RTLD_LAZY | RTLD_LOCAL);
	if (!h) {
		/* the loader's "out of memory" is a program whose malloc
		 * fails, not a missing package: a later report may load it */
		const char *err = dlerror();
		if (err && strstr(err, "out of memory")) {
			state = 0;
			return "malloc failed";
		}
		/* not installed, or EMFILE in a process out of descriptors
		 * (a later report may have them): the loader's reason */
		const char *reason = err ? strrchr(err, ':') : NULL;
		if (reason && strcmp(reason, ": No such file or directory") != 0) {
			(void)snprintf(why, sizeof why, "%s could not be loaded: %s",
				       MS_LIBDW_SONAME, reason + 2);
			state = 0;
			return why;
		}
		(void)snprintf(why, sizeof why, "%s not found", MS_LIBDW_SONAME);
		return why;
	}
	for (size_t i = 0; i < sizeof dw_names / sizeof dw_names[0]; i++) {
		void *fn = dlsym(h, dw_names[i].name);
		if (!fn) {
			(void)snprintf(why, sizeof why, "%s has no %s",
				       MS_LIBDW_SONAME, dw_names[i].name);
			/* left open: unloaded, it would count as a library
			 * the program unloaded (ms_symbols_unloaded) */
			return why;
		}
		memcpy((char *)&dw + dw_names[i].at, &fn, sizeof fn);
	}
	callbacks.find_elf = dw.linux_proc_find_elf;
	/* (from libdw's own scope: the program may have a crc32 of its own) */
	dw_crc32 = (crc32_fn *)dlsym(h, "crc32");
	ms_tls_module_of(h, &dw_tls[0]);
	/* libelf, loaded with it, has a block too */
	ms_tls_module_named("libelf.so.", &dw_tls[1]);
	state = 1;
	return NULL;
}

/* This thread's blocks of libdw's and libelf's thread-local storage,
 * before either is called: glibc ends the process when it cannot malloc
 * one (tls_block.h).  NULL, or why libdw is not used. */
static const char *libdw_tls_ready(void)
{
	static __thread int made __attribute__((tls_model("initial-exec")));
	if (made)
		return NULL;
	if (ms_tls_blocks_make(dw_tls, 2) != 0)
		return "malloc failed";
	made = 1;
	return NULL;
}

/* The checksums of debug files read so far, by file: every report's
 * session looks for a module's debug file again, and reading a large one
 * costs (a 1 GB file, some 0.8 s here). */
#define CRCS_KEPT 16

static struct file_crc {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	uint32_t crc;
} crcs[CRCS_KEPT];
static unsigned crcs_next;

static int same_file(const struct file_crc *c, const struct stat *st)
{
	return c->dev == st->st_dev && c->ino == st->st_ino && c->size == st->st_size &&
	       c->mtime.tv_sec == st->st_mtim.tv_sec && c->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

/* The CRC-32 of fd's whole file into *crc, as .gnu_debuglink has it; 0 on
 * success. */
static int file_crc(int fd, uint32_t *crc)
{
	struct stat st;
	if (!dw_crc32 || fstat(fd, &st) != 0)
		return -1;
	for (unsigned i = 0; i < CRCS_KEPT; i++)
		if (crcs[i].ino && same_file(&crcs[i], &st)) {
			*crc = crcs[i].crc;
			return 0;
		}
	enum { CHUNK = 1 << 16 };
	unsigned char *buf = malloc(CHUNK);
	if (!buf)
		return -1;
	unsigned long c = 0;
	off_t at = 0;
	ssize_t n;
	while ((n = pread(fd, buf, CHUNK, at)) > 0) {
		c = dw_crc32(c, buf, (unsigned)n);
		at += n;
	}
	free(buf);
	if (n < 0 || at != st.st_size)
		return -1;
	*crc = (uint32_t)c;
	crcs[crcs_next++ % CRCS_KEPT] = (struct file_crc){
		st.st_dev, st.st_ino, st.st_size, st.st_mtim, *crc,
	};
	return 0;
}

/* The separate debug file must be the module's: the same build ID, or
 * without one, the checksum its .gnu_debuglink gives (as gdb and libdw's
 * standard finder check it).  A debug file left from another build, taken
 * so, named a program's locks and functions after that build's symbols. */
static int same_build(Dwfl_Module *mod, int fd, GElf_Word debuglink_crc)
{
	const unsigned char *want;
	GElf_Addr where;
	int n = dw.module_build_id(mod, &want, &where);
	uint32_t crc;
	if (n <= 0)
		return file_crc(fd, &crc) == 0 && crc == debuglink_crc;
	Elf *elf = dw.elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const void *have = NULL;
	ssize_t m = elf ? dw.elf_gnu_build_id(elf, &have) : -1;
	int same = m == n && memcmp(have, want, (size_t)n) == 0;
	if (elf)
		dw.elf_end(elf);
	return same;
}

/* libdw's standard finder, dwfl_standard_find_debuginfo, ends by asking a
 * debuginfod server when nothing is on disk: it dlopens libdebuginfod,
 * which brings libcurl and OpenSSL into the program, and may wait on the
 * network.  A report must do neither, so this one looks on local disk
 * only: the build-id tree (/usr/lib/debug/.build-id/, where Debian's
 * -dbgsym packages install), then the module's .gnu_debuglink name beside
 * it, in its .debug/ and under /usr/lib/debug/, if the build ID (or its
 * checksum) matches. */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, const char *file_name,
			  const char *debuglink_file, GElf_Word debuglink_crc,
			  char **debuginfo_file_name)
{
	int fd = dw.build_id_find_debuginfo(mod, userdata, modname, base,
					    file_name, debuglink_file,
					    debuglink_crc, debuginfo_file_name);
	if (fd >= 0 || !debuglink_file || !file_name || file_name[0] != '/')
		return fd;
	static const char *const where[] = {
		"%.*s/%s", "%.*s/.debug/%s", "/usr/lib/debug%.*s/%s",
	};
	int dir = (int)(strrchr(file_name, '/') - file_name);
	for (size_t i = 0; i < sizeof where / sizeof where[0]; i++) {
		char path[PATH_MAX];
		int n = snprintf(path, sizeof path, where[i], dir, file_name,
				 debuglink_file);
		if (n < 0 || (size_t)n >= sizeof path || !strcmp(path, file_name))
			continue;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		char *name = same_build(mod, fd, debuglink_crc) ? strdup(path) : NULL;
		if (name) {
			free(*debuginfo_file_name);
			*debuginfo_file_name = name;
			return fd;
		}
		ms_fd_close(fd);
	}
	errno = 0; /* nothing found is not an error */
	return -1;
}

/* ---- sessions ------------------------------------------------------------ */

#define CACHE_BITS 10 /* 1024 answers; a report asks for a few hundred */

struct cached {
	uintptr_t addr; /* 0: empty */
	int is_return;
	int result;
	struct ms_frame frame;
};

/* The answers outlive a session: a live dump names mostly the addresses
 * the last one named, and a fresh session would read them again from the
 * modules' DWARF -- libc's debug file is compressed, and inflating it is
 * most of a dump's time (doc/report.md).  They are believed while no
 * module was loaded or unloaded since they were given: the dynamic linker
 * counts both. */
static struct {
	unsigned long long adds, subs; /* the counts when they were given */
	int known;                     /* the counts could be read */
} answers_for;

static int read_load_counts(struct dl_phdr_info *info, size_t size, void *data)
{
	unsigned long long *n = data;
	if (size < offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
		return 1;
	n[0] = info->dlpi_adds;
	n[1] = info->dlpi_subs;
	n[2] = 1;
	return 1; /* the counters are the same in every entry */
}

/* The dynamic linker's counts of the modules it loaded (c[0]) and unloaded
 * (c[1]); 0 if they cannot be read.  Not in a fork child of a capture:
 * libunwind's walk of the modules held the lock dl_iterate_phdr takes, for
 * ever there. */
static int load_counts(unsigned long long c[2])
{
	unsigned long long n[3] = { 0, 0, 0 };
	if (!ms_stack_off_since_fork())
		dl_iterate_phdr(read_load_counts, n);
	c[0] = n[0];
	c[1] = n[1];
	return n[2] != 0;
}

/* The libraries unloaded so far (ms_symbols_unloaded). */
static unsigned long long unloaded_now(void)
{
	unsigned long long n[2];
	/* glibc's subs is its count of additions less the objects now in
	 * the main namespace: objects in other namespaces make it wrap */
	return load_counts(n) && n[1] <= n[0] ? n[1] : 0;
}

/* The answers kept from earlier sessions, if they still hold; else an
 * empty cache (NULL if calloc failed). */
static struct cached *answers_now(struct cached *cache)
{
	unsigned long long n[2];
	int known = load_counts(n);
	if (!cache)
		cache = calloc((size_t)1 << CACHE_BITS, sizeof *cache);
	else if (!known || !answers_for.known || n[0] != answers_for.adds ||
		 n[1] != answers_for.subs)
		memset(cache, 0, sizeof *cache << CACHE_BITS);
	answers_for.adds = n[0];
	answers_for.subs = n[1];
	answers_for.known = known;
	return cache;
}

struct module_syms;
struct nested_fns;
static void module_syms_drop(void);

static struct {
	int depth;       /* ms_symbols_begin calls not yet ended */
	int open;        /* the fields below describe this process */
	int implicit;    /* opened by a lookup outside any begin/end */
	pid_t pid;
	Dwfl *dwfl;      /* NULL: dladdr answers */
	const char *why; /* why dwfl is NULL */
	struct cached *cache;          /* NULL if calloc failed */
	struct timespec refreshed;     /* implicit: last re-read of the maps */
	struct module_syms *syms;      /* the modules' symbols read so far */
	struct nested_fns *nested;     /* the units' nested functions, found so far */
	int unloaded;    /* the program had unloaded a library at its start */
} session;

/* 1: names come from libdw's dwfl_module_addrinfo (ms_symbols_by_scan) */
static int by_scan;

/* Our own spin lock, not a pthread mutex: sessions are shared by threads
 * that may report at once (a dump and the exit report). */
static int session_lock;

/* In the child of a fork, forget the parent's session without touching
 * it (another thread may have been inside libdw): the next lookup opens a
 * fresh one for the child. */
void ms_symbols_after_fork_child(void)
{
	session.open = 0;
	session.depth = 0;
	session.cache = NULL; /* another thread may have been writing an answer */
	session.syms = NULL;  /* (or reading a module's symbols): left as is */
	answers_for.known = 0;
	session_lock = 0;
}

static void lock_session(void)
{
	while (__atomic_exchange_n(&session_lock, 1, __ATOMIC_ACQUIRE))
		sched_yield();
}

static void unlock_session(void)
{
	__atomic_store_n(&session_lock, 0, __ATOMIC_RELEASE);
}

/* Reads the process's modules into dwfl (anew: modules still mapped keep
 * what libdw already loaded for them).  Returns 0 on success. */
static int report_modules(Dwfl *dwfl)
{
	dw.report_begin(dwfl);
	/* The modules as this thread sees them, /proc/<tid>/maps: those of
	 * the process's id are empty once main has called pthread_exit (the
	 * kernel reads them through the main thread, whose memory is gone),
	 * and the report of the last thread would name no function. */
	pid_t tid = (pid_t)syscall(SYS_gettid);
	int err = dw.linux_proc_report(dwfl, tid);
	if (err) {
		/* A process no longer dumpable (it dropped its privileges, as
		 * Apache's children do): that reads /proc/<tid>/auxv too, for
		 * the vDSO, which is root's then; the maps are still the
		 * process's own to read. */
		char path[64];
		(void)snprintf(path, sizeof path, "/proc/self/task/%d/maps", (int)tid);
		FILE *f = fopen(path, "re");
		if (f) {
			dw.report_begin(dwfl);
			err = dw.linux_proc_maps_report(dwfl, f);
			(void)fclose(f);
		}
	}
	if (dw.report_end(dwfl, NULL, NULL) != 0 && !err)
		err = -1;
	return err;
}

/* libdw maps the debug files it reads and allocates as it goes, and when
 * an allocation fails it can crash (elfutils 0.188: a NULL CU in its tree
 * of CUs, found under `ulimit -v 100000` at exit) or end the program
 * (libdw's out-of-memory handler calls error(EXIT_FAILURE): exit status 1
 * and an empty report, under `ulimit -d 100000`).  Under an address-space
 * or data-size limit that leaves less than this, dladdr answers. */
#define LIBDW_ROOM (64ull << 20)

static const char *room_for_libdw(void)
{
	static char why[128];
	uint64_t as = ms_address_space_left(), data = ms_data_left();
	uint64_t left = as < data ? as : data;
	if (left >= LIBDW_ROOM)
		return NULL;
	(void)snprintf(why, sizeof why, "ulimit -%c leaves %llu MiB", as < data ? 'v' : 'd',
		       (unsigned long long)(left >> 20));
	return why;
}

static void open_session(int implicit)
{
	session.open = 1;
	session.implicit = implicit;
	session.pid = getpid();
	session.dwfl = NULL;
	session.why = load_libdw();
	if (!session.why)
		session.why = room_for_libdw();
	if (!session.why)
		session.why = libdw_tls_ready();
	if (!session.why) {
		session.dwfl = dw.begin(&callbacks);
		if (!session.dwfl)
			session.why = "dwfl_begin failed";
		else if (report_modules(session.dwfl) != 0) {
			dw.end(session.dwfl);
			session.dwfl = NULL;
			session.why = "/proc/<pid>/maps unreadable";
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &session.refreshed);
	session.cache = answers_now(session.cache);
	session.unloaded = unloaded_now() != 0;
}

static void close_session(void)
{
	module_syms_drop(); /* their names are in libdw's memory */
	if (session.dwfl)
		dw.end(session.dwfl);
	session.dwfl = NULL;
	session.open = 0; /* the answers stay: answers_now */
}

/* The session of this process, opened if there is none yet (or only the
 * parent's, in a fork child): implicit outside begin/end. */
static void session_here(void)
{
	if (!session.open || session.pid != getpid()) {
		if (session.open)
			close_session();
		open_session(session.depth == 0);
	}
}

/* The session itself is opened by the first lookup after this (symbolize):
 * a report that names no frame -- a process that locked no mutex -- does
 * not load libdw, libelf and their compression libraries, nor read the
 * maps, which cost a short process more than the rest of its report. */
void ms_symbols_begin(void)
{
	ms_guard_enter(&ms_self);
	lock_session();
	if (session.depth++ == 0 && session.open)
		close_session(); /* an implicit one: start afresh */
	unlock_session();
	ms_guard_leave(&ms_self);
}

void ms_symbols_end(void)
{
	ms_guard_enter(&ms_self);
	lock_session();
	if (session.depth > 0 && --session.depth == 0 && session.open)
		close_session();
	unlock_session();
	ms_guard_leave(&ms_self);
}

const char *ms_symbols_fallback_reason(void)
{
	ms_guard_enter(&ms_self);
	lock_session();
	/* asked by a report's header, which only a report that names code
	 * has: its session opens now, to say why names are not libdw's */
	session_here();
	const char *why = session.why;
	unlock_session();
	ms_guard_leave(&ms_self);
	return why;
}

/* A session opened by a lookup outside begin/end is not renewed per
 * report, so on an address in no known module it re-reads the maps (a
 * library dlopen'd since), at most once a second. */
static int may_refresh(void)
{
	struct timespec now;
	if (!session.implicit || clock_gettime(CLOCK_MONOTONIC, &now) != 0 ||
	    now.tv_sec <= session.refreshed.tv_sec)
		return 0;
	session.refreshed = now;
	return 1;
}

/* ---- lookups ----------------------------------------------------------- */

/* A frame's name, file or module: made printable (control characters and
 * bytes that are not UTF-8 '?', as a lock's name), in every format at
 * once.  A source file named "a\nb.c" split a report line in two, and a
 * byte that is not UTF-8 went into the folded files and pprof's strings,
 * which strict readers refuse. */
static void copy(char *dst, size_t cap, const char *src)
{
	size_t n = strlen(src);
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, src, n);
	dst[n] = 0;
	ms_printable_in_place(dst);
}

/* The end of src if it is too long: for a path, the end matters. */
static void copy_tail(char *dst, size_t cap, const char *src)
{
	size_t n = strlen(src);
	copy(dst, cap, n >= cap ? src + n - (cap - 1) : src);
}

static void copy_module(char *dst, size_t cap, const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!strncmp(path, "[vdso", 5))
		path = "[vdso]"; /* libdw says "[vdso: <pid>]" */
	copy(dst, cap, slash ? slash + 1 : path);
}

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

static void collapse(const char *in, char open, char close, char *out,
		     size_t cap);

/* The length of the C++ operator's name at p in name s whose symbol is an
 * unpaired bracket ("operator<", "operator->", "operator>>="), else 0: the
 * brackets of a name are counted past it.  Counted, "operator<" left every
 * name that had one with no pair, and a long one kept its template lists
 * whole and lost its class. */
static size_t operator_token(const char *s, const char *p)
{
	static const char *const symbols[] = { "<=>", "<<=", ">>=", "->*", "<<", ">>",
					       "<=",  ">=",  "->",  "<",   ">" };
	if (strncmp(p, "operator", 8) != 0 || (p > s && p[-1] != ':' && p[-1] != ' '))
		return 0;
	for (size_t k = 0; k < sizeof symbols / sizeof symbols[0]; k++)
		if (!strncmp(p + 8, symbols[k], strlen(symbols[k])))
			return 8 + strlen(symbols[k]);
	return 0;
}

/* A name longer than the frame has room for, made to fit without losing
 * its end: a C++ name's argument lists, then its template lists, become
 * "...", and what still does not fit loses its start ("..put(...)").  Cut
 * at the end instead, `ns::thing<std::map<...> > >::put()` lost the
 * function itself and its brackets no longer paired. */
static void copy_long_name(char *dst, size_t cap, const char *name)
{
	size_t n = strlen(name);
	if (n < cap) {
		copy(dst, cap, name);
		return;
	}
	/* "(x)" becomes "(...)": room for what collapse may add */
	size_t room = 2 * n + 8;
	char *a = malloc(room), *b = malloc(room);
	if (a && b) {
		collapse(name, '(', ')', a, room);
		if (strlen(a) >= cap) {
			collapse(a, '<', '>', b, room);
			name = b;
		} else
			name = a;
		n = strlen(name);
	}
	if (n < cap)
		copy(dst, cap, name);
	else {
		dst[0] = dst[1] = '.';
		copy(dst + 2, cap - 2, name + n - (cap - 3));
	}
	free(a);
	free(b);
}

/* Whether the C++ name f[0, len) is a lambda's: its last scope gcc's
 * "{lambda(int)#1}", or clang's "$_0" or "'lambda'(int)". */
static int is_lambda(const char *f, size_t len)
{
	const char *last = f;
	int depth = 0;
	for (size_t i = 0; i + 1 < len; i++) {
		char c = f[i];
		if (c == '<' || c == '(' || c == '{' || c == '[')
			depth++;
		else if (c == '>' || c == ')' || c == '}' || c == ']')
			depth--;
		else if (!depth && c == ':' && f[i + 1] == ':')
			last = f + i + 2;
	}
	size_t n = (size_t)(f + len - last);
	if (n > 8 && !strncmp(last, "{lambda(", 8) && last[n - 1] == '}')
		return 1;
	if (n > 2 && last[0] == '$' && last[1] == '_' && strspn(last + 2, "0123456789") == n - 2)
		return 1;
	return n > 8 && !strncmp(last, "'lambda", 7);
}

/* The template argument of a wrapper's name that starts at f and ends at
 * the first ',' or '>' outside brackets; its length, 0 if none ends. */
static size_t template_arg(const char *f)
{
	const char *e = f;
	int depth = 0;
	for (; *e; e++) {
		if (*e == '<' || *e == '(' || *e == '{' || *e == '[')
			depth++;
		else if (depth && (*e == '>' || *e == ')' || *e == '}' || *e == ']'))
			depth--;
		else if (!depth && (*e == ',' || *e == '>'))
			return (size_t)(e - f);
	}
	return 0;
}

/* libstdc++ runs the program's callable F inside a wrapper whose name
 * holds F: std::thread in
 * std::thread::_State_impl<std::thread::_Invoker<std::tuple<F, args...> > >
 * ::_M_run(), std::function in std::_Function_handler<R (args...), F>
 * ::_M_invoke(std::_Any_data const&, args...), std::async in
 * std::__future_base::_Async_state_impl<std::thread::_Invoker<std::tuple<F> >, R>
 * ::_M_run() and in a std::function of a _Task_setter<..,
 * std::thread::_Invoker<std::tuple<F> >, R>.  A lambda's body, inlined,
 * is the code there, and every such frame has the wrapper's name: too
 * long for a frame, and made to fit it read
 * "std::thread::_State_impl<...>::_M_run()" or
 * "..ction_handler<...>::_M_invoke(...)" whatever the callable was.  Such
 * a name becomes F for a lambda ("main::{lambda()#1}") where lambda_alone
 * is set, else "std::thread running F", "std::function calling F" or
 * "std::async running F" (into out, of cap bytes) -- no brackets around
 * F, which a name made to fit would empty; 2 if named as the lambda, 1 if
 * by its verb, 0 if name is no such frame's. */
static int callable_name(const char *name, char *out, size_t cap, int lambda_alone)
{
	static const struct {
		const char *head, *tail, *verb;
	} wrappers[] = {
		{ "std::thread::_State_impl<std::thread::_Invoker<std::tuple<", "::_M_run()",
		  "std::thread running" },
		{ "std::_Function_handler<", "::_M_invoke(std::_Any_data const&", "std::function calling" },
		{ "std::__future_base::_Async_state_impl<std::thread::_Invoker<std::tuple<",
		  "::_M_run()", "std::async running" },
	};
	/* std::async's callable, inside std::function's */
	static const char task[] = "std::__future_base::_Task_setter<";
	static const char invoker[] = "std::thread::_Invoker<std::tuple<";
	for (size_t w = 0; w < sizeof wrappers / sizeof wrappers[0]; w++) {
		size_t hn = strlen(wrappers[w].head), tn = strlen(wrappers[w].tail);
		size_t n = strlen(name);
		const char *f = name + hn, *verb = wrappers[w].verb;
		if (strncmp(name, wrappers[w].head, hn) != 0)
			continue;
		if (w != 1 && (n < hn + tn || strcmp(name + n - tn, wrappers[w].tail) != 0))
			return 0;
		if (w == 1) { /* past the signature "R (args...)," */
			size_t sig = template_arg(f);
			if (!sig || f[sig] != ',')
				return 0;
			f += sig + 1 + (f[sig + 1] == ' ');
		}
		size_t flen = template_arg(f);
		if (!flen || (w == 1 && (f[flen] != '>' || strncmp(f + flen + 1, wrappers[w].tail, tn) != 0)))
			return 0;
		const char *in;
		if (w == 1 && !strncmp(f, task, sizeof task - 1) &&
		    (in = memmem(f, flen, invoker, sizeof invoker - 1)) != NULL) {
			f = in + sizeof invoker - 1;
			if (!(flen = template_arg(f)))
				return 0;
			verb = "std::async running";
		}
		/* the space the demangler puts before a closing '>' */
		while (flen && f[flen - 1] == ' ')
			flen--;
		/* a function pointer says nothing the next frame, the
		 * function's own, does not */
		if (!flen || flen + 48 > cap || memmem(f, flen, "(*)", 3))
			return 0;
		struct ms_fmt o;
		ms_fmt_init(&o, out, cap, -1);
		/* a lambda is its own name: its body is the code that runs */
		int alone = lambda_alone && is_lambda(f, flen);
		if (alone)
			ms_fmt(&o, "%.*s", (int)flen, f);
		else
			ms_fmt(&o, "%s %.*s", verb, (int)flen, f);
		ms_fmt_str(&o);
		return alone ? 2 : 1;
	}
	return 0;
}

/* A lambda's call operator, "main::{lambda(int)#1}::operator()(int)
 * const" -- a generic one's "auto main::{lambda(auto:1)#1}::operator()
 * <long>(long) const", clang's "main::$_0::operator()() const" -- is named
 * as the lambda, as where its body was inlined into a wrapper
 * (callable_name): "main::{lambda(int)#1}".  The operator and its
 * arguments took a fifth of a frame's room, and the top table's cut from
 * the left kept "..)#1}::operator()() const". */
static void lambda_as_itself(char *s)
{
	static const char op[] = "::operator()";
	char *p = NULL, *q = s;
	while ((q = strstr(q, op)) != NULL)
		p = q++;
	if (!p)
		return;
	/* a generic lambda's: "auto main::{lambda(auto:1)#1}::operator()<long>(long)",
	 * its return type before it ("auto ", "int "): past the last space
	 * outside brackets */
	char *start = s;
	int d = 0;
	for (char *c = s; c < p; c++) {
		if (*c == '<' || *c == '(' || *c == '{' || *c == '[')
			d++;
		else if (*c == '>' || *c == ')' || *c == '}' || *c == ']')
			d--;
		else if (!d && *c == ' ')
			start = c + 1;
	}
	if (p <= start || !is_lambda(start, (size_t)(p - start)))
		return;
	const char *e = p + sizeof op - 1;
	int depth = 0;
	if (*e == '<') { /* its template's arguments */
		for (; *e; e++) {
			depth += (*e == '<') - (*e == '>');
			if (!depth)
				break;
		}
		if (*e++ != '>')
			return;
	}
	if (*e != '(')
		return;
	for (depth = 0; *e; e++) {
		depth += (*e == '(') - (*e == ')');
		if (!depth)
			break;
	}
	if (*e++ != ')')
		return;
	if (!strncmp(e, " const", 6))
		e += 6;
	/* and GCC's " [clone .constprop.0]", which says nothing either */
	if (*e && strncmp(e, " [clone ", 8) != 0)
		return;
	*p = 0;
	if (start != s)
		memmove(s, start, strlen(start) + 1);
}

/* C++ names are demangled with the program's own libstdc++ when it has
 * one loaded (a C program has no mangled names). */
/* A C function's or variable's copy made by link-time optimisation:
 * GCC's "worker.lto_priv.0", ThinLTO's "registry_mu.llvm.3142884660792996339"
 * -- its name is the one without (gdb's too). */
static void drop_copy_suffix(char *s)
{
	static const char *const suffixes[] = { ".lto_priv.", ".llvm." };
	for (size_t k = 0; k < sizeof suffixes / sizeof suffixes[0]; k++) {
		size_t n = strlen(suffixes[k]);
		char *p = strstr(s, suffixes[k]);
		if (p && p > s && p[n] >= '0' && p[n] <= '9' && !p[n + strspn(p + n, "0123456789")])
			*p = 0;
	}
}

/* name demangled, made to fit dst.  lambda_alone: a wrapper that runs a
 * lambda is named as the lambda (callable_name); 1 if it was. */
static int copy_name_as(char *dst, size_t cap, const char *name, int lambda_alone)
{
	static demangle_fn demangle;
	static int looked;
	char *plain = NULL;
	if (name[0] == '_' && name[1] == 'Z') {
		if (!looked && !ms_loader_busy()) { /* else dlsym would wait */
			demangle = (demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
			/* A C++ program without libstdc++.so: linked with
			 * -static-libstdc++ (its copy exports nothing), or
			 * with only pthreads used (--as-needed left it out).
			 * Its names read _Z8consumerPv: a copy of libstdc++'s
			 * of our own demangles them, loaded once, never
			 * unloaded, and only for such a name. */
			static void *stdcxx; /* kept: the demangler is in it */
			if (!demangle &&
			    (stdcxx = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL | RTLD_NODELETE)))
				demangle = (demangle_fn)dlsym(stdcxx, "__cxa_demangle");
			looked = 1;
		}
		int status = -1;
		if (demangle)
			plain = demangle(name, NULL, NULL, &status);
		if (status != 0) {
			free(plain);
			plain = NULL;
		}
		/* A variable's name with a compiler's suffix
		 * (_ZN5storeL11registry_muE.lto_priv.0, .llvm.314..., GCC's
		 * and ThinLTO's copies of a static) is no mangled name the
		 * demangler reads, as a function's with one is: the name
		 * before it is, and the suffix tells a reader nothing. */
		const char *dot = strchr(name, '.');
		char base[1024];
		if (!plain && demangle && dot && (size_t)(dot - name) < sizeof base) {
			memcpy(base, name, (size_t)(dot - name));
			base[dot - name] = 0;
			plain = demangle(base, NULL, NULL, &status);
			if (status != 0) {
				free(plain);
				plain = NULL;
			}
		}
	}
	char run[512];
	int lambda = 0;
	if (plain)
		lambda_as_itself(plain);
	int named = plain ? callable_name(plain, run, sizeof run, lambda_alone) : 0;
	if (named) {
		copy_long_name(dst, cap, run);
		lambda = named == 2;
	} else
		copy_long_name(dst, cap, plain ? plain : name);
	free(plain);
	char *version = strchr(dst, '@'); /* __libc_start_main@@GLIBC_2.34 */
	if (version && version > dst)
		*version = 0;
	drop_copy_suffix(dst);
	return lambda;
}

static void copy_name(char *dst, size_t cap, const char *name)
{
	(void)copy_name_as(dst, cap, name, 1);
}

/* An absolute path with its "." and ".." components taken out as the text
 * says (no symlink is looked at); 0 if it is not absolute or does not fit. */
static int lexical_path(char *dst, size_t cap, const char *src)
{
	size_t len = 0;
	if (src[0] != '/' || cap < 2)
		return 0;
	while (*src) {
		while (*src == '/')
			src++;
		size_t n = strcspn(src, "/");
		if (n == 0 || (n == 1 && src[0] == '.')) {
			/* nothing, or "." */
		} else if (n == 2 && src[0] == '.' && src[1] == '.') {
			/* back to the '/' that began the last component */
			if (len > 0)
				len--;
			while (len > 0 && dst[len] != '/')
				len--;
		} else {
			if (len + 1 + n + 1 > cap)
				return 0;
			dst[len] = '/';
			memcpy(dst + len + 1, src, n);
			len += 1 + n;
		}
		src += n;
	}
	if (len == 0)
		dst[len++] = '/';
	dst[len] = 0;
	return 1;
}

/* Code the compiler inlined from system headers (std::mutex::lock,
 * __gthread_mutex_lock) is not where the program took a lock.  clang names
 * them from where it runs: /usr/bin/../lib/gcc/x86_64-linux-gnu/12/../../
 * ../../include/c++/12/mutex is /usr/include/c++/12/mutex. */
int ms_symbols_system_header(const char *file)
{
	char path[PATH_MAX];
	if (lexical_path(path, sizeof path, file))
		file = path;
	return !strncmp(file, "/usr/include/", 13) ||
	       !strncmp(file, "/usr/local/include/", 19) ||
	       !strncmp(file, "/usr/lib/gcc/", 13);
}

/* The source line of pc.  In inlined code the line table gives a line of
 * the inlined function, and the call that inlined it is a line of the
 * function around it, and so on out to the function the symbol names
 * (the lines addr2line -i prints).  The line shown is the innermost of
 * these outside system headers and outside the program's own inlined
 * wrappers: for std::lock_guard in consumer(), the line in consumer();
 * for a static helper inlined into main, the lock's line in the helper;
 * for a lock wrapper of the program's inlined into consumer() -- a
 * function inlined at two places or more in its unit, of INLINED_WRAPPER
 * bytes of code at most -- the line in consumer() that called it: every
 * lock leveldb took read port_stdcxx.h:55, its Mutex::Lock, whichever
 * function took it.  Not
 * past a wrapper called from a system header's code: a lambda's body
 * inlined into libstdc++'s std::thread keeps its line. */
#define INLINED_WRAPPER 96

/* The bytes of code of an inlined call's instance (all its ranges). */
static uint64_t code_bytes(Dwarf_Die *die)
{
	Dwarf_Addr base, start, end;
	uint64_t n = 0;
	ptrdiff_t off = 0;
	while ((off = dw.ranges(die, off, &base, &start, &end)) > 0)
		n += end > start ? end - start : 0;
	return n;
}
/* The compile unit covering pc, found by each unit's own address ranges:
 * for a module without .debug_aranges, the index libdw (0.188) finds units
 * by.  clang writes none unless asked (-gdwarf-aranges), and every frame
 * of a program it built lacked its source line. */
static Dwarf_Die *cu_by_ranges(Dwfl_Module *mod, Dwarf_Addr pc,
			       Dwarf_Addr *bias)
{
	/* A module with the index: an address it does not hold is in code
	 * without DWARF (the PLT, crt1.o), and every unit need not be read
	 * again for each such address */
	Dwarf_Aranges *index = NULL;
	size_t nindex = 0;
	Dwarf *dbg = dw.module_getdwarf(mod, bias);
	if (!dbg || (dw.getaranges(dbg, &index, &nindex) == 0 && nindex > 0))
		return NULL;
	Dwarf_Die *cu = NULL;
	while ((cu = dw.module_nextcu(mod, cu, bias)) != NULL)
		if (dw.haspc(cu, pc - *bias) > 0)
			return cu;
	return NULL;
}

/* The innermost DIE under parent whose addresses hold pc: a function, a
 * block or an inlined call, looking inside namespaces too (not inside
 * classes: they hold declarations, the definitions of their functions are
 * beside them).  libdw's dwarf_getscopes does not: it leaves out every
 * DIE without addresses and what is under it, and clang writes C++
 * functions inside their namespace (gcc at the unit's top level), so in a
 * clang program std::lock_guard in any namespaced function read as
 * bits/gthr-default.h.  1 if found, in *out. */
static int innermost_at(Dwarf_Die *parent, Dwarf_Addr pc, Dwarf_Die *out, int depth)
{
	Dwarf_Die child;
	if (depth > 64 || dw.child(parent, &child) != 0)
		return 0;
	do {
		int tag = dw.tag(&child);
		if (tag == DW_TAG_namespace) {
			if (innermost_at(&child, pc, out, depth + 1))
				return 1;
		} else if ((tag == DW_TAG_subprogram || tag == DW_TAG_lexical_block ||
			    tag == DW_TAG_inlined_subroutine) &&
			   dw.haspc(&child, pc) > 0) {
			*out = child;
			(void)innermost_at(&child, pc, out, depth + 1);
			return 1;
		}
	} while (dw.siblingof(&child, &child) == 0);
	return 0;
}

/* Functions defined inside others, a unit's: gcc writes a lambda's
 * operator() that was not inlined inside the closure's class, inside the
 * blocks of the function that made it, none of which holds its
 * addresses, and every lock a lambda took at -O1 or through a
 * std::function too big to inline read as gthr-default.h:749.  Found by
 * one walk of the unit, the first time one of its addresses needs it
 * (85 ms for a unit of 223,000 DIEs, which <regex> and <future> make),
 * then looked up: each address walking it again made a report of 200
 * such lambdas take 20 s. */
struct nested_fn {
	Dwarf_Addr lo, hi; /* one range of its code */
	Dwarf_Die die;
};

struct nested_fns {
	struct nested_fns *next;
	void *unit;        /* the unit's DIE's address in libdw's memory */
	size_t n, cap;
	struct nested_fn *e; /* NULL: none, or malloc failed */
	/* the functions inlined in the unit, once for each inlined copy:
	 * the function's DIE's offset and the line that called it, sorted
	 * -- how many places a wrapper is called from (a copy of the caller,
	 * kept out of line beside one inlined, or cloned, copies the call) */
	size_t norigins, origins_cap;
	struct inlined_at *origins;
};

struct inlined_at {
	Dwarf_Off origin;
	Dwarf_Word file, line, column;
};

static Dwarf_Word attr_word(Dwarf_Die *die, unsigned name)
{
	Dwarf_Attribute a;
	Dwarf_Word w = 0;
	if (!dw.attr(die, name, &a) || dw.formudata(&a, &w) != 0)
		return 0;
	return w;
}

/* The offset of the function an inlined call's DIE is a copy of, in
 * *off; 0 if not known. */
static int origin_offset(Dwarf_Die *inlined, Dwarf_Off *off)
{
	Dwarf_Attribute a;
	Dwarf_Die origin;
	if (!dw.attr(inlined, DW_AT_abstract_origin, &a) || !dw.formref_die(&a, &origin))
		return 0;
	*off = dw.dieoffset(&origin);
	return 1;
}

/* Room for one more element of `size` bytes in *array (n used of *cap,
 * doubled from `first`); 0 if realloc failed. */
static int room_for_one(void *array, size_t *cap, size_t n, size_t size, size_t first)
{
	if (n < *cap)
		return 1;
	size_t more = *cap ? 2 * *cap : first;
	void *p = realloc(*(void **)array, more * size);
	if (!p)
		return 0;
	*(void **)array = p;
	*cap = more;
	return 1;
}

static void origin_add(struct nested_fns *f, Dwarf_Die *inlined)
{
	Dwarf_Off off;
	if (!origin_offset(inlined, &off) ||
	    !room_for_one(&f->origins, &f->origins_cap, f->norigins, sizeof *f->origins, 256))
		return;
	f->origins[f->norigins++] = (struct inlined_at){
		off, attr_word(inlined, DW_AT_call_file), attr_word(inlined, DW_AT_call_line),
		attr_word(inlined, DW_AT_call_column),
	};
}

static void nested_add(struct nested_fns *f, Dwarf_Die *die)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	while ((off = dw.ranges(die, off, &base, &lo, &hi)) > 0 &&
	       room_for_one(&f->e, &f->cap, f->n, sizeof *f->e, 64))
		f->e[f->n++] = (struct nested_fn){ lo, hi, *die };
}

/* Every function with code under parent that is not where innermost_at
 * looks: inside functions, blocks and classes. */
static void nested_collect(struct nested_fns *f, Dwarf_Die *parent, int inside, int depth)
{
	Dwarf_Die child;
	if (depth > 64 || dw.child(parent, &child) != 0)
		return;
	do {
		int tag = dw.tag(&child);
		if (tag == DW_TAG_subprogram && inside)
			nested_add(f, &child);
		if (tag == DW_TAG_inlined_subroutine)
			origin_add(f, &child);
		if (tag == DW_TAG_namespace)
			nested_collect(f, &child, inside, depth + 1);
		else if (tag == DW_TAG_subprogram || tag == DW_TAG_lexical_block ||
			 tag == DW_TAG_structure_type || tag == DW_TAG_class_type ||
			 tag == DW_TAG_union_type || tag == DW_TAG_inlined_subroutine)
			nested_collect(f, &child, 1, depth + 1);
	} while (dw.siblingof(&child, &child) == 0);
}

static void nested_drop(void)
{
	while (session.nested) {
		struct nested_fns *f = session.nested;
		session.nested = f->next;
		free(f->e);
		free(f->origins);
		free(f);
	}
}

/* The DIEs that hold pc under parent, outermost first, into chain[n..max);
 * the count in chain. */
static int chain_at(Dwarf_Die *parent, Dwarf_Addr pc, Dwarf_Die *chain, int n, int max)
{
	Dwarf_Die child;
	if (n >= max || dw.child(parent, &child) != 0)
		return n;
	do {
		int tag = dw.tag(&child);
		if ((tag == DW_TAG_subprogram || tag == DW_TAG_lexical_block ||
		     tag == DW_TAG_inlined_subroutine) &&
		    dw.haspc(&child, pc) > 0) {
			chain[n] = child;
			return chain_at(&chain[n], pc, chain, n + 1, max);
		}
	} while (dw.siblingof(&child, &child) == 0);
	return n;
}

static int inlined_cmp(const void *a, const void *b)
{
	const struct inlined_at *x = a, *y = b;
	if (x->origin != y->origin)
		return (x->origin > y->origin) - (x->origin < y->origin);
	if (x->file != y->file)
		return (x->file > y->file) - (x->file < y->file);
	if (x->line != y->line)
		return (x->line > y->line) - (x->line < y->line);
	return (x->column > y->column) - (x->column < y->column);
}

/* Unit cu's index, made at its first use; NULL if calloc failed. */
static struct nested_fns *unit_index(Dwarf_Die *cu)
{
	struct nested_fns *f = session.nested;
	while (f && f->unit != cu->addr)
		f = f->next;
	if (!f) {
		if (!(f = calloc(1, sizeof *f)))
			return NULL;
		f->unit = cu->addr;
		nested_collect(f, cu, 0, 0);
		if (f->norigins)
			qsort(f->origins, f->norigins, sizeof *f->origins, inlined_cmp);
		f->next = session.nested;
		session.nested = f;
	}
	return f;
}

/* Whether the function inlined at DIE inlined (of unit cu) is called
 * from two lines or more: a wrapper, whose own line does not say which. */
static int inlined_shared(Dwarf_Die *cu, Dwarf_Die *inlined)
{
	Dwarf_Off off;
	struct nested_fns *f = unit_index(cu);
	if (!f || !f->norigins || !origin_offset(inlined, &off))
		return 0;
	/* its first copy, then one called from another place */
	size_t lo = 0, hi = f->norigins;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (f->origins[mid].origin < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo + 1; i < f->norigins && f->origins[i].origin == off; i++)
		if (inlined_cmp(&f->origins[i], &f->origins[lo]) != 0)
			return 1;
	return 0;
}

/* For pc in a function nested in unit cu's others: the DIEs around it,
 * innermost first, up to that function, as dwarf_getscopes_die gives
 * them (which would walk the unit from its start to find the function,
 * for each address again); malloc'd into *scopes, their count, 0 none. */
static int nested_at(Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die **scopes)
{
	struct nested_fns *f = unit_index(cu);
	if (!f)
		return 0;
	/* the innermost: the smallest range that holds pc */
	const struct nested_fn *best = NULL;
	for (size_t i = 0; i < f->n; i++)
		if (f->e[i].lo <= pc && pc < f->e[i].hi &&
		    (!best || f->e[i].hi - f->e[i].lo < best->hi - best->lo))
			best = &f->e[i];
	if (!best)
		return 0;
	Dwarf_Die chain[64];
	chain[0] = best->die;
	int n = chain_at(&chain[0], pc, chain, 1, 64);
	if (!(*scopes = malloc((size_t)n * sizeof **scopes)))
		return 0;
	for (int i = 0; i < n; i++)
		(*scopes)[i] = chain[n - 1 - i];
	return n;
}

/* Fills out's file and line (the rule above); 1 where the line is a
 * system header's, 0 where it is another's, -1 where pc has none. */
static int source_line(Dwfl_Module *mod, Dwarf_Addr pc, struct ms_frame *out)
{
	Dwarf_Addr bias = 0;
	Dwarf_Die *cu = dw.module_addrdie(mod, pc, &bias);
	int line = 0;
	const char *file = NULL;
	if (cu) {
		/* Past the end of the last CU (crt1.o's _start has no DWARF)
		 * libdw still answers with that CU's last line: check the CU
		 * covers pc. */
		if (dw.haspc(cu, pc - bias) <= 0)
			return -1;
		Dwfl_Line *row = dw.module_getsrc(mod, pc);
		file = row ? dw.lineinfo(row, NULL, &line, NULL, NULL, NULL)
			   : NULL;
	} else {
		/* no .debug_aranges: libdw's module_getsrc finds no line
		 * either; the unit's own line table answers */
		cu = cu_by_ranges(mod, pc, &bias);
		if (!cu)
			return -1;
		Dwarf_Line *row = dw.getsrc_die(cu, pc - bias);
		if (row && dw.lineno(row, &line) == 0)
			file = dw.linesrc(row, NULL, NULL);
	}

	/* The DIEs around pc, innermost first.  dwarf_getscopes continues
	 * past an inlined instance into its abstract definition;
	 * dwarf_getscopes_die of the innermost DIE gives the nesting as
	 * compiled: inlined_subroutine ... inlined_subroutine, subprogram. */
	Dwarf_Die *scopes = NULL, inner;
	int n = 0;
	/* Split DWARF (-gsplit-dwarf): the unit here is a skeleton, its
	 * functions and inlined calls are in the split unit of its .dwo
	 * (libdw finds it), and every lock read bits/gthr-default.h:749 */
	Dwarf_Die split;
	uint8_t unit_type = 0;
	if (dw.cu_info(cu->cu, NULL, &unit_type, NULL, &split, NULL, NULL, NULL) == 0 &&
	    unit_type == DW_UT_skeleton && dw.tag(&split) == DW_TAG_compile_unit)
		cu = &split;
	n = dw.getscopes(cu, pc - bias, &scopes);
	if (n > 0) {
		inner = scopes[0];
		free(scopes);
		scopes = NULL;
		n = dw.getscopes_die(&inner, &scopes);
	} else {
		free(scopes);
		scopes = NULL;
		n = innermost_at(cu, pc - bias, &inner, 0);
		if (n > 0)
			n = dw.getscopes_die(&inner, &scopes);
		else
			n = nested_at(cu, pc - bias, &scopes);
	}
	Dwarf_Files *files = NULL;
	size_t nfiles = 0;
	for (int i = 0; i < n; i++) {
		int tag = dw.tag(&scopes[i]);
		if (tag == DW_TAG_subprogram)
			break;
		if (tag != DW_TAG_inlined_subroutine)
			continue; /* a lexical block */
		Dwarf_Attribute a;
		Dwarf_Word call_file, call_line;
		if ((!files && dw.getsrcfiles(cu, &files, &nfiles) != 0) ||
		    dw.formudata(dw.attr(&scopes[i], DW_AT_call_file, &a),
				 &call_file) != 0 ||
		    dw.formudata(dw.attr(&scopes[i], DW_AT_call_line, &a),
				 &call_line) != 0 ||
		    call_file >= nfiles)
			break;
		const char *call = dw.filesrc(files, call_file, NULL, NULL);
		if (file && !ms_symbols_system_header(file) &&
		    (!call || call_line == 0 || ms_symbols_system_header(call) ||
		     code_bytes(&scopes[i]) > INLINED_WRAPPER || !inlined_shared(cu, &scopes[i])))
			break; /* the program's line: no wrapper others share */
		file = call;
		line = (int)call_line;
	}
	free(scopes);
	if (file && line > 0) {
		copy_tail(out->file, sizeof out->file, file);
		out->line = line;
	}
	if (!file || line <= 0)
		return -1;
	return ms_symbols_system_header(file);
}

/* ---- a module's symbols, read once a session --------------------------- */

/* One module's symbols in an index (sym_index.h), read at the session's
 * first address in the module.  libdw's dwfl_module_addrinfo reads the
 * whole table again for every address: in libjvm.so's 58,000 symbols,
 * 2-3 ms an address, and `java -version` took 0.45 s instead of 0.05
 * (doc/benchmark.md).  The names stay in libdw's memory, so the indexes
 * go before the session's Dwfl does. */
struct module_syms {
	struct module_syms *next;
	Dwfl_Module *mod;
	struct ms_sym_index *index; /* NULL: dwfl_module_addrinfo answers */
	/* what the dynamic linker calls the module, asked once: dladdr
	 * walks every exported symbol of it (node's: 20% of a `node -e 0`
	 * run, asked for every frame) */
	int linked_known;
	uintptr_t linked_base;
	const char *linked_name;
};

static void module_syms_drop(void)
{
	nested_drop(); /* their DIEs are in libdw's memory too */
	while (session.syms) {
		struct module_syms *m = session.syms;
		session.syms = m->next;
		ms_sym_index_free(m->index);
		free(m);
	}
}

/* Keeps the size of a symbol of 4 GiB or more (a large static array):
 * the index holds it apart.  0 if malloc failed. */
static int keep_big(struct ms_sym_big **big, size_t *nbig, uint32_t order, uint64_t size)
{
	struct ms_sym_big *more = realloc(*big, (*nbig + 1) * sizeof *more);
	if (!more)
		return 0;
	more[(*nbig)++] = (struct ms_sym_big){ order, size };
	*big = more;
	return 1;
}

/* The symbols libdw's search looks at; NULL if malloc fails or the table
 * is beyond what an index holds.  A symbol of 4 GiB or more is kept too:
 * one gave the whole module no index, and each of 100,000 mutexes was
 * named by libdw's scan of the table, 196 s instead of 2. */
static struct ms_sym_index *module_syms_index(struct module_syms *m)
{
	int n = dw.module_getsymtab(m->mod);
	int first_global = dw.module_getsymtab_first_global(m->mod);
	if (n <= 0 || first_global < 0) /* no table: libdw names nothing */
		return ms_sym_index_make(NULL, 0, 0, NULL, 0);
	if ((unsigned)n > MS_SYM_ORDER_MAX)
		return NULL;
	struct ms_sym *syms = malloc((size_t)n * sizeof *syms);
	struct ms_sym_big *big = NULL;
	size_t kept = 0, nbig = 0;
	for (int i = 1; syms && i < n; i++) {
		GElf_Sym sym;
		GElf_Addr value = 0;
		const char *name = dw.module_getsym_info(m->mod, i, &sym, &value,
							 NULL, NULL, NULL);
		int type = name ? GELF_ST_TYPE(sym.st_info) : STT_SECTION;
		if (!name || !name[0] || sym.st_shndx == SHN_UNDEF ||
		    type == STT_SECTION || type == STT_FILE || type == STT_TLS)
			continue;
		uint32_t size = (uint32_t)sym.st_size;
		if (sym.st_size >= MS_SYM_SIZE_BIG) {
			size = MS_SYM_SIZE_BIG;
			if (!keep_big(&big, &nbig, (uint32_t)i, sym.st_size)) {
				free(syms);
				free(big);
				return NULL;
			}
		}
		syms[kept++] = (struct ms_sym){
			.value = value, .size = size,
			.order = (uint32_t)i,
			.bind = GELF_ST_BIND(sym.st_info) & 0xf,
		};
	}
	if (!syms) {
		free(big);
		return NULL;
	}
	return ms_sym_index_make(syms, kept, (uint32_t)first_global, big, nbig);
}

static struct module_syms *module_syms_of(Dwfl_Module *mod)
{
	for (struct module_syms *m = session.syms; m; m = m->next)
		if (m->mod == mod)
			return m;
	struct module_syms *m = calloc(1, sizeof *m);
	if (!m)
		return NULL;
	m->mod = mod;
	m->index = module_syms_index(m);
	m->next = session.syms;
	session.syms = m;
	return m;
}

/* libdw names an address after a label (a symbol without a size) only if
 * both are in one section of the module, as libdw finds sections: the end
 * of one counts as in it (unless the next starts there), and two addresses
 * in none are in the same. */
static int same_section(const struct ms_sym *label, uint64_t addr, void *arg)
{
	Dwfl_Module *mod = arg;
	GElf_Sym sym;
	GElf_Addr value;
	GElf_Word shndx = 0;
	if (!dw.module_getsym_info(mod, (int)label->order, &sym, &value, &shndx,
				   NULL, NULL))
		return 0;
	if (shndx >= SHN_LORESERVE) /* absolute: only its own address */
		return label->value == addr;
	Dwarf_Addr a = addr, v = label->value, bias;
	return dw.module_address_section(mod, &a, &bias) ==
	       dw.module_address_section(mod, &v, &bias);
}

/* The symbol pc is in, as dwfl_module_addrinfo names it: its name and
 * pc's offset into it, or NULL. */
static const char *module_symbol(Dwfl_Module *mod, uintptr_t pc, GElf_Off *off)
{
	struct module_syms *m = by_scan ? NULL : module_syms_of(mod);
	GElf_Sym sym;
	if (!m || !m->index)
		return dw.module_addrinfo(mod, pc, off, &sym, NULL, NULL, NULL);
	const struct ms_sym *s = ms_sym_index_find(m->index, pc, same_section, mod);
	if (!s)
		return NULL;
	GElf_Addr value;
	*off = pc - s->value;
	return dw.module_getsym_info(mod, (int)s->order, &sym, &value, NULL,
				     NULL, NULL);
}

void ms_symbols_by_scan(int on)
{
	ms_guard_enter(&ms_self);
	lock_session();
	by_scan = on;
	if (session.cache) /* its answers came the other way */
		memset(session.cache, 0, sizeof *session.cache << CACHE_BITS);
	unlock_session();
	ms_guard_leave(&ms_self);
}

/* dladdr: its module name; for the program itself, the name it was started
 * as: dladdr's is argv[0] as it reads now, and a program that sets its
 * process title (redis, nginx) has written "redis-server 127.0.0.1:6379"
 * over it (and the maps have the file a symlink names: redis-check-rdb). */
static int dladdr_module(uintptr_t pc, Dl_info *info, const char **name)
{
	struct link_map *map = NULL;
	if (ms_loader_busy() || !dladdr1((void *)pc, info, (void **)&map, RTLD_DL_LINKMAP) ||
	    !info->dli_fname)
		return 0;
	*name = map && !map->l_name[0] ? ms_program_name() : info->dli_fname;
	return 1;
}

static int from_libdw(Dwfl_Module *mod, uintptr_t addr, uintptr_t pc,
		      int lines, struct ms_frame *out)
{
	/* Where the dynamic linker knows the module, its names are the ones
	 * the program was linked against: the module libstdc++.so.6, not the
	 * file libstdc++.so.6.0.30 the maps show, and of aliases at one
	 * address, the exported one (printf, not _IO_printf). */
	Dwarf_Addr start = 0;
	const char *path = dw.module_info(mod, NULL, &start, NULL, NULL, NULL,
					  NULL, NULL);
	struct module_syms *m = by_scan ? NULL : module_syms_of(mod);
	Dl_info info;
	const char *linked = NULL;
	int asked = 0, same;
	if (m && m->linked_known) {
		same = (Dwarf_Addr)m->linked_base == start;
		linked = m->linked_name;
	} else {
		asked = dladdr_module(pc, &info, &linked);
		same = asked && (Dwarf_Addr)(uintptr_t)info.dli_fbase == start;
		if (m && asked) {
			m->linked_known = 1;
			m->linked_base = (uintptr_t)info.dli_fbase;
			m->linked_name = linked;
		}
	}
	if (same && linked && linked[0])
		path = linked;
	copy_module(out->module, sizeof out->module, path ? path : "?");

	GElf_Off off = 0;
	const char *name = module_symbol(mod, pc, &off);
	/* of aliases, the exported one; a function with one name at its
	 * start (the index says) needs no question */
	if (name && same && !asked &&
	    (!m || !m->index || ms_sym_index_starting_at(m->index, pc - off) > 1))
		asked = dladdr_module(pc, &info, &linked);
	if (name && same && asked && info.dli_sname &&
	    (uintptr_t)info.dli_saddr == pc - off)
		name = info.dli_sname;
	int lambda = 0;
	if (name && name[0]) {
		lambda = copy_name_as(out->func, sizeof out->func, name, 1);
		out->offset = (unsigned long)(off + (addr - pc));
	} else {
		Dwarf_Addr bias = 0;
		out->offset = dw.module_getelf(mod, &bias)
				      ? (unsigned long)(addr - bias)
				      : (unsigned long)(addr - start);
	}

	/* Not the C library's lines: where its frames are -- pthread_once's,
	 * a blocked thread's futex wait -- their names say, and their source
	 * lines nothing a program's author can change; with libc6-dbg they
	 * meant inflating its debug file's line tables, some 80 ms at the
	 * exit of every process whose report showed such a frame (OpenSSL
	 * and LLVM lock inside pthread_once).  Its names are cheap: the
	 * debug file's symbol table is not compressed. */
	/* A wrapper named as the lambda it runs (callable_name) whose line
	 * is still its own: the lambda's body was not inlined there, and the
	 * next frame in is the lambda's, of the same name.  Without a line
	 * (no -g) that is not known: "std::thread running" it is, where the
	 * lambda's own frame would have made its name a false recursion. */
	if (lines && !ms_stack_c_library_code(pc) && source_line(mod, pc, out) != 0 && lambda)
		(void)copy_name_as(out->func, sizeof out->func, name, 0);
	return 0;
}

/* The fallback: the nearest exported symbol and the module. */
static int from_dladdr(uintptr_t addr, uintptr_t pc, struct ms_frame *out)
{
	Dl_info info;
	const char *name = NULL;
	if (!dladdr_module(pc, &info, &name))
		return -1;
	copy_module(out->module, sizeof out->module,
		    name[0] ? name : ms_program_name());
	if (info.dli_sname && info.dli_saddr) {
		copy_name(out->func, sizeof out->func, info.dli_sname);
		out->offset = (unsigned long)(addr - (uintptr_t)info.dli_saddr);
	} else
		out->offset = (unsigned long)(addr - (uintptr_t)info.dli_fbase);
	return 0;
}

struct code_at {
	uintptr_t pc;
	int found;
};

static int segment_has(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct code_at *c = arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && c->pc >= lo && c->pc < lo + ph->p_memsz) {
			c->found = 1;
			return 1;
		}
	}
	return 0;
}

/* Whether pc is in a segment of an object loaded now (1 also where that
 * cannot be asked).  Code of a library the program unloaded is in none:
 * libdw, which reads /proc/<pid>/maps, gave such an address to the module
 * mapped below it -- rsyslog's input modules, unloaded at its stop, read
 * "libelf-0.188.so+0x498ac" in a libelf 0x1a1b0 bytes long, loaded by the
 * report itself, or even libmutexstat.so's. */
int ms_symbols_code_loaded(uintptr_t pc)
{
	if (ms_loader_busy() || ms_stack_off_since_fork())
		return 1; /* the loader's lock may be held for ever (load_counts) */
	struct code_at c = { pc, 0 };
	dl_iterate_phdr(segment_has, &c);
	return c.found;
}

/* lines: the source line too (DWARF), else the function and module only. */
static int lookup(uintptr_t addr, int is_return, int lines, struct ms_frame *out)
{
	/* A return address is the instruction after the call, which may
	 * already belong to the next line, or the next function after a
	 * call that does not return. */
	uintptr_t pc = is_return ? addr - 1 : addr;
	if (session.unloaded && !ms_symbols_code_loaded(pc))
		return -1; /* a bare address, as the report's header says */
	if (session.dwfl) {
		Dwfl_Module *mod = dw.addrmodule(session.dwfl, pc);
		if (!mod && may_refresh() && report_modules(session.dwfl) == 0) {
			if (session.cache) /* answers from before may be stale */
				session.cache = answers_now(session.cache);
			module_syms_drop(); /* a module gone, another in its place */
			mod = dw.addrmodule(session.dwfl, pc);
		}
		if (mod)
			return from_libdw(mod, addr, pc, lines, out);
	}
	return from_dladdr(addr, pc, out);
}

/* Where the answer for addr is kept, if the session keeps answers. */
static struct cached *answer_slot(uintptr_t addr, int is_return_address)
{
	if (!session.cache)
		return NULL;
	uint64_t h = ((uint64_t)addr ^ (uint64_t)is_return_address) * 0x9e3779b97f4a7c15ull;
	return &session.cache[h >> (64 - CACHE_BITS)];
}

/* Names addr into *out: the whole frame, kept among the answers, or
 * (!lines) its function and module only, from the answers if there, not
 * kept: a frame the report asks about but may not print. */
static int symbolize(uintptr_t addr, int is_return_address, int lines,
		     struct ms_frame *out)
{
	memset(out, 0, sizeof *out);
	if (!addr)
		return -1;
	is_return_address = !!is_return_address;
	__atomic_add_fetch(&ms_report_progress, 1, __ATOMIC_RELAXED);
	int saved = errno, result;
	ms_guard_enter(&ms_self);
	lock_session();
	/* An answer kept by the open session is given without asking which
	 * process this is (session_here's getpid, a system call: a fifth of
	 * the time of a JSON report of 100,000 mutexes): a fork child that
	 * still has its parent's session has the same code at the same
	 * addresses. */
	struct cached *c = session.open ? answer_slot(addr, is_return_address) : NULL;
	if (c && c->addr == addr && c->is_return == is_return_address) {
		*out = c->frame;
		result = c->result;
	} else {
		session_here();
		c = answer_slot(addr, is_return_address);
		result = lookup(addr, is_return_address, lines, out);
		if (c && lines) {
			c->addr = addr;
			c->is_return = is_return_address;
			c->result = result;
			c->frame = *out;
		}
	}
	unlock_session();
	ms_guard_leave(&ms_self);
	errno = saved;
	return result;
}

int ms_symbolize_frame(uintptr_t addr, int is_return_address,
		       struct ms_frame *out)
{
	return symbolize(addr, is_return_address, 1, out);
}

int ms_symbolize_function(uintptr_t addr, int is_return_address,
			  struct ms_frame *out)
{
	return symbolize(addr, is_return_address, 0, out);
}

/* ---- the variable a lock is ---------------------------------------- */

/* The data object of module mod that covers addr, by libdw's table: its
 * name and addr's offset into it, or NULL.  A label (no size), a function
 * or a symbol that ends before addr names nothing: memory past the end of
 * an array is not that array. */
static const char *module_object(Dwfl_Module *mod, uintptr_t addr, GElf_Off *off)
{
	struct module_syms *m = by_scan ? NULL : module_syms_of(mod);
	GElf_Sym sym;
	GElf_Addr value = 0;
	const char *name;
	if (m && m->index) {
		const struct ms_sym *s = ms_sym_index_find(m->index, addr, same_section, mod);
		name = s ? dw.module_getsym_info(mod, (int)s->order, &sym, &value, NULL,
						 NULL, NULL)
			 : NULL;
	} else {
		*off = 0;
		name = dw.module_addrinfo(mod, addr, off, &sym, NULL, NULL, NULL);
		value = addr - *off;
	}
	if (!name || !name[0] || GELF_ST_TYPE(sym.st_info) != STT_OBJECT ||
	    addr - value >= sym.st_size)
		return NULL;
	*off = addr - value;
	return name;
}

/* The module whose .bss holds addr past the pages of its file: libdw's
 * module ends where the maps' lines of its file do, and the rest of a
 * .bss longer than that is an anonymous mapping (a sanitized program's
 * globals, a static array of mutexes).  The dynamic linker knows the
 * object's whole extent; libdw knows the module at its start.  NULL for
 * an address in no object (the heap, a stack). */
static Dwfl_Module *module_past_its_file(uintptr_t addr)
{
	Dl_info info;
	if (ms_loader_busy() || !dladdr((void *)addr, &info) || !info.dli_fbase)
		return NULL;
	return dw.addrmodule(session.dwfl, (Dwarf_Addr)(uintptr_t)info.dli_fbase);
}

/* Without libdw: the exported object dladdr knows. */
static const char *dladdr_object(uintptr_t addr, GElf_Off *off)
{
	Dl_info info;
	const ElfW(Sym) *sym = NULL;
	if (ms_loader_busy() ||
	    !dladdr1((void *)addr, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym ||
	    !info.dli_sname || GELF_ST_TYPE(sym->st_info) != STT_OBJECT ||
	    addr - (uintptr_t)info.dli_saddr >= sym->st_size)
		return NULL;
	*off = addr - (uintptr_t)info.dli_saddr;
	return info.dli_sname;
}

/* A C++ variable of an anonymous namespace, "(anonymous namespace)::first",
 * is the file's own: "first" says as much in the 40 columns a finding's
 * line gives it, and leaves its first-lock site whole. */
static void drop_anonymous(char *name)
{
	static const char anon[] = "(anonymous namespace)::";
	char *at;
	while ((at = strstr(name, anon)) != NULL)
		memmove(at, at + sizeof anon - 1, strlen(at + sizeof anon - 1) + 1);
}

#define OFFSET_ROOM sizeof "+0xffffffffffffffff"

struct object_at {
	uintptr_t addr;
	unsigned long long adds; /* dlpi_adds */
	size_t n;     /* objects loaded now */
	size_t found; /* addr's, counted from the first; 0 none */
};

static int count_objects(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct object_at *o = arg;
	if (size < offsetof(struct dl_phdr_info, dlpi_subs))
		return 1;
	o->adds = info->dlpi_adds;
	o->n++;
	for (int i = 0; i < info->dlpi_phnum && !o->found; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && o->addr >= lo && o->addr - lo < ph->p_memsz)
			o->found = o->n;
	}
	return 0;
}

/* Whether the object addr is in now was loaded before the dynamic linker
 * had loaded `loads` modules: 1, 0 (or in no object), -1 if that cannot
 * be told.  The loader appends each module it loads to its list, which
 * dl_iterate_phdr walks in order, and counts it (dlpi_adds): the modules
 * loaded since are at most the last adds - loads of the list (fewer if
 * some were unloaded since, or loaded in another namespace), so a module
 * before them was loaded before -- and loaded since, if it is there now. */
static int loaded_before(uintptr_t addr, unsigned long long loads)
{
	struct object_at o = { addr, 0, 0, 0 };
	if (!loads || ms_stack_off_since_fork()) /* (see load_counts) */
		return -1;
	dl_iterate_phdr(count_objects, &o);
	if (!o.n || !ms_loader_adds_sure(o.adds))
		return -1;
	if (o.adds < loads)
		return -1;
	return o.found && o.n - o.found >= o.adds - loads;
}

/* The data object addr is in, from the modules loaded now. */
static const char *data_object(uintptr_t addr, GElf_Off *off)
{
	Dwfl_Module *mod = session.dwfl ? dw.addrmodule(session.dwfl, addr) : NULL;
	if (!mod && session.dwfl)
		mod = module_past_its_file(addr);
	if (mod)
		return module_object(mod, addr, off);
	return session.dwfl ? NULL : dladdr_object(addr, off);
}

int ms_symbolize_lock(uintptr_t addr, unsigned long long loads, char *out, size_t cap)
{
	if (!cap)
		return 0;
	out[0] = 0;
	if (!addr)
		return 0;
	int saved = errno;
	ms_guard_enter(&ms_self);
	lock_session();
	if (!session.open) /* (no getpid a lock: see symbolize) */
		session_here();
	GElf_Off off = 0;
	const char *name = NULL;
	int before = loaded_before(addr, loads);
	/* Unknown: an address in no module (the heap, a stack) is the usual
	 * answer: it re-reads no maps, as a code address may (lookup) */
	if (before > 0 || (before < 0 && (!session.unloaded || ms_symbols_code_loaded(addr))))
		name = data_object(addr, &off);
	if (name) {
		/* the name in as much of out as the offset leaves: JSON's and
		 * pprof's room keeps a C++ template's arguments whole */
		size_t room = cap > 2 * OFFSET_ROOM ? cap - OFFSET_ROOM : cap;
		copy_name(out, room, name);
		drop_anonymous(out);
		struct ms_fmt f;
		size_t len = strlen(out);
		ms_fmt_init(&f, out + len, cap - len, -1);
		if (off)
			ms_fmt(&f, "+0x%lx", (unsigned long)off);
		ms_fmt_str(&f);
	}
	unlock_session();
	ms_guard_leave(&ms_self);
	errno = saved;
	return name != NULL;
}

/* ---- libraries unloaded --------------------------------------------- */

unsigned long long ms_symbols_unloaded(void)
{
	int saved = errno;
	ms_guard_enter(&ms_self);
	unsigned long long n = unloaded_now();
	ms_guard_leave(&ms_self);
	errno = saved;
	return n;
}

/* ---- one line for the report ---------------------------------------- */

#define NAME_COLS 48 /* longer C++ names lose their argument lists */

/* Copies in to out with the contents of each outermost open...close pair
 * replaced by "...".  Unbalanced text (operator<, operator->) is copied
 * as it is. */
static void collapse(const char *in, char open, char close, char *out,
		     size_t cap)
{
	int depth = 0;
	for (const char *p = in; *p && depth >= 0; p++) {
		size_t op = operator_token(in, p);
		if (op)
			p += op - 1;
		else
			depth += (*p == open) - (*p == close);
	}
	if (depth != 0) {
		copy(out, cap, in);
		return;
	}
	size_t n = 0;
	/* (clang-tidy's analyzer thinks `in` may be read past its end: it does
	 * not follow that the first collapse() ended args with a 0) */
	// NOLINTNEXTLINE(clang-analyzer-core.uninitialized.Branch)
	for (const char *p = in; *p && n + 5 < cap; p++) {
		size_t op = operator_token(in, p);
		if (op) {
			if (depth == 0) {
				if (n + op + 5 >= cap)
					break;
				memcpy(out + n, p, op);
				n += op;
			}
			p += op - 1;
		} else if (depth == 0 && !strncmp(p, "(anonymous namespace)", 21)) {
			if (n + 21 + 5 >= cap)
				break;
			memcpy(out + n, p, 21);
			n += 21;
			p += 20;
		} else if (*p == open) {
			if (depth++ == 0) {
				out[n++] = open;
				if (p[1] != close) {
					memcpy(out + n, "...", 3);
					n += 3;
				}
			}
		} else if (*p == close) {
			if (--depth == 0)
				out[n++] = close;
		} else if (depth == 0)
			out[n++] = *p;
	}
	out[n] = 0;
}

/* (Collapsed into buffers of their own, twice the frame's: collapse()
 * stops 5 bytes short of its end, and a name of a frame's full 159 bytes
 * lost the end of its "(...)" -- "duration(" -- cut into one its size.) */
static const char *short_name(const char *name, char *buf, size_t cap)
{
	if (strlen(name) <= NAME_COLS)
		return name;
	char args[2 * sizeof ((struct ms_frame *)0)->func];
	char both[sizeof args];
	collapse(name, '(', ')', args, sizeof args);
	const char *shorter = args;
	if (strlen(args) > NAME_COLS) {
		collapse(args, '<', '>', both, sizeof both);
		shorter = both;
	}
	copy_tail(buf, cap, shorter); /* the function is at the end */
	if (strlen(shorter) >= cap && cap > 2)
		buf[0] = buf[1] = '.';
	return buf;
}

/* The last two components of a path: "examples/contention.c". */
static const char *last_two(const char *path)
{
	int slashes = 0;
	for (const char *p = path + strlen(path); p > path; p--)
		if (p[-1] == '/' && ++slashes == 2)
			return p;
	return path;
}

const char *ms_frame_format(const struct ms_frame *fr, uintptr_t addr,
			    char *out, size_t cap)
{
	struct ms_fmt f;
	ms_fmt_init(&f, out, cap, -1);
	if (!fr->module[0]) {
		if (addr)
			ms_fmt(&f, "%p", (void *)addr);
		else
			ms_fmt(&f, "?");
		return ms_fmt_str(&f);
	}
	char name[sizeof fr->func];
	const char *src = last_two(fr->file);
	if (fr->func[0]) {
		ms_fmt(&f, "%s+0x%lx (", short_name(fr->func, name, sizeof name),
		       fr->offset);
		if (fr->line)
			ms_fmt(&f, "%s:%d, ", src, fr->line);
		ms_fmt(&f, "%s)", fr->module);
	} else {
		ms_fmt(&f, "%s+0x%lx", fr->module, fr->offset);
		if (fr->line)
			ms_fmt(&f, " (%s:%d)", src, fr->line);
	}
	return ms_fmt_str(&f);
}

const char *ms_symbolize(uintptr_t addr, char *out, size_t cap)
{
	struct ms_frame fr;
	ms_symbolize_frame(addr, 1, &fr);
	return ms_frame_format(&fr, addr, out, cap);
}

const char *ms_symbolize_short(uintptr_t addr, char *out, size_t cap)
{
	struct ms_frame fr;
	ms_symbolize_frame(addr, 1, &fr);
	if (!fr.func[0] || !fr.line)
		return ms_frame_format(&fr, addr, out, cap);
	char name[sizeof fr.func];
	const char *slash = strrchr(fr.file, '/');
	struct ms_fmt f;
	ms_fmt_init(&f, out, cap, -1);
	ms_fmt(&f, "%s (%s:%d)", short_name(fr.func, name, sizeof name),
	       slash ? slash + 1 : fr.file, fr.line);
	return ms_fmt_str(&f);
}

/* "abc..." in cols columns. */
static const char *cut_end(char *s, size_t cols)
{
	if (strlen(s) > cols && cols > 3)
		memcpy(s + cols - 3, "...", 4);
	return s;
}

/* Where s ends in an offset ("+0x1a2b"), that: what a reader without a
 * source line finds the code by (objdump, addr2line -e module); else NULL. */
static char *offset_of(char *s)
{
	char *plus = strrchr(s, '+');
	if (!plus || plus[1] != '0' || plus[2] != 'x' || !plus[3] ||
	    plus[3 + strspn(plus + 3, "0123456789abcdef")])
		return NULL;
	return plus;
}

/* The C++ name in s[0, *func_n) shortened toward want bytes by its scopes,
 * the rest of s moved with it: first the argument lists of the functions
 * it is inside become "(...)" ("run_workers(...)::{lambda()#1}"), then its
 * own, then its outer scopes go, its namespaces first, for ".." -- never
 * its last two.  A suppression rule made of what is left matches the
 * whole name (a "..." or a leading ".." is its "*": suppress.c), so
 * nothing goes without a sign.  A cut from the start of the whole name kept "..)#1}::operator()()
 * const", neither the function nor its class.  What std::thread or
 * std::function runs keeps the words before it (callable_name).  Nothing
 * for a name whose brackets do not pair up. */
static void shorten_scopes(char *s, size_t *func_n, size_t want)
{
	static const char *const verbs[] = { "std::thread running ", "std::function calling " };
	char *q = s;
	for (size_t k = 0; k < sizeof verbs / sizeof verbs[0]; k++)
		if (!strncmp(s, verbs[k], strlen(verbs[k])))
			q = s + strlen(verbs[k]);
	for (int pass = 0; pass < 3 && *func_n > want; pass++) {
		/* the scopes' ends: "::" outside brackets, the first 32 and
		 * the last two (a name of more keeps its last two whole) */
		size_t ends[32], nends = 0, total = 0, last = 0, penult = 0;
		int depth = 0;
		for (char *c = q; c < s + *func_n; c++) {
			size_t op = operator_token(s, c);
			if (op)
				c += op - 1;
			else if (*c == '<' || *c == '(' || *c == '{' || *c == '[')
				depth++;
			else if (*c == '>' || *c == ')' || *c == '}' || *c == ']')
				depth--;
			else if (!depth && c[0] == ':' && c[1] == ':') {
				if (nends < 32)
					ends[nends++] = (size_t)(c - s);
				penult = last;
				last = (size_t)(c - s);
				total++;
				c++;
			}
			if (depth < 0)
				return;
		}
		if (depth)
			return;
		if (pass == 0) {
			/* an outer function's arguments, the innermost scope's first */
			for (size_t i = nends; i-- > 0 && *func_n > want;) {
				char *end = s + ends[i], *start = i ? s + ends[i - 1] + 2 : q;
				if (end <= start || end[-1] != ')')
					continue;
				/* its list's '(', within the scope: a list found
				 * past its start would cut another scope */
				char *open = end - 1;
				int d = 0;
				for (; open >= start; open--) {
					d += (*open == ')') - (*open == '(');
					if (!d)
						break;
				}
				/* "(anonymous namespace)" is a scope, no list */
				if (open <= start || d || open[-1] == ':' || open[-1] == ' ' ||
				    end - open <= 5 || !strncmp(open, "(...)", 5))
					continue;
				size_t len = (size_t)(end - open) - 5;
				open[1] = open[2] = open[3] = '.';
				memmove(open + 4, end - 1, strlen(end - 1) + 1);
				*func_n -= len;
				for (size_t j = i; j < nends; j++)
					ends[j] -= len;
			}
		} else if (pass == 1) {
			/* its own argument list, "(...)" */
			char *open = NULL, *close = NULL;
			char *c = total ? s + last + 2 : q;
			for (depth = 0; c < s + *func_n; c++) {
				size_t op = operator_token(s, c);
				if (op)
					c += op - 1;
				else if (*c == '<' || *c == '(' || *c == '{' || *c == '[') {
					if (!depth++ && *c == '(')
						open = c;
				} else if (*c == '>' || *c == ')' || *c == '}' || *c == ']') {
					if (!--depth && *c == ')' && open)
						close = c;
				}
			}
			if (open && close > open + 4 && strncmp(open, "(...)", 5) != 0) {
				open[1] = open[2] = open[3] = '.';
				memmove(open + 4, close, strlen(close) + 1);
				*func_n -= (size_t)(close - open - 4);
			}
		} else if (total >= 2) {
			/* the outer scopes, from the first, for "..": the fewest
			 * that leave it short enough, the last two kept */
			size_t at = (size_t)(q - s), from = penult + 2;
			for (size_t k = 0; k < nends && ends[k] <= penult; k++)
				if (*func_n - (ends[k] + 2 - at) + 2 <= want) {
					from = ends[k] + 2;
					break;
				}
			s[at] = s[at + 1] = '.';
			memmove(s + at + 2, s + from, strlen(s + from) + 1);
			*func_n -= from - at - 2;
		}
	}
}

/* A name without a source line, "func+0x2a" or "module+0x1a2b", in cols
 * columns, its offset whole: a function loses its start ("..ex::Lock+0x9":
 * C++ names end in what says most), a module its end ("libkeyvalu..+0x1a2b":
 * library names begin with it), as long as 4 characters of either are
 * left; else cut at its end.  Never a module's name alone: every row of a
 * program whose mutexes are locked in a stripped library read just that. */
static const char *fit_offset(char *s, size_t cols, int is_module)
{
	size_t n = strlen(s);
	char *plus = offset_of(s);
	size_t off_n = plus ? strlen(plus) : 0;
	if (n <= cols)
		return s;
	if (!plus || cols < off_n + 2 + 4)
		return cut_end(s, cols);
	/* a C++ function's argument list says least: "(...)" first, then
	 * gone ("..d long, unsigned long)+0x20" had lost Rings::setCapacity) */
	if (!is_module && plus - s > 2 && plus[-1] == ')') {
		int depth = 0;
		char *open = plus - 1;
		for (; open >= s; open--) {
			depth += (*open == ')') - (*open == '(');
			if (!depth)
				break;
		}
		/* (a list of 3 characters or more: never longer) */
		if (open > s && (plus - 1) - (open + 1) >= 3 && strncmp(open + 1, "...)", 4) != 0) {
			open[1] = open[2] = open[3] = '.';
			memmove(open + 4, plus - 1, off_n + 2);
			plus = open + 5;
			if (strlen(s) <= cols)
				return s;
		}
	}
	if (!is_module && plus - s > 5 && !memcmp(plus - 5, "(...)", 5)) {
		memmove(plus - 5, plus, off_n + 1);
		plus -= 5;
		if (strlen(s) <= cols)
			return s;
	}
	if (!is_module) {
		size_t func_n = (size_t)(plus - s);
		shorten_scopes(s, &func_n, cols - off_n);
		plus = s + func_n;
		if (strlen(s) <= cols)
			return s;
	}
	size_t keep = cols - off_n - 2;
	if (is_module) {
		memmove(s + keep + 2, plus, off_n + 1);
		s[keep] = s[keep + 1] = '.';
	} else {
		memmove(s + 2, plus - keep, keep + off_n + 1);
		s[0] = s[1] = '.';
	}
	return s;
}

/* Cuts s[at, at + len) out of s. */
static void cut_out(char *s, size_t at, size_t len)
{
	memmove(s + at, s + at + len, strlen(s + at + len) + 1);
}

/* What a compiler adds to a name that tells a reader nothing: GCC's
 * " [clone .constprop.0]", LLVM's ".llvm.1539558601523092929" (ThinLTO's
 * copies of a static function), and the "::h0123456789abcdef" hash of a
 * Rust function's legacy name.  Taken out first where a frame does not
 * fit: cut from its start, "..ializeLoopStrengthReducePassOnce(...)
 * [clone .llvm.1539558601523092929]+0x11a" kept the noise and lost
 * "llvm::initialize". */
static void drop_compiler_suffixes(char *s)
{
	char *p;
	while ((p = strstr(s, " [clone ")) != NULL) {
		char *end = strchr(p, ']');
		if (!end)
			break;
		cut_out(s, (size_t)(p - s), (size_t)(end + 1 - p));
	}
	for (p = s; (p = strstr(p, ".llvm.")) != NULL;) {
		size_t d = strspn(p + 6, "0123456789");
		if (d)
			cut_out(s, (size_t)(p - s), 6 + d);
		else
			p += 6;
	}
	for (p = s; (p = strstr(p, "::h")) != NULL;) {
		size_t h = strspn(p + 3, "0123456789abcdef");
		char after = p[3 + h];
		if (h == 16 && !((after >= 'a' && after <= 'z') || (after >= 'A' && after <= 'Z') ||
				 (after >= '0' && after <= '9') || after == '_'))
			cut_out(s, (size_t)(p - s), 3 + h);
		else
			p += 3;
	}
}

/* The source line stays longest: it is what a reader jumps to. */
const char *ms_symbol_fit(char *s, size_t cols)
{
	size_t n = strlen(s);
	if (n <= cols)
		return s;
	drop_compiler_suffixes(s);
	n = strlen(s);
	char *loc = strrchr(s, '(');
	if (n <= cols)
		return s;
	if (!loc || loc < s + 2 || loc[-1] != ' ' || s[n - 1] != ')')
		return fit_offset(s, cols, 1); /* "module+0x1a2b", an address */
	if (!strchr(loc, ':')) {
		/* "func+0x2a (module)": no line; "func+0x2a module", else the
		 * function and its offset alone */
		memmove(loc, loc + 1, strlen(loc + 1) + 1);
		s[n - 2] = 0;
		if (n - 2 <= cols)
			return s;
		loc[-1] = 0;
		return fit_offset(s, cols, 0);
	}
	char *comma = strchr(loc, ','); /* ", module)" */
	if (comma) {
		comma[0] = ')';
		comma[1] = 0;
		if ((n = strlen(s)) <= cols)
			return s;
	}
	/* "+0x1d", where a line says where */
	char *plus = memrchr(s, '+', (size_t)(loc - s));
	if (plus && plus[1] == '0' && plus[2] == 'x' &&
	    plus + 3 + strspn(plus + 3, "0123456789abcdef") == loc - 1 && strchr(loc, ':')) {
		memmove(plus, loc - 1, strlen(loc - 1) + 1);
		loc = plus + 1;
		if ((n = strlen(s)) <= cols)
			return s;
	}
	char *slash = strrchr(loc, '/'); /* "(dir/" */
	if (slash) {
		memmove(loc + 1, slash + 1, strlen(slash + 1) + 1);
		if ((n = strlen(s)) <= cols)
			return s;
	}
	/* "func file.c:61": without the parentheses */
	memmove(loc, loc + 1, strlen(loc + 1) + 1);
	s[--n - 1] = 0;
	if (--n <= cols)
		return s;
	size_t src_n = (size_t)(s + n - loc); /* "file.c:61" */
	size_t func_n = (size_t)(loc - 1 - s);
	if (cols >= src_n + 1 + 2 + 8) {
		shorten_scopes(s, &func_n, cols - src_n - 1);
		if (func_n + 1 + src_n <= cols)
			return s;
	}
	if (cols >= src_n + 1 + 2 + 8) { /* "..consumer(int) file.c:61" */
		size_t keep = cols - src_n - 1 - 2;
		memmove(s + 2, s + func_n - keep, keep + 1 + src_n + 1);
		s[0] = s[1] = '.';
		return s;
	}
	size_t skip = src_n > cols && cols > 2 ? src_n - (cols - 2) : 0;
	memmove(s + (skip ? 2 : 0), loc + skip, src_n - skip + 1);
	if (skip)
		s[0] = s[1] = '.';
	return s;
}
