/* formats.c - one report in every format MUTEXSTAT_FORMAT asks for, each
 * where MUTEXSTAT_OUTPUT says; see formats.h. */
#define _GNU_SOURCE
#include "report/formats.h"
#include "base/fds.h"
#include "report/interval_lines.h"
#include "report/interval_text.h"
#include "analysis/blame.h"
#include "base/clock.h"
#include "base/internal.h"
#include "base/fmt.h"
#include "base/options.h"
#include "base/output.h"
#include "core/forked.h"
#include "core/thread.h"
#include "report/out_dot.h"
#include "report/out_folded.h"
#include "report/out_json.h"
#include "report/out_pprof.h"
#include "report/report.h"
#include "report/run.h"
#include "report/report_lock.h"
#include "report/span.h"
#include "stacks/stack.h"
#include "stacks/symbols.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

/* One set of report files at a time, from the first file's creation to
 * the last one's close: the exit report waits for the dump under way to be
 * complete, and from then on no live dump starts (ending): the process is
 * about to end, in the middle of whatever dump came next (and a storm of
 * dump signals would keep the exit report waiting). */
static int files_lock, ending;

/* The span of the interval files being written (ms_report_interval);
 * NULL for a report of the run so far. */
static const struct ms_span *span;
/* The interval being written, for its text and JSON (ms_report_interval). */
static struct ms_iv interval;
/* A file of the report being written could not be (ms_report_interval). */
static int some_file_failed;

/* The child of a fork made while another thread wrote a report. */
void ms_report_after_fork_child(void)
{
	files_lock = 0;
	ending = 0;
	span = NULL; /* an interval the parent's dump thread was writing */
	memset(&interval, 0, sizeof interval); /* (its memory: the parent's) */
	ms_iv_after_fork_child();
	some_file_failed = 0;
	ms_report_text_after_fork_child();
}

/* The one-line warning about a report file that could not be created
 * (opened 0) or written (opened 1), on the original stderr.  name: the
 * format of a file that is not sent to stderr instead. */
static void warn_file(const char *path, const char *why, int opened,
		      const char *name)
{
	int efd = ms_output_stderr();
	if (efd < 0)
		return;
	char msg[4400];
	struct ms_fmt w;
	ms_fmt_init(&w, msg, sizeof msg, -1);
	ms_fmt(&w, "mutexstat: %s MUTEXSTAT_OUTPUT '", opened ? "writing" : "cannot write");
	ms_fmt_quoted(&w, path, 4096); /* a newline in the path: still one line */
	if (opened)
		ms_fmt(&w, "' failed (%s)", why);
	else
		ms_fmt(&w, "' (%s)", why);
	if (!name)
		ms_fmt(&w, "; the report goes to stderr\n");
	else if (span) /* an interval's file: the whole run's report comes at exit */
		ms_fmt(&w, "; interval %u's %s file %s\n", span->n, name,
		       opened ? "there is incomplete" : "is lost");
	else
		ms_fmt(&w, "; the %s report %s\n", name, opened ? "there is incomplete" : "is lost");
	const char *line = ms_fmt_str(&w);
	ms_write_all(efd, line, strlen(line));
}

/* A report file of a run's process that could not be written (report/run.h). */
static int run_file_failed;


/* Live dumps are PREFIX.N.EXT -- unless interval files are: theirs
 * that is, and a dump's PREFIX.dump.N.EXT (one series each). */
static const char *dump_infix(unsigned seq)
{
	return seq && ms_opt_intervals() && !span ? "dump" : "";
}

/* A file's name ends in its format's ext -- but for text alone, where
 * MUTEXSTAT_OUTPUT names the report itself (and PREFIX.N its dumps and
 * intervals). */
static const char *file_ext(const char *ext)
{
	return ms_opt.formats == MS_FORMAT_TEXT ? "" : ext;
}

static int text_writer(int fd, int arg)
{
	(void)arg;
	return ms_report(fd);
}

