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
//   self-timeout    the owner of a std::timed_mutex tries it again for 10
//                   ms: it times out, having waited for itself.
//   lock-orders     std::lock and std::scoped_lock of the same mutexes in
//                   different orders, try_to_lock in the other order, and
//                   hand-over-hand locking down a list: deadlock-free.
//   inversion       two static std::mutexes taken in both orders, once
//                   each (code that seldom runs): a real inversion.
//   reused          a std::mutex on the heap, taken after a static one;
//                   its memory then holds a new object, whose std::mutex
//                   is taken before the static one: two objects, one
//                   address, and pthread sees neither made nor ended.
//   reused-shared   the same with a std::shared_mutex, taken for writing
//   handoff         a std::unique_lock moved to another thread, which
//                   unlocks it (undefined, glibc lets it: MISUSE); then a
//                   real inversion of that mutex and another, the first
//                   order by another thread, the second by this one.
//   gate-bypass     two threads take two mutexes in both orders, each
//                   under a third (a gate: guarded), then a third thread
//                   takes one of the orders without it: a real inversion.
//   timed-deadlock  a real deadlock, one of whose two waits is a
//                   std::timed_mutex::try_lock_for of an hour: prints
//                   "deadlocked" once both threads sleep in their waits,
//                   then hangs (the test takes a live dump and kills it).
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <future>
#include <mutex>
#include <shared_mutex>
#include <new>
#include <pthread.h>
#include <thread>
#include <vector>

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

int self_timeout()
{
	std::timed_mutex tm;
	tm.lock();
	bool again = tm.try_lock_for(10ms);
	tm.unlock();
	std::printf("relocked: %s\n", again ? "yes" : "no");
	return again ? 1 : 0;
}

int lock_orders()
{
	std::mutex a, b, c;
	long n = 0;
	std::vector<std::thread> ts;
	for (int t = 0; t < 3; t++)
		ts.emplace_back([&, t] {
			for (int i = 0; i < 2000; i++) {
				if (t == 0) {
					std::scoped_lock l(a, b, c);
					n++;
				} else if (t == 1) {
					std::scoped_lock l(c, b, a);
					n++;
				} else {
					std::unique_lock<std::mutex> l1(b, std::defer_lock);
					std::unique_lock<std::mutex> l2(a, std::defer_lock);
					std::lock(l1, l2);
					n++;
				}
				// the other order, but never waiting while holding
				std::unique_lock<std::mutex> l1(t ? c : a);
				std::unique_lock<std::mutex> l2(t ? a : c, std::try_to_lock);
			}
		});
	for (auto &t : ts)
		t.join();
	struct node {
		std::mutex m;
		long v = 0;
		node *next = nullptr;
	};
	std::vector<node> list(50);
	for (size_t i = 0; i + 1 < list.size(); i++)
		list[i].next = &list[i + 1];
	ts.clear();
	for (int t = 0; t < 3; t++)
		ts.emplace_back([&] {
			for (int k = 0; k < 100; k++) {
				node *p = &list[0];
				p->m.lock();
				while (p->next) {
					node *q = p->next;
					q->m.lock();
					p->v++;
					p->m.unlock();
					p = q;
				}
				p->v++;
				p->m.unlock();
			}
		});
	for (auto &t : ts)
		t.join();
	long sum = 0;
	for (auto &x : list)
		sum += x.v;
	std::printf("locked %ld, list %ld\n", n, sum);
	return n == 6000 && sum == 15000 ? 0 : 1;
}

std::mutex first, second;

int inversion()
{
	std::thread([] {
		std::lock_guard<std::mutex> x(first);
		std::lock_guard<std::mutex> y(second);
	}).join();
	std::thread([] {
		std::lock_guard<std::mutex> y(second);
		std::lock_guard<std::mutex> x(first);
	}).join();
	std::printf("done\n");
	return 0;
}

std::mutex registry;

struct job {
	std::mutex m;
	long state = 0;
};

int reused()
{
	void *memory = ::operator new(sizeof(job));
	job *j = new (memory) job; // a job: its mutex, then the registry
	std::thread([j] {
		std::lock_guard<std::mutex> x(j->m);
		std::lock_guard<std::mutex> y(registry);
		j->state++;
	}).join();
	j->~job();
	job *k = new (memory) job; // a new job where the old one was
	std::thread([k] {
		std::lock_guard<std::mutex> y(registry);
		std::lock_guard<std::mutex> x(k->m);
		k->state++;
	}).join();
	k->~job();
	::operator delete(memory);
	std::printf("two jobs at one address\n");
	return 0;
}

