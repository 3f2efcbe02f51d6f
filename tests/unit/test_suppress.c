/* test_suppress.c - MUTEXSTAT_SUPPRESSIONS (lib/report/suppress.c): the
 * glob (anywhere, or anchored by ^ and $), the rules file (comments,
 * blanks, each bad line named, nothing applied from a bad file), and the
 * filter over a report's findings: what is left out, what each rule
 * counted, the rule each kept finding could be left out by, and the
 * failing findings taken off the exit status's count. */
#include "suites.h"

#include "base/fmt.h"
#include "base/options.h"
#include "report/suppress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int glob(const char *p, const char *t)
{
	return ms_suppress_glob(p, t, strlen(t));
}

START_TEST(test_suppress_glob_matches_anywhere_unless_anchored)
{
	ck_assert(glob("transfer", "transfer"));
	ck_assert(glob("transfer", "do_transfer_now"));
	ck_assert(glob("^transfer", "transfer_now"));
	ck_assert(!glob("^transfer", "do_transfer"));
	ck_assert(glob("transfer$", "do_transfer"));
	ck_assert(!glob("transfer$", "transfer_now"));
	ck_assert(glob("^transfer$", "transfer"));
	ck_assert(!glob("^transfer$", "transfers"));
	ck_assert(glob("examples/*.c", "examples/deadlock_abba.c"));
	ck_assert(glob("a?c", "xabcx"));
	ck_assert(!glob("a?c", "ac"));
	ck_assert(glob("*", ""));
	ck_assert(glob("(anonymous namespace)::consumer", "(anonymous namespace)::consumer(int)"));
}
END_TEST

/* ---- the rules file -------------------------------------------------- */

static char warned[8192];
static int nwarned;

static void warn(const char *msg)
{
	nwarned++;
	snprintf(warned, sizeof warned, "%s", msg);
}

static char path[64];

static void load_bytes(const char *text, size_t len)
{
	strcpy(path, "/tmp/mutexstat-supp-XXXXXX");
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, len), (int)len);
	close(fd);
	ms_opt.suppressions = path;
	nwarned = 0;
	warned[0] = 0;
	ms_suppress_load(warn);
	unlink(path);
}

static void load_text(const char *text)
{
	load_bytes(text, strlen(text));
}

static char report[16384];

static const char *said(void)
{
	struct ms_fmt f;
	ms_fmt_init(&f, report, sizeof report, -1);
	ms_suppress_print(&f);
	return ms_fmt_str(&f);
}

/* A report's findings, as findings_text.c prints them (trimmed). */
static const char *const findings =
	"\n"
	"POTENTIAL DEADLOCK: 2 mutexes taken in a cycle of orders\n"
	"  order: A -> B -> A\n"
	"  A   mutex 0x55aa \"accounts\", first locked at transfer+0x1d (examples/abba.c:60, abba)\n"
	"  thread 19471 took A, then B:\n"
	"    A   at  transfer+0x1d (examples/abba.c:60, abba)\n"
	"            alice_pays_bob+0x8d (examples/abba.c:94, abba)\n"
	"\n"
	"HELD AT THREAD EXIT: thread 22800 \"misuse\" ended holding 1 mutex\n"
	"    A   at  (anonymous namespace)::leak(int)+0x3d (src/leak.cpp:54, libleak.so)\n"
	"\n"
	"MISUSE: unlock of a mutex that is not locked: mutex 0x7ffc, 1 time\n"
	"  at  unlock_twice (examples/misuse.c:40)\n";

/* text through the rules: what is printed, and how many failing
 * findings were left out. */
static const char *filter(const char *text, int *failing_removed)
{
	static char out[16384];
	struct ms_fmt f;
	ms_fmt_init(&f, out, sizeof out, -1);
	ms_suppress_begin();
	*failing_removed = ms_suppress_filter(text, &f);
	return ms_fmt_str(&f);
}

static const char *filtered(int *failing_removed)
{
	return filter(findings, failing_removed);
}

