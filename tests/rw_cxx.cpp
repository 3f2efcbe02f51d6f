/* rw_cxx.cpp - C++'s read-write locks run the same with mutexstat as
 * without it (tests/rw_transparency.sh compares the output).
 *
 * libstdc++ builds std::shared_mutex and std::shared_timed_mutex on
 * pthread_rwlock_t: lock() on wrlock, lock_shared() on rdlock, the try_
 * forms on trywrlock and tryrdlock, try_lock_for and try_lock_shared_for on
 * clockwrlock and clockrdlock (steady_clock), try_lock_until and
 * try_lock_shared_until with system_clock on timedwrlock and timedrdlock.
 * It turns glibc's answers into what a program sees: EDEADLK from lock() or
 * lock_shared() by the writer into a std::system_error, EBUSY and
 * ETIMEDOUT into false.  So each answer glibc gives through the library
 * shows here as an exception or a boolean.
 *
 * Scenes: free, held by the caller, held by another thread (shared or
 * exclusive) while the caller's timed locks time out, contended, and then
 * reader and writer threads over both kinds with exact counters printed at
 * the end.  Other threads move one step at a time on semaphores and every
 * deadline either passes while another thread certainly holds the lock or
 * is a minute away while it certainly lets go, so the output never depends
 * on timing.  Not tried: try_lock_shared_until(system_clock) by the writer
 * (libstdc++ retries glibc's EDEADLK for ever). */
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <semaphore.h>
#include <shared_mutex>
#include <system_error>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace std::chrono_literals;
using std::chrono::steady_clock;
using std::chrono::system_clock;

static const char *kind_name = "-";

static void show(const char *scene, const char *what, bool ok)
{
	std::printf("%s.%s %s %s\n", kind_name, scene, what, ok ? "true" : "false");
}

/* Run f, which locks; print "ok" or the exception's error condition. */
template <typename F>
static void show_throw(const char *scene, const char *what, F f)
{
	const char *how = "ok";
	try {
		f();
	} catch (const std::system_error &e) {
		how = e.code() == std::errc::resource_deadlock_would_occur
			? "system_error(resource_deadlock_would_occur)"
			: "system_error(other)";
	}
	std::printf("%s.%s %s %s\n", kind_name, scene, what, how);
}

static void sem_take(sem_t *s)
{
	while (sem_wait(s) != 0 && errno == EINTR)
		;
}

/* Another thread that takes the lock (shared or not), says so, and holds
 * it until told to let go. */
template <typename M>
class holder {
public:
	holder(M &m, bool shared) : m_(m), shared_(shared)
	{
		sem_init(&held_, 0, 0);
		sem_init(&go_, 0, 0);
		t_ = std::thread([this] {
			if (shared_)
				m_.lock_shared();
			else
				m_.lock();
			sem_post(&held_);
			sem_take(&go_);
			if (shared_)
				m_.unlock_shared();
			else
				m_.unlock();
		});
		sem_take(&held_);
	}
	/* Let go now: it may have by the time the caller locks, or not. */
	void let_go()
	{
		posted_ = true;
		sem_post(&go_);
	}
	~holder()
	{
		if (!posted_)
			sem_post(&go_);
		t_.join();
		sem_destroy(&held_);
		sem_destroy(&go_);
	}

private:
	M &m_;
	bool shared_;
	bool posted_ = false;
	sem_t held_, go_;
	std::thread t_;
};

/* ---- std::shared_mutex --------------------------------------------------- */

