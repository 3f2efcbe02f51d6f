# tests/report_files.sh - report files never clobber what is not a report
# of ours, and a disk that is read-only, full or limited loses the report
# with one line, never the program.
#   - an earlier report of the same user is replaced; a file of another
#     user, a file with other links, a symlink are left as they are, with
#     one warning, and the report goes to stderr
#   - with several formats the same rules hold for every file; only the
#     text report falls back to stderr, the others are named as lost
#   - a FIFO with a reader gets the report, one without a reader a
#     warning at once (no hang); /dev/null takes it silently
#   - a read-only or full file system (a tmpfs in a mount namespace, where
#     one can be made), /dev/full, the file-size limit (ulimit -f: no
#     SIGXFSZ), a stderr pipe nobody reads (no SIGPIPE): the program's exit
#     status and output are unchanged
# (tests/output.sh covers missing directories and %p.)

. "$top_srcdir/tests/lib.sh"

CONTENTION="$top_builddir/examples/contention"
RUN="$top_builddir/tests/run_hostile"
"$CONTENTION" 2 1000 >"$WORK/contention.out"
FIRST='^mutexstat: contention \(pid [0-9]+\) ran [^:]+: 3 threads used mutexes, 2 mutexes tracked, 0 untracked$'
JUNK='an older file that must stay as it is'

# run OUTPUT [VAR=value...]: examples/contention under the library with
# MUTEXSTAT_OUTPUT=OUTPUT (and the variables given); status in $rc.
run() {
	output=$1; shift
	rc=0
	env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$output" "$@" \
	    "$CONTENTION" 2 1000 >"$WORK/out" 2>"$WORK/err" || rc=$?
}

# expect_program WHAT: the last run's status and output are the program's.
expect_program() {
	expect_eq "$1: the program's status and output" "$rc $(cat "$WORK/out")" \
	    "0 $(cat "$WORK/contention.out")"
}

# expect_refused WHAT PATH REASON: one warning naming PATH and REASON, then
# the whole text report on stderr; the program unchanged.
expect_refused() {
	expect_program "$1"
	expect_eq "$1: the warning" "$(head -n 1 "$WORK/err")" \
	    "mutexstat: cannot write MUTEXSTAT_OUTPUT '$2' ($3); the report goes to stderr"
	sed 1d "$WORK/err" >"$WORK/err.rest"
	expect_grep "$1: then the report on stderr" "$FIRST" "$WORK/err.rest"
	expect_grep "$1: the whole report" '^#2 mutex ' "$WORK/err.rest"
}

# ---- an earlier report of ours is replaced --------------------------------

yes "$JUNK" | head -n 500 >"$WORK/own.txt"
run "$WORK/own.txt"
expect_program "own earlier file"
expect_grep "own earlier file: replaced by the report" "$FIRST" "$WORK/own.txt"
expect_no_grep "own earlier file: nothing of it left" "$JUNK" "$WORK/own.txt"
expect_eq "own earlier file: nothing on stderr" "$(cat "$WORK/err")" ""

# ---- what is not ours is left alone ----------------------------------------

echo "$JUNK" >"$WORK/linked.txt"
ln "$WORK/linked.txt" "$WORK/other-name"
run "$WORK/linked.txt"
expect_refused "a file with another link" "$WORK/linked.txt" "a file with 2 links: not replaced"
expect_eq "a file with another link: untouched" "$(cat "$WORK/other-name")" "$JUNK"

echo "$JUNK" >"$WORK/target"
ln -s "$WORK/target" "$WORK/symlink.txt"
run "$WORK/symlink.txt"
expect_refused "a symlink to our own file" "$WORK/symlink.txt" "a symlink: not followed"
expect_eq "a symlink to our own file: the target untouched" "$(cat "$WORK/target")" "$JUNK"

if [ "$(id -u)" -eq 0 ]; then
	echo "$JUNK" >"$WORK/theirs.txt"
	chown 65534 "$WORK/theirs.txt"
	chmod 666 "$WORK/theirs.txt"
	run "$WORK/theirs.txt"
	expect_refused "another user's file (we are root)" "$WORK/theirs.txt" \
	    "another user's file (uid 65534): not replaced"
	expect_eq "another user's file: untouched" "$(cat "$WORK/theirs.txt")" "$JUNK"
	# root's own file in a directory anyone may write to, hard-linked there
	# by someone else: still not replaced
	echo "$JUNK" >"$WORK/precious"
	mkdir -m 1777 "$WORK/shared"
	ln "$WORK/precious" "$WORK/shared/r.txt"
	run "$WORK/shared/r.txt"
	expect_refused "root's file linked into a shared directory" "$WORK/shared/r.txt" \
	    "a file with 2 links: not replaced"
	expect_eq "root's linked file: untouched" "$(cat "$WORK/precious")" "$JUNK"
else
	echo "skipped: another user's file (needs root to make one)"
