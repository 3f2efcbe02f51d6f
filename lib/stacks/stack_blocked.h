/* stack_blocked.h - the stack of another thread of the process while it is
 * blocked in the kernel (a system call, a stop), read without sending it
 * anything: a live dump asks a holder where it is this way first, so that
 * a thread that sleeps, polls, blocks signals or waits for them in
 * sigwaitinfo is neither interrupted nor left out.  x86-64 only; elsewhere
 * it finds nothing, and the dump asks by signal as before. */
#ifndef MUTEXSTAT_STACK_BLOCKED_H
#define MUTEXSTAT_STACK_BLOCKED_H

#include <stdint.h>

/* Thread tid's frames, innermost first: where it is blocked, then return
 * addresses; at most max.  0 if it runs, is gone, or could not be walked
 * (it moved on meanwhile, no libunwind, a fork on its way). */
int ms_stack_blocked(uint32_t tid, uintptr_t *frames, int max);

/* Whether ms_stack_blocked can read stacks here at all (x86-64, with
 * libunwind). */
int ms_stack_blocked_available(void);

#endif
