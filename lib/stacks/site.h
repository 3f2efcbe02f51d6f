/* site.h - call-site stacks shared by the mutexes of one call site.
 *
 * Init and first-lock stacks are shared by the mutexes of one call site
 * once its first captures agree (a program creating a million mutexes at
 * one line pays for a few captures, not a million).  Captures agree when they have the same
 * caller of the site's function (their second frame; deeper frames may
 * differ: a worker's function reached from main and from a thread is one
 * site).  A site whose captures name other callers is a wrapper --
 * uv_mutex_lock, a class's lock(), a C program's lock_or_die() -- called
 * from many places: each of its first MS_SITE_OWN mutexes gets a stack of
 * its own, so that the report says which caller each one had.  A site
 * taken as shared is captured again for one mutex life in 16, then 32,
 * 64 ... 1024 as those captures agree (picked by a hash of the life's
 * birth, which no loop makes periodic), so a wrapper whose first callers
 * happened to be one place is found later.  A capture that failed (a
 * fork under way, the depot full, no unwinder) says nothing of the site:
 * it is not counted, and an entry made from one is replaced by the next
 * good one.
 *
 * The lookup is inline, since every init and every first lock makes it;
 * the capture is not.  `check` is caller ^ id while the site's stack is
 * shared, and that ^ MS_SITE_CAPTURING while its captures go on (ids stay
 * below that bit, so no two entries' values alias); writers may race, and
 * `check` also ties an entry's caller to its id, so a reader never takes
 * one caller's id for another's. */
#ifndef MUTEXSTAT_SITE_H
#define MUTEXSTAT_SITE_H

#include "base/internal.h"
#include "core/table.h"

#include <stdint.h>

#define MS_SITE_CACHE 1024
#define MS_SITE_PROBE 4      /* agreeing captures before a site is shared */
#define MS_SITE_OWN 4096     /* stacks of their own at a site that varies */
#define MS_SITE_RECHECK_FIRST 15u   /* masks of the birth hash: 1 in 16 */
#define MS_SITE_RECHECK_LAST 1023u  /* ... to 1 in 1024 */
#define MS_SITE_VARIES 0x80000000u   /* in captures: a wrapper */
#define MS_SITE_FALLBACK 0x40000000u /* in captures: id is a failed capture's */
#define MS_SITE_CAPTURING 0x80000000u /* in check: not shared yet */
struct ms_site_entry {
	uintptr_t caller;
	uint32_t id, check;
	uint32_t captures; /* agreeing or not, | MS_SITE_VARIES, _FALLBACK */
	uint32_t recheck;  /* a shared site captures for lives whose birth
			      hash has none of these bits */
	uintptr_t second;  /* the first capture's second frame (0: none) */
};
extern struct ms_site_entry ms_site_cache[MS_SITE_CACHE];

static inline unsigned ms_site_slot(uintptr_t caller)
{
	return (unsigned)(caller >> 2) & (MS_SITE_CACHE - 1);
}

/* The stack to share at this call site for the mutex life born at
 * `birth` (ms_record), 0 if this life wants a capture. */
MS_HOT uint32_t ms_site_shared(uintptr_t caller, uint64_t birth)
{
	const struct ms_site_entry *e = &ms_site_cache[ms_site_slot(caller)];
	uint32_t id = LOAD(&e->id);
	if (LOAD(&e->caller) == caller && LOAD(&e->check) == ((uint32_t)caller ^ id) &&
	    ((uint32_t)((birth * 0x9e3779b97f4a7c15ull) >> 32) & LOAD(&e->recheck)))
		return id;
	return 0;
}

uint32_t ms_site_capture(uintptr_t caller);

/* The stack at this call site for the life born at `birth`: a capture's
 * id, or the site's shared one | MS_SITE_SHARED. */
MS_HOT uint32_t ms_site_stack(uintptr_t caller, uint64_t birth)
{
	uint32_t id = ms_site_shared(caller, birth);
	return likely(id) ? id | MS_SITE_SHARED : ms_site_capture(caller);
}

/* Just the call site, as a one-frame stack (never captures: report time,
 * and a self-deadlock's "taken at"). */
uint32_t ms_site_stack_known(uintptr_t caller);

/* Where a life first locked at `site` with first-lock stack `id` is
 * shown and summed once it ends: the site, or, for a wrapper's (a site
 * whose captures differed, as far as its cache entry still says) life
 * with a stack of its own, the wrapper's caller. */
uintptr_t ms_site_beyond_wrapper(uintptr_t site, uint32_t id);


#endif