fi

# ---- several formats: the same rules for each file --------------------------

mkdir "$WORK/m"
echo "$JUNK" >"$WORK/m/target"
ln -s "$WORK/m/target" "$WORK/m/r.json"
yes "$JUNK" | head -n 50 >"$WORK/m/r.dot"
run "$WORK/m/r" MUTEXSTAT_FORMAT=text,dot,json
expect_program "formats, a symlink at the json file"
expect_eq "formats: one warning, for the json file" "$(cat "$WORK/err")" \
    "mutexstat: cannot write MUTEXSTAT_OUTPUT '$WORK/m/r.json' (a symlink: not followed); the json report is lost"
expect_eq "formats: the symlink's target untouched" "$(cat "$WORK/m/target")" "$JUNK"
expect_grep "formats: the text file written" "$FIRST" "$WORK/m/r.txt"
expect_grep "formats: our earlier dot file replaced" '^digraph ' "$WORK/m/r.dot"
expect_no_grep "formats: nothing of the earlier dot file left" "$JUNK" "$WORK/m/r.dot"

run "$WORK/none/r" MUTEXSTAT_FORMAT=text,folded,pprof,dot,json
expect_program "all formats, no such directory"
grep '^mutexstat: cannot' "$WORK/err" >"$WORK/warnings"
cat >"$WORK/want" <<EOF
mutexstat: cannot write MUTEXSTAT_OUTPUT '$WORK/none/r.txt' (ENOENT); the report goes to stderr
mutexstat: cannot write MUTEXSTAT_OUTPUT '$WORK/none/r.wait.folded' (ENOENT); the folded report is lost
mutexstat: cannot write MUTEXSTAT_OUTPUT '$WORK/none/r.hold.folded' (ENOENT); the folded report is lost
mutexstat: cannot write MUTEXSTAT_OUTPUT '$WORK/none/r.pb.gz' (ENOENT); the pprof report is lost
mutexstat: cannot write MUTEXSTAT_OUTPUT '$WORK/none/r.dot' (ENOENT); the dot report is lost
mutexstat: cannot write MUTEXSTAT_OUTPUT '$WORK/none/r.json' (ENOENT); the json report is lost
EOF
expect_eq "all formats, no such directory: one warning per file" \
    "$(cat "$WORK/warnings")" "$(cat "$WORK/want")"
expect_grep "all formats, no such directory: the text report on stderr" "$FIRST" "$WORK/err"
expect_no_grep "all formats, no such directory: no JSON or graph on stderr" \
    '^(\{|digraph|mutex 0x)' "$WORK/err"

# ---- FIFOs and devices -------------------------------------------------------

mkfifo "$WORK/fifo"
# The reader has the FIFO open before the program starts (the report's
# open came first if cat was slow to start: ENXIO): fd 3, open both ways
# here, lets cat's open return at once, and is closed once the program has
# written, for cat's end of file.
exec 3<>"$WORK/fifo"
cat "$WORK/fifo" >"$WORK/from-fifo" 3>&- &
reader=$!
n=0
until ls -l "/proc/$reader/fd" 2>/dev/null | grep -qF -- "-> $WORK/fifo" || [ $n -ge 200 ]; do
	sleep 0.1; n=$((n + 1))
done
run "$WORK/fifo" 3>&-
exec 3>&-
wait $reader
expect_program "a FIFO with a reader"
expect_grep "a FIFO with a reader: it got the report" "$FIRST" "$WORK/from-fifo"
expect_eq "a FIFO with a reader: nothing on stderr" "$(cat "$WORK/err")" ""

rc=0
env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/fifo" \
    timeout 20 "$CONTENTION" 2 1000 >"$WORK/out" 2>"$WORK/err" || rc=$?
expect_refused "a FIFO without a reader (no wait)" "$WORK/fifo" ENXIO

run /dev/null
expect_program "/dev/null"
expect_eq "/dev/null: nothing on stderr" "$(cat "$WORK/err")" ""

# ---- the file-size limit: EFBIG, not SIGXFSZ ----------------------------------

if command -v prlimit >/dev/null 2>&1; then
	# stderr through a pipe: a file there would be limited too
	{
		env LD_PRELOAD="$MS_PRELOAD" MUTEXSTAT_OUTPUT="$WORK/big.txt" \
		    prlimit --fsize=2000 "$CONTENTION" 2 1000 2>&1 >"$WORK/out"
		echo $? >"$WORK/rc"
	} | cat >"$WORK/err"
	rc=$(cat "$WORK/rc")
	expect_program "ulimit -f"
	expect_eq "ulimit -f: the file holds what the limit allows" "$(wc -c <"$WORK/big.txt")" 2000
	expect_eq "ulimit -f: the warning" "$(head -n 1 "$WORK/err")" \
	    "mutexstat: writing MUTEXSTAT_OUTPUT '$WORK/big.txt' failed (EFBIG); the report goes to stderr"
	sed 1d "$WORK/err" >"$WORK/err.rest"
	expect_grep "ulimit -f: then the report on stderr" "$FIRST" "$WORK/err.rest"
	expect_grep "ulimit -f: the whole report" '^#2 mutex ' "$WORK/err.rest"
