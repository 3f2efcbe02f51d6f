/* interval_lines.c - each lock's numbers in one interval; see
 * interval_lines.h. */
#define _GNU_SOURCE
#include "report/interval_lines.h"
#include "analysis/blame.h"
#include "analysis/findings.h"
#include "base/clock.h"
#include "base/internal.h"
#include "base/options.h"
#include "report/report_hist.h"

#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

/* The numbers of a line that add up, by their place in struct ms_line:
 * an interval's are the line's now less its base. */
#define F(field) offsetof(struct ms_line, field)
static const unsigned short sums[] = {
	F(mutexes), F(acquisitions), F(contended), F(changes), F(wait_total),
	F(hold_total), F(holds), F(trylock_ok), F(trylock_busy), F(timeouts),
	F(cond_waits), F(timeout_waits),
	F(errors[0]), F(errors[1]), F(errors[2]), F(errors[3]), F(errors[4]),
	F(errors[5]), F(errors[6]), F(errors[7]),
	F(misuse[0]), F(misuse[1]), F(misuse[2]), F(misuse[3]), F(misuse[4]),
	F(rd.acquisitions), F(rd.contended), F(rd.wait_total), F(rd.holds),
	F(rd.hold_total), F(rd.trylock_ok), F(rd.trylock_busy), F(rd.timeouts),
	F(rd.writes_behind_readers), F(rd.writes_behind_readers_total),
};
#undef F
#define NSUMS (sizeof sums / sizeof *sums)
_Static_assert(MS_E_COUNT == 8 && MS_M_COUNT == 5, "sums[] lists every errno and misuse");

/* What a line has shown so far: its sums and its four histograms. */
struct nums {
	uint64_t v[NSUMS];
	uint64_t hist[4][MS_HIST_BUCKETS]; /* wait, hold, read wait, read hold */
};

/* A mutex life's base.  Most lives only lock and unlock: their two counts
 * are kept here; a life with more (a cold part, a read-write lock's reads)
 * has its whole base in the pool, slot - 1. */
struct life_base {
	uint64_t birth;           /* 0: no base */
	/* where it was first locked, as last seen: the site its numbers go
	 * to is found from them when it ends (ms_table_site_of), for which
	 * line is a wrapper's caller's can change while it lives */
	uintptr_t first_caller;
	uint64_t acquisitions, changes;
	uint32_t first_stack;
	uint32_t slot;
};

static struct {
	struct life_base *lives; /* [record], capacity + 1 */
	size_t lives_bytes;
	uint32_t lives_end;      /* records below it may have a base */
	struct nums *pool;
	size_t pool_cap;         /* slots mapped */
	uint32_t pool_used, *pool_free, pool_nfree;
	struct nums *sites;      /* [MS_SITE_LINES] */
	uint32_t sites_end;      /* lines below it may have a base */
	uint64_t reset_gen;      /* ms_reset_gen when the bases were made */
	uint64_t findings;       /* made by the end of the interval before */
	/* the bases are not the numbers': a fork child's are its parent's
	 * (stale), or a reset overlapped the last reading (stale_reset) */
	int stale, stale_reset;
} b;

void ms_iv_after_fork_child(void)
{
	b.stale = 1;
	b.stale_reset = 0;
}

static void *map(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		p = NULL;
	return p;
}

/* Forget every base: the numbers started again (a reset, a fork).  Only
 * the parts used are zeroed: all of the sites' would make 7 MB resident
 * in every fork child. */
static void bases_drop(void)
{
	if (b.lives)
		memset(b.lives, 0, (size_t)b.lives_end * sizeof *b.lives);
	b.lives_end = 0;
	b.pool_used = 0;
	b.pool_nfree = 0;
	if (b.sites)
		memset(b.sites, 0, (size_t)b.sites_end * sizeof *b.sites);
	b.sites_end = 0;
	b.findings = 0; /* a reset's and a fork child's start from none */
	b.stale = 0;
	b.stale_reset = 0;
}

/* The bases, mapped on first use and dropped when the numbers started
 * again.  Returns 1 after a reset (since the interval before, or since
 * the start: reset_gen starts at 0, as ms_reset_gen does), -1 with no
 * memory. */
