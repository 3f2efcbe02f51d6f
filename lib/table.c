/* table.c - creating, adding, removing and folding records; see table.h. */
#include "table.h"
#include "fmt.h"
#include "fork.h"
#include "thread.h"

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>

/* What records[] is until the table is mapped (or if it cannot be): the
 * empty cache entry's record, so the lock path never needs to ask. */
static struct ms_record boot_records[1] = { { .key = MS_KEY_NO_MUTEX } };

struct ms_table ms_table = { .records = boot_records };

/* ---- the insert lock: ours, spinning, never a pthread mutex ---------- */

void ms_table_lock(void)
{
	for (unsigned spins = 0;
	     __atomic_exchange_n(&ms_table.lock, 1, __ATOMIC_ACQUIRE); spins++) {
		if (spins < 100)
			__builtin_ia32_pause();
		else
			sched_yield(); /* the holder was preempted */
	}
}

/* The insert lock for an add or a removal: 0 if a fork is under way in
 * another thread and this one, holding mutexes, must not wait (fork.h),
 * or if this thread is inside an update already -- a signal handler that
 * interrupted one, and would otherwise spin on a lock its own thread
 * holds.  Either way the call is left unrecorded.
 *
 * Marking the thread costs two stores; the alternative, the guard that
 * library code takes (thread.h), empties the thread's lookup cache and
 * costs some forty instructions at every init and destroy. */
static int lock_for_update(void)
{
	struct ms_thread *self = &ms_self;
	if (self->in_update) {
		ms_fork_skipped_call();
		return 0;
	}
	self->in_update = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (ms_fork_spin_lock(&ms_table.lock))
		return 1;
	self->in_update = 0;
	return 0;
}

static void unlock_after_update(void)
{
	ms_table_unlock();
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	ms_self.in_update = 0;
}

/* Only the insert lock's holder changes gen, so a plain store does
 * (readers load it with acquire). */
static void bump_gen(struct ms_table *t)
{
	__atomic_store_n(&t->gen, t->gen + 1, __ATOMIC_RELEASE);
}

void ms_table_unlock(void)
{
	__atomic_store_n(&ms_table.lock, 0, __ATOMIC_RELEASE);
}

void ms_table_after_fork_child(void)
{
	ms_table.lock = 0;
}

/* ---- set-up ---------------------------------------------------------- */

static void *map(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	return p;
}

/* Entries in the history: whole groups (a history shorter than a group
 * still takes a group's line per record). */
static size_t history_entries(size_t history_len, size_t cap)
{
	size_t groups = (history_len + MS_HISTORY_GROUP - 1) / MS_HISTORY_GROUP;
	return groups * MS_HISTORY_GROUP * (cap + 1);
}

static void unmap_all(struct ms_table *t, size_t cap, size_t hist)
{
	if (t->slots)
		munmap(t->slots, 2 * cap * sizeof *t->slots);
	if (t->cold)
		munmap(t->cold, (cap + 1) * sizeof *t->cold);
	if (t->history)
		munmap(t->history, history_entries(hist, cap) * sizeof *t->history);
	if (t->history_ticks)
		munmap(t->history_ticks,
		       history_entries(hist, cap) * sizeof *t->history_ticks);
	if (t->init_stacks)
		munmap(t->init_stacks, (cap + 1) * sizeof *t->init_stacks);
	if (t->free_next)
		munmap(t->free_next, (cap + 1) * sizeof *t->free_next);
	t->slots = NULL;
	t->cold = NULL;
	t->history = NULL;
	t->history_ticks = NULL;
	t->init_stacks = NULL;
	t->free_next = NULL;
}

/* Map the table for `capacity` mutexes (a power of two); if the address
 * space is limited, halve until it fits.  Returns the capacity obtained,
 * 0 if nothing could be mapped. */
