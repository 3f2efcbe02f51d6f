/* run.h - a run of many processes under the launcher: a test suite, a
 * build, a script.
 *
 * The launcher names a directory (MUTEXSTAT_RUN_DIR) and the pid of the
 * process it starts (MUTEXSTAT_RUN_ROOT).  Every other process of the run
 * writes its report there, as PROGRAM.PID (base/output.h), never into its
 * own stderr, which a test may compare with what it expects; and at exit
 * every process of the run, the first included, adds a few lines about
 * itself to the directory's .processes file: that it ran, whether it
 * locked a mutex, the first line of each of its findings and its most
 * waited-for mutexes.  The first process, at its exit, reads them back and
 * writes one summary of the run on its stderr (doc/processes-and-signals.md,
 * "A whole test suite").  Report time only: these read and write files. */
#ifndef MUTEXSTAT_RUN_H
#define MUTEXSTAT_RUN_H

/* Part of a run (MUTEXSTAT_RUN_DIR set), and its first process. */
int ms_run_active(void);
int ms_run_is_root(void);

/* As the process starts: the directory's .processes opened for its lines,
 * kept at a high descriptor (base/fds.h).  A server's worker that becomes
 * another user (apache's www-data) may write nothing into the directory
 * made for root by then, but a file opened before stays writable. */
void ms_run_start(void);

/* At the end of the exit report: this process's lines (reported: whether
 * it has a report, else it locked nothing; unwritten: the report's file
 * could not be written), then, in the first process, the run's summary on
 * stderr. */
void ms_run_end(int reported, int unwritten);

/* For MUTEXSTAT_EXIT_CODE: whether this process's exit status becomes the
 * code.  In a run only the first process's does, when any process of the
 * run had a failing finding; elsewhere, when this one had. */
int ms_run_exit_failing(void);

/* A line on stderr as MUTEXSTAT_EXIT_CODE replaces the program's exit
 * status (program_status), which would otherwise change without a word:
 * below this process's text report or the run's summary, if either went
 * to stderr (else stderr is the program's alone, and the report says its
 * findings). */
void ms_run_say_exit_code(int program_status);

/* _exit or _Exit in the first process of a run (a shell ends so, without
 * exit() and its report): its lines and the run's summary all the same,
 * and MUTEXSTAT_EXIT_CODE for the others' findings in *status, if 0. */
void ms_run_before_exit_now(int *status);

/* The run's directory has been removed since the run began (a suite that
 * cleaned $TMPDIR): a report that cannot be written there goes to stderr
 * instead, said so by ms_run_say_gone (name: a format's name whose
 * report is lost, not sent to stderr; NULL: the text, which goes). */
int ms_run_dir_gone(void);
void ms_run_say_gone(const char *name);

/* The first process lets its report go only when the run had no other
 * process: with others, a process that locked nothing says only the
 * summary. */
int ms_run_root_alone(void);

#endif