static int bases_ready(void)
{
	if (!b.lives) {
		b.lives_bytes = ((size_t)ms_table.capacity + 1) * sizeof *b.lives;
		b.lives = map(b.lives_bytes);
		b.sites = map(MS_SITE_LINES * sizeof *b.sites);
		if (!b.lives || !b.sites) {
			if (b.lives)
				munmap(b.lives, b.lives_bytes);
			if (b.sites)
				munmap(b.sites, MS_SITE_LINES * sizeof *b.sites);
			b.lives = NULL;
			b.sites = NULL;
			return -1;
		}
	}
	uint64_t gen = __atomic_load_n(&ms_reset_gen, __ATOMIC_ACQUIRE);
	/* a fork child's numbers start at the fork: no reset of the program's */
	int was_reset = b.stale ? b.stale_reset : gen != b.reset_gen;
	if (b.stale || was_reset)
		bases_drop();
	b.reset_gen = gen;
	return was_reset;
}

/* A pool slot (its number + 1), zeroed; 0 with no memory. */
static uint32_t slot_new(void)
{
	uint32_t s;
	if (b.pool_nfree)
		s = b.pool_free[--b.pool_nfree];
	else {
		if (b.pool_used == b.pool_cap) {
			size_t cap = b.pool_cap ? b.pool_cap * 2 : 64;
			struct nums *p = map(cap * sizeof *p);
			uint32_t *f = map(cap * sizeof *f);
			if (!p || !f) {
				if (p)
					munmap(p, cap * sizeof *p);
				if (f)
					munmap(f, cap * sizeof *f);
				return 0;
			}
			struct nums *old = b.pool;
			uint32_t *old_free = b.pool_free;
			size_t old_cap = b.pool_cap;
			if (old) {
				memcpy(p, old, b.pool_used * sizeof *p);
				memcpy(f, old_free, b.pool_nfree * sizeof *f);
			}
			/* the new ones in place before the old go: a fork child
			 * of this moment keeps memory it can use */
			b.pool = p;
			b.pool_free = f;
			b.pool_cap = cap;
			if (old) {
				munmap(old, old_cap * sizeof *old);
				munmap(old_free, old_cap * sizeof *old_free);
			}
		}
		s = b.pool_used++;
	}
	memset(&b.pool[s], 0, sizeof b.pool[s]);
	return s + 1;
}

static void slot_free(uint32_t slot)
{
	b.pool_free[b.pool_nfree++] = slot - 1;
}

static uint64_t *at(struct ms_line *l, size_t i)
{
	return (uint64_t *)((char *)l + sums[i]);
}

/* A wait is counted in its histogram's bucket and in the contended count
 * at two moments (a hold likewise), so a line read while a thread is
 * between them shows one more in one than in the other.  An interval
 * takes the count its buckets make, so that each interval's counts are
 * its histograms' sums; at rest the two agree, and the intervals still
 * add up to the whole run's.  The buckets are 32 bits wide, so their sum
 * is exact modulo 2^32: the count moves by the (small) difference. */
static uint64_t as_buckets_say(uint64_t count, const uint64_t *h)
{
	uint64_t sum = 0;
	for (int i = 0; i < MS_HIST_BUCKETS; i++)
		sum += h[i];
	return count + (uint64_t)(int64_t)(int32_t)((uint32_t)sum - (uint32_t)count);
}

/* A line and its wait and hold histograms as one vector. */
static void nums_of(struct nums *n, struct ms_line *l, const uint64_t *hist,
		    const uint64_t *hold_hist)
{
	l->contended = as_buckets_say(l->contended, hist);
	l->holds = as_buckets_say(l->holds, hold_hist);
	l->rd.contended = as_buckets_say(l->rd.contended, l->rd.hist);
	l->rd.holds = as_buckets_say(l->rd.holds, l->rd.hold_hist);
	for (size_t i = 0; i < NSUMS; i++)
		n->v[i] = *at(l, i);
	memcpy(n->hist[0], hist, sizeof n->hist[0]);
	memcpy(n->hist[1], hold_hist, sizeof n->hist[1]);
	memcpy(n->hist[2], l->rd.hist, sizeof n->hist[2]);
	memcpy(n->hist[3], l->rd.hold_hist, sizeof n->hist[3]);
}

/* What now has beyond base (never below 0: a life that ended while the
 * interval was read may have been counted ahead), which from here on
 * counts as shown.  Returns whether there was any. */
