# dlopen_deadlock.sh - a deadlock through a library's constructor is
# reported.  A thread in dlopen runs the constructor, which waits for a
# mutex that main holds while it joins that thread: the constructor's
# thread holds the dynamic linker's lock all the while, and the report,
# which names code through that lock (dlopen of libdw, dladdr, dlsym),
# waited for it too -- the watchdog and MUTEXSTAT_ON_DEADLOCK=abort did
# nothing, and the program hung as it does without the library.  Now the
# report is written with addresses for names, and says why.
. "$top_srcdir/tests/lib.sh"
CC=${CC:-cc}

cat >"$WORK/plug.c" <<'SRC'
#include <pthread.h>
extern pthread_mutex_t held_by_main;
__attribute__((constructor)) static void take(void)
{
	pthread_mutex_lock(&held_by_main); /* main holds it, and joins us */
	pthread_mutex_unlock(&held_by_main);
}
SRC
cat >"$WORK/main.c" <<'SRC'
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
pthread_mutex_t held_by_main = PTHREAD_MUTEX_INITIALIZER;
static void *opener(void *path)
{
	dlopen(path, RTLD_NOW);
	return NULL;
}
int main(int argc, char **argv)
{
	pthread_t t;
	(void)argc;
	pthread_mutex_lock(&held_by_main);
	pthread_create(&t, NULL, opener, argv[1]);
	printf("joining\n");
	fflush(stdout);
	pthread_join(t, NULL);
	return 0;
}
SRC
$CC -shared -fPIC -o "$WORK/libplug.so" "$WORK/plug.c" -pthread || fail "the library builds"
$CC -rdynamic -o "$WORK/main" "$WORK/main.c" -pthread -ldl || fail "the program builds"

# the watchdog: the STALL, written, then the abort
rc=0
timeout -s KILL 60 env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/r" MUTEXSTAT_WATCHDOG=1 \
	MUTEXSTAT_ON_DEADLOCK=abort "$WORK/main" "$WORK/libplug.so" >"$WORK/out" 2>"$WORK/err" || rc=$?
expect_eq "watchdog: aborted after its report (SIGABRT), not hung" "$rc" 134
# (the report the abort follows: the mutex's 1 s wait may have one of its
# own a look before the STALL)
R=$(last_report "$WORK/r")
expect_grep "watchdog: a STALL, main joining the thread in dlopen" \
	'^  thread [0-9]+ "main" waits to join thread [0-9]+, for ' "$R"
expect_grep "watchdog: ... which waits for the mutex main holds" \
	'^  thread [0-9]+ "main" waits for mutex 0x[0-9a-f]+ held by thread [0-9]+, for ' "$R"
expect_grep "watchdog: the report says why its names are addresses" \
	"^  names: none, addresses only \\(not loaded: another thread is stuck in dlopen or dlclose; " "$R"

# kill -USR1: the live dump is written too
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/d" "$WORK/main" "$WORK/libplug.so" \
	>"$WORK/dout" 2>"$WORK/derr" &
pid=$!
wait_for "$WORK/dout" '^joining$' 20 || fail "the program never joined"
sleep 1
kill -USR1 "$pid"
if wait_for "$WORK/d.1" '^WAIT CHAIN:$' 30; then
	pass "kill -USR1: a dump, with the wait for the mutex main holds"
else
	fail "kill -USR1: no dump"
fi
kill -KILL "$pid"
wait "$pid" 2>/dev/null
finish