START_TEST(test_suppress_rules_leave_out_matching_findings_only)
{
	load_text("# known ones\n"
		  "\n"
		  "potential-deadlock:^alice_pays\n"
		  "held-at-exit:libleak.so\n"
		  "stall:nothing_matches\n"
		  "misuse:^transfer$\n");
	ck_assert_int_eq(nwarned, 0);
	int removed;
	const char *out = filtered(&removed);
	ck_assert_int_eq(removed, 1); /* the potential deadlock: failing */
	ck_assert_ptr_null(strstr(out, "POTENTIAL DEADLOCK"));
	ck_assert_ptr_null(strstr(out, "HELD AT THREAD EXIT"));
	ck_assert_str_eq(out,
			 "\n"
			 "MISUSE: unlock of a mutex that is not locked: mutex 0x7ffc, 1 time\n"
			 "  at  unlock_twice (examples/misuse.c:40)\n"
			 "  to suppress it: misuse:^unlock_twice$ (a line of MUTEXSTAT_SUPPRESSIONS)\n");
	static const char head[] = "\nsuppressions from /tmp/mutexstat-supp-";
	ck_assert_int_eq(strncmp(said(), head, sizeof head - 1), 0);
}
END_TEST

/* A finding left out takes its blank line along: the last one leaves
 * no blank line behind it, all of them leave nothing, and the report's
 * next section (which begins with its own) never follows two. */
START_TEST(test_suppress_leaves_no_blank_line_of_a_finding_left_out)
{
	load_text("misuse:unlock_twice\n");
	int removed;
	const char *out = filtered(&removed);
	ck_assert_int_eq(removed, 0); /* misuse does not fail a run */
	ck_assert_ptr_null(strstr(out, "\n\n\n"));
	size_t len = strlen(out);
	ck_assert_uint_gt(len, 2);
	ck_assert_msg(out[len - 1] == '\n' && out[len - 2] != '\n',
		      "ends in a blank line: ...%s", out + len - 40);
	ck_assert_ptr_nonnull(strstr(out, "HELD AT THREAD EXIT"));

	load_text("potential-deadlock:abba\nheld-at-exit:leak\nmisuse:unlock_twice\n");
	out = filtered(&removed);
	ck_assert_int_eq(removed, 1);
	ck_assert_str_eq(out, "");

	load_text("held-at-exit:leak\n"); /* the middle one */
	out = filtered(&removed);
	ck_assert_ptr_nonnull(strstr(out, "abba)\n  to suppress it: "));
	ck_assert_ptr_nonnull(strstr(out, "(a line of MUTEXSTAT_SUPPRESSIONS)\n\nMISUSE: "));
	ck_assert_ptr_null(strstr(out, "\n\n\n"));
}
END_TEST

START_TEST(test_suppress_report_counts_each_rule_and_names_the_idle_ones)
{
	load_text("potential-deadlock:^alice_pays\n"
		  "held-at-exit:leak.cpp\n"
		  "stall:nothing_matches\n");
	int removed;
	(void)filtered(&removed);
	char want[512];
	snprintf(want, sizeof want,
		 "\nsuppressions from %s: 2 findings left out\n"
		 "  line 1    potential-deadlock:^alice_pays  1\n"
		 "  line 2    held-at-exit:leak.cpp  1\n"
		 "  line 3    stall:nothing_matches  matched nothing\n",
		 path);
	ck_assert_str_eq(said(), want);
}
END_TEST

START_TEST(test_suppress_matches_lock_names_files_and_modules)
{
	int removed;
	load_text("potential-deadlock:accounts\n"); /* a lock's name */
	ck_assert_ptr_null(strstr(filtered(&removed), "POTENTIAL"));
	load_text("potential-deadlock:examples/abba.c\n"); /* a file */
	ck_assert_ptr_null(strstr(filtered(&removed), "POTENTIAL"));
	load_text("potential-deadlock:^abba$\n"); /* a module */
	ck_assert_ptr_null(strstr(filtered(&removed), "POTENTIAL"));
	load_text("potential-deadlock:orders\n"); /* prose is not matched */
	ck_assert_ptr_nonnull(strstr(filtered(&removed), "POTENTIAL"));
	load_text("self-deadlock:transfer\n"); /* another kind */
	ck_assert_ptr_nonnull(strstr(filtered(&removed), "POTENTIAL"));
	ck_assert_int_eq(removed, 0);
}
END_TEST

START_TEST(test_suppress_each_kept_finding_says_its_rule)
{
	load_text("# nothing\n");
	int removed;
	const char *out = filtered(&removed);
	ck_assert_ptr_nonnull(strstr(out, "            alice_pays_bob+0x8d (examples/abba.c:94, abba)\n"
					  "  to suppress it: potential-deadlock:^transfer$ "
					  "(a line of MUTEXSTAT_SUPPRESSIONS)\n\nHELD AT"));
	ck_assert_ptr_nonnull(strstr(out, "  to suppress it: held-at-exit:^(anonymous namespace)::leak(int)$ "));
}
END_TEST

