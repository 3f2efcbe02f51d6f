// cxx_idioms.cpp - C++ standard library idioms whose report must be right,
// for tests/cxx_idioms.sh.  Usage: cxx_idioms SCENARIO; each prints one
// line of results (the same with and without the library) and exits 0.
//
//   at-thread-exit  20 threads hand their std::unique_lock to
//                   std::notify_all_at_thread_exit (libstdc++ unlocks it in
//                   a pthread key destructor of its own, after the
//                   library's) and 20 set a promise's value at thread exit:
//                   no thread ends holding a mutex.
//   held-at-exit    one thread ends holding a std::mutex (the unique_lock
//                   released): the one real HELD AT THREAD EXIT.
//   timeouts        std::timed_mutex::try_lock_for gives up 4 times while
//                   another thread holds it, then waits and gets it once.
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <future>
#include <mutex>
#include <thread>

namespace {

using namespace std::chrono_literals;

int at_thread_exit()
{
	std::mutex m;
	std::condition_variable cv;
	int done = 0;
	for (int i = 0; i < 20; i++) {
		std::thread t([&] {
			std::unique_lock<std::mutex> l(m);
			done++;
			std::notify_all_at_thread_exit(cv, std::move(l));
		});
		{
			std::unique_lock<std::mutex> l(m);
			cv.wait(l, [&] { return done == i + 1; });
		}
		t.join();
	}
	int sum = 0;
	for (int i = 0; i < 20; i++) {
		std::promise<int> p;
		std::future<int> f = p.get_future();
		std::thread t([&p, i] { p.set_value_at_thread_exit(i); });
		sum += f.get();
		t.join();
	}
	std::printf("notified %d, promised %d\n", done, sum);
	return done == 20 && sum == 190 ? 0 : 1;
}

std::mutex kept;

int held_at_exit()
{
	std::thread([] {
		std::unique_lock<std::mutex> l(kept);
		l.release(); // the thread ends holding it
	}).join();
	std::printf("held: %s\n", kept.try_lock() ? "no" : "yes");
	return 0;
}

int timeouts()
{
	std::timed_mutex tm;
	std::mutex gate;
	std::condition_variable cv;
	int stage = 0; // 1: holder has tm; 2: tries are over
	std::thread holder([&] {
		tm.lock(); // then gate, never the other way round
		{
			std::unique_lock<std::mutex> g(gate);
			stage = 1;
			cv.notify_all();
			cv.wait(g, [&] { return stage == 2; });
		}
		std::this_thread::sleep_for(20ms); // the waiter is waiting
		tm.unlock();
	});
	{
		std::unique_lock<std::mutex> g(gate);
		cv.wait(g, [&] { return stage == 1; });
	}
	int failed = 0;
	for (int i = 0; i < 4; i++)
		failed += !tm.try_lock_for(5ms);
	{
		std::lock_guard<std::mutex> g(gate);
		stage = 2;
	}
	cv.notify_all();
	bool got = tm.try_lock_for(60s);
	if (got)
		tm.unlock();
	holder.join();
	std::printf("timed out %d, then got it: %s\n", failed, got ? "yes" : "no");
	return failed == 4 && got ? 0 : 1;
}

} // namespace

int main(int argc, char **argv)
{
	const char *s = argc > 1 ? argv[1] : "";
	if (!std::strcmp(s, "at-thread-exit"))
		return at_thread_exit();
	if (!std::strcmp(s, "held-at-exit"))
		return held_at_exit();
	if (!std::strcmp(s, "timeouts"))
		return timeouts();
	std::fprintf(stderr, "usage: cxx_idioms at-thread-exit|held-at-exit|timeouts\n");
	return 2;
}
