# variables.sh - a lock that is a variable is named after it, as gdb names
# a pointer ("0x55.. <cache_lock>", "<accounts+0x68>" inside an array of
# structs): in the top table, its section, the findings, the locks still
# held, JSON, folded and DOT; from the module's symbol table, so a stripped
# program's locks are addresses only, and a stripped library's exported
# ones keep their names (.dynsym).  A lock on the heap has none.
. "$top_srcdir/tests/lib.sh"
CC=${CC:-cc}

cat >"$WORK/vars.c" <<'EOC'
#define _GNU_SOURCE
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "proc_wait.h"

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static int waiter_tid;
static pthread_mutex_t *heap; /* reachable at exit: no leak for LeakSanitizer */
/* 40 KB of .bss: its end lies past the pages of the program's file, in
 * an anonymous mapping the maps do not give the program's name */
static pthread_mutex_t spread[1000];
struct account {
	long balance;
	pthread_mutex_t lock;
};
struct account accounts[4];
void lib_touch(void);
void *lib_lock_at(void); /* libvars.so's lib_lock: not referred to here, so
			   not copied into the program (a copy relocation) */

/* waits for cache_lock, which main holds: a contended mutex, for the
 * folded stacks */
static void *waiter(void *arg)
{
	(void)arg;
	__atomic_store_n(&waiter_tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
	CHECK(pthread_mutex_lock(&cache_lock));
	CHECK(pthread_mutex_unlock(&cache_lock));
	return NULL;
}

int main(void)
{
	pthread_t t;
	CHECK(pthread_mutex_lock(&cache_lock));
	CHECK(pthread_create(&t, NULL, waiter, NULL));
	while (!__atomic_load_n(&waiter_tid, __ATOMIC_ACQUIRE) ||
	       !sleeps_on_futex(waiter_tid, &cache_lock))
		usleep(1000);
	CHECK(pthread_mutex_unlock(&cache_lock));
	CHECK(pthread_join(t, NULL));

	for (int i = 0; i < 4; i++)
		pthread_mutex_init(&accounts[i].lock, NULL);
	heap = malloc(sizeof *heap);
	pthread_mutex_init(heap, NULL);
	/* cache_lock then accounts[2], and the other way: an inversion */
	pthread_mutex_lock(&cache_lock);
	pthread_mutex_lock(&accounts[2].lock);
	pthread_mutex_unlock(&accounts[2].lock);
	pthread_mutex_unlock(&cache_lock);
	pthread_mutex_lock(&accounts[2].lock);
	pthread_mutex_lock(&cache_lock);
	pthread_mutex_unlock(&cache_lock);
	pthread_mutex_unlock(&accounts[2].lock);
	pthread_mutex_lock(heap);
	pthread_mutex_unlock(heap);
	lib_touch();
	pthread_mutex_lock(&spread[999]);
	pthread_mutex_unlock(&spread[999]);
	printf("spread999 %p spread+0x%zx\n", (void *)&spread[999],
	       (size_t)((char *)&spread[999] - (char *)spread));
	printf("cache_lock %p\naccount2 %p accounts+0x%zx\nheap %p\nlib_lock %p\n",
	       (void *)&cache_lock, (void *)&accounts[2].lock,
	       (size_t)((char *)&accounts[2].lock - (char *)accounts), (void *)heap,
	       lib_lock_at());
	pthread_mutex_lock(&cache_lock); /* held at exit */
	return 0;
}
EOC
cat >"$WORK/libvars.c" <<'EOC'
#include <pthread.h>
pthread_mutex_t lib_lock = PTHREAD_MUTEX_INITIALIZER;
void *lib_lock_at(void)
{
	return &lib_lock;
}
void lib_touch(void)
{
	pthread_mutex_lock(&lib_lock);
	pthread_mutex_unlock(&lib_lock);
}
EOC
# shellcheck disable=SC2086 # SAN_FLAGS is a list of flags
$CC -g -O0 -fPIC -shared $SAN_FLAGS -o "$WORK/libvars.so" "$WORK/libvars.c" -pthread &&
strip --strip-all "$WORK/libvars.so" &&
$CC -g -O0 $SAN_FLAGS -I"$top_srcdir/tests" -o "$WORK/vars" "$WORK/vars.c" -L"$WORK" -lvars \
	-Wl,-rpath,"$WORK" -pthread || { fail "cannot build the test programs"; finish; }
readelf -S "$WORK/libvars.so" | grep -q '\.symtab' &&
	fail "libvars.so still has its .symtab"

MUTEXSTAT_FORMAT=text,json,folded,dot MUTEXSTAT_STACK_SAMPLE=1 MUTEXSTAT_OUTPUT="$WORK/r" \
	run_with "$WORK/out" "$WORK/err" "$WORK/vars"
cache=$(awk '$1 == "cache_lock" { print $2 }' "$WORK/out")
acct=$(awk '$1 == "account2" { print $2 }' "$WORK/out")
acct_var=$(awk '$1 == "account2" { print $3 }' "$WORK/out")
acct_re=$(printf '%s' "$acct_var" | sed 's/+/[+]/') # for grep -E
heap=$(awk '$1 == "heap" { print $2 }' "$WORK/out")
lib=$(awk '$1 == "lib_lock" { print $2 }' "$WORK/out")
T=$WORK/r.txt

expect_grep "the top table names a static mutex" '^ +[0-9]+ <cache_lock> +[0-9]' "$T"
expect_grep "and a mutex inside an array of structs ($acct_var)" \
	"^ +[0-9]+ <$acct_re> +[0-9]" "$T"
expect_grep "a section: the address, then the variable" \
	"^#[0-9]+ mutex $cache <cache_lock> \\(normal" "$T"
spread=$(awk '$1 == "spread999" { print $2 }' "$WORK/out")
spread_re=$(awk '$1 == "spread999" { print $3 }' "$WORK/out" | sed 's/+/[+]/')
expect_grep "the end of a long .bss, past the file's pages: named too" \
	"^#[0-9]+ mutex $spread <$spread_re> \\(normal" "$T"
expect_grep "a heap mutex's section: its address alone" "^#[0-9]+ mutex $heap \\(normal" "$T"
expect_grep "an exported mutex of a stripped library: from its .dynsym" \
	"^#[0-9]+ mutex $lib <lib_lock> \\(normal" "$T"
expect_eq "the potential deadlock names both variables" \
	"$(grep -cE "^  [AB] +mutex ($cache <cache_lock>|$acct <$acct_re>), first locked at" "$T")" 2
expect_grep "the mutex still locked at exit" "^  $cache <cache_lock> held by thread" "$T"

J=$WORK/r.json
if python3 -c 'import json' 2>/dev/null; then
	expect_eq "JSON: each mutex's symbol (null on the heap)" \
		"$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join(str(m["symbol"]) for m in sorted(d["mutexes"], key=lambda m: m["address"])
	       if m["address"] in sys.argv[2:]))' "$J" "$cache" "$heap" "$lib" |
		tr ' ' '\n' | sort | tr '\n' ' ')" "None cache_lock lib_lock "
	expect_eq "JSON: the finding's lives name their variables" \
		"$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
