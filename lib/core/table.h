/* table.h - the statistics table: every tracked mutex's record, found by
 * the mutex's address.  Mapped once at start-up, MAP_NORESERVE:
 *   index    8-byte slots {hash, record number}, twice as many as records,
 *            probed linearly from ms_hash (untracked addresses aside);
 *   records  one 64-byte line per mutex: what the lock path updates;
 *   cold     per record, what only a mutex that waited, failed or was
 *            named needs, zeroed when first needed;
 *   history  entries in groups of MS_HISTORY_GROUP positions, one 64-byte
 *            line per record and group, so few pages become resident.
 * Lookups never lock or write; adds and removals take spin locks of ours.
 * How and why: doc/internals.md, "The table" and "Lookups never lock". */
#ifndef MUTEXSTAT_TABLE_H
#define MUTEXSTAT_TABLE_H

#include "base/internal.h"
#include "core/ring.h"
#include "core/thread.h"


#include <stddef.h>
#include <stdint.h>

#define MS_REC_NONE 0u            /* lookup: address not in the table */
#define MS_REC_UNTRACKED 0xffffffffu /* in the index, but no record (full) */

#define MS_KEY_EMPTY 0u
#define MS_KEY_TOMB 1u
#define MS_MAX_PROBE 128

/* Record flags. */
#define MS_F_COLD_BUSY 1u  /* cold part being zeroed for this life */
#define MS_F_COLD 2u       /* cold part valid for this life */
#define MS_F_TIMED 4u      /* has made a thread wait: hold times measured */
#define MS_F_STATIC 8u     /* first seen by a lock, not by init */
#define MS_F_EDGE 16u        /* in a lock-order edge a thread has cached */
#define MS_F_WAITERS 32u     /* a thread waits: the unlock captures its stack */
#define MS_F_WAITS_KEPT 64u  /* reset while threads ran: zeroing the cold part
				keeps its count of waits under way (table.c) */
