/* own_signals.h - the signals the library handles, as the program sees them.
 *
 * The library puts a handler on the dump signal (SIGUSR1) and on
 * SIGRTMAX-3 (where a thread is now), each only where the program had left
 * the default.  A program
 * that asks what its signal does (sigaction, signal) would see our handler
 * where it would see SIG_DFL without the library, and code that saves a
 * disposition and puts it back later breaks on a handler it did not make
 * (Python's signal.getsignal answers None, and signal.signal(sig, None)
 * raises TypeError).  So the entry points of wrap/interpose_signal.c show
 * the disposition the signal had before ours, while ours is in place.  A
 * program that sets the signal in any way -- even to the default it read
 * -- takes it from the library, as before.  The fatal signals' handlers of
 * MUTEXSTAT_ON_CRASH are not hidden: that option is asked for, and a crash
 * handler of the program's that passes the signal on to the one it found
 * must find ours for the crash report. */
#ifndef MUTEXSTAT_OWN_SIGNALS_H
#define MUTEXSTAT_OWN_SIGNALS_H

#include <signal.h>

/* glibc's sigaction and signal, or the next interposer's: what the
 * library itself calls, and what the program's calls reach.  glibc's own
 * until ms_own_signals_resolve() (start-up). */
int ms_sigaction(int sig, const struct sigaction *act, struct sigaction *old);
__sighandler_t ms_signal_next(int sig, __sighandler_t handler);
/* The same for sigaltstack: the next interposer's, else the system call
 * (glibc's is that alone, and has no name of its own we do not
 * interpose). */
int ms_sigaltstack_next(const stack_t *ss, stack_t *old);
void ms_own_signals_resolve(void);

/* The library's handler `ours` is now on sig, where `before` was.
 * taken_note, if not NULL, is said (base/output.h's
 * ms_output_say_beside_report) the
 * first time the program puts a disposition of its own there: what the
 * library can no longer do.  It must stay (a string constant). */
void ms_own_signal(int sig, void *ours, const struct sigaction *before,
		   const char *taken_note);

/* The program's sigaction or signal replaced `prev` on sig with `now`
 * (async-signal-safe). */
void ms_own_signal_set(int sig, __sighandler_t prev, __sighandler_t now);

/* A disposition of sig the kernel gave: if it is the library's handler,
 * what was there before it (async-signal-safe). */
void ms_own_signal_hide(int sig, struct sigaction *seen);
__sighandler_t ms_own_signal_hide_handler(int sig, __sighandler_t seen);

#endif
