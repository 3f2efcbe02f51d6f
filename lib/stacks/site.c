/* site.c - the call-site stack cache; see site.h. */
#include "stacks/site.h"
#include "core/thread.h"
#include "stacks/depot.h"

struct ms_site_entry ms_site_cache[MS_SITE_CACHE];

/* Call sites known to be wrappers (their captures differed), kept past
 * their cache entry: a site that took the entry's slot made a wrapper's
 * mutexes read as first locked at the wrapper's line again (node's
 * uv_mutex_lock, beside its many other sites), and the wrapper, back in
 * the cache, share one caller's stack.  Insert-only, lock-free; full, a
 * wrapper is known only while its entry lasts, as before. */
#define WRAPPERS 512
#define WRAPPER_PROBES 8
static uintptr_t wrappers[WRAPPERS];

static unsigned wrapper_home(uintptr_t site)
{
	return (unsigned)((site * 0x9e3779b97f4a7c15ull) >> 55) & (WRAPPERS - 1);
}

static int wrapper_known(uintptr_t site)
{
	for (unsigned i = 0, at = wrapper_home(site); i < WRAPPER_PROBES;
	     i++, at = (at + 1) & (WRAPPERS - 1)) {
		uintptr_t w = LOAD(&wrappers[at]);
		if (w == site)
			return 1;
		if (!w)
			return 0;
	}
	return 0;
}

static void wrapper_note(uintptr_t site)
{
	for (unsigned i = 0, at = wrapper_home(site); i < WRAPPER_PROBES;
	     i++, at = (at + 1) & (WRAPPERS - 1)) {
		uintptr_t w = 0;
		if (__atomic_compare_exchange_n(&wrappers[at], &w, site, 0, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED) ||
		    w == site)
			return;
	}
}

/* Where two captures at one site part: 0 if their first MS_SITE_DEPTH
 * frames agree (a stack that ends counts as a frame 0), else the index of
 * the first frame that differs (1: the site's caller). */
static unsigned parting(ms_stack_id a, ms_stack_id b)
{
	const uintptr_t *fa, *fb;
	int na = ms_depot_get(a, &fa), nb = ms_depot_get(b, &fb);
	for (int i = 1; i < MS_SITE_DEPTH; i++) {
		uintptr_t x = i < na ? fa[i] : 0, y = i < nb ? fb[i] : 0;
		if (x != y)
			return (unsigned)i;
		if (!x)
			break;
	}
	return 0;
}

/* A failed capture's stand-in: the call site alone (guarded: the depot's
 * lock is one a signal handler's mutex call must not wait for). */
static ms_stack_id site_alone(uintptr_t caller)
{
	struct ms_thread *t = &ms_self;
	ms_guard_enter(t);
	ms_stack_id id = ms_depot_put(&caller, 1);
	ms_guard_leave(t);
	return id;
}

/* An entry of the site cache for caller: its first capture (or a failed
 * capture's stand-in) and whether it is shared. */
static void site_entry_new(struct ms_site_entry *e, uintptr_t caller, ms_stack_id id,
			   int failed)
{
	/* no caller matches while the entry changes; the caller goes in last */
	STORE(&e->caller, 0);
	/* a wrapper known from before its slot was taken: its mutexes'
	 * stacks stay their own */
	int varies = !failed && wrapper_known(caller);
	STORE(&e->captures, failed ? MS_SITE_FALLBACK : varies ? 1 | MS_SITE_VARIES : 1);
	STORE(&e->recheck, failed ? MS_SITE_RECHECK_LAST : varies ? ~0u : MS_SITE_RECHECK_FIRST);
	STORE(&e->id, id);
	/* a failed capture's stand-in is shared until a recheck captures */
	STORE(&e->check, (uint32_t)caller ^ id ^ (failed ? 0 : MS_SITE_CAPTURING));
	STORE(&e->caller, caller);
}

/* A capture at a call site: the first of a site (or of one that took
 * another's slot) is the one its mutexes will share; a later one from
 * another caller of the site's function marks the site as a wrapper
 * (site.h). */
ms_stack_id ms_site_capture(uintptr_t caller)
{
	ms_stack_id id = ms_stack_here();
	int failed = !id;
	if (failed) /* no unwinder, a fork under way, the depot full */
		id = site_alone(caller);
	struct ms_site_entry *e = &ms_site_cache[ms_site_slot(caller)];
	uint32_t first = LOAD(&e->id), n = LOAD(&e->captures);
	int mine = LOAD(&e->caller) == caller &&
		   ((LOAD(&e->check) ^ (uint32_t)caller ^ first) & ~MS_SITE_CAPTURING) == 0;
	if (!mine || (!failed && (n & MS_SITE_FALLBACK))) {
		site_entry_new(e, caller, id, failed);
		return id;
	}
	if (failed)
		return id; /* says nothing of the site */
	/* first is a stack of the depot, which never changes: compared with
	 * it, this capture says something of this site even if another site
	 * took the entry meanwhile (its caller and id are read again below) */
	unsigned part = parting(id, first);
	if (part == 1) {
		/* kept for good: only if the entry is still this site's */
		if (!(n & MS_SITE_VARIES) && LOAD(&e->caller) == caller &&
		    LOAD(&e->id) == first)
			wrapper_note(caller);
		n |= MS_SITE_VARIES;
	} else if (part)
		n |= MS_SITE_DEEP;
	uint32_t made = n & ~(MS_SITE_VARIES | MS_SITE_DEEP);
	if (made < MS_SITE_OWN)
		n++, made++;
	STORE(&e->captures, n);
	int shared;
	if (n & (MS_SITE_VARIES | MS_SITE_DEEP)) { /* its stacks given, it rests */
		shared = made >= MS_SITE_OWN;
		STORE(&e->recheck, ~0u);
	} else if ((shared = made >= MS_SITE_PROBE)) { /* agreed again */
		uint32_t mask = made == MS_SITE_PROBE ? MS_SITE_RECHECK_FIRST
						      : LOAD(&e->recheck) * 2 + 1;
		STORE(&e->recheck, mask < MS_SITE_RECHECK_LAST ? mask : MS_SITE_RECHECK_LAST);
	}
	STORE(&e->check, (uint32_t)caller ^ first ^ (shared ? 0 : MS_SITE_CAPTURING));
	return id;
}

/* The call site alone, as a stack of one frame.  Not the stack cached for
 * it: that was captured at the site's first lock, maybe of another mutex
 * from another caller (a MISUSE in from_gamma() read from_delta()). */
ms_stack_id ms_site_stack_known(uintptr_t caller)
{
	return ms_depot_put(&caller, 1);
}

uintptr_t ms_site_beyond_wrapper(uintptr_t site, uint32_t id)
{
	const struct ms_site_entry *e = &ms_site_cache[ms_site_slot(site)];
	const uintptr_t *frames;
	int varies = (LOAD(&e->caller) == site && (LOAD(&e->captures) & MS_SITE_VARIES)) ||
		     wrapper_known(site);
	if (!id || (id & MS_SITE_SHARED) || !varies || ms_depot_get(id, &frames) < 2 ||
	    frames[0] != site)
		return site;
	return frames[1];
}

uint32_t ms_site_wrapped_first_stack(uint32_t r, uintptr_t caller)
{
	uintptr_t first = LOAD(&ms_rec(r)->first_caller);
	uint32_t id = LOAD(&ms_rec(r)->first_stack);
	return caller && first == caller && ms_site_beyond_wrapper(first, id) != first ? id : 0;
}
