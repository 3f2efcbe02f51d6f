# tests/setuid.sh - setuid and setgid programs ignore MUTEXSTAT_*: a program
# linked with the library, made setuid (then setgid) to uid/gid 65534 and
# run by root, runs in the loader's secure mode (AT_SECURE), where the
# library reads its settings with secure_getenv: MUTEXSTAT_OUTPUT,
# MUTEXSTAT_FORMAT, MUTEXSTAT_EXIT_REPORT=0 and a bad MUTEXSTAT_TOP are all
# ignored -- no file is created, no warning printed, and the default report
# goes to stderr.  The same binary without the bits honours them all.
#
# The library is linked, not preloaded: in secure mode the loader ignores
# LD_PRELOAD entries with a slash.  Needs root (to give a file to another
# user) and a file system without nosuid; skipped otherwise.

. "$top_srcdir/tests/lib.sh"

CC=${CC:-cc}
[ "$(id -u)" -eq 0 ] || { echo "skipped: needs root to make a setuid binary"; exit 77; }
command -v "$CC" >/dev/null 2>&1 || { echo "skipped: no C compiler ($CC)"; exit 77; }

cat >"$WORK/setuid_prog.c" <<'EOF'
/* locks a mutex 1000 times; says whether it runs in secure mode */
#include <pthread.h>
#include <stdio.h>
#include <sys/auxv.h>
#include <unistd.h>

