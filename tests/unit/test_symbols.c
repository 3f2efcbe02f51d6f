/* test_symbols.c - cutting a named code address to a report's column
 * (ms_symbol_fit, lib/stacks/symbols.c): the source line is what stays longest. */
#include "suites.h"

#include "stacks/symbols.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static char buf[1024];

static const char *fit(const char *s, size_t cols)
{
	strcpy(buf, s);
	return ms_symbol_fit(buf, cols);
}

#define LONG_FORM "transfer+0x2d (examples/deadlock_abba.c:61, deadlock_abba)"

START_TEST(test_symbol_fit_leaves_what_fits)
{
	ck_assert_str_eq(fit(LONG_FORM, 60), LONG_FORM);
	ck_assert_str_eq(fit("worker (contention.c:33)", 24), "worker (contention.c:33)");
}
END_TEST

START_TEST(test_symbol_fit_drops_module_offset_directory_parentheses_in_turn)
{
	ck_assert_str_eq(fit(LONG_FORM, 50), "transfer+0x2d (examples/deadlock_abba.c:61)");
	ck_assert_str_eq(fit(LONG_FORM, 43), "transfer+0x2d (examples/deadlock_abba.c:61)");
	ck_assert_str_eq(fit(LONG_FORM, 42), "transfer (examples/deadlock_abba.c:61)");
	ck_assert_str_eq(fit(LONG_FORM, 37), "transfer (deadlock_abba.c:61)");
	ck_assert_str_eq(fit(LONG_FORM, 28), "transfer deadlock_abba.c:61");
	ck_assert_str_eq(fit("churn_twice (scale.c:123)", 24), "churn_twice scale.c:123");
	/* without a line, the offset is the way to the code: it stays */
	ck_assert_str_eq(fit("helper+0x2a (libfoo.so.1)", 24), "helper+0x2a libfoo.so.1");
}
END_TEST

START_TEST(test_symbol_fit_cuts_the_function_to_its_end)
{
	/* ".." and at least the function's last 8 characters */
	ck_assert_str_eq(fit("bob_pays_alice+0x8d (examples/deadlock_abba.c:107, deadlock_abba)", 30),
			 "..ys_alice deadlock_abba.c:107");
	ck_assert_str_eq(fit("(anonymous namespace)::consumer(int)+0x177 (examples/cxx_mutex.cpp:63, "
			     "cxx_mutex)", 32),
			 "..consumer(int) cxx_mutex.cpp:63");
}
END_TEST

/* A C++ name too long for its column loses whole scopes, its outer ones
 * first, after the argument lists of the functions it is inside, and keeps
 * its last two: cut from the start, a lambda read "..)#1}::operator()()
 * const", which named neither its function nor its class. */
START_TEST(test_symbol_fit_drops_outer_scopes_whole)
{
	static const char lambda[] = "storage::engine::Pool<...>::run_workers(int, long)::{lambda()#1}+0x104 "
				     "(src/lam.cpp:17, lam)";
	ck_assert_str_eq(fit(lambda, 75),
			 "storage::engine::Pool<...>::run_workers(int, long)::{lambda()#1} lam.cpp:17");
	/* the outer function's arguments first: "(...)", a "*" in a rule */
	ck_assert_str_eq(fit(lambda, 74), "storage::engine::Pool<...>::run_workers(...)::{lambda()#1} lam.cpp:17");
	/* then its namespaces */
	ck_assert_str_eq(fit(lambda, 62), "..engine::Pool<...>::run_workers(...)::{lambda()#1} lam.cpp:17");
	ck_assert_str_eq(fit(lambda, 54), "..Pool<...>::run_workers(...)::{lambda()#1} lam.cpp:17");
	ck_assert_str_eq(fit(lambda, 43), "..run_workers(...)::{lambda()#1} lam.cpp:17");
	/* the last two scopes, then cut as before */
	ck_assert_str_eq(fit(lambda, 36), "..kers(...)::{lambda()#1} lam.cpp:17");
	/* what std::thread runs keeps the words before it */
	ck_assert_str_eq(fit("std::thread running storage::engine::Pool<...>::run(...)::{lambda()#1} "
			     "(bits/std_thread.h:210)", 72),
			 "std::thread running ..Pool<...>::run(...)::{lambda()#1} std_thread.h:210");
	/* "(anonymous namespace)" is a scope, not an argument list */
	ck_assert_str_eq(fit("a::(anonymous namespace)::b::consumer(int) (x.cpp:6)", 36),
			 "..b::consumer(int) x.cpp:6");
	/* its own argument list goes before its scopes do; an operator<
	 * is no bracket */
	ck_assert_str_eq(fit("ns::Cls::Inner::operator<(ns::Cls const&) (x.cpp:5)", 39),
			 "ns::Cls::Inner::operator<(...) x.cpp:5");
	ck_assert_str_eq(fit("ns::Cls::Inner::operator<(ns::Cls const&) (x.cpp:5)", 31),
			 "..Inner::operator<(...) x.cpp:5");
	/* brackets that do not pair up: cut as before */
	ck_assert_str_eq(fit("ns::Cls::Inner::f<(ns::Cls const&) (x.cpp:5)", 30),
			 "..::f<(ns::Cls const&) x.cpp:5");
}
END_TEST

