# api_edges.sh - the public API at its edges (tests/api_edges.c): a dump
# that blocks for ever does not keep the process from ending; names are
# kept once each, so renaming never runs out of memory; locks named before
# their init or first use get the name as the kind they are; a library loaded
# by dlopen, too late to see the program's calls, says so.
. "$top_srcdir/tests/lib.sh"
B=$top_builddir
LIBDIR=$(dirname "$MUTEXSTAT_LIB")

# A thread's mutexstat_dump() blocked writing to a pipe nobody reads: main
# returns and the process ends with its status, as without the library;
# the exit report gives up waiting for the stuck dump, and says so (it
# used to spin for ever on the report's lock, a CPU at 100%).
env LD_LIBRARY_PATH="$LIBDIR" timeout -s KILL 60 "$B/tests/api_edges" blocked \
	> "$WORK/out" 2> "$WORK/err"
rc=$?
expect_eq "blocked dump: the process ends with main's status" "$rc:$(cat "$WORK/out")" "0:main returns"
expect_eq "blocked dump: one line says why there is no exit report" "$(cat "$WORK/err")" \
	"mutexstat: no exit report: another report has been stuck for 5 s (a mutexstat_dump() to a pipe nobody reads?)"

# Renaming a mutex back and forth two million times: each name is kept
# once, every call succeeds, and the report has the last name.
env LD_LIBRARY_PATH="$LIBDIR" MUTEXSTAT_OUTPUT="$WORK/report" timeout -s KILL 60 \
	"$B/tests/api_edges" renames > "$WORK/out" 2> "$WORK/err"
expect_eq "renames: every call succeeds" "$?:$(cat "$WORK/out")" "0:0 renames failed"
expect_grep "renames: the report has the last name" '^  1 busy +3 ' "$WORK/report"
expect_eq "linked: no word of loading late" "$(cat "$WORK/err")" ""
if command -v jq > /dev/null; then
	MUTEXSTAT_FORMAT=json MUTEXSTAT_OUTPUT=$WORK/r run_with "$WORK/out" "$WORK/err" "$B/tests/api_edges" renames
	expect_eq "preloaded: JSON's loaded_late" "$(jq -c '.loaded_late' "$WORK/r.json")" false
fi

# Locks named by address before their init or first use: each gets its
# name as the kind it turns out to be, and only if MUTEXSTAT_TRACK records
# that kind.  A record made at naming time was a mutex's: an rwlock named
# and never used counted as a tracked mutex, MUTEXSTAT_TRACK=mutex tracked
# named rwlocks and spin locks as mutexes, and MUTEXSTAT_TRACK=rwlock,spin
# refused every name (-1).
for track in mutex,rwlock,spin mutex rwlock,spin; do
	env LD_LIBRARY_PATH="$LIBDIR" MUTEXSTAT_OUTPUT="$WORK/report" MUTEXSTAT_SORT=acquired \
	    MUTEXSTAT_TRACK=$track "$B/tests/api_edges" prenamed > "$WORK/out" 2> "$WORK/err"
	expect_eq "prenamed ($track): every name taken until the waiting ones fill their slots" \
	    "$?:$(tr '\n' ';' < "$WORK/out")$(cat "$WORK/err")" \
	    "0:rwlock 0;never used 0;spin 0;mutex 0 0;unnamed 0 0;unused: 252 of 300 kept;"
	row() { grep -cE "^  [0-9] $1 +$2 " "$WORK/report"; }
	rows=$(grep -cE '^  [0-9] ' "$WORK/report")
	case $track in
	mutex,rwlock,spin)
		expect_grep "prenamed: 4 locks tracked, not the rwlock never used" \
		    ' used locks, 4 locks tracked, 0 untracked$' "$WORK/report"
		expect_eq "prenamed: the second name, none after NULL, the spin lock and rwlock named" \
		    "$rows $(row 'second name' 3) $(row '<unnamed>' 2) $(row spin 2) $(row 'read once' 1)" \
		    "4 1 1 1 1" ;;
	mutex)
		expect_grep "prenamed, MUTEXSTAT_TRACK=mutex: the 2 mutexes alone" \
		    ' used mutexes, 2 mutexes tracked, 0 untracked$' "$WORK/report"
		expect_eq "prenamed, MUTEXSTAT_TRACK=mutex: the named mutex and the unnamed" \
		    "$rows $(row 'second name' 3) $(row '<unnamed>' 2)" "2 1 1" ;;
	rwlock,spin)
		expect_grep "prenamed, MUTEXSTAT_TRACK=rwlock,spin: the spin lock and the rwlock" \
		    ' used locks, 2 locks tracked, 0 untracked$' "$WORK/report"
		expect_eq "prenamed, MUTEXSTAT_TRACK=rwlock,spin: both named" \
		    "$rows $(row spin 2) $(row 'read once' 1)" "2 1 1" ;;
	esac
