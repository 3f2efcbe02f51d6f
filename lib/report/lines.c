/* lines.c - a report's lines read from the table, and their ranking;
 * see lines.h. */
#define _GNU_SOURCE
#include "report/lines.h"
#include "base/clock.h"
#include "base/internal.h"
#include "base/options.h"
#include "record/record.h"
#include "report/kinds.h"
#include "stacks/program_frame.h"
#include "stacks/site.h"
#include "stacks/symbols.h"

#include <stdio.h>
#include <string.h>

void ms_line_from_record(struct ms_line *l, uintptr_t key, uint32_t r)
{
	const struct ms_record *rec = ms_rec(r);
	memset(l, 0, sizeof *l);
	l->key = key;
	l->r = r;
	l->acquisitions = ms_rec_acquisitions(r);
	l->changes = ms_rec_owner_changes(r);
	l->first_caller = LOAD(&rec->first_caller);
	uint32_t flags = LOAD(&rec->flags);
	l->timed = (flags & MS_F_TIMED) != 0;
	l->classes = 1u << ms_lock_class(flags);
	if (ms_lock_class(flags) == MS_CLASS_RWLOCK) {
		/* no slot: none was needed (no write, no wait: every
		 * acquisition a read), or none was left */
		static const struct ms_read_stats none;
		const struct ms_read_stats *rd = ms_reads_peek(r);
		ms_reads_line(&l->rd, rd ? rd : &none, l->acquisitions);
		l->reads_unknown = !rd && (flags & MS_F_READS_SPENT);
	}
	if (!(flags & MS_F_COLD))
		return;
	const struct ms_cold *c = &ms_table.cold[r];
	l->contended = LOAD(&c->contended);
	/* Wait times include waits that timed out. */
	l->wait_total = ms_ticks_to_ns(LOAD(&c->wait_total) +
				       LOAD(&c->timeout_wait_total));
	uint64_t wmax = LOAD(&c->wait_max), tmax = LOAD(&c->timeout_wait_max);
	l->wait_max = ms_ticks_to_ns(wmax > tmax ? wmax : tmax);
	l->hold_total = ms_ticks_to_ns(LOAD(&c->hold_total));
	l->hold_max = ms_ticks_to_ns(LOAD(&c->hold_max));
	l->holds = LOAD(&c->holds);
	l->trylock_ok = LOAD(&c->trylock_ok);
	l->trylock_busy = LOAD(&c->trylock_busy);
	l->timeouts = LOAD(&c->timeouts);
	l->timeout_waits = LOAD(&c->timeout_waits);
	l->waiters_max = LOAD(&c->waiters_max);
	l->waiting_now = (uint32_t)LOAD(&c->waiting);
	l->cond_waits = LOAD(&c->cond_waits);
	for (int i = 0; i < MS_E_COUNT; i++)
		l->errors[i] = LOAD(&c->errors[i]);
	for (int i = 0; i < MS_M_COUNT; i++)
		l->misuse[i] = LOAD(&c->misuse[i]);
	l->name = LOAD(&c->name);
}

void ms_line_from_site(struct ms_line *l, const struct ms_site *s, uint32_t i)
{
	memset(l, 0, sizeof *l);
	l->key = s->site;
	l->ended = 1;
	l->site = &ms_table.sites[i];
	l->name = s->name;
	l->wrapped = s->wrapped != 0;
	l->mutexes = s->mutexes;
	l->acquisitions = s->acquisitions;
	l->contended = s->contended;
	l->changes = s->owner_changes;
	l->wait_total = ms_ticks_to_ns(s->wait_total);
	l->wait_max = ms_ticks_to_ns(s->wait_max);
	l->hold_total = ms_ticks_to_ns(s->hold_total);
	l->hold_max = ms_ticks_to_ns(s->hold_max);
	l->holds = s->holds;
	l->trylock_ok = s->trylock_ok;
	l->trylock_busy = s->trylock_busy;
	l->timeouts = s->timeouts;
	l->timeout_waits = s->timeout_waits;
	l->cond_waits = s->cond_waits;
	l->waiters_max = s->waiters_max;
	memcpy(l->errors, s->errors, sizeof l->errors);
	memcpy(l->misuse, s->misuse, sizeof l->misuse);
	l->first_caller = s->site;
	l->classes = s->classes ? s->classes : 1u << MS_CLASS_MUTEX;
	l->rd = s->rd;
}