/* Names a build or a hostile symbol table may hold: each fits its columns,
 * never read or written outside the name (the sanitized build checks).
 * A name starting with "::" read the byte before it; a scope whose
 * parentheses do not pair within it cut into the scope before it, and the
 * offset after the name was cut short. */
START_TEST(test_symbol_fit_odd_names_stay_inside)
{
	static const char *const odd[] = {
		"::a::b::c::d(int) (x.cpp:6)",
		"::(x)::y(int, long)::z (x.cpp:6)",
		"a(::b)::c(int)::d(long, long) (x.cpp:6)",
		"<<{(>>(><{}::operatt>>((>)t)::<<)}{<<{}>>)::(() )t+0x10 (m)",
		"Foo::(anonymous namespace)(::operator()<operator->*<(char)60, operator<<::{lambda()#1}>"
		"::x<::operator->*()::a::x(int) const>::operator->*(int, a(int, int))::operator<<<(char)60, "
		"operator>::operator>>)::operator>::{lambda()#1}(int, x::operator()::{lambda()#1})+0x10 (mod)",
		"a::)::b(::c::d+0x10 (mod)",
		"::+0x10 (mod)",
		":: (x.cpp:1)",
	};
	for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++)
		for (size_t cols = 12; cols <= 64; cols += 4) {
			const char *got = fit(odd[i], cols);
			ck_assert_msg(strlen(got) <= cols,
				      "'%s' in %zu: '%s'", odd[i], cols, got);
		}
	/* more than 32 scopes: the last two kept whole */
	char many[1024] = "";
	for (int i = 0; i < 40; i++) {
		char scope[32];
		snprintf(scope, sizeof scope, "s%d(int, long)::", i);
		strcat(many, scope);
	}
	strcat(many, "g(int, long) (x.cpp:3)");
	ck_assert_str_eq(fit(many, 40), "..s39(int, long)::g(...) x.cpp:3");
}
END_TEST

/* A C++ function with no source line (a stripped library): its argument
 * list goes before its name does.  It was cut from the start, and
 * "..(unsigned long, unsigned long)+0x20" named no function. */
START_TEST(test_symbol_fit_drops_arguments_before_the_name)
{
	ck_assert_str_eq(fit("Rings::setCapacity(unsigned long, unsigned long)+0x20 (f)", 32),
			 "Rings::setCapacity(...)+0x20");
	ck_assert_str_eq(fit("Rings::setCapacity(unsigned long, unsigned long)+0x20 (f)", 26),
			 "Rings::setCapacity+0x20");
	ck_assert_str_eq(fit("rocksdb::WriteThread::SetState(rocksdb::WriteThread::Writer*, "
			     "unsigned char)+0x1cc (librocksdb.so.7.8)", 34),
			 "..WriteThread::SetState+0x1cc");
	/* nested lists count as one */
	ck_assert_str_eq(fit("ns::call(void (*)(int), long)+0x9 (m)", 17), "ns::call(...)+0x9");
}
END_TEST