done

# A mutex named before its pthread_mutex_init keeps its name, and that init
# is its first; destroyed and made again, it is a new mutex, unnamed.
env LD_LIBRARY_PATH="$LIBDIR" MUTEXSTAT_OUTPUT="$WORK/report" MUTEXSTAT_SORT=acquired \
	"$B/tests/api_edges" preinit > "$WORK/out" 2> "$WORK/err"
expect_eq "preinit: runs" "$?:$(tail -1 "$WORK/out")" "0:done"
expect_grep "preinit: the dump shows it by name, 4 locks" '^ +1 queue +4 ' "$WORK/out"
expect_eq "preinit: the dump: no mutex initialised again" "$(grep -c 'initialised again' "$WORK/out")" 0
expect_grep "preinit: then one destroyed, none initialised again" \
	"^  1 mutex destroyed and 0 initialised again" "$WORK/report"
expect_grep "preinit: the new mutex has no name" '^ +[0-9]+ (0x[0-9a-f]+|<[^>]+>) +2 ' "$WORK/report"

# Dumps to descriptors that fail: -1 with what write(2) said, no SIGPIPE;
# a file opened O_APPEND gets the report between the program's lines.
(cd "$WORK" && env LD_LIBRARY_PATH="$LIBDIR" MUTEXSTAT_EXIT_REPORT=0 \
	"$B/tests/api_edges" fds > "$WORK/out" 2> "$WORK/err")
expect_eq "fds: each dump's answer" "$?:$(cat "$WORK/out")" "0:non-blocking pipe, full: -1 EAGAIN
socket, reader gone: -1 EPIPE
pipe, reader gone: -1 EPIPE
O_APPEND file: 0 -"
expect_eq "fds: O_APPEND: the program's lines around one report" \
	"$(sed -n '1p;$p' "$WORK/append.txt"):$(grep -c '^mutexstat: api_edges (pid' "$WORK/append.txt")" \
	"before
after:1"

# The header compiles clean as C89, C99 and C11, and as C++98 and C++11,
# with a name given to each kind of lock (a spin lock is a volatile int:
# a plain const void * parameter warned).
cat > "$WORK/h.c" <<'EOF'
#define _POSIX_C_SOURCE 200809L /* rwlocks and spin locks, under -std=c89 too */
#include <mutexstat.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_spinlock_t spin;
int main(void)
{
	mutexstat_name(&m, "m");
	mutexstat_name_lock(&m, "m");
	mutexstat_name_lock(&rw, "rw");
	mutexstat_name_lock(&spin, "spin");
	mutexstat_reset();
	return mutexstat_dump(2);
}
EOF
cp "$WORK/h.c" "$WORK/h.cpp"
for std in c89 c99 c11; do
	cc -std=$std -Wall -Wextra -pedantic -Werror -I"$top_srcdir/include" -c "$WORK/h.c" \
		-o "$WORK/h.o" 2> "$WORK/cc.err"
	expect_eq "header: -std=$std -pedantic -Werror" "$?:$(cat "$WORK/cc.err")" "0:"
done
if command -v c++ > /dev/null; then
	for std in c++98 c++11; do
		c++ -std=$std -Wall -Wextra -pedantic -Werror -I"$top_srcdir/include" -c "$WORK/h.cpp" \
			-o "$WORK/h.o" 2> "$WORK/cc.err"
		expect_eq "header: -std=$std -pedantic -Werror" "$?:$(cat "$WORK/cc.err")" "0:"
	done
fi

# A fork child that records nothing (MUTEXSTAT_FOLLOW=0): its dump fails,
# and errno says why (it was left as the program had it).
env LD_LIBRARY_PATH="$LIBDIR" MUTEXSTAT_FOLLOW=0 MUTEXSTAT_EXIT_REPORT=0 \
	"$B/tests/api_edges" forkdump > "$WORK/out" 2> "$WORK/err"
expect_eq "forkdump: -1 and ENOSYS" "$?:$(cat "$WORK/out")" "0:child: dump -1 ENOSYS"

