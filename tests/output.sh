# tests/output.sh - where the report goes: MUTEXSTAT_OUTPUT with %p (one
# file per process, named by its pid), truncating; a path that cannot be
# written (no such directory, a /sys file, a symlink, which is never
# followed, /dev/full) earns one warning and the report on stderr; a
# directory gets each process's report as mutexstat.PID
# (tests/report_files.sh has the rest of the rules); and stderr
# means the stderr the program started with, even if the program closes
# fd 2 and a file it opens takes that number (the report must not land in
# that file).

. "$top_srcdir/tests/lib.sh"

CONTENTION="$top_builddir/examples/contention"
CC=${CC:-cc}

# fd2 MODE FILE: does MODE to fd 2, then locks a mutex and exits normally.
cat >"$WORK/fd2.c" <<'EOF'
/* fd2 reuse FILE:    close fd 2, open FILE (it gets fd 2)
 * fd2 closeall FILE: close every fd from 2 up (the library's copy too),
 *                    then open FILE (fd 2)
 * fd2 close FILE:    close fd 2 only
 * fd2 devnull FILE:  fd 2 becomes /dev/null
 * then lock and unlock a mutex, write a line of its own to the new fd, and
 * print on stdout the fd it got. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	int fd = -1;
	if (argc != 3)
		return 2;
	if (!strcmp(argv[1], "closeall"))
		closefrom(2);
	else
		close(2);
	if (!strcmp(argv[1], "devnull"))
		fd = open("/dev/null", O_WRONLY);
	else if (strcmp(argv[1], "close"))
		fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	if (fd >= 0)
		dprintf(fd, "fd2: the program's own line\n");
	printf("fd %d\n", fd);
	return 0;
}
EOF
FD2="$WORK/fd2"
"$CC" -Wall -o "$FD2" "$WORK/fd2.c" -lpthread || {
	fail "cannot compile the test program with $CC"
	finish
}

"$CONTENTION" 2 1000 >"$WORK/contention.out"
FIRST='^mutexstat: contention \(pid [0-9]+\) ran [^:]+: 3 threads used mutexes, 2 mutexes tracked, 0 untracked$'

# run OUTPUT program args...: under the library with MUTEXSTAT_OUTPUT set
# to OUTPUT (empty: stderr); status in $rc.
run() {
	output=$1; shift
	rc=0
	env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$output" "$@" \
	    >"$WORK/out" 2>"$WORK/err" || rc=$?
}

# ---- %p ------------------------------------------------------------------

mkdir "$WORK/p"
run "$WORK/p/r.%p.txt" sh -c 'echo $$; exec "$0" 2 1000' "$CONTENTION"
pid=$(head -n 1 "$WORK/out")
expect_eq "%p: program's output" "$rc $(sed 1d "$WORK/out")" "0 $(cat "$WORK/contention.out")"
expect_eq "%p: the one file is named with the pid" "$(ls "$WORK/p")" "r.$pid.txt"
if [ -f "$WORK/p/r.$pid.txt" ]; then
	expect_grep "%p: the report in it" "$FIRST" "$WORK/p/r.$pid.txt"
	expect_grep "%p: the report's pid is the file's" "^mutexstat: contention \(pid $pid\)" \
	    "$WORK/p/r.$pid.txt"
fi
expect_eq "%p: nothing on stderr" "$(cat "$WORK/err")" ""

rm -f "$WORK/p"/*
run "$WORK/p/%p-%p" sh -c 'echo $$; exec "$0" 1 100' "$CONTENTION"
pid=$(head -n 1 "$WORK/out")
expect_eq "two %p: both replaced" "$(ls "$WORK/p")" "$pid-$pid"

# each process writes its own file, named by its own pid
rm -f "$WORK/p"/*
run "$WORK/p/%p" sh -c '"$0" 1 100 >/dev/null; "$0" 2 100 >/dev/null' "$CONTENTION"
n=0
for f in "$WORK/p"/*; do
	[ -f "$f" ] || continue
	if head -n 1 "$f" | grep -q "^mutexstat: contention (pid ${f##*/})"; then
		n=$((n + 1))
	fi
done
expect_eq "two children: two reports, each in its own pid's file" "$n" 2

