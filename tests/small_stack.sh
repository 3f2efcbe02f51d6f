#!/bin/sh
# small_stack.sh - a report written on a small stack.  The exit report runs
# on the stack of the thread that exits, and a live dump on the dump
# thread's, as large as ulimit -s by default; a report needs more than 64
# KiB (its own frames are 67 KiB, libdw's come on top).  Under ulimit -s 64
# the program alone runs and ends well; under the library its exit report,
# from the main thread or from a thread of ulimit -s, once ended it with
# SIGSEGV (and so did a live dump: the dump thread's stack is now 2 MiB).  The report now has a stack of its own (2
# MiB) wherever the thread's is smaller -- a thread of PTHREAD_STACK_MIN
# too, whose exit report overflowed into the heap, and mutexstat_dump
# called on one.
. "$top_srcdir/tests/lib.sh"

S="$top_builddir/tests/settings"
SIG="$top_builddir/tests/signals"

for kb in 64 128; do
	bare=$( (ulimit -s $kb && "$S" threads 4) 2>&1) || :
	if [ "$bare" != "4 of 4 threads started, counter 4000" ]; then
		echo "(ulimit -s $kb: the program alone does not run here: $bare)"
		continue
	fi
	rc=0
	(ulimit -s $kb && exec env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/report" \
	    "$S" threads 4) >"$WORK/out" 2>"$WORK/err" || rc=$?
	expect_eq "ulimit -s $kb, exit report from the main thread: status and output" \
	    "$rc $(cat "$WORK/out")" "0 $bare"
	expect_eq "ulimit -s $kb: nothing on stderr" "$(cat "$WORK/err")" ""
	expect_grep "ulimit -s $kb: the report" \
	    '^mutexstat: settings \(pid [0-9]+\) ran .*: 4 threads used mutexes, 1 mutex tracked, 0 untracked$' \
	    "$WORK/report"
	expect_grep "ulimit -s $kb: 4000 acquisitions of the one mutex" '^ +1 0x[0-9a-f]+ +4000 ' "$WORK/report"

	# exit(5) from a thread whose stack is ulimit -s
	bare=$( (ulimit -s $kb && "$SIG" thread-exit) 2>&1; echo "status $?")
	rm -f "$WORK/report"
	rc=0
	(ulimit -s $kb && exec env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/report" \
	    "$SIG" thread-exit) >"$WORK/out" 2>"$WORK/err" || rc=$?
	expect_eq "ulimit -s $kb, exit report from a thread: status and output" \
	    "$(cat "$WORK/out"; echo "status $rc")" "$bare"
	expect_grep "ulimit -s $kb, exit from a thread: the report, the mutex still held" \
	    '^Mutexes still locked:$' "$WORK/report"
done

# exit() from a thread the program made with the smallest stack there is
# (PTHREAD_STACK_MIN, 16 KiB): the report on that stack overflowed it
# into the heap ("malloc(): memory corruption", SIGABRT)
CC=${CC:-cc}
cat >"$WORK/tiny.c" <<'EOF2'
/* tiny [dump FILE | usr1 FILE]: a thread of PTHREAD_STACK_MIN locks a
 * mutex and calls exit(3); or calls mutexstat_dump into FILE, and the
 * program ends; or (usr1) a thread locks it, the program asks for a live
 * dump and waits until FILE, the dump, is there */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static const char *file = "/dev/null";
static void *lock_once(void *arg)
{
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	return arg;
}
static void *dump(void *arg)
{
	int (*fn)(int) = (int (*)(int))dlsym(RTLD_DEFAULT, "mutexstat_dump");
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	printf("mutexstat_dump: %d\n", fn && fd >= 0 ? fn(fd) : -2);
	return arg;
}
static void *leave(void *arg)
{
	pthread_mutex_lock(&m);
	printf("exit from a thread of %d bytes\n", PTHREAD_STACK_MIN);
	fflush(stdout);
	exit(3);
	return arg;
}
int main(int argc, char **argv)
{
	pthread_attr_t attr;
	pthread_t t;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, PTHREAD_STACK_MIN);
	if (argc == 3 && !strcmp(argv[1], "usr1")) {
		if (pthread_create(&t, NULL, lock_once, NULL) != 0)
			return 2;
		pthread_join(t, NULL);
		raise(SIGUSR1);
		for (int i = 0; i < 1000 && access(argv[2], F_OK) != 0; i++)
			usleep(10000);
		printf("%s\n", access(argv[2], F_OK) == 0 ? "dumped" : "no dump");
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "dump")) {
		file = argv[2];
		if (pthread_create(&t, &attr, dump, NULL) != 0)
			return 2;
		pthread_join(t, NULL);
		return 0;
	}
	if (pthread_create(&t, &attr, leave, NULL) != 0)
		return 2;
	pause();
	return 0;
}
EOF2
if "$CC" -pthread -o "$WORK/tiny" "$WORK/tiny.c" -ldl; then
	bare=$("$WORK/tiny"; echo "status $?")
	rm -f "$WORK/report"
	rc=0
	env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/report" "$WORK/tiny" \
	    >"$WORK/out" 2>"$WORK/err" || rc=$?
	expect_eq "exit from a thread of PTHREAD_STACK_MIN: status and output" \
	    "$(cat "$WORK/out"; echo "status $rc")" "$bare"
	expect_eq "exit from a thread of PTHREAD_STACK_MIN: nothing on stderr" "$(cat "$WORK/err")" ""
	expect_grep "exit from a thread of PTHREAD_STACK_MIN: the report, the mutex still held" \
	    '^Mutexes still locked:$' "$WORK/report"

	# mutexstat_dump from such a thread (it once ended it with SIGSEGV)
	rc=0
	env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/report" "$WORK/tiny" dump "$WORK/dump" \
	    >"$WORK/out" 2>"$WORK/err" || rc=$?
	expect_eq "mutexstat_dump from a thread of PTHREAD_STACK_MIN: status and output" \
	    "$rc $(cat "$WORK/out")" "0 mutexstat_dump: 0"
	expect_grep "mutexstat_dump from a thread of PTHREAD_STACK_MIN: the report" \
	    '^mutexstat: tiny \(pid [0-9]+\) ran .*: 1 thread used mutexes, 1 mutex tracked, 0 untracked$' \
	    "$WORK/dump"

	# a live dump under ulimit -s 64: the dump thread's stack was
	# ulimit -s (SIGSEGV); 2 MiB now
	rm -f "$WORK"/report*
	rc=0
	(ulimit -s 64 && exec env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/report" \
	    "$WORK/tiny" usr1 "$WORK/report.1") >"$WORK/out" 2>"$WORK/err" || rc=$?
	expect_eq "ulimit -s 64, a live dump: status and output" \
	    "$rc $(cat "$WORK/out")" "0 dumped"
	expect_grep "ulimit -s 64, a live dump: the dump (after it, the exit report)" \
	    '^mutexstat: tiny \(pid [0-9]+\) ran .*: 1 thread used mutexes, 1 mutex tracked, 0 untracked$' \
	    "$WORK/report.1"
else
	echo "(no $CC: the PTHREAD_STACK_MIN thread is not tried)"
fi

finish