/* One format's file (see doc/report.md, "Where it goes").  The text
 * report always reaches the user: when its file cannot be created or
 * written, a one-line warning and the report go to stderr.  Another
 * format's file is not sent to stderr (a gzip'd profile on a terminal
 * helps nobody): the warning says it is lost. */
static void write_format(unsigned seq, const char *ext, const char *name,
			 int (*writer)(int fd, int arg), int arg)
{
	if (__atomic_load_n(&ms_report_abandoned, __ATOMIC_RELAXED))
		return;
	int saved = errno;
	ms_guard_enter(&ms_self);
	int text = writer == text_writer; /* (an interval's text: a file only) */
	if (text && ms_opt.formats == MS_FORMAT_TEXT && !ms_opt.output &&
	    !ms_output_in_run_dir()) {
		int fd = ms_output_stderr();
		if (fd >= 0) {
			int lock = ms_output_stderr_lock(fd);
			writer(fd, arg); /* a failing stderr: nowhere to say so */
			ms_output_stderr_unlock(lock);
		} else {
			ms_output_say_stderr_gone();
		}
		goto out;
	}
	/* Text alone keeps MUTEXSTAT_OUTPUT as the file's name; with other
	 * formats it is the prefix of each file's name. */
	char path[4096], why[96];
	int fd = -1;
	if (ms_output_path(path, sizeof path, dump_infix(seq), seq, file_ext(ext)) == 0)
		fd = ms_output_create(path, text, why, sizeof why);
	else
		strcpy(why, "ENAMETOOLONG");
	if (fd < 0)
		some_file_failed = 1;
	int gone = fd < 0 && ms_output_in_run_dir() && ms_run_dir_gone();
	if (fd < 0 && ms_output_in_run_other() && !gone) {
		/* never into a run's program's stderr, in the run's
		 * directory or where -o sends the reports (a worker that
		 * became nobody and may not write there): the run's summary
		 * tells (report/run.h) */
		run_file_failed = 1;
		goto out;
	} else if (gone) {
		/* a process that outlived the run's first, and the run's
		 * directory with it: no summary will tell, so as outside a
		 * run -- its stderr, said why */
		run_file_failed = 1;
		ms_run_say_gone(text ? NULL : name);
	} else if (fd < 0) {
		warn_file(path, why, 0, text ? NULL : name);
	} else {
		/* a stream of the program's (/dev/stdout) its children may
		 * share: one report at a time, as on stderr */
		int lock = ms_output_stream_of(path) >= 0 ? ms_output_stderr_lock(fd) : -1;
		int rc = writer(fd, arg), err = errno;
		ms_output_stderr_unlock(lock);
		ms_output_done(fd);
		if (__atomic_load_n(&ms_report_abandoned, __ATOMIC_RELAXED)) {
			ms_fd_close(fd);
			goto out; /* no warning: ms_report_all says why */
		}
		if (ms_fd_close(fd) != 0 && !rc && errno != EINTR) {
			rc = -1; /* NFS and quotas may tell only now */
			err = errno;
		}
		if (!rc)
			goto out;
		some_file_failed = 1;
		if (ms_output_in_run_other()) {
			run_file_failed = 1;
			goto out;
		}
		const char *e = strerrorname_np(err);
		warn_file(path, e ? e : "error", 1, text ? NULL : name);
	}
	if (text) {
		int efd = ms_output_stderr();
		if (efd >= 0) {
			int lock = ms_output_stderr_lock(efd);
			writer(efd, arg);
			ms_output_stderr_unlock(lock);
		} else {
			ms_output_say_stderr_gone();
		}
	}
out:
	ms_guard_leave(&ms_self);
	errno = saved;
}

static int folded_writer(int fd, int kind)
{
	ms_symbols_begin();
	int rc = ms_write_folded(fd, (enum ms_blame_kind)kind, span);
	ms_symbols_end();
	return rc;
}

static int json_writer(int fd, int arg)
{
	(void)arg;
	ms_symbols_begin();
	int rc = ms_write_json(fd);
	ms_symbols_end();
	return rc;
}