f = [f for f in d["findings"] if f["kind"] == "potential-deadlock"][0]
print(" ".join(sorted(l["symbol"] for l in f["lives"])))' "$J")" "$acct_var cache_lock"
	expect_eq "JSON: the lock main holds at exit is named in its thread's held list" \
		"$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join(str(h.get("symbol")) for t in d["threads"] for h in t["held"]))' "$J")" "cache_lock"
fi
expect_grep "folded: the root is the address and the variable" \
	"^mutex $cache <cache_lock>;" "$WORK/r.wait.folded"
expect_grep "DOT: the lock-order graph's nodes name their variables" \
	"label=\"$cache <cache_lock>" "$WORK/r.dot"

# stripped: no symbol table, no variable -- the address, as before
cp "$WORK/vars" "$WORK/vars_stripped" && strip --strip-all "$WORK/vars_stripped"
run_with "$WORK/out2" "$WORK/err2" "$WORK/vars_stripped"
cache2=$(awk '$1 == "cache_lock" { print $2 }' "$WORK/out2")
expect_grep "a stripped program: the address alone" "^#[0-9]+ mutex $cache2 \\(normal" \
	"$WORK/report"
expect_no_grep "a stripped program: no variable is made up" '<(cache_lock|accounts)' \
	"$WORK/report"

