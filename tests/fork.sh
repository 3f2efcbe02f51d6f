# fork.sh - fork and exec: a multithreaded parent forks while its threads
# lock hard and every child exits; each fork child's report covers the
# child only (exact counts on both sides, mutexes of the parent's other
# threads shown as theirs); kill -USR1 and the watchdog work in a fork
# child; exec'd children are recorded, and not with MUTEXSTAT_FOLLOW=0;
# a child of _Fork (no fork handlers) is a fork child all the same.
. "$top_srcdir/tests/lib.sh"
skip_if_sanitized "gcc 12's ASan malloc is not safe across fork: a child forked" \
	"while another thread is in malloc hangs (doc/testing.md, Sanitizers and checkers)"
P=$top_builddir/tests/fork

# start_job NAME command...: run it in the background, its output in
# $WORK/out (empty before it starts), under timeout so that a hang ends as
# a failure; sets job (to wait for) and parent (the program's pid).
start_job() {
	what=$1
	shift
	: > "$WORK/out"
	timeout -s KILL 60 "$@" > "$WORK/out" 2> "$WORK/err" &
	job=$!
	wait_for "$WORK/out" '^parent [0-9]+$' 20 || fail "$what: did not start"
	parent=$(awk '/^parent / { print $2; exit }' "$WORK/out")
}

# the row of a mutex in a report's top table: "acquired contended"
acquired() {
	top_row "$1" "$2" | awk '{ print $3 }'
}

# ---- 200 forks while four threads lock hard ------------------------------
# A child that hangs (in the fork handlers, or in its exit report) stops
# the parent's waitpid: timeout ends the run and the test fails.
timeout -s KILL 120 env LD_PRELOAD="$MUTEXSTAT_LIB" MUTEXSTAT_OUTPUT="$WORK/s.%p" \
	"$P" stress 200 > "$WORK/out" 2> "$WORK/err"
expect_eq "stress: exit status" "$?" 0
expect_grep "stress: every child exited at once" '^200 of 200 children exited 0$' "$WORK/out"
parent=$(grep -L 'forked from pid' "$WORK"/s.* | head -n 1)
children=$(grep -l 'forked from pid' "$WORK"/s.* | wc -l)
expect_eq "stress: one report per child that called exit()" "$children" 20
expect_eq "stress: a child's numbers start at the fork, not at a reset" \
	"$(grep -l 'mutexstat_reset' "$WORK"/s.* | wc -l)" 0
shared=$(awk '/^shared / { print $2 }' "$WORK/out")
across=$(awk '/^across / { print $2 }' "$WORK/out")
expect_eq "stress: the parent's count of the hot mutex is exact" \
	"$(acquired "$parent" "$shared")" "$(awk '/^shared / { print $4 }' "$WORK/out")"
expect_eq "stress: the mutex held across each fork, 200 times" "$(acquired "$parent" "$across")" 200
bad=0
for r in $(grep -l 'forked from pid' "$WORK"/s.*); do
	[ "$(top_row "$r" "$across")" = "" ] || bad=$((bad + 1))   # unlocked, not locked
	[ "$(acquired "$r" "$shared")" = "" ] || bad=$((bad + 1))  # the parent's
	grep -Eq '^(MISUSE|POTENTIAL DEADLOCK|DEADLOCK|HELD AT)' "$r" && bad=$((bad + 1))
	# the only mutex a child's thread holds is none; the others are the
	# parent's threads'
	grep -E ' held by thread ' "$r" | grep -q . && bad=$((bad + 1))
	grep -q "^Top 1 mutex by wait:$" "$r" || bad=$((bad + 1))
done
expect_eq "stress: children's reports have the child's numbers only" "$bad" 0
expect_eq "stress: each child locked its own mutex 10 times" \
	"$(for r in $(grep -l 'forked from pid' "$WORK"/s.*); do
		awk '/^Top /{t=1; next} t && /^ +1 (0x|<)/ { print $3; exit }' "$r"; done | sort -u)" 10
expect_eq "stress: nothing on stderr" "$(cat "$WORK/err")" ""

# ---- exact counts on both sides of a fork ---------------------------------
run_with "$WORK/out" "$WORK/err" env MUTEXSTAT_OUTPUT="$WORK/c.%p" "$P" counts
child=$(awk '/^child / { print $2 }' "$WORK/out")
shared=$(awk '/^shared / { print $2 }' "$WORK/out")
held=$(awk '/^held / { print $2 }' "$WORK/out")
own=$(awk '/^own / { print $2 }' "$WORK/out")
expect_grep "counts: the child exited" "^child $child exited 0$" "$WORK/out"
parent=$(grep -L 'forked from pid' "$WORK"/c.*)
expect_grep "counts: the child's report says where it came from" \
	"^  forked from pid [0-9]+: the numbers start at the fork" "$WORK/c.$child"
expect_eq "counts: the child locked shared 7 times" "$(acquired "$WORK/c.$child" "$shared")" 7
expect_eq "counts: and own 5 times" "$(acquired "$WORK/c.$child" "$own")" 5
expect_eq "counts: shared, let go of last by the forking thread, changed no owner in the child" \
	"$(top_row "$WORK/c.$child" "$shared" | awk '{ print $11 }')" 0
expect_eq "counts: the parent locked shared 150 times" "$(acquired "$parent" "$shared")" 150
expect_eq "counts: own is the child's alone" "$(acquired "$parent" "$own")" ""
# (held has a name of 30 characters: the child's line for it is too long
# for one line; it went past 120 columns)
expect_grep "counts: the child names held ..." "^  $held <held> \"held_by_a_thread_of_the_parent\"\$" "$WORK/c.$child"
expect_grep "counts: ... and says a parent's thread holds it" \
	"^    held since the fork by thread [0-9]+ of the parent, pid [0-9]+ \(not here\), taken at hold_held" \
	"$WORK/c.$child"