/* A bad file: one message naming the line, and no rule of it applies. */
static void bad(const char *text, const char *why)
{
	load_text(text);
	ck_assert_int_eq(nwarned, 1);
	ck_assert_msg(strstr(warned, why) != NULL, "warning '%s' lacks '%s'", warned, why);
	ck_assert_ptr_nonnull(strstr(warned, "; no rule of it applies\n"));
	int removed;
	ck_assert_ptr_nonnull(strstr(filtered(&removed), "POTENTIAL DEADLOCK"));
	/* the report: the reason on the line after "none applied" */
	ck_assert_ptr_nonnull(strstr(said(), ": none applied\n  "));
	ck_assert_ptr_nonnull(strstr(said(), why));
}

START_TEST(test_suppress_bad_files_apply_nothing_and_say_why)
{
	bad("potential-deadlock:transfer\ndeadlok:x\n", "line 2: not a kind of finding: 'deadlok'");
	/* the kinds on a line of their own, after the warning and the reason */
	const char *kinds = "\n  (the kinds: deadlock, potential-deadlock, guarded-inversion, "
			    "self-deadlock, held-at-exit, owner-died, misuse, stall)\n";
	ck_assert_ptr_nonnull(strstr(warned, kinds));
	ck_assert_ptr_nonnull(strstr(said(), kinds));
	bad("potential-deadlock:transfer\njust words\n", "line 2: not KIND:PATTERN: 'just words'");
	ck_assert_ptr_null(strstr(said(), "(the kinds:"));
	bad("stall:   \n", "line 1: an empty pattern after 'stall'");
	char big[6000];
	memset(big, 'x', sizeof big - 2);
	memcpy(big, "stall:", 6);
	big[sizeof big - 2] = '\n';
	big[sizeof big - 1] = 0;
	bad(big, "line 1: longer than 4096 bytes");
	load_bytes("stall:a\0b\n", 10);
	ck_assert_ptr_nonnull(strstr(warned, "line 1: a NUL byte: not a text file"));

	ms_opt.suppressions = "/nonexistent/mutexstat-rules";
	nwarned = 0;
	ms_suppress_load(warn);
	ck_assert_ptr_nonnull(strstr(warned, "cannot open it: ENOENT"));
	ms_opt.suppressions = "/tmp";
	ms_suppress_load(warn);
	ck_assert_ptr_nonnull(strstr(warned, "'/tmp': it is a directory; no rule of it applies"));
	ck_assert_int_eq(nwarned, 2);
}
END_TEST

/* A live dump's findings: a DEADLOCK, the WAIT CHAIN after it (a section
 * of its own, no finding: never left out, never matched for the one
 * before), and a finding whose stack is a note, not a frame. */
static const char *const live =
	"\n"
	"DEADLOCK: 2 threads wait for each other\n"
	"  thread 101 \"a\" waits for mutex 0x10 held by thread 102\n"
	"    waits at      take_pair+0x1d (pair.c:20, pair)\n"
	"\n"
	"WAIT CHAIN:\n"
	"  thread 103 \"c\" waits for mutex 0x30 held by thread 104\n"
	"    waits at      drain_queue+0x2a (queue.c:88, queue)\n"
	"  thread 104 is not waiting for a mutex; where it is now: not asked (off)\n"
	"\n"
	"HELD AT THREAD EXIT: thread 105 ended holding 1 mutex\n"
	"    A   at  (stack not captured)\n"
	"    (stack not captured)\n";

START_TEST(test_suppress_wait_chains_and_notes_are_not_frames)
{
	int removed;
	/* a frame of the chain after a deadlock is not the deadlock's */
	load_text("deadlock:drain_queue\n");
	const char *out = filter(live, &removed);
	ck_assert_int_eq(removed, 0);
	ck_assert_ptr_nonnull(strstr(out, "DEADLOCK: 2 threads"));
	/* the deadlock left out, the chain stays, as it was */
	load_text("deadlock:take_pair\n");
	out = filter(live, &removed);
	ck_assert_int_eq(removed, 1);
	ck_assert_ptr_null(strstr(out, "DEADLOCK: "));
	ck_assert_ptr_nonnull(strstr(out, "\nWAIT CHAIN:\n"
					  "  thread 103 \"c\" waits for mutex 0x30 held by thread 104\n"
					  "    waits at      drain_queue+0x2a (queue.c:88, queue)\n"
					  "  thread 104 is not waiting for a mutex; where it is now: "
					  "not asked (off)\n\nHELD AT"));
	ck_assert_ptr_null(strstr(out, "\n\n\n"));
	/* a note is no frame: nothing matches it, nothing is suggested by it */
	load_text("held-at-exit:stack not captured\n");
	out = filter(live, &removed);
	ck_assert_ptr_nonnull(strstr(out, "HELD AT THREAD EXIT"));
	ck_assert_ptr_null(strstr(out, "held-at-exit:stack"));
	ck_assert_ptr_null(strstr(out, "held-at-exit:(stack"));
	ck_assert_ptr_nonnull(strstr(said(), "held-at-exit:stack not captured  matched nothing"));
	/* the chain says no rule of its own */
	ck_assert_ptr_null(strstr(out, "to suppress it: deadlock:drain_queue"));
}
END_TEST

