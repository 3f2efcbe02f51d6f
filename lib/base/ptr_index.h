/* ptr_index.h - an index of pointers by a 32-bit hash: open addressing,
 * linear probing, the hashes in an array of their own beside the
 * pointers, so that a look-up reads one line of hashes and only the items
 * whose hash is the key's.  A chained hash table (uthash's) walked a chain
 * of items far apart in memory, a cache miss each, for every look-up of
 * the lock-order graph's edges and nodes.
 *
 * Memory comes from the caller's allocator (zeroed, never given back: a
 * grown index leaves its old arrays, as large as half the new ones, to
 * the allocator); no locks (the caller serialises all use), no
 * allocation but to grow. */
#ifndef MUTEXSTAT_PTR_INDEX_H
#define MUTEXSTAT_PTR_INDEX_H

#include <stddef.h>
#include <stdint.h>

struct ms_ptr_index {
	uint32_t *tags; /* the items' hashes, with bit 0 set; 0: an empty slot */
	void **items;
	size_t cap;     /* slots, a power of two; 0 before the first add */
	size_t count;
};

/* Whether item is the one key asks for (the caller's). */
typedef int ms_ptr_index_match(const void *item, const void *key);

/* An item's tag: its hash, never 0; its probe starts at the bits above
 * bit 0, which is always set. */
static inline uint32_t ms_ptr_index_tag(uint32_t hash)
{
	return hash | 1;
}

static inline size_t ms_ptr_index_home(const struct ms_ptr_index *ix, uint32_t tag)
{
	return (size_t)(tag >> 1) & (ix->cap - 1);
}

/* The item of this hash that match() takes for key, NULL if none.  Inline,
 * so that a caller's match is too. */
static inline void *ms_ptr_index_find(const struct ms_ptr_index *ix, uint32_t hash,
				      ms_ptr_index_match *match, const void *key)
{
	if (!ix->cap)
		return NULL;
	uint32_t tag = ms_ptr_index_tag(hash);
	for (size_t i = ms_ptr_index_home(ix, tag);; i = (i + 1) & (ix->cap - 1)) {
		if (!ix->tags[i])
			return NULL;
		if (ix->tags[i] == tag && match(ix->items[i], key))
			return ix->items[i];
	}
}

/* Add item (not there yet) with this hash, growing the index first when
 * half full.  Returns 0, or -1 if it had to grow and get_zeroed gave nothing
 * (the item is not added). */
int ms_ptr_index_add(struct ms_ptr_index *ix, uint32_t hash, void *item,
		     void *(*get_zeroed)(size_t bytes));

/* Take item, added with this hash, out of the index (nothing if it is
 * not there). */
void ms_ptr_index_remove(struct ms_ptr_index *ix, uint32_t hash, const void *item);

#endif
