/* environ.h - the process's environment and name, also before glibc has
 * set them up.
 *
 * A program's .preinit_array functions run before glibc's start-up code
 * sets environ and program_invocation_short_name: a lock taken in one
 * starts the library, which then found no MUTEXSTAT_* setting (its report
 * went to stderr whatever MUTEXSTAT_OUTPUT said) and no program name.
 * Until glibc has set them, these read the environment and argv[0]
 * the kernel left on the initial stack, where the dynamic linker's
 * __libc_stack_end points -- the program's own getenv still finds
 * nothing there, as without the library. */
#ifndef MUTEXSTAT_ENVIRON_H
#define MUTEXSTAT_ENVIRON_H

#include <stdint.h>

/* getenv(name) */
const char *ms_getenv(const char *name);

/* secure_getenv(name): NULL in a setuid or setgid program */
const char *ms_secure_getenv(const char *name);

/* program_invocation_short_name, or before glibc sets it, the last part
 * of argv[0] ("" if unknown) */
const char *ms_program_short_name(void);

/* The top of the main thread's stack as the program started (the
 * dynamic linker's __libc_stack_end: argc there, the arguments and the
 * environment above it); 0 if unknown. */
uintptr_t ms_main_stack_top(void);

/* How far below that top the main thread's stack may reach, taken short
 * (environ.c says how). */
uintptr_t ms_main_stack_reach(void);

#endif
