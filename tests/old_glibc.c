/* old_glibc.c - the calls of a program built against an older glibc, for
 * tests/toolchains.sh.  Before 2.34 the mutex functions lived in
 * libpthread.so.0, and a binary built then asks for the versions it was
 * linked with: pthread_mutex_trylock and timedlock@GLIBC_2.2.5 (now
 * compatibility versions beside @@GLIBC_2.34), the robust repair under its
 * old name pthread_mutex_consistent_np@GLIBC_2.4 (today's headers rename
 * it), and the __pthread_mutex_lock and unlock aliases@GLIBC_2.2.5; the
 * rwlock and spin lock calls @GLIBC_2.2.5 too.  Each is named here with
 * .symver, as the old binary's references are.
 *
 * Prints every answer, so the run with the library can be compared. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__)
extern int old_trylock(pthread_mutex_t *m);
extern int old_timedlock(pthread_mutex_t *m, const struct timespec *ts);
extern int old_consistent_np(pthread_mutex_t *m);
extern int alias_lock(pthread_mutex_t *m);
extern int alias_unlock(pthread_mutex_t *m);
__asm__(".symver old_trylock, pthread_mutex_trylock@GLIBC_2.2.5");
__asm__(".symver old_timedlock, pthread_mutex_timedlock@GLIBC_2.2.5");
__asm__(".symver old_consistent_np, pthread_mutex_consistent_np@GLIBC_2.4");
__asm__(".symver alias_lock, __pthread_mutex_lock@GLIBC_2.2.5");
__asm__(".symver alias_unlock, __pthread_mutex_unlock@GLIBC_2.2.5");
/* read-write and spin locks, as a binary of before 2.34 asks for them */
extern int old_rdlock(pthread_rwlock_t *l);
extern int old_wrlock(pthread_rwlock_t *l);
extern int old_rwunlock(pthread_rwlock_t *l);
extern int old_spin_lock(pthread_spinlock_t *s);
extern int old_spin_unlock(pthread_spinlock_t *s);
__asm__(".symver old_rdlock, pthread_rwlock_rdlock@GLIBC_2.2.5");
__asm__(".symver old_wrlock, pthread_rwlock_wrlock@GLIBC_2.2.5");
__asm__(".symver old_rwunlock, pthread_rwlock_unlock@GLIBC_2.2.5");
__asm__(".symver old_spin_lock, pthread_spin_lock@GLIBC_2.2.5");
__asm__(".symver old_spin_unlock, pthread_spin_unlock@GLIBC_2.2.5");

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_spinlock_t spin;

static pthread_mutex_t plain = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t aliased = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t robust;

static void *die_holding(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&robust);
	return NULL;
}

static const char *answer(int rc)
{
	return rc == 0 ? "0" : rc == EOWNERDEAD ? "EOWNERDEAD" : strerror(rc);
}

int main(void)
{
	struct timespec past = { 0, 0 };
	for (int i = 0; i < 10; i++) {
		printf("trylock@GLIBC_2.2.5 %s\n", answer(old_trylock(&plain)));
		pthread_mutex_unlock(&plain);
	}
	for (int i = 0; i < 5; i++) {
		printf("timedlock@GLIBC_2.2.5 %s\n",
		       answer(old_timedlock(&plain, &past)));
		pthread_mutex_unlock(&plain);
	}
	for (int i = 0; i < 3; i++) {
		printf("__pthread_mutex_lock %s\n", answer(alias_lock(&aliased)));
		printf("__pthread_mutex_unlock %s\n", answer(alias_unlock(&aliased)));
	}

	for (int i = 0; i < 10; i++) {
		printf("rdlock@GLIBC_2.2.5 %s\n", answer(old_rdlock(&rw)));
		printf("unlock@GLIBC_2.2.5 %s\n", answer(old_rwunlock(&rw)));
	}
	for (int i = 0; i < 5; i++) {
		printf("wrlock@GLIBC_2.2.5 %s\n", answer(old_wrlock(&rw)));
		printf("unlock@GLIBC_2.2.5 %s\n", answer(old_rwunlock(&rw)));
	}
	pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE);
	for (int i = 0; i < 7; i++) {
		printf("spin_lock@GLIBC_2.2.5 %s\n", answer(old_spin_lock(&spin)));
		printf("spin_unlock@GLIBC_2.2.5 %s\n", answer(old_spin_unlock(&spin)));
	}

	pthread_mutexattr_t attr;
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&robust, &attr);
	pthread_t t;
	if (pthread_create(&t, NULL, die_holding, NULL) != 0)
		return 1;
	pthread_join(t, NULL);
	printf("lock of the dead owner's %s\n", answer(pthread_mutex_lock(&robust)));
	printf("consistent_np@GLIBC_2.4 %s\n", answer(old_consistent_np(&robust)));
	printf("unlock %s\n", answer(pthread_mutex_unlock(&robust)));
	printf("lock again %s\n", answer(pthread_mutex_lock(&robust)));
	printf("unlock %s\n", answer(pthread_mutex_unlock(&robust)));
	return 0;
}
#else
int main(void)
{
	puts("not x86-64: no GLIBC_2.2.5 versions");
	return 77;
}
#endif
