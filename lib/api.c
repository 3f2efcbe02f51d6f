/* api.c - the public mutexstat_* functions (include/mutexstat.h). */
#define _GNU_SOURCE
#include "mutexstat.h"
#include "init.h"
#include "internal.h"
#include "record.h"
#include "report.h"
#include "table.h"
#include "thread.h"

#include <string.h>
#include <sys/mman.h>

MS_EXPORT int mutexstat_dump(int fd)
{
	if (ms_start_lazily() && !ms_active)
		return -1;
	return ms_report(fd);
}

MS_EXPORT void mutexstat_reset(void)
{
	if (ms_start_lazily())
		return;
	ms_guard_enter(&ms_self);
	ms_table_reset();
	ms_guard_leave(&ms_self);
}

/* Names live in an arena of ours, mapped in 64 KiB pieces and never freed:
 * a record may point at a name until the end of the run. */
#define NAME_MAX_LEN 63
#define ARENA_PIECE 65536
#define ARENA_PIECES 64

static int arena_lock;
static char *arena;
static size_t arena_used, arena_pieces;

void ms_api_after_fork_child(void)
{
	arena_lock = 0;
}

static const char *copy_name(const char *name)
{
	size_t n = strnlen(name, NAME_MAX_LEN);
	char *out = NULL;
	while (__atomic_exchange_n(&arena_lock, 1, __ATOMIC_ACQUIRE))
		__builtin_ia32_pause();
	if (!arena || arena_used + n + 1 > ARENA_PIECE) {
		void *p = arena_pieces < ARENA_PIECES
				  ? mmap(NULL, ARENA_PIECE, PROT_READ | PROT_WRITE,
					 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
				  : MAP_FAILED;
		if (p != MAP_FAILED) {
			arena = p;
			arena_used = 0;
			arena_pieces++;
		} else
			arena = NULL;
	}
	if (arena) {
		out = arena + arena_used;
		memcpy(out, name, n);
		out[n] = 0;
		arena_used += n + 1;
	}
	__atomic_store_n(&arena_lock, 0, __ATOMIC_RELEASE);
	return out;
}

MS_EXPORT int mutexstat_name(const pthread_mutex_t *mutex, const char *name)
{
	struct ms_thread *t = ms_thread();
	if (!mutex || ms_start_lazily())
		return -1;
	uint32_t r = ms_table_find((uintptr_t)mutex);
	if (r == MS_REC_NONE)
		r = ms_first_use(t, (pthread_mutex_t *)mutex, 0);
	if (r == MS_REC_UNTRACKED || r == MS_REC_NONE)
		return -1;
	const char *copy = name ? copy_name(name) : NULL;
	if (name && !copy)
		return -1;
	STORE(&ms_cold(r)->name, copy);
	return 0;
}