static int dot_writer(int fd, int arg)
{
	(void)arg;
	return ms_write_dot(fd);
}

static int pprof_writer(int fd, int arg)
{
	(void)arg;
	ms_symbols_begin();
	int rc = ms_write_pprof(fd, span);
	ms_symbols_end();
	return rc;
}

/* The process's last report waited 5 s for a report that made no progress. */
static void give_up(void)
{
	ms_output_note(ms_crash.signal
		? "mutexstat: no crash report: another report has been stuck for 5 s "
		  "(a mutexstat_dump() to a pipe nobody reads?)\n"
		: "mutexstat: no exit report: another report has been stuck for 5 s "
		  "(a mutexstat_dump() to a pipe nobody reads?)\n");
}

void ms_report_files_finish(void)
{
	int cancel = ms_cancel_off();
	__atomic_store_n(&ending, 1, __ATOMIC_SEQ_CST);
	if (ms_report_lock_take(&files_lock, 1, NULL) == 0)
		ms_report_lock_give(&files_lock);
	ms_cancel_restore(cancel);
}

void ms_report_all(unsigned seq)
{
	ms_fork_settle(); /* a fork child's first report, before its first call */
	int cancel = ms_cancel_off(); /* report files are opened and written */
	if (!seq) /* the exit report, or a crash's: the process's last */
		__atomic_store_n(&ending, 1, __ATOMIC_SEQ_CST);
	/* a live dump as the process ends is not started */
	if (ms_report_lock_take(&files_lock, !seq, seq ? &ending : NULL) != 0) {
		if (!seq)
			give_up();
		ms_cancel_restore(cancel);
		return;
	}
	ms_report_writing_last = !seq;
	ms_stack_report_begin(); /* no fork meanwhile: stack.h */
	ms_clock_report_begin(); /* each format says the same run length */
	ms_blame_readers(1); /* the blame lines stay put (blame.c) */
	/* one session for every format: the modules' symbols are read once,
	 * and the formats after the first name their frames from its answers */
	ms_symbols_begin();
	/* MUTEXSTAT_QUIET: no exit report from a process that locked
	 * nothing -- but a run's first process alone says it still (run.h) */
	int written = !(!seq && ms_opt.quiet && ms_report_locked_nothing() &&
			!(ms_run_is_root() && ms_run_root_alone()));
	if (!written)
		goto written;
	run_file_failed = 0;
	if (ms_opt.formats & MS_FORMAT_TEXT)
		write_format(seq, ".txt", "text", text_writer, 0);
	if (ms_opt.formats & MS_FORMAT_FOLDED) {
		write_format(seq, ".wait.folded", "folded", folded_writer, MS_BLAME_WAIT);
		write_format(seq, ".hold.folded", "folded", folded_writer, MS_BLAME_HOLD);
	}
	if (ms_opt.formats & MS_FORMAT_PPROF)
		write_format(seq, ".pb.gz", "pprof", pprof_writer, 0);
	if (ms_opt.formats & MS_FORMAT_DOT)
		write_format(seq, ".dot", "dot", dot_writer, 0);
	if (ms_opt.formats & MS_FORMAT_JSON)
		write_format(seq, ".json", "json", json_writer, 0);
	if (!seq && ms_opt.exit_code && !(ms_opt.formats & MS_FORMAT_TEXT) &&
	    !__atomic_load_n(&ms_report_abandoned, __ATOMIC_RELAXED))
		ms_report_count_failing();
written:
	if (!seq && !__atomic_load_n(&ms_report_abandoned, __ATOMIC_RELAXED))
		ms_run_end(written, written && run_file_failed);
	ms_symbols_end();
	ms_blame_readers(-1);
	ms_clock_report_end();
	ms_stack_report_end();
	ms_report_writing_last = 0;
	if (!seq && __atomic_load_n(&ms_report_abandoned, __ATOMIC_RELAXED))
		give_up();
	ms_report_lock_give(&files_lock);
	ms_cancel_restore(cancel);
}

