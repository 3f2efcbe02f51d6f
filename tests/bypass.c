/* bypass.c - mutex calls that go to glibc without passing the library, for
 * tests/bypassed_calls.sh: a lock made through a handle to libc.so.6
 * (dlsym), or by a library opened RTLD_DEEPBIND (argv[1]), and unlocked
 * the ordinary way; then the ordinary lock and unlock.  Prints what each
 * call answered. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t by_handle = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t by_deep = PTHREAD_MUTEX_INITIALIZER;

int main(int argc, char **argv)
{
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *deep = argc > 1 ? dlopen(argv[1], RTLD_NOW | RTLD_DEEPBIND) : NULL;
	if (!libc || !deep) {
		printf("dlopen: %s\n", dlerror());
		return 1;
	}
	int (*glibc_lock)(pthread_mutex_t *) =
		(int (*)(pthread_mutex_t *))dlsym(libc, "pthread_mutex_lock");
	int (*deep_lock)(pthread_mutex_t *) =
		(int (*)(pthread_mutex_t *))dlsym(deep, "deep_lock");
	int (*deep_unlock)(pthread_mutex_t *) =
		(int (*)(pthread_mutex_t *))dlsym(deep, "deep_unlock");
	if (!glibc_lock || !deep_lock || !deep_unlock) {
		printf("dlsym: %s\n", dlerror());
		return 1;
	}
	int r[8];
	r[0] = glibc_lock(&by_handle);
	r[1] = pthread_mutex_unlock(&by_handle);
	r[2] = pthread_mutex_lock(&by_handle); /* first seen: by_handle */
	r[3] = pthread_mutex_unlock(&by_handle);
	r[4] = deep_lock(&by_deep);
	r[5] = pthread_mutex_unlock(&by_deep);
	r[6] = pthread_mutex_lock(&by_deep); /* first seen: by_deep */
	r[7] = deep_unlock(&by_deep);
	printf("%d %d %d %d %d %d %d %d\n", r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7]);
	printf("by_handle %p by_deep %p\n", (void *)&by_handle, (void *)&by_deep);
	return 0;
}
