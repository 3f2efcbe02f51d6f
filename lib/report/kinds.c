/* kinds.c - what each kind of lock is called in the report, its modes, the
 * variable a lock is, and an rwlock's reads apart from its writes: for the
 * text report, its findings and wait-for sections, and the machine-read
 * formats alike. */
#define _GNU_SOURCE
#include "report/kinds.h"
#include "base/fmt.h"
#include "base/internal.h"
#include "core/table.h"
#include "glibc/loader_lock.h"
#include "report/report_hist.h"
#include "stacks/symbols.h"

#include <string.h>

/* see kinds.h */
void ms_reads_line(struct ms_site_reads *o, const struct ms_read_stats *c,
		     uint64_t acquisitions)
{
	uint64_t writes = LOAD(&c->writes);
	memset(o, 0, sizeof *o);
	o->acquisitions = acquisitions > writes ? acquisitions - writes : 0;
	o->contended = LOAD(&c->contended);
	/* the waits that timed out too, as the lock's total has them
	 * (lines.c); the maximum is the histogram's, of waits that got it */
	o->wait_total = LOAD(&c->wait_total) + LOAD(&c->timeout_wait_total);
	o->wait_max = LOAD(&c->wait_max);
	o->holds = LOAD(&c->holds);
	o->hold_total = LOAD(&c->hold_total);
	o->hold_max = LOAD(&c->hold_max);
	o->trylock_ok = LOAD(&c->trylock_ok);
	o->trylock_busy = LOAD(&c->trylock_busy);
	o->timeouts = LOAD(&c->timeouts);
	o->writes_behind_readers = LOAD(&c->writes_behind_readers);
	o->writes_behind_readers_total = LOAD(&c->writes_behind_readers_total);
	/* one reader at a time is not kept (other_locks.c): at least 1 */
	o->readers_max = LOAD(&c->readers_max);
	if (!o->readers_max && o->acquisitions)
		o->readers_max = 1;
	ms_hist_widen(o->hist, c->hist, MS_HIST_BUCKETS);
	ms_hist_widen(o->hold_hist, c->hold_hist, MS_HIST_BUCKETS);
}

void ms_rw_reads_of(struct ms_site_reads *out, uint32_t r)
{
	static const struct ms_read_stats none; /* no slot: every acquisition a read */
	const struct ms_read_stats *rd = ms_reads_peek(r);
	ms_reads_line(out, rd ? rd : &none, ms_rec_acquisitions(r));
}

uint64_t ms_rw_reads(uint32_t r)
{
	const struct ms_read_stats *rd = ms_reads_peek(r);
	uint64_t all = ms_rec_acquisitions(r), writes = rd ? LOAD(&rd->writes) : 0;
	return all > writes ? all - writes : 0;
}

const char *ms_lock_noun(uint32_t flags)
{
	static const char *const noun[MS_CLASS_COUNT + 1] = { "mutex", "rwlock", "spin lock",
							      "lock" };
	return noun[ms_lock_class(flags)];
}

const char *ms_edge_mode_text(uint32_t modes, int taken, uint32_t flags)
{
	if (ms_lock_class(flags) != MS_CLASS_RWLOCK)
		return "";
	/* bit 2 * (held for read) + (taken for read) */
	uint32_t read = taken ? modes & 0xa : modes & 0xc;
	uint32_t write = taken ? modes & 0x5 : modes & 0x3;
	return read && write ? " (read or write)" : read ? " (read)" : " (write)";
}

/* A read-write lock's kind, as pthread_rwlockattr_setkind_np names it. */
static const char *rwlock_kind_name(char *out, size_t cap, uint32_t flags)
{
	static const char *const base[] = {
		"reader-preferring", "writer-preferring (glibc: reader-preferring)",
		"writer-preferring, nonrecursive", "kind 3",
	};
	uint32_t kind = flags >> MS_F_KIND_SHIFT;
	struct ms_fmt f;
	ms_fmt_init(&f, out, cap, -1);
	ms_fmt(&f, "%s", base[kind & 3]);
	if (kind & MS_KIND_PSHARED)
		ms_fmt(&f, " pshared");
	if (flags & MS_F_STATIC)
		ms_fmt(&f, ", no init seen");
	return ms_fmt_str(&f);
}

