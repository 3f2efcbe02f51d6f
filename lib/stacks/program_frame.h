/* program_frame.h - where a stack leaves the system headers' code.
 *
 * Built without optimisation (-O0, -Og), C++'s lock calls are functions of
 * their own in the program: std::lock_guard's constructor calls
 * std::mutex::lock, which calls __gthread_mutex_lock, which calls
 * pthread_mutex_lock.  The line that called the library is then
 * bits/gthr-default.h:749 for every std::mutex of the program, and a
 * one-line "first locked at" says nothing.  It names, instead, the first
 * frame of the lock's stack whose code is the program's.  Report time only
 * (it symbolizes: symbols.h). */
#ifndef MUTEXSTAT_PROGRAM_FRAME_H
#define MUTEXSTAT_PROGRAM_FRAME_H

#include "stacks/depot.h"

#include <stdint.h>

/* `at`, or, where at's source line is a system header's and `stack` (a
 * lock's own first-lock stack: not one shared with its site, table.h's
 * MS_SITE_SHARED, which another lock's call took) has at among its
 * frames, the first frame after it with a source line outside system
 * headers (at again if none has). */
uintptr_t ms_program_frame(uintptr_t at, ms_stack_id stack);

#endif
