/* interpose_signal.c - sigaction and signal, which show the program the
 * disposition its signal had before the library's handler went on it
 * (glibc/own_signals.h says why).  What the program sets goes through
 * unchanged. */
#define _GNU_SOURCE
#include "glibc/own_signals.h"
#include "base/internal.h"

MS_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	int rc = ms_sigaction(sig, act, old);
	if (rc == 0 && old)
		ms_own_signal_hide(sig, old);
	return rc;
}

MS_EXPORT __sighandler_t signal(int sig, __sighandler_t handler)
{
	__sighandler_t prev = ms_signal_next(sig, handler);
	return prev == SIG_ERR ? prev : ms_own_signal_hide_handler(sig, prev);
}