# eight elements of one array with a long name: the top table's column
# cuts the name in its middle, so each row keeps its own offset
cat >"$WORK/arr.c" <<'EOC'
#include <pthread.h>
struct acct {
	long bal;
	pthread_mutex_t lock;
} customer_accounts_by_branch[64];
int main(void)
{
	for (int i = 0; i < 64; i += 8) {
		pthread_mutex_lock(&customer_accounts_by_branch[i].lock);
		pthread_mutex_unlock(&customer_accounts_by_branch[i].lock);
	}
	return 0;
}
EOC
# shellcheck disable=SC2086 # SAN_FLAGS is a list of flags
if $CC -g -O0 $SAN_FLAGS -o "$WORK/arr" "$WORK/arr.c" -pthread; then
	run_with "$WORK/out4" "$WORK/err4" "$WORK/arr"
	expect_eq "top table: eight elements of a long-named array, eight labels" \
		"$(grep -oE '^ +[0-9]+ <custom[^ ]*by_branch[+]0x[0-9a-f]+>' "$WORK/report" |
			awk '{ print $2 }' | sort -u | wc -l)" 8
else
	fail "cannot build arr.c"
fi

# two libraries' static `lock`, taken in both orders: the finding and the
# top table say which module each is in, as nowhere else
for l in a b; do
	cat >"$WORK/lib$l.c" <<EOC
#include <pthread.h>
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
void *${l}_lock(void)
{
	return &lock;
}
EOC
done
cat >"$WORK/two.c" <<'EOC'
#include <pthread.h>
void *a_lock(void);
void *b_lock(void);
int main(void)
{
	pthread_mutex_t *a = a_lock(), *b = b_lock();
	pthread_mutex_lock(a);
	pthread_mutex_lock(b);
	pthread_mutex_unlock(b);
	pthread_mutex_unlock(a);
	pthread_mutex_lock(b);
	pthread_mutex_lock(a);
	pthread_mutex_unlock(a);
	pthread_mutex_unlock(b);
	return 0;
}
EOC
# shellcheck disable=SC2086 # SAN_FLAGS is a list of flags
if $CC -g -fPIC -shared $SAN_FLAGS -o "$WORK/liba.so" "$WORK/liba.c" &&
	$CC -g -fPIC -shared $SAN_FLAGS -o "$WORK/libb.so" "$WORK/libb.c" &&
	$CC -g $SAN_FLAGS -o "$WORK/two" "$WORK/two.c" -L"$WORK" -la -lb -Wl,-rpath,"$WORK" \
		-pthread; then
	run_with "$WORK/out6" "$WORK/err6" "$WORK/two"
	expect_eq "same-named statics of two libraries: the finding gives their modules" \
		"$(grep -oE '^  [AB] +mutex 0x[0-9a-f]+ <lock> [(]lib[ab][.]so[)], first' "$WORK/report" |
			grep -oE 'lib[ab]' | sort | tr '\n' ' ')" "liba libb "
	expect_eq "and the top table's rows" \
		"$(grep -oE '^ +[0-9]+ <lock> [(]lib[ab][.]so[)] ' "$WORK/report" | grep -oE 'lib[ab]' |
			sort | tr '\n' ' ')" "liba libb "
	expect_no_grep "a heading has the address: no module" '^#[0-9]+ mutex 0x[0-9a-f]+ <lock> [(]lib' \
		"$WORK/report"
