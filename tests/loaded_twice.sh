# loaded_twice.sh - the library loaded twice counts once.  Preloaded and
# linked (examples/named): the same soname is one copy, even when the
# preloaded file is a copy elsewhere.  Two different files preloaded, in
# either order, or one preloaded and another dlopen'ed: the first in lookup
# order records, the other passes calls through and says so in one line;
# the counts are those of one copy alone.  (Before, two copies counted
# every call twice and hung in their stack captures: runs are bounded.)
. "$top_srcdir/tests/lib.sh"
B=$top_builddir
LIBDIR=$(dirname "$MUTEXSTAT_LIB")
mkdir "$WORK/copy"
cp -L "$MUTEXSTAT_LIB" "$WORK/copy/libmutexstat.so.0"
COPY=$WORK/copy/libmutexstat.so.0

# exit_report FILE: the second report of examples/named (after its reset).
exit_report() {
	awk '/^mutexstat: named/ { n++ } n == 2' "$1"
}
rows() { # the top table's label and acquired columns
	awk '/^Top [0-9]+ mutex/ { on = 1; getline; next } on && /^$/ { exit }
		on { print $2, $3 }' "$1"
}

# ---- linked, and preloaded as well ------------------------------------------------
env -u LD_PRELOAD "$B/examples/named" > "$WORK/one.out" 2> "$WORK/one.err"
exit_report "$WORK/one.err" > "$WORK/one"
expect_grep "linked only: queue 1500" '^ +[0-9]+ queue +1500 ' "$WORK/one"
for pre in "$MUTEXSTAT_LIB" "$COPY"; do
	LD_PRELOAD="$SAN_FIRST$pre" "$B/examples/named" > "$WORK/two.out" 2> "$WORK/two.err"
	expect_eq "linked and preloaded ($pre): output" "$(cat "$WORK/two.out")" "$(cat "$WORK/one.out")"
	exit_report "$WORK/two.err" > "$WORK/two"
	expect_eq "linked and preloaded ($pre): counts as linked only" \
		"$(rows "$WORK/two" | sort)" "$(rows "$WORK/one" | sort)" # ranked by wait: either order
	expect_eq "linked and preloaded ($pre): one soname, one copy: two reports, no note" \
		"$(grep -c '^mutexstat: named (pid' "$WORK/two.err"):$(grep -c 'another copy' "$WORK/two.err")" "2:0"
done

# ---- two files preloaded -------------------------------------------------------------
MUTEXSTAT_TOP=20 run_with "$WORK/out" "$WORK/err" "$B/examples/ten_by_twenty"
cp "$WORK/report" "$WORK/single"
for order in "$MUTEXSTAT_LIB $COPY" "$COPY $MUTEXSTAT_LIB"; do
	first=${order%% *}; second=${order#* }
	timeout -s KILL 60 env LD_PRELOAD="$SAN_FIRST$order" MUTEXSTAT_OUTPUT="$WORK/report" MUTEXSTAT_TOP=20 \
		"$B/examples/ten_by_twenty" > "$WORK/out" 2> "$WORK/err"
	rc=$?
	expect_eq "two files preloaded ($order): runs" "$rc:$(cat "$WORK/out")" \
		"0:10 threads x 20 mutexes x 100 rounds done"
	expect_eq "two files preloaded: one report" "$(grep -c '^mutexstat: ten_by_twenty (pid' "$WORK/report")" 1
	expect_eq "two files preloaded: each mutex 1000 acquisitions, as with one copy" \
		"$(rows "$WORK/report" | awk '{ print $2 }' | sort | uniq -c)" \
		"$(rows "$WORK/single" | awk '{ print $2 }' | sort | uniq -c)"
	expect_grep "two files preloaded: the summary of one copy" \
		': 11 threads used mutexes, 20 mutexes tracked, 0 untracked$' "$WORK/report"
	expect_eq "two files preloaded: the second copy says it steps aside, once" \
		"$(cat "$WORK/err")" \
		"mutexstat: another copy of the library ($first) records this process; this one ($second) passes calls through"
done

# ---- preloaded, and another file dlopen'ed ------------------------------------------------
cat > "$WORK/open_copy.c" <<'EOC'
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long n;
static void *work(void *arg)
{
	for (int i = 0; i < 1000; i++) {
		pthread_mutex_lock(&m);
		n++;
		pthread_mutex_unlock(&m);
	}
	return arg;
}
int main(int argc, char **argv)
{
	pthread_t t[4];
	void *h = dlopen(argv[1], argc > 2 ? RTLD_NOW | RTLD_GLOBAL : RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		printf("dlopen: %s\n", dlerror());
		return 1;
	}
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, work, NULL);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	printf("%ld\n", n);
	return 0;
}
EOC
if cc -o "$WORK/open_copy" "$WORK/open_copy.c" -ldl -lpthread; then
	for mode in local global; do
		set -- "$COPY"
		[ "$mode" = global ] && set -- "$COPY" global
		timeout -s KILL 60 env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/report" \
			"$WORK/open_copy" "$@" > "$WORK/out" 2> "$WORK/err"
		rc=$?
		expect_eq "dlopen'ed copy ($mode): runs" "$rc:$(cat "$WORK/out")" "0:4000"
		expect_grep "dlopen'ed copy ($mode): 4000 acquisitions, once" "^ +1 $LOCK_RE +4000 " "$WORK/report"
		expect_eq "dlopen'ed copy ($mode): one report" "$(grep -c '^mutexstat: open_copy (pid' "$WORK/report")" 1
		expect_grep "dlopen'ed copy ($mode): it steps aside" \
			"^mutexstat: another copy of the library \($MUTEXSTAT_LIB\) records this process; this one \($COPY\) passes calls through$" "$WORK/err"
	done
else
	fail "could not build the dlopen program"
fi
finish
