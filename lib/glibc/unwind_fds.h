/* unwind_fds.h - libunwind's own pipe kept at a high number (fds.h), where
 * a program that closes every descriptor and opens its own files does not
 * have them (unwind_fds.c says why and how). */
#ifndef MUTEXSTAT_UNWIND_FDS_H
#define MUTEXSTAT_UNWIND_FDS_H

/* Once, after libunwind is opened and before its first stack walk:
 * unwind_code is an address in libunwind's code.  Nothing happens where
 * its import of pipe2 is not found as expected. */
void ms_unwind_fds_init(const void *unwind_code);

#endif