# Preloaded, and a copy from another file dlopen'ed: the copy passes calls
# through, and its API -- found on its handle -- sends its calls to the
# copy that records (they failed: -1, errno untouched, no name).
mkdir "$WORK/copy"
cp -L "$MUTEXSTAT_LIB" "$WORK/copy/libmutexstat.so.0"
cat > "$WORK/api_copy.c" <<'EOC'
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int main(int argc, char **argv)
{
	void *h = dlopen(argv[1], RTLD_NOW);
	int (*name)(const pthread_mutex_t *, const char *) = h ?
		(int (*)(const pthread_mutex_t *, const char *))dlsym(h, "mutexstat_name") : NULL;
	int (*dump)(int) = h ? (int (*)(int))dlsym(h, "mutexstat_dump") : NULL;
	void (*reset)(void) = h ? (void (*)(void))dlsym(h, "mutexstat_reset") : NULL;
	if (!name || !dump || !reset)
		return 1;
	printf("name %d\n", name(&m, "counter"));
	for (int i = 0; i < 5; i++) {
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
	}
	fflush(stdout);
	printf("dump %d\n", dump(1));
	reset();
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	return argc > 2;
}
EOC
if cc -o "$WORK/api_copy" "$WORK/api_copy.c" -ldl -lpthread; then
	timeout -s KILL 60 env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/report" \
		"$WORK/api_copy" "$WORK/copy/libmutexstat.so.0" > "$WORK/out" 2> "$WORK/err"
	expect_eq "API of a copy: runs, the name taken" "$?:$(head -1 "$WORK/out"):$(tail -1 "$WORK/out")" \
		"0:name 0:dump 0"
	expect_grep "API of a copy: the dump has the name and the 5 locks" '^ +1 counter +5 ' "$WORK/out"
	expect_grep "API of a copy: the reset reached the recording copy" '^ +1 counter +1 ' "$WORK/report"
else
	fail "could not build the API-of-a-copy program"
fi

# A program that exports a function of the API's name -- a stub for its
# builds without the library, linked -rdynamic -- is no copy of the
# library: it used to make the library step aside ("another copy of the
# library (./stub) records this process") and record nothing.
cat > "$WORK/stub.c" <<'EOC'
#include <pthread.h>
#include <stdio.h>
__attribute__((weak)) int mutexstat_dump(int fd) { (void)fd; return -1; }
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int main(void)
{
	for (int i = 0; i < 7; i++) {
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
	}
	printf("stub %d\n", mutexstat_dump(2));
	return 0;
}
EOC
if cc -rdynamic -o "$WORK/stub" "$WORK/stub.c" -lpthread; then
	run_with "$WORK/out" "$WORK/err" "$WORK/stub"
	expect_eq "a program's own mutexstat_dump: the program unchanged, no word of a copy" \
		"$?:$(cat "$WORK/out"):$(cat "$WORK/err")" "0:stub -1:"
	expect_grep "a program's own mutexstat_dump: its locks recorded" '^ +1 (0x[0-9a-f]+|<[^>]+>) +7 ' "$WORK/report"
else
	fail "could not build the stub program"
fi

# The API declared weak (mutexstat(3), "Weak declarations") in a program built without
# the library: absent, it is not called; preloaded, it is the library's.
cat > "$WORK/weak.c" <<'EOC'
#include <mutexstat.h>
#include <stdio.h>
#pragma weak mutexstat_name
#pragma weak mutexstat_dump
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int main(void)
{
	if (mutexstat_name)
		mutexstat_name(&m, "weakly named");
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	printf("dump %d\n", mutexstat_dump ? mutexstat_dump(1) : -2);
	return 0;
}
EOC
if cc -I"$top_srcdir/include" -o "$WORK/weak" "$WORK/weak.c" -lpthread; then
	env -u LD_PRELOAD "$WORK/weak" > "$WORK/out" 2>&1
	expect_eq "weak API, no library: not called" "$?:$(cat "$WORK/out")" "0:dump -2"
	MUTEXSTAT_EXIT_REPORT=0 run_with "$WORK/out" "$WORK/err" "$WORK/weak"
	expect_eq "weak API, preloaded: the dump" "$?:$(tail -1 "$WORK/out")" "0:dump 0"
	expect_grep "weak API, preloaded: the name" '^ +1 weakly named +1 ' "$WORK/out"
else
	fail "could not build the weak-API program"
fi