/* A cycle of one thread's orders: its heading ends in a parenthesised
 * note, which is words, not a frame -- the rule suggested is its first
 * function, and the heading matches no rule. */
static const char *const one_thread =
	"\nPOTENTIAL DEADLOCK: 2 mutexes taken in a cycle of orders (all by one thread: "
	"two threads doing the same would deadlock)\n"
	"  order: A -> B -> A\n"
	"  thread 10844 \"onethread\" took A, then B:\n"
	"    A   at  ab+0x13 (dl/onethread.c:4, onethread)\n"
	"    B   at  ab+0x22 (dl/onethread.c:4, onethread)\n"
	"  thread 10844 \"onethread\" took B, then A:\n"
	"    B   at  ba+0x13 (dl/onethread.c:5, onethread)\n"
	"    A   at  ba+0x22 (dl/onethread.c:5, onethread)\n";

START_TEST(test_suppress_a_heading_note_is_not_a_frame)
{
	int removed;
	load_text("# nothing\n");
	const char *out = filter(one_thread, &removed);
	ck_assert_ptr_nonnull(strstr(out, "  to suppress it: potential-deadlock:^ab$ "
					  "(a line of MUTEXSTAT_SUPPRESSIONS)\n"));
	load_text("potential-deadlock:*cycle of orders*\n");
	out = filter(one_thread, &removed);
	ck_assert_int_eq(removed, 0);
	ck_assert_ptr_nonnull(strstr(out, "POTENTIAL DEADLOCK: 2 mutexes"));
	load_text("potential-deadlock:ba\n");
	out = filter(one_thread, &removed);
	ck_assert_int_eq(removed, 1);
}
END_TEST

/* The rule a finding suggests is anchored, names no frame every stack
 * has, and no word another finding of the report has, where it can: one
 * that named the helper two inversions share, or a std::thread's
 * trampoline, left both out. */
static const char *const through_helper =
	"\nPOTENTIAL DEADLOCK: 2 mutexes taken in a cycle of orders\n"
	"  order: A -> B -> A\n"
	"  thread 11 took A, then B:\n"
	"    A   at  lock_pair+0x13 (t/h.c:4, h)\n"
	"    B   at  lock_pair+0x22 (t/h.c:5, h)\n"
	"            pair_ab+0x10 (t/h.c:10, h)\n"
	"            start_thread+0x1 (./nptl/pthread_create.c:442, libc.so.6)\n"
	"\nPOTENTIAL DEADLOCK: 2 mutexes taken in a cycle of orders\n"
	"  order: C -> D -> C\n"
	"  thread 12 took C, then D:\n"
	"    C   at  lock_pair+0x13 (t/h.c:4, h)\n"
	"    D   at  lock_pair+0x22 (t/h.c:5, h)\n"
	"            pair_cd+0x10 (t/h.c:20, h)\n"
	"            start_thread+0x1 (./nptl/pthread_create.c:442, libc.so.6)\n"
	"\nMISUSE: unlock of a mutex that is not locked: mutex 0x7ffc, 1 time\n"
	"  at  std::thread::_State_impl<...>::_M_run()+0x15 (t/h.cpp:7, h)\n"
	"      libstdc++.so.6+0xd44a3\n"
	"      start_thread+0x1 (./nptl/pthread_create.c:442, libc.so.6)\n"
	"\nMISUSE: unlock of a mutex that is not locked: mutex 0x7ffd, 1 time\n"
	"  at  main+0x15 (t/h.c:30, h)\n"
	"\nHELD AT THREAD EXIT: thread 13 ended holding 1 mutex\n"
	"  mutex 0x7ffe taken at  ..d_for_the_duration(...)+0x8 (t/h.cpp:11, h)\n"
	"\nHELD AT THREAD EXIT: thread 14 ended holding 1 mutex\n"
	"  mutex 0x7fff taken at  ns::put<...>(...)+0x8 (t/h.cpp:12, h)\n"
	"\nHELD AT THREAD EXIT: thread 15 ended holding 1 mutex\n"
	"  mutex 0x7ffd taken at  ....)::{lambda()#1}+0x8 (t/h.cpp:13, h)\n"
	"\nSELF-DEADLOCK: mutex 0x7ff0 relocked by its holder\n"
	"  at  relock+0x8 (t/h.c:40, h)\n"
	"\nSELF-DEADLOCK: mutex 0x7ff1 relocked by its holder\n"
	"  at  relock+0x8 (t/h.c:40, h)\n";

