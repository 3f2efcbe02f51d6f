/* output.h - where reports and warnings go. */
#ifndef MUTEXSTAT_OUTPUT_H
#define MUTEXSTAT_OUTPUT_H

#include <stddef.h>

struct ms_fmt;

/* At start-up: keep a private copy of the stderr the program started with,
 * so a report reaches it even if the program closes or redirects fd 2;
 * and of the program's name and its directory. */
void ms_output_init(void);

/* The program's name (program_invocation_short_name) as it was at
 * start-up: a program that sets its process title (nginx) writes the
 * title over the argv[0] that name points into. */
const char *ms_program_name(void);

/* The descriptor for the original stderr, or -1 if it is gone (closed, and
 * the number now names another file). */
int ms_output_stderr(void);

/* The process left its session (setsid: a daemon): the copy of the stderr
 * it started with is let go, so that a pipe it was (`daemon | cat`, a CI
 * step's output) ends when the program's own ends are closed, as without
 * the library -- redis-server --daemonize held it until redis exited.
 * Its reports go to its fd 2 if that is still the file, else nowhere
 * (MUTEXSTAT_OUTPUT=FILE keeps them). */
void ms_output_detached(void);
/* The program closed or replaced one of its fds 0-2 (close, dup2, dup3):
 * if the stderr it started with is a pipe or a socket, and none of them
 * is it any more, the copy is let go as above -- a background subshell
 * that sends its output to /dev/null, or a server started from a shell
 * function with its output to a log, held its caller's pipe open, and
 * the caller waited for its end until that process exited. */
void ms_output_std_moved(void);

/* The text report had nowhere to go: the program closed the stderr it
 * started with and our copy too (closefrom(0), as a daemon does).  One
 * line, once, on the program's fd 2 now -- only if that is a terminal,
 * pipe, socket or device, never a regular file: the number may be a
 * data file of the program's that reused it.  Nothing if the program
 * started without a stderr. */
void ms_output_say_stderr_gone(void);

/* A line on the original stderr, only if writing it cannot block: a pipe
 * nobody reads would hold an ending process for ever. */
void ms_output_note(const char *msg);

/* A note ("mutexstat: ..." and a newline: a bad MUTEXSTAT_* value, no
 * live dumps on the signal, call stacks cut short by ulimit -v) for the
 * heading of each of the process's reports, where whoever reads the
 * report reads it too; and for its original stderr (as ms_output_note),
 * unless the process is one of a run's other than its first, whose stderr
 * is its program's, which a test may compare with what it expects.  A
 * note that does not fit in what is left of 2 KiB is not kept.  Not for
 * two threads at once: each caller says its note once. */
void ms_output_say(const char *msg);

/* The same for a note of later on (a program that takes the live dump's
 * signal): on stderr only where the text report goes too, and only if an
 * exit report comes whatever the process does (MUTEXSTAT_EXIT_REPORT on,
 * MUTEXSTAT_QUIET off).  A program whose reports go to a file
 * (MUTEXSTAT_OUTPUT) keeps its stderr as it would be -- xz, redis and
 * memcached all take SIGUSR1 -- and so does one under the launcher,
 * which sets MUTEXSTAT_QUIET: make takes SIGUSR1 and locks nothing. */
void ms_output_say_beside_report(const char *msg);

/* A note for the reports' headings alone, as it is at the exit report:
 * said on no stream. */
void ms_output_keep(const char *msg);

/* The notes kept, one a line, without the "mutexstat: " they began with;
 * "" if none.  The last may still be being written: a line without its
 * newline. */
const char *ms_output_kept(void);
/* Where the kept notes end now, and back to there: a note for one report
 * only (a vfork child's, whose memory is its parent's). */
size_t ms_output_kept_mark(void);
void ms_output_kept_trim(size_t mark);

/* The path of a report file: MUTEXSTAT_OUTPUT (with formats other than
 * text alone, its prefix, by default mutexstat.%p) with %p replaced by the
 * pid, then "." infix unless it is "", then ".N" for the Nth live dump or
 * interval (seq; 0 at exit), then ext (".txt", ".json", ...; "" for text
 * alone).  A relative path is taken from the
 * directory the process started in (ms_output_init), not the one it is in
 * now.  Returns -1 if it does not fit in cap (never a shortened name). */
int ms_output_path(char *out, size_t cap, const char *infix, unsigned seq, const char *ext);

/* Whether this process's reports go to a run's directory (MUTEXSTAT_RUN_DIR,
 * set by the launcher), as PROGRAM.PID there: a process of the run other
 * than its first, and MUTEXSTAT_OUTPUT unset or naming one file (no %p),
 * which is the first process's.  Its stderr is the program's own, which a
 * test may compare with what it expects. */
int ms_output_in_run_dir(void);
/* Whether this process is one of a run's other than its first, wherever
 * its reports go: its stderr is the program's own, and a report it cannot
 * write is the run's summary's to tell. */
int ms_output_in_run_other(void);

/* Whether a run's processes other than the first write to its directory,
 * as ms_output_in_run_dir says (not: MUTEXSTAT_OUTPUT has %p, or names a
 * device or FIFO that each writes to in turn). */
int ms_output_run_uses_dir(void);

/* Before a relative path, the directory the process started in and a
 * slash (nothing if unknown): where MUTEXSTAT_OUTPUT and a run's
 * directory are, wherever the program has moved since. */
void ms_output_start_dir(struct ms_fmt *f, const char *path);

/* Opens path for writing a report, by the rules of doc/report.md, "Where
 * it goes": a new file is created, never through a symlink; an
 * existing one is replaced only if it is a regular file of the user the
 * process runs as with no other link (an earlier report); a character
 * device or a FIFO with a reader is written to.  keep_others (a text
 * report): a file another process wrote since this one began is added to,
 * not replaced.  Returns the descriptor, or -1 with why (cap bytes)
 * saying why not: an errno name or a few words. */
int ms_output_create(const char *path, int keep_others, char *why, size_t cap);

/* The descriptor path names as a stream of the process's own --
 * /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N -- else -1.
 * ms_output_create writes to a copy of that descriptor: the links are
 * the kernel's, not a name planted to be followed, and an open through
 * them would start a regular file from its beginning, over the program's
 * output. */
int ms_output_stream_of(const char *path);

/* A report file from ms_output_create is about to be closed: a regular one
 * is locked while it is written, so that two processes writing one file
 * do not mix their reports (output.c). */
void ms_output_done(int fd);

/* Around a report written to the original stderr (fd): a lock that the
 * other processes sharing it (a parent and its children) wait for, so that
 * their reports do not come out cut into each other; -1 where none is
 * taken (output.c says when). */
int ms_output_stderr_lock(int fd);
void ms_output_stderr_unlock(int lock);

/* In a fork child: close the copies of the report files other threads of
 * the parent were writing (and with them their locks). */
void ms_output_after_fork_child(void);

#endif