static int interval_text_writer(int fd, int arg)
{
	(void)arg;
	return ms_write_interval_text(fd, &interval, span);
}

static int interval_json_writer(int fd, int arg)
{
	(void)arg;
	return ms_write_interval_json(fd, &interval, span);
}

/* The interval files' formats, with their file names' ends.  Text and
 * JSON hold the interval's numbers (interval_lines.h), the profiles its
 * blame lines' share; DOT draws the graphs as they stand as it ends (a
 * graph of lock order does not add up). */
static const struct {
	uint64_t format;
	const char *ext, *name;
	int (*writer)(int fd, int arg);
	int arg;
} interval_files[] = {
	{ MS_FORMAT_TEXT, ".txt", "text", interval_text_writer, 0 },
	{ MS_FORMAT_FOLDED, ".wait.folded", "folded", folded_writer, MS_BLAME_WAIT },
	{ MS_FORMAT_FOLDED, ".hold.folded", "folded", folded_writer, MS_BLAME_HOLD },
	{ MS_FORMAT_PPROF, ".pb.gz", "pprof", pprof_writer, 0 },
	{ MS_FORMAT_DOT, ".dot", "dot", dot_writer, 0 },
	{ MS_FORMAT_JSON, ".json", "json", interval_json_writer, 0 },
};

int ms_report_interval(const struct ms_span *sp, unsigned keep, int last)
{
	ms_fork_settle(); /* a fork child's numbers start at the fork */
	int cancel = ms_cancel_off();
	/* none once the process is ending: its own last interval comes
	 * before the exit report (ending), from the exiting thread (last) */
	if (ms_report_lock_take(&files_lock, last, &ending) != 0) {
		ms_cancel_restore(cancel);
		return 1;
	}
	span = sp;
	some_file_failed = 0;
	ms_stack_report_begin();
	ms_clock_report_begin();
	ms_blame_readers(1);
	ms_symbols_begin();
	/* text and JSON show the same reading of the interval; without
	 * memory for it, none (its numbers go to the next interval's) */
	int numbers = (ms_opt.formats & (MS_FORMAT_TEXT | MS_FORMAT_JSON)) &&
		      ms_iv_take(&interval) == 0;
	static int said;
	if (!numbers && (ms_opt.formats & (MS_FORMAT_TEXT | MS_FORMAT_JSON)) && !said) {
		said = 1;
		ms_output_note("mutexstat: no memory to read an interval's numbers: its text "
			       "and JSON files are left out, and the next interval's have them\n");
	}
	size_t n = sizeof interval_files / sizeof *interval_files;
	for (size_t i = 0; i < n; i++) {
		uint64_t fm = interval_files[i].format;
		if (!(ms_opt.formats & fm) ||
		    ((fm & (MS_FORMAT_TEXT | MS_FORMAT_JSON)) && !numbers))
			continue;
		write_format(sp->n, interval_files[i].ext, interval_files[i].name,
			     interval_files[i].writer, interval_files[i].arg);
	}
	if (numbers)
		ms_iv_free(&interval);
	/* MUTEXSTAT_KEEP: the newest keep intervals' files stay */
	for (size_t i = 0; keep && sp->n > keep && i < n; i++) {
		char path[4096];
		/* (gone already: the user's to remove too; never a stream
		 * of the process's own, /dev/stdout, which holds them all) */
		if ((ms_opt.formats & interval_files[i].format) &&
		    ms_output_path(path, sizeof path, "", sp->n - keep,
				   file_ext(interval_files[i].ext)) == 0 &&
		    ms_output_stream_of(path) < 0)
			unlink(path);
	}
	ms_symbols_end();
	ms_blame_readers(-1);
	ms_clock_report_end();
	ms_stack_report_end();
	span = NULL;
	int rc = some_file_failed ? -1 : 0;
	ms_report_lock_give(&files_lock);
	ms_cancel_restore(cancel);
	return rc;
}

void ms_report_to_output(void)
{
	ms_report_all(0);
}