const char *ms_kind_name(char *out, size_t cap, uint32_t flags)
{
	static const char *const base[] = { "normal", "recursive", "errorcheck",
					    "adaptive" };
	uint32_t kind = (flags & ~MS_F_CLASS) >> MS_F_KIND_SHIFT;
	if (ms_lock_class(flags) == MS_CLASS_RWLOCK)
		return rwlock_kind_name(out, cap, flags);
	struct ms_fmt f;
	ms_fmt_init(&f, out, cap, -1);
	if (ms_lock_class(flags) == MS_CLASS_SPIN) {
		ms_fmt(&f, "spin%s%s", kind & MS_KIND_PSHARED ? " pshared" : "",
		       flags & MS_F_STATIC ? ", no init seen" : "");
		return ms_fmt_str(&f);
	}
	if ((kind & MS_KIND_DESTROYED) == MS_KIND_DESTROYED) {
		/* glibc's __kind -1: destroyed when first seen (a lock or a
		 * condition wait after destroy), no kind to tell -- nor "no
		 * init seen": the life the destroy ended may have had one */
		ms_fmt(&f, "destroyed");
		return ms_fmt_str(&f);
	}
	ms_fmt(&f, "%s", base[kind & MS_KIND_MASK]);
	if (kind & MS_KIND_ROBUST)
		ms_fmt(&f, " robust");
	if (kind & MS_KIND_PI)
		ms_fmt(&f, " prio-inherit");
	if (kind & MS_KIND_PP)
		ms_fmt(&f, " prio-protect");
	/* glibc marks every robust mutex shared (its owner may be in another
	 * process): only a kind without robust tells it was asked for */
	if ((kind & MS_KIND_PSHARED) && !(kind & MS_KIND_ROBUST))
		ms_fmt(&f, " pshared");
	if (flags & MS_F_STATIC)
		ms_fmt(&f, ", no init seen");
	return ms_fmt_str(&f);
}

uint64_t ms_readers_max(const struct ms_site_reads *rd)
{
	return rd->readers_max ? rd->readers_max : rd->acquisitions != 0;
}

/* Where sym's offset ("+0x68", which ms_symbolize_lock puts last) begins;
 * its end if it has none. */
static size_t offset_at(const char *sym)
{
	const char *plus = strrchr(sym, '+');
	size_t n = strlen(sym);
	if (!plus || strncmp(plus, "+0x", 3) != 0 || !plus[3] ||
	    strspn(plus + 3, "0123456789abcdef") != strlen(plus + 3))
		return n;
	return (size_t)(plus - sym);
}

/* sym in at most cols bytes: cut in the middle of its name, never in its
 * offset nor inside a UTF-8 character.  What tells two variables apart
 * is at both ends -- an array's name and its element's offset, a C++
 * template's last arguments and its member ("...long>::mu") -- where a cut
 * at the end made eight elements of one array, or two instantiations of
 * one template, read alike. */
static const char *cut_middle(char *out, size_t cap, const char *sym, size_t cols)
{
	size_t n = strlen(sym), name = offset_at(sym);
	if (n <= cols || cols < n - name + 3 + 8) /* no room for a name's ends */
		return ms_name_cut(out, cap, sym, cols);
	size_t room = cols - (n - name) - 3, head = room * 2 / 5, tail = name - (room - head);
	while (tail < name && ((unsigned char)sym[tail] & 0xc0) == 0x80)
		tail++;
	struct ms_fmt f;
	ms_fmt_init(&f, out, cap, -1);
	ms_fmt_quoted(&f, sym, head); /* its head and "...", as a name is cut */
	ms_fmt_quoted(&f, sym + tail, n - tail);
	return ms_fmt_str(&f);
}

/* see kinds.h */
int ms_lock_symbol(uintptr_t key, char *out, size_t cap)
{
	uint32_t r = ms_table_find(key);
	unsigned long long loads = 0; /* unknown: a lock no longer tracked */
	if (r != MS_REC_NONE && r != MS_REC_UNTRACKED)
		loads = ms_loader_adds_of(ms_table.load_counts ? LOAD(&ms_table.load_counts[r]) : 0);
	return ms_symbolize_lock(key, loads, out, cap);
}

const char *ms_lock_variable(char *out, size_t cap, uintptr_t key, size_t cols)
{
	char sym[MS_VARIABLE_CAP];
	if (!ms_lock_symbol(key, sym, sizeof sym))
		sym[0] = 0;
	return cut_middle(out, cap, sym, cols);
}

const char *ms_lock_variable_tag(char *out, size_t cap, uintptr_t key, size_t cols)
{
	char var[200];
	struct ms_fmt f;
	ms_fmt_init(&f, out, cap, -1);
	if (ms_lock_variable(var, sizeof var, key, cols)[0])
		ms_fmt(&f, " <%s>", var);
	return ms_fmt_str(&f);
}

