/* own_malloc.c - a program whose own malloc takes a pthread mutex, and
 * calls it before the library's constructor has run (from .preinit_array,
 * as firefox's mozjemalloc does from libstdc++'s start-up): that lock is
 * the library's first call and starts it, and the start's own mallocs
 * (dlsym's error string, dlopen's lists) come back to this malloc
 * (tests/own_malloc.sh).  The library started while the thread held the
 * mutex: the thread waited for itself, for ever. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

static pthread_mutex_t heap = PTHREAD_MUTEX_INITIALIZER;
static char *arena, *top;
static unsigned long mallocs;

/* (not malloc itself in calloc: gcc makes malloc and a memset of 0 a call
 * of calloc) */
static void *take(size_t n)
{
	pthread_mutex_lock(&heap);
	if (!arena)
		arena = top = mmap(NULL, 1 << 26, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	n = (n + 15) & ~(size_t)15;
	*(size_t *)(void *)top = n;
	void *p = top + 16;
	top += n + 16;
	mallocs++;
	pthread_mutex_unlock(&heap);
	return p;
}

void *malloc(size_t n)
{
	return take(n);
}

void free(void *p)
{
	(void)p;
}

void *calloc(size_t a, size_t b)
{
	void *p = take(a * b);
	memset(p, 0, a * b);
	return p;
}

void *realloc(void *old, size_t n)
{
	void *p = take(n);
	if (old) {
		size_t had = *(size_t *)(void *)((char *)old - 16);
		memcpy(p, old, had < n ? had : n);
	}
	return p;
}

static void early(int argc, char **argv, char **envp)
{
	(void)argc, (void)argv, (void)envp;
	free(malloc(32));
}
__attribute__((section(".preinit_array"), used)) static void (*early_p)(int, char **, char **) = early;

int main(void)
{
	char *s = malloc(64);
	strcpy(s, "own malloc: ok");
	puts(s);
	return mallocs >= 2 ? 0 : 1;
}