else
	fail "cannot build two.c"
fi

# long variables with long names: a heading, a WAIT CHAIN line (a thread
# waits at exit) keep to 120 columns, each variable's end kept
cat >"$WORK/long.c" <<'EOC'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "proc_wait.h"

pthread_mutex_t the_global_request_queue_protection_mutex_for_workers =
	PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t another_very_long_named_mutex_guarding_the_statistics =
	PTHREAD_MUTEX_INITIALIZER;
static int holder_tid, victim_tid;

static void *holder(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "holder-thread-2");
	CHECK(pthread_mutex_lock(&another_very_long_named_mutex_guarding_the_statistics));
	__atomic_store_n(&holder_tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
	pause();
	return NULL;
}

static void *victim(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "victim-thread-3");
	__atomic_store_n(&victim_tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
	CHECK(pthread_mutex_lock(&another_very_long_named_mutex_guarding_the_statistics));
	return NULL;
}

int main(void)
{
	int (*name)(const pthread_mutex_t *, const char *) =
		(int (*)(const pthread_mutex_t *, const char *))dlsym(RTLD_DEFAULT,
								      "mutexstat_name");
	pthread_mutex_t *queue = &the_global_request_queue_protection_mutex_for_workers;
	pthread_t t;
	CHECK(pthread_mutex_lock(queue));
	CHECK(pthread_mutex_unlock(queue));
	if (!name || name(queue, "request queue mutex of the whole server") ||
	    name(&another_very_long_named_mutex_guarding_the_statistics,
		 "statistics mutex of the whole server!!"))
		return 2;
	CHECK(pthread_create(&t, NULL, holder, NULL));
	while (!__atomic_load_n(&holder_tid, __ATOMIC_ACQUIRE))
		usleep(1000);
	CHECK(pthread_create(&t, NULL, victim, NULL));
	while (!__atomic_load_n(&victim_tid, __ATOMIC_ACQUIRE) ||
	       !sleeps_on_futex(victim_tid, &another_very_long_named_mutex_guarding_the_statistics))
		usleep(1000);
	return 0; /* the victim waits: a WAIT CHAIN */
}
EOC
# shellcheck disable=SC2086 # SAN_FLAGS is a list of flags
if $CC -g -O0 $SAN_FLAGS -I"$top_srcdir/tests" -o "$WORK/long" "$WORK/long.c" -pthread -ldl; then
	run_with "$WORK/out5" "$WORK/err5" "$WORK/long"
	expect_eq "long variables and names: no line past 120 columns" \
		"$(awk 'length($0) > 120' "$WORK/report")" ""
	expect_grep "the WAIT CHAIN line names the lock, its end kept" \
		'^  thread [0-9]+ "victim-thread-3" waits for mutex 0x[0-9a-f]+ <anoth[^ ]*[.][.][.][^ ]*statistics> "statistics ' \
		"$WORK/report"
	expect_grep "a heading: the variable's ends and the name's start" \
		'^#[0-9]+ mutex 0x[0-9a-f]+ <the_global_[^ ]*[.][.][.][^ ]*_for_workers> "request queue [^"]*[.][.][.]" \(normal' \
		"$WORK/report"
else
	fail "cannot build long.c"
fi

