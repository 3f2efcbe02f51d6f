# dot.sh - the DOT output (MUTEXSTAT_FORMAT=dot): the lock-order graph shows
# each inversion's edges red (POTENTIAL DEADLOCK) or dashed (GUARDED
# INVERSION) and nothing else coloured; a live dump's wait-for graph shows
# the threads of a hang waiting for each other in red; labels are escaped so
# that dot takes any mutex name; read-write locks are named so, and their
# edges say the modes; and `dot -Tsvg` renders every file.
. "$top_srcdir/tests/lib.sh"
B=$top_builddir
CC=${CC:-cc}

if command -v dot >/dev/null 2>&1; then HAVE_DOT=1; else
	HAVE_DOT=0; echo "skip: rendering (graphviz's dot not installed)"; fi

# run NAME PROGRAM ARGS...: under the library, DOT only, into $WORK/NAME.dot
run() {
	name=$1
	shift
	env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_FORMAT=dot \
		MUTEXSTAT_OUTPUT="$WORK/$name" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
}

# cluster FILE NAME: the statements of one cluster (order or wait)
cluster() {
	awk -v c="cluster_$2" '$1 == "subgraph" && $2 == c { on = 1; next }
		on && /^\t}$/ { exit } on' "$1"
}

# order_edges FILE [ATTRIBUTE]: lock-order edges (with that attribute)
order_edges() {
	cluster "$1" order | grep -E '^[[:space:]]*o[0-9]+ -> o[0-9]+ \[' |
		grep -c -- "${2:-}"
}

# renders NAME: dot makes an SVG of the file, without a complaint
renders() {
	[ "$HAVE_DOT" = 1 ] || return 0
	if dot -Tsvg "$WORK/$1.dot" >"$WORK/$1.svg" 2>"$WORK/$1.dot.err" &&
	   [ -s "$WORK/$1.svg" ] && [ "$(grep -c '<svg' "$WORK/$1.svg")" = 1 ] &&
	   [ ! -s "$WORK/$1.dot.err" ]; then
		pass "$1: dot -Tsvg renders one SVG, silently"
	else
		fail "$1: dot -Tsvg failed or complained"
		sed 's/^/  | /' "$WORK/$1.dot.err" >&2
	fi
}

# ---- an inversion whose mutexes were destroyed: drawn from the finding ----
run destroyed "$B/tests/deadlocks" destroyed_abba
renders destroyed
expect_eq "destroyed: no live lock-order edge" "$(order_edges "$WORK/destroyed.dot")" 0
expect_eq "destroyed: the finding's two edges, red" \
	"$(cluster "$WORK/destroyed.dot" order | grep -E '^[[:space:]]*f0m[0-9]+ -> f0m[0-9]+ \[' | grep -c 'color=red')" 2
expect_eq "destroyed: its two mutexes, each ended" \
	"$(cluster "$WORK/destroyed.dot" order | grep -E '^[[:space:]]*f0m[0-9]+ \[' | grep -c ' (ended)')" 2

# ---- ABBA: a potential deadlock, two red edges ---------------------------
run abba "$B/examples/deadlock_abba"
if [ -s "$WORK/abba.dot" ]; then pass "abba: MUTEXSTAT_OUTPUT.dot written at exit"
else fail "abba: no $WORK/abba.dot"; fi
renders abba
expect_eq "abba: two lock-order edges" "$(order_edges "$WORK/abba.dot")" 2
expect_eq "abba: both red" "$(order_edges "$WORK/abba.dot" 'color=red, fontcolor=red, penwidth=2')" 2
expect_eq "abba: none dashed" "$(order_edges "$WORK/abba.dot" 'style=dashed')" 0
for who in alice bob; do
	addr=$(sed -n "s/.*$who's lock \(0x[0-9a-f]*\).*/\1/p" "$WORK/abba.out")
	expect_grep "abba: $who's lock is a node" "^[[:space:]]*o[0-9]+ \[label=\"$addr <$who[+]0x18>\\\\nfirst locked at transfer \(deadlock_abba\.c:[0-9]+\)\"\];" "$WORK/abba.dot"