static int take_one(uint64_t *now, uint64_t *base)
{
	uint64_t d = *now > *base ? *now - *base : 0;
	if (*now > *base)
		*base = *now;
	*now = d;
	return d != 0;
}

/* Whether the line did anything in the interval: lives ending at a site
 * (its mutexes) alone do not make a line. */
static int nums_take(struct nums *now, struct nums *base)
{
	take_one(&now->v[0], &base->v[0]);
	int any = 0;
	for (size_t i = 1; i < NSUMS; i++)
		any |= take_one(&now->v[i], &base->v[i]);
	for (int h = 0; h < 4; h++)
		for (int i = 0; i < MS_HIST_BUCKETS; i++)
			any |= take_one(&now->hist[h][i], &base->hist[h][i]);
	return any;
}

/* The interval's numbers into its line (the base's shape back). */
static void nums_to_line(struct ms_iv_line *o, const struct nums *n)
{
	for (size_t i = 0; i < NSUMS; i++)
		*at(&o->l, i) = n->v[i];
	memcpy(o->hist, n->hist[0], sizeof o->hist);
	memcpy(o->hold_hist, n->hist[1], sizeof o->hold_hist);
	memcpy(o->l.rd.hist, n->hist[2], sizeof o->l.rd.hist);
	memcpy(o->l.rd.hold_hist, n->hist[3], sizeof o->l.rd.hold_hist);
	/* a maximum does not add up: the interval's lies in its highest
	 * bucket */
	o->l.wait_max = ms_hist_percentile_ns(o->hist, MS_HIST_BUCKETS, 100);
	o->l.hold_max = ms_hist_percentile_ns(o->hold_hist, MS_HIST_BUCKETS, 100);
	/* ... and no wait is longer than all of them: one wait's bound is
	 * its own length ("wait tot 106 µs, wait max 125 µs" read wrong) */
	if (o->l.wait_max > o->l.wait_total)
		o->l.wait_max = o->l.wait_total;
	if (o->l.hold_max > o->l.hold_total)
		o->l.hold_max = o->l.hold_total;
	o->l.rd.wait_max = 0;
	o->l.rd.hold_max = 0;
	o->l.rd.readers_max = 0;
	o->l.waiters_max = 0;
	o->l.waiting_now = 0;
}

/* ---- reading the interval ------------------------------------------------ */

struct take {
	struct ms_iv *iv;
	size_t cap;
	/* the line being read (its stacks stay empty: ms_iv_take fills the
	 * top's), and one for a life that only locked and unlocked, whose
	 * other numbers stay 0 */
	struct ms_iv_line cur, plain;
	size_t offered; /* lines offered to the top (more than it keeps: some
			   were ranked out) */
};

/* A line with anything in the interval: counted, and offered to the top.
 * `did` is 0 for one offered only for stacks of waits it had counted in an
 * interval before (unshown_stacks): no lock that did anything in this one. */
static void offer(struct take *t, struct ms_iv_line *o, uint64_t birth, int did)
{
	struct ms_iv *iv = t->iv;
	o->birth = birth;
	t->offered++;
	iv->locks += (uint64_t)(did != 0);
	iv->acquisitions += o->l.acquisitions;
	iv->contended += o->l.contended;
	iv->wait_ns += o->l.wait_total;
	iv->ended += o->l.mutexes;
	ms_lines_offer(iv->lines, sizeof *iv->lines, &iv->n, t->cap, o);
}

/* Life base lb's life has ended: its numbers are in its site's line now,
 * and so is what it showed. */
static void hand_over(struct life_base *lb)
{
	long i = ms_table_site_line(ms_table_site_of(lb->first_caller, lb->first_stack));
	if (i >= 0) {
		struct nums *s = &b.sites[i];
		if ((uint32_t)i >= b.sites_end)
			b.sites_end = (uint32_t)i + 1;
		if (lb->slot) {
			const struct nums *n = &b.pool[lb->slot - 1];
			for (size_t k = 1; k < NSUMS; k++)
				s->v[k] += n->v[k];
			for (int h = 0; h < 4; h++)
				for (int k = 0; k < MS_HIST_BUCKETS; k++)
					s->hist[h][k] += n->hist[h][k];
		} else {
			s->v[1] += lb->acquisitions;
			s->v[3] += lb->changes;
		}
	}
	if (lb->slot)
		slot_free(lb->slot);
	memset(lb, 0, sizeof *lb);
}

