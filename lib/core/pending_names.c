/* pending_names.c - names waiting for their lock's record; see
 * pending_names.h. */
#include "core/pending_names.h"

#include <stddef.h>

/* A slot's key: 0 free, CLAIMED while a put fills it, else the address. */
#define CLAIMED 1u

struct pending {
	uintptr_t key;
	const char *name;
};

static struct pending slots[MS_PENDING_NAMES];
static uint32_t used_hi; /* slots at or past this were never used */
uint32_t ms_pending_names_n;

static struct pending *find(uintptr_t key)
{
	uint32_t hi = __atomic_load_n(&used_hi, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < hi; i++)
		if (__atomic_load_n(&slots[i].key, __ATOMIC_ACQUIRE) == key)
			return &slots[i];
	return NULL;
}

static void let_go(struct pending *p)
{
	__atomic_store_n(&p->key, 0, __ATOMIC_RELEASE);
	__atomic_sub_fetch(&ms_pending_names_n, 1, __ATOMIC_RELAXED);
}

int ms_pending_name_put(uintptr_t key, const char *name)
{
	/* the caller holds key's stripe lock: no other put or take of key */
	struct pending *p = find(key);
	if (p) {
		if (name)
			__atomic_store_n(&p->name, name, __ATOMIC_RELEASE);
		else
			let_go(p);
		return 0;
	}
	if (!name)
		return 0;
	for (uint32_t i = 0; i < MS_PENDING_NAMES; i++) {
		uintptr_t free_key = 0;
		if (__atomic_load_n(&slots[i].key, __ATOMIC_RELAXED) ||
		    !__atomic_compare_exchange_n(&slots[i].key, &free_key, CLAIMED, 0,
						 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			continue;
		__atomic_store_n(&slots[i].name, name, __ATOMIC_RELAXED);
		uint32_t hi = __atomic_load_n(&used_hi, __ATOMIC_RELAXED);
		while (hi < i + 1 &&
		       !__atomic_compare_exchange_n(&used_hi, &hi, i + 1, 0,
						    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
			;
		__atomic_add_fetch(&ms_pending_names_n, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&slots[i].key, key, __ATOMIC_RELEASE);
		return 0;
	}
	return -1;
}

const char *ms_pending_name_take(uintptr_t key)
{
	struct pending *p = find(key);
	if (!p)
		return NULL;
	const char *name = __atomic_load_n(&p->name, __ATOMIC_ACQUIRE);
	let_go(p);
	return name;
}