else
	echo "skipped: ulimit -f (no prlimit; Debian package util-linux)"
fi

# ---- stderr a pipe nobody reads: EPIPE, not SIGPIPE ------------------------

expect_eq "broken stderr, without the library" \
    "$("$RUN" --broken-stderr "$CONTENTION" 2 1000)" "$(cat "$WORK/contention.out")
exit 0"
expect_eq "broken stderr: the report fails, the program does not" \
    "$("$RUN" --broken-stderr env LD_PRELOAD="$MS_PRELOAD" "$CONTENTION" 2 1000)" \
    "$(cat "$WORK/contention.out")
exit 0"
expect_eq "broken stderr and an unwritable MUTEXSTAT_OUTPUT" \
    "$("$RUN" --broken-stderr env LD_PRELOAD="$MS_PRELOAD" \
	MUTEXSTAT_OUTPUT="$WORK/none/r.txt" "$CONTENTION" 2 1000)" \
    "$(cat "$WORK/contention.out")
exit 0"

# ---- read-only and full file systems (a tmpfs in a mount namespace) ---------

if [ "$(id -u)" -eq 0 ]; then ns="unshare -m"; else ns="unshare -rm"; fi
if $ns sh -c "mount -t tmpfs -o ro tmpfs '$WORK/m'" 2>/dev/null; then
	mkdir "$WORK/ro" "$WORK/full"
	# in_ns MOUNT-OPTIONS DIR [VAR=value...]: contention under the library
	# with DIR a fresh tmpfs mounted with MOUNT-OPTIONS; a full one is
	# filled first.
	in_ns() {
		opts=$1 dir=$2; shift 2
		rc=0
		$ns sh -c 'mount -t tmpfs -o "$1" tmpfs "$2" || exit 99
			case $1 in size=*) cat /dev/zero >"$2/fill" 2>/dev/null ;; esac
			shift 2; exec "$@"' sh "$opts" "$dir" \
		    env LD_PRELOAD="$MS_PRELOAD" "$@" "$CONTENTION" 2 1000 \
		    >"$WORK/out" 2>"$WORK/err" || rc=$?
	}
	in_ns ro "$WORK/ro" MUTEXSTAT_OUTPUT="$WORK/ro/r.txt"
	expect_refused "a read-only file system" "$WORK/ro/r.txt" EROFS

	in_ns size=16k "$WORK/full" MUTEXSTAT_OUTPUT="$WORK/full/r.txt"
	expect_program "a full file system"
	expect_eq "a full file system: the warning" "$(head -n 1 "$WORK/err")" \
	    "mutexstat: writing MUTEXSTAT_OUTPUT '$WORK/full/r.txt' failed (ENOSPC); the report goes to stderr"
	sed 1d "$WORK/err" >"$WORK/err.rest"
	expect_grep "a full file system: then the report on stderr" "$FIRST" "$WORK/err.rest"

	in_ns size=16k "$WORK/full" MUTEXSTAT_OUTPUT="$WORK/full/r" MUTEXSTAT_FORMAT=json
	expect_program "a full file system, json"
	expect_eq "a full file system, json: the one line" "$(cat "$WORK/err")" \
	    "mutexstat: writing MUTEXSTAT_OUTPUT '$WORK/full/r.json' failed (ENOSPC); the json report there is incomplete"

	# the default prefix, mutexstat.<pid>, in a read-only working directory
	# (the warnings name it from the directory the program started in)
	rc=0
	$ns sh -c 'mount -t tmpfs -o ro tmpfs "$1" && cd "$1" && echo $$ >"$2" &&
		exec env LD_PRELOAD="$3" MUTEXSTAT_FORMAT=text,json "$4" 2 1000' sh \
	    "$WORK/ro" "$WORK/pid" "$MS_PRELOAD" "$CONTENTION" \
	    >"$WORK/out" 2>"$WORK/err" || rc=$?
	pid=$(cat "$WORK/pid")
	expect_program "the default prefix in a read-only directory"
	expect_eq "the default prefix in a read-only directory: the warnings" \
	    "$(grep '^mutexstat: cannot' "$WORK/err")" \
	    "mutexstat: cannot write MUTEXSTAT_OUTPUT '$WORK/ro/mutexstat.$pid.txt' (EROFS); the report goes to stderr
mutexstat: cannot write MUTEXSTAT_OUTPUT '$WORK/ro/mutexstat.$pid.json' (EROFS); the json report is lost"
else
	echo "skipped: read-only and full file systems (cannot mount a tmpfs in a mount namespace here)"
fi

finish
