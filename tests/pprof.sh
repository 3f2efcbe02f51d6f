# pprof.sh - MUTEXSTAT_FORMAT=pprof: a gzip'd profile.proto that go tool
# pprof reads without the program's files: sample types as Go's mutex
# profile, the waiting and holding sides told apart by a label and a root
# frame, function names from our symbolizer, the program's mapping with its
# build id, and delays that add up to the report's total wait; every sample
# labelled with its kind of lock, and a read-write lock's with its mode.
. "$top_srcdir/tests/lib.sh"
if ! command -v go >/dev/null 2>&1; then
	echo "SKIP: no go command (Debian: golang-go) for go tool pprof"
	exit 77
fi
# go and pprof write nothing outside $WORK
export HOME="$WORK" GOPATH="$WORK/go" GOCACHE="$WORK/gocache" GOFLAGS=-mod=mod \
	PPROF_TMPDIR="$WORK" GOTOOLCHAIN=local
B=$top_builddir
R=3
MUTEXSTAT_FORMAT=text,pprof MUTEXSTAT_STACK_SAMPLE=1 MUTEXSTAT_OUTPUT="$WORK/r" \
	run_with "$WORK/out" "$WORK/err" "$B/examples/blame" $R
P=$WORK/r.pb.gz
[ -s "$P" ] && pass "r.pb.gz written" || fail "r.pb.gz missing or empty"
gzip -t "$P" 2>/dev/null && pass "r.pb.gz is gzip" || fail "r.pb.gz is not gzip"

if go tool pprof -raw "$P" > "$WORK/raw" 2> "$WORK/raw.err"; then
	pass "go tool pprof -raw reads it"
else
	fail "go tool pprof -raw failed"; sed 's/^/  | /' "$WORK/raw.err" >&2
fi
expect_grep "sample types: contentions/count, delay/nanoseconds" \
	'^contentions/count delay/nanoseconds' "$WORK/raw"
expect_grep "comments: mutexstat and the program" '^Comment: blame \(pid [0-9]+\)' "$WORK/raw"
build_id=$(readelf -n "$B/examples/blame" 2>/dev/null | awk '/Build ID:/ { print $3 }')
expect_grep "the program's mapping, with its build id and symbols" \
	"^[0-9]+: 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ [^ ]*/examples/blame ${build_id:-[0-9a-f]+} \[FN\]\[FL\]\[LN\]" \
	"$WORK/raw"

# top: the leaf functions of one side, by delay
top() {
	go tool pprof -top -sample_index=delay -tagfocus=side="$1" "$P" 2>"$WORK/top.err" |
		awk '/^ *flat/ { t = 1; next } t && $1 != "0" { print $NF }' | sort | tr '\n' ' '
}
expect_eq "waiting side: the two waiters" "$(top waiting)" "waiter_one waiter_two "
expect_eq "holding side: the holder's unlock" "$(top holding)" "hold_too_long "
expect_grep "source lines from our symbolizer" \
	' M=[0-9]+ waiter_one [^ ]*blame\.c:[0-9]+ ' "$WORK/raw"

# delay per side, summed from -raw: a sample's values, then its labels
side_sum() {
	awk -v side="$1" '/^ +[0-9]+ +[0-9]+: / { v = $2; next }
		index($0, "side:[" side "]") { s += v } END { printf "%d\n", s }' "$WORK/raw"
}
wait_sum=$(side_sum waiting)
hold_sum=$(side_sum holding)
expect_eq "each wait is charged to a waiter and to a holder: equal sums" "$wait_sum" "$hold_sum"
# the report's total wait, in its human unit, within its 3 digits
tot=$(awk '/^Top / { getline; getline; print $5, $6; exit }' "$WORK/r.txt")
expect_eq "the waiting delays add up to the report's total wait ($tot)" \
	"$(awk -v s="$wait_sum" -v t="${tot% *}" -v u="${tot#* }" 'BEGIN {
		m = u == "s" ? 1e9 : u == "ms" ? 1e6 : u == "ns" ? 1 : 1e3
		d = s - t * m; if (d < 0) d = -d
		print (s > 0 && d <= 0.01 * t * m) ? "yes" : s " vs " t " " u }')" yes
expect_eq "contentions: one per wait per side" \
	"$(awk '/^ +[0-9]+ +[0-9]+: / { c += $1 } END { print c }' "$WORK/raw")" $((4 * R))
expect_eq "mutexes: every sample kind=mutex, none with a mode" \
	"$(grep -c 'kind:\[mutex\]' "$WORK/raw") $(grep -c 'mode:\[' "$WORK/raw")" \
	"$(grep -Ec '^ +[0-9]+ +[0-9]+: ' "$WORK/raw") 0"

# a live dump (SIGUSR1) writes the profile too, with its number, while
# the program's threads still hold their mutexes
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_FORMAT=pprof,text MUTEXSTAT_OUTPUT="$WORK/live" \
	"$B/tests/scenario" hang > "$WORK/out" 2>&1 &