done
LOCK_TO=$(grep -n '/\* LOCK_TO \*/' "$top_srcdir/examples/deadlock_abba.c" | cut -d: -f1)
expect_eq "abba: each edge says where the second lock was taken, and by whom" \
	"$(grep -Ec "label=\"transfer \(deadlock_abba\.c:$LOCK_TO\)\\\\nthread [0-9]+" "$WORK/abba.dot")" 2
expect_grep "abba: nobody waits at exit" 'w_none .*no thread waits for a mutex' "$WORK/abba.dot"
expect_no_grep "abba: mutexes' edges say no mode" '(held|taken) for (read|write)' "$WORK/abba.dot"

run abba_ordered "$B/examples/deadlock_abba" ordered
renders abba_ordered
expect_eq "abba ordered: one edge, one order" "$(order_edges "$WORK/abba_ordered.dot")" 1
expect_eq "abba ordered: none red" "$(order_edges "$WORK/abba_ordered.dot" 'color=red')" 0

# ---- philosophers: a guarded cycle, no cycle, a cycle --------------------
run waiter "$B/examples/deadlock_philosophers" waiter
renders waiter
expect_eq "waiter: five dashed edges (the guarded cycle)" \
	"$(order_edges "$WORK/waiter.dot" 'style=dashed')" 5
expect_eq "waiter: none red" "$(order_edges "$WORK/waiter.dot" 'color=red')" 0
expect_eq "waiter: five more edges, from the waiter to each fork" \
	"$(order_edges "$WORK/waiter.dot")" 10

run ordered "$B/examples/deadlock_philosophers" ordered
renders ordered
n=$(order_edges "$WORK/ordered.dot")
if [ "$n" -gt 0 ]; then pass "ordered: lock-order edges drawn ($n)"; else fail "ordered: no edges"; fi
expect_eq "ordered: none red" "$(order_edges "$WORK/ordered.dot" 'color=red')" 0
expect_eq "ordered: none dashed" "$(order_edges "$WORK/ordered.dot" 'style=dashed')" 0

run classic "$B/examples/deadlock_philosophers" classic
renders classic
expect_eq "classic: five red edges" "$(order_edges "$WORK/classic.dot" 'color=red')" 5

# ---- a live dump of five hungry philosophers: the wait-for cycle ---------
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_FORMAT=dot MUTEXSTAT_OUTPUT="$WORK/hang" \
	"$B/examples/deadlock_philosophers" hang >"$WORK/hang.out" 2>"$WORK/hang.err" &
pid=$!
wait_for "$WORK/hang.out" '^all five wait for their right fork$' 20 &&
	pass "hang: hung" || fail "hang: never hung"
kill -USR1 $pid
wait_for "$WORK/hang.1.dot" '^}$' 20 && pass "hang: the dump wrote hang.1.dot" ||
	fail "hang: no hang.1.dot"
kill -9 $pid
wait $pid 2>/dev/null
cp "$WORK/hang.1.dot" "$WORK/hang1.dot" 2>/dev/null
renders hang1
cluster "$WORK/hang.1.dot" wait > "$WORK/hang.wait"
HANG_RIGHT=$(grep -n '/\* HANG_RIGHT' "$top_srcdir/examples/deadlock_philosophers.c" | cut -d: -f1)
HANG_LEFT=$(grep -n '/\* HANG_LEFT' "$top_srcdir/examples/deadlock_philosophers.c" | cut -d: -f1)
expect_eq "hang: five threads (boxes)" "$(grep -Ec '^[[:space:]]*wt[0-9]+ \[shape=box, label="thread [0-9]+' "$WORK/hang.wait")" 5
expect_eq "hang: five red 'waits for' edges, at the right fork" \
	"$(grep -E '^[[:space:]]*wt[0-9]+ -> wm[0-9]+ \[label="waits for ' "$WORK/hang.wait" |
	   grep "at philosopher (deadlock_philosophers\.c:$HANG_RIGHT)" | grep -c 'color=red')" 5
