#!/bin/sh
# tests/small_stack.sh - a live dump asks a running thread where it is
# with a signal, whose handler walks the thread's stack on that stack: a
# thread deep in a recursion, 5 KB from the end of its 16 KB stack,
# holding a mutex another thread waits for, died of SIGSEGV in that walk
# (MUTEXSTAT_WATCHDOG's dump, and kill -USR1's).  Near its stack's end a
# thread is not walked, and the report says so.  Nor is one asked inside
# glibc's cancellation handler (SIGCANCEL blocked), where the walk's read()
# waited for the cancellation to end, for ever: "cancelling" blocks that
# signal by a system call, as the kernel does while the handler runs.
. "$top_srcdir/tests/lib.sh"

CC=${CC:-cc}
cat >"$WORK/deep.c" <<'EOF2'
#define _GNU_SOURCE
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static volatile int held, stop;
static char *low;
static size_t left;
static __attribute__((noinline)) void at_depth(void)
{
	pthread_mutex_lock(&m);
	held = 1;
	for (volatile unsigned long x = 0; !stop; x++)
		; /* running, holding m */
	pthread_mutex_unlock(&m);
}
static __attribute__((noinline)) void down(void)
{
	char pad[256];
	memset(pad, 1, sizeof pad);
	__asm__ volatile("" : : "r"(pad) : "memory");
	char here;
	if ((size_t)(&here - low) > left)
		down();
	else
		at_depth();
}
static void *cancelling(void *arg)
{
	unsigned long set = 1ul << (32 - 1); /* SIGCANCEL, past glibc's filter */
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &set, NULL, sizeof set);
	pthread_mutex_lock(&m);
	held = 1;
	for (volatile unsigned long x = 0; !stop; x++)
		; /* running, holding m */
	pthread_mutex_unlock(&m);
	return arg;
}
static void *deep(void *arg)
{
	pthread_attr_t a;
	void *addr;
	size_t size;
	pthread_getattr_np(pthread_self(), &a);
	pthread_attr_getstack(&a, &addr, &size);
	low = addr;
	pthread_mutex_lock(&m); /* its first lock, with room */
	pthread_mutex_unlock(&m);
	down();
	return arg;
}
static void *waiter(void *arg)
{
	while (!held)
		usleep(1000);
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	return arg;
}
int main(int argc, char **argv)
{
	left = (size_t)atoi(argv[1]);
	pthread_attr_t a;
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, PTHREAD_STACK_MIN);
	pthread_t t1, t2;
	if (!strcmp(argv[1], "cancelling"))
		pthread_create(&t1, NULL, cancelling, NULL);
	else
		pthread_create(&t1, &a, deep, NULL);
	pthread_create(&t2, NULL, waiter, NULL);
	while (!held)
		usleep(1000);
	/* the dump's file (argv[2]) there, or 20 s */
	for (int i = 0; i < 2000 && access(argv[2], F_OK) != 0; i++)
		usleep(10000);
	usleep(200000); /* written whole */
	stop = 1;
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	puts("ok");
	return 0;
}
EOF2
# shellcheck disable=SC2086 # SAN_FLAGS is a list of flags
"$CC" -O0 $SAN_FLAGS -pthread -o "$WORK/deep" "$WORK/deep.c" || { fail "cannot build deep.c"; finish; }
skip_if_sanitized "ASan's frames and shadow take more of a 16 KB stack than the program leaves"

for left in 5000 8000; do
	rm -f "$WORK"/report*
	rc=0
	env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/report" MUTEXSTAT_WATCHDOG=1 \
		timeout 60 "$WORK/deep" "$left" "$WORK/report.1" >"$WORK/out" 2>"$WORK/err" || rc=$?
	expect_eq "$left bytes left, the watchdog's dump: the program ends as without the library" \
		"$rc $(cat "$WORK/out")" "0 ok"
	expect_grep "$left bytes left: the dump says why the holder's stack is not shown" \
		"where it is now: not known \(asked, it was too near its stack's end to walk it\)$" \
		"$WORK/report.1"
done
rm -f "$WORK"/report*
rc=0
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/report" MUTEXSTAT_WATCHDOG=1 \
	timeout 60 "$WORK/deep" cancelling "$WORK/report.1" >"$WORK/out" 2>"$WORK/err" || rc=$?
expect_eq "inside the cancellation handler: the program ends as without the library" \
	"$rc $(cat "$WORK/out")" "0 ok"
expect_grep "inside the cancellation handler: not walked, and said why" \
	"where it is now: not known \(asked, it was being cancelled: no walk then\)$" \
	"$WORK/report.1"
finish