# A stripped program without a build ID whose .gnu_debuglink file is from
# another build (one more array before stats_lock): its symbols are not the
# program's, and gdb refuses it (CRC mismatch).  Before, stats_lock read
# <queue_lock+0x20>.
cat >"$WORK/link.c" <<'EOC'
#include <pthread.h>
#include <stdio.h>
pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
#ifdef NEW
pthread_mutex_t extra_lock[2] = { PTHREAD_MUTEX_INITIALIZER };
#endif
int main(void)
{
	pthread_mutex_lock(&stats_lock);
	pthread_mutex_unlock(&stats_lock);
	printf("%p %p\n", (void *)&queue_lock, (void *)&stats_lock);
	return 0;
}
EOC
mkdir "$WORK/link" && for v in OLD NEW; do
	# shellcheck disable=SC2086 # SAN_FLAGS is a list of flags
	$CC -D$v -g -O0 $SAN_FLAGS -pthread -Wl,--build-id=none -o "$WORK/link_$v" "$WORK/link.c" ||
		fail "cannot build link.c ($v)"
done
cp "$WORK/link_NEW" "$WORK/link/prog" && objcopy --only-keep-debug "$WORK/link/prog" \
	"$WORK/link/prog.debug" && strip --strip-all "$WORK/link/prog" &&
	objcopy --add-gnu-debuglink="$WORK/link/prog.debug" "$WORK/link/prog" ||
	fail "cannot make the debug file"
run_with "$WORK/out4" "$WORK/err4" "$WORK/link/prog"
read -r _ stats <"$WORK/out4"
expect_grep "a .gnu_debuglink file of this build: its names" \
	"^#[0-9]+ mutex $stats <stats_lock> \\(" "$WORK/report"
objcopy --only-keep-debug "$WORK/link_OLD" "$WORK/link/prog.debug" # another build's
run_with "$WORK/out4" "$WORK/err4" "$WORK/link/prog"
read -r _ stats <"$WORK/out4"
expect_grep "another build's .gnu_debuglink file (CRC mismatch): not used" \
	"^#[0-9]+ mutex $stats \\(normal" "$WORK/report"
expect_no_grep "nor its function names" 'main\+0x[0-9a-f]+ \(.*link\.c' "$WORK/report"

# A symbol over 4 GiB (a 5 GiB array in .bss, which costs nothing until
# touched) left the module without an index of its symbols, and each of
# its mutexes was named by libdw's scan of the whole table: 196 s instead
# of 2 for 100,000 (tests/unit/test_sym_index.c checks the index keeps
# such a symbol; a time is no test here).  Its mutexes are named.  Not in
# a sanitized build, where AddressSanitizer's shadow of a 5 GiB global
# takes some 20 s to make.
if sanitized; then
	echo "skip: a 5 GiB global under AddressSanitizer"
else
	{
		echo '#include <pthread.h>'
		i=0
		while [ $i -lt 1000 ]; do
			echo "pthread_mutex_t mu_$i = PTHREAD_MUTEX_INITIALIZER;"
			i=$((i + 1))
		done
		echo 'pthread_mutex_t *all[] = {'
		i=0
		while [ $i -lt 1000 ]; do echo "&mu_$i,"; i=$((i + 1)); done
		echo '};'
		echo 'char huge_buffer[5UL << 30];'
		echo 'int main(void) { for (unsigned i = 0; i < sizeof all / sizeof all[0]; i++) {'
		echo '	pthread_mutex_lock(all[i]); pthread_mutex_unlock(all[i]); } return 0; }'
	} >"$WORK/huge.c"
	$CC -O1 -pthread -o "$WORK/huge" "$WORK/huge.c" || fail "cannot build huge.c"
	MUTEXSTAT_FORMAT=text,json MUTEXSTAT_OUTPUT="$WORK/huge" run_with "$WORK/out5" \
		"$WORK/err5" "$WORK/huge"
	expect_grep "a module with a symbol over 4 GiB: its mutexes named" '^ +1 <mu_[0-9]+> ' \
		"$WORK/huge.txt"
	expect_eq "... every one of them, in JSON" \
		"$(grep -o '"symbol":"mu_[0-9]*"' "$WORK/huge.json" | sort -u | wc -l)" 1000
fi