# children a parent runs one after another, each writing its report to
# the file without %p, then the parent: all five reports there (a child
# counted as begun at its fork replaced the one before it: 3 lost)
cat >"$WORK/forkseq.c" <<'EOF'
#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int main(void)
{
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	for (int k = 0; k < 4; k++) {
		pid_t p = fork();
		if (p == 0) {
			pthread_mutex_lock(&m);
			pthread_mutex_unlock(&m);
			exit(0);
		}
		waitpid(p, NULL, 0);
	}
	return 0;
}
EOF
if $CC -O2 -pthread -o "$WORK/forkseq" "$WORK/forkseq.c"; then
	rm -f "$WORK/seq.txt"
	run "$WORK/seq.txt" "$WORK/forkseq"
	expect_eq "children run in turn: status" "$rc" 0
	expect_eq "children run in turn: five reports in the one file" \
		"$(grep -c '^mutexstat: forkseq (pid [0-9]*)' "$WORK/seq.txt")" 5
	expect_eq "... four of them a child's" "$(grep -c '^  forked from pid ' "$WORK/seq.txt")" 4
else
	fail "forkseq: cannot compile"
fi

# programs a shell runs one after another, each writing to the file
# without %p: all their reports there, in turn (base/run_began.h: each
# program began after the one before it wrote, and replaced its report)
# -- its children, which began after their parent, the shell, and a
# program it execs in its own place, which began as a process with the
# shell.  A second run replaces the first's.  (The first program runs
# some 30 ms or more: a report written in the run's first 10-ms tick, and
# the file system's coarser clock, counts as an earlier run's.)
E=$top_builddir/examples
for i in 1 2; do
	run "$WORK/sib.txt" sh -c "'$E/contention'; '$E/ten_by_twenty'"
	expect_eq "a shell's children, run $i: status" "$rc" 0
	expect_eq "a shell's children, run $i: both reports, in turn" \
		"$(sed -n 's/^mutexstat: \([a-z_]*\) (pid .*/\1/p' "$WORK/sib.txt" | tr '\n' ' ')" \
		"contention ten_by_twenty "
done
run "$WORK/sib.txt" sh -c "'$E/contention'; exec '$E/ten_by_twenty'"
expect_eq "a child, then a program the shell execs: both reports, in turn" \
	"$(sed -n 's/^mutexstat: \([a-z_]*\) (pid .*/\1/p' "$WORK/sib.txt" | tr '\n' ' ')" \
	"contention ten_by_twenty "
# A shell that leads its session (a terminal's, a container's) is not a
# run, though started with the variable: every program run from it for
# hours would be one, its file never replaced.  Each of its children is a
# run of its own, the later one's report replacing the earlier's.
if command -v setsid >/dev/null 2>&1; then
	run "$WORK/sib.txt" setsid -w sh -c "'$E/contention'; '$E/ten_by_twenty'; :"
	expect_eq "a session leader's children: each a run, the last report kept" \
		"$(sed -n 's/^mutexstat: \([a-z_]*\) (pid .*/\1/p' "$WORK/sib.txt" | tr '\n' ' ')" \
		"ten_by_twenty "
else
	pass "setsid is not installed: a session leader's children not tried"
fi

# an existing file is truncated
yes 'old junk that must go' | head -n 500 >"$WORK/old.txt"
run "$WORK/old.txt" "$CONTENTION" 2 1000
expect_grep "an existing file: the report" "$FIRST" "$WORK/old.txt"
expect_no_grep "an existing file is truncated" 'old junk' "$WORK/old.txt"

# ---- a path that cannot be written ----------------------------------------

# expect_fallback WHAT PATH ERRNAME-REGEX: the last run warned about PATH,
# then wrote the report on stderr, and the program was not affected.
expect_fallback() {
	expect_eq "$1: program's output" "$rc $(cat "$WORK/out")" \
	    "0 $(cat "$WORK/contention.out")"
	line1=$(head -n 1 "$WORK/err")
	case $line1 in
	"mutexstat: cannot write MUTEXSTAT_OUTPUT '$2' ("*"); the report goes to stderr")
		pass "$1: the warning" ;;
	*) fail "$1: the warning: got '$line1'" ;;
	esac
	errname=${line1##*\' (}
	errname=${errname%%)*}
	if printf '%s\n' "$errname" | grep -Eqx "$3"; then pass "$1: error $errname"
	else fail "$1: error '$errname', want $3"; fi
	sed 1d "$WORK/err" >"$WORK/err.rest"
	expect_grep "$1: then the report on stderr" "$FIRST" "$WORK/err.rest"
	expect_eq "$1: the report starts on line 2" "$(sed -n '2s/ (pid.*//p' "$WORK/err")" \
	    "mutexstat: contention"
	expect_grep "$1: the whole report" '^Top 2 mutexes by wait:$' "$WORK/err.rest"
}

