#!/bin/sh
# malloc_fails.sh - a program whose malloc fails from some moment on, and
# goes on without it.  A report made then by libdw used libdw's and
# libelf's thread-local storage, whose blocks glibc makes with malloc at
# a thread's first use -- and glibc ends the process when that malloc
# fails ("cannot allocate memory for thread-local data: ABORT", status
# 127): the exit report and a live dump ended such a program.  The blocks
# are now made only from a chunk malloc has just given (and taken back);
# when it gives none, the report names functions with dladdr.  The same
# holds for libunwind's block in a new thread (it then takes no stacks).
. "$top_srcdir/tests/lib.sh"

CC=${CC:-cc}
cat >"$WORK/failing.c" <<'EOF2'
/* malloc, calloc and realloc fail once failing_malloc_on() was called */
#include <errno.h>
#include <stddef.h>
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
static int failing;
void failing_malloc_on(void)
{
	__atomic_store_n(&failing, 1, __ATOMIC_RELEASE);
}
static int fails(void)
{
	if (!__atomic_load_n(&failing, __ATOMIC_ACQUIRE))
		return 0;
	errno = ENOMEM;
	return 1;
}
void *malloc(size_t n)
{
	return fails() ? NULL : __libc_malloc(n);
}
void *calloc(size_t n, size_t size)
{
	return fails() ? NULL : __libc_calloc(n, size);
}
void *realloc(void *p, size_t n)
{
	return fails() ? NULL : __libc_realloc(p, n);
}
EOF2
cat >"$WORK/prog.c" <<'EOF2'
/* prog [FILE]: two threads and then main lock a mutex, a third writes a report with
 * mutexstat_dump (under the library: libdw is loaded, and that thread has
 * its blocks); then malloc fails, and the program goes on.  With FILE: it
 * asks for a live dump and waits until FILE (the dump) is there (the
 * exit report, after it, waits until it is written). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER; /* exported (-rdynamic): dladdr names it */
static void *work(void *arg)
{
	for (int i = 0; i < 1000; i++) {
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
	}
	return arg;
}
static void *dump(void *arg)
{
	int (*fn)(int) = (int (*)(int))dlsym(RTLD_DEFAULT, "mutexstat_dump");
	int fd = open("/dev/null", O_WRONLY);
	if (fn && fd >= 0)
		fn(fd);
	return arg;
}
static void say(const char *s)
{
	if (write(1, s, strlen(s)) < 0)
		_exit(4);
}
int main(int argc, char **argv)
{
	pthread_t t[3];
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, work, NULL) != 0)
			return 2;
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	/* after the locks: a report with no lock to name loads no libdw
	 * (the exit report then found none to load, 1 run in 60) */
	if (pthread_create(&t[2], NULL, dump, NULL) != 0)
		return 2;
	pthread_join(t[2], NULL);
	work(NULL);
	void (*on)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "failing_malloc_on");
	if (!on)
		return 3;
	on();
	void *p = malloc(16);
	say(p ? "malloc works\n" : "malloc fails\n");
	if (argc > 1) {
		raise(SIGUSR1);
		struct timespec tick = { 0, 10000000 };
		for (int i = 0; i < 1000 && access(argv[1], F_OK) != 0; i++)
			nanosleep(&tick, NULL);
		say(access(argv[1], F_OK) == 0 ? "dumped\n" : "no dump\n");
	}
	return 0;
}
EOF2
if ! "$CC" -shared -fPIC -o "$WORK/failing.so" "$WORK/failing.c" ||
   ! "$CC" -pthread -rdynamic -o "$WORK/prog" "$WORK/prog.c" -ldl; then
	echo "SKIP: cannot compile the test's programs with $CC"
	exit 77
fi
skip_if_sanitized "ASan's allocator stands in for malloc"

rc=0
bare=$(env LD_PRELOAD="$WORK/failing.so" "$WORK/prog") || rc=$?
expect_eq "without the library: malloc fails, the program ends well" "$rc $bare" "0 malloc fails"

# the exit report, from the main thread
rc=0
env LD_PRELOAD="$WORK/failing.so:$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/report" \
    "$WORK/prog" >"$WORK/out" 2>"$WORK/err" || rc=$?
expect_eq "the exit report once malloc fails: the program's status and output" \
    "$rc $(cat "$WORK/out")" "0 $bare"
expect_eq "the exit report: nothing on stderr" "$(cat "$WORK/err")" ""
expect_grep "the exit report: written" \
    '^mutexstat: prog \(pid [0-9]+\) ran .*: 3 threads used mutexes, 1 mutex tracked, 0 untracked$' \
    "$WORK/report"
expect_grep "the exit report: names from dladdr, and why" \
    '^  names: from dladdr \(malloc failed\): ' "$WORK/report"
expect_grep "the exit report: an exported mutex named by dladdr too" \
    '^#1 mutex 0x[0-9a-f]+ <m> \(normal, no init seen\)$' "$WORK/report"

# a live dump, from the dump thread, then the exit report
rm -f "$WORK"/report*
rc=0
env LD_PRELOAD="$WORK/failing.so:$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/report" \
    "$WORK/prog" "$WORK/report.1" >"$WORK/out" 2>"$WORK/err" || rc=$?
expect_eq "a live dump once malloc fails: the program's status and output" \
    "$rc $(cat "$WORK/out")" "0 $bare
dumped"
expect_grep "a live dump: written" \
    '^mutexstat: prog \(pid [0-9]+\) ran .*: 3 threads used mutexes, 1 mutex tracked, 0 untracked$' \
    "$WORK/report.1"
expect_grep "a live dump: names from dladdr, and why" \
    '^  names: from dladdr \(malloc failed\): ' "$WORK/report.1"
expect_grep "a live dump: then the exit report" \
    '^mutexstat: prog \(pid [0-9]+\) ran .*: 3 threads used mutexes, 1 mutex tracked, 0 untracked$' \
    "$WORK/report"

finish