# A lock is named only after a module loaded before its life began: memory
# the program unmapped, where a plugin was loaded later, and a library
# unloaded (dlclose) and another loaded at its place.  Before, the old
# mutexes read <plug_arr+0x..> and <p2_other>.  Where the loader puts the
# plugin elsewhere, nothing is checked.
cat >"$WORK/reuse.c" <<'EOC'
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include "proc_wait.h"
#define SPAN (64 << 10)
static pthread_mutex_t *olds[SPAN / 64]; /* reachable: no leak reported */
/* a mutex every 64 bytes of a buffer that is then unmapped, and a plugin
 * loaded where it was (the hole's top, as Linux maps): one locks its
 * plug_arr[1] (at +0x28) then */
static int unmapped(const char *plugin)
{
	char *buf = mmap(NULL, SPAN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return 1;
	for (size_t i = 0; i < SPAN / 64; i++) {
		olds[i] = (pthread_mutex_t *)(void *)(buf + 64 * i);
		memset(olds[i], 0, sizeof *olds[i]); /* a static initialiser */
		CHECK(pthread_mutex_lock(olds[i]));
		CHECK(pthread_mutex_unlock(olds[i]));
	}
	munmap(buf, SPAN);
	void *h = dlopen(plugin, RTLD_NOW);
	char *arr = h ? dlsym(h, "plug_arr") : NULL;
	void (*run)(void) = h ? (void (*)(void))dlsym(h, "plug_run") : NULL;
	if (!run)
		return 1;
	run();
	printf("%s\n", arr >= buf && arr < buf + SPAN ? "there" : "elsewhere");
	return 0;
}
/* p1_lock of libp1, locked, never destroyed; libp1 unloaded and libp2
 * loaded (at the same place, as it mostly is) */
static int reloaded(const char *p1, const char *p2)
{
	void *h = dlopen(p1, RTLD_NOW);
	void *(*lock_at)(void) = h ? (void *(*)(void))dlsym(h, "lock_at") : NULL;
	if (!lock_at)
		return 1;
	pthread_mutex_t *m = lock_at();
	CHECK(pthread_mutex_lock(m));
	CHECK(pthread_mutex_unlock(m));
	dlclose(h);
	h = dlopen(p2, RTLD_NOW);
	lock_at = h ? (void *(*)(void))dlsym(h, "lock_at") : NULL;
	if (!lock_at)
		return 1;
	printf("%p %s\n", (void *)m, lock_at() == (void *)m ? "there" : "elsewhere");
	return 0;
}
int main(int argc, char **argv)
{
	return argc == 2 ? unmapped(argv[1]) : reloaded(argv[1], argv[2]);
}
EOC
cat >"$WORK/plug.c" <<'EOC'
#include <pthread.h>
pthread_mutex_t plug_arr[64];
void plug_run(void)
{
	pthread_mutex_lock(&plug_arr[1]);
	pthread_mutex_unlock(&plug_arr[1]);
}
EOC
for p in 1 2; do
	cat >"$WORK/p$p.c" <<EOC
#include <pthread.h>
static char pad[64];
pthread_mutex_t p${p}_lock = PTHREAD_MUTEX_INITIALIZER;
void *lock_at(void) { (void)pad; return &p${p}_lock; }
EOC
done
# shellcheck disable=SC2086 # SAN_FLAGS is a list of flags
for l in plug p1 p2; do
	$CC -g -fPIC -shared $SAN_FLAGS -o "$WORK/lib$l.so" "$WORK/$l.c" -pthread ||
		fail "cannot build lib$l.so"
done
# shellcheck disable=SC2086 # SAN_FLAGS is a list of flags
$CC -g -O0 $SAN_FLAGS -I"$top_srcdir/tests" -o "$WORK/reuse" "$WORK/reuse.c" -ldl -pthread ||
	fail "cannot build reuse.c"
MUTEXSTAT_FORMAT=text,json MUTEXSTAT_OUTPUT="$WORK/u" run_with "$WORK/out6" "$WORK/err6" \
	"$WORK/reuse" "$WORK/libplug.so"
expect_grep "a plugin's own lock: named" '"symbol":"plug_arr[+]0x28"' "$WORK/u.json"
if [ "$(cat "$WORK/out6")" = there ]; then
	expect_eq "locks of memory unmapped before the plugin came there: not named after it" \
		"$(grep -o '"symbol":"plug_arr[^"]*"' "$WORK/u.json" | tr '\n' ' ')" \
		'"symbol":"plug_arr+0x28" '
else
	echo "skip: the plugin was loaded elsewhere"
fi
run_with "$WORK/out7" "$WORK/err7" "$WORK/reuse" "$WORK/libp1.so" "$WORK/libp2.so"
read -r p1 where <"$WORK/out7"
if [ "$where" = there ]; then
	expect_grep "a lock of an unloaded library: its address alone" \
		"^#[0-9]+ mutex $p1 \\(normal" "$WORK/report"
	expect_no_grep "never the name of the library loaded at its place" '<p2_lock>' \
		"$WORK/report"
else
	echo "skip: libp2 was loaded elsewhere"
fi

# C++: a variable in a namespace and a class's static member, demangled
CXX=${CXX:-c++}
if command -v "$CXX" >/dev/null 2>&1; then
	cat >"$WORK/vars.cpp" <<'EOC'
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
namespace store {
std::mutex registry_mu;
}
struct Pool {
	static std::mutex mu_;
};
std::mutex Pool::mu_;
/* two statics whose names differ only in their last template argument,
 * past the text's cut */
template <typename K, typename V> struct cache {
	static std::mutex mu;
};
template <typename K, typename V> std::mutex cache<K, V>::mu;
typedef std::map<std::string, std::string> dict;
int main()
{
	{
		std::lock_guard<std::mutex> a(store::registry_mu);
		std::lock_guard<std::mutex> b(Pool::mu_);
		std::lock_guard<std::mutex> c(cache<dict, int>::mu);
		std::lock_guard<std::mutex> d(cache<dict, long>::mu);
	}
	std::printf("%p %p\n", (void *)&store::registry_mu, (void *)&Pool::mu_);
}
EOC
	# shellcheck disable=SC2086 # SAN_FLAGS is a list of flags
	if "$CXX" -g -O0 $SAN_FLAGS -pthread -o "$WORK/varscxx" "$WORK/vars.cpp"; then
		MUTEXSTAT_FORMAT=text,json MUTEXSTAT_OUTPUT="$WORK/cxx" \
			run_with "$WORK/out3" "$WORK/err3" "$WORK/varscxx"
		mv "$WORK/cxx.txt" "$WORK/report"
		read -r reg pool <"$WORK/out3"
		expect_grep "C++: a namespace's std::mutex, demangled" \
			"^#[0-9]+ mutex $reg <store::registry_mu> \\(" "$WORK/report"
		expect_grep "C++: a class's static std::mutex" \
			"^#[0-9]+ mutex $pool <Pool::mu_> \\(" "$WORK/report"
		expect_eq "C++: two instantiations cut in their middle read apart" \
			"$(grep -oE '^#[0-9]+ mutex 0x[0-9a-f]+ <cache<std::map[^ ]*[.][.][.].*, (int|long)>::mu> \(' \
				"$WORK/report" | grep -oE '(int|long)>::mu' | sort | tr '\n' ' ')" \
			"int>::mu long>::mu "
		expect_eq "C++: JSON has the two names whole" \
			"$(grep -oE '"symbol":"cache<std::map<[^"]*basic_string[^"]*, (int|long)>::mu"' \
				"$WORK/cxx.json" | grep -c -v '[.][.][.]')" 2
	else
		fail "cannot build vars.cpp with $CXX"
	fi
else
	echo "skip: C++ variables (no $CXX)"
fi

finish