static uint64_t sort_key(const struct ms_line *l)
{
	switch (ms_opt.sort) {
	case MS_SORT_WAIT_MAX: return l->wait_max;
	case MS_SORT_CONTENDED: return l->contended;
	case MS_SORT_ACQUIRED: return l->acquisitions;
	case MS_SORT_HOLD: return l->holds ? l->hold_total / l->holds : 0;
	case MS_SORT_HOLD_MAX: return l->hold_max;
	case MS_SORT_CHANGES: return l->changes;
	default: return l->wait_total;
	}
}

int ms_line_before(const struct ms_line *a, const struct ms_line *b)
{
	uint64_t ka = sort_key(a), kb = sort_key(b);
	if (ka != kb)
		return ka > kb;
	/* then the contention that waited no time: busy tries (a trylock
	 * spin loop failed a million times ranked below every lock that was
	 * only acquired more, at a wait total of 0 ns) */
	uint64_t ca = a->contended + a->trylock_busy, cb = b->contended + b->trylock_busy;
	if (ca != cb)
		return ca > cb;
	if (a->acquisitions != b->acquisitions)
		return a->acquisitions > b->acquisitions;
	return a->key < b->key;
}

uintptr_t ms_line_site(const struct ms_line *l)
{
	if (!l->r)
		return l->first_caller;
	uint32_t stack = LOAD(&ms_rec(l->r)->first_stack);
	/* past a wrapper, and past a system header's lock code
	 * (std::lock_guard built with -O0) */
	return ms_program_frame(ms_site_beyond_wrapper(l->first_caller, stack), stack);
}

const char *ms_site_name(uintptr_t site, char *out, size_t cap, int narrow)
{
	if (site != MS_SITE_OTHERS)
		return narrow ? ms_symbolize_short(site, out, cap) : ms_symbolize(site, out, cap);
	(void)snprintf(out, cap, "%s", MS_SITE_OTHERS_TEXT);
	return out;
}

uint64_t ms_site_others_ended(void)
{
	if (__atomic_load_n(&ms_table.nsites, __ATOMIC_ACQUIRE) != MS_SITE_LINES)
		return 0;
	struct ms_site sv;
	ms_table_site(MS_MAX_SITES, &sv);
	return sv.mutexes;
}

/* Lines are elements of `size` bytes that begin with a struct ms_line
 * (the interval files' carry more). */
#define LINE_MAX_BYTES 8192
#define AT(lines, i) ((unsigned char *)(lines) + (i) * size)
#define LINE(lines, i) ((const struct ms_line *)AT(lines, i))

static void line_swap(void *a, void *b, size_t size)
{
	unsigned char tmp[LINE_MAX_BYTES];
	memcpy(tmp, a, size);
	memcpy(a, b, size);
	memcpy(b, tmp, size);
}

/* Moves lines[i] down the first n lines until no child ranks below it. */
static void heap_down(void *lines, size_t size, size_t n, size_t i)
{
	for (;;) {
		size_t low = i, c = 2 * i + 1;
		if (c < n && ms_line_before(LINE(lines, low), LINE(lines, c)))
			low = c;
		if (c + 1 < n && ms_line_before(LINE(lines, low), LINE(lines, c + 1)))
			low = c + 1;
		if (low == i)
			return;
		line_swap(AT(lines, i), AT(lines, low), size);
		i = low;
	}
}

void ms_lines_offer(void *lines, size_t size, size_t *n, size_t cap, const void *l)
{
	if (!cap || size > LINE_MAX_BYTES)
		return;
	if (*n == cap) {
		if (!ms_line_before(l, LINE(lines, 0)))
			return; /* it ranks below every line kept */
		memcpy(AT(lines, 0), l, size);
		heap_down(lines, size, *n, 0);
		return;
	}
	size_t i = (*n)++;
	memcpy(AT(lines, i), l, size);
	while (i > 0 && ms_line_before(LINE(lines, (i - 1) / 2), LINE(lines, i))) {
		line_swap(AT(lines, (i - 1) / 2), AT(lines, i), size);
		i = (i - 1) / 2;
	}
}

/* The heap's lowest line goes to the end, then the next lowest before it:
 * best first. */
void ms_lines_sort(void *lines, size_t size, size_t n)
{
	for (; n > 1; n--) {
		line_swap(AT(lines, 0), AT(lines, n - 1), size);
		heap_down(lines, size, n - 1, 0);
	}
}