#ifdef __SANITIZE_ADDRESS__
/* A sanitized build: LeakSanitizer cannot trace a setuid process (it is
 * not dumpable), and such a process reads no ASAN_OPTIONS. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "detect_leaks=0"; }
#endif

int main(void)
{
	static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	for (int i = 0; i < 1000; i++) {
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
	}
	printf("AT_SECURE %lu, euid %s, egid %s\n", getauxval(AT_SECURE),
	       geteuid() == getuid() ? "= uid" : "!= uid",
	       getegid() == getgid() ? "= gid" : "!= gid");
	return 0;
}
EOF

san_leave_signals # (a sanitized build: MUTEXSTAT_ON_CRASH=report below)

# make DIR: the program and a copy of the library in DIR, which uid 65534
# can reach (the loader opens the library as the effective user).
make_in() {
	d=$1
	mkdir -p "$d/out" || return 1
	chmod 755 "$d" && chmod 777 "$d/out" || return 1
	cp "$MUTEXSTAT_LIB" "$d/libmutexstat.so.0" && chmod 755 "$d/libmutexstat.so.0" &&
	    "$CC" $SAN_FLAGS -o "$d/setuid_prog" "$WORK/setuid_prog.c" "$d/libmutexstat.so.0" \
		-Wl,-rpath,"$d" -lpthread
}

# run_prog [VAR=value]: the program with every setting it should ignore
# when secure (the one given last wins).
run_prog() {
	rm -f "$D/out"/*
	rc=0
	env MUTEXSTAT_OUTPUT="$D/out/r" MUTEXSTAT_FORMAT=text,json MUTEXSTAT_TOP=bad \
	    MUTEXSTAT_EXIT_REPORT=0 MUTEXSTAT_ON_CRASH=report "$@" "$D/setuid_prog" \
	    >"$WORK/out" 2>"$WORK/err" || rc=$?
}

# The temporary directory, else the build tree: one of them may allow
# setuid (a nosuid mount ignores the bit) and be reachable by uid 65534.
D=
why=
chmod 755 "$WORK"
for d in "$WORK/suid" "$top_builddir/tests/setuid.tmp"; do
	if ! make_in "$d"; then
		why="$why; cannot build in $d"
		continue
	fi
	chown 65534 "$d/setuid_prog" && chmod u+s "$d/setuid_prog"
	out=$("$d/setuid_prog" 2>"$WORK/probe.err" </dev/null)
	case $out in
	"AT_SECURE 1, euid != uid, egid = gid") D=$d; break ;;
	esac
	why="$why; in $d the setuid program says '$out' $(grep -v '^mutexstat' "$WORK/probe.err" | head -n 1)"
	[ "$d" = "$WORK/suid" ] || rm -rf "$d"
done
if [ -z "$D" ]; then
	echo "skipped: no directory here runs setuid programs${why} (a nosuid mount?)"
	exit 77
fi
[ "$D" = "$WORK/suid" ] || trap 'rm -rf "$WORK" "$D"' EXIT

# ---- without the bits: the settings are read --------------------------------
chmod u-s "$D/setuid_prog"
chown 0:0 "$D/setuid_prog"
run_prog
expect_eq "not setuid: status and output" "$rc $(cat "$WORK/out")" \
    "0 AT_SECURE 0, euid = uid, egid = gid"
expect_eq "not setuid: the bad MUTEXSTAT_TOP is named, MUTEXSTAT_EXIT_REPORT=0 obeyed" \
    "$(cat "$WORK/err")" \
    "mutexstat: MUTEXSTAT_TOP='bad' is not a number from 1 to 100000; using 10"
expect_eq "not setuid: no report file" "$(ls "$D/out")" ""
run_prog MUTEXSTAT_EXIT_REPORT=1
expect_eq "not setuid: MUTEXSTAT_OUTPUT and MUTEXSTAT_FORMAT are used" \
    "$(cd "$D/out" && ls)" "r.json
r.txt"
expect_grep "not setuid: the report in the file" '^mutexstat: setuid_prog \(pid [0-9]+\) ran ' \
    "$D/out/r.txt"

# expect_secure WHAT: the last run ignored every MUTEXSTAT_* variable.
expect_secure() {
	expect_eq "$1: status and output" "$rc $(cat "$WORK/out")" "0 $2"
	expect_eq "$1: no file made from MUTEXSTAT_OUTPUT" "$(ls "$D/out")" ""
	expect_grep "$1: the report on stderr (MUTEXSTAT_EXIT_REPORT=0 ignored)" \
	    '^mutexstat: setuid_prog \(pid [0-9]+\) ran [^:]+: 1 thread used mutexes, 1 mutex tracked, 0 untracked$' \
	    "$WORK/err"
	expect_eq "$1: its first line is the report's (no warning about MUTEXSTAT_TOP)" \
	    "$(head -n 1 "$WORK/err" | cut -c1-22)" "mutexstat: setuid_prog"
	expect_grep "$1: the report is complete: 1000 acquisitions" \
	    "^ +1 $LOCK_RE +1000 +0 " "$WORK/err"
}

# ---- setuid: euid 65534, uid 0 --------------------------------------------
chown 65534:0 "$D/setuid_prog"
chmod u+s "$D/setuid_prog"
run_prog
expect_secure "setuid" "AT_SECURE 1, euid != uid, egid = gid"

# ---- setgid: egid 65534, gid 0 --------------------------------------------
chown 0:65534 "$D/setuid_prog"
chmod u-s,g+s "$D/setuid_prog"
run_prog
expect_secure "setgid" "AT_SECURE 1, euid = uid, egid != gid"

# ---- a process that drops its privileges keeps its names -----------------
# setuid() to nobody makes a process not dumpable: /proc/<pid>/auxv is
# root's then, libdw's report of the modules (which reads it) failed, and
# every name fell back to dladdr ("dropdown+0x11cd", no source line).  The
# maps themselves are still the process's to read.
cat >"$WORK/dropped.c" <<'EOF'
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#ifdef __SANITIZE_ADDRESS__
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "detect_leaks=0"; }
#endif

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static void __attribute__((noinline)) after_dropping(void)
{
	for (int i = 0; i < 10; i++) {
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
	}
}
int main(void)
{
	if (setuid(65534) != 0) {
		perror("setuid");
		return 1;
	}
	after_dropping();
	return 0;
}
EOF
if "$CC" -g -O0 -o "$WORK/dropped" "$WORK/dropped.c" -lpthread; then
	rc=0
	env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/dropped.report" "$WORK/dropped" \
		>"$WORK/dropped.out" 2>"$WORK/dropped.err" || rc=$?
	expect_eq "privileges dropped: the program's status" "$rc" 0
	expect_grep "privileges dropped: the report names the function and its line" \
		'^  first locked at   after_dropping\+0x[0-9a-f]+ \(.*dropped\.c:[0-9]+, dropped\)$' "$WORK/dropped.err"
	expect_no_grep "privileges dropped: names not from dladdr" '^  names: from dladdr' "$WORK/dropped.err"
else
	fail "cannot build dropped.c"
fi

finish
