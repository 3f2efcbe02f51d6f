#!/bin/sh
# tests/cxx_names.sh - the report names C++ lambdas where they took their
# locks (tests/cxx_names.cpp): the lock_guard's own line, never libstdc++'s
# gthr-default.h, and the lambda by its name, not its operator() or the
# std::thread or std::function wrapper that ran it; a name too long for the
# top table keeps the lambda, not the end of "operator()() const"; an
# operator< of a class template keeps its class; a lock wrapper inlined at
# two places is passed over to its callers' lines; and the lines of
# -gsplit-dwarf builds, the names of clang's lambdas, of a build without
# -g, and of a program without libstdc++.so.
. "$top_srcdir/tests/lib.sh"
prog="$top_builddir/tests/cxx_names"
src="$top_srcdir/tests/cxx_names.cpp"

same_run "$prog" "cxx_names"
expect_eq "cxx_names: every lock counted" "$(cat "$WORK/out")" 14000
report=$WORK/report

# line TAG: the line of the source that has // TAG on it.
line() {
	grep -n "// $1\$" "$src" | cut -d: -f1
}

# section LABEL: the report's section of the mutex shown as LABEL.
section() {
	awk -v l="$1" '/^#[0-9]+ / { on = index($0, " " l " ") > 0 } on' "$report"
}

for which in noinline function template generic async; do
	tag=$(echo "$which" | tr a-z A-Z)-LOCK
	at="cxx_names.cpp:$(line "$tag")"
	row=$(top_row "$report" "<${which}_mu>")
	case $row in
	*"{lambda()#1} $at"* | *"{lambda(auto:1)#1} $at"*)
		pass "$which: the top table names the lambda at its lock's line ($at)" ;;
	*)
		fail "$which: the top table's row is '$row', not the lambda at $at" ;;
	esac
	section "<${which}_mu>" >"$WORK/$which.section"
	expect_grep "$which: its section's first lock is at $at" \
		"^  first locked at .*[{]lambda[(](auto:1)?[)]#1[}]([+]0x[0-9a-f]+)? [(]?[^ ]*$at" "$WORK/$which.section"
	expect_no_grep "$which: no frame named by the lambda's operator()" \
		'operator[(][)][(][)]' "$WORK/$which.section"
	expect_no_grep "$which: no lock put at a line of libstdc++'s headers" \
		'^  first locked at .*(gthr-default|std_mutex)[.]h' "$WORK/$which.section"
done

# A class template run by std::thread: "std::thread running Work<long>",
# no space after it (the demangler's, before a closing '>')
section "<callable_mu>" >"$WORK/callable.section"
expect_grep "callable: its first lock in std::thread running Work<long>, at its line" \
	"^  first locked at   Work<long>::operator[(][)][(][)] const[+]0x[0-9a-f]+ [(][^ ]*cxx_names.cpp:$(line CALLABLE-LOCK)|^  first locked at   std::thread running Work<long>[+]0x[0-9a-f]+ [(][^ ]*cxx_names.cpp:$(line CALLABLE-LOCK)" \
	"$WORK/callable.section"
expect_no_grep "callable: no space after the callable's name" 'Work<long> ' \
	"$WORK/callable.section"

# A lock wrapper of the program's, inlined where it is called: each lock at
# its caller's line, in the top table and in its section
for which in wrap_a wrap_b; do
	at="cxx_names.cpp:$(line "$(echo "$which" | tr a-z A-Z)-LOCK")"
	row=$(top_row "$report" "<${which}_mu>")
	case $row in
	*" $at" | *"($at)") pass "$which: the top table has the line that called the wrapper ($at)" ;;
	*) fail "$which: the top table's row is '$row', not at $at" ;;
	esac
done
section "<wrap_a_mu>" >"$WORK/wrap_a.section"
expect_grep "wrap_a: its section's first lock at the line that called the wrapper" \
	"^  first locked at   .*[(][^ ]*cxx_names.cpp:$(line WRAP_A-LOCK)," "$WORK/wrap_a.section"

# ... but a helper called from one line keeps its own, though the
# function that calls it is both kept out of line and inlined (two copies
# of the one call)
cat >"$WORK/once.c" <<'EOF'
#include <pthread.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long c;
static void helper(void)
{
	pthread_mutex_lock(&m); /* HELPER-LOCK */
	c++;
	pthread_mutex_unlock(&m);
}
void work(int n)
{
	for (int i = 0; i < n; i++)
		helper();
}
static void *t1(void *x) { work(1000); return x; }
int main(void)
{
	pthread_t x;
	pthread_create(&x, 0, t1, 0);
	pthread_join(x, 0);
	return 0;
}
EOF
if ${CC:-cc} -g -O2 -pthread -o "$WORK/once" "$WORK/once.c" 2>"$WORK/once.err"; then
	env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/once.report" "$WORK/once" >/dev/null 2>&1
	expect_grep "a helper called from one line: its lock's own line" \
		"^  first locked at   [^ ]* [(][^ ]*once.c:$(grep -n 'HELPER-LOCK' "$WORK/once.c" | cut -d: -f1)," \
		"$WORK/once.report"
else
	fail "cannot compile with ${CC:-cc}"
fi

# The wrappers that ran the lambdas: std::function's is named by it.
expect_no_grep "function: no frame named std::_Function_handler" \
	'_Function_handler' "$WORK/function.section"
# The template's lambda: its function and class in the section, whose
# line is wide enough for them.
expect_grep "template: the section's first lock names the class and function" \
	'ConnectionPoolManager<[^ ]*>::run_workers[(][^ ]*[)]::[{]lambda[(][)]#1[}]' \
	"$WORK/template.section"