expect_eq "counts: no line of the child's over 120 columns" \
	"$(sed 's/µ/u/g' "$WORK/c.$child" | awk 'length($0) > 120' | wc -l)" 0
expect_grep "counts: the parent says its thread holds it" \
	"^  $held <held> \"held_by_a_thread_of_the_parent\" held by thread [0-9]+, taken at hold_held" "$parent"
expect_grep "counts: the child's run is its own" "^mutexstat: fork \(pid $child\) ran .*: 1 thread used mutexes" \
	"$WORK/c.$child"
expect_grep "counts: the parent's inversion" '^POTENTIAL DEADLOCK: 2 mutexes' "$parent"
expect_grep "counts: the parent's thread that exited holding a mutex" '^HELD AT THREAD EXIT' "$parent"
expect_no_grep "counts: neither is the child's" '^(POTENTIAL DEADLOCK|HELD AT THREAD EXIT|DEADLOCK)' \
	"$WORK/c.$child"
if command -v jq >/dev/null 2>&1; then
	run_with "$WORK/out" "$WORK/err" env MUTEXSTAT_FORMAT=json MUTEXSTAT_OUTPUT="$WORK/j.%p" "$P" counts
	child=$(awk '/^child / { print $2 }' "$WORK/out")
	held=$(awk '/^held / { print $2 }' "$WORK/out")
	expect_eq "json: the child says where it came from" \
		"$(jq '.forked_from == (input | .pid)' "$WORK/j.$child.json" \
		   "$(ls "$WORK"/j.*.json | grep -v "/j\.$child\.json")")" true
	expect_eq "json: held by a thread of the parent" \
		"$(jq -r --arg m "$held" '.mutexes[] | select(.address == $m) | (.held_by == .held_by_parent_thread and .held_by > 0)' \
		   "$WORK/j.$child.json")" true
else
	echo "skip: jq is not installed: the JSON checks"
fi

# ---- one file, no %p: the child's report, then the parent's after it --------
# (the parent waited for the child, whose report it would have replaced);
# a later run replaces what an earlier one left
for i in 1 2; do
	run_with "$WORK/out" "$WORK/err" env MUTEXSTAT_OUTPUT="$WORK/one" "$P" counts
	expect_eq "one file, run $i: the child's report, then the parent's" \
		"$(sed -n 's/^mutexstat: fork (pid \([0-9]*\)) .*/\1/p' "$WORK/one" | tr '\n' ' ')" \
		"$(awk '/^child / { c = $2 } /^parent / { p = $2 } END { print c, p }' "$WORK/out") "
done

# ---- _Fork: glibc's fork without the fork handlers ---------------------------
# Its child is a fork child too: its thread id (the lock path writes it into
# the mutexes it takes, as glibc does) and its own report.
run_with "$WORK/out" "$WORK/err" env MUTEXSTAT_OUTPUT="$WORK/b.%p" "$P" bare
child=$(awk '/^child [0-9]+ / { print $2 }' "$WORK/out")
shared=$(awk '/^shared / { print $2 }' "$WORK/out")
across=$(awk '/^across / { print $2 }' "$WORK/out")
expect_grep "bare: the child exited" "^child $child exited 0$" "$WORK/out"
expect_grep "bare: glibc's owner field has the child's id, as without us" \
	'^child owner self$' "$WORK/out"
expect_grep "bare: the child's report says where it came from" \
	"^  forked from pid [0-9]+: the numbers start at the fork" "$WORK/b.$child"
expect_eq "bare: the child locked shared 4 times" "$(acquired "$WORK/b.$child" "$shared")" 4
expect_eq "bare: across, held at the fork, is unlocked in the child, not locked" \
	"$(top_row "$WORK/b.$child" "$across")" ""
expect_no_grep "bare: no finding in the child" '^(MISUSE|POTENTIAL DEADLOCK|DEADLOCK|HELD AT)' \
	"$WORK/b.$child"
parent=$(grep -L 'forked from pid' "$WORK"/b.*)
expect_eq "bare: the parent locked shared 3 times" "$(acquired "$parent" "$shared")" 3

# ---- kill -USR1 on a fork child ---------------------------------------------
start_job usr1 env LD_PRELOAD="$MUTEXSTAT_LIB" MUTEXSTAT_OUTPUT="$WORK/u.%p" "$P" usr1
if wait_for "$WORK/out" '^child [0-9]+ ready$' 20; then pass "usr1: the child is ready"; else fail "usr1: no child"; fi
child=$(awk '/^child [0-9]+ ready/ { print $2 }' "$WORK/out")
kill -USR1 "$child"
if wait_for "$WORK/u.$child.1" '^Top ' 20; then pass "usr1: the child wrote a dump"; else fail "usr1: no dump from the child"; fi
expect_eq "usr1: the parent did not dump (the signal was the child's)" "$(ls "$WORK" | grep -c "^u\.$parent\.")" 0
expect_grep "usr1: the dump is the child's" "^mutexstat: fork \(pid $child\)" "$WORK/u.$child.1"
expect_eq "usr1: with the child's count" "$(acquired "$WORK/u.$child.1" "$(awk '/^own / { print $2 }' "$WORK/out")")" 3
kill -USR1 "$parent"
if wait_for "$WORK/u.$parent.1" '^Top ' 20; then pass "usr1: and the parent its own"; else fail "usr1: no dump from the parent"; fi
kill "$child"
wait "$job"
expect_grep "usr1: the child ended by our SIGTERM" "^child $child killed by SIGTERM$" "$WORK/out"