int ms_table_init(uint32_t capacity, uint32_t history_len)
{
	struct ms_table *t = &ms_table;
	if (!t->sites)
		t->sites = map(MS_MAX_SITES * sizeof *t->sites);
	for (size_t cap = capacity; cap >= 64 && t->sites; cap /= 2) {
		/* records[] is published last: the lock path reads it
		 * without asking whether the table is ready */
		struct ms_record *records = map((cap + 1) * sizeof *records);
		t->slots = map(2 * cap * sizeof *t->slots);
		t->cold = map((cap + 1) * sizeof *t->cold);
		t->history = map(history_entries(history_len, cap) * sizeof *t->history);
		t->history_ticks =
			map(history_entries(history_len, cap) * sizeof *t->history_ticks);
		t->init_stacks = map((cap + 1) * sizeof *t->init_stacks);
		t->free_next = map((cap + 1) * sizeof *t->free_next);
		if (t->slots && records && t->cold && t->history &&
		    t->history_ticks && t->init_stacks && t->free_next) {
			records[0].key = MS_KEY_NO_MUTEX;
			__atomic_store_n(&t->records, records, __ATOMIC_RELEASE);
			t->capacity = (uint32_t)cap;
			t->index_mask = 2 * cap - 1;
			t->index_shift = (unsigned)__builtin_ctzll(2 * cap);
			t->history_len = history_len;
			t->history_mask = history_len - 1;
			for (size_t k = 0; k < history_len; k++)
				t->history_row[k] =
					t->history +
					k / MS_HISTORY_GROUP * (cap + 1) * MS_HISTORY_GROUP +
					k % MS_HISTORY_GROUP;
			t->next_unused = 1;
			__atomic_store_n(&t->ready, 1, __ATOMIC_RELEASE);
			return (int)cap;
		}
		if (records)
			munmap(records, (cap + 1) * sizeof *records);
		unmap_all(t, cap, history_len);
	}
	return 0;
}

/* ---- records --------------------------------------------------------- */

/* Records are handed out in order, so a program making many mutexes
 * touches them page after page: the next POPULATE_RECORDS are made
 * resident in one call rather than one page fault each, with the first
 * group of history positions (init, lock, unlock: every mutex uses it) and
 * their init stacks.  That is 132 KiB per 1024 records; later groups stay
 * untouched until used. */
#define POPULATE_RECORDS 1024
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

static void populate(void *p, size_t bytes)
{
	/* madvise wants a page boundary; the tail of the page before is
	 * resident already (it holds the records before these) */
	uintptr_t start = (uintptr_t)p & ~(uintptr_t)4095;
	(void)madvise((void *)start, bytes + ((uintptr_t)p - start),
		      MADV_POPULATE_WRITE); /* older kernels: EINVAL */
}

static void populate_chunk(struct ms_table *t, uint32_t r)
{
	int saved = errno;
	uint32_t n = POPULATE_RECORDS;
	if (n > t->capacity + 1 - r)
		n = t->capacity + 1 - r;
	populate(&t->records[r], n * sizeof t->records[0]);
	populate(&t->init_stacks[r], n * sizeof t->init_stacks[0]);
	populate(ms_history_at(r, 0), (size_t)n * MS_HISTORY_GROUP * sizeof(struct ms_op));
	errno = saved;
}

/* A free record, *fresh if it was never used (still zero, and perhaps not
 * yet resident: better written before it is read, or the kernel maps it
 * twice, once to read and once to write). */
static uint32_t record_alloc(struct ms_table *t, int *fresh)
{
	uint32_t r = t->free_head;
	*fresh = 0;
	if (r && r <= t->capacity) {
		t->free_head = t->free_next[r];
		return r;
	}
	t->free_head = 0;
	*fresh = 1;
	if (t->next_unused > t->capacity)
		return MS_REC_UNTRACKED;
	r = t->next_unused++;
	if (r % POPULATE_RECORDS == 0)
		populate_chunk(t, r);
	return r;
}

static void record_free(struct ms_table *t, uint32_t r)
{
	STORE(&ms_rec(r)->key, 0);
	t->free_next[r] = t->free_head;
	t->free_head = r;
}

/* A new life: every number zero, the history older than `birth` stale.
 * The order keeps growing across lives so old entries stay older. */
static void record_begin(uint32_t r, uint64_t *clock, int fresh)
{
	struct ms_record *rec = ms_rec(r);
	uint64_t seq = fresh ? 0 : LOAD(&rec->seq);
	uint64_t birth = (*clock > seq ? *clock : seq) + 1;
	STORE(&rec->seq, birth);
	*clock = birth;
	STORE(&rec->acquisitions, 0);
	STORE(&rec->owner_changes, 0);
	STORE(&rec->birth, birth);
	STORE(&rec->first_caller, 0);
	STORE(&rec->first_stack, 0);
	STORE(&ms_table.init_stacks[r], 0);
	STORE(&rec->owner, 0);
	STORE(&rec->flags, 0);
	/* The history restarts at position 0, so a life touches only the
	 * positions it uses; older entries are told apart by `birth`. */
	STORE(&rec->ops, 0);
}

