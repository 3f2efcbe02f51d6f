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

# watched PROGRAM ARG...: under the library with the watchdog, whose dump
# is $WORK/report.1; its status in rc
watched() {
	rm -f "$WORK"/report*
	rc=0
	env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/report" MUTEXSTAT_WATCHDOG=1 \
		timeout 60 "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
}

for left in 5000 8000; do
	watched "$WORK/deep" "$left" "$WORK/report.1"
	expect_eq "$left bytes left, the watchdog's dump: the program ends as without the library" \
		"$rc $(cat "$WORK/out")" "0 ok"
	expect_grep "$left bytes left: the dump says why the holder's stack is not shown" \
		"where it is now: not known \(asked, it was too near its stack's end to walk it\)$" \
		"$WORK/report.1"
done
watched "$WORK/deep" cancelling "$WORK/report.1"
expect_eq "inside the cancellation handler: the program ends as without the library" \
	"$rc $(cat "$WORK/out")" "0 ok"
expect_grep "inside the cancellation handler: not walked, and said why" \
	"where it is now: not known \(asked, it was being cancelled: no walk then\)$" \
	"$WORK/report.1"

# A coroutine's stack (makecontext), 8 KB above a guard page: how much of
# it is left is not known.  A thread running there, holding the mutex
# another waits for, was walked by the dump's handler into the guard page
# (SIGSEGV, every run); it is not walked now, and the dump says why --
# the main thread neither, whose stack's bounds the library takes from
# where the program's stack began.  And
# exit() called on a 16 KB one, there or in the main thread, wrote the
# report on that stack and died in its guard page, no report written:
# the report takes a stack of its own there.
cat >"$WORK/coro.c" <<'EOF2'
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>
static ucontext_t back, there;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static volatile int held, stop;
static const char *dump_file;
static void holding(void)
{
	pthread_mutex_lock(&m);
	held = 1;
	for (volatile unsigned long x = 0; !stop; x++)
		; /* running, holding m */
	pthread_mutex_unlock(&m);
}
static void exiting(void)
{
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	puts("ok");
	fflush(stdout);
	exit(0);
}
/* fn on a stack of size bytes above a guard page */
static void on_coroutine(void (*fn)(void), size_t size)
{
	char *stack = mmap(NULL, size + 4096, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	mprotect(stack, 4096, PROT_NONE);
	getcontext(&there);
	there.uc_stack.ss_sp = stack + 4096;
	there.uc_stack.ss_size = size;
	there.uc_link = &back;
	makecontext(&there, fn, 0);
	swapcontext(&back, &there);
}
static void *holder(void *arg)
{
	on_coroutine(holding, 8192);
	return arg;
}
static void *exiter(void *arg)
{
	on_coroutine(exiting, 16384);
	return arg;
}
/* main holds m on a coroutine's stack: a thread waits for m, another
 * ends the hold once the dump's file is there */
static void *waiting(void *arg)
{
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	return arg;
}
static void *watching(void *arg)
{
	pthread_t w;
	while (!held)
		usleep(1000);
	pthread_create(&w, NULL, waiting, NULL);
	for (int i = 0; i < 2000 && access(dump_file, F_OK) != 0; i++)
		usleep(10000);
	usleep(200000); /* written whole */
	stop = 1;
	pthread_join(w, NULL);
	return arg;
}
int main(int argc, char **argv)
{
	pthread_t t;
	if (!strcmp(argv[1], "exit"))
		on_coroutine(exiting, 16384);
	if (!strcmp(argv[1], "exit-thread")) {
		pthread_create(&t, NULL, exiter, NULL);
		pthread_join(t, NULL);
	}
	dump_file = argv[2];
	if (!strcmp(argv[1], "dump-main")) {
		pthread_mutex_lock(&m); /* the library's start, on main's own stack */
		pthread_mutex_unlock(&m);
		pthread_create(&t, NULL, watching, NULL);
		on_coroutine(holding, 8192);
		pthread_join(t, NULL);
		puts("ok");
		return 0;
	}
	pthread_create(&t, NULL, holder, NULL);
	while (!held)
		usleep(1000);
	/* the dump's file there, or 20 s; then another thread waits */
	for (int i = 0; i < 2000 && access(dump_file, F_OK) != 0; i++) {
		if (i == 0) {
			pthread_t w;
			pthread_create(&w, NULL, (void *(*)(void *))holding, NULL);
			pthread_detach(w);
		}
		usleep(10000);
	}
	usleep(200000); /* written whole */
	stop = 1;
	pthread_join(t, NULL);
	puts("ok");
	return 0;
}
EOF2
# shellcheck disable=SC2086 # SAN_FLAGS is a list of flags
if "$CC" -O0 $SAN_FLAGS -pthread -o "$WORK/coro" "$WORK/coro.c"; then
	watched "$WORK/coro" dump "$WORK/report.1"
	expect_eq "a holder on an 8 KB coroutine stack, the watchdog's dump: the program ends as without the library" \
		"$rc $(cat "$WORK/out")" "0 ok"
	expect_grep "a holder on a coroutine's stack: not walked, and said why" \
		"where it is now: not known \(asked, on a coroutine's stack: no walk there\)$" \
		"$WORK/report.1"
	watched "$WORK/coro" dump-main "$WORK/report.1"
	expect_eq "the main thread holding on an 8 KB coroutine stack, the watchdog's dump: the program ends as without the library" \
		"$rc $(cat "$WORK/out")" "0 ok"
	expect_grep "the main thread on a coroutine's stack: not walked, and said why" \
		"where it is now: not known \(asked, on a coroutine's stack: no walk there\)$" \
		"$WORK/report.1"
	for how in exit exit-thread; do
		rm -f "$WORK"/report*
		rc=0
		env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/report" \
			timeout 60 "$WORK/coro" "$how" >"$WORK/out" 2>"$WORK/err" || rc=$?
		expect_eq "$how on a 16 KB coroutine stack: the program ends as without the library" \
			"$rc $(cat "$WORK/out")" "0 ok"
		expect_grep "$how on a coroutine's stack: its report" \
			'^mutexstat: coro \(pid [0-9]+\) ran .*: [12] threads? used mutexes, 1 mutex tracked' \
			"$WORK/report"
	done
else
	fail "cannot build coro.c"
fi
finish