printf 'precious\n' >"$WORK/target"
run "$WORK/nodir/r.txt" "$CONTENTION" 2 1000
expect_fallback "no such directory" "$WORK/nodir/r.txt" ENOENT
expect_eq "no such directory: not created" "$(test -e "$WORK/nodir" && echo made)" ""

# a directory, named as such ("dir/") or not: each process's report in
# it, as mutexstat.PID -- with several formats, PREFIX.txt and PREFIX.json
# there, not files named .txt and .json that ls does not show
mkdir -p "$WORK/rdir" "$WORK/rdir2"
for out in "$WORK/rdir" "$WORK/rdir2/"; do
	run "$out" "$CONTENTION" 2 1000
	dir=${out%/}
	expect_eq "a directory ($out): nothing on stderr" "$(cat "$WORK/err")" ""
	f=$(cd "$dir" && ls -A)
	case $f in
	mutexstat.[0-9]*) pass "a directory ($out): the report as mutexstat.PID" ;;
	*) fail "a directory ($out): the files in it: '$f'" ;;
	esac
	expect_grep "a directory ($out): the report of that pid" \
		"^mutexstat: contention \(pid ${f#mutexstat.}\)" "$dir/$f"
done
mkdir -p "$WORK/rdir3"
rc=0
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/rdir3/" MUTEXSTAT_FORMAT=text,json \
	"$CONTENTION" 2 1000 >"$WORK/out" 2>"$WORK/err" || rc=$?
expect_eq "a directory, two formats: status and stderr" "$rc $(cat "$WORK/err")" "0 "
expect_eq "a directory, two formats: PREFIX.txt and PREFIX.json, no hidden file" \
	"$(cd "$WORK/rdir3" && ls -A | sed 's/[0-9][0-9]*/PID/')" "mutexstat.PID.json
mutexstat.PID.txt"

run "$WORK/target/r.txt" "$CONTENTION" 2 1000
expect_fallback "a file used as a directory" "$WORK/target/r.txt" ENOTDIR

# (we may be root, who may create files anywhere writable: /sys is not)
run /sys/mutexstat-report.txt "$CONTENTION" 2 1000
expect_fallback "a file in /sys" /sys/mutexstat-report.txt 'E[A-Z]+'

# a file that opens but cannot be written: the program must not notice;
# one line says so, and the report goes to stderr
run /dev/full "$CONTENTION" 2 1000
expect_eq "/dev/full: program's output" "$rc $(cat "$WORK/out")" \
    "0 $(cat "$WORK/contention.out")"
expect_eq "/dev/full: the warning" "$(head -n 1 "$WORK/err")" \
    "mutexstat: writing MUTEXSTAT_OUTPUT '/dev/full' failed (ENOSPC); the report goes to stderr"
sed 1d "$WORK/err" >"$WORK/err.rest"
expect_grep "/dev/full: then the report on stderr" "$FIRST" "$WORK/err.rest"
expect_grep "/dev/full: the whole report" '^Top 2 mutexes by wait:$' "$WORK/err.rest"

run "$WORK/nodir/r.%p.txt" sh -c 'echo $$ >"$1"; exec "$0" 2 1000' \
    "$CONTENTION" "$WORK/pid"
expect_fallback "no such directory, %p" "$WORK/nodir/r.$(cat "$WORK/pid").txt" ENOENT

ln -s "$WORK/target" "$WORK/link"
run "$WORK/link" "$CONTENTION" 2 1000
expect_fallback "a symlink" "$WORK/link" "a symlink: not followed"
expect_eq "a symlink: its target untouched" "$(cat "$WORK/target")" precious
ln -s "$WORK/nothing-yet" "$WORK/dangling"
run "$WORK/dangling" "$CONTENTION" 2 1000
expect_fallback "a dangling symlink" "$WORK/dangling" "a symlink: not followed"
expect_eq "a dangling symlink: not created through" \
    "$(test -e "$WORK/nothing-yet" && echo made)" ""

