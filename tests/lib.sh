# tests/lib.sh - shared helpers for the integration tests (sourced).
#
# The test harness exports MUTEXSTAT_LIB (the built library), top_builddir
# and top_srcdir.  Each test runs programs with and without the library and
# checks what a user would read in the report.

set -u
: "${top_builddir:?run through make check}"
: "${MUTEXSTAT_LIB:?run through make check}"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/mutexstat-test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
FAILED=0
PASSED=0

# MS_PRELOAD is what a test puts in LD_PRELOAD to run a program under the
# library.  In a sanitized build (configure --enable-sanitizers) the harness
# exports SAN_PRELOAD, the ASan runtime, which must be the first library
# loaded: it goes in front of ours.  ASan's and LeakSanitizer's reports then
# go to files in $WORK that finish() counts as failures, so a finding fails
# the test even in a program whose status or stderr the test does not look
# at (UBSan's: see sanitizer_reports).  SAN_FIRST goes in front of any other
# LD_PRELOAD a test sets; SAN_FLAGS are the compiler flags of that build,
# for programs a test compiles and links with the library.
SAN_PRELOAD=${SAN_PRELOAD-}
SAN_FLAGS=${SAN_FLAGS-}
SAN_FIRST=${SAN_PRELOAD:+$SAN_PRELOAD:}
MS_PRELOAD=$SAN_FIRST$MUTEXSTAT_LIB
if [ -n "$SAN_PRELOAD" ]; then
	# intercept_tls_get_addr=0: gcc 12's ASan guesses the bounds of a
	# thread's dynamic TLS blocks (libunwind's, which the library dlopens)
	# from glibc's layout of 2.19, wrongly, and LeakSanitizer then crashes
	# at exit scanning them; so those blocks are not scanned (static TLS
	# still is).
	ASAN_OPTIONS="log_path=$WORK/sanitizer:intercept_tls_get_addr=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
	UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
	LSAN_OPTIONS="suppressions=$top_srcdir/tests/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
	export ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS
fi

# sanitized: succeeds in a sanitized build.
sanitized() {
	[ -n "$SAN_PRELOAD" ]
}

# san_leave_signals: in a sanitized build, ASan does not catch SIGSEGV,
# SIGBUS, SIGFPE, SIGILL and SIGABRT (and core dumps are written), so they
# reach the program and the library as in a normal build: for tests of
# MUTEXSTAT_ON_CRASH.
san_leave_signals() {
	sanitized || return 0
	ASAN_OPTIONS="$ASAN_OPTIONS:handle_segv=0:handle_sigbus=0:handle_sigfpe=0"
	ASAN_OPTIONS="$ASAN_OPTIONS:handle_sigill=0:handle_abort=0:disable_coredump=0"
}

# skip_if_sanitized WHY: skip the whole test in a sanitized build.
skip_if_sanitized() {
	if sanitized; then
		echo "SKIP: not in a sanitized build: $*"
		exit 77
	fi
}

# run_with OUT ERR program args...: the program under the library, report
# to $WORK/report (unless MUTEXSTAT_OUTPUT is already set by the caller).
run_with() {
	out=$1; err=$2; shift 2
	env LD_PRELOAD="$MS_PRELOAD" \
	    MUTEXSTAT_OUTPUT="${MUTEXSTAT_OUTPUT-$WORK/report}" \
	    "$@" >"$out" 2>"$err"
}

fail() {
	echo "FAIL: $*" >&2
	FAILED=$((FAILED + 1))
}

pass() {
	echo "ok: $*"
	PASSED=$((PASSED + 1))
}

# LOCK_RE: how the top table shows a lock that has no name, for grep -E: its
# address, or the variable it is ("<cache_lock>").
LOCK_RE='(0x[0-9a-f]+|<[^>]+>)'

# expect_eq WHAT GOT WANT
expect_eq() {
	if [ "$2" = "$3" ]; then pass "$1 = $3"; else fail "$1: got '$2', want '$3'"; fi
}

# expect_grep WHAT PATTERN FILE (extended regex)
expect_grep() {
	if grep -Eq -- "$2" "$3"; then pass "$1"; else
		fail "$1: /$2/ not in $3"; sed 's/^/  | /' "$3" >&2; fi
}

expect_no_grep() {
	if grep -Eq -- "$2" "$3"; then fail "$1: /$2/ found in $3"
		sed 's/^/  | /' "$3" >&2; else pass "$1"; fi
}

# top_label FILE ADDRESS: how the top table of the report in FILE shows the
# lock at ADDRESS: the variable it is ("<cache_lock>", as its heading, held
# line or finding names it beside the address), else the address.  Any
# other label is printed as it is.
top_label() {
	top_label_var=
	case $2 in 0x*)
		top_label_var=$(grep -o -m1 -- "$2 <[^>]*>" "$1" | sed 's/^[^ ]* //') ;;
	esac
	echo "${top_label_var:-$2}"
}

# top_label_re FILE ADDRESS: the same, for grep -E ("<accounts[+]0x68>").
top_label_re() {
	top_label "$1" "$2" | sed 's/[][+.*?()|$\\{}]/[&]/g; s/\^/\\^/g'
}

