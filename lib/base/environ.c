/* environ.c - the environment, also before glibc has set it; see environ.h. */
#define _GNU_SOURCE
#include "base/environ.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/resource.h>

extern char **environ;
/* The dynamic linker's: the initial stack, where argc is, then argv,
 * NULL, the environment, NULL. */
// NOLINTNEXTLINE(bugprone-reserved-identifier,cert-dcl37-c)
extern void *__libc_stack_end;

uintptr_t ms_main_stack_top(void)
{
	return (uintptr_t)__libc_stack_end;
}

/* Three quarters of ulimit -s (the arguments and the environment above
 * the top count against it too), and never past 128 MiB, the least gap
 * the kernel leaves below the stack for what is mapped there: mapped
 * memory (a coroutine's stack) is never taken for the main stack's, where
 * taking the main stack for another only costs a stack switch or a walk
 * not made.  ulimit -s may have been raised since the program began: the
 * kernel placed the gap by the one it began with, at least 128 MiB. */
#define MAIN_STACK_CAP ((uintptr_t)128 << 20)
uintptr_t ms_main_stack_reach(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_STACK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur / 4 * 3 > MAIN_STACK_CAP)
		return MAIN_STACK_CAP;
	return (uintptr_t)(rl.rlim_cur / 4 * 3);
}

/* argv on the initial stack, and argc; NULL if what is there does not
 * look like it (argv[argc] must end the list). */
static char **initial_argv(long *argc)
{
	const long *sp = __libc_stack_end;
	if (!sp || sp[0] < 0 || sp[0] > (1L << 24))
		return NULL;
	char **argv = (char **)(sp + 1);
	if (argv[sp[0]])
		return NULL;
	*argc = sp[0];
	return argv;
}

/* glibc's start-up code has not run yet: environ is not set, and neither
 * is the program's name (a program that empties its environment, whose
 * environ is NULL then too, has its name). */
static int before_libc_start(void)
{
	return !environ && !(program_invocation_name && *program_invocation_name);
}

static const char *initial_getenv(const char *name)
{
	long argc;
	char **argv = initial_argv(&argc);
	if (!argv)
		return NULL;
	size_t n = strlen(name);
	for (char **e = argv + argc + 1; *e; e++)
		if (!strncmp(*e, name, n) && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

const char *ms_getenv(const char *name)
{
	if (!before_libc_start())
		return getenv(name);
	return initial_getenv(name);
}

const char *ms_secure_getenv(const char *name)
{
	if (!before_libc_start())
		return secure_getenv(name);
	int saved = errno;
	unsigned long secure = getauxval(AT_SECURE);
	errno = saved;
	return secure ? NULL : initial_getenv(name);
}

const char *ms_program_short_name(void)
{
	if (program_invocation_short_name && *program_invocation_short_name)
		return program_invocation_short_name;
	long argc;
	char **argv = initial_argv(&argc);
	if (!argv || !argc || !argv[0])
		return "";
	const char *slash = strrchr(argv[0], '/');
	return slash ? slash + 1 : argv[0];
}