# The operator: its name, longer than a frame holds, lost its template
# lists and kept its class (it kept the lists and lost the class, its "<"
# counted as a bracket).
section "<table>" >"$WORK/table.section"
expect_grep "operator<: its section names Table<...>::operator<(...) at its line" \
	"^  first locked at   Table<[.][.][.]>::operator<[(][.][.][.][)] const[+]0x[0-9a-f]+ [(][^ ]*cxx_names.cpp:$(line OPERATOR-LOCK)" \
	"$WORK/table.section"
# ---- no libstdc++.so in the process: names demangled all the same -----------
# (-static-libstdc++: its copy exports no demangler; names read _Z6workerPv)
cat >"$WORK/plain.cpp" <<'EOF'
#include <pthread.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
namespace pool {
void *worker(void *arg)
{
	for (int i = 0; i < 1000; i++) {
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
	}
	return arg;
}
}
int main()
{
	pthread_t a, b;
	pthread_create(&a, nullptr, pool::worker, nullptr);
	pthread_create(&b, nullptr, pool::worker, nullptr);
	pthread_join(a, nullptr);
	pthread_join(b, nullptr);
	return 0;
}
EOF
if ${CXX:-c++} -g -O1 -static-libstdc++ -pthread -o "$WORK/plain" "$WORK/plain.cpp" 2>"$WORK/plain.err"; then
	env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/plain.report" "$WORK/plain" >/dev/null 2>&1
	expect_grep "no libstdc++.so: the worker's name demangled" \
		'^  first locked at   pool::worker[(]void[*][)][+]0x' "$WORK/plain.report"
	expect_no_grep "no libstdc++.so: no mangled name" '_Z[0-9N]' "$WORK/plain.report"
else
	fail "cannot compile with -static-libstdc++"
	sed 's/^/  | /' "$WORK/plain.err" >&2
fi

# ---- no -g: a lambda not inlined, and the std::thread frame that ran it ------
# (without a line, the wrapper was named as the lambda too: a false
# recursion of two frames of one name.)  An inversion's edge shows them.
cat >"$WORK/nog.cpp" <<'EOF'
#include <mutex>
#include <thread>
#include <unistd.h>
static std::mutex a, b;
namespace app {
struct Runner {
	void go(int n)
	{
		std::thread t1([]() __attribute__((noinline)) {
			std::lock_guard<std::mutex> x(a);
			usleep(1000);
			std::lock_guard<std::mutex> y(b);
		});
		t1.join();
		std::thread t2([]() __attribute__((noinline)) {
			std::lock_guard<std::mutex> y(b);
			usleep(1000);
			std::lock_guard<std::mutex> x(a);
		});
		t2.join();
		(void)n;
	}
};
}
int main()
{
	app::Runner().go(1);
	return 0;
}
EOF
if ${CXX:-c++} -std=c++17 -O1 -pthread -o "$WORK/nog" "$WORK/nog.cpp" 2>"$WORK/nog.err"; then
	env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/nog.report" "$WORK/nog" >/dev/null 2>&1
	expect_eq "no -g: the second lock's frame, the lambda's, then std::thread running it" \
		"$(sed -n '/took A, then B:/,/took B, then A:/{/^    B   at/{s/^    B   at  //;s/[+].*//;p;n;s/^ *//;s/[+].*//;p}}' "$WORK/nog.report")" \
		"app::Runner::go(int)::{lambda()#1}
std::thread running app::Runner::go(...)::{lambda()#1}"
else
	fail "cannot compile without -g"
	sed 's/^/  | /' "$WORK/nog.err" >&2
fi
report=$WORK/report

# ---- split DWARF: the inlined calls are in the .dwo ---------------------------
# (the unit in the program is a skeleton: every lock read gthr-default.h:749)
if (cd "$WORK" && ${CXX:-c++} -std=c++17 -g -O2 -gsplit-dwarf -pthread -o split_names "$src") \
	2>"$WORK/split.err"; then
	env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/split.report" "$WORK/split_names" \
		>"$WORK/split.out" 2>&1
	expect_eq "split DWARF: every lock counted" "$(cat "$WORK/split.out")" 14000
	report=$WORK/split.report
	section "<function_mu>" >"$WORK/split_function.section"
	expect_grep "split DWARF: the lock_guard's line, not libstdc++'s" \
		"^  first locked at   .*[(][^ ]*cxx_names.cpp:$(line FUNCTION-LOCK)," "$WORK/split_function.section"
	expect_no_grep "split DWARF: no lock at gthr-default.h" 'gthr-default[.]h' "$WORK/split.report"
else
	fail "cannot compile with -gsplit-dwarf"
	sed 's/^/  | /' "$WORK/split.err" >&2
fi

# ---- clang: its lambdas are "$_0" --------------------------------------------
if command -v clang++ >/dev/null 2>&1 &&
   clang++ -std=c++17 -g -O2 -pthread -o "$WORK/clang_names" "$src" 2>"$WORK/clang.err"; then
	env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/clang.report" "$WORK/clang_names" \
		>"$WORK/clang.out" 2>&1
	expect_eq "clang: every lock counted" "$(cat "$WORK/clang.out")" 14000
	report=$WORK/clang.report
	section "<noinline_mu>" >"$WORK/clang_noinline.section"
	expect_grep "clang: the lambda not inlined named as the lambda, at its lock's line" \
		"^  first locked at   run_noinline[(][)]::[\$]_[0-9]+[+]0x[0-9a-f]+ [(][^ ]*cxx_names.cpp:$(line NOINLINE-LOCK)," \
		"$WORK/clang_noinline.section"
	expect_no_grep "clang: no frame named by the lambda's operator()" 'operator[(][)][(][)]' \
		"$WORK/clang_noinline.section"
else
	echo "(no clang++: its lambdas' names not checked)"
fi
finish