static void case_shared_mutex()
{
	kind_name = "shared_mutex";
	std::shared_mutex m;

	/* free */
	show_throw("free", "lock", [&] { m.lock(); });
	m.unlock();
	show("free", "try_lock", m.try_lock());
	m.unlock();
	show_throw("free", "lock_shared", [&] { m.lock_shared(); });
	m.unlock_shared();
	show("free", "try_lock_shared", m.try_lock_shared());
	m.unlock_shared();
	{
		std::unique_lock<std::shared_mutex> u(m);
		show("free", "unique_lock owns", u.owns_lock());
	}
	{
		std::shared_lock<std::shared_mutex> s(m);
		show("free", "shared_lock owns", s.owns_lock());
	}

	/* held for write by the caller: glibc's EDEADLK becomes an
	 * exception, its EBUSY false */
	m.lock();
	show_throw("self-write", "lock", [&] { m.lock(); });
	show_throw("self-write", "lock_shared", [&] { m.lock_shared(); });
	show("self-write", "try_lock", m.try_lock());
	show("self-write", "try_lock_shared", m.try_lock_shared());
	m.unlock();

	/* held for read by the caller: more reads, no write */
	{
		std::shared_lock<std::shared_mutex> a(m), b(m);
		show("self-read", "shared_lock twice owns", a.owns_lock() && b.owns_lock());
		show("self-read", "try_lock_shared", m.try_lock_shared());
		m.unlock_shared();
		show("self-read", "try_lock", m.try_lock());
		std::unique_lock<std::shared_mutex> u(m, std::try_to_lock);
		show("self-read", "unique_lock try_to_lock owns", u.owns_lock());
	}

	/* held for read by another thread */
	{
		holder<std::shared_mutex> h(m, true);
		show("other-read", "try_lock", m.try_lock());
		std::shared_lock<std::shared_mutex> s(m, std::try_to_lock);
		show("other-read", "shared_lock try_to_lock owns", s.owns_lock());
		show("other-read", "try_lock_shared", m.try_lock_shared());
		m.unlock_shared();
	}

	/* held for write by another thread */
	{
		holder<std::shared_mutex> h(m, false);
		show("other-write", "try_lock", m.try_lock());
		show("other-write", "try_lock_shared", m.try_lock_shared());
		std::shared_lock<std::shared_mutex> s(m, std::try_to_lock);
		show("other-write", "shared_lock try_to_lock owns", s.owns_lock());
		std::unique_lock<std::shared_mutex> u(m, std::try_to_lock);
		show("other-write", "unique_lock try_to_lock owns", u.owns_lock());
	}

	/* contended: the holder lets go while (or before) the caller waits */
	{
		holder<std::shared_mutex> h(m, false);
		h.let_go();
		std::shared_lock<std::shared_mutex> s(m);
		show("contended", "shared_lock owns", s.owns_lock());
	}
	{
		holder<std::shared_mutex> h(m, true);
		h.let_go();
		std::unique_lock<std::shared_mutex> u(m);
		show("contended", "unique_lock owns", u.owns_lock());
	}
	show("end", "try_lock", m.try_lock());
	m.unlock();
	std::fflush(stdout);
}

/* ---- std::shared_timed_mutex ---------------------------------------------- */

static void case_shared_timed_mutex()
{
	kind_name = "shared_timed_mutex";
	std::shared_timed_mutex m;

	/* free: every timed form succeeds, even with a deadline already past */
	show("free", "try_lock_for", m.try_lock_for(60s));
	m.unlock();
	show("free", "try_lock_shared_for", m.try_lock_shared_for(60s));
	m.unlock_shared();
	show("free", "try_lock_until system_clock past",
	     m.try_lock_until(system_clock::now() - 1s));
	m.unlock();
	show("free", "try_lock_shared_until system_clock past",
	     m.try_lock_shared_until(system_clock::now() - 1s));
	m.unlock_shared();
	show("free", "try_lock_until steady_clock past",
	     m.try_lock_until(steady_clock::now() - 1s));
	m.unlock();
	show("free", "try_lock_shared_until steady_clock past",
	     m.try_lock_shared_until(steady_clock::now() - 1s));
	m.unlock_shared();

	/* held for write by the caller: the timed forms give up (EDEADLK
	 * or ETIMEDOUT from glibc, false either way) */
	m.lock();
	show_throw("self-write", "lock", [&] { m.lock(); });
	show_throw("self-write", "lock_shared", [&] { m.lock_shared(); });
	show("self-write", "try_lock_for", m.try_lock_for(10ms));
	show("self-write", "try_lock_shared_for", m.try_lock_shared_for(10ms));
	show("self-write", "try_lock_until system_clock", m.try_lock_until(system_clock::now() + 10ms));
	m.unlock();

	/* held for read by the caller: its own write lock times out */
	m.lock_shared();
	show("self-read", "try_lock_shared_for", m.try_lock_shared_for(10ms));
	m.unlock_shared();
	show("self-read", "try_lock_for", m.try_lock_for(10ms));
	show("self-read", "try_lock_until system_clock", m.try_lock_until(system_clock::now() + 10ms));
	m.unlock_shared();

	/* held for write by another thread: everything times out */
	{
		holder<std::shared_timed_mutex> h(m, false);
		show("other-write", "try_lock_shared_for", m.try_lock_shared_for(10ms));
		show("other-write", "try_lock_for", m.try_lock_for(10ms));
		show("other-write", "try_lock_shared_until system_clock",
		     m.try_lock_shared_until(system_clock::now() + 10ms));
		show("other-write", "try_lock_until system_clock",
		     m.try_lock_until(system_clock::now() + 10ms));
		show("other-write", "try_lock_until steady_clock",
		     m.try_lock_until(steady_clock::now() + 10ms));
		show("other-write", "try_lock_shared_until steady_clock past",
		     m.try_lock_shared_until(steady_clock::now() - 1s));
		std::shared_lock<std::shared_timed_mutex> s(m, 10ms);
		show("other-write", "shared_lock for 10ms owns", s.owns_lock());
		std::unique_lock<std::shared_timed_mutex> u(m, 10ms);
		show("other-write", "unique_lock for 10ms owns", u.owns_lock());
	}

	/* held for read by another thread: reads succeed, writes time out */
	{
		holder<std::shared_timed_mutex> h(m, true);
		show("other-read", "try_lock_shared_for", m.try_lock_shared_for(10ms));
		m.unlock_shared();
		show("other-read", "try_lock_shared_until system_clock",
		     m.try_lock_shared_until(system_clock::now() + 10ms));
		m.unlock_shared();
		show("other-read", "try_lock_for", m.try_lock_for(10ms));
		show("other-read", "try_lock_until system_clock past",
		     m.try_lock_until(system_clock::now() - 1s));
		std::unique_lock<std::shared_timed_mutex> u(m, system_clock::now() + 10ms);
		show("other-read", "unique_lock until owns", u.owns_lock());
	}

	/* contended: the holder lets go while (or before) the caller waits
	 * with a minute to spare */
	{
		holder<std::shared_timed_mutex> h(m, false);
		h.let_go();
		show("contended", "try_lock_shared_for", m.try_lock_shared_for(60s));
		m.unlock_shared();
	}
	{
		holder<std::shared_timed_mutex> h(m, true);
		h.let_go();
		show("contended", "try_lock_until system_clock",
		     m.try_lock_until(system_clock::now() + 60s));
		m.unlock();
	}
	{
		holder<std::shared_timed_mutex> h(m, false);
		h.let_go();
		show("contended", "try_lock_for", m.try_lock_for(60s));
		m.unlock();
	}
	show("end", "try_lock", m.try_lock());
	m.unlock();
	std::fflush(stdout);
}