/* Built with -O0, every std::mutex lock has the standard library's frames
 * first: a rule naming one left out every std::mutex inversion. */
static const char *const unoptimised_cxx =
	"\nPOTENTIAL DEADLOCK: 2 mutexes taken in a cycle of orders\n"
	"  order: E -> F -> E\n"
	"  thread 15 took E, then F:\n"
	"    E   at  __gthread_mutex_lock(pthread_mutex_t*)+0x26 (bits/gthr-default.h:749, h)\n"
	"    F   at  __gthread_mutex_lock(pthread_mutex_t*)+0x26 (bits/gthr-default.h:749, h)\n"
	"            std::mutex::lock()+0x18 (bits/std_mutex.h:100, h)\n"
	"            bool std::__lock_one<...>(...)+0x8 (bits/x.h:1, h)\n"
	"            transfer(Account&, Account&)+0x35 (t/h.cpp:50, h)\n";

START_TEST(test_suppress_suggests_an_anchored_rule_of_this_finding_alone)
{
	int removed;
	load_text("# nothing\n");
	const char *out = filter(through_helper, &removed);
	ck_assert_ptr_nonnull(strstr(out, "  to suppress it: potential-deadlock:^pair_ab$ "
					  "(a line of MUTEXSTAT_SUPPRESSIONS)\n"));
	ck_assert_ptr_nonnull(strstr(out, "  to suppress it: potential-deadlock:^pair_cd$ "
					  "(a line of MUTEXSTAT_SUPPRESSIONS)\n"));
	/* nothing but a trampoline and main: main, the program's */
	ck_assert_ptr_nonnull(strstr(out, "  to suppress it: misuse:^main$ "
					  "(a line of MUTEXSTAT_SUPPRESSIONS)\n"));
	ck_assert_ptr_null(strstr(out, "misuse:^std::thread"));
	ck_assert_ptr_null(strstr(out, "start_thread$"));
	/* nor the standard library's (-O0: every std::mutex lock's frames),
	 * a return type before it or not */
	out = filter(unoptimised_cxx, &removed);
	ck_assert_ptr_nonnull(strstr(out, "  to suppress it: potential-deadlock:^transfer(Account&, "
					  "Account&)$ "));
	out = filter(through_helper, &removed);
	/* what a name made to fit lost matches anything */
	ck_assert_ptr_nonnull(strstr(out, "  to suppress it: held-at-exit:^*d_for_the_duration(*)$ "));
	ck_assert_ptr_nonnull(strstr(out, "  to suppress it: held-at-exit:^ns::put<*>(*)$ "));
	/* a cut inside a "(...)": its dots, however many, one "*" */
	ck_assert_ptr_nonnull(strstr(out, "  to suppress it: held-at-exit:^*)::{lambda()#1}$ "));
	ck_assert_int_eq(ms_suppress_glob("^*)::{lambda()#1}$", "ns::run(int, long)::{lambda()#1}",
					  strlen("ns::run(int, long)::{lambda()#1}")), 1);
	/* two findings of one word: the rule says what else it leaves out */
	ck_assert_ptr_nonnull(strstr(out, "  to suppress it: self-deadlock:^relock$ "
					  "(a line of MUTEXSTAT_SUPPRESSIONS; it leaves out 1 other "
					  "finding here too)\n"));
	/* and each rule suggested does what it says */
	load_text("potential-deadlock:^pair_ab$\n");
	out = filter(through_helper, &removed);
	ck_assert_int_eq(removed, 1);
	ck_assert_ptr_null(strstr(out, "pair_ab"));
	ck_assert_ptr_nonnull(strstr(out, "pair_cd"));
	load_text("held-at-exit:^ns::put<*>(*)$\n");
	ck_assert_ptr_null(strstr(filter(through_helper, &removed), "ns::put"));
	ck_assert_ptr_nonnull(strstr(filter(through_helper, &removed), "d_for_the_duration"));
	ck_assert_int_eq(ms_suppress_glob("^ns::put<*>(*)$", "ns::put<std::map<int, int> >(int)",
					  strlen("ns::put<std::map<int, int> >(int)")), 1);
}
END_TEST

