// cxx_mutex.cpp - the C++ standard library's locks are pthread mutexes
// underneath, so mutexstat sees them with no change to the program.
//
//   mutexstat ./examples/cxx_mutex
//
// What it shows:
//  - a bounded work queue: std::mutex + two std::condition_variables,
//    producers and consumers waiting with std::unique_lock and a predicate
//    (cv.wait, and cv.wait_for with a timeout, which keeps waiting until
//    the predicate holds);
//  - a shared counter behind std::lock_guard;
//  - std::recursive_mutex taken again by the thread that holds it;
//  - std::timed_mutex::try_lock_for giving up while another thread holds
//    the mutex, and succeeding once it is free;
//  - a condition_variable::wait_for that times out.
// In the report, the queue's mutex has many acquisitions and condition
// waits, and few contentions; the counter's, one acquisition per item.
//
// The output is totals and checksums only (no timings, no thread ids), so
// it is the same with and without mutexstat.  Exits 0 when every total is
// what it must be.
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace {

constexpr int kProducers = 3;
constexpr int kConsumers = 3;
constexpr long kItemsEach = 4000;
constexpr std::size_t kCapacity = 16;
constexpr long kStop = -1;  // one per consumer, after the last item

// The work queue: bounded, so producers wait too.
class WorkQueue {
public:
	void push(long item)
	{
		std::unique_lock<std::mutex> lock(mutex_);
		not_full_.wait(lock, [this] { return items_.size() < kCapacity; });
		items_.push_back(item);
		lock.unlock();
		not_empty_.notify_one();
	}

	// Waits in slices of a millisecond: each slice that ends with the
	// queue still empty is a timeout, and the wait goes on.
	long pop_patiently()
	{
		std::unique_lock<std::mutex> lock(mutex_);
		while (!not_empty_.wait_for(lock, std::chrono::milliseconds(1),
					    [this] { return !items_.empty(); }))
			;
		return take(lock);
	}

	long pop()
	{
		std::unique_lock<std::mutex> lock(mutex_);
		not_empty_.wait(lock, [this] { return !items_.empty(); });
		return take(lock);
	}

private:
	long take(std::unique_lock<std::mutex> &lock)
	{
		long item = items_.front();
		items_.pop_front();
		lock.unlock();
		not_full_.notify_one();
		return item;
	}

	std::mutex mutex_;
	std::condition_variable not_empty_, not_full_;
	std::deque<long> items_;
};

WorkQueue queue;

// Shared totals behind a lock_guard.
std::mutex totals_mutex;
long items_done = 0;
long long checksum = 0;

void producer(int id)
{
	for (long i = 0; i < kItemsEach; i++)
		queue.push(id * 1000000L + i);
}

void consumer(int id)
{
	for (;;) {
		long item = id % 2 ? queue.pop_patiently() : queue.pop();
		if (item == kStop)
			return;
		std::lock_guard<std::mutex> guard(totals_mutex);
		items_done++;
		checksum += item;
	}
}

// A recursive mutex, taken once per level by the same thread.
std::recursive_mutex tree_mutex;

long sum_to(int n)
{
	std::lock_guard<std::recursive_mutex> guard(tree_mutex);
	return n == 0 ? 0 : n + sum_to(n - 1);
}

// try_lock_for: gives up while main holds the mutex, succeeds once free.
std::timed_mutex door;

bool try_door(std::chrono::milliseconds patience)
{
	bool got = false;
	std::thread visitor([&] {
		got = door.try_lock_for(patience);
		if (got)
			door.unlock();
	});
	visitor.join();
	return got;
}

}  // namespace

int main()
{
	bool ok = true;

	// A wait_for whose predicate never holds: it times out.
	{
		std::mutex m;
		std::condition_variable cv;
		std::unique_lock<std::mutex> lock(m);
		bool woke = cv.wait_for(lock, std::chrono::milliseconds(20),
					[] { return false; });
		std::printf("condition_variable::wait_for with nothing to wait for: %s\n",
			    woke ? "woke up" : "timed out");
		ok = ok && !woke;
	}

	std::vector<std::thread> producers, consumers;
	for (int i = 0; i < kConsumers; i++)
		consumers.emplace_back(consumer, i);
	for (int i = 0; i < kProducers; i++)
		producers.emplace_back(producer, i);
	for (auto &t : producers)
		t.join();
	for (int i = 0; i < kConsumers; i++)
		queue.push(kStop);
	for (auto &t : consumers)
		t.join();

	long expected_items = kProducers * kItemsEach;
	long long expected_sum = 0;
	for (int p = 0; p < kProducers; p++)
		expected_sum += p * 1000000LL * kItemsEach +
				kItemsEach * (kItemsEach - 1) / 2;
	std::printf("queue: %d producers, %d consumers, %ld items (expected %ld)\n",
		    kProducers, kConsumers, items_done, expected_items);
	std::printf("queue: checksum %lld (expected %lld)\n", checksum,
		    expected_sum);
	ok = ok && items_done == expected_items && checksum == expected_sum;

	long sums[2] = { 0, 0 };
	{
		std::thread a([&] { sums[0] = sum_to(100); });
		std::thread b([&] { sums[1] = sum_to(100); });
		a.join();
		b.join();
	}
	std::printf("recursive_mutex: 1+...+100 on two threads: %ld %ld (expected 5050)\n",
		    sums[0], sums[1]);
	ok = ok && sums[0] == 5050 && sums[1] == 5050;

	door.lock();
	bool while_held = try_door(std::chrono::milliseconds(20));
	door.unlock();
	bool when_free = try_door(std::chrono::seconds(10));
	std::printf("timed_mutex::try_lock_for: while held %s, when free %s\n",
		    while_held ? "acquired" : "timed out",
		    when_free ? "acquired" : "timed out");
	ok = ok && !while_held && when_free;

	std::printf("%s\n", ok ? "all totals correct" : "WRONG TOTALS");
	return ok ? 0 : 1;
}
