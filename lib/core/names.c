/* names.c - the names mutexstat_name() gives mutexes, kept for the rest
 * of the run; see names.h. */
#include "core/names.h"
#include "base/fmt.h"
#include "core/thread.h"

#include <string.h>
#include <sys/mman.h>

/* Names live in an arena of ours, mapped in 64 KiB pieces and never freed:
 * a record may point at a name until the end of the run.  Each name is kept
 * once (a hash of the names kept): a program that renames a mutex as its
 * state changes, or gives each new connection's mutex the same name, would
 * otherwise spend the arena (its 4 MiB held 838,848 renames between two
 * names, and every name after that failed). */
#define NAME_MAX_LEN 63
#define ARENA_PIECE 65536
#define ARENA_PIECES 64
#define NAME_BUCKETS 1024

struct kept_name {
	struct kept_name *next; /* in its bucket */
	char text[];
};

static int arena_lock;
static char *arena;
static size_t arena_used, arena_pieces;
static struct kept_name *buckets[NAME_BUCKETS];

void ms_names_after_fork_child(void)
{
	arena_lock = 0;
}

/* A name as the report prints it, into out (NAME_MAX_LEN + 1 bytes): every
 * report line is one line of text, so a control character (a newline, a
 * tab) and a byte that is not UTF-8 become '?', and a name longer than
 * NAME_MAX_LEN bytes is cut before the character that does not fit. */
static size_t printable_name(char *out, const char *name)
{
	const unsigned char *s = (const unsigned char *)name;
	size_t n = strlen(name), i = 0, o = 0;
	while (i < n) {
		size_t len = ms_utf8_len(s + i, n - i);
		if (len <= 1) {
			if (o + 1 > NAME_MAX_LEN)
				break;
			out[o++] = (char)(len && s[i] >= 0x20 && s[i] != 0x7f ? s[i] : '?');
			i++;
			continue;
		}
		if (o + len > NAME_MAX_LEN)
			break;
		memcpy(out + o, s + i, len);
		o += len;
		i += len;
	}
	out[o] = 0;
	return o;
}

static unsigned name_hash(const char *s)
{
	unsigned h = 2166136261u; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h % NAME_BUCKETS;
}

/* A kept name of n bytes from the arena (its lock held), or NULL. */
static struct kept_name *arena_take(size_t n)
{
	size_t need = (sizeof(struct kept_name) + n + 1 + 7) & ~(size_t)7;
	if (!arena || arena_used + need > ARENA_PIECE) {
		void *p = arena_pieces < ARENA_PIECES
				  ? mmap(NULL, ARENA_PIECE, PROT_READ | PROT_WRITE,
					 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
				  : MAP_FAILED;
		if (p == MAP_FAILED)
			return NULL; /* the piece in use may still fit a shorter name */
		arena = p;
		arena_used = 0;
		arena_pieces++;
	}
	struct kept_name *k = (struct kept_name *)(void *)(arena + arena_used);
	arena_used += need;
	return k;
}

/* The kept copy of raw, as the report prints it; NULL if the names'
 * memory is spent. */
const char *ms_name_keep(const char *raw)
{
	char name[NAME_MAX_LEN + 1];
	size_t n = printable_name(name, raw);
	unsigned b = name_hash(name);
	const char *out = NULL;
	ms_async_defer(&ms_self); /* while the lock is held (thread.h) */
	while (__atomic_exchange_n(&arena_lock, 1, __ATOMIC_ACQUIRE))
		__builtin_ia32_pause();
	for (struct kept_name *k = buckets[b]; k && !out; k = k->next)
		if (!strcmp(k->text, name))
			out = k->text;
	struct kept_name *k = out ? NULL : arena_take(n);
	if (k) {
		memcpy(k->text, name, n + 1);
		k->next = buckets[b];
		buckets[b] = k;
		out = k->text;
	}
	__atomic_store_n(&arena_lock, 0, __ATOMIC_RELEASE);
	ms_async_resume(&ms_self);
	return out;
}
