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

int main()
{
	using pairs = std::vector<std::pair<std::string, std::string>>;
	reading_tests_with_a_long_namespace_name::registry_of_things_that_need_locking<std::string,
										    pairs>
		registry;
	registry.put_under_the_lock("key", pairs{ { "a", "b" } });
	std::printf("%zu item\n", registry.items.size());
	return 0;
}
