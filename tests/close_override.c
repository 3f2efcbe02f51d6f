/* close_override.c - a program that defines close() itself, taking a
 * mutex in it (chromium's crash handler defines close() to watch the
 * descriptors it owns, and takes a function-local static's guard there)
 * (tests/descriptors.sh).  Its first lock of that mutex comes from code
 * without unwind tables, so the library's stack capture hands the walk to
 * libunwind, whose pipe the library moves to a high number -- with
 * close(), the program's, under the lock being taken: the thread waited
 * for itself.  Exits 77 where the assembly stub is not x86-64's. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

static pthread_mutex_t g = PTHREAD_MUTEX_INITIALIZER;

int close(int fd)
{
	pthread_mutex_lock(&g);
	pthread_mutex_unlock(&g);
	return (int)syscall(SYS_close, fd);
}

#if defined(__x86_64__)
/* a caller with no unwind information, as JIT code and some hand-written
 * assembly have */
void lock_from_asm(pthread_mutex_t *m);
__asm__(".text\n.globl lock_from_asm\n.type lock_from_asm, @function\nlock_from_asm:\n"
	"  sub $8, %rsp\n  call pthread_mutex_lock@PLT\n  add $8, %rsp\n  ret\n");

int main(void)
{
	lock_from_asm(&g);
	pthread_mutex_unlock(&g);
	puts("close_override: done");
	return 0;
}
#else
int main(void)
{
	return 77;
}
#endif
