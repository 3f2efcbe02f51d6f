// reading_names.cpp - a mutex first locked in a C++ function whose
// demangled name is longer than a report frame holds (over 300
// characters: a member of a class template over std::string and a vector
// of pairs), for tests/reading.sh: the report must still name the function
// itself, with its argument and template lists shortened, not the first
// 160 characters of the name.
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>
#include <cstdio>

namespace reading_tests_with_a_long_namespace_name {

template <typename Key, typename Value>
struct registry_of_things_that_need_locking {
	std::mutex lock;
	std::map<Key, Value> items;

	__attribute__((noinline)) void put_under_the_lock(const Key &key, const Value &value)
	{
		std::lock_guard<std::mutex> guard(lock);
		items[key] = value;
	}
};

}  // namespace reading_tests_with_a_long_namespace_name

// "reading_names long": a name still longer than a frame holds once both
// of its lists are "...", so the frame keeps its end, and a column cut to
// it from there ended "the_duration(" (a half of "(...)").
namespace acme_platform_concurrency_detail_with_a_name_long_enough {
template <typename K>
struct ShardedLockTableImplementationForUnitTestingOfTheMutexProfilerRegistry {
	std::mutex mu;
	std::map<K, int> data;

	__attribute__((noinline)) void
	insert_value_into_shard_with_exclusive_lock_held_for_the_whole_duration(const K &k)
	{
		std::lock_guard<std::mutex> g(mu);
		data[k] = 1;
	}
};
}  // namespace acme_platform_concurrency_detail_with_a_name_long_enough

int main(int argc, char **argv)
{
	if (argc > 1) {
		acme_platform_concurrency_detail_with_a_name_long_enough::
			ShardedLockTableImplementationForUnitTestingOfTheMutexProfilerRegistry<
				std::string>
				table;
		table.insert_value_into_shard_with_exclusive_lock_held_for_the_whole_duration(
			argv[1]);
		std::printf("%zu item\n", table.data.size());
		return 0;
	}
	using pairs = std::vector<std::pair<std::string, std::string>>;
	reading_tests_with_a_long_namespace_name::registry_of_things_that_need_locking<std::string,
										    pairs>
		registry;
	registry.put_under_the_lock("key", pairs{ { "a", "b" } });
	std::printf("%zu item\n", registry.items.size());
	return 0;
}
