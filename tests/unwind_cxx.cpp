// tests/unwind_cxx.cpp - C++ exceptions thrown and caught while contended
// std::mutexes are held, for tests/unwind_safety.sh.
//
// The library captures a call stack with libunwind whenever a thread has to
// wait for a mutex.  libunwind also defines the GCC unwinder ABI
// (_Unwind_RaiseException, ...); if those definitions ever won over
// libgcc_s's, the exceptions below would unwind through the wrong
// implementation and crash now and then.  So this program makes both happen
// at once: 8 threads take one of 2 shared mutexes with std::lock_guard (they
// wait for each other, so the library captures stacks) and, holding it,
// throw from 3 levels down:
//
//   - std::runtime_error, a type of our own (Custom) or an int, in turn;
//   - caught 2 levels down, 1 level down, in the loop body (which unwinds
//     the lock_guard, so pthread_mutex_unlock runs during unwinding) or,
//     when the first catcher rethrows with `throw;`, one level above it;
//   - RAII counters at every level, destroyed during unwinding while the
//     lock is still held (they check that it is);
//   - every 100th exception is kept with std::current_exception() and, after
//     all threads meet at a barrier, rethrown by another thread with
//     std::rethrow_exception.
//
// Every count is a function of the iteration numbers only, so the output is
// the same on every run, with or without the library.  The program checks
// its totals against the plan, prints "all totals correct" and exits 0, or
// prints what differs and exits 1.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int threads = 8;
constexpr int iterations = 2000;
constexpr int mutexes = 2;
constexpr int keep_every = 100; // every 100th exception crosses threads
constexpr int kept_per_thread = iterations / keep_every;

enum Kind { RUNTIME_ERROR, CUSTOM, INT, KINDS };
const char *const kind_name[KINDS] = { "runtime_error", "custom", "int" };

// Where an exception is caught, innermost first.  An exception is thrown in
// level3(); level2() and level1() may catch it; the loop body catches inside
// the lock's scope (BODY) or outside it (OUTER).
enum Level { LEVEL2, LEVEL1, BODY, OUTER, LEVELS };
const char *const level_name[LEVELS] = { "level2", "level1", "body", "outer" };

struct Custom {
	std::uint64_t value;
};

// What iteration i of thread t does: derived from (t, i) alone.
struct Plan {
	int thread;
	int iteration;
	int mutex;
	Kind kind;
	Level first; // the first handler that catches it
	bool rethrow; // that handler rethrows with `throw;` ...
	Level last; // ... and this one catches it for good
	std::uint64_t payload;
};

Plan plan_for(int t, int i)
{
	Plan p;
	p.thread = t;
	p.iteration = i;
	p.mutex = (t + i) % mutexes;
	p.kind = static_cast<Kind>(i % KINDS);
	p.first = static_cast<Level>((i / KINDS) % 3); // LEVEL2, LEVEL1 or BODY
	p.rethrow = (i / (KINDS * 3)) % 2 == 1;
	p.last = p.rethrow ? static_cast<Level>(p.first + 1) : p.first;
	p.payload = static_cast<std::uint64_t>(t) * 100000 + static_cast<std::uint64_t>(i);
	return p;
}

// Per-thread counts, summed by main after the threads are joined.
struct Counts {
	std::uint64_t caught[KINDS] = {};
	std::uint64_t caught_at[LEVELS] = {};
	std::uint64_t rethrown = 0;
	std::uint64_t constructed = 0;
	std::uint64_t destroyed = 0;
	std::uint64_t destroyed_under_lock = 0;
	std::uint64_t crossed[KINDS] = {};
	std::uint64_t checksum = 0; // sum of the payloads caught, mod 2^64
	std::uint64_t crossed_checksum = 0;
	std::uint64_t wrong = 0; // a payload or a lock owner that did not match

	void add(const Counts &o)
	{
		for (int k = 0; k < KINDS; k++) {
			caught[k] += o.caught[k];
			crossed[k] += o.crossed[k];
		}
		for (int l = 0; l < LEVELS; l++)
			caught_at[l] += o.caught_at[l];
		rethrown += o.rethrown;
		constructed += o.constructed;
		destroyed += o.destroyed;
		destroyed_under_lock += o.destroyed_under_lock;
		checksum += o.checksum;
		crossed_checksum += o.crossed_checksum;
		wrong += o.wrong;
	}
};

std::mutex shared_mutex[mutexes];
std::uint64_t shared_sum[mutexes]; // guarded by shared_mutex[m]
std::atomic<int> holder[mutexes]; // thread + 1 while it holds the mutex

std::exception_ptr kept[threads][kept_per_thread];

// A barrier from a mutex and a condition variable (more waiting for the
// library to see): every thread's kept exceptions are stored before any
// thread rethrows another's.
std::mutex barrier_mutex;
std::condition_variable barrier_cv;
int barrier_arrived;