/* Locks as the report names them: address, variable, name (kinds.h). */
static const char *const with_variables =
	"\n"
	"POTENTIAL DEADLOCK: 2 mutexes taken in a cycle of orders\n"
	"  order: A -> B -> A\n"
	"  A   mutex 0x55aa <accounts+0x68> \"ledger\", first locked at "
	"deposit+0x1d (bank.c:60, bank)\n"
	"  B   mutex 0x55ab <store<int>::registry_mu>, first locked at "
	"transfer+0x2d (bank.c:61, bank)\n"
	"\n"
	"STALL: 1 thread blocked\n"
	"  thread 7 \"w\" waits for condition 0x55ac <ready_cv> "
	"(mutex 0x55ad <cache_lock> \"cache\"), for 5.00 s\n"
	"\n"
	"SELF-DEADLOCK: thread 7 locks a mutex it already holds: it waits for itself, forever\n"
	"  mutex 0x55ae <a_table_of_locks_with_a_very_long_nam...>\n"
	"  taken at     relock+0x10 (t.c:5, t)\n"
	"  relocked at  relock+0x20 (t.c:6, t)\n"
	"\n"
	"SELF-DEADLOCK: thread 8 locks a mutex it already holds: it waits for itself, forever\n"
	"  mutex 0x55af <queue_lock> \"queue\"\n"
	"  taken at     relock+0x10 (t.c:5, t)\n"
	"  relocked at  relock+0x20 (t.c:6, t)\n";

/* Whether rule leaves out the finding of with_variables whose heading
 * begins with `heading`, and no other. */
static int leaves_out_alone(const char *rule, const char *heading)
{
	static const char *const headings[] = { "POTENTIAL", "STALL", "SELF-DEADLOCK: thread 7",
						"SELF-DEADLOCK: thread 8" };
	int removed, kept = 0;
	load_text(rule);
	const char *out = filter(with_variables, &removed);
	for (size_t i = 0; i < sizeof headings / sizeof headings[0]; i++)
		kept += strstr(out, headings[i]) != NULL;
	return !strstr(out, heading) && kept == 3;
}

/* A rule matches a lock's variable as printed, without its angle
 * brackets, and the lock's name after it still. */
START_TEST(test_suppress_matches_lock_variables)
{
	ck_assert(leaves_out_alone("potential-deadlock:^accounts\n", "POTENTIAL"));
	ck_assert(leaves_out_alone("potential-deadlock:^accounts+0x68$\n", "POTENTIAL"));
	ck_assert(leaves_out_alone("potential-deadlock:^ledger$\n", "POTENTIAL"));
	ck_assert(leaves_out_alone("potential-deadlock:^store<int>::registry_mu$\n", "POTENTIAL"));
	/* five words on a line: the frame's are matched too */
	ck_assert(leaves_out_alone("potential-deadlock:^deposit$\n", "POTENTIAL"));
	ck_assert(!leaves_out_alone("potential-deadlock:^account$\n", "POTENTIAL"));
	ck_assert(!leaves_out_alone("potential-deadlock:^<accounts\n", "POTENTIAL"));
	/* a condition's, its mutex's, the mutex's name */
	ck_assert(leaves_out_alone("stall:^ready_cv$\n", "STALL"));
	ck_assert(leaves_out_alone("stall:^cache_lock$\n", "STALL"));
	ck_assert(leaves_out_alone("stall:^cache$\n", "STALL"));
	ck_assert(!leaves_out_alone("stall:^cache_lock>\n", "STALL"));
	/* one cut to fit its column */
	ck_assert(leaves_out_alone("self-deadlock:^a_table_of_locks\n", "SELF-DEADLOCK: thread 7"));
	ck_assert(leaves_out_alone("self-deadlock:^queue\n", "SELF-DEADLOCK: thread 8"));
}
END_TEST

/* A function that sets a finding apart is named; where none does, a
 * variable of its locks that does, cut or not. */