/* A live life: its numbers now, less its base. */
static void live(uintptr_t key, uint32_t r, void *arg)
{
	struct take *t = arg;
	const struct ms_record *rec = ms_rec(r);
	uint64_t birth = LOAD(&rec->birth);
	struct life_base *lb = &b.lives[r];
	if (lb->birth != birth) {
		if (lb->birth)
			hand_over(lb); /* the record's life before this one */
		lb->birth = birth;
	}
	if (r >= b.lives_end)
		b.lives_end = r + 1;
	uintptr_t caller = __atomic_load_n(&rec->first_caller, __ATOMIC_ACQUIRE);
	/* counted but not yet first locked: its first lock is under way.
	 * Left to the next interval -- as a life, or in its site's line if
	 * it ends meanwhile: a base taken now would be handed to no site,
	 * and the life shown twice. */
	if (!caller && ms_rec_acquisitions(r))
		return;
	lb->first_caller = caller;
	lb->first_stack = LOAD(&rec->first_stack);
	uint32_t flags = LOAD(&rec->flags);
	int full = (flags & MS_F_COLD) || ms_lock_class(flags) == MS_CLASS_RWLOCK;
	if (!full) {
		/* most lives: two counts, and no whole line read (a program
		 * with 100,000 mutexes would read 350 MB an interval) */
		uint64_t acq = ms_rec_acquisitions(r), ch = ms_rec_owner_changes(r);
		int any = take_one(&acq, &lb->acquisitions);
		any |= take_one(&ch, &lb->changes);
		if (!any)
			return;
		struct ms_line *l = &t->plain.l;
		l->key = key;
		l->r = r;
		l->acquisitions = acq;
		l->changes = ch;
		l->first_caller = caller;
		l->classes = 1u << ms_lock_class(flags);
		offer(t, &t->plain, birth, 1);
		return;
	}
	struct ms_iv_line *o = &t->cur;
	ms_line_from_record(&o->l, key, r);
	if (!lb->slot) {
		lb->slot = slot_new();
		if (!lb->slot)
			return; /* no memory: its numbers wait for the next */
		/* the two counts so far are its base's */
		b.pool[lb->slot - 1].v[1] = lb->acquisitions;
		b.pool[lb->slot - 1].v[3] = lb->changes;
	}
	struct nums now;
	uint64_t hist[MS_HIST_BUCKETS] = { 0 }, hold[MS_HIST_BUCKETS] = { 0 };
	if (flags & MS_F_COLD) {
		const struct ms_cold *c = &ms_table.cold[r];
		uint32_t h32[MS_HIST_BUCKETS];
		for (int i = 0; i < MS_HIST_BUCKETS; i++)
			h32[i] = LOAD(&c->hist[i]);
		ms_hist_widen(hist, h32, MS_HIST_BUCKETS);
		for (int i = 0; i < MS_HIST_BUCKETS; i++)
			h32[i] = LOAD(&c->hold_hist[i]);
		ms_hist_widen(hold, h32, MS_HIST_BUCKETS);
	}
	nums_of(&now, &o->l, hist, hold);
	int did = nums_take(&now, &b.pool[lb->slot - 1]);
	if (did || ms_blame_unshown(ms_blame_of(r, birth), birth, MS_BLAME_REPORT)) {
		nums_to_line(o, &now);
		offer(t, o, birth, did);
	}
}

/* Lives that had a base and have ended since. */
static void ended(void)
{
	for (uint32_t r = 1; r < b.lives_end; r++) {
		struct life_base *lb = &b.lives[r];
		if (!lb->birth)
			continue;
		const struct ms_record *rec = ms_rec(r);
		if (!LOAD(&rec->key) || LOAD(&rec->birth) != lb->birth)
			hand_over(lb);
	}
}

/* The site lines: read, then the lives that ended while they were read
 * handed over (their numbers may be in what was read), then each site's
 * interval taken.  A life that ends after its site was read is taken off
 * this interval's numbers and comes with the next's. */
struct site_now {
	struct ms_line l;
	struct nums n;
};