# top_row FILE MUTEX-LABEL: the row of the top table for a mutex (address,
# name, or "N destroyed"), columns separated by two or more spaces collapsed.
# An address whose lock is a variable ("0x55.. <cache_lock>" in its heading)
# finds the row by the variable, which the table shows in its place.
top_row() {
	awk -v label="$(top_label "$1" "$2")" '/^Top [0-9]+ (mutex(es)?|locks?) by/ { in_top = 1; next }
		in_top && /^$/ { in_top = 0 }
		in_top && index($0, " " label " ") { print; exit }' "$1"
}

# sanitizer_reports: each report a sanitizer wrote is a failure (warnings
# alone, such as LeakSanitizer's "False leaks are possible", are not).
# UBSan's reports do not go to the log files (gcc's UBSan runtime, beside
# ASan's, writes them to stderr whatever UBSAN_OPTIONS says): the program
# stops with status 1 at the first one, and any file of the test that holds
# one -- a saved stderr -- is a failure too.
sanitizer_reports() {
	sanitized || return 0
	for f in "$WORK"/sanitizer.*; do
		[ -e "$f" ] || continue
		grep -Eq 'ERROR: |runtime error|CHECK failed|fatal error' "$f" || continue
		fail "a sanitizer found a problem ($(basename "$f")):"
		sed 's/^/  | /' "$f" >&2
	done
	grep -rlE '^[^ ]+:[0-9]+:[0-9]+: runtime error: ' "$WORK" 2>/dev/null |
	    grep -v '/sanitizer\.[0-9]*$' >"$WORK/.ubsan" || :
	while read -r f; do
		fail "UBSan found a problem (in $f):"
		grep -A3 'runtime error: ' "$f" | sed 's/^/  | /' >&2
	done <"$WORK/.ubsan"
}

# wait_for FILE PATTERN [SECONDS]: until FILE has a line matching PATTERN
# (extended regex), at most SECONDS (20): a program's progress, never its
# timing.  Status 1 if it did not come.  (Its counter has a name of its
# own: a caller's loop counter called n was reset by each call.)
wait_for() {
	wait_for_tenths=0
	while [ $wait_for_tenths -lt $((${3:-20} * 10)) ]; do
		grep -Eq -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
		wait_for_tenths=$((wait_for_tenths + 1))
	done
	return 1
}

# last_report PREFIX: the newest of the reports PREFIX.1, PREFIX.2, ...
# (PREFIX.1 if none).  The watchdog writes one when a wait reaches its
# time, and a STALL, which needs every thread blocked that long with no
# mutex operation, may come a look later, in the next: the report an
# abort follows is the newest.
last_report() {
	last_report_n=1
	while [ -e "$1.$((last_report_n + 1))" ]; do last_report_n=$((last_report_n + 1)); done
	echo "$1.$last_report_n"
}

# dump_ready PID [SECONDS]: until the library's dump thread runs in process
# PID (its threads list one named "mutexstat"), at most SECONDS (10): a
# dump signal sent before it is there ends the program (SIGUSR1's default).
# Status 1 if it did not come.
dump_ready() {
	dump_ready_tenths=0
	until grep -qx mutexstat /proc/"$1"/task/*/comm 2>/dev/null; do
		[ $dump_ready_tenths -ge $((${2:-10} * 10)) ] && return 1
		sleep 0.1
		dump_ready_tenths=$((dump_ready_tenths + 1))
	done
}

# wait_or_kill JOB SECONDS [PID]: waits for the background job JOB, killing
# PID (JOB itself if not given) with SIGKILL if it still runs after SECONDS;
# the status is JOB's.  No guard subshell (sleep && kill) &: bash runs the
# EXIT trap -- rm -rf "$WORK" -- in a subshell killed before it has reset
# its traps, which a guard killed just after it started is.
wait_or_kill() {
	wait_or_kill_tenths=0
	while kill -0 "$1" 2>/dev/null && [ $wait_or_kill_tenths -lt $(($2 * 10)) ]; do
		sleep 0.1
		wait_or_kill_tenths=$((wait_or_kill_tenths + 1))
	done
	kill -KILL "${3:-$1}" 2>/dev/null
	wait "$1"
}

# same_run PROG WHAT ARGS...: PROG's output with the library ($WORK/out,
# report in $WORK/report or MUTEXSTAT_OUTPUT) is its output without it
# (its first line), and both succeed.
same_run() {
	same_run_prog=$1 same_run_what=$2
	shift 2
	"$same_run_prog" "$@" > "$WORK/bare" 2>&1
	bare_rc=$?
	run_with "$WORK/out" "$WORK/err" "$same_run_prog" "$@"
	rc=$?
	expect_eq "$same_run_what: exit status" "$rc/$bare_rc" 0/0
	expect_eq "$same_run_what: output" "$(head -n 1 "$WORK/out")" "$(head -n 1 "$WORK/bare")"
}

finish() {
	sanitizer_reports
	echo "$PASSED passed, $FAILED failed"
	[ "$FAILED" -eq 0 ]
	exit $?
}