/* A frame's name of the full 159 bytes a frame holds, shortened again for
 * a line (ms_frame_format): its "(...)" stays whole.  It was cut in a
 * buffer of the frame's size to "..._duration(", and every column then
 * cut from that. */
START_TEST(test_symbol_fit_keeps_brackets_paired)
{
	struct ms_frame fr;
	memset(&fr, 0, sizeof fr);
	static const char name[] =
		"..cy::detail::ShardedLockTableImplementationForUnitTestingOfTheMutex"
		"Profiler<...>::insert_value_into_shard_with_exclusive_lock_held_for_the_"
		"whole_duration(...)";
	ck_assert_uint_eq(strlen(name), sizeof fr.func - 1);
	memcpy(fr.func, name, sizeof name);
	fr.offset = 0x1d;
	strcpy(fr.file, "/src/longname.cpp");
	fr.line = 11;
	strcpy(fr.module, "longname");
	char out[512];
	const char *line = ms_frame_format(&fr, 0x1234, out, sizeof out);
	size_t n = strlen(line);
	static const char end[] = "_whole_duration(...)+0x1d (src/longname.cpp:11, longname)";
	ck_assert_uint_ge(n, sizeof end - 1);
	ck_assert_str_eq(line + n - (sizeof end - 1), end);
	/* and a column cut from it keeps it too */
	strcpy(buf, line);
	ck_assert_str_eq(ms_symbol_fit(buf, 37), "..whole_duration(...) longname.cpp:11");
}
END_TEST

START_TEST(test_symbol_fit_keeps_the_source_line_alone_when_the_function_cannot)
{
	ck_assert_str_eq(fit("transfer (deadlock_abba.c:61)", 24), "deadlock_abba.c:61");
	ck_assert_str_eq(fit(LONG_FORM, 26), "deadlock_abba.c:61");
	/* and the source line's end, if it is too long itself */
	ck_assert_str_eq(fit(LONG_FORM, 12), ".._abba.c:61");
}
END_TEST

/* A frame in a stripped library has no source line: what finds the code
 * is the function and its offset, or the module and its offset -- never
 * the module's name alone, which every row of a program whose mutexes are
 * locked in such a library read. */
START_TEST(test_symbol_fit_without_a_line_keeps_function_and_offset)
{
	ck_assert_str_eq(fit("helper+0x2a (libfoo.so.1)", 20), "helper+0x2a");
	ck_assert_str_eq(fit("kvs_mutex_lock+0x9 (libkeyvaluestore-test.so.3)", 24),
			 "kvs_mutex_lock+0x9");
	ck_assert_str_eq(fit("leveldb::port::Mutex::Lock+0x9 (libleveldb.so.1d)", 24),
			 "..port::Mutex::Lock+0x9");
	/* a C++ function's "(...)" goes before any of its name (a top
	 * table's column of node's rows read "..read(...)+0xe8") */
	ck_assert_str_eq(fit("node::worker::MessagePort::Start(...)+0x8e (node)", 24),
			 "..essagePort::Start+0x8e");
	ck_assert_str_eq(fit("node::InitializeLibuv(...)+0x16c (node)", 27),
			 "node::InitializeLibuv+0x16c");
}
END_TEST

/* What compilers add to a name goes before any of the name: GCC's clones,
 * LLVM's ThinLTO copies, a Rust function's hash (from cargo's rustc, with
 * LLVM in it). */