# MUTEXSTAT_EXIT_CODE without a text report at exit (MUTEXSTAT_FORMAT=json):
# the findings are counted all the same.  It read what the last text
# report left -- none (status 0 over an inversion), or a dump's from
# before a reset that forgot them.
cat > "$WORK/abba.c" <<'EOC'
#include <mutexstat.h>
#include <string.h>
#pragma weak mutexstat_dump
#pragma weak mutexstat_reset
static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;
int main(int argc, char **argv)
{
	pthread_mutex_lock(&a); pthread_mutex_lock(&b);
	pthread_mutex_unlock(&b); pthread_mutex_unlock(&a);
	pthread_mutex_lock(&b); pthread_mutex_lock(&a); /* the other order */
	pthread_mutex_unlock(&a); pthread_mutex_unlock(&b);
	if (argc > 1 && !strcmp(argv[1], "forgotten")) {
		mutexstat_dump(1); /* its text has the inversion */
		mutexstat_reset(); /* which is forgotten */
	}
	return 0;
}
EOC
if cc -I"$top_srcdir/include" -o "$WORK/abba" "$WORK/abba.c" -lpthread; then
	for format in text json; do
		MUTEXSTAT_FORMAT=$format MUTEXSTAT_EXIT_CODE=3 run_with "$WORK/out" "$WORK/err" "$WORK/abba"
		expect_eq "MUTEXSTAT_EXIT_CODE=3, FORMAT=$format, an inversion: status 3" "$?" 3
		MUTEXSTAT_FORMAT=$format MUTEXSTAT_EXIT_CODE=3 run_with "$WORK/out" "$WORK/err" "$WORK/abba" forgotten
		expect_eq "MUTEXSTAT_EXIT_CODE=3, FORMAT=$format, the inversion dumped, then reset: status 0" \
			"$?:$(grep -c '^POTENTIAL DEADLOCK' "$WORK/out")" 0:1
	done
	# nothing locked after the reset: the exit report says since when,
	# not that the program never locked a mutex
	run_with "$WORK/out" "$WORK/err" "$WORK/abba" forgotten
	expect_grep "a reset, then nothing locked: the report says since when" \
		"^mutexstat: abba \(pid [0-9]+\) ran [0-9.]+ (s|ms|µs|ns) and locked no mutexes since mutexstat_reset\(\), [0-9.]+ (s|ms|µs|ns) into the run$" \
		"$WORK/report"
else
	fail "could not build the inversion program"
fi

# The library dlopen'ed by a program that locks before and after: its
# calls find glibc's functions first, so nothing is recorded -- the report
# used to say "locked no mutexes" and nothing else.  One line at start-up
# and one in the report say why; the program runs as without it.  (In a
# sanitized build ASan's runtime is preloaded: it must come first.)
cat > "$WORK/late.c" <<'EOC'
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int main(int argc, char **argv)
{
	const char *mode = argc > 2 ? argv[2] : "local";
	pthread_mutex_lock(&m);
	void *h = dlopen(argv[1], RTLD_NOW | (!strcmp(mode, "global") ? RTLD_GLOBAL : RTLD_LOCAL));
	int (*dump)(int) = h ? (int (*)(int))dlsym(h, "mutexstat_dump") : NULL;
	pthread_mutex_unlock(&m);
	for (int i = 0; i < 100; i++) {
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
	}
	printf("dump %d\n", dump ? dump(2) : -2);
	if (!strcmp(mode, "close")) { /* its signal handler stays behind */
		printf("dlclose %d\n", dlclose(h));
		fflush(stdout);
		raise(SIGUSR1);
		puts("after SIGUSR1");
	}
	return 0;
}
EOC
if cc -o "$WORK/late" "$WORK/late.c" -ldl -lpthread; then
	for mode in local global; do
		set -- "$MUTEXSTAT_LIB" "$mode"
		env LD_PRELOAD="$SAN_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/report" MUTEXSTAT_FORMAT=text,json \
			timeout -s KILL 60 "$WORK/late" "$@" > "$WORK/out" 2> "$WORK/err"
		expect_eq "dlopen'ed late ($mode): runs" "$?:$(cat "$WORK/out")" "0:dump 0"
		expect_eq "dlopen'ed late ($mode): one line at start-up" "$(head -1 "$WORK/err")" \
			"mutexstat: loaded after libc.so.6 (by dlopen): the program's mutex calls find glibc's functions first and are not recorded; preload the library (LD_PRELOAD) or link the program with it"
		expect_eq "dlopen'ed late ($mode): the dump says why it is empty" \
			"$(sed -n '2s/ (pid [0-9]*) ran .* and/ and/p; 3p' "$WORK/err")" \
			"mutexstat: late and locked no mutexes
  loaded after libc.so.6 (by dlopen): calls that find glibc's pthread functions first are not recorded"
		expect_grep "dlopen'ed late ($mode): the exit report says why it is empty" \
			"^  loaded after libc.so.6 \(by dlopen\): calls that find glibc's pthread functions first are not recorded$" \
			"$WORK/report.txt"
		if command -v jq > /dev/null; then
			expect_eq "dlopen'ed late ($mode): JSON's loaded_late" \
				"$(jq -c '.loaded_late' "$WORK/report.json")" true
		fi
	done
	# dlclose'd: the library stays (-z nodelete), so its handler of the
	# dump signal is still there (a SIGUSR1 after the dlclose was SIGSEGV)
	env LD_PRELOAD="$SAN_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/report" timeout -s KILL 60 \
		"$WORK/late" "$MUTEXSTAT_LIB" close > "$WORK/out" 2> "$WORK/err"
	expect_eq "dlopen'ed late, dlclose'd: a SIGUSR1 goes to its handler, as while it was open" \
		"$?:$(cat "$WORK/out")" "0:dump 0
dlclose 0
after SIGUSR1"
else
	fail "could not build the dlopen-late program"
fi
finish
