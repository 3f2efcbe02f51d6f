/* site.h - init and first-lock stacks shared by the mutexes of one call
 * site, so that a million mutexes made at one line cost a few captures.
 *
 * A site is shared once MS_SITE_PROBE captures agree on the callers of its
 * function, MS_SITE_DEPTH - 1 of them; one whose caller differs is a
 * wrapper, and one whose callers differ further on (a chain of wrappers:
 * C++'s std::lock_guard, std::mutex::lock and __gthread_mutex_lock built
 * without optimisation) is deep; the first MS_SITE_OWN mutexes of either
 * get stacks of their own.  A shared site is captured
 * again for one life in 16 ... 1024 (by a hash of the birth, which no loop
 * makes periodic); a failed capture counts for nothing.  The rules as a
 * user sees them: doc/report.md, "Call stacks".  The lookup is inline, the
 * capture not.  `check` is caller ^ id (^ MS_SITE_CAPTURING while captures
 * go on): writers may race, and it ties an entry's caller to its id. */
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
#define MS_SITE_DEPTH 6      /* frames compared: the site's and 5 callers */
#define MS_SITE_VARIES 0x80000000u   /* in captures: a wrapper */
#define MS_SITE_DEEP 0x20000000u     /* in captures: callers differ further on */
#define MS_SITE_FALLBACK 0x40000000u /* in captures: id is a failed capture's */
#define MS_SITE_CAPTURING 0x80000000u /* in check: not shared yet */
struct ms_site_entry {
	uintptr_t caller;
	uint32_t id, check;
	uint32_t captures; /* agreeing or not, | MS_SITE_VARIES, _FALLBACK */
	uint32_t recheck;  /* a shared site captures for lives whose birth
			      hash has none of these bits */
} __attribute__((aligned(32))); /* 32 bytes: its index is a shift (24
				    cost each init and first lock 3-5
				    instructions more) */
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

/* The first-lock stack of record r's life if a hold taken at caller was
 * taken where that first lock was, in a wrapper of the program's, and the
 * stack goes past it; else 0.  The hold's own "taken at" is one frame,
 * the wrapper's, which says nothing of who locked the lock. */
uint32_t ms_site_wrapped_first_stack(uint32_t r, uintptr_t caller);


#endif