void ms_fmt_lock_variable(struct ms_fmt *f, uintptr_t key, size_t cols)
{
	char tag[208];
	ms_fmt(f, "%s", ms_lock_variable_tag(tag, sizeof tag, key, cols));
}

/* The least a cut variable or name keeps of its room ("abcd...wxyz"):
 * less says nothing.  A line with less room than that goes past 120. */
#define NAME_LEAST 12

/* The columns of two texts, *a and *b, made to fit room together: the
 * longer gives way first, neither below NAME_LEAST. */
static void share_room(size_t *a, size_t *b, size_t room)
{
	for (;;) {
		size_t *longer = *a >= *b ? a : b, *other = longer == a ? b : a;
		if (*a + *b <= room)
			return;
		if (*longer > NAME_LEAST)
			--*longer;
		else if (*other > NAME_LEAST)
			--*other;
		else
			return;
	}
}

/* The module the lock at key lies in, "" if none (the heap, a stack). */
static const char *lock_module(struct ms_frame *fr, uintptr_t key)
{
	if (ms_symbolize_function(key, 0, fr) != 0)
		fr->module[0] = 0;
	return fr->module;
}

const char *ms_lock_names(char *out, size_t cap, uintptr_t key, const char *name,
			  const struct ms_names_room *r)
{
	char sym[MS_VARIABLE_CAP], var[MS_VARIABLE_CAP];
	if (!ms_lock_symbol(key, sym, sizeof sym))
		sym[0] = 0;
	size_t v = sym[0] ? strlen(sym) : 0, n = name ? strlen(name) : 0;
	if (v > r->var_cols)
		v = r->var_cols;
	if (n > r->name_cols)
		n = r->name_cols;
	struct ms_frame fr;
	const char *module = sym[0] && r->module ? lock_module(&fr, key) : "";
	size_t besides = (v ? 3 : 0) + (name ? 3 : 0); /* " <>", " \"\"" */
	if (module[0])
		besides += 3 + strlen(module); /* " ()" */
	share_room(&v, &n, r->room > besides ? r->room - besides : 0);
	struct ms_fmt f;
	ms_fmt_init(&f, out, cap, -1);
	if (sym[0])
		ms_fmt(&f, " <%s>", cut_middle(var, sizeof var, sym, v));
	if (module[0])
		ms_fmt(&f, " (%s)", module);
	if (name) {
		ms_fmt(&f, " \"");
		ms_fmt_name(&f, name, n);
		ms_fmt(&f, "\"");
	}
	return ms_fmt_str(&f);
}

size_t ms_line_room(size_t used)
{
	return used < 120 ? 120 - used : 0;
}

const char *ms_cond_wait_objects(char *out, size_t cap, uintptr_t cond, uintptr_t mutex,
				 const char *mname, size_t room)
{
	char cvar[160], names[160];
	struct ms_fmt f;
	ms_fmt_init(&f, out, cap, -1);
	ms_fmt(&f, "condition %p (mutex %p)", (void *)cond, (void *)mutex);
	size_t left = room > strlen(out) ? room - strlen(out) : 0;
	/* each may take what the other leaves of its half */
	struct ms_names_room m = { 40, 30, left / 2, 0 }, c = { 40, 0, 0, 0 };
	ms_lock_names(names, sizeof names, mutex, mname, &m);
	c.room = left > strlen(names) ? left - strlen(names) : 0;
	ms_lock_names(cvar, sizeof cvar, cond, NULL, &c);
	m.room = left > strlen(cvar) ? left - strlen(cvar) : 0;
	ms_fmt_init(&f, out, cap, -1);
	ms_fmt(&f, "condition %p%s (mutex %p%s)", (void *)cond, cvar, (void *)mutex,
	       ms_lock_names(names, sizeof names, mutex, mname, &m));
	return ms_fmt_str(&f);
}

void ms_locks_alike(unsigned char *alike, const uintptr_t *keys, size_t n, size_t cols)
{
	char var[MS_ALIKE_MAX][64];
	struct ms_frame fr[MS_ALIKE_MAX];
	if (n > MS_ALIKE_MAX)
		n = MS_ALIKE_MAX;
	for (size_t i = 0; i < n; i++) {
		alike[i] = 0;
		ms_lock_variable(var[i], sizeof var[i], keys[i], cols);
		fr[i].module[0] = 0;
		if (var[i][0])
			lock_module(&fr[i], keys[i]);
	}
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (var[i][0] && !strcmp(var[i], var[j]) &&
			    strcmp(fr[i].module, fr[j].module) != 0)
				alike[i] = alike[j] = 1;
}