START_TEST(test_suppress_suggests_a_variable_where_no_function_is_its_own)
{
	int removed;
	load_text("# nothing\n");
	const char *out = filter(with_variables, &removed);
	ck_assert_ptr_nonnull(strstr(out, "  to suppress it: potential-deadlock:^deposit$ "
					  "(a line of MUTEXSTAT_SUPPRESSIONS)\n"));
	ck_assert_ptr_nonnull(strstr(out, "  to suppress it: stall:^cache$ "
					  "(a line of MUTEXSTAT_SUPPRESSIONS)\n"));
	ck_assert_ptr_nonnull(strstr(out, "  to suppress it: self-deadlock:"
					  "^a_table_of_locks_with_a_very_long_nam*$ "
					  "(a line of MUTEXSTAT_SUPPRESSIONS)\n"));
	/* a lock's name is named before its variable, as before */
	ck_assert_ptr_nonnull(strstr(out, "  to suppress it: self-deadlock:^queue$ "
					  "(a line of MUTEXSTAT_SUPPRESSIONS)\n"));
	ck_assert_ptr_null(strstr(out, "here too"));
	ck_assert(leaves_out_alone("self-deadlock:^a_table_of_locks_with_a_very_long_nam*$\n",
				   "SELF-DEADLOCK: thread 7"));
}
END_TEST

/* A finding's code, for the run's summary: the functions its lines name,
 * each once, in order of name -- not the heading's note, not a module without a
 * function, not a wait's words -- cut with "..." where they do not fit. */
START_TEST(test_suppress_finding_code_names_each_function_once)
{
	const char *f = strstr(through_helper, "  order: A");
	const char *end = strstr(f, "\nPOTENTIAL");
	char out[160];
	size_t n = ms_suppress_finding_code(f, (size_t)(end - f), out, sizeof out);
	ck_assert_str_eq(out, "lock_pair, pair_ab, start_thread");
	ck_assert_uint_eq(n, strlen(out));
	f = strstr(through_helper, "\nMISUSE");
	n = ms_suppress_finding_code(f, strlen(f), out, sizeof out);
	ck_assert_str_eq(out, "....)::{lambda()#1}, ..d_for_the_duration(...), main, ns::put<...>(...), "
			      "relock, start_thread, std::thread::_State_impl<...>::_M_run()");
	/* cut: each name whole or "...", within the room given, 0 ended */
	n = ms_suppress_finding_code(f, strlen(f), out, 50);
	ck_assert_str_eq(out, "....)::{lambda()#1}, ...");
	ck_assert_uint_lt(n, 50);
	n = ms_suppress_finding_code(f, strlen(f), out, 20);
	ck_assert_str_eq(out, "...");
	/* the same names in another order: the same code */
	const char *ba = "  thread 2 took B, then A:\n    B   at  pay_ba+0x1 (t.c:2, t)\n"
			 "  thread 1 took A, then B:\n    A   at  pay_ab+0x1 (t.c:1, t)\n";
	ms_suppress_finding_code(ba, strlen(ba), out, sizeof out);
	ck_assert_str_eq(out, "pay_ab, pay_ba");
	/* no frame with a function: nothing */
	const char *none = "  order: A -> B -> A\n  at  (stack not captured)\n"
			   "      libstdc++.so.6+0xd44a3\n";
	ck_assert_uint_eq(ms_suppress_finding_code(none, strlen(none), out, sizeof out), 0);
	ck_assert_str_eq(out, "");
}
END_TEST


/* A * or ? of a name is a ? in its rule (the rules have no escape), and
 * a function without one is preferred; a finding another rule leaves out
 * is no finding the rule would leave out too; past 64 findings of a kind
 * the rule is not checked against the others, and says so (a report of
 * 10,000 MISUSEs spent 29 s at exit checking them). */
static const char *const globby =
	"\nSELF-DEADLOCK: mutex 0x7ff0 relocked by its holder\n"
	"  at  Matrix::operator*(Matrix const&)+0x8 (t/m.cpp:4, m)\n"
	"      multiply_all+0x10 (t/m.cpp:9, m)\n"
	"\nSELF-DEADLOCK: mutex 0x7ff1 relocked by its holder\n"
	"  at  Vec::operator*(Vec const&)+0x8 (t/m.cpp:14, m)\n"
	"\nMISUSE: unlock of a mutex that is not locked: mutex 0x7ff2 \"quiet\", 1 time\n"
	"  at  unlock_twice (t/m.c:40)\n"
	"\nMISUSE: unlock of a mutex that is not locked: mutex 0x7ff3, 1 time\n"
	"  at  unlock_twice (t/m.c:40)\n";

