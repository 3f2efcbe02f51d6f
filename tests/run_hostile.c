/* run_hostile.c - runs a program the way a hostile environment would, and
 * says how it ended, for tests/report_files.sh, tests/signals.sh and
 * tests/crash.sh.
 *
 *   run_hostile [options] program [args...]
 *     --broken-stderr   fd 2 is a pipe whose reader is gone: a write to it
 *                       fails with EPIPE and raises SIGPIPE
 *     --block-all       every signal blocked (inherited by the program)
 *     --ignore SIG      SIG (a number) ignored (inherited by the program)
 *
 * Prints on stdout how the program ended, as waitpid saw it:
 *   "exit N"  or  "signal NAME"  or  "signal NAME core"
 * and exits 0 (1 if the program could not be run). */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int broken = 0, block = 0, i = 1;
	sigset_t ignore;
	sigemptyset(&ignore);
	for (; i < argc && !strncmp(argv[i], "--", 2); i++) {
		if (!strcmp(argv[i], "--broken-stderr"))
			broken = 1;
		else if (!strcmp(argv[i], "--block-all"))
			block = 1;
		else if (!strcmp(argv[i], "--ignore") && i + 1 < argc)
			sigaddset(&ignore, atoi(argv[++i]));
		else
			break;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: run_hostile [--broken-stderr] [--block-all] "
				"[--ignore SIG] program [args...]\n");
		return 1;
	}
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		if (broken) {
			int p[2];
			if (pipe(p) != 0 || dup2(p[1], 2) < 0)
				_exit(126);
			close(p[0]);
			close(p[1]);
		}
		for (int s = 1; s < NSIG; s++)
			if (sigismember(&ignore, s) == 1)
				signal(s, SIG_IGN);
		if (block) {
			sigset_t all;
			sigfillset(&all);
			sigprocmask(SIG_BLOCK, &all, NULL);
		}
		execvp(argv[i], argv + i);
		_exit(127);
	}
	int status;
	if (waitpid(pid, &status, 0) != pid) {
		perror("waitpid");
		return 1;
	}
	if (WIFEXITED(status))
		printf("exit %d\n", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		printf("signal %s%s\n", sigabbrev_np(WTERMSIG(status)),
		       WCOREDUMP(status) ? " core" : "");
	return 0;
}
