#!/bin/sh
# tests/cxx.sh - C++ programs: std::mutex, std::condition_variable,
# std::recursive_mutex and std::timed_mutex are pthread mutexes underneath.
#
# examples/cxx_mutex must print the same and exit the same with and without
# the library, and the report must show its mutexes: some tracked, acquired,
# waited on through condition variables, and the lock_guard counter's mutex
# with exactly one acquisition per work item.

. "$top_srcdir/tests/lib.sh"

prog="$top_builddir/examples/cxx_mutex"
items=12000 # producers * items each, in examples/cxx_mutex.cpp

# acquired_column REPORT: the "acquired" value of every row of the top table,
# read under the column's header (right-aligned), so a mutex label with
# spaces in it ("3 destroyed", a name) does not shift it.
acquired_column() {
	awk '/^Top [0-9]+ mutex(es)? by/ { top = 1; next }
		top && /^$/ { top = 0 }
		top && /acquired/ { end = index($0, "acquired") + 7; next }
		top && end { v = substr($0, 1, end); sub(/.*[ \t]/, "", v); print v }' "$1"
}

for round in 1 2; do
	"$prog" >"$WORK/plain.out" 2>"$WORK/plain.err"
	plain_status=$?
	rm -f "$WORK/report"
	run_with "$WORK/traced.out" "$WORK/traced.err" "$prog"
	traced_status=$?

	expect_eq "round $round: exit status without the library" "$plain_status" 0
	expect_eq "round $round: exit status with the library" "$traced_status" "$plain_status"
	expect_grep "round $round: the program checked its totals" \
	    '^all totals correct$' "$WORK/plain.out"
	if cmp -s "$WORK/plain.out" "$WORK/traced.out"; then
		pass "round $round: stdout identical with the library"
	else
		fail "round $round: stdout differs with the library (- without, + with):"
		diff -u "$WORK/plain.out" "$WORK/traced.out" | sed 's/^/  | /' >&2
	fi

	report="$WORK/report"
	if [ ! -s "$report" ]; then
		fail "round $round: no report in $report"
		continue
	fi
	expect_grep "round $round: report header" \
	    '^mutexstat: cxx_mutex \(pid [0-9]+\)' "$report"
	tracked=$(sed -n 's/^mutexstat: .* \([0-9][0-9]*\) mutexes tracked.*/\1/p' "$report")
	if [ "${tracked:-0}" -gt 0 ]; then
		pass "round $round: $tracked mutexes tracked"
	else
		fail "round $round: mutexes tracked: '${tracked}'"
		sed 's/^/  | /' "$report" >&2
	fi
	acquired=$(acquired_column "$report" | tr '\n' ' ')
	if acquired_column "$report" | grep -Eq '^[1-9][0-9]*$'; then
		pass "round $round: the top table shows acquisitions ($acquired)"
	else
		fail "round $round: no top-table row with acquired > 0 ('$acquired')"
		sed 's/^/  | /' "$report" >&2
	fi
	if acquired_column "$report" | grep -qx "$items"; then
		pass "round $round: the lock_guard counter's mutex acquired $items times"
	else
		fail "round $round: no mutex acquired exactly $items times ('$acquired')"
	fi
	expect_grep "round $round: condition waits seen" \
	    'condition waits [1-9][0-9]*' "$report"
	expect_grep "round $round: the recursive_mutex is listed" \
	    '^#[0-9]+ mutex .*\(recursive' "$report"
	expect_grep "round $round: try_lock_for's timeout is counted" \
	    'timed out [1-9][0-9]*' "$report"
	# std::thread's start, the C++ runtime's trampoline, ended every
	# stack as a bare "libstdc++.so.6+0xd44a3"
	# (first-lock stacks always; "who waited" only if a run contended)
	expect_grep "round $round: stacks of the std::threads' code" \
	    '^  first locked at   .*cxx_mutex' "$report"
	expect_no_grep "round $round: and not of the runtime's thread start" \
	    '^ +(|[0-9]+ +[0-9.]+ [a-zµ]+ .*  )libstdc\+\+\.so\.[0-9]+\+0x[0-9a-f]+$' "$report"
done

# ---- unoptimised C++: the rule suggested names the program's code ----------
# Built with -O0, std::mutex::lock() and __gthread_mutex_lock are frames of
# their own, under every std::mutex of the program: the rule suggested for
# an inversion was potential-deadlock:^std::mutex::lock()$, which leaves
# out every std::mutex inversion.
CXX=${CXX:-c++}
if command -v "$CXX" >/dev/null 2>&1; then
	cat >"$WORK/o0.cpp" <<'EOF'
#include <mutex>
#include <thread>
static std::mutex a, b;
static void a_then_b() { std::lock_guard<std::mutex> x(a); std::lock_guard<std::mutex> y(b); }
static void b_then_a() { std::lock_guard<std::mutex> x(b); std::lock_guard<std::mutex> y(a); }
int main() { std::thread(a_then_b).join(); std::thread(b_then_a).join(); }
EOF
	if "$CXX" -g -O0 -pthread -o "$WORK/o0" "$WORK/o0.cpp"; then
		env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/o0.report" "$WORK/o0"
		expect_grep "-O0: the rule suggested names a function of the program" \
			'^  to suppress it: potential-deadlock:\^(a_then_b|b_then_a)\(\)\$ ' "$WORK/o0.report"
	else
		fail "cannot build o0.cpp with $CXX"
	fi
else
	echo "skip: -O0 C++ (no $CXX)"
fi

finish