# A child with one thread has no dump thread until it needs one (it may be
# about to exec: nothing is started in a process that only execs): a dump
# signal then waits until the child's next mutex call.
start_job late env LD_PRELOAD="$MUTEXSTAT_LIB" MUTEXSTAT_OUTPUT="$WORK/l.%p" "$P" late "$WORK/go"
wait_for "$WORK/out" '^child [0-9]+ ready$' 20 || fail "late: no child"
child=$(awk '/^child [0-9]+ ready/ { print $2 }' "$WORK/out")
kill -USR1 "$child"
expect_eq "late: no dump thread before the child's first mutex call" \
	"$(grep -c mutexstat "/proc/$child/task/"*/comm 2>/dev/null | awk -F: '{ n += $2 } END { print n + 0 }')" 0
touch "$WORK/go"
# (the dump thread starts in the child's first lock call and may write
# before that lock is recorded: the dump's heading, not its table)
if wait_for "$WORK/l.$child.1" "^mutexstat: fork \(pid $child\)" 20; then
	pass "late: the signal's dump, at the child's first lock"
else fail "late: no dump"; fi
kill "$child"
wait "$job"
# With another allocator than glibc's (jemalloc locks pthread mutexes
# inside malloc, where pthread_create must not run), a child with one
# thread has no safe moment to start a dump thread: it starts none until
# it starts a thread of its own, and the dump signal does nothing.
for a in /usr/lib/*/libtcmalloc_minimal.so.4; do
	[ -e "$a" ] || continue
	rm -f "$WORK/go"
	start_job late-tcmalloc env LD_PRELOAD="$MUTEXSTAT_LIB:$a" MUTEXSTAT_OUTPUT="$WORK/t.%p" \
		"$P" late "$WORK/go"
	wait_for "$WORK/out" '^child [0-9]+ ready$' 20 || fail "late, tcmalloc: no child"
	child=$(awk '/^child [0-9]+ ready/ { print $2 }' "$WORK/out")
	kill -USR1 "$child"
	touch "$WORK/go"
	wait_for "$WORK/out" '^child locked$' 20 || fail "late, tcmalloc: the child never locked"
	expect_eq "late, tcmalloc: no dump thread in a child with one thread" \
		"$(grep -c mutexstat "/proc/$child/task/"*/comm 2>/dev/null | awk -F: '{ n += $2 } END { print n + 0 }')" 0
	expect_eq "late, tcmalloc: so no dump" "$(ls "$WORK" | grep -c "^t\.$child\.")" 0
	kill "$child"
	wait "$job"
done

# daemon() forks inside glibc: the daemon gets its dump thread too
env LD_PRELOAD="$MUTEXSTAT_LIB" MUTEXSTAT_OUTPUT="$WORK/d.%p" "$P" daemon > "$WORK/out" 2> "$WORK/err"
wait_for "$WORK/out" '^daemon [0-9]+ ready$' 20 || fail "daemon: not ready"
daemon=$(awk '/^daemon / { print $2 }' "$WORK/out")
kill -USR1 "$daemon"
if wait_for "$WORK/d.$daemon.1" '^Top ' 20; then pass "daemon: a dump"; else fail "daemon: no dump"; fi
kill "$daemon"
expect_grep "daemon: its own numbers" "^  forked from pid [0-9]+: " "$WORK/d.$daemon.1"

# A daemon's own steps -- fork, setsid, /dev/null on 0 to 2 -- under a
# pipe: the pipe ends when the program's ends are closed, as without the
# library (the library's copy of the stderr it started with held it open:
# `redis-server --daemonize yes | cat` waited until redis exited).
rm -f "$WORK/detached.pid"
rc=0
timeout -s KILL 30 sh -c 'LD_PRELOAD="$1" "$2" detach "$3" 2>&1 | cat' sh \
	"$MUTEXSTAT_LIB" "$P" "$WORK/detached.pid" >/dev/null 2>&1 || rc=$?
wait_for "$WORK/detached.pid" '^[0-9]+$' 20 || fail "detach: the daemon did not start"
detached=$(cat "$WORK/detached.pid")
expect_eq "detach: the pipe ended with the program's end, the daemon alive" \
	"$rc $(kill -0 "$detached" 2>/dev/null && echo alive)" "0 alive"
kill "$detached" 2>/dev/null

# The same for a background subshell that puts /dev/null on 0 to 2 with
# no new session (the shell's dup2s), and waits for a child: the pipe ends
# with the shell's end, the subshell alive (it held the pipe until its end:
# python's subprocess.run(capture_output=True) of such a script waited)
rm -f "$WORK/bg.pid"
rc=0
timeout -s KILL 20 sh -c 'LD_PRELOAD="$1" sh -c '"'"'(exec >/dev/null 2>/dev/null </dev/null; sleep 30 & echo $! >"$0"; wait) & echo started'"'"' "$2" 2>&1 | cat' \
	sh "$MUTEXSTAT_LIB" "$WORK/bg.pid" >"$WORK/bg.out" 2>&1 || rc=$?
wait_for "$WORK/bg.pid" '^[0-9]+$' 20 || fail "background: the subshell did not start"
bg=$(cat "$WORK/bg.pid")
expect_eq "background: the pipe ended with the shell's end, the subshell alive" \
	"$rc $(head -n 1 "$WORK/bg.out") $(kill -0 "$bg" 2>/dev/null && echo alive)" "0 started alive"
kill "$bg" 2>/dev/null