#define MS_F_FINDING 128u    /* in a finding: its life's end is told
				(thread.h's finding_ended, findings.c) */
/* The hold under way is timed (its start is in the holder's held set):
 * the unlock path's plain case tests it with MS_F_WAITERS in one
 * instruction.  Alone in the second byte, which only the holder writes,
 * with a byte store (ms_hold_flag): the other threads' changes are atomic
 * read-modify-writes of the word, which keep it. */
#define MS_F_HOLD_TIMED 0x100u

/* Hold times of mutexes that have made a thread wait: every hold among a
 * mutex's first MS_HOLD_EXACT acquisitions is timed, then one in
 * MS_HOLD_SAMPLE (two clock reads inside the critical section on every
 * acquisition make a hot mutex hotter still). */
#define MS_HOLD_EXACT 4096
#define MS_HOLD_SAMPLE 16

/* Whether the n-th acquisition of a mutex life (from 1) that made a thread
 * wait is a timed hold. */
static inline int ms_hold_sampled(uint64_t n)
{
	return n <= MS_HOLD_EXACT || n % MS_HOLD_SAMPLE == 1;
}

/* Call stacks of a mutex's first MS_STACK_EXACT contention events are all
 * captured, then one in MUTEXSTAT_STACK_SAMPLE (a capture costs about as
 * much as a fast handoff). */
#define MS_STACK_EXACT 256
#define MS_F_KIND_SHIFT 16 /* glibc's __kind (low 10 bits) when first seen;
			      for a read-write lock its __flags (the kind of
			      pthread_rwlockattr_setkind_np) and
			      MS_KIND_PSHARED if process-shared */

/* Which kind of lock the record is (two bits above glibc's kind, set
 * with the record's life: init or first use). */
/* A read-write lock life that found no slot for its reads (ms_reads). */
#define MS_F_READS_SPENT (1u << 28)
#define MS_F_CLASS_SHIFT 26
#define MS_F_CLASS (3u << MS_F_CLASS_SHIFT)
enum ms_lock_class { MS_CLASS_MUTEX, MS_CLASS_RWLOCK, MS_CLASS_SPIN, MS_CLASS_COUNT };
static inline unsigned ms_lock_class(uint32_t flags)
{
	return (flags & MS_F_CLASS) >> MS_F_CLASS_SHIFT;
}

/* A read-write lock whose new readers wait behind a writer that waits:
 * glibc's PREFER_WRITER_NONRECURSIVE_NP (its PREFER_WRITER_NP is
 * reader-preferring). */
static inline int ms_rwlock_writer_first(uint32_t flags)
{
	return ((flags >> MS_F_KIND_SHIFT) & 3) == PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP;
}

/* An index slot, one word that a lookup loads at once: the low 32 bits of
 * the address's hash (its home is those & index_mask, which is below
 * 2^32: ms_table_init) above its record number.  The address is the
 * record's key, or for MS_REC_UNTRACKED the side array's entry for the
 * slot.  8 bytes a slot, 16 a mutex: half the index's pages a program
 * with many mutexes touches.  No entry has record 0, so a hole being
 * refilled (a tombstone) is record 0 with a tag of 1. */
#define MS_SLOT_EMPTY 0ull
#define MS_SLOT_TOMB (1ull << 32)
static inline uint64_t ms_slot_make(uint64_t hash, uint32_t rec)
{
	return (hash << 32) | rec;
}
static inline uint32_t ms_slot_rec(uint64_t s)
{
	return (uint32_t)s;
}
static inline uint32_t ms_slot_tag(uint64_t s)
{
	return (uint32_t)(s >> 32);
}

struct ms_record {
	/* The mutex's address while the record is tracked, 0 while free.  A
	 * thread's cached record number is trusted only if this is the
	 * mutex it looks for (thread.h). */
	uintptr_t key;
	uint64_t acquisitions;
	uint64_t owner_changes;
	uint64_t seq;   /* order at or below this record's last operation (the
			   newest history entry has it: ms_mutex_order), kept
			   across lives; the lock path does not write it */
	uint64_t birth; /* order at which this life began: older history is stale */
	uintptr_t first_caller;
	uint32_t owner; /* tid of the last acquirer, | MS_HELD while held */
	uint32_t ops;   /* main history write position */
	uint32_t flags;
	uint32_t first_stack; /* depot id: where first locked */
} __attribute__((aligned(64)));

/* records[0]: the record every empty cache entry names; no mutex has this
 * address. */
#define MS_KEY_NO_MUTEX 1u

/* errno values counted per mutex. */
enum ms_err {
	MS_E_INVAL, MS_E_AGAIN, MS_E_DEADLK, MS_E_PERM, MS_E_OWNERDEAD,
	MS_E_NOTRECOVERABLE, MS_E_BUSY, MS_E_OTHER, MS_E_COUNT,
};

/* Misuse by the program, as glibc saw it. */
enum ms_misuse {
	MS_M_UNLOCK_UNLOCKED, MS_M_UNLOCK_NOT_OWNER, MS_M_DESTROY_LOCKED,
	MS_M_USE_DESTROYED, MS_M_COND_NOT_HELD, MS_M_COUNT,
};

#define MS_HIST_BUCKETS 48 /* log2 buckets of ticks: [2^(i-1), 2^i) */
#define MS_FAIL_RING 8

/* A read-write lock's read side.  The cold part's own numbers count both
 * modes (so every writer and the top table read a read-write lock as any
 * lock); these are the reads among them -- the writes are the rest --
 * but for the acquisitions, whose writes are counted here (by the writer,
 * alone: a read pays no locked add for it; reads = the record's count
 * less these).  Readers hold the lock together, so the other numbers are
 * changed with locked instructions, on the slow paths.  How many read at
 * once is glibc's count (other_locks.c), kept here only at its most. */
struct ms_read_stats {
	/* The first line is what every read reads, and no read writes.  Its
	 * reads' history (the table's read_ring: history_len entries), the
	 * slot's own for good: never cleared, so that a reader that found the
	 * slot as it changes hands never sees none. */
	struct ms_op *ring;
	/* Times the slot was taken, kept as the ring is: a read held names
	 * the slot's taking it wrote in (ms_reads_held), since a record may
	 * get the same slot back after a reset, with the same birth. */
	uint32_t taken;
	/* Whose: the record and life that took it (table.c's pool). */
	uint32_t rec;
	uint64_t birth;
	/* The order of the lock's newest operation outside the reads' history
	 * -- the write unlock's, or the life's start -- past which a read goes
	 * (written by the writer alone). */
	uint64_t write_order;
	uint32_t readers_max;                  /* holding at once, at most */
	/* The rest is written on the slow paths (waits, timed holds, tries)
	 * and by writers. */
	uint64_t writes __attribute__((aligned(64)));
	uint64_t contended;
	uint64_t wait_total, wait_max;         /* waits that got it */
	uint64_t holds, hold_total, hold_max;  /* timed read holds */
	uint64_t trylock_ok, trylock_busy, timeouts;
	/* read waits that timed out: their time, in the reads' wait as the
	 * lock's are in its (so that the writes' -- the lock's less the
	 * reads' -- have none of it) */
	uint64_t timeout_wait_total;
	/* write waits that began while readers held the lock: how many,
	 * and their time (the rest of the write waits were behind a writer) */
	uint64_t writes_behind_readers, writes_behind_readers_total;
	uint32_t hist[MS_HIST_BUCKETS];
	uint32_t hold_hist[MS_HIST_BUCKETS];
	/* The next position of the reads' own history (the table's
	 * read_ring): two a read, its entry's and its unlock's, taken as it
	 * is taken, so the reads of a lock with a slot are half of it and
	 * the record counts its writes only.  Alone in its line, the only
	 * word every read writes: the record's line and the main history
	 * stay as the writers left them, read by every reader, moved by
	 * none (doc/internals.md, "Read-write and spin locks"). */
	uint64_t read_ops __attribute__((aligned(64)));
	/* read_ops when a writer last looked at the reads' history for
	 * their newest order: the writer's own, beside it */
	uint64_t read_ops_seen;
} __attribute__((aligned(64)));

struct ms_cold {
	uint64_t contended;                     /* acquisitions after a wait */
	uint64_t wait_total, wait_max;          /* ticks, waits that got it */
	uint64_t timeout_wait_total, timeout_wait_max; /* waits that timed out, */
	uint64_t timeout_waits; /* and how many (not the owner's relocks that did) */
	uint64_t trylock_ok, trylock_busy, timeouts, cond_waits;
	uint32_t errors[MS_E_COUNT];
	uint32_t misuse[MS_M_COUNT];
	/* Threads waiting now: all of them in the low half, the sampled
	 * ones (their stacks captured) in the high half, so that a wait
	 * begins and ends with one locked instruction each. */
	uint64_t waiting;
	uint32_t waiters_max;
	uint32_t hist[MS_HIST_BUCKETS];         /* waits that got the mutex */
	/* (these fill the line before the holds' to its end: every byte of
	 * the cold part is address space for every record, which a program
	 * under ulimit -v needs -- tests/memory_limits.sh) */
	/* A timed hold whose thread exited holding the mutex: that thread and
	 * when the hold began (its held set, where the start was, is gone). */
	uint32_t exited_tid;
	uint64_t exited_since;
	const char *name;
	void *blame; /* waiting and holding stacks: analysis/blame.c's lines */
	uint32_t release_seq;     /* unlocks that found a sampled waiter */
	/* Contention events, to pick the sampled ones: bumped without a
	 * locked instruction, so two waiters at once may count as one --
	 * it chooses samples, it is no statistic. */
	uint32_t waiter_sample;
	uint32_t fail_pos;
	/* Timed holds, in ticks: the holder writes them, all in one line for
	 * short holds (the low buckets follow the sums). */
	uint64_t hold_total __attribute__((aligned(64)));
	uint64_t hold_max, holds;
	uint32_t hold_hist[MS_HIST_BUCKETS];
	/* the releases numbered, the newest MS_RELEASE_PUB: each its
	 * number's low byte, its stack and when it let go, in one word
	 * (record.c's pub_word).  A waiter reads those of its wait as soon
	 * as they may be there, and while a woken waiter waited to run, four
	 * releases came before it did (an rwlock's writers lost a third of
	 * their attribution so) */
#define MS_RELEASE_PUB 8
	uint64_t release_pub[MS_RELEASE_PUB];
	struct ms_op fail[MS_FAIL_RING];
	uint64_t fail_ticks[MS_FAIL_RING];
	/* a read-write lock's reads: slot + 1 in ms_table.reads (ms_reads),
	 * 0 none -- a pool of its own, so that the cold part of every record
	 * (address space a program under ulimit -v needs) stays as small */
	uint32_t reads;
	/* read holds another thread's unlock ended (a MISUSE: glibc lets a
	 * thread unlock reads it does not hold), which a reader's held set
	 * still lists: its exit drops as many (thread_pool.c's still_held) */
	uint32_t reads_released;
	/* Read holds whose threads exited holding them (a write hold's
	 * holder stays in the record's owner): how many, the last such
	 * thread and where it took it, so that a writer waiting for such a
	 * reader waits for a thread that has exited (analysis/waitfor.c,
	 * which checks glibc still counts them).  In what was the padding
	 * of the line: no bigger cold part. */
	uint32_t exited_reads;
	uint32_t exited_reader;
	uintptr_t exited_read_at;
};

/* A site line's misuse_last word: stack << 32 | tid (22 bits: pid_max's
 * most) << 10 | errno (10 bits). */
static inline uint64_t ms_site_misuse_make(uint32_t stack, uint32_t tid, int err)
{
	return (uint64_t)stack << 32 | (uint64_t)(tid & 0x3fffff) << 10 | (uint64_t)(err & 0x3ff);
}
static inline uint32_t ms_site_misuse_stack(uint64_t w)
{
	return (uint32_t)(w >> 32);
}
static inline uint32_t ms_site_misuse_tid(uint64_t w)
{
	return (uint32_t)(w >> 10) & 0x3fffff;
}
static inline int ms_site_misuse_err(uint64_t w)
{
	return (int)(w & 0x3ff);
}

/* In a first-lock or init stack: the stack is this call site's, captured
 * for an earlier mutex, so only its first frame is known to be this
 * mutex's (the report shows that one alone).  Depot ids stay below it. */
#define MS_SITE_SHARED 0x80000000u

/* What a destroyed mutex leaves behind, summed per first-lock site. */
struct ms_site {
	uintptr_t site; /* first-lock caller; 0 = never locked */
	uint64_t mutexes, acquisitions, contended, owner_changes;
	uint64_t wait_total, wait_max, hold_total, hold_max, holds;
	uint64_t got_wait_max; /* of the waits that got the mutex: hist's */
	uint64_t trylock_ok, trylock_busy, timeouts, waiters_max;
	uint64_t timeout_waits, cond_waits;
	uint64_t timed_mutexes; /* of those mutexes, the ones with timed holds */
	uint64_t wrapped; /* site is a wrapper's caller, not a lock's (record.h) */
	uint64_t errors[MS_E_COUNT], misuse[MS_M_COUNT];
	/* the newest ended life's newest misuse of each kind: its stack,
	 * thread and glibc's answer, in one word (lives of one line may end
	 * at once, under two stripes: a store of each field could pair one's
	 * thread with the other's stack), ms_site_misuse_* above; 0 none */
	uint64_t misuse_last[MS_M_COUNT];
	uint64_t hist[MS_HIST_BUCKETS];
	uint64_t hold_hist[MS_HIST_BUCKETS];
	/* The kinds of lock of its lives (1 << ms_lock_class), and the
	 * read-write locks' reads, summed as the cold part keeps them. */
	uint32_t classes;
	struct ms_site_reads {
		uint64_t acquisitions, contended, wait_total, wait_max;
		uint64_t holds, hold_total, hold_max, trylock_ok, trylock_busy;
		uint64_t timeouts, writes_behind_readers, writes_behind_readers_total;
		uint64_t readers_max;
		uint64_t hist[MS_HIST_BUCKETS], hold_hist[MS_HIST_BUCKETS];
	} rd;
	/* What the lives that waited, failed or were named (a cold part)
	 * leave besides sums, for the line's section to show what a live
	 * mutex's does: their blame lines merged by stack (blame.c), and the
	 * newest such life's name, first-lock and init stacks and recent
	 * operations (NULL until one ends). */
	void *blame; /* analysis/blame.c's lines */
	const char *name;
	uint32_t first_stack, init_stack;
	struct ms_site_history *history;
};

/* A copy of an ended life's history: its side ring and the positions of
 * its main ring it used, in no order (ms_site_history_read sorts). */
struct ms_site_history {
	uint64_t birth;
	uint32_t n, cap;
	struct ms_op *ops;    /* [cap] */
	uint64_t *ticks;      /* [cap]: ms_op_read's ticks word of each */
};

/* First-lock sites with a line of their own.  The lives of the sites past
 * them are summed in one more line, the last, whose site is
 * MS_SITE_OTHERS: the report names it for what it is (they went to the
 * line of the last site kept, whose line then named lives it never
 * locked). */
#define MS_MAX_SITES 4096
#define MS_SITE_LINES (MS_MAX_SITES + 1)
#define MS_SITE_OTHERS UINTPTR_MAX
#define MS_SITE_INDEX 8192 /* the sites' hash index: twice as many slots */

struct ms_table {
	uint64_t *slots;           /* the index: ms_slot_make() words */
	uintptr_t *untracked_keys; /* [slot]: the address of an untracked one */
	uint16_t *index_fill;      /* inserts per stretch of the index, up to
				      the count that makes it resident (table.c) */
	struct ms_record *records; /* [1..capacity] */
	struct ms_cold *cold;
	struct ms_op *history;     /* groups of positions, above */
	struct ms_op *history_row[1024]; /* position p of record 0; record r's
					    is MS_HISTORY_GROUP * r further */
	uint64_t *history_ticks;   /* the time of history[i], if MS_OP_TIMED */
	uint32_t *init_stacks;     /* [record]: depot id of where initialised */
	/* [record]: the modules the dynamic linker had loaded when the life
	 * began (ms_loader_adds_short; 0 unknown): a lock is named after no module
	 * loaded since, which may lie where it was (symbols.h) */
	uint16_t *load_counts; /* (ms_loader_adds_short; NULL while no module
				  was loaded since start-up: all 0) */
	uint32_t history_mask;     /* history_len - 1 */
	uint32_t *free_next;
	uint64_t index_mask;
	unsigned index_shift;      /* log2 of the number of index slots */
	uint32_t capacity, history_len;
	uint32_t next_unused;      /* records never used begin here (table.c) */
	uint32_t nsites;
	struct ms_site *sites; /* [MS_SITE_LINES] */
	int sites_lock;        /* making a new site line */
	int ready;
	uint32_t gen; /* bumped when a record in a lock-order edge (MS_F_EDGE)
			 ends its life: threads' cached edges (thread.h) are
			 stale */
	uint32_t site_index[MS_SITE_INDEX]; /* site line + 1, by hash; 0 empty */
	/* Read-write locks' reads, a slot per live rwlock that has one:
	 * MS_READS_SHARE of the capacity.  Slots of ended lives are freed
	 * (free list), a reset frees them all. */
	struct ms_read_stats *reads;
	struct ms_op *read_ring;   /* [slot * history_len + position]: reads */
	uint64_t *read_ring_ticks; /* the time of read_ring[i], if MS_OP_TIMED */
	uint32_t *reads_free;
	uint32_t reads_cap, reads_next, reads_nfree, reads_spent;
	/* mutexes left untracked because the pool's lock was held by a
	 * thread stopped in a signal handler (table.c, part_lock) */
	uint64_t pool_gave_up;
	/* ended lives summed in no site line: the sites lock was held by a
	 * thread stopped in a signal handler (table.c, site_for) */
	uint64_t sites_gave_up;
	int reads_lock;
};
#define MS_READS_SHARE 32 /* a slot for one record in 32 */

/* What the index's updates counted, summed over its stripes. */
struct ms_table_counts {
	uint64_t live;              /* tracked mutexes */
	uint64_t untracked_mutexes; /* in the index without a record */
	uint64_t untracked_ops;     /* not even in the index */
	uint64_t untracked_ended;   /* untracked mutexes destroyed since */
	uint64_t destroyed, reinitialised;
};
void ms_table_counts(struct ms_table_counts *c);

/* One lock of the index's updates, with what its holders count
 * (table.c). */
#define MS_STRIPES 256
#define MS_STRIPE_SHIFT 8 /* blocks of 256 slots: more than MS_MAX_PROBE */
#define MS_STRIPE_BLOCK (1u << MS_STRIPE_SHIFT)
struct ms_stripe {
	int lock;
	/* Lives ended under this lock and not yet added to their site's
	 * line: the site (line + 1; 0 none) and its three plain numbers.
	 * Threads ending lives of the same site at once would otherwise all
	 * write its line, with locked instructions. */
	uint32_t fold_site;
	uint64_t fold_mutexes, fold_acquisitions, fold_owner_changes;
	/* The site + 1 of fold_site's line once that line counts mutexes
	 * among its classes, 0 none (a site may be 0, a mutex never locked;
	 * the stripes start zeroed): a plain mutex life of that site is
	 * summed here without a look at the line (table.c's fold). */
	uintptr_t fold_plain;
	/* Tracked lives begun and ended under this lock: live ones are the
	 * difference, destroyed ones those ended since the last reset (at
	 * ended_base) -- one counter for a removal to bump, not two. */
	uint64_t made, ended, ended_base;
	uint64_t untracked_mutexes, untracked_ops, untracked_ended;
	uint64_t reinitialised;
} __attribute__((aligned(64)));

/* Site line i as the report shows it: with the lives the stripes still
 * hold for it. */
void ms_table_site(uint32_t i, struct ms_site *out);

/* The site a life that was first locked at first_caller, with stack
 * first_stack, ends in (its site line's key), as the table would sum it
 * now.  And the number of the line of `site`, -1 if there is none yet
 * (MS_MAX_SITES, the other sites' line, for a site past the limit). */
uintptr_t ms_table_site_of(uintptr_t first_caller, uint32_t first_stack);
long ms_table_site_line(uintptr_t site);

/* Fork from a signal handler that interrupted an update of this thread:
 * every other update lock, for a while each (fork.c). */
void ms_table_lock_around_update(void);
void ms_table_unlock_around_update(void);
/* A fork child's spare records of the parent's other threads back to the
 * pool; with ms_table_lock() held. */
void ms_table_reclaim_spares(void);

/* A thread that ends gives back its spare records (thread.h). */
void ms_table_thread_exit(struct ms_thread *self);

extern struct ms_table ms_table;

/* Drop the three alignment bits and add to the address's own low bits the
 * bits above the index (`high`) scattered by a golden-ratio multiplication
 * (the product's bits 32 and up).  Every address bit moves the home.
 * Within one reach of the index `high` is one number, so an array of
 * mutexes walks the index in order, which the CPU's prefetcher follows;
 * arrays further apart (malloc arenas, thread stacks, 2 MiB pages) land
 * far apart.  The folds tried before, and what they cost: doc/internals.md,
 * "The table", and doc/benchmark.md, "Where the cost goes". */
#define MS_HASH_MUL 0x9e3779b97f4a7c15ull /* 2^64 / the golden ratio, odd */
static inline uint64_t ms_hash(uintptr_t key)
{
	uint64_t k = (uint64_t)key >> 3;
	uint64_t high = k >> ms_table.index_shift;
	/* A lock 4 bytes past an 8-byte boundary -- every other spin lock of
	 * an array of them (pthread_spinlock_t is 4 bytes) -- goes to the
	 * other half of the index: with one home for two locks, an array of
	 * 300 had 23 untracked, and past 128 a probe's reach every other one
	 * (5,127 of 10,000 tracked).  An 8-byte aligned mutex's home stays. */
	uint64_t odd = ((uint64_t)key & 4) << (ms_table.index_shift - 3);
	return k + ((high * MS_HASH_MUL) >> 32) + odd;
}

/* The record of a tracked address, MS_REC_UNTRACKED, or MS_REC_NONE.
 *
 * Between the loads of a slot's key and its record number, an update
 * elsewhere may move the key out of the slot and another key in (a
 * removal closing its hole, table.c): so the answer is checked -- a
 * record names its mutex, and an untracked slot must still hold the key.
 * A check that fails answers MS_REC_NONE, which sends the caller to the
 * insert path, where the locks make the answer sure. */
static inline uint32_t ms_table_find(uintptr_t key)
{
	const struct ms_table *t = &ms_table;
	uint64_t hash = ms_hash(key);
	uint32_t tag = (uint32_t)hash;
	uint64_t i = hash & t->index_mask;
	for (unsigned n = 0; n < MS_MAX_PROBE; n++) {
		uint64_t s = __atomic_load_n(&t->slots[i], __ATOMIC_ACQUIRE);
		if (s == MS_SLOT_EMPTY)
			return MS_REC_NONE;
		uint32_t r = ms_slot_rec(s);
		if (ms_slot_tag(s) == tag && r != MS_REC_NONE) {
			if (r != MS_REC_UNTRACKED) {
				if (__atomic_load_n(&t->records[r].key, __ATOMIC_ACQUIRE) == key)
					return r;
			} else if (__atomic_load_n(&t->untracked_keys[i], __ATOMIC_ACQUIRE) == key) {
				/* still this slot's (the key is written before
				 * the slot, and a move writes the slot after) */
				if (__atomic_load_n(&t->slots[i], __ATOMIC_ACQUIRE) == s)
					return r;
				return MS_REC_NONE;
			}
		}
		i = (i + 1) & t->index_mask;
	}
	return MS_REC_NONE;
}

static inline struct ms_record *ms_rec(uint32_t r)
{
	return &ms_table.records[r];
}

/* The record of mutex m if this thread's cache has it, else 0. */
static inline uint32_t ms_cache_find(const struct ms_thread *t, uintptr_t m)
{
	uint32_t r = t->cache[ms_cache_slot((const void *)m)];
	return LOAD(&ms_rec(r)->key) == m ? r : 0;
}

/* Remember m's tracked record r in this thread's cache. */
static inline void ms_cache_fill(struct ms_thread *t, uintptr_t m, uint32_t r)
{
	t->cache[ms_cache_slot((const void *)m)] = r;
}

/* The second level (thread.h), for a recording thread: m's record, else
 * 0.  Mutexes up to MS_CACHE2 apart in an array get different entries. */
static inline uint32_t *ms_cache2_entry(struct ms_tstate *ts, uintptr_t m)
{
	return &ts->cache2[(m >> 3) & (MS_CACHE2 - 1)];
}

static inline uint32_t ms_cache2_find(struct ms_tstate *ts, uintptr_t m)
{
	uint32_t r = *ms_cache2_entry(ts, m);
	return LOAD(&ms_rec(r)->key) == m ? r : 0;
}

#define MS_HISTORY_GROUP 4 /* positions per record in one 64-byte line */

static inline struct ms_op *ms_history_at(uint32_t r, uint32_t pos)
{
	return ms_table.history_row[pos & ms_table.history_mask] +
	       (size_t)r * MS_HISTORY_GROUP;
}

/* Whether the history position has come back to 0 after 2^32 entries of
 * this life, rather than standing at 0 in a new life with no entry yet.
 * A new life's first entry is ordered with at most one acquisition
 * counted (an init has none; a static mutex's first lock counts its own
 * first), so two or more mean the position has wrapped.  (A wrap with
 * fewer -- 2^32 entries made by unlocks of holds taken behind the
 * library's back -- orders one entry after the life's start rather than
 * after the newest entry: a report's order of that entry, nothing more.)
 * The entries before position 0 are read only after a wrap: in a new
 * life they are an older life's, or memory never touched, and on kernels
 * that map no shared zero page a read of those makes a page resident --
 * the last group of positions of every new mutex, 64 bytes each and a
 * page fault per 64 mutexes, for nothing. */
#define MS_OPS_WRAPPED_ACQ 2
static inline int ms_history_wrapped(const struct ms_record *rec)
{
	return LOAD(&rec->acquisitions) >= MS_OPS_WRAPPED_ACQ;
}

/* The order of the mutex's last operation: its newest main-history
 * entry's -- written by the holder, so complete once the mutex is taken
 * from it -- or, with none in this life, the one seq keeps (a life's
 * start, a reset).  The holders' operations write no other word for it.
 * The position ops - 1 also when ops is 0 after a wrap (above). */
static inline uint64_t ms_mutex_order(uint32_t r, const struct ms_record *rec)
{
	uint64_t o = LOAD(&rec->seq);
	uint32_t ops = LOAD(&rec->ops);
	if (unlikely(!ops) && !ms_history_wrapped(rec))
		return o;
	const struct ms_op *e = ms_history_at(r, ops - 1);
	uint64_t last = __atomic_load_n(&e->stamp, __ATOMIC_ACQUIRE) >> MS_OP_TID_BITS;
	return last > o ? last : o;
}

/* ms_mutex_order() for a thread that does not hold the mutex (a failed
 * operation, a reset while threads run, a fork child's view of a parent
 * thread stopped anywhere): the holder may be writing the newest entry,
 * which ops counts already while its stamp is still a ring's length
 * older, or 0.  The entry before counts too (complete), and a stamp
 * being written is waited for a moment (with a ring of one entry there
 * is no entry before). */
static inline uint64_t ms_mutex_order_racing(uint32_t r, const struct ms_record *rec)
{
	uint64_t o = LOAD(&rec->seq);
	uint32_t ops = LOAD(&rec->ops);
	int wrapped = ms_history_wrapped(rec);
	for (uint32_t back = 1; back <= 2 && (back <= ops || wrapped); back++) {
		const struct ms_op *e = ms_history_at(r, ops - back);
		uint64_t s = __atomic_load_n(&e->stamp, __ATOMIC_ACQUIRE);
		for (unsigned spins = 0; !s && back == 1 && ops && spins < 64; spins++) {
			__builtin_ia32_pause();
			s = __atomic_load_n(&e->stamp, __ATOMIC_ACQUIRE);
		}
		if (s >> MS_OP_TID_BITS > o)
			o = s >> MS_OP_TID_BITS;
	}
	return o;
}

/* Where the time of a main-history entry goes. */
static inline uint64_t *ms_history_ticks(const struct ms_op *e)
{
	return ms_table.history_ticks + (e - ms_table.history);
}

int ms_table_init(uint32_t capacity, uint32_t history_len);

/* What the end of a life asks of the layers above the table, which keep
 * call-site stacks and blame (registered once at start-up; each may be
 * NULL, as in unit tests).  They run with the ending life's update lock
 * held, only for the rare lives that need them. */
struct ms_table_hooks {
	/* The line a life of a wrapper (a site whose first-lock stacks name
	 * different callers) is summed on: its caller's; else site. */
	uintptr_t (*site_beyond_wrapper)(uintptr_t site, uint32_t first_stack);
	/* Life r, which had a cold part, ends on site line s: keep its blame
	 * lines there, and a copy of its history if `history` (it waited,
	 * failed or was named: table.c's life_kept). */
	void (*keep_life)(uint32_t r, struct ms_site *s, int history);
	/* mutexstat_reset: the site lines' blame lines go; non-zero if a
	 * report reads their history copies now (they must stay). */
	int (*sites_reset)(struct ms_site *sites, uint32_t n);
};
void ms_table_set_hooks(const struct ms_table_hooks *hooks);
/* The address space ms_table_init maps for that capacity. */
size_t ms_table_bytes(uint32_t capacity, uint32_t history_len);

/* Add an address first seen by a lock (a static initialiser) or by init or
 * naming; returns its record, MS_REC_UNTRACKED, and with `birth` set, starts
 * a new life even if the address is known (init of a known address).  A
 * record returned with `birth` set is a life begun at *clock, which is the
 * life's order (its seq and birth) until an entry is written. */
uint32_t ms_table_add(uintptr_t key, int birth, uint64_t *clock);
/* A known address's record, of another kind of lock (memory that held
 * one, never destroyed), begins a life as lock_class -- unless it is of
 * that class already (another thread began it: the check is under the
 * table's lock) -- with the class set with the life. */
uint32_t ms_table_renew_as(uintptr_t key, unsigned lock_class, uint64_t *clock);
/* mutexstat_name_lock of an address: its record if it has one (then the
 * caller names it), MS_REC_UNTRACKED if it cannot have one, else
 * MS_REC_NONE and the name waits for the record its lock's init or first
 * use makes (core/pending_names.h); *kept 0, or -1 if no name can wait. */
uint32_t ms_table_name_later(uintptr_t key, const char *name, uint64_t *clock, int *kept);
/* End a mutex's life, destroyed at caller: its numbers go to its
 * first-lock site's line. */
void ms_table_remove(uintptr_t key, uintptr_t caller);
/* Inside ms_table_remove (its hooks): the destroy's caller; 0 elsewhere,
 * and in the updates that end a life by an init.  Each update has its
 * own (a signal handler's update waits for none: it is refused). */
uintptr_t ms_table_destroyed_at(void);
/* The address in index slot i (or MS_KEY_EMPTY, MS_KEY_TOMB); for a
 * caller that holds its stripes' locks, or a test. */
uintptr_t ms_table_slot_key(uint64_t i);
/* Forget everything (mutexstat_reset). */
void ms_table_reset(void);

/* The cold part of a record, zeroed on first use in this life. */
struct ms_cold *ms_cold_slow(uint32_t r);

/* Record r's read-write lock's reads, a slot taken for its life on first
 * use; NULL when every slot is taken (counted in reads_spent: its reads
 * and writes are not told apart).  ms_reads_peek: the same, taking none,
 * and NULL for a record that is not a read-write lock's (report time). */
struct ms_read_stats *ms_reads_slow(uint32_t r);
struct ms_read_stats *ms_reads_peek(uint32_t r);

/* ms_ticks() at the last reset of the numbers (mutexstat_reset, a fork
 * child's): a timed hold that began before it is not counted. */
extern uint64_t ms_reset_ticks;
/* ... of the last mutexstat_reset() (ms_table_reset_running), 0 if none
 * since the start or the fork: the report says its numbers start there. */
extern uint64_t ms_api_reset_ticks;
/* Resets so far, twice: odd while one is under way (a reader that sees it
 * change, or odd, read numbers that a reset was zeroing). */
extern uint64_t ms_reset_gen;
static inline struct ms_cold *ms_cold(uint32_t r)
{
	if (likely(__atomic_load_n(&ms_table.records[r].flags, __ATOMIC_ACQUIRE) &
		   MS_F_COLD))
		return &ms_table.cold[r];
	return ms_cold_slow(r);
}

static inline struct ms_read_stats *ms_reads(uint32_t r)
{
	uint32_t s = LOAD(&ms_cold(r)->reads);
	struct ms_read_stats *p = &ms_table.reads[s - 1];
	if (likely(s) && LOAD(&p->rec) == r && LOAD(&p->birth) == LOAD(&ms_rec(r)->birth))
		return p;
	return ms_reads_slow(r);
}

/* Position pos of the reads' history of slot rd: history_len entries a
 * slot, side by side, so a read's entry and its unlock's (pos even, pos
 * + 1) share a line. */
static inline struct ms_op *ms_read_ring_at(const struct ms_read_stats *rd, uint64_t pos)
{
	return rd->ring + (pos & ms_table.history_mask);
}

static inline uint64_t *ms_read_ring_ticks(const struct ms_op *e)
{
	return ms_table.read_ring_ticks + (e - ms_table.read_ring);
}

/* The slot record r had when it took a read it still holds, if it is
 * still r's and not taken again since: `life`, the low MS_HELD_LIFE_BITS
 * of the slot's `taken` then, which the held set keeps (a reset gives
 * lives new slots, and the record may get the same one back).  NULL: the
 * unlock goes to the main history.  life ~0u: any (a writer's unlock). */
static inline struct ms_read_stats *ms_reads_held(uint32_t r, uint32_t life)
{
	uint32_t s = LOAD(&ms_table.cold[r].reads);
	struct ms_read_stats *p = &ms_table.reads[s - 1];
	if (!likely(s) || LOAD(&p->rec) != r)
		return NULL;
	if (life != ~0u && life != (LOAD(&p->taken) & ((1u << MS_HELD_LIFE_BITS) - 1)))
		return NULL;
	return p;
}

/* Whether a read hold (held set entry of record r, mode) is of a life that
 * has ended since -- the lock destroyed or initialised again while the
 * thread read it (a MISUSE, said then) -- so that r may be another lock's
 * now, which the thread does not hold: the life's slot is no longer its
 * own.  Not known of a hold whose life had no slot, nor after a reset,
 * which gives up every life's slot: such holds stay. */
static inline int ms_read_hold_ended(uint32_t r, uint32_t mode)
{
	if (!(mode & MS_HELD_RING) || __atomic_load_n(&ms_reset_gen, __ATOMIC_ACQUIRE))
		return 0;
	int ended = !ms_reads_held(r, mode >> MS_HELD_LIFE_SHIFT);
	/* a reset begun meanwhile may have taken the slot: then not known */
	return ended && !__atomic_load_n(&ms_reset_gen, __ATOMIC_ACQUIRE);
}

/* Whether held-set entry (record r, mode) is a read hold still held: a
 * read of a life that goes on. */
static inline int ms_held_read_live(uint32_t r, uint32_t mode)
{
	return (mode & MS_HELD_READ) && !ms_read_hold_ended(r, mode);
}

/* The newest order among the entries of record r's reads' history (0:
 * none, or not a read-write lock with a slot): what a failure of another
 * thread goes past, as it goes past the main history's newest. */
uint64_t ms_reads_newest_order(uint32_t r);
/* ... of slot rd's history up to position ops (its newest history_len). */
uint64_t ms_read_ring_newest(const struct ms_read_stats *rd, uint64_t ops);

/* Reads of record r counted in its slot's history position (0 without a
 * slot: its reads are in the record's count). */
uint64_t ms_rec_ring_reads(uint32_t r);

/* For fork and reset: hold every update lock, so the child gets a table no
 * thread was changing. */
void ms_table_lock(void);
void ms_table_unlock(void);
void ms_table_after_fork_child(void);

/* Iterate over live records: calls fn(key, record, arg) for each. */
void ms_table_each(void (*fn)(uintptr_t key, uint32_t r, void *arg), void *arg);

/* Where record r's lock was last taken, from its history (the newest entry
 * of a lock, a try or a condition wait's retake), 0 if none is kept: for a
 * holder whose held set cannot be read (a fork parent's thread). */
uintptr_t ms_table_last_taken_at(uint32_t r);


/* A mutex life's recent operations, oldest first: the main history and
 * the side ring merged by order, entries of older lives left out.  Fills
 * v (room for history_len + MS_FAIL_RING), returns how many; *first is
 * the first of the newest history_len, *torn counts entries that were
 * being overwritten while read. */
uint32_t ms_history_read(uint32_t r, struct ms_op_view *v, uint32_t *first,
			 uint32_t *torn);
/* The same for the life whose history site line s keeps: 0 if none. */
uint32_t ms_site_history_read(const struct ms_site *s, struct ms_op_view *v,
			      uint32_t *first, uint32_t *torn);

unsigned ms_err_index(int err);
int ms_err_value(unsigned index);

/* A mutex's acquisitions and owner changes as the report shows
 * them: since its life began, or since the last mutexstat_reset().
 *
 * The holder of a mutex bumps both counters with plain stores (the mutex
 * serialises them), so a reset that zeroed them while another
 * thread held the mutex could lose its zero to that thread's increment
 * -- the whole run's count came back.  A reset while threads run writes
 * no counter: it keeps the value it read as the mutex's base (the
 * counters only grow, so that value was exact at one moment), and the
 * report shows the counter less its base.  A base belongs to the life it
 * was taken in (its birth); a new life starts from zero anyway. */
uint64_t ms_rec_acquisitions(uint32_t r);
uint64_t ms_rec_owner_changes(uint32_t r);

/* mutexstat_reset(): every record's numbers back to zero, with bases for
 * the two counters (ms_table_reset zeroes them: for a process whose other
 * threads are gone, a fork child). */
void ms_table_reset_running(void);

#endif