pid=$!
n=0; while ! grep -q deadlocked "$WORK/out" && [ $n -lt 200 ]; do sleep 0.1; n=$((n + 1)); done
kill -USR1 $pid
wait_for "$WORK/live.1.txt" '^mutexstat: ' 20 || fail "live dump: no live.1.txt"
# A dump writes its formats one after another, and the next dump starts
# once the last is written: the second dump's text says the first's files
# are whole (0.5 s after its text had begun was a guess).
kill -USR1 $pid
wait_for "$WORK/live.2.txt" '^mutexstat: ' 20 || fail "live dump: no second dump"
kill -9 $pid; wait $pid 2>/dev/null
if go tool pprof -raw "$WORK/live.1.pb.gz" > "$WORK/lraw" 2>&1; then
	pass "live dump: live.1.pb.gz read by pprof"
else
	fail "live dump: live.1.pb.gz"; sed 's/^/  | /' "$WORK/lraw" >&2
fi

# a program whose mutexes are locked in a library of its own: the first
# mapping, which pprof takes for the main binary ("File:"), is the
# program's (it went to the library, where the first frame was)
CC=${CC:-cc}
cat >"$WORK/plib.c" <<'EOF'
#include <pthread.h>
void lib_lock(pthread_mutex_t *m) { pthread_mutex_lock(m); }
void lib_unlock(pthread_mutex_t *m) { pthread_mutex_unlock(m); }
EOF
cat >"$WORK/puser.c" <<'EOF'
#include <pthread.h>
#include <unistd.h>
void lib_lock(pthread_mutex_t *m);
void lib_unlock(pthread_mutex_t *m);
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static void *hold(void *arg)
{
	lib_lock(&m);
	usleep(200000);
	lib_unlock(&m);
	return arg;
}
int main(void)
{
	pthread_t t;
	lib_lock(&m);
	pthread_create(&t, NULL, hold, NULL);
	usleep(100000);
	lib_unlock(&m);
	pthread_join(t, NULL);
	lib_lock(&m);
	lib_unlock(&m);
	return 0;
}
EOF
if "$CC" -O1 -shared -fPIC -o "$WORK/libplib.so" "$WORK/plib.c" -lpthread &&
   "$CC" -O1 -o "$WORK/puser" "$WORK/puser.c" -L"$WORK" -lplib -Wl,-rpath,"$WORK" -lpthread; then
	MUTEXSTAT_FORMAT=pprof MUTEXSTAT_OUTPUT="$WORK/pu" run_with "$WORK/out" "$WORK/err" "$WORK/puser"
	go tool pprof -raw "$WORK/pu.pb.gz" >"$WORK/puraw" 2>&1
	expect_grep "library frames first: the program's mapping comes first" \
		'^1: 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ [^ ]*/puser( |$)' "$WORK/puraw"
	expect_grep "... and the library's after it" \
		'^[2-9]: 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ [^ ]*/libplib\.so( |$)' "$WORK/puraw"
else
	fail "puser: cannot compile"
fi

# a named mutex: its name as a label
MUTEXSTAT_FORMAT=pprof MUTEXSTAT_OUTPUT="$WORK/n" \
	run_with "$WORK/out" "$WORK/err" "$B/examples/named"
if go tool pprof -raw "$WORK/n.pb.gz" > "$WORK/nraw" 2>&1; then
	pass "named: pprof reads it"
else
	fail "named: go tool pprof -raw failed"; sed 's/^/  | /' "$WORK/nraw" >&2
fi
if grep -q 'side:\[' "$WORK/nraw"; then
	expect_grep "named: mutex_name label" 'mutex_name:\[[^]]+\]' "$WORK/nraw"
fi

# mutexes that ended: their stacks stay in the profile, labelled with their
# site line (tests/scenario.c endedwait: "ended pool", 6 waits, destroyed)
MUTEXSTAT_FORMAT=pprof MUTEXSTAT_OUTPUT="$WORK/e" \
	run_with "$WORK/out" "$WORK/err" "$B/tests/scenario" endedwait
if go tool pprof -raw "$WORK/e.pb.gz" > "$WORK/eraw" 2>&1; then
	pass "ended: pprof reads it"
else
	fail "ended: go tool pprof -raw failed"; sed 's/^/  | /' "$WORK/eraw" >&2
fi
# 6 contentions each side, whatever the stacks: a wait that begins while
# its holder is letting go is charged to "missed", not to the holder's
# stack (doc/model.md), a race the scenario cannot rule out.  (The
# process's labels, host= and program=, are tests/interval.sh's.)
expect_eq "ended: 6 contentions each side, labelled with the site and name" \
	"$(awk '/^ +[0-9]+ +[0-9]+:/ { n = $1; getline; gsub(/  */, " ")
			gsub(/ (host|program):\[[^]]*\]/, ""); sum[$0] += n }
		END { for (l in sum) print sum[l] l }' "$WORK/eraw" | sort)" \
	"$(printf '%s\n%s' \
		"6 kind:[mutex] mutex:[ended at pool_life (scenario.c:$(grep -n ENDED_HOLDS "$top_srcdir/tests/scenario.c" | cut -d: -f1))] mutex_name:[ended pool] side:[holding]" \
		"6 kind:[mutex] mutex:[ended at pool_life (scenario.c:$(grep -n ENDED_HOLDS "$top_srcdir/tests/scenario.c" | cut -d: -f1))] mutex_name:[ended pool] side:[waiting]")"