START_TEST(test_suppress_suggestion_globs_suppressed_and_many)
{
	int removed;
	load_text("misuse:quiet\n");
	const char *out = filter(globby, &removed);
	ck_assert_ptr_nonnull(strstr(out, "  to suppress it: self-deadlock:^multiply_all$ "
					  "(a line of MUTEXSTAT_SUPPRESSIONS)\n"));
	ck_assert_ptr_nonnull(strstr(out, "  to suppress it: self-deadlock:^Vec::operator?(Vec const&)$ "
					  "(a line of MUTEXSTAT_SUPPRESSIONS)\n"));
	/* the other unlock_twice is left out by "quiet": no note */
	ck_assert_ptr_nonnull(strstr(out, "  to suppress it: misuse:^unlock_twice$ "
					  "(a line of MUTEXSTAT_SUPPRESSIONS)\n"));
	ck_assert_ptr_null(strstr(out, "other finding"));
	/* the ? matches the * itself */
	load_text("self-deadlock:^Vec::operator?(Vec const&)$\n");
	ck_assert_ptr_null(strstr(filter(globby, &removed), "Vec::"));
	/* 70 findings of one kind, all of one function: not checked */
	static char many[16384];
	struct ms_fmt mf;
	ms_fmt_init(&mf, many, sizeof many, -1);
	for (int i = 0; i < 70; i++)
		ms_fmt(&mf, "\nMISUSE: unlock of a mutex that is not locked: mutex 0x%x, 1 time\n"
			    "  at  unlock_twice (t/m.c:40)\n", 0x1000 + i);
	load_text("# nothing\n");
	out = filter(ms_fmt_str(&mf), &removed);
	ck_assert_ptr_null(strstr(out, "other finding"));
	const char *p = out;
	int n = 0, said = 0;
	while ((p = strstr(p, "to suppress it: misuse:^unlock_twice$")) != NULL)
		n++, p++;
	ck_assert_int_eq(n, 70);
	/* each says it was not checked */
	for (p = out; (p = strstr(p, "; not checked against the 69 others of its kind)\n")) != NULL; p++)
		said++;
	ck_assert_int_eq(said, 70);
}
END_TEST

START_TEST(test_suppress_without_a_file_keeps_all_and_says_nothing)
{
	ms_opt.suppressions = NULL;
	ms_suppress_load(warn);
	int removed;
	const char *out = filtered(&removed);
	ck_assert_int_eq(removed, 0);
	ck_assert_ptr_nonnull(strstr(out, "POTENTIAL DEADLOCK"));
	ck_assert_ptr_nonnull(strstr(out, "HELD AT THREAD EXIT"));
	ck_assert_str_eq(said(), "");
}
END_TEST

Suite *suppress_suite(void)
{
	Suite *s = suite_create("suppress");
	TCase *tc = tcase_create("suppress");
	tcase_add_test(tc, test_suppress_glob_matches_anywhere_unless_anchored);
	tcase_add_test(tc, test_suppress_rules_leave_out_matching_findings_only);
	tcase_add_test(tc, test_suppress_leaves_no_blank_line_of_a_finding_left_out);
	tcase_add_test(tc, test_suppress_report_counts_each_rule_and_names_the_idle_ones);
	tcase_add_test(tc, test_suppress_matches_lock_names_files_and_modules);
	tcase_add_test(tc, test_suppress_each_kept_finding_says_its_rule);
	tcase_add_test(tc, test_suppress_bad_files_apply_nothing_and_say_why);
	tcase_add_test(tc, test_suppress_without_a_file_keeps_all_and_says_nothing);
	tcase_add_test(tc, test_suppress_wait_chains_and_notes_are_not_frames);
	tcase_add_test(tc, test_suppress_a_heading_note_is_not_a_frame);
	tcase_add_test(tc, test_suppress_suggests_an_anchored_rule_of_this_finding_alone);
	tcase_add_test(tc, test_suppress_finding_code_names_each_function_once);
	tcase_add_test(tc, test_suppress_suggestion_globs_suppressed_and_many);
	tcase_add_test(tc, test_suppress_matches_lock_variables);
	tcase_add_test(tc, test_suppress_suggests_a_variable_where_no_function_is_its_own);
	suite_add_tcase(s, tc);
	return s;
}