struct ms_cold *ms_cold_slow(uint32_t r)
{
	struct ms_record *rec = ms_rec(r);
	struct ms_cold *c = &ms_table.cold[r];
	uint32_t f = __atomic_load_n(&rec->flags, __ATOMIC_ACQUIRE);
	for (unsigned spins = 0;; spins++) {
		if (f & MS_F_COLD)
			return c;
		if (!(f & MS_F_COLD_BUSY) &&
		    __atomic_compare_exchange_n(&rec->flags, &f, f | MS_F_COLD_BUSY,
						0, __ATOMIC_ACQUIRE,
						__ATOMIC_ACQUIRE)) {
			/* guarded: a signal handler on this thread must not
			 * wait for the zeroing it interrupted */
			ms_guard_enter(&ms_self);
			memset(c, 0, sizeof *c);
			__atomic_fetch_or(&rec->flags, MS_F_COLD, __ATOMIC_RELEASE);
			ms_guard_leave(&ms_self);
			return c;
		}
		if (spins > 100)
			sched_yield();
		f = __atomic_load_n(&rec->flags, __ATOMIC_ACQUIRE);
	}
}

/* ---- folding a life into its site ------------------------------------ */

static struct ms_site *site_for(struct ms_table *t, uintptr_t site)
{
	for (uint32_t i = 0; i < t->nsites; i++)
		if (t->sites[i].site == site)
			return &t->sites[i];
	if (t->nsites < MS_MAX_SITES) {
		struct ms_site *s = &t->sites[t->nsites++];
		s->site = site;
		return s;
	}
	return &t->sites[MS_MAX_SITES - 1]; /* the rest share the last line */
}

static void fold(struct ms_table *t, uint32_t r)
{
	struct ms_record *rec = ms_rec(r);
	struct ms_site *s = site_for(t, LOAD(&rec->first_caller));
	s->mutexes++;
	s->acquisitions += LOAD(&rec->acquisitions);
	s->owner_changes += LOAD(&rec->owner_changes);
	if (!(LOAD(&rec->flags) & MS_F_COLD))
		return;
	const struct ms_cold *c = &t->cold[r];
	s->contended += LOAD(&c->contended);
	s->wait_total += LOAD(&c->wait_total) + LOAD(&c->timeout_wait_total);
	if (LOAD(&c->wait_max) > s->wait_max)
		s->wait_max = LOAD(&c->wait_max);
	if (LOAD(&c->timeout_wait_max) > s->wait_max)
		s->wait_max = LOAD(&c->timeout_wait_max);
	s->hold_total += LOAD(&c->hold_total);
	if (LOAD(&c->hold_max) > s->hold_max)
		s->hold_max = LOAD(&c->hold_max);
	s->holds += LOAD(&c->holds);
	s->trylock_ok += LOAD(&c->trylock_ok);
	s->trylock_busy += LOAD(&c->trylock_busy);
	s->timeouts += LOAD(&c->timeouts);
	if (LOAD(&c->waiters_max) > s->waiters_max)
		s->waiters_max = LOAD(&c->waiters_max);
	for (int i = 0; i < MS_E_COUNT; i++)
		s->errors[i] += LOAD(&c->errors[i]);
	for (int i = 0; i < MS_M_COUNT; i++)
		s->misuse[i] += LOAD(&c->misuse[i]);
	for (int i = 0; i < MS_HIST_BUCKETS; i++)
		s->hist[i] += LOAD(&c->hist[i]);
	for (int i = 0; i < MS_HIST_BUCKETS; i++)
		s->hold_hist[i] += LOAD(&c->hold_hist[i]);
}

/* ---- adding and removing addresses ----------------------------------- */

