// tests/cxx_debug.cpp - std::mutex in a program built without optimisation
// (-O0, as debug builds and many test suites are).  std::lock_guard's
// constructor, std::unique_lock's and std::scoped_lock's are then functions
// of their own, as are std::mutex::lock and __gthread_mutex_lock: every
// mutex of the program is locked from one line of bits/gthr-default.h.
// The report must still say which function of this file first locked each.
//
// Twelve mutexes, first locked in turn by alpha (std::lock_guard), beta
// (std::unique_lock) and gamma (std::scoped_lock); then two accounts
// locked in both orders by transfer(): a lock-order inversion.
#include <cstdio>
#include <mutex>

static std::mutex m[12];
static long counter;

__attribute__((noinline)) static void alpha(std::mutex &mu)
{
	std::lock_guard<std::mutex> g(mu); // ALPHA
	counter++;
}

__attribute__((noinline)) static void beta(std::mutex &mu)
{
	std::unique_lock<std::mutex> l(mu); // BETA
	counter++;
}

__attribute__((noinline)) static void gamma_(std::mutex &mu)
{
	std::scoped_lock<std::mutex> s(mu); // GAMMA
	counter++;
}

struct account {
	std::mutex m;
	long balance = 100;
};
static account savings, checking;

__attribute__((noinline)) static void transfer(account &from, account &to, long v)
{
	std::lock_guard<std::mutex> a(from.m); // TRANSFER_FROM
	std::lock_guard<std::mutex> b(to.m);   // TRANSFER_TO
	from.balance -= v;
	to.balance += v;
}

int main()
{
	for (int i = 0; i < 12; i++) {
		const char *by = i % 3 == 0 ? "alpha" : i % 3 == 1 ? "beta" : "gamma";
		if (i % 3 == 0)
			alpha(m[i]);
		else if (i % 3 == 1)
			beta(m[i]);
		else
			gamma_(m[i]);
		std::printf("%s %p\n", by, static_cast<void *>(&m[i]));
	}
	transfer(savings, checking, 10);
	transfer(checking, savings, 10);
	std::printf("savings %p\nchecking %p\n", static_cast<void *>(&savings.m),
		    static_cast<void *>(&checking.m));
	std::printf("counter %ld, balances %ld %ld\n", counter, savings.balance,
		    checking.balance);
	return 0;
}
