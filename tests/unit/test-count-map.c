/* util/count-map: the per-checkpoint ip -> samples map of the recorder. */
#include "util/count-map.h"

#include <stdint.h>

#include "tap.h"

int main(void)
{
	struct count_map m = { 0 };
	uint64_t sum = 0, n = 0;
	bool fresh;
	int err = 0;

	ok(!count_map__has(&m, 42) && count_map__get(&m, 42) == 0, "an empty map has nothing");
	is_int(count_map__add(&m, 42, 1, &fresh), 0, "add");
	ok(fresh, "first add of a key is fresh");
	count_map__add(&m, 42, 2, &fresh);
	ok(!fresh, "second add is not");
	is_int(count_map__get(&m, 42), 3, "counts add up");

	count_map__add(&m, 0, 5, &fresh);
	ok(fresh && count_map__has(&m, 0), "key 0 is a key like the others");
	is_int(count_map__get(&m, 0), 5, "key 0 counts");
	is_int(m.n, 1, "key 0 is kept apart from the slots");

	/* grow well past the first capacity; keys collide in the low bits */
	for (uint64_t k = 1; k <= 100000 && !err; k++)
		err = count_map__add(&m, k << 12, k, &fresh);
	is_int(err, 0, "100,000 keys added");
	is_int(m.n, 100001, "100,001 keys held");
	ok(m.cap >= 2 * m.n, "grown to stay at most half full (cap %zu)", m.cap);
	is_int(count_map__get(&m, 777ULL << 12), 777, "a key found after growing");
	is_int(count_map__get(&m, 42), 3, "an early key survived growing");
	for (size_t i = 0; i < m.cap; i++) {
		if (m.keys[i]) {
			sum += m.vals[i];
			n++;
		}
	}
	is_int(n, 100001, "the walk sees every slot key");
	is_int(sum, 3 + 100000ULL * 100001 / 2, "the walk sees every count");

	count_map__clear(&m);
	ok(!count_map__has(&m, 42) && !count_map__has(&m, 0) && m.n == 0, "cleared");
	ok(m.cap > 0, "clear keeps the memory");
	count_map__add(&m, 42, 1, &fresh);
	ok(fresh && count_map__get(&m, 42) == 1, "usable after clear");
	count_map__free(&m);
	ok(m.cap == 0 && !m.keys, "freed");
	count_map__free(&m);
	ok(1, "freeing twice is fine");
	return done_testing();
}
