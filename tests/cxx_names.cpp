// tests/cxx_names.cpp - locks taken in the C++ code whose frames are the
// hardest to name: a lambda that was not inlined (GCC names its copy
// "operator()() const [clone .constprop.0]"), a lambda run through
// std::function (inlined into libstdc++'s _M_invoke, whose name is the
// wrapper's), and a lambda of a member function of a class template in
// nested namespaces (a name too long for the top table) that is neither
// inlined nor copied (noipa): GCC's DWARF then defines its operator()
// inside the class it made for the lambda, inside the function that made
// it, where a search by address does not look, and std::lock_guard's
// inlined lock read as libstdc++'s gthr-default.h:749.
// tests/cxx_names.sh reads where the report says each lock was taken.
#include <cstdlib>
#include <functional>
#include <pthread.h>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>
#include <cstdio>

std::mutex noinline_mu, function_mu, template_mu, generic_mu, async_mu, callable_mu;
static long counter;

static void run_noinline()
{
	auto body = []() __attribute__((noinline)) {
		for (int i = 0; i < 1000; i++) {
			std::lock_guard<std::mutex> g(noinline_mu); // NOINLINE-LOCK
			counter++;
		}
	};
	std::thread a(body), b(body);
	a.join();
	b.join();
}

static void run_function()
{
	std::function<void()> body = []() {
		for (int i = 0; i < 1000; i++) {
			std::lock_guard<std::mutex> g(function_mu); // FUNCTION-LOCK
			counter++;
		}
	};
	std::thread a(body), b(body);
	a.join();
	b.join();
}

namespace storage {
namespace engine {
template <typename K, typename V> class ConnectionPoolManager {
public:
	void run_workers(int n)
	{
		std::vector<std::thread> ts;
		for (int t = 0; t < n; t++)
			ts.emplace_back([]() __attribute__((noipa)) {
				for (int i = 0; i < 1000; i++) {
					std::lock_guard<std::mutex> g(template_mu); // TEMPLATE-LOCK
					counter++;
				}
			});
		for (auto &t : ts)
			t.join();
	}
};
} // namespace engine
} // namespace storage

// An operator whose name has a bracket that pairs with none: the name,
// longer than a frame holds, still loses its template lists, not its class.
template <typename K, typename V> struct Table {
	std::mutex mu;
	__attribute__((noipa)) bool operator<(const Table &) const
	{
		std::lock_guard<std::mutex> g(const_cast<std::mutex &>(mu)); // OPERATOR-LOCK
		return false;
	}
};
static Table<std::map<std::string, std::vector<std::string>>, std::vector<std::map<int, std::string>>> table;

// A generic lambda, not inlined: "auto run_generic()::{lambda(auto:1)#1}
// ::operator()<long>(long) const", its return type first.
static void run_generic()
{
	auto body = [](auto n) __attribute__((noinline)) {
		for (int i = 0; i < 1000; i++) {
			std::lock_guard<std::mutex> g(generic_mu); // GENERIC-LOCK
			counter += n;
		}
	};
	std::thread a([&] { body(1L); }), b([&] { body(1L); });
	a.join();
	b.join();
}

// std::async: the lambda inside the std::function of a _Task_setter.
static void run_async()
{
	auto body = []() {
		for (int i = 0; i < 1000; i++) {
			std::lock_guard<std::mutex> g(async_mu); // ASYNC-LOCK
			counter++;
		}
	};
	auto a = std::async(std::launch::async, body), b = std::async(std::launch::async, body);
	a.get();
	b.get();
}

// A class template as the callable: its name ended in a space.
template <typename T> struct Work {
	void operator()() const
	{
		for (int i = 0; i < 1000; i++) {
			std::lock_guard<std::mutex> g(callable_mu); // CALLABLE-LOCK
			counter++;
		}
	}
};

// A lock wrapper of the program's, inlined at two places: each lock is at
// the line that called it (every one read the wrapper's own line).
static pthread_mutex_t wrap_a_mu = PTHREAD_MUTEX_INITIALIZER, wrap_b_mu = PTHREAD_MUTEX_INITIALIZER;
static inline void wrapped_lock(pthread_mutex_t *m)
{
	if (pthread_mutex_lock(m) != 0) // WRAPPER-LOCK
		abort();
}

static void *wrap_a(void *arg)
{
	for (int i = 0; i < 1000; i++) {
		wrapped_lock(&wrap_a_mu); // WRAP_A-LOCK
		counter++;
		pthread_mutex_unlock(&wrap_a_mu);
	}
	return arg;
}

static void *wrap_b(void *arg)
{
	for (int i = 0; i < 1000; i++) {
		wrapped_lock(&wrap_b_mu); // WRAP_B-LOCK
		counter++;
		pthread_mutex_unlock(&wrap_b_mu);
	}
	return arg;
}

int main()
{
	if (table < table)
		return 1;
	run_noinline();
	run_function();
	storage::engine::ConnectionPoolManager<std::string, std::vector<int>> pool;
	pool.run_workers(2);
	run_generic();
	run_async();
	std::thread w1(Work<long>{}), w2(Work<long>{});
	w1.join();
	w2.join();
	pthread_t ta, tb;
	pthread_create(&ta, nullptr, wrap_a, nullptr);
	pthread_join(ta, nullptr);
	pthread_create(&tb, nullptr, wrap_b, nullptr);
	pthread_join(tb, nullptr);
	std::printf("%ld\n", counter);
	return 0;
}
