/* ptr_index.c - an index of pointers by hash; see ptr_index.h. */
#include "base/ptr_index.h"

#define FIRST_CAP 64

static void put(struct ms_ptr_index *ix, uint32_t tag, void *item)
{
	size_t i = ms_ptr_index_home(ix, tag);
	while (ix->tags[i])
		i = (i + 1) & (ix->cap - 1);
	ix->tags[i] = tag;
	ix->items[i] = item;
}

static int grow(struct ms_ptr_index *ix, void *(*get_zeroed)(size_t))
{
	size_t cap = ix->cap ? 2 * ix->cap : FIRST_CAP;
	uint32_t *tags = get_zeroed(cap * sizeof *tags);
	void **items = tags ? get_zeroed(cap * sizeof *items) : NULL;
	if (!items)
		return -1;
	struct ms_ptr_index was = *ix;
	ix->tags = tags;
	ix->items = items;
	ix->cap = cap;
	for (size_t i = 0; i < was.cap; i++)
		if (was.tags[i])
			put(ix, was.tags[i], was.items[i]);
	return 0;
}

int ms_ptr_index_add(struct ms_ptr_index *ix, uint32_t hash, void *item,
		     void *(*get_zeroed)(size_t bytes))
{
	if (2 * (ix->count + 1) > ix->cap && grow(ix, get_zeroed) != 0)
		return -1;
	put(ix, ms_ptr_index_tag(hash), item);
	ix->count++;
	return 0;
}

/* Whether slot j's item, whose probe starts at h, may move back to the
 * empty slot i: i lies on its probe, between h and j (cyclically). */
static int may_fill(size_t i, size_t h, size_t j)
{
	return i <= j ? h <= i || h > j : h <= i && h > j;
}

void ms_ptr_index_remove(struct ms_ptr_index *ix, uint32_t hash, const void *item)
{
	if (!ix->cap)
		return;
	uint32_t tag = ms_ptr_index_tag(hash);
	size_t mask = ix->cap - 1, i = ms_ptr_index_home(ix, tag);
	while (ix->tags[i] && !(ix->tags[i] == tag && ix->items[i] == item))
		i = (i + 1) & mask;
	if (!ix->tags[i])
		return;
	/* the items after it in its run move back where their probes find
	 * them: no tombstones, so look-ups stay as short as the index is
	 * full */
	for (size_t j = (i + 1) & mask; ix->tags[j]; j = (j + 1) & mask)
		if (may_fill(i, ms_ptr_index_home(ix, ix->tags[j]), j)) {
			ix->tags[i] = ix->tags[j];
			ix->items[i] = ix->items[j];
			i = j;
		}
	ix->tags[i] = 0;
	ix->items[i] = NULL;
	ix->count--;
}