static void site_lines(struct take *t, struct site_now *now, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		struct ms_site sv;
		ms_table_site(i, &sv);
		ms_line_from_site(&now[i].l, &sv, i);
		nums_of(&now[i].n, &now[i].l, sv.hist, sv.hold_hist);
	}
	ended();
	if (n > b.sites_end)
		b.sites_end = n;
	for (uint32_t i = 0; i < n; i++) {
		int did = nums_take(&now[i].n, &b.sites[i]);
		if (did || ms_blame_unshown(__atomic_load_n(&ms_table.sites[i].blame,
							     __ATOMIC_ACQUIRE),
					    0, MS_BLAME_REPORT)) {
			t->cur.l = now[i].l;
			nums_to_line(&t->cur, &now[i].n);
			offer(t, &t->cur, 0, did);
		} else
			t->iv->ended += now[i].n.v[0];
	}
}

/* ---- their stacks ---------------------------------------------------------- */

/* The top lines by mutex life or site, for their stacks: an open
 * addressing index of line number + 1, twice as many slots as lines. */
struct line_index {
	uint32_t *slot;
	size_t mask, bytes;
};

static size_t line_hash(const struct line_index *x, uint32_t r, uint64_t birth,
			const struct ms_site *site)
{
	uint64_t k = site ? (uint64_t)(uintptr_t)site : ((uint64_t)r << 32) ^ birth;
	return (size_t)((k * 0x9e3779b97f4a7c15ull) >> 17) & x->mask;
}

static int same_line(const struct ms_iv_line *o, uint32_t r, uint64_t birth,
		     const struct ms_site *site)
{
	return site ? o->l.site == site : (!o->l.ended && o->l.r == r && o->birth == birth);
}

static int index_make(struct line_index *x, struct ms_iv *iv)
{
	size_t cap = 16;
	while (cap < 2 * iv->n)
		cap *= 2;
	x->bytes = cap * sizeof *x->slot;
	x->slot = map(x->bytes);
	if (!x->slot)
		return -1;
	x->mask = cap - 1;
	for (size_t i = 0; i < iv->n; i++) {
		const struct ms_iv_line *o = &iv->lines[i];
		const struct ms_site *s = o->l.ended ? o->l.site : NULL;
		size_t h = line_hash(x, o->l.r, o->birth, s);
		while (x->slot[h])
			h = (h + 1) & x->mask;
		x->slot[h] = (uint32_t)i + 1;
	}
	return 0;
}

static struct ms_iv_line *line_of(const struct line_index *x, struct ms_iv *iv, uint32_t r,
				  uint64_t birth, const struct ms_site *site)
{
	for (size_t h = line_hash(x, r, birth, site); x->slot[h]; h = (h + 1) & x->mask) {
		struct ms_iv_line *o = &iv->lines[x->slot[h] - 1];
		if (same_line(o, r, birth, site))
			return o;
	}
	return NULL;
}

/* The stacks of blame lines into their line o of the top.  A line not in
 * it (o NULL) was ranked out of the top -- its share is taken, so that
 * each wait is in one interval -- or did nothing when the numbers were
 * read: its stacks came after (a waiter charges its stack after its
 * unlock, and a life that ends hands its stacks to its site), and wait
 * for the next interval, whose numbers pass offers a line with stacks
 * unshown (ms_blame_unshown).  Taken here, they were lost: that line was
 * in no interval with them. */
static void stacks_of(const struct ms_blame *list, uint64_t birth, struct ms_iv_line *o,
		      int ranked_out)
{
	if (!o && !ranked_out)
		return;
	for (const struct ms_blame *bl = list; bl; bl = bl->next) {
		if (bl->birth != birth)
			continue;
		uint64_t count, total;
		ms_blame_since((struct ms_blame *)bl, MS_BLAME_REPORT, &count, &total);
		if (!o || !count || bl->kind > MS_BLAME_HOLD)
			continue;
		int k = (int)bl->kind;
		o->all_stacks[k]++;
		o->stacks_total[k] += total;
		/* the best MS_IV_STACKS by time, in order */
		int i = o->nstacks[k] < MS_IV_STACKS ? o->nstacks[k]++ : MS_IV_STACKS - 1;
		if (i == MS_IV_STACKS - 1 && o->nstacks[k] == MS_IV_STACKS &&
		    o->stacks[k][i].count && o->stacks[k][i].total >= total)
			continue;
		while (i > 0 && o->stacks[k][i - 1].total < total) {
			o->stacks[k][i] = o->stacks[k][i - 1];
			i--;
		}
		o->stacks[k][i] = (struct ms_iv_stack){ bl->stack, count, total };
	}
}