/* ---- readers and writers, exact counters ------------------------------------- */

constexpr int READERS = 6, WRITERS = 3, LOOPS = 2000;

/* a and b are written together under the exclusive lock: a reader that
 * sees them differ saw a write half done. */
template <typename M>
struct counted {
	M m;
	long a = 0, b = 0;
	std::atomic<long> reads{0}, torn{0}, timed_out{0};
};

static void case_counters()
{
	kind_name = "counters";
	counted<std::shared_mutex> c1;
	counted<std::shared_timed_mutex> c2;
	std::vector<std::thread> t;

	for (int i = 0; i < READERS; i++) {
		t.emplace_back([&c1, i] {
			for (int n = 0; n < LOOPS; n++) {
				if (i % 2) {
					std::shared_lock<std::shared_mutex> s(c1.m);
					c1.torn += c1.a != c1.b;
					c1.reads++;
				} else {
					while (!c1.m.try_lock_shared())
						std::this_thread::yield();
					c1.torn += c1.a != c1.b;
					c1.reads++;
					c1.m.unlock_shared();
				}
			}
		});
		t.emplace_back([&c2, i] {
			for (int n = 0; n < LOOPS; n++) {
				/* a minute: never times out */
				bool ok = i % 2 ? c2.m.try_lock_shared_for(60s)
						: c2.m.try_lock_shared_until(system_clock::now() + 60s);
				if (!ok) {
					c2.timed_out++;
					continue;
				}
				c2.torn += c2.a != c2.b;
				c2.reads++;
				c2.m.unlock_shared();
			}
		});
	}
	for (int i = 0; i < WRITERS; i++) {
		t.emplace_back([&c1] {
			for (int n = 0; n < LOOPS; n++) {
				std::unique_lock<std::shared_mutex> u(c1.m);
				c1.a++;
				c1.b++;
			}
		});
		t.emplace_back([&c2, i] {
			for (int n = 0; n < LOOPS; n++) {
				bool ok = i % 2 ? c2.m.try_lock_for(60s)
						: c2.m.try_lock_until(system_clock::now() + 60s);
				if (!ok) {
					c2.timed_out++;
					continue;
				}
				c2.a++;
				c2.b++;
				c2.m.unlock();
			}
		});
	}
	for (auto &th : t)
		th.join();
	std::printf("counters.shared_mutex a=%ld b=%ld reads=%ld torn=%ld\n",
		    c1.a, c1.b, c1.reads.load(), c1.torn.load());
	std::printf("counters.shared_timed_mutex a=%ld b=%ld reads=%ld torn=%ld timed_out=%ld\n",
		    c2.a, c2.b, c2.reads.load(), c2.torn.load(), c2.timed_out.load());
	std::fflush(stdout);
}

int main()
{
	alarm(60); /* a hang is a failure, not a stuck test run */
	std::setvbuf(stdout, nullptr, _IOLBF, 0);
	case_shared_mutex();
	case_shared_timed_mutex();
	case_counters();
	std::printf("done\n");
	return 0;
}
