#!/bin/sh
# tests/fuzz_api.sh - random scripts of mutex and condition variable calls
# answer the same with and without the library, and the report's MISUSE
# lines count exactly the misuse the script did.
#
# tests/fuzz_api SEED runs the script that seed makes (see tests/fuzz_api.c)
# and prints one line per call: return value, errno and glibc's fields of
# the mutex.  For a fixed set of seeds -- the first ones, and those that
# found a bug -- the output without and with the library must be the same
# bytes; the misuse the script did (it prints it on stderr) must be what
# the report's MISUSE lines add up to, and its acquisitions what the JSON
# report's mutexes and ended lives add up to (with jq).  A few seeds run again with a tiny
# table (untracked mutexes: their misuse is not counted, so only the
# answers are compared) and a one-entry history.
#
# More seeds, by hand: FUZZ_SEEDS="1 2 3 ..." make check TESTS=tests/fuzz_api.sh

. "$top_srcdir/tests/lib.sh"

prog="$top_builddir/tests/fuzz_api"
limit=""
if command -v timeout >/dev/null 2>&1; then limit="timeout 120"; fi

# 1-40, then the seeds of the bugs it found: 45 87 135 214 294 (a timed
# lock of a robust priority-inherit mutex whose owner died took it where
# glibc refused the deadline), 174 (a priority-protect unlock: errno, and
# misuse of the wrong kind), 909 978 1297 (a destroyed mutex's unlock,
# condition waits glibc refuses: misuse not counted), 5322 (a mutex that is
# not robust made where a dead thread's robust list still pointed: the
# library's trylock made glibc abort)
seeds=${FUZZ_SEEDS:-"$(seq 1 40) 45 87 135 174 214 294 909 978 1297 5322"}

# misuse_in REPORT: the script's summary line, from the report's MISUSE
# lines (per mutex "N time(s)", and "N times on mutexes (now ended)").
misuse_in() {
	awk '/^MISUSE:/ {
		n = 0
		if (match($0, /, [0-9]+ times?$/)) { t = substr($0, RSTART + 2); split(t, a, " "); n = a[1] }
		else if (match($0, /: [0-9]+ times? on mutexes/)) { t = substr($0, RSTART + 2); split(t, a, " "); n = a[1] }
		if (/unlock of a mutex that is not locked/) u += n
		else if (/unlock by a thread that does not hold it/) o += n
		else if (/destroy of a locked mutex/) d += n
		else if (/use of a destroyed mutex/) x += n
		else if (/condition wait on a mutex the thread does not hold/) c += n
	}
	END { printf "expected misuse: unlock-unlocked %d unlock-not-owner %d destroy-locked %d use-destroyed %d cond-not-held %d\n", u, o, d, x, c }' "$1"
}

# one SEED LABEL [VAR=VALUE...]: the seed without and with the library.
# Prints nothing if all is well, a failure otherwise.
one() {
	seed=$1 label=$2
	shift 2
	plain="$WORK/$seed.plain" traced="$WORK/$seed.$label"
	$limit "$prog" "$seed" >"$plain.out" 2>"$plain.err"
	plain_status=$?
	$limit env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$traced" \
	    MUTEXSTAT_FORMAT=text,json "$@" \
	    "$prog" "$seed" >"$traced.out" 2>"$traced.err"
	traced_status=$?
	if [ "$plain_status" != 0 ] || ! tail -n 1 "$plain.out" | grep -q '^end m'; then
		fail "seed $seed: the script did not run to its end without the library (status $plain_status)"
		return
	fi
	if [ "$traced_status" != "$plain_status" ]; then
		fail "seed $seed ($label): exit status $traced_status with the library, $plain_status without"
		return
	fi
	if ! cmp -s "$plain.out" "$traced.out"; then
		fail "seed $seed ($label): the calls answer differently with the library (- without, + with):"
		diff -u "$plain.out" "$traced.out" | sed -n '3,40p' | sed 's/^/  | /' >&2
		return
	fi
	if [ "$label" = default ]; then
		got=$(misuse_in "$traced.txt")
		want=$(grep '^expected misuse' "$plain.err")
		if [ "$got" != "$want" ]; then
			fail "seed $seed: the report's MISUSE lines say '${got#expected misuse: }'; the script did '${want#expected misuse: }'"
			grep '^MISUSE' "$traced.txt" | sed 's/^/  | /' >&2
			return
		fi
		if [ -n "$jq" ]; then
			got=$(jq '[.mutexes[].acquisitions, .ended[].acquisitions] | add' "$traced.json")
			want=$(sed -n 's/^expected acquisitions //p' "$plain.err")
			if [ "$got" != "$want" ]; then
				fail "seed $seed: the report counts $got acquisitions; the script made $want"
				return
			fi
		fi
	fi
	echo ok >"$traced.ok"
}

jq=$(command -v jq || true)
[ -n "$jq" ] || echo "note: no jq: acquisitions not compared (Debian package jq)"
n=0
for seed in $seeds; do
	one "$seed" default
	n=$((n + 1))
done
good=$(ls "$WORK" | grep -c '\.default\.ok$')
expect_eq "$n seeds: same answers, errno and mutex fields; MISUSE and acquisition counts exact" "$good" "$n"

# untracked mutexes (a 64-entry table) and a one-entry history: the same
# answers
small=0
for seed in $(echo "$seeds" | tr ' ' '\n' | sed -n '1,10p'); do
	one "$seed" table64 MUTEXSTAT_TABLE_SIZE=64
	one "$seed" history1 MUTEXSTAT_HISTORY=1
	small=$((small + 1))
done
good=$(ls "$WORK" | grep -c '\.table64\.ok$')
expect_eq "$small seeds with MUTEXSTAT_TABLE_SIZE=64: same answers" "$good" "$small"
good=$(ls "$WORK" | grep -c '\.history1\.ok$')
expect_eq "$small seeds with MUTEXSTAT_HISTORY=1: same answers" "$good" "$small"

finish
