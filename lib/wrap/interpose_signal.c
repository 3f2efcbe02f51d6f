/* interpose_signal.c - sigaction and signal, which show the program the
 * disposition its signal had before the library's handler went on it
 * (glibc/own_signals.h says why), and sigaltstack, whose stack the
 * library keeps its captures off (stacks/stack.h).  What the program
 * sets goes through unchanged. */
#define _GNU_SOURCE
#include "glibc/own_signals.h"
#include "core/forked.h"
#include "base/internal.h"
#include "stacks/stack.h"

MS_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	struct sigaction was;
	int rc = ms_sigaction(sig, act, &was); /* act is read before was is written */
	if (rc == 0) {
		if (act && !ms_in_vfork_child())
			ms_own_signal_set(sig, was.sa_handler, act->sa_handler);
		if (old) {
			*old = was;
			ms_own_signal_hide(sig, old);
		}
	}
	return rc;
}

MS_EXPORT __sighandler_t signal(int sig, __sighandler_t handler)
{
	__sighandler_t prev = ms_signal_next(sig, handler);
	if (prev == SIG_ERR)
		return prev;
	/* a vfork child's disposition is its own (its exec resets it), the
	 * memory where it would be said its parent's */
	if (!ms_in_vfork_child())
		ms_own_signal_set(sig, prev, handler);
	return ms_own_signal_hide_handler(sig, prev);
}

MS_EXPORT int sigaltstack(const stack_t *ss, stack_t *old)
{
	int rc = ms_sigaltstack_next(ss, old);
	if (rc == 0 && ss)
		ms_stack_alt_changed();
	return rc;
}