expect_eq "hang: five red 'held by' edges, taken as the left fork" \
	"$(grep -E '^[[:space:]]*wm[0-9]+ -> wt[0-9]+ \[label="held by' "$WORK/hang.wait" |
	   grep "taken at philosopher (deadlock_philosophers\.c:$HANG_LEFT)" | grep -c 'color=red')" 5
expect_eq "hang: no other edge" "$(grep -Ec '^[[:space:]]*w[mt][0-9]+ -> ' "$WORK/hang.wait")" 10
# each thread waits for the mutex held by the next: following the edges
# from any thread comes back to it after five waits
cycle=$(awk '$2 == "->" { nxt[$1] = $3 }
	END { for (s in nxt) if (s ~ /^wt/) break
		n = 0; v = s; do { v = nxt[nxt[v]]; n++ } while (v != s && n < 20)
		print n }' "$WORK/hang.wait")
expect_eq "hang: the waits close a cycle of five threads" "$cycle" 5
expect_eq "hang: the lock-order cycle too, five red edges" \
	"$(order_edges "$WORK/hang.1.dot" 'color=red')" 5

# ---- a condition wait holding the mutex its signaller needs ---------------
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_FORMAT=dot MUTEXSTAT_OUTPUT="$WORK/cond" \
	"$B/tests/scenario" condhang >"$WORK/cond.out" 2>"$WORK/cond.err" &
pid=$!
wait_for "$WORK/cond.out" '^hung$' 20 && pass "condhang: hung" || fail "condhang: never hung"
kill -USR1 $pid
wait_for "$WORK/cond.1.dot" '^}$' 20 || fail "condhang: no cond.1.dot"
kill -9 $pid
wait $pid 2>/dev/null
cp "$WORK/cond.1.dot" "$WORK/cond1.dot" 2>/dev/null
renders cond1
cluster "$WORK/cond.1.dot" wait > "$WORK/cond.wait"
expect_grep "condhang: the holder is shown in its condition wait" \
	'^[[:space:]]*wt[0-9]+ \[shape=box, label="thread [0-9]+ [^"]*\\nwaits for a condition \(mutex 0x[0-9a-f]+\)"' "$WORK/cond.wait"
expect_eq "condhang: the wait and the hold red (a DEADLOCK, as in the text)" \
	"$(grep -E '^[[:space:]]*w[mt][0-9]+ -> ' "$WORK/cond.wait" | grep -c 'color=red')" 2

# ---- labels are escaped: any name a program gives a mutex ----------------
cat >"$WORK/names.c" <<'EOF'
#include <dlfcn.h>
#include <pthread.h>
static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t c = PTHREAD_MUTEX_INITIALIZER;
int main(void)
{
	int (*name)(const pthread_mutex_t *, const char *) =
		(int (*)(const pthread_mutex_t *, const char *))dlsym(RTLD_DEFAULT, "mutexstat_name");
	if (!name)
		return 2;
	/* a lock first: naming a mutex before the thread's first lock crashes
	 * (the thread's record is not made), a bug of its own */
	pthread_mutex_lock(&a); pthread_mutex_unlock(&a);
	name(&a, "say \"hi\" \\n {x} <b>&\n\tnext line");
	name(&b, "bad byte \xff, \xc3\xa9 fine");
	pthread_mutex_lock(&a); pthread_mutex_lock(&b);
	pthread_mutex_unlock(&b); pthread_mutex_unlock(&a);
	pthread_mutex_lock(&b); pthread_mutex_lock(&a);
	pthread_mutex_unlock(&a); pthread_mutex_unlock(&b);
	/* 59 bytes and a 3-byte character: longer than a label's 60 */
	name(&c, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\xe2\x82\xac");
	pthread_mutex_lock(&c); pthread_mutex_lock(&a);
	pthread_mutex_unlock(&a); pthread_mutex_unlock(&c);
	return 0;
}
EOF
if "$CC" -o "$WORK/names" "$WORK/names.c" -lpthread -ldl 2>"$WORK/cc.err"; then
	run names "$WORK/names"
	renders names
	expect_grep "names: quote and backslash escaped; newline and tab '?' (mutexstat_name)" \
		'label="\\"say \\"hi\\" \\\\n \{x\} <b>&\?\?next line\\"\\nfirst locked at ' "$WORK/names.dot"
	expect_grep "names: a byte that is not UTF-8 replaced, UTF-8 kept" \
		'label="\\"bad byte \?, é fine\\"\\nfirst locked at ' "$WORK/names.dot"
	expect_grep "names: a name longer than a label is cut with \"...\", before a character" \
		'label="\\"a{57}[.][.][.]\\"\\nfirst locked at ' "$WORK/names.dot"
	expect_eq "names: two red edges between the named mutexes" \
		"$(order_edges "$WORK/names.dot" 'color=red')" 2
else
	fail "cannot compile a test program with $CC"
	sed 's/^/  | /' "$WORK/cc.err" >&2
fi

# ---- read-write locks (tests/rw_formats.c) -------------------------------
RW=$B/tests/rw_formats
# lock_addr RUN NAME: the address tests/rw_formats printed for lock NAME
lock_addr() { awk -v n="$2" '$1 == n { print $2 }' "$WORK/$1.out"; }

# A written then B read; B written then A read
run rwinv "$RW" inversion
renders rwinv
expect_eq "rwinv: two lock-order edges, red" "$(order_edges "$WORK/rwinv.dot" 'color=red')" 2
expect_eq "rwinv: each held for write, the other taken for read" \
	"$(order_edges "$WORK/rwinv.dot" 'nheld for write, taken for read", color=red')" 2
for l in A B; do
	expect_grep "rwinv: $l's node says it is an rwlock" \
		"^[[:space:]]*o[0-9]+ \[label=\"rwlock $(lock_addr rwinv $l) <$(echo "$l" | tr AB ab)>\\\\nfirst locked at " "$WORK/rwinv.dot"
done

# a live dump of a deadlock through a read hold: main holds A for read and
# waits to write B; the other thread holds B and waits to write A
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_FORMAT=dot MUTEXSTAT_OUTPUT="$WORK/rwhang" \
	"$RW" hang >"$WORK/rwhang.out" 2>"$WORK/rwhang.err" &
pid=$!
wait_for "$WORK/rwhang.out" '^deadlocked$' 20 && pass "rwhang: hung" || fail "rwhang: never hung"
kill -USR1 $pid
wait_for "$WORK/rwhang.1.dot" '^}$' 20 || fail "rwhang: no rwhang.1.dot"
kill -9 $pid
wait $pid 2>/dev/null
cp "$WORK/rwhang.1.dot" "$WORK/rwhang1.dot" 2>/dev/null
renders rwhang1
cluster "$WORK/rwhang.1.dot" wait > "$WORK/rwhang.wait"
expect_eq "rwhang: two red waits to write" \
	"$(grep -E '^[[:space:]]*wt[0-9]+ -> wm[0-9]+ \[label="waits to write for ' "$WORK/rwhang.wait" | grep -c 'color=red')" 2
expect_eq "rwhang: held for read by main, for write by the other thread, both red" \
	"$(grep -E '^[[:space:]]*wm[0-9]+ -> wt[0-9]+ \[' "$WORK/rwhang.wait" | grep 'color=red' |
	   sed -n 's/.*label="\(held for [a-z]* by\).*/\1/p' | sort | tr '\n' ',')" \
	"held for read by,held for write by,"
expect_eq "rwhang: the lock-order cycle with its modes" \
	"$(cluster "$WORK/rwhang.1.dot" order | grep -E '^[[:space:]]*o[0-9]+ -> o[0-9]+ \[' | grep 'color=red' |
	   sed -n 's/.*\\n\(held for [a-z]*, taken for [a-z]*\)".*/\1/p' | sort | tr '\n' ',')" \
	"held for read, taken for write,held for write, taken for write,"
finish