struct stacks_ctx {
	struct ms_iv *iv;
	const struct line_index *x;
	int ranked_out; /* the top left lines out */
};

static void live_stacks(uintptr_t key, uint32_t r, void *arg)
{
	(void)key;
	struct stacks_ctx *c = arg;
	uint64_t birth = LOAD(&ms_rec(r)->birth);
	const struct ms_blame *list = ms_blame_of(r, birth);
	if (list)
		stacks_of(list, birth, c->x ? line_of(c->x, c->iv, r, birth, NULL) : NULL,
			  c->ranked_out || !c->x);
}

static void site_stacks(const struct ms_site *s, const struct ms_blame *list, void *arg)
{
	struct stacks_ctx *c = arg;
	stacks_of(list, 0, c->x ? line_of(c->x, c->iv, 0, 0, s) : NULL,
		  c->ranked_out || !c->x);
}

/* ---- findings ---------------------------------------------------------------- */

/* a relock glibc refused is a MISUSE, which is not counted here */
static void count_self(const struct ms_self_finding *s, void *arg)
{
	if (s->kind != MS_SELF_REFUSED)
		(*(uint64_t *)arg)++;
}

static void count_exit(const struct ms_exit_finding *e, void *arg)
{
	(void)e;
	(*(uint64_t *)arg)++;
}

static uint64_t findings_now(void)
{
	struct ms_findings_stats st;
	ms_findings_stats(&st);
	uint64_t n = st.cycles + st.cycles_lost;
	ms_findings_each_self(count_self, &n);
	n += ms_findings_each_exit(count_exit, &n);
	n += ms_findings_each_stall(NULL, NULL);
	return n;
}

/* ---- the interval ------------------------------------------------------------ */

int ms_iv_take(struct ms_iv *iv)
{
	memset(iv, 0, sizeof *iv);
	if (!__atomic_load_n(&ms_table.ready, __ATOMIC_ACQUIRE))
		return -1;
	int ready = bases_ready();
	if (ready < 0)
		return -1;
	struct take t = { .iv = iv, .cap = (size_t)ms_opt.top };
	iv->bytes = (t.cap * sizeof *iv->lines + 4095) & ~(size_t)4095;
	uint32_t nsites = LOAD(&ms_table.nsites);
	size_t site_bytes = ((size_t)nsites * sizeof(struct site_now) + 4095) & ~(size_t)4095;
	struct site_now *sites = nsites ? map(site_bytes) : NULL;
	iv->lines = iv->bytes ? map(iv->bytes) : NULL;
	struct line_index x = { 0 };
	if ((nsites && !sites) || (iv->bytes && !iv->lines)) {
		if (sites)
			munmap(sites, site_bytes);
		ms_iv_free(iv);
		return -1; /* nothing taken: the next interval has it all */
	}
	iv->reset = ready;
	/* the live lives first, then the ones that ended (whose bases go to
	 * their sites: a life that ends between the two was read live and is
	 * handed on with what it showed), then the sites */
	ms_table_each(live, &t);
	ended();
	site_lines(&t, sites, nsites);
	if (sites)
		munmap(sites, site_bytes);
	ms_lines_sort(iv->lines, sizeof *iv->lines, iv->n);
	/* every blame line's share is taken, the top lines' kept (without
	 * memory for the index, none is kept) */
	struct stacks_ctx c = { iv, index_make(&x, iv) == 0 ? &x : NULL, t.offered > iv->n };
	ms_table_each(live_stacks, &c);
	ms_blame_each_site(site_stacks, &c);
	if (x.slot)
		munmap(x.slot, x.bytes);
	uint64_t f = findings_now();
	iv->findings = f;
	iv->findings_new = f > b.findings ? f - b.findings : 0;
	b.findings = f;
	/* a reset under way while the numbers were read: some were zeroed,
	 * some not -- the next interval starts its bases again */
	uint64_t gen = __atomic_load_n(&ms_reset_gen, __ATOMIC_ACQUIRE);
	if (gen != b.reset_gen || (gen & 1)) {
		b.stale = 1;
		b.stale_reset = 1;
	}
	return 0;
}

void ms_iv_free(struct ms_iv *iv)
{
	if (iv->lines)
		munmap(iv->lines, iv->bytes);
	memset(iv, 0, sizeof *iv);
}