void barrier_wait()
{
	std::unique_lock<std::mutex> lock(barrier_mutex);
	if (++barrier_arrived == threads)
		barrier_cv.notify_all();
	else
		barrier_cv.wait(lock, [] { return barrier_arrived == threads; });
}

// Marks that the current thread holds shared_mutex[m], for the RAII
// counters to check; declared after the lock_guard, so destroyed before it.
struct HeldMark {
	int m;
	HeldMark(int mutex, int thread) : m(mutex) { holder[m].store(thread + 1); }
	~HeldMark() { holder[m].store(0); }
};

// Counts its construction and destruction; destroyed (normally or during
// unwinding) while the iteration's lock is still held.
struct Raii {
	Counts &c;
	const Plan &p;
	Raii(Counts &counts, const Plan &plan) : c(counts), p(plan) { c.constructed++; }
	~Raii()
	{
		c.destroyed++;
		if (holder[p.mutex].load() == p.thread + 1)
			c.destroyed_under_lock++;
		else
			c.wrong++;
	}
};

__attribute__((noinline)) void throw_for(const Plan &p)
{
	switch (p.kind) {
	case RUNTIME_ERROR:
		throw std::runtime_error(std::to_string(p.payload));
	case CUSTOM:
		throw Custom{ p.payload };
	default:
		throw static_cast<int>(p.payload);
	}
}

void record(Counts &c, const Plan &p, Level at, Kind kind, std::uint64_t payload)
{
	if (kind != p.kind || payload != p.payload)
		c.wrong++;
	if (p.rethrow && at == p.first) {
		c.rethrown++;
		return;
	}
	c.caught[kind]++;
	c.caught_at[at]++;
	c.checksum += payload;
	if (p.iteration % keep_every == 0)
		kept[p.thread][p.iteration / keep_every] = std::current_exception();
}

// Runs f; if this level is one that catches the plan's exception, catches it
// by type, records it and, if the plan says so, rethrows it with `throw;`.
template <class F> void at_level(Counts &c, const Plan &p, Level at, F f)
{
	if (at != p.first && at != p.last) {
		f();
		return;
	}
	try {
		f();
	} catch (const std::runtime_error &e) {
		record(c, p, at, RUNTIME_ERROR, std::strtoull(e.what(), nullptr, 10));
		if (p.rethrow && at == p.first)
			throw;
	} catch (const Custom &e) {
		record(c, p, at, CUSTOM, e.value);
		if (p.rethrow && at == p.first)
			throw;
	} catch (int e) {
		record(c, p, at, INT, static_cast<std::uint64_t>(e));
		if (p.rethrow && at == p.first)
			throw;
	}
}

__attribute__((noinline)) void level3(Counts &c, const Plan &p)
{
	Raii r(c, p);
	throw_for(p);
}

__attribute__((noinline)) void level2(Counts &c, const Plan &p)
{
	Raii r(c, p);
	at_level(c, p, LEVEL2, [&] { level3(c, p); });
}

__attribute__((noinline)) void level1(Counts &c, const Plan &p)
{
	Raii r(c, p);
	at_level(c, p, LEVEL1, [&] { level2(c, p); });
}

// One iteration: lock, add the payload, throw from 3 levels down.
void iteration(Counts &c, const Plan &p)
{
	at_level(c, p, OUTER, [&] {
		at_level(c, p, BODY, [&] {
			std::lock_guard<std::mutex> lock(shared_mutex[p.mutex]);
			HeldMark mark(p.mutex, p.thread);
			shared_sum[p.mutex] += p.payload;
			Raii r(c, p);
			level1(c, p);
		});
	});
}

// Rethrows another thread's kept exceptions and checks what comes back.
void rethrow_kept(Counts &c, int from)
{
	for (int k = 0; k < kept_per_thread; k++) {
		const Plan p = plan_for(from, k * keep_every);
		Kind kind = KINDS;
		std::uint64_t payload = 0;
		try {
			std::rethrow_exception(kept[from][k]);
		} catch (const std::runtime_error &e) {
			kind = RUNTIME_ERROR;
			payload = std::strtoull(e.what(), nullptr, 10);
		} catch (const Custom &e) {
			kind = CUSTOM;
			payload = e.value;
		} catch (int e) {
			kind = INT;
			payload = static_cast<std::uint64_t>(e);
		} catch (...) {
		}
		if (kind == KINDS || kind != p.kind || payload != p.payload) {
			c.wrong++;
			continue;
		}
		c.crossed[kind]++;
		c.crossed_checksum += payload;
	}
}

void worker(int t, Counts *counts)
{
	for (int i = 0; i < iterations; i++)
		iteration(*counts, plan_for(t, i));
	barrier_wait();
	rethrow_kept(*counts, (t + 1) % threads);
}