uint32_t ms_table_add(uintptr_t key, int birth, uint64_t *clock)
{
	struct ms_table *t = &ms_table;
	uint64_t i = ms_hash(key) & t->index_mask;
	int64_t free_at = -1;
	uint32_t r = MS_REC_UNTRACKED;

	if (!lock_for_update())
		return MS_REC_UNTRACKED; /* this call is not recorded */
	/* Written before it is read, for the same reason as a fresh record;
	 * nothing reads `pad`. */
	STORE(&t->slots[i].pad, 0);
	for (unsigned n = 0; n < MS_MAX_PROBE; n++, i = (i + 1) & t->index_mask) {
		uintptr_t k = t->slots[i].key;
		if (k == key) {
			r = t->slots[i].rec;
			if (birth && r != MS_REC_UNTRACKED) {
				/* init of a known address: the old life is over */
				fold(t, r);
				t->reinitialised++;
				record_begin(r, clock, 0);
				/* cached lock-order edges of the old life are stale */
				bump_gen(t);
			}
			goto out;
		}
		if (k == MS_KEY_TOMB && free_at < 0)
			free_at = (int64_t)i;
		if (k == MS_KEY_EMPTY) {
			if (free_at < 0)
				free_at = (int64_t)i;
			break;
		}
	}
	if (free_at < 0) {
		/* No room near this address's home: leave it untracked. */
		t->untracked_ops++;
		goto out;
	}
	int fresh;
	r = record_alloc(t, &fresh);
	if (r == MS_REC_UNTRACKED)
		t->untracked_mutexes++;
	else {
		record_begin(r, clock, fresh);
		t->live++;
	}
	/* Publish the record number before the key: a lookup that sees the
	 * key sees its record. */
	STORE(&t->slots[free_at].rec, r);
	if (r != MS_REC_UNTRACKED)
		__atomic_store_n(&ms_rec(r)->key, key, __ATOMIC_RELEASE);
	__atomic_store_n(&t->slots[free_at].key, key, __ATOMIC_RELEASE);
out:
	unlock_after_update();
	return r;
}

/* Empty slot i (the insert lock is held), then move later members of its
 * probe run back into the hole wherever their home allows (Knuth's
 * algorithm R for linear probing), so no empty slot ever separates a key
 * from its home and no tombstones pile up.  Lock-free readers may, for an
 * instant, see a moved key twice (same record: harmless) or miss it; a
 * miss only sends them to the insert path, which takes the lock and finds
 * the key.  A hole is marked MS_KEY_TOMB while it is being refilled, so
 * readers step over it. */
static void delete_at(struct ms_table *t, uint64_t i)
{
	const uint64_t mask = t->index_mask;
	__atomic_store_n(&t->slots[i].key, MS_KEY_TOMB, __ATOMIC_RELEASE);
	for (uint64_t j = (i + 1) & mask;; j = (j + 1) & mask) {
		uintptr_t k = t->slots[j].key;
		if (k == MS_KEY_EMPTY)
			break;
		uint64_t home = ms_hash(k) & mask;
		/* k may move to the hole only if its home is not within (i, j] */
		int stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
		if (stays)
			continue;
		STORE(&t->slots[i].rec, t->slots[j].rec);
		__atomic_store_n(&t->slots[i].key, k, __ATOMIC_RELEASE);
		__atomic_store_n(&t->slots[j].key, MS_KEY_TOMB, __ATOMIC_RELEASE);
		i = j;
	}
	__atomic_store_n(&t->slots[i].key, MS_KEY_EMPTY, __ATOMIC_RELEASE);
}

void ms_table_remove(uintptr_t key)
{
	struct ms_table *t = &ms_table;
	uint64_t i = ms_hash(key) & t->index_mask;

	if (!lock_for_update())
		return; /* the life goes on; an init at this address ends it */
	for (unsigned n = 0; n < MS_MAX_PROBE; n++, i = (i + 1) & t->index_mask) {
		uintptr_t k = t->slots[i].key;
		if (k == MS_KEY_EMPTY)
			break;
		if (k != key)
			continue;
		uint32_t r = t->slots[i].rec;
		if (r != MS_REC_UNTRACKED) {
			fold(t, r);
			record_free(t, r);
			t->live--;
		} else {
			t->untracked_mutexes--;
			t->untracked_ended++;
		}
		t->destroyed++;
		delete_at(t, i);
		/* lock-order edges threads cached for this life are stale */
		bump_gen(t);
		break;
	}
	unlock_after_update();
}

