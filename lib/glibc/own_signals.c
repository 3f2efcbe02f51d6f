/* own_signals.c - the signals the library handles, as the program sees
 * them; see own_signals.h. */
#define _GNU_SOURCE
#include "glibc/own_signals.h"
#include "glibc/real.h"
#include "base/internal.h"
#include "base/output.h"

#include <sys/syscall.h>
#include <unistd.h>

/* glibc's, by names of theirs we do not interpose: what the calls reach
 * before start-up has looked for an interposer behind us. */
extern int glibc_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
	__asm__("__sigaction");
extern __sighandler_t bsd_signal(int sig, __sighandler_t handler);

static int (*next_sigaction)(int, const struct sigaction *, struct sigaction *);
static __sighandler_t (*next_signal)(int, __sighandler_t);
static int (*next_sigaltstack)(const stack_t *, stack_t *);

void ms_own_signals_resolve(void)
{
	void *p = ms_real_next("sigaction", NULL);
	if (p)
		__atomic_store_n((void **)&next_sigaction, p, __ATOMIC_RELEASE);
	p = ms_real_next("signal", NULL);
	if (p)
		__atomic_store_n((void **)&next_signal, p, __ATOMIC_RELEASE);
	p = ms_real_next("sigaltstack", NULL);
	if (p)
		__atomic_store_n((void **)&next_sigaltstack, p, __ATOMIC_RELEASE);
}

int ms_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	int (*f)(int, const struct sigaction *, struct sigaction *) =
		__atomic_load_n(&next_sigaction, __ATOMIC_ACQUIRE);
	return f ? f(sig, act, old) : glibc_sigaction(sig, act, old);
}

__sighandler_t ms_signal_next(int sig, __sighandler_t handler)
{
	__sighandler_t (*f)(int, __sighandler_t) = __atomic_load_n(&next_signal, __ATOMIC_ACQUIRE);
	return f ? f(sig, handler) : bsd_signal(sig, handler);
}

int ms_sigaltstack_next(const stack_t *ss, stack_t *old)
{
	int (*f)(const stack_t *, stack_t *) = __atomic_load_n(&next_sigaltstack,
							      __ATOMIC_ACQUIRE);
	return f ? f(ss, old) : (int)syscall(SYS_sigaltstack, ss, old);
}

static struct {
	void *ours;
	struct sigaction before;
	const char *taken_note;
	int said;
} own[NSIG];

void ms_own_signal(int sig, void *ours, const struct sigaction *before,
		   const char *taken_note)
{
	if (sig <= 0 || sig >= NSIG || !ours)
		return;
	/* installed again over itself (a fork child's start): what was
	 * there before the first one stays */
	if (LOAD(&own[sig].ours) == ours && (void *)before->sa_handler == ours)
		return;
	own[sig].before = *before;
	own[sig].taken_note = taken_note;
	__atomic_store_n(&own[sig].ours, ours, __ATOMIC_RELEASE);
}

/* What sig had before our handler, if `handler` is ours on it; else NULL. */
static const struct sigaction *before_ours(int sig, __sighandler_t handler)
{
	if (sig <= 0 || sig >= NSIG)
		return NULL;
	void *ours = __atomic_load_n(&own[sig].ours, __ATOMIC_ACQUIRE);
	return ours && (void *)handler == ours ? &own[sig].before : NULL;
}

void ms_own_signal_set(int sig, __sighandler_t prev, __sighandler_t now)
{
	if (!before_ours(sig, prev) || (void *)now == (void *)prev)
		return;
	/* a kill -USR1 meant for a dump now goes to the program: said
	 * once, where the reports say it too */
	const char *note = own[sig].taken_note;
	if (note && !__atomic_exchange_n(&own[sig].said, 1, __ATOMIC_RELAXED))
		ms_output_say_beside_report(note);
}

void ms_own_signal_hide(int sig, struct sigaction *seen)
{
	const struct sigaction *b = before_ours(sig, seen->sa_handler);
	if (b)
		*seen = *b;
}

__sighandler_t ms_own_signal_hide_handler(int sig, __sighandler_t seen)
{
	const struct sigaction *b = before_ours(sig, seen);
	return b ? b->sa_handler : seen;
}
