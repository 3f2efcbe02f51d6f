/* word_hash.h - the hash of a key made of whole 64-bit words (stack frames,
 * record numbers and births): a word at a time, where uthash's own
 * (Jenkins') goes byte by byte (doc/report.md, "Call stacks", has the
 * cost).  The low bits (uthash's bucket) get the high ones folded in.  For
 * uthash, define HASH_FUNCTION with it before including uthash.h. */
#ifndef MUTEXSTAT_WORD_HASH_H
#define MUTEXSTAT_WORD_HASH_H

#include <stddef.h>
#include <stdint.h>

static inline unsigned ms_word_hash(const void *key, size_t len)
{
	const uint64_t *w = key;
	uint64_t h = len;
	for (size_t i = 0; i < len / sizeof *w; i++) {
		h = (h ^ w[i]) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
	}
	return (unsigned)(h ^ (h >> 32));
}

#define MS_WORD_HASH(keyptr, keylen, hashv) ((hashv) = ms_word_hash((keyptr), (keylen)))

#endif
