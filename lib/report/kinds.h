/* kinds.h - what each kind of lock is called in the report, its modes, the
 * variable a lock is, and an rwlock's reads apart from its writes
 * (kinds.c). */
#ifndef MUTEXSTAT_KINDS_H
#define MUTEXSTAT_KINDS_H

#include "base/fmt.h"
#include "core/table.h"

#include <stddef.h>
#include <stdint.h>

/* A mutex's kind as glibc had it ("normal", "recursive robust", ...), an
 * rwlock's ("reader-preferring", ...), "spin"; ", no init seen" after. */
const char *ms_kind_name(char *out, size_t cap, uint32_t flags);
/* A live rwlock's read acquisitions (its writes are counted, the reads
 * are the rest: table.h's ms_read_stats). */
uint64_t ms_rw_reads(uint32_t r);
/* All of a live rwlock's reads, as an ended line (a site) sums them. */
void ms_rw_reads_of(struct ms_site_reads *out, uint32_t r);
/* What a record with these flags is called: "mutex", "rwlock", "spin lock". */
const char *ms_lock_noun(uint32_t flags);
/* " <cache_lock>": the variable the lock at key is, if its module's symbols
 * say (stacks/symbols.h: a static or global lock, or one inside a struct or
 * an array that is), cut to cols columns in the middle of its name, its
 * ends and offset kept ("customer...branch+0x248"); nothing for a lock on
 * the heap or a stack.  After the lock's address, as gdb prints a pointer. */
void ms_fmt_lock_variable(struct ms_fmt *f, uintptr_t key, size_t cols);
/* The same text in out (" <cache_lock>" or ""), for a format's "%s". */
const char *ms_lock_variable_tag(char *out, size_t cap, uintptr_t key, size_t cols);
/* The variable alone, "cache_lock", in out; "" if none (as above). */
const char *ms_lock_variable(char *out, size_t cap, uintptr_t key, size_t cols);
/* The most a lock's variable and name may take of a line: each its own
 * (var_cols, name_cols), both together room columns -- what the line's
 * other text leaves of its 120. */
struct ms_names_room {
	size_t var_cols, name_cols, room;
	int module; /* the variable's module after it: " <lock> (libfoo.so)" */
};
/* " <cache_lock> \"queue\"" in out: the variable (as ms_fmt_lock_variable)
 * and the name the program gave the lock (name; NULL for none), each cut
 * to its most and both to r->room, the longer cut first -- neither below
 * 12 columns, where a line with no more room goes past its 120. */
const char *ms_lock_names(char *out, size_t cap, uintptr_t key, const char *name,
			  const struct ms_names_room *r);
/* "condition 0x.. <job_cv> (mutex 0x.. <job_mu> \"jobs\")": a condition
 * wait's objects, their variables and the mutex's name in room columns. */
const char *ms_cond_wait_objects(char *out, size_t cap, uintptr_t cond, uintptr_t mutex,
				 const char *mname, size_t room);
/* Marks alike[i] for each of the n locks at keys[i] (MS_ALIKE_MAX at most)
 * whose variable, cut to cols, reads as another's of them in another
 * module -- two libraries' static `lock`: the module then tells them
 * apart (ms_names_room's module), and only then. */
#define MS_ALIKE_MAX 64
void ms_locks_alike(unsigned char *alike, const uintptr_t *keys, size_t n, size_t cols);
/* What a report line's 120 columns leave after text of used bytes (0 past
 * them): the room of a lock's names between the rest of its line. */
size_t ms_line_room(size_t used);
/* The variable, uncut, as ms_symbolize_lock names it for the lock at key
 * (tracked now: from the module loaded when its life began): 1 with it
 * in out, or 0. */
int ms_lock_symbol(uintptr_t key, char *out, size_t cap);
/* An edge's modes (lockgraph.h) as a held or a taken lock's: "" for an
 * exclusive lock, " (read)", " (write)", " (read or write)". */
const char *ms_edge_mode_text(uint32_t modes, int taken, uint32_t flags);
/* An rwlock's reads (c), as an ended line keeps them: reads = acquisitions
 * less the writes counted. */
void ms_reads_line(struct ms_site_reads *o, const struct ms_read_stats *c,
		   uint64_t acquisitions);
/* The most readers at once a line's reads show: kept from two readers up
 * (one alone is not looked at: other_locks.c), so 1 for any read. */
uint64_t ms_readers_max(const struct ms_site_reads *rd);

#endif