// The same totals, from the plan, without throwing anything.
Counts expected(std::uint64_t sums[mutexes])
{
	Counts e;
	for (int t = 0; t < threads; t++)
		for (int i = 0; i < iterations; i++) {
			const Plan p = plan_for(t, i);
			sums[p.mutex] += p.payload;
			e.caught[p.kind]++;
			e.caught_at[p.last]++;
			e.rethrown += p.rethrow;
			e.constructed += 4; // the loop body, level1, level2, level3
			e.checksum += p.payload;
			if (i % keep_every == 0) {
				e.crossed[p.kind]++;
				e.crossed_checksum += p.payload;
			}
		}
	e.destroyed = e.destroyed_under_lock = e.constructed;
	return e;
}

bool check(const char *what, std::uint64_t got, std::uint64_t want)
{
	if (got == want)
		return true;
	std::printf("MISMATCH %s: got %llu, want %llu\n", what, (unsigned long long)got,
		    (unsigned long long)want);
	return false;
}

} // namespace

int main()
{
	std::vector<Counts> counts(threads);
	std::vector<std::thread> pool;
	for (int t = 0; t < threads; t++)
		pool.emplace_back(worker, t, &counts[t]);
	for (auto &th : pool)
		th.join();

	Counts got;
	for (const auto &c : counts)
		got.add(c);
	// main rethrows a kept exception too: thread 0's first one.
	const Plan first = plan_for(0, 0);
	try {
		std::rethrow_exception(kept[0][0]);
	} catch (const std::runtime_error &e) {
		if (std::strtoull(e.what(), nullptr, 10) != first.payload)
			got.wrong++;
	} catch (...) {
		got.wrong++;
	}

	std::uint64_t sums[mutexes] = {};
	const Counts want = expected(sums);

	std::printf("unwind_cxx: %d threads x %d iterations on %d mutexes\n", threads,
		    iterations, mutexes);
	std::printf("caught: runtime_error %llu custom %llu int %llu\n",
		    (unsigned long long)got.caught[RUNTIME_ERROR],
		    (unsigned long long)got.caught[CUSTOM], (unsigned long long)got.caught[INT]);
	std::printf("caught at: level2 %llu level1 %llu body %llu outer %llu\n",
		    (unsigned long long)got.caught_at[LEVEL2],
		    (unsigned long long)got.caught_at[LEVEL1],
		    (unsigned long long)got.caught_at[BODY],
		    (unsigned long long)got.caught_at[OUTER]);
	std::printf("rethrown with throw; and caught above: %llu\n",
		    (unsigned long long)got.rethrown);
	std::printf("raii: constructed %llu destroyed %llu destroyed under the lock %llu\n",
		    (unsigned long long)got.constructed, (unsigned long long)got.destroyed,
		    (unsigned long long)got.destroyed_under_lock);
	std::printf("rethrow_exception in another thread: runtime_error %llu custom %llu "
		    "int %llu\n",
		    (unsigned long long)got.crossed[RUNTIME_ERROR],
		    (unsigned long long)got.crossed[CUSTOM], (unsigned long long)got.crossed[INT]);
	std::printf("guarded sums: mutex 0 %llu mutex 1 %llu\n",
		    (unsigned long long)shared_sum[0], (unsigned long long)shared_sum[1]);
	std::printf("checksum: %llu cross-thread %llu\n", (unsigned long long)got.checksum,
		    (unsigned long long)got.crossed_checksum);

	bool ok = true;
	for (int k = 0; k < KINDS; k++) {
		std::string what = std::string("caught ") + kind_name[k];
		ok &= check(what.c_str(), got.caught[k], want.caught[k]);
		what = std::string("rethrow_exception ") + kind_name[k];
		ok &= check(what.c_str(), got.crossed[k], want.crossed[k]);
	}
	for (int l = 0; l < LEVELS; l++) {
		std::string what = std::string("caught at ") + level_name[l];
		ok &= check(what.c_str(), got.caught_at[l], want.caught_at[l]);
	}
	ok &= check("rethrown", got.rethrown, want.rethrown);
	ok &= check("raii constructed", got.constructed, want.constructed);
	ok &= check("raii destroyed", got.destroyed, want.destroyed);
	ok &= check("raii destroyed under the lock", got.destroyed_under_lock,
		    want.destroyed_under_lock);
	ok &= check("guarded sum 0", shared_sum[0], sums[0]);
	ok &= check("guarded sum 1", shared_sum[1], sums[1]);
	ok &= check("checksum", got.checksum, want.checksum);
	ok &= check("cross-thread checksum", got.crossed_checksum, want.crossed_checksum);
	ok &= check("wrong payloads or lock owners", got.wrong, 0);
	if (!ok)
		return 1;
	std::printf("all totals correct\n");
	return 0;
}