# ---- the process's own streams: /dev/stdout, /dev/fd/N ------------------
# Symbolic links of the kernel's, to the program's descriptor: the report
# goes to a copy of it, where the program's output is (the links' targets
# reopened would start a file over the program's output).
rc=0
{ echo before; env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT=/dev/stdout "$CONTENTION" 2 1000 \
	|| rc=$?; echo after; } >"$WORK/out" 2>"$WORK/err"
expect_eq "/dev/stdout: nothing on stderr, status 0" "$(wc -c <"$WORK/err") $rc" "0 0"
expect_eq "/dev/stdout: the line before, the report's first line, ... the line after" \
	"$(sed -n '1p;2s/ (pid.*//p' "$WORK/out" | paste -sd' ' -) $(tail -n 1 "$WORK/out")" \
	"before mutexstat: contention after"
expect_eq "/dev/stdout: the program's own output kept" \
	"$(grep -cxF "$(cat "$WORK/contention.out")" "$WORK/out")" 1
# every format there too ("/dev/stdout.json" is no file to make)
if command -v jq >/dev/null 2>&1; then
	env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT=/dev/stdout MUTEXSTAT_FORMAT=json "$CONTENTION" 2 1000 \
		>"$WORK/out" 2>"$WORK/err"
	# (the program's line, buffered by stdio, comes at its exit: after)
	expect_eq "/dev/stdout, JSON: the report on stdout, then the program's line" \
		"$(sed '$d' "$WORK/out" | jq -r '.program') $(tail -n 1 "$WORK/out") $(wc -c <"$WORK/err")" \
		"contention $(cat "$WORK/contention.out") 0"
fi
# interval reports too, and MUTEXSTAT_KEEP removes nothing: it unlinked
# the file of an interval gone by, which here is /dev/stdout (as root, the
# machine's)
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT=/dev/stdout MUTEXSTAT_INTERVAL=0.2 MUTEXSTAT_KEEP=1 \
	"$top_builddir/examples/service" 1 >"$WORK/out" 2>"$WORK/err"
expect_eq "/dev/stdout, intervals: more than one interval report there, /dev/stdout kept" \
	"$([ "$(grep -c '^mutexstat: service (pid [0-9]*) interval ' "$WORK/out")" -gt 1 ] && echo yes) $(test -e /dev/stdout && echo kept)" \
	"yes kept"
rc=0
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT=/dev/fd/7 "$CONTENTION" 2 1000 \
	>"$WORK/out" 2>"$WORK/err" 7>"$WORK/seven" || rc=$?
expect_eq "/dev/fd/7: nothing on stderr, status 0" "$(wc -c <"$WORK/err") $rc" "0 0"
expect_grep "/dev/fd/7: the report in the file open there" "$FIRST" "$WORK/seven"
run /proc/self/fd/9 "$CONTENTION" 2 1000
expect_fallback "/proc/self/fd/9, not open" /proc/self/fd/9 EBADF
run /dev/fd/1000 "$CONTENTION" 2 1000
expect_fallback "/dev/fd/1000, the library's own copy of stderr" /dev/fd/1000 \
	"the library's own descriptor: not written"

# ---- stderr is the stderr the program started with --------------------

run "" "$FD2" reuse "$WORK/reused"
expect_eq "fd 2 reused: the program got fd 2" "$rc $(cat "$WORK/out")" "0 fd 2"
expect_grep "fd 2 reused: the report on the original stderr" \
    '^mutexstat: fd2 \(pid [0-9]+\) ran ' "$WORK/err"
expect_eq "fd 2 reused: the file has only the program's own line" \
    "$(cat "$WORK/reused")" "fd2: the program's own line"

run "" "$FD2" close "$WORK/unused"
expect_eq "fd 2 closed: program" "$rc $(cat "$WORK/out")" "0 fd -1"
expect_grep "fd 2 closed: the report on the original stderr" \
    '^mutexstat: fd2 \(pid [0-9]+\) ran ' "$WORK/err"

run "" "$FD2" devnull "$WORK/unused"
expect_grep "fd 2 to /dev/null: the report on the original stderr" \
    '^mutexstat: fd2 \(pid [0-9]+\) ran ' "$WORK/err"

rm -f "$WORK/reused"
run "" "$FD2" closeall "$WORK/reused"
expect_eq "all fds closed, fd 2 reused: program" "$rc $(cat "$WORK/out")" "0 fd 2"
expect_eq "all fds closed, fd 2 reused: the file has only the program's line" \
    "$(cat "$WORK/reused")" "fd2: the program's own line"