# read-write and spin locks (tests/rw_formats.c contend ended): a reader
# waits for a writer and a writer for a reader on rw, and on an rwlock then
# destroyed; a lock only written; a spin lock.  Each sample is labelled
# kind=, and a read-write lock's mode= (the waiter's mode, or the mode the
# holder let go of).
MUTEXSTAT_FORMAT=pprof MUTEXSTAT_STACK_SAMPLE=1 MUTEXSTAT_OUTPUT="$WORK/rw" \
	run_with "$WORK/rw.out" "$WORK/err" "$B/tests/rw_formats" contend ended
if go tool pprof -raw "$WORK/rw.pb.gz" > "$WORK/rwraw" 2>&1; then
	pass "rw: pprof reads it"
else
	fail "rw: go tool pprof -raw failed"; sed 's/^/  | /' "$WORK/rwraw" >&2
fi
# each sample as "lock kind mode side", the lock by the name the program
# printed for its address ("ended" for the site line)
awk 'NR == FNR { name[$2] = $1; next }
	function label(k,   v) { v = $0; if (!sub(".*" k ":\\[", "", v)) return "-"
		sub("\\].*", "", v); return v }
	/^ +[0-9]+ +[0-9]+: / { getline; m = label("mutex")
		print (m in name ? name[m] : m ~ /^ended at / ? "ended" : m), label("kind"),
		      label("mode"), label("side") }' "$WORK/rw.out" "$WORK/rwraw" | sort > "$WORK/rwsamples"
expect_eq "rw: every sample's kind and mode" "$(tr '\n' ',' < "$WORK/rwsamples")" \
	"ended rwlock read holding,ended rwlock read waiting,ended rwlock write holding,ended rwlock write waiting,\
rw rwlock read holding,rw rwlock read waiting,rw rwlock write holding,rw rwlock write waiting,\
spin spin - holding,spin spin - waiting,wo rwlock write holding,wo rwlock write waiting,"
# leaves <tagfocus>: the leaf functions of the waiting side's samples kept
leaves() {
	go tool pprof -top -sample_index=contentions -tagfocus="$1" "$WORK/rw.pb.gz" 2>"$WORK/top.err" |
		awk '/^ *flat/ { t = 1; next } t && $1 != "0" { print $NF }' |
		grep -E '_waiter$' | sort | tr '\n' ' '
}
expect_eq "rw: -tagfocus=mode=read keeps the reads" "$(leaves mode=read)" "read_waiter "
expect_eq "rw: -tagfocus=mode=write keeps the writes" "$(leaves mode=write)" "write_waiter "
expect_eq "rw: -tagfocus=kind=spin keeps the spin lock" "$(leaves kind=spin)" "spin_waiter "
expect_eq "rw: -tagfocus=mode=read -focus='^waiting\$' keeps the reads that waited (doc/report.md)" \
	"$(go tool pprof -top -sample_index=contentions -tagfocus=mode=read -focus='^waiting$' \
		"$WORK/rw.pb.gz" 2>"$WORK/top.err" | awk '/^ *flat/ { t = 1; next } t && $1 != "0" { print $NF }')" \
	read_waiter

# ---- a program with a zlib of its own (node, varnishd export theirs) ---------
# libz.so's functions would call the program's deflateReset, on a stream
# set up for another zlib's state (node crashed): the profile is written
# uncompressed, in gzip's stored blocks, and the program runs as it does.
cat >"$WORK/ownzlib.c" <<'EOF'
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
/* exported (-rdynamic), as a program's built-in zlib's are */
int deflateReset(void *strm) { (void)strm; fputs("the program's deflateReset\n", stderr); abort(); }
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int main(void)
{
	for (int i = 0; i < 100; i++) {
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
	}
	puts("done");
	return 0;
}
EOF
${CC:-cc} -rdynamic -o "$WORK/ownzlib" "$WORK/ownzlib.c" -lpthread || fail "cannot build ownzlib.c"
rc=0
MUTEXSTAT_FORMAT=text,pprof MUTEXSTAT_OUTPUT="$WORK/oz" \
	run_with "$WORK/oz.out" "$WORK/oz.err" "$WORK/ownzlib" || rc=$?
expect_eq "own zlib: the program ran as it does" "$rc $(cat "$WORK/oz.out")" "0 done"
expect_no_grep "own zlib: its deflateReset never called" "deflateReset" "$WORK/oz.err"
gzip -t "$WORK/oz.pb.gz" 2>/dev/null && pass "own zlib: oz.pb.gz is gzip" || fail "own zlib: oz.pb.gz is not gzip"
if go tool pprof -raw "$WORK/oz.pb.gz" > "$WORK/ozraw" 2>&1; then
	pass "own zlib: pprof reads it"
else
	fail "own zlib: go tool pprof -raw failed"; sed 's/^/  | /' "$WORK/ozraw" >&2
fi
finish