# ... and one that lets fds 0-2 go with close_range (python's
# os.closerange(0, 3)), then opens /dev/null on them: the same
cat >"$WORK/crange.c" <<'EOF'
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	pid_t c = fork();
	if (c == 0) {
		close_range(0, 2, 0);
		for (int i = 0; i < 3; i++)
			open("/dev/null", O_RDWR);
		sleep(30);
		_exit(0);
	}
	FILE *f = fopen(argv[1], "w");
	fprintf(f, "%d\n", (int)c);
	fclose(f);
	printf("started\n");
	return 0;
}
EOF
if ${CC:-cc} -o "$WORK/crange" "$WORK/crange.c"; then
	rm -f "$WORK/crange.pid"
	rc=0
	timeout -s KILL 20 sh -c 'LD_PRELOAD="$1" "$2" "$3" 2>&1 | cat' sh \
		"$MUTEXSTAT_LIB" "$WORK/crange" "$WORK/crange.pid" >"$WORK/crange.out" 2>&1 || rc=$?
	cr=$(cat "$WORK/crange.pid" 2>/dev/null)
	expect_eq "close_range: the pipe ended with the parent's end, the child alive" \
		"$rc $(grep -x started "$WORK/crange.out") $(kill -0 "${cr:-0}" 2>/dev/null && echo alive)" \
		"0 started alive"
	[ -n "$cr" ] && kill "$cr" 2>/dev/null
else
	fail "close_range: the program did not build"
fi

# A program's own file at the number of the library's copy (1000 in a
# process of its own) is the program's: a setsid after does not put
# /dev/null over it (the library took the number for its copy still)
cat >"$WORK/at1000.c" <<'EOF'
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
int main(int argc, char **argv)
{
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || dup2(fd, 1000) != 1000)
		return 2;
	close(fd);
	pid_t c = fork();
	if (c == 0) {
		if (setsid() < 0)
			_exit(3);
		const char line[] = "the child's line\n";
		_exit(write(1000, line, strlen(line)) == (ssize_t)strlen(line) ? 0 : 4);
	}
	int st;
	waitpid(c, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 5;
}
EOF
if ${CC:-cc} -o "$WORK/at1000" "$WORK/at1000.c"; then
	rc=0
	LD_PRELOAD="$MUTEXSTAT_LIB" "$WORK/at1000" "$WORK/at1000.log" 2>/dev/null || rc=$?
	expect_eq "the program's file at 1000: its line there after setsid" \
		"$rc $(cat "$WORK/at1000.log")" "0 the child's line"
else
	fail "the program's file at 1000: the program did not build"
fi

# ... and one that closed every descriptor (the library's copy with
# them) and put its own close-on-exec copy of stderr at that number: it
# is the program's, and what it writes there reaches the pipe
cat >"$WORK/owncopy.c" <<'EOF'
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
int main(void)
{
	closefrom(3);
	int mine = fcntl(2, F_DUPFD_CLOEXEC, 1000);
	int null = open("/dev/null", O_RDWR);
	for (int fd = 0; fd <= 2; fd++)
		dup2(null, fd);
	close(null);
	dprintf(mine, "on the program's copy at %d\n", mine);
	return 0;
}
EOF
if ${CC:-cc} -o "$WORK/owncopy" "$WORK/owncopy.c"; then
	expect_eq "the program's close-on-exec copy at 1000: its line reaches the pipe" \
		"$(LD_PRELOAD="$MUTEXSTAT_LIB" "$WORK/owncopy" 2>&1 | cat)" "on the program's copy at 1000"
else
	fail "the program's close-on-exec copy: the program did not build"
fi

# A vfork child that closes every descriptor before its exec (python's
# subprocess does): its descriptors are its own, and the parent's report
# still reaches the parent's stderr (the child forgot the parent's copy)
cat >"$WORK/vfclose.c" <<'EOF'
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/wait.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int main(void)
{
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	pid_t c = vfork();
	if (c == 0) {
		close_range(3, ~0u, 0);
		execl("/bin/true", "true", (char *)0);
		_exit(127);
	}
	int st;
	waitpid(c, &st, 0);
	return WEXITSTATUS(st);
}
EOF
if ${CC:-cc} -o "$WORK/vfclose" "$WORK/vfclose.c" -lpthread; then
	rc=0
	LD_PRELOAD="$MUTEXSTAT_LIB" "$WORK/vfclose" 2>"$WORK/vfclose.err" || rc=$?
	expect_eq "vfork child closing all: the parent's report on its stderr" \
		"$rc $(grep -c '^mutexstat: vfclose (pid [0-9]*) ran .*1 mutex tracked' "$WORK/vfclose.err")" "0 1"
else
	fail "vfork child closing all: the program did not build"
fi

# ... while a program that only silences its stderr for a while (its own
# copy kept, and put back) still reports there
cat >"$WORK/silence.c" <<'EOF'
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int main(void)
{
	int keep = dup(2), null = open("/dev/null", O_WRONLY);
	dup2(null, 2);
	close(null);
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	dup2(keep, 2);
	close(keep);
	fprintf(stderr, "back\n");
	return 0;
}
EOF
if ${CC:-cc} -o "$WORK/silence" "$WORK/silence.c" -lpthread; then
	LD_PRELOAD="$MUTEXSTAT_LIB" "$WORK/silence" 2>&1 >/dev/null | cat >"$WORK/silence.err"
	expect_eq "silenced a while: its line, then the report on the pipe" \
		"$(sed -n '1p;2s/ (pid [0-9]*) ran .*:/ ran:/p' "$WORK/silence.err")" \
		"$(printf 'back\nmutexstat: silence ran: 1 thread used mutexes, 1 mutex tracked, 0 untracked')"
else
	fail "silenced a while: the program did not build"
fi

