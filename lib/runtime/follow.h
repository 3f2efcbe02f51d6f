/* follow.h - MUTEXSTAT_FOLLOW=0: the program's children run without the
 * library.
 *
 * Children started with exec inherit LD_PRELOAD, so by default they are
 * recorded too.  With MUTEXSTAT_FOLLOW=0 the library takes itself out of
 * the LD_PRELOAD the program will hand to its children, once, at start-up
 * (before main), so every later copy of the environment -- the program's
 * own, execv, system(), popen(), posix_spawn -- is without it.  (Fork
 * children without exec are handled in fork.c.) */
#ifndef MUTEXSTAT_FOLLOW_H
#define MUTEXSTAT_FOLLOW_H

#include <stddef.h>

/* Remove the library's entries from LD_PRELOAD in environ (the variable
 * goes if nothing is left).  Other entries, and their order, stay. */
void ms_follow_stop(void);

/* The list `in` without the entries that name the library (file name
 * libmutexstat.so..., or the same file as `self`), into out; separators
 * between the entries kept.  Returns the length, or -1 if it does not fit.
 * (Separate for the unit tests.) */
int ms_follow_strip(const char *in, const char *self, char *out, size_t cap);

#endif