void ms_table_reset(void)
{
	struct ms_table *t = &ms_table;
	ms_table_lock();
	for (uint32_t r = 1; r < t->next_unused && r <= t->capacity; r++) {
		if (!LOAD(&t->records[r].key))
			continue;
		/* Numbers to zero; what the mutex is stays: its owner (a held
		 * mutex stays held), name, kind and first-lock site. */
		struct ms_record *rec = ms_rec(r);
		uint32_t owner = LOAD(&rec->owner), flags = LOAD(&rec->flags);
		uintptr_t first = LOAD(&rec->first_caller);
		uint32_t first_stack = LOAD(&rec->first_stack);
		uint32_t init_stack = LOAD(&t->init_stacks[r]);
		const char *name = (flags & MS_F_COLD) ? LOAD(&t->cold[r].name) : NULL;
		uint64_t clock = 0, seq = LOAD(&rec->seq);
		record_begin(r, &clock, 0);
		/* The new life begins at the last operation, without moving
		 * the mutex's order: a holder's next operation (its unlock)
		 * counts on its own clock being past the mutex's. */
		STORE(&rec->seq, seq);
		STORE(&rec->birth, seq);
		STORE(&rec->owner, owner);
		STORE(&rec->first_caller, first);
		STORE(&rec->first_stack, first_stack);
		STORE(&t->init_stacks[r], init_stack);
		STORE(&rec->flags, flags & ~(MS_F_COLD | MS_F_COLD_BUSY | MS_F_TIMED));
		if (name)
			STORE(&ms_cold(r)->name, name);
	}
	/* only the lines in use: the rest were never touched, and writing
	 * them would make 4 MB resident (in every fork child) */
	memset(t->sites, 0, t->nsites * sizeof *t->sites);
	t->nsites = 0;
	t->untracked_ops = 0;
	t->untracked_ended = 0;
	t->destroyed = 0;
	t->reinitialised = 0;
	/* every life is new: lock-order edges threads know they recorded
	 * (their caches) belong to the old ones */
	bump_gen(t);
	ms_table_unlock();
}

/* Walks the records in use (dense, from 1) rather than the index, which is
 * twice as large and mostly never touched: reading it would fault in
 * thousands of zero pages at every report. */
void ms_table_each(void (*fn)(uintptr_t, uint32_t, void *), void *arg)
{
	const struct ms_table *t = &ms_table;
	if (!__atomic_load_n(&t->ready, __ATOMIC_ACQUIRE))
		return;
	uint32_t end = LOAD(&t->next_unused);
	for (uint32_t r = 1; r < end && r <= t->capacity; r++) {
		uintptr_t k = __atomic_load_n(&t->records[r].key, __ATOMIC_ACQUIRE);
		if (k)
			fn(k, r, arg);
	}
}

/* ---- reading a record ------------------------------------------------ */

const char *ms_kind_name(char *out, size_t cap, uint32_t flags)
{
	static const char *const base[] = { "normal", "recursive", "errorcheck",
					    "adaptive" };
	uint32_t kind = flags >> MS_F_KIND_SHIFT;
	struct ms_fmt f;
	ms_fmt_init(&f, out, cap, -1);
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

static void take_view(const struct ms_op *e, const uint64_t *ticks,
		      uint64_t birth, struct ms_op_view *v, uint32_t *n,
		      uint32_t *torn)
{
	ms_op_read(e, ticks, &v[*n]);
	if (v[*n].state == -1)
		(*torn)++;
	else if (v[*n].state == 1 && v[*n].order > birth)
		(*n)++;
}

uint32_t ms_history_read(uint32_t r, struct ms_op_view *v, uint32_t *first,
			 uint32_t *torn)
{
	const struct ms_table *t = &ms_table;
	uint64_t birth = LOAD(&ms_rec(r)->birth);
	uint32_t n = 0;
	*torn = 0;
	for (uint32_t i = 0; i < t->history_len; i++) {
		const struct ms_op *e = ms_history_at(r, i);
		take_view(e, ms_history_ticks(e), birth, v, &n, torn);
	}
	if (LOAD(&ms_rec(r)->flags) & MS_F_COLD)
		for (int i = 0; i < MS_FAIL_RING; i++)
			take_view(&t->cold[r].fail[i], &t->cold[r].fail_ticks[i],
				  birth, v, &n, torn);
	/* insertion sort by order: at most history_len + MS_FAIL_RING */
	for (uint32_t i = 1; i < n; i++) {
		struct ms_op_view x = v[i];
		uint32_t j = i;
		while (j > 0 && x.order < v[j - 1].order) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = x;
	}
	*first = n > t->history_len ? n - t->history_len : 0;
	return n;
}

/* ---- errno kinds ----------------------------------------------------- */

static const int err_values[MS_E_COUNT] = {
	EINVAL, EAGAIN, EDEADLK, EPERM, EOWNERDEAD, ENOTRECOVERABLE, EBUSY, 0,
};

unsigned ms_err_index(int err)
{
	for (unsigned i = 0; i < MS_E_OTHER; i++)
		if (err_values[i] == err)
			return i;
	return MS_E_OTHER;
}

int ms_err_value(unsigned index)
{
	return index < MS_E_COUNT ? err_values[index] : 0;
}
