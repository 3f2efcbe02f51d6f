// tests/unwind_terminate.cpp - a caught exception rethrown with `throw;`
// into a noexcept function: the std::terminate path, for
// tests/unwind_safety.sh.
//
// First 4 threads contend on a std::mutex (so the library captures call
// stacks with libunwind, which defines its own _Unwind_* ABI); then one
// thread, holding that mutex, catches a std::runtime_error and rethrows it
// with `throw;` from under a noexcept function.  The unwinder's search
// phase finds the noexcept frame and the personality routine calls
// std::terminate.  The mode (argv[1]) says what happens then:
//
//   caught   the control: the rethrow happens outside any noexcept frame and
//            is caught above; "done", exit 0 (and the library writes its
//            report at exit)
//   handler  std::set_terminate handler: prints "terminate handler called:
//            <what the current exception says>" on stderr and calls
//            _exit(3) (no report: _exit skips the library's destructor)
//   abort    no handler: libstdc++'s verbose handler prints "terminate
//            called after throwing an instance of 'std::runtime_error'" and
//            "  what():  boom" on stderr and aborts (SIGABRT; the shell sees
//            134; no report either)
//
// Each line on stdout is flushed before the next step, so what was printed
// before the end is the same whether the process exits or aborts.
#include <cstdio>
#include <cstring>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>
#include <unistd.h>

namespace {

constexpr int contenders = 4;
constexpr int rounds = 5000;

std::mutex shared;
long counter; // guarded by shared

enum Mode { CAUGHT, HANDLER, ABORT };
Mode mode;

void say(const char *line)
{
	std::fputs(line, stdout);
	std::fputc('\n', stdout);
	std::fflush(stdout);
}

[[noreturn]] void on_terminate()
{
	const char *what = "no current exception";
	try {
		if (std::exception_ptr e = std::current_exception())
			std::rethrow_exception(e);
	} catch (const std::exception &e) {
		what = e.what();
	} catch (...) {
		what = "an exception of unknown type";
	}
	char line[128];
	int n = std::snprintf(line, sizeof line, "terminate handler called: %s\n", what);
	if (n > 0 && write(STDERR_FILENO, line, static_cast<size_t>(n)) < 0)
		_exit(4);
	_exit(3);
}

__attribute__((noinline)) void thrower()
{
	throw std::runtime_error("boom");
}

// Rethrows the exception being handled; the caller decides whether that
// crosses a noexcept frame.
__attribute__((noinline)) void rethrow_current()
{
	throw;
}

__attribute__((noinline)) void relay_noexcept() noexcept
{
	rethrow_current();
}

void last_thread()
{
	std::lock_guard<std::mutex> lock(shared);
	say("holding the mutex, throwing");
	try {
		thrower();
	} catch (const std::runtime_error &e) {
		std::printf("caught %s, rethrowing with throw;\n", e.what());
		std::fflush(stdout);
		if (mode != CAUGHT) {
			say("rethrowing through a noexcept function");
			relay_noexcept(); // std::terminate
			say("NOT REACHED: relay_noexcept returned");
			return;
		}
		try {
			rethrow_current();
		} catch (const std::runtime_error &again) {
			std::printf("caught %s again above the rethrow\n", again.what());
			std::fflush(stdout);
		}
	}
}

} // namespace

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "";
	if (std::strcmp(name, "caught") == 0)
		mode = CAUGHT;
	else if (std::strcmp(name, "handler") == 0)
		mode = HANDLER;
	else if (std::strcmp(name, "abort") == 0)
		mode = ABORT;
	else {
		std::fprintf(stderr, "usage: unwind_terminate caught|handler|abort\n");
		return 2;
	}
	if (mode == HANDLER)
		std::set_terminate(on_terminate);
	std::printf("unwind_terminate: mode %s\n", name);
	std::fflush(stdout);

	std::vector<std::thread> pool;
	for (int t = 0; t < contenders; t++)
		pool.emplace_back([] {
			for (int i = 0; i < rounds; i++) {
				std::lock_guard<std::mutex> lock(shared);
				counter++;
			}
		});
	for (auto &th : pool)
		th.join();
	std::printf("contention done: counter %ld\n", counter);
	std::fflush(stdout);

	std::thread last(last_thread);
	last.join();
	say("done");
	return 0;
}