# ... and fd 2 reused by a pipe (a daemon's log, journald's socket): one
# line there says where the report went -- nowhere -- and what keeps it
mkfifo "$WORK/fifo"
cat "$WORK/fifo" >"$WORK/fifo.got" &
run "" "$FD2" closeall "$WORK/fifo"
wait
expect_eq "all fds closed, fd 2 a pipe: what came through it" "$(cat "$WORK/fifo.got")" \
    "fd2: the program's own line
mutexstat: no report: the program closed the stderr it started with, and mutexstat's copy \
of it (closefrom?); MUTEXSTAT_OUTPUT=FILE keeps reports"

rm -f "$WORK/reused"
run "$WORK/nodir/r.txt" "$FD2" reuse "$WORK/reused"
expect_grep "fd 2 reused, output unwritable: the warning on the original stderr" \
    "^mutexstat: cannot write MUTEXSTAT_OUTPUT '$WORK/nodir/r.txt' \(ENOENT\)" "$WORK/err"
expect_grep "fd 2 reused, output unwritable: the report on the original stderr" \
    '^mutexstat: fd2 \(pid [0-9]+\) ran ' "$WORK/err"
expect_eq "fd 2 reused, output unwritable: not in the reused file" \
    "$(cat "$WORK/reused")" "fd2: the program's own line"

# started with fd 2 closed: there is no stderr to report on, and the file
# that gets fd 2 must not receive the report either
rm -f "$WORK/reused"
rc=0
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT= "$FD2" reuse "$WORK/reused" \
    >"$WORK/out" 2>&- || rc=$?
expect_eq "started without fd 2: program" "$rc $(cat "$WORK/out")" "0 fd 2"
expect_eq "started without fd 2: the file has only the program's line" \
    "$(cat "$WORK/reused")" "fd2: the program's own line"
rm -f "$WORK/reused"
rc=0
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/closed.txt" \
    "$FD2" reuse "$WORK/reused" >"$WORK/out" 2>&- || rc=$?
expect_grep "started without fd 2, MUTEXSTAT_OUTPUT: the report in the file" \
    '^mutexstat: fd2 \(pid [0-9]+\) ran ' "$WORK/closed.txt"

# ---- a lock in the program's .preinit_array --------------------------------
# Its functions run before glibc sets environ and the program's name: the
# library, started by that lock, reads them from the initial stack.  The
# program's own getenv there still finds nothing, as without the library.
cat >"$WORK/preinit.c" <<'EOF'
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
static pthread_mutex_t early = PTHREAD_MUTEX_INITIALIZER;
static const char *home_early;
static void pre(int argc, char **argv, char **envp)
{
	(void)argc, (void)argv, (void)envp;
	pthread_mutex_lock(&early);
	home_early = getenv("HOME");
	pthread_mutex_unlock(&early);
}
__attribute__((section(".preinit_array"), used)) static void (*pre_p)(int, char **, char **) = pre;
int main(void)
{
	pthread_mutex_lock(&early);
	printf("getenv in preinit: %s\n", home_early ? "a value" : "nothing");
	pthread_mutex_unlock(&early);
	return 0;
}
EOF
"$CC" -Wall -o "$WORK/preinit" "$WORK/preinit.c" -lpthread || fail "cannot build preinit.c"
rc=0
HOME=/nowhere env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/preinit.txt" MUTEXSTAT_HISTORY=2 \
	"$WORK/preinit" >"$WORK/out" 2>"$WORK/err" || rc=$?
expect_eq "preinit: exit status" "$rc" 0
expect_eq "preinit: the program's getenv found nothing there, as without us" \
	"$(cat "$WORK/out")" "getenv in preinit: nothing"
expect_eq "preinit: nothing on stderr" "$(cat "$WORK/err")" ""
expect_grep "preinit: the report in MUTEXSTAT_OUTPUT, with the program's name" \
	'^mutexstat: preinit \(pid [0-9]+\) ran ' "$WORK/preinit.txt"
expect_eq "preinit: its lock counted, the one in preinit too" \
	"$(awk '/^Top /{t=1; next} t && /^ +1 <early> / { print $3; exit }' "$WORK/preinit.txt")" 2
expect_eq "preinit: MUTEXSTAT_HISTORY read there too: 2 of 4 operations kept" \
	"$(awk '/recent operations/ { getline; on = 1; next } on && /^$/ { exit } on { n++ }
		END { print n + 0 }' "$WORK/preinit.txt")" 2

finish
