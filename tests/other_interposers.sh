# other_interposers.sh - another library that wraps the pthread mutex calls
# (tests/wrap_lock.c), preloaded behind the library or in front of it: the
# program's output is unchanged, and the wrapper sees each lock, trylock,
# timedlock, clocklock and unlock the program made exactly once, no more,
# no fewer -- as without the library.  (Before, with the wrapper behind us,
# it saw no uncontended lock at all, and a trylock for every lock.)  The
# report's counts are exact in both orders.
. "$top_srcdir/tests/lib.sh"
CC=${CC:-cc}
S=$top_srcdir/tests
if ! "$CC" -O2 -shared -fPIC -o "$WORK/wrap_lock.so" "$S/wrap_lock.c" -ldl 2>"$WORK/cc.err" ||
   ! "$CC" -O2 -o "$WORK/user" "$S/wrap_lock_user.c" -lpthread -ldl 2>>"$WORK/cc.err"; then
	fail "cannot compile the wrapper and its program with $CC"
	sed 's/^/  | /' "$WORK/cc.err" >&2
	finish
fi
WRAP=$WORK/wrap_lock.so

env LD_PRELOAD="$SAN_FIRST$WRAP" "$WORK/user" >"$WORK/want.out" 2>"$WORK/want.err"
expect_eq "the wrapper alone: it counts the program's calls" "$(cat "$WORK/want.err")" \
	"wrap_lock: lock 8005 trylock 22 timedlock 20 clocklock 20 unlock 8036"

for order in behind front; do
	if [ "$order" = behind ]; then pre=$MS_PRELOAD:$WRAP; else pre=$SAN_FIRST$WRAP:$MUTEXSTAT_LIB; fi
	rm -f "$WORK/report"
	timeout -s KILL 60 env LD_PRELOAD="$pre" MUTEXSTAT_OUTPUT="$WORK/report" \
		"$WORK/user" >"$WORK/out" 2>"$WORK/err"
	expect_eq "wrapper $order us: status" "$?" 0
	expect_eq "wrapper $order us: the program's output" "$(cat "$WORK/out")" "$(cat "$WORK/want.out")"
	expect_eq "wrapper $order us: it sees each call the program made, once" \
		"$(cat "$WORK/err")" "$(cat "$WORK/want.err")"
	hot=$(awk '$1 == "hot:" { print $2 }' "$WORK/out")
	expect_grep "wrapper $order us: the hot mutex's $hot acquisitions, exactly" \
		"^ +[0-9]+ (0x[0-9a-f]+|<[^>]+>) +$hot " "$WORK/report"
done

# The differential fuzzer's call scripts (tests/fuzz_api.sh), with the
# wrapper behind us, answer as with the wrapper alone -- return values,
# errno and the mutexes' fields, for every kind of mutex.  Seed 24 is a
# priority-protect timedlock whose EINVAL glibc gives with errno set: the
# library's wait restored the errno from before glibc's call.
bad=""
for seed in 24 1 2 3 4 5 6 7 8 9 10; do
	env LD_PRELOAD="$SAN_FIRST$WRAP" "$top_builddir/tests/fuzz_api" $seed >"$WORK/f.want" 2>/dev/null
	timeout -s KILL 120 env LD_PRELOAD="$MS_PRELOAD:$WRAP" MUTEXSTAT_OUTPUT=/dev/null \
		"$top_builddir/tests/fuzz_api" $seed >"$WORK/f.got" 2>/dev/null
	cmp -s "$WORK/f.want" "$WORK/f.got" || { bad="$bad $seed"; diff "$WORK/f.want" "$WORK/f.got" | head -6 | sed 's/^/  | /' >&2; }
done
expect_eq "wrapper behind us: fuzz_api seeds answer as with the wrapper alone (seeds that differ)" "${bad:- none}" " none"

# A robust mutex whose owner thread died (tests/shared.c robust): its lock
# answers EOWNERDEAD at once, without a wait -- the look at the mutex took
# the owner-died bit of its lock word for a holder and counted one.
env LD_PRELOAD="$SAN_FIRST$WRAP" "$top_builddir/tests/shared" robust "$WORK/area1" >"$WORK/r.want" 2>&1
rm -f "$WORK"/rob.*
timeout -s KILL 60 env LD_PRELOAD="$MS_PRELOAD:$WRAP" MUTEXSTAT_OUTPUT="$WORK/rob.%p" \
	"$top_builddir/tests/shared" robust "$WORK/area2" >"$WORK/r.got" 2>&1
strip() { grep -Ev '^(local|shared) ' "$1"; }
expect_eq "wrapper behind us: robust owners dying, the same answers" "$(strip "$WORK/r.got")" "$(strip "$WORK/r.want")"
local=$(awk '/^local / { print $2 }' "$WORK/r.got")
report=$(grep -l '^OWNER DIED' "$WORK"/rob.* | head -1)
expect_eq "wrapper behind us: the lock that got EOWNERDEAD did not wait (acquired, contended)" \
	"$(top_row "$report" "$local" | awk '{ print $3, $4 }')" "3 0"
# A descriptor tracker behind us (socket_wrapper, torsocks, a leak
# checker) sees every close, dup2, dup3 and close_range the program makes,
# as without the library: ours call the next library's (they called
# glibc's, and it saw none)
cat >"$WORK/fdwrap.c" <<'EOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>
static int seen;
int close(int fd) { seen++; return ((int (*)(int))dlsym(RTLD_NEXT, "close"))(fd); }
int dup2(int a, int b) { seen++; return ((int (*)(int, int))dlsym(RTLD_NEXT, "dup2"))(a, b); }
int dup3(int a, int b, int f) { seen++; return ((int (*)(int, int, int))dlsym(RTLD_NEXT, "dup3"))(a, b, f); }
int close_range(unsigned a, unsigned b, int f)
{
	seen++;
	return ((int (*)(unsigned, unsigned, int))dlsym(RTLD_NEXT, "close_range"))(a, b, f);
}
__attribute__((destructor)) static void say(void) { fprintf(stderr, "fdwrap: %d calls\n", seen); }
EOF
cat >"$WORK/fduser.c" <<'EOF'
#define _GNU_SOURCE
#include <fcntl.h>
#include <unistd.h>
int main(void)
{
	for (int i = 0; i < 3; i++) {
		int fd = open("/dev/null", O_RDONLY);
		int b = dup2(fd, 20), c = dup3(fd, 21, O_CLOEXEC);
		close(b);
		close(c);
		close_range((unsigned)fd, (unsigned)fd, 0);
	}
	return 0;
}
EOF
if "$CC" -O2 -shared -fPIC -o "$WORK/fdwrap.so" "$WORK/fdwrap.c" -ldl 2>"$WORK/cc.err" &&
   "$CC" -O2 -o "$WORK/fduser" "$WORK/fduser.c" 2>>"$WORK/cc.err"; then
	env LD_PRELOAD="$SAN_FIRST$WORK/fdwrap.so" "$WORK/fduser" 2>"$WORK/fd.want"
	expect_eq "descriptor tracker alone: the program's calls" "$(cat "$WORK/fd.want")" "fdwrap: 15 calls"
	env LD_PRELOAD="$MS_PRELOAD:$WORK/fdwrap.so" MUTEXSTAT_OUTPUT="$WORK/fd.report" \
		"$WORK/fduser" 2>"$WORK/fd.err"
	expect_eq "descriptor tracker behind us: each call the program made, once" \
		"$(grep '^fdwrap' "$WORK/fd.err")" "fdwrap: 15 calls"
else
	fail "cannot compile the descriptor tracker and its program with $CC"
fi

finish