# ... and one whose stderr is then a pipe of its own (its log): nothing of
# the library's goes into it -- its report has nowhere to go, and the
# library says nothing there (it said "the program closed the stderr it
# started with", of the copy it let go of itself, into the daemon's log)
cat >"$WORK/logpipe.c" <<'EOF'
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int main(void)
{
	int p[2];
	if (pipe(p) != 0)
		return 1;
	pid_t c = fork();
	if (c == 0) {
		close(p[0]);
		if (setsid() < 0)
			_exit(1);
		dup2(p[1], 2);
		close(p[1]);
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
		fprintf(stderr, "the daemon's own line\n");
		exit(0);
	}
	close(p[1]);
	char buf[4096];
	ssize_t n;
	while ((n = read(p[0], buf, sizeof buf)) > 0)
		fwrite(buf, 1, (size_t)n, stdout);
	int st;
	waitpid(c, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
EOF
if ${CC:-cc} -o "$WORK/logpipe" "$WORK/logpipe.c" -lpthread; then
	rc=0
	LD_PRELOAD="$MUTEXSTAT_LIB" "$WORK/logpipe" >"$WORK/logpipe.out" 2>/dev/null || rc=$?
	expect_eq "detach, its stderr a pipe of its own: only its own line there" \
		"$rc $(cat "$WORK/logpipe.out")" "0 the daemon's own line"
else
	fail "cannot build logpipe.c"
fi

# A child that closes every descriptor it did not open and reuses their
# numbers: the dump signal writes nothing into its file.
start_job closefds env LD_PRELOAD="$MUTEXSTAT_LIB" MUTEXSTAT_OUTPUT="$WORK/x.%p" \
	"$P" closefds "$WORK/file"
wait_for "$WORK/out" '^child [0-9]+ ready' 20 || fail "closefds: no child"
child=$(awk '/^child [0-9]+ ready/ { print $2 }' "$WORK/out")
kill -USR1 "$child"
kill -USR2 "$child" # the child ends once it has had both
wait "$job"
expect_grep "closefds: the child took both signals" "^usr2$" "$WORK/out"
expect_eq "closefds: the file the child opened is untouched" "$(wc -c < "$WORK/file")" 0

# ---- a child that blocks on a mutex of a thread it does not have --------
start_job hang env LD_PRELOAD="$MUTEXSTAT_LIB" MUTEXSTAT_OUTPUT="$WORK/h.%p" "$P" hang
wait_for "$WORK/out" '^child [0-9]+ locks held$' 20 || fail "hang: no child"
child=$(awk '/^child [0-9]+ locks/ { print $2 }' "$WORK/out")
held=$(awk '/^held / { print $2 }' "$WORK/out")
kill -USR1 "$child"
if wait_for "$WORK/h.$child.1" '^DEADLOCK' 20; then pass "hang: the hung child wrote a dump"; else fail "hang: no dump"; fi
kill -9 "$child"
wait "$job"
expect_grep "hang: a deadlock, in words" \
	"^DEADLOCK: thread $child waits for a mutex that thread [0-9]+ of the parent process held at the fork: nobody here can unlock it$" \
	"$WORK/h.$child.1"
expect_grep "hang: which mutex, and where the child waits" \
	"^  thread $child \"fork\" waits for mutex $held <held> \"held_by_a_thread_of_the_parent\" for " "$WORK/h.$child.1"
expect_grep "hang: the holder is named as the parent's" \
	"^  thread [0-9]+ of the parent process \(pid $parent\) held it when this process forked; this process has no such thread$" \
	"$WORK/h.$child.1"

# the watchdog, in the child: the report, then abort
timeout -s KILL 60 env LD_PRELOAD="$MUTEXSTAT_LIB" MUTEXSTAT_OUTPUT="$WORK/w.%p" MUTEXSTAT_WATCHDOG=1 \
	MUTEXSTAT_ON_DEADLOCK=abort "$P" hang > "$WORK/out" 2> "$WORK/err"
child=$(awk '/^child [0-9]+ locks/ { print $2 }' "$WORK/out")
expect_grep "watchdog: the child aborted" "^child $child killed by SIGABRT$" "$WORK/out"
expect_grep "watchdog: after its report" "^DEADLOCK: thread $child waits for a mutex that thread" "$WORK/w.$child.1"
expect_grep "watchdog: where the parent's thread took it, from the mutex's history" \
	"^    held by thread [0-9]+, taken at hold_held\+0x[0-9a-f]+ \(tests/fork\.c:[0-9]+, fork\)$" "$WORK/w.$child.1"

# ... and an rwlock two threads of the parent read: the child keeps those
# reads as the parent's threads' (they were forgotten: the lock was not
# listed as held, and the watchdog's WAIT CHAIN blamed "a reader not known
# here"), named as the parent's, not as threads that exited
timeout -s KILL 60 env LD_PRELOAD="$MUTEXSTAT_LIB" MUTEXSTAT_OUTPUT="$WORK/rh.%p" MUTEXSTAT_WATCHDOG=1 \
	MUTEXSTAT_ON_DEADLOCK=abort "$P" readhang > "$WORK/out" 2> "$WORK/err"
child=$(awk '/^child [0-9]+ writes/ { print $2 }' "$WORK/out")
rw=$(awk '/^read_held / { print $2 }' "$WORK/out")
expect_grep "readhang: the child aborted" "^child $child killed by SIGABRT$" "$WORK/out"
expect_grep "readhang: a deadlock, in words" \
	"^DEADLOCK: thread $child waits for an rwlock that thread [0-9]+ of the parent process held at the fork: nobody here can unlock it$" \
	"$WORK/rh.$child.1"
expect_grep "readhang: its reader, the parent's thread, where it read" \
	"^    held for read by thread [0-9]+ of the parent and 1 other reader, taken at hold_read\+0x[0-9a-f]+ \(tests/fork\.c:$(grep -n 'READ_HELD' "$top_srcdir/tests/fork.c" | head -1 | cut -d: -f1), fork\)$" \
	"$WORK/rh.$child.1"
ppid=$(sed -n 's/^  forked from pid \([0-9]*\):.*/\1/p' "$WORK/rh.$child.1")
expect_grep "readhang: still held, by the parent's thread" \
	"^    thread [0-9]+ of the parent, pid $ppid \(not here\), taken at hold_read\+0x" "$WORK/rh.$child.1"
expect_grep "readhang: ... and the other reader, the parent's too" \
	'^    and 1 more thread of the parent \(not here\)$' "$WORK/rh.$child.1"
expect_no_grep "readhang: no reader said to have exited" 'exited' "$WORK/rh.$child.1"

# ---- a process-shared mutex that a thread of the parent holds at the fork --
# In MAP_SHARED memory it is one lock for both processes: the parent's
# thread holds it still, and unlocks it once the child's watchdog has
# reported.  The child waits for it, the watchdog's report says it is held
# in the parent, with no DEADLOCK (it was a SELF-DEADLOCK, or a mutex no
# thread could unlock), and the child is not aborted: it gets the mutex.
for who in forker thread; do
	rm -f "$WORK/go"
	start_job "shared $who" env LD_PRELOAD="$MUTEXSTAT_LIB" MUTEXSTAT_OUTPUT="$WORK/sh.%p" \
		MUTEXSTAT_WATCHDOG=1 MUTEXSTAT_ON_DEADLOCK=abort "$P" sharedheld "$who" "$WORK/go"
	wait_for "$WORK/out" '^child [0-9]+ locks shared$' 20 || fail "shared $who: no child"
	child=$(awk '/^child [0-9]+ locks/ { print $2 }' "$WORK/out")
	m=$(awk '/^shared / { print $2 }' "$WORK/out")
	if wait_for "$WORK/sh.$child.1" ' waits at ' 20; then pass "shared $who: the watchdog reported"
	else fail "shared $who: no watchdog report"; fi
	touch "$WORK/go"
	wait "$job"
	expect_grep "shared $who: the child got the mutex" '^child got it$' "$WORK/out"
	expect_grep "shared $who: and exited" "^child $child exited 0\$" "$WORK/out"
	expect_no_grep "shared $who: no DEADLOCK" '^DEADLOCK' "$WORK/sh.$child.1"
	expect_grep "shared $who: the child waits for it" \
		"^  thread $child \"fork\" waits for mutex $m for " "$WORK/sh.$child.1"
	expect_grep "shared $who: held by the parent's thread, in the parent" \
		"^  held by thread [0-9]+ of process $parent \"fork\" \(process-shared\)" "$WORK/sh.$child.1"
	expect_no_grep "shared $who: the child's report has no MISUSE" '^MISUSE' "$WORK/sh.$child"
done

# ... a process-shared spin lock so held: glibc's word names no holder, so no
# finding can name one; the lock's line says a thread waits for it (the
# watchdog's report said nothing past its header)
rm -f "$WORK/go"
start_job "shared spin" env LD_PRELOAD="$MUTEXSTAT_LIB" MUTEXSTAT_OUTPUT="$WORK/ss.%p" \
	MUTEXSTAT_WATCHDOG=1 MUTEXSTAT_ON_DEADLOCK=abort "$P" sharedspin "$WORK/go"
wait_for "$WORK/out" '^child [0-9]+ locks shared$' 20 || fail "shared spin: no child"
child=$(awk '/^child [0-9]+ locks/ { print $2 }' "$WORK/out")
s=$(awk '/^shared / { print $2 }' "$WORK/out")
if wait_for "$WORK/ss.$child.1" '^  waiting now: ' 20; then pass "shared spin: the watchdog reported"
else fail "shared spin: no watchdog report with the wait"; fi
touch "$WORK/go"
wait "$job"
expect_grep "shared spin: the child got it, and exited" "^child $child exited 0\$" "$WORK/out"
expect_no_grep "shared spin: no DEADLOCK" '^DEADLOCK' "$WORK/ss.$child.1"
expect_grep "shared spin: the lock's section" "^#1 spin lock $s \(spin pshared\)\$" "$WORK/ss.$child.1"
expect_grep "shared spin: one thread waits for it" \
	'^  waiting now: 1 thread, the longest for [0-9.]+ m?s so far' "$WORK/ss.$child.1"

# ---- exec: children are recorded, unless MUTEXSTAT_FOLLOW=0 ----------------
run_with "$WORK/out" "$WORK/err" env MUTEXSTAT_OUTPUT="$WORK/e.%p" "$P" exec "$P" lock 25
line=$(grep '^pid ' "$WORK/out")
child=$(echo "$line" | awk '{ print $2 }')
m=$(echo "$line" | awk '{ print $4 }')
expect_grep "exec: the child ran with the library" '; library loaded; LD_PRELOAD=' "$WORK/out"
expect_eq "exec: its report has its 25 locks" "$(acquired "$WORK/e.$child" "$m")" 25
expect_no_grep "exec: a new program, not a fork child" 'forked from pid' "$WORK/e.$child"

libc=$(ldd "$P" | awk '$1 ~ /^libc\.so/ { print $3 }')
rm -f "$WORK"/e.*
env LD_PRELOAD="$libc $MUTEXSTAT_LIB" MUTEXSTAT_OUTPUT="$WORK/e.%p" MUTEXSTAT_FOLLOW=0 \
	"$P" exec "$P" lock 25 > "$WORK/out" 2> "$WORK/err"
expect_grep "follow=0: the child runs without the library, other preloads kept" \
	"; library absent; LD_PRELOAD=$libc\$" "$WORK/out"
expect_eq "follow=0: one report, the parent's" "$(ls "$WORK" | grep -c '^e\.')" 1
env LD_PRELOAD="$MUTEXSTAT_LIB" MUTEXSTAT_OUTPUT="$WORK/y.%p" MUTEXSTAT_FOLLOW=0 \
	"$P" system "$P lock 4" > "$WORK/out" 2> "$WORK/err"
expect_grep "follow=0: system()'s child too, and LD_PRELOAD is gone" \
	'; library absent; LD_PRELOAD unset$' "$WORK/out"
expect_eq "follow=0: system(): one report" "$(ls "$WORK" | grep -c '^y\.')" 1
env LD_PRELOAD="$MUTEXSTAT_LIB" MUTEXSTAT_OUTPUT="$WORK/y1.%p" \
	"$P" system "$P lock 4" > "$WORK/out" 2> "$WORK/err"
expect_grep "follow=1: system()'s child is recorded" '; library loaded; ' "$WORK/out"
# (sh -c runs its one command in place: one process, two programs)
expect_eq "follow=1: system(): the child's report and ours" "$(ls "$WORK" | grep -c '^y1\.')" 2
# A program that builds the child's environment itself, with the library
# in it, gets what it asked for.
env LD_PRELOAD="$MUTEXSTAT_LIB" MUTEXSTAT_OUTPUT="$WORK/o.%p" MUTEXSTAT_FOLLOW=0 \
	"$P" ownenv "$MUTEXSTAT_LIB" "$P" lock 6 > "$WORK/out" 2> "$WORK/err"
expect_grep "own envp: the child has the library the program put there" '; library loaded; ' "$WORK/out"
expect_grep "own envp: its report on its stderr (no MUTEXSTAT_OUTPUT there)" \
	'^mutexstat: fork \(pid [0-9]+\) ran' "$WORK/err"

# fork without exec, MUTEXSTAT_FOLLOW=0: the child records nothing, writes
# no report, and a SIGUSR1 does what it does without the library
run_with "$WORK/out" "$WORK/err" env MUTEXSTAT_OUTPUT="$WORK/f.%p" MUTEXSTAT_FOLLOW=0 "$P" counts
expect_eq "follow=0, fork: only the parent's report" "$(ls "$WORK" | grep -c '^f\.')" 1
start_job follow0 env LD_PRELOAD="$MUTEXSTAT_LIB" MUTEXSTAT_OUTPUT="$WORK/g.%p" MUTEXSTAT_FOLLOW=0 \
	"$P" usr1
wait_for "$WORK/out" '^child [0-9]+ ready$' 20 || fail "follow=0 usr1: no child"
child=$(awk '/^child [0-9]+ ready/ { print $2 }' "$WORK/out")
kill -USR1 "$child"
wait "$job"
expect_grep "follow=0, fork: SIGUSR1 ends the child as without the library" \
	"^child $child killed by SIGUSR1$" "$WORK/out"

# ---- a fork while another thread holds the dynamic linker's lock -----------
# A thread sits in a dl_iterate_phdr callback, holding the lock glibc does
# not reset in a fork child, while a second thread's first lock captures
# its stack (with libunwind's walk alone, that capture waited for the lock
# holding libunwind's, and the child's own capture waited for ever).  The
# child must not hang: it takes no stacks and says why.
# fork_scenario MODE: fork.c's MODE without and with the library: the child
# exits 7, not hung, with its own mutex locked 4 times; its report is in
# $child, the parent's in $parent.
fork_scenario() {
	"$P" "$1" > "$WORK/out" 2>&1
	expect_grep "$1: without the library" '^child exited 7$' "$WORK/out"
	rm -f "$WORK"/cap.*
	rc=0
	timeout -s KILL 20 env LD_PRELOAD="$MUTEXSTAT_LIB" MUTEXSTAT_OUTPUT="$WORK/cap.%p" \
		"$P" "$1" > "$WORK/out" 2> "$WORK/err" || rc=$?
	expect_eq "$1: exit status" "$rc" 0
	expect_grep "$1: the child did not hang" '^child exited 7$' "$WORK/out"
	child=$(grep -l 'forked from pid' "$WORK"/cap.* | head -n 1)
	parent=$(grep -L 'forked from pid' "$WORK"/cap.* | head -n 1)
	expect_eq "$1: the child's own mutex, 4 times" \
		"$(awk '/^Top /{t=1; next} t && /^ +1 (0x|<)/ { print $3; exit }' "${child:-$WORK/none}")" 4
}
fork_scenario capturing
expect_grep "capturing: the child's report says why it has no stacks" \
	"^  call stacks: none in this process: another thread of the parent was in the dynamic linker$" \
	"${child:-$WORK/none}"
expect_grep "capturing: the parent keeps its stacks" '^  call stacks: each of ' "${parent:-$WORK/none}"

# The same with nothing loaded before the fork: the child's report would
# open libdw (dlopen takes that lock).  It names with dladdr instead.
fork_scenario loaderheld
expect_grep "loaderheld: the child's report says why it names with dladdr" \
	"^  names: from dladdr \(not loaded: another thread was in ld.so at the fork\)" \
	"${child:-$WORK/none}"

# ---- a thread made in the child settles its table ------------------------
# The forking thread had records spare; a thread of the child makes the
# first mutex calls.  Each mutex keeps a record of its own: the new
# thread's 12 locked 7 + 7 times, the forking thread's 12 100 times (a
# record handed out twice made 3 of them vanish and 9 start again at 7).
rm -f "$WORK"/sp.*
rc=0
timeout -s KILL 60 env LD_PRELOAD="$MUTEXSTAT_LIB" MUTEXSTAT_OUTPUT="$WORK/sp.%p" MUTEXSTAT_TOP=40 \
	"$P" spares > "$WORK/out" 2> "$WORK/err" || rc=$?
expect_eq "spares: exit status" "$rc" 0
child=$(grep -l 'forked from pid' "$WORK"/sp.* | head -n 1)
expect_grep "spares: 24 mutexes in the child" \
	'^mutexstat: fork \(pid [0-9]+\) .*: 2 threads used mutexes, 24 mutexes tracked' "${child:-$WORK/none}"
expect_eq "spares: 12 mutexes with 14 acquisitions, 12 with 100" \
	"$(awk '/^Top /{t=1; next} t && /^$/ { exit } t && /^ +[0-9]+ (0x|<)/ { print $3 }' "${child:-$WORK/none}" |
	   sort -n | uniq -c | awk '{ printf "%s:%s ", $2, $1 }')" "14:12 100:12 "

# ---- an allocator whose fork handlers run while ours hold our locks -------
for a in /usr/lib/*/libtcmalloc_minimal.so.4; do
	[ -e "$a" ] || continue
	for order in "$MUTEXSTAT_LIB:$a" "$a:$MUTEXSTAT_LIB"; do
		timeout -s KILL 120 env LD_PRELOAD="$order" MUTEXSTAT_OUTPUT=/dev/null \
			"$P" stress 50 > "$WORK/out" 2> "$WORK/err"
		expect_grep "stress with $(basename "$a") ($order)" '^50 of 50 children exited 0$' "$WORK/out"
	done
done
# ---- threads that end while another thread forks -------------------------------
# A thread's end gives its spare records back under the pool's lock, which
# a fork holds; giving up there (as a stripe's waiter does) lost them for
# good, and a table of 16384 then held 16193 of 16300 mutexes and said it
# was full.  The pool's waiter waits through a fork.
cat >"$WORK/churn.c" <<'EOF'
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static volatile int stop;
static void *short_life(void *arg)
{
	pthread_mutex_t m;
	pthread_mutex_init(&m, NULL);
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	pthread_mutex_destroy(&m);
	return arg;
}
static void *forks(void *arg)
{
	while (!stop) {
		pid_t p = fork();
		if (p == 0)
			_exit(0);
		waitpid(p, NULL, 0);
	}
	return arg;
}
int main(int argc, char **argv)
{
	int live = atoi(argv[1]);
	pthread_t f;
	pthread_create(&f, NULL, forks, NULL);
	struct timespec s, n;
	clock_gettime(CLOCK_MONOTONIC, &s);
	do {
		pthread_t t[8];
		for (int i = 0; i < 8; i++)
			pthread_create(&t[i], NULL, short_life, NULL);
		for (int i = 0; i < 8; i++)
			pthread_join(t[i], NULL);
		clock_gettime(CLOCK_MONOTONIC, &n);
	} while (n.tv_sec - s.tv_sec < 2);
	stop = 1;
	pthread_join(f, NULL);
	pthread_mutex_t *ms = calloc(live, sizeof *ms);
	for (int i = 0; i < live; i++) {
		pthread_mutex_init(&ms[i], NULL);
		pthread_mutex_lock(&ms[i]);
		pthread_mutex_unlock(&ms[i]);
	}
	printf("done\n");
	return 0;
}
EOF
CC=${CC:-cc}
"$CC" -g -o "$WORK/churn" "$WORK/churn.c" -lpthread || fail "cannot build churn.c"
timeout -s KILL 60 env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_TABLE_SIZE=16384 MUTEXSTAT_OUTPUT="$WORK/churn.r" \
	"$WORK/churn" 16300 >"$WORK/churn.out" 2>&1
expect_eq "threads ending during forks: the program ran" "$(cat "$WORK/churn.out")" done
expect_grep "threads ending during forks: no record lost, 16300 of 16384 tracked" \
	' 16300 mutexes tracked, 0 untracked$' "$WORK/churn.r"

# ---- a live dump under way as a fork child ends with _exit or quick_exit ----
# The exit report waits for a dump under way, but a fork child that ends
# by _exit writes no report of its own, and its dump was left cut (7 of
# 11 files not valid JSON).  It is finished first now.
if command -v jq >/dev/null 2>&1; then
	cat >"$WORK/cutdump.c" <<'EOF2'
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#define NMX 3000
static pthread_mutex_t mx[NMX];
static void *spin(void *a)
{
	for (int r = 0; r < 1000000; r++) {
		pthread_mutex_lock(&mx[r % NMX]);
		pthread_mutex_unlock(&mx[r % NMX]);
	}
	return a;
}
int main(int argc, char **argv)
{
	int quick = argc > 1 && !strcmp(argv[1], "quick"), bad = 0;
	for (int c = 0; c < 6; c++) {
		pid_t p = fork();
		if (p == 0) {
			for (int i = 0; i < NMX; i++) {
				pthread_mutex_init(&mx[i], 0);
				pthread_mutex_lock(&mx[i]);
				pthread_mutex_unlock(&mx[i]);
			}
			pthread_t t;
			pthread_create(&t, 0, spin, 0);
			usleep(5000);
			kill(getpid(), SIGUSR1);
			usleep(2000 + c * 3000);
			if (quick)
				quick_exit(0);
			_exit(0);
		}
		int st;
		waitpid(p, &st, 0);
		bad += !WIFEXITED(st) || WEXITSTATUS(st);
	}
	return bad;
}
EOF2
	# shellcheck disable=SC2086 # SAN_FLAGS is a list of flags
	"$CC" $SAN_FLAGS -pthread -o "$WORK/cutdump" "$WORK/cutdump.c" || fail "cannot build cutdump.c"
	for how in _exit quick; do
		rm -rf "$WORK/cut"
		mkdir "$WORK/cut"
		rc=0
		env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_FORMAT=json MUTEXSTAT_OUTPUT="$WORK/cut/r.%p" \
			"$WORK/cutdump" $how >/dev/null 2>&1 || rc=$?
		expect_eq "$how in fork children during a dump: their status" "$rc" 0
		n=0 bad=0
		for f in "$WORK"/cut/r.*.1.json "$WORK"/cut/r.*.dump.*.json; do
			[ -e "$f" ] || continue
			n=$((n + 1))
			jq empty "$f" 2>/dev/null || bad=$((bad + 1))
		done
		[ "$n" -gt 0 ] && pass "$how: $n dumps written" || fail "$how: no dump written"
		expect_eq "$how in fork children during a dump: every dump whole" "$bad" 0
	done
fi

finish