START_TEST(test_symbol_fit_drops_compiler_suffixes_first)
{
	ck_assert_str_eq(fit("llvm::initializeLoopStrengthReducePassOnce(...) "
			     "[clone .llvm.1539558601523092929]+0x11a (libLLVM.so.22.1)", 60),
			 "llvm::initializeLoopStrengthReducePassOnce(...)+0x11a");
	ck_assert_str_eq(fit("base_alloc_impl.llvm.17794163376973226188+0x4a (rustc)", 24),
			 "base_alloc_impl+0x4a");
	ck_assert_str_eq(fit("std::rt::lang_start::h0123456789abcdef+0x2d (prog)", 28),
			 "std::rt::lang_start+0x2d");
	ck_assert_str_eq(fit("worker [clone .constprop.0] (pool.c:42, prog)", 23),
			 "worker (pool.c:42)");
	/* what only looks like one stays */
	ck_assert_str_eq(fit("my::hash::h0123456789abcdefg+0x1 (libx.so)", 36),
			 "my::hash::h0123456789abcdefg+0x1");
	/* and a frame that fits keeps them all */
	ck_assert_str_eq(fit("worker [clone .constprop.0] (pool.c:42)", 60),
			 "worker [clone .constprop.0] (pool.c:42)");
}
END_TEST

START_TEST(test_symbol_fit_without_a_symbol_keeps_module_start_and_offset)
{
	ck_assert_str_eq(fit("libkeyvaluestore-test.so.3+0x1179", 24), "libkeyvaluestor..+0x1179");
	ck_assert_str_eq(fit("libleveldb.so.1d+0x5a0f0", 24), "libleveldb.so.1d+0x5a0f0");
	ck_assert_str_eq(fit("libleveldb.so.1d+0x5a0f0", 16), "liblev..+0x5a0f0");
}
END_TEST

START_TEST(test_symbol_fit_cuts_other_forms_at_their_end)
{
	/* (too narrow for 4 characters of the module and the offset) */
	ck_assert_str_eq(fit("libfoo.so.1+0x12345678", 12), "libfoo.so...");
	ck_assert_str_eq(fit("0x7f1234567890", 8), "0x7f1...");
	ck_assert_str_eq(fit("?", 8), "?");
}
END_TEST

/* Code of a library the program unloaded lies in no loaded object's
 * segment: rsyslog's input modules, unloaded at its stop, were named as
 * the libelf the report had loaded below them, 0x498ac into a libelf
 * 0x1a1b0 bytes long. */
START_TEST(test_code_loaded_only_in_a_segment)
{
	ck_assert_int_eq(ms_symbols_code_loaded((uintptr_t)fit), 1);   /* this program's */
	ck_assert_int_eq(ms_symbols_code_loaded((uintptr_t)strlen), 1); /* the C library's */
	long page = sysconf(_SC_PAGESIZE);
	void *p = mmap(NULL, (size_t)page, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(p, MAP_FAILED);
	ck_assert_int_eq(ms_symbols_code_loaded((uintptr_t)p + 16), 0); /* no object's */
	munmap(p, (size_t)page);
	ck_assert_int_eq(ms_symbols_code_loaded((uintptr_t)p + 16), 0); /* unmapped */
}
END_TEST

Suite *symbols_suite(void)
{
	Suite *s = suite_create("symbols");
	TCase *tc = tcase_create("fit");
	tcase_add_test(tc, test_symbol_fit_leaves_what_fits);
	tcase_add_test(tc, test_symbol_fit_drops_module_offset_directory_parentheses_in_turn);
	tcase_add_test(tc, test_symbol_fit_cuts_the_function_to_its_end);
	tcase_add_test(tc, test_symbol_fit_drops_arguments_before_the_name);
	tcase_add_test(tc, test_symbol_fit_drops_outer_scopes_whole);
	tcase_add_test(tc, test_symbol_fit_odd_names_stay_inside);
	tcase_add_test(tc, test_symbol_fit_keeps_the_source_line_alone_when_the_function_cannot);
	tcase_add_test(tc, test_symbol_fit_keeps_brackets_paired);
	tcase_add_test(tc, test_symbol_fit_without_a_line_keeps_function_and_offset);
	tcase_add_test(tc, test_symbol_fit_drops_compiler_suffixes_first);
	tcase_add_test(tc, test_symbol_fit_without_a_symbol_keeps_module_start_and_offset);
	tcase_add_test(tc, test_symbol_fit_cuts_other_forms_at_their_end);
	tcase_add_test(tc, test_code_loaded_only_in_a_segment);
	suite_add_tcase(s, tc);
	return s;
}
