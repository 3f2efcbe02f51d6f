/* rwlock_cache.cpp - a read-mostly cache behind a std::shared_mutex, and
 * the inversion it hides.
 *
 *   mutexstat ./examples/rwlock_cache [ordered]
 *
 * Four threads look 50 names up in a cache: a shared (read) lock each
 * time, and on a miss (a name's first lookup) an insert under the unique
 * (write) lock.  The report ranks the cache's rwlock with every other lock
 * and splits its numbers by mode: reads and writes, their waits and holds,
 * how many read at once, how long writers waited behind readers.
 *
 * A lookup that misses also counts the miss in a statistics mutex while
 * it still holds its read lock (cache, then stats); the janitor thread
 * empties the cache from inside a statistics report (stats, then the cache
 * for write).  A lookup that reads while the janitor waits to write, with
 * the stats mutex the janitor holds in between, is a deadlock -- this run
 * starts the janitor after the lookups, so it never hangs, and mutexstat
 * still reports
 *
 *   POTENTIAL DEADLOCK: 2 locks taken in a cycle of orders
 *
 * with the mode of each edge ("took A (read), then B").  Two reads in
 * opposite orders would not be one: readers do not wait for readers.
 * With `ordered`, the miss is counted after the read lock is let go, and
 * the report has no finding. */
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

static std::shared_mutex cache_lock;
static std::map<int, std::string> cache;
static std::mutex stats_lock;
static long misses, reports;
static bool ordered;

static std::string lookup(int key)
{
	bool miss = false;
	{
		std::shared_lock<std::shared_mutex> read(cache_lock);
		auto it = cache.find(key);
		if (it != cache.end())
			return it->second;
		miss = true;
		if (!ordered) {
			std::lock_guard<std::mutex> count(stats_lock); /* cache, then stats */
			misses++;
		}
	}
	if (miss && ordered) {
		std::lock_guard<std::mutex> count(stats_lock);
		misses++;
	}
	std::unique_lock<std::shared_mutex> write(cache_lock);
	return cache[key] = "name-" + std::to_string(key);
}

static void janitor()
{
	for (int i = 0; i < 20; i++) {
		std::lock_guard<std::mutex> report(stats_lock); /* stats, then cache */
		reports++;
		if (i % 5 == 4) {
			std::unique_lock<std::shared_mutex> write(cache_lock);
			cache.clear();
		}
	}
}

int main(int argc, char **argv)
{
	ordered = argc > 1 && !strcmp(argv[1], "ordered");
	std::vector<std::thread> readers;
	long found[4] = {};
	for (int t = 0; t < 4; t++)
		readers.emplace_back([t, &found] {
			for (int i = 0; i < 20000; i++)
				found[t] += lookup((i * 7 + t) % 50).size() > 0;
		});
	for (auto &r : readers)
		r.join();
	/* after the lookups, so that this run does not hang: had it run
	 * beside them, a lookup reading with the janitor waiting to write
	 * would have been the deadlock the report warns of */
	std::thread j(janitor);
	j.join();
	std::printf("lookups %ld, reports %ld\n", found[0] + found[1] + found[2] + found[3],
		    reports);
	return 0;
}
