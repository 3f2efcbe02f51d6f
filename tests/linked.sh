# linked.sh - the library linked directly (no LD_PRELOAD) with the public
# API: names, a report on demand, reset.
. "$top_srcdir/tests/lib.sh"
B=$top_builddir
env -u LD_PRELOAD "$B/examples/named" > "$WORK/out" 2> "$WORK/err"; rc=$?
expect_eq "exit status" "$rc" 0
expect_eq "output" "$(cat "$WORK/out")" "first half: 3000 items, 300 counted
second half: 4500 items, 450 counted"
expect_eq "two reports: the dump and the exit report" \
	"$(grep -c '^mutexstat: named (pid' "$WORK/err")" 2
awk '/^mutexstat: named/ { n++ } n == 1' "$WORK/err" > "$WORK/dump"
awk '/^mutexstat: named/ { n++ } n == 2' "$WORK/err" > "$WORK/exit"
expect_grep "dump: queue by name, 3000 locks" "^ +[0-9]+ queue +3000 " "$WORK/dump"
expect_eq "dump: what asked for it, under the heading" "$(sed -n 2p "$WORK/dump")" \
	"  a report the program asked for (mutexstat_dump); it runs on"
expect_no_grep "exit report: no such line" 'asked for|runs on$' "$WORK/exit"
expect_grep "dump: stats by name, 300 locks" "^ +[0-9]+ stats +300 " "$WORK/dump"
expect_grep "exit report after reset: 1500 queue locks" "^ +[0-9]+ queue +1500 " "$WORK/exit"
expect_grep "exit report after reset: 150 stats locks" "^ +[0-9]+ stats +150 " "$WORK/exit"
expect_grep "exit report: its numbers start at the reset, and it says so" \
	'^  the numbers start at mutexstat_reset\(\), [0-9.]+ [mµn]?s into the run \(the counts of threads and locks above do not\)$' "$WORK/exit"
expect_no_grep "dump before the reset: no such line" 'mutexstat_reset' "$WORK/dump"
expect_grep "detail names the mutex" '^#[0-9]+ mutex 0x[0-9a-f]+ <queue> "queue" \(normal, no init seen\)' "$WORK/exit"
# Preloaded as well as linked: one library, one count.
LD_PRELOAD="$MS_PRELOAD" "$B/examples/named" > "$WORK/out2" 2> "$WORK/err2"
awk '/^mutexstat: named/ { n++ } n == 2' "$WORK/err2" > "$WORK/exit2"
expect_grep "preloaded and linked: not counted twice" "^ +[0-9]+ queue +1500 " "$WORK/exit2"
# Naming a mutex before the thread's first lock (the thread has no record
# yet): the lock that follows works and is recorded.
cat > "$WORK/name_first.c" <<'EOC'
#include <mutexstat.h>
#include <pthread.h>
#include <stdio.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int main(void)
{
	mutexstat_name(&m, "named first");
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	puts("ok");
	return 0;
}
EOC
if cc $SAN_FLAGS -I"$top_srcdir/include" -o "$WORK/name_first" "$WORK/name_first.c" \
	"$(dirname "$MUTEXSTAT_LIB")/libmutexstat.so" -lpthread; then
	env LD_LIBRARY_PATH="$(dirname "$MUTEXSTAT_LIB")" "$WORK/name_first" \
		> "$WORK/nf.out" 2> "$WORK/nf.err"
	expect_eq "name before the first lock: runs" "$(cat "$WORK/nf.out")" ok
	expect_grep "name before the first lock: recorded by name" \
		'^ +1 named first +1 ' "$WORK/nf.err"
else
	fail "could not build the name-first program"
fi
# fork while another thread writes a report: every child exits (its exit
# report does not wait for a lock the other thread held in the parent).
cat > "$WORK/fork_dump.c" <<'EOC'
#include <mutexstat.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t mine = PTHREAD_MUTEX_INITIALIZER; /* the child's own:
	m may be held by the dumper at the fork, and stay locked in the child */
static volatile int stop;
static void *dumper(void *arg)
{
	int fd = open("/dev/null", O_WRONLY);
	(void)arg;
	while (!stop) {
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
		mutexstat_dump(fd);
	}
	return NULL;
}
int main(void)
{
	pthread_t t;
	int ok = 0;
	pthread_create(&t, NULL, dumper, NULL);
	for (int i = 0; i < 100; i++) {
		pid_t pid = fork();
		if (pid == 0) {
			alarm(20); /* a hang fails the test, it does not stall it */
			pthread_mutex_lock(&mine);
			pthread_mutex_unlock(&mine);
			return 0; /* exit: writes the child's report */
		}
		int status;
		waitpid(pid, &status, 0);
		ok += WIFEXITED(status) && WEXITSTATUS(status) == 0;
	}
	stop = 1;
	pthread_join(t, NULL);
	printf("%d of 100 children exited\n", ok);
	return 0;
}
EOC
if sanitized; then
	# gcc 12's ASan allocator is not reset in a child of fork: a child
	# forked while the dumper thread was in malloc hangs in its first one.
	echo "skip: fork while dumping (sanitized build: ASan's malloc after fork)"
elif cc -I"$top_srcdir/include" -o "$WORK/fork_dump" "$WORK/fork_dump.c" \
	"$(dirname "$MUTEXSTAT_LIB")/libmutexstat.so" -lpthread; then
	env LD_LIBRARY_PATH="$(dirname "$MUTEXSTAT_LIB")" MUTEXSTAT_OUTPUT=/dev/null \
		timeout 300 "$WORK/fork_dump" > "$WORK/fd.out" 2> "$WORK/fd.err"
	expect_eq "fork while dumping: every child exits" "$(cat "$WORK/fd.out")" \
		"100 of 100 children exited"
else
	fail "could not build the fork-while-dumping program"
fi
finish