std::shared_mutex shared_registry;

struct shared_job {
	std::shared_mutex m;
	long state = 0;
};

int reused_shared()
{
	void *memory = ::operator new(sizeof(shared_job));
	shared_job *j = new (memory) shared_job;
	std::thread([j] {
		std::unique_lock<std::shared_mutex> x(j->m);
		std::unique_lock<std::shared_mutex> y(shared_registry);
		j->state++;
	}).join();
	j->~shared_job();
	shared_job *k = new (memory) shared_job;
	std::thread([k] {
		std::unique_lock<std::shared_mutex> y(shared_registry);
		std::unique_lock<std::shared_mutex> x(k->m);
		k->state++;
	}).join();
	k->~shared_job();
	::operator delete(memory);
	std::printf("two jobs at one address\n");
	return 0;
}

std::mutex handed, other;

int handoff()
{
	std::unique_lock<std::mutex> l(handed);
	std::thread([l = std::move(l)]() mutable { l.unlock(); }).join();
	std::thread([] {
		std::lock_guard<std::mutex> x(handed);
		std::lock_guard<std::mutex> y(other);
	}).join();
	{
		std::lock_guard<std::mutex> y(other);
		std::lock_guard<std::mutex> x(handed);
	}
	std::printf("done\n");
	return 0;
}

std::mutex gate, left, right;

int gate_bypass()
{
	std::thread([] {
		std::lock_guard<std::mutex> g(gate);
		std::lock_guard<std::mutex> x(left);
		std::lock_guard<std::mutex> y(right);
	}).join();
	std::thread([] {
		std::lock_guard<std::mutex> g(gate);
		std::lock_guard<std::mutex> y(right);
		std::lock_guard<std::mutex> x(left);
	}).join();
	std::thread([] {
		std::lock_guard<std::mutex> x(left);
		std::lock_guard<std::mutex> y(right); // BYPASS_SECOND
	}).join();
	std::printf("done\n");
	return 0;
}

// glibc's lock word is 2 when the mutex has a waiter.
bool waited_on(pthread_mutex_t *m)
{
	return __atomic_load_n(&m->__data.__lock, __ATOMIC_ACQUIRE) == 2;
}

std::mutex plain;
std::timed_mutex timed;

int timed_deadlock()
{
	std::atomic<int> holding{0};
	std::thread one([&] {
		std::lock_guard<std::mutex> x(plain);
		holding++;
		while (holding < 2)
			std::this_thread::yield();
		if (timed.try_lock_for(std::chrono::hours(1))) // TIMED_WAITS
			timed.unlock();
	});
	std::thread two([&] {
		std::lock_guard<std::timed_mutex> y(timed);
		holding++;
		while (holding < 2)
			std::this_thread::yield();
		std::lock_guard<std::mutex> x(plain); // PLAIN_WAITS
	});
	while (!waited_on(plain.native_handle()) || !waited_on(timed.native_handle()))
		std::this_thread::sleep_for(1ms);
	std::printf("deadlocked\n");
	std::fflush(stdout);
	one.join();
	two.join();
	return 1;
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
	if (!std::strcmp(s, "self-timeout"))
		return self_timeout();
	if (!std::strcmp(s, "lock-orders"))
		return lock_orders();
	if (!std::strcmp(s, "inversion"))
		return inversion();
	if (!std::strcmp(s, "reused"))
		return reused();
	if (!std::strcmp(s, "reused-shared"))
		return reused_shared();
	if (!std::strcmp(s, "handoff"))
		return handoff();
	if (!std::strcmp(s, "gate-bypass"))
		return gate_bypass();
	if (!std::strcmp(s, "timed-deadlock"))
		return timed_deadlock();
	std::fprintf(stderr, "usage: cxx_idioms at-thread-exit|held-at-exit|timeouts|self-timeout|"
			     "lock-orders|inversion|reused|reused-shared|handoff|gate-bypass|timed-deadlock\n");
	return 2;
}
