/* util/hashmap: the one hash map (counts, indexes, pointers; direct and indirect keys). */
#include "util/hashmap.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"

/* indirect keys: strings held by the caller, the map stores their index */
static char *names[4096];

static bool name_eq(uint64_t val, const void *key, const void *ctx)
{
	return !strcmp(names[val], key);
}

/* a hash that collides on purpose: every key lands in one of 4 chains */
static uint64_t bad_hash(const char *s)
{
	return 1 + strlen(s) % 4;
}

static void counts(void)
{
	struct hashmap m = { 0 };
	uint64_t sum = 0, n = 0, v;
	bool fresh;
	int err = 0;

	ok(!hashmap__get(&m, 42, NULL) && hashmap__value(&m, 42) == 0, "an empty map has nothing");
	is_int(hashmap__add(&m, 42, 1, &fresh), 0, "add");
	ok(fresh, "first add of a key is fresh");
	hashmap__add(&m, 42, 2, &fresh);
	ok(!fresh, "second add is not");
	is_int(hashmap__value(&m, 42), 3, "counts add up");

	hashmap__add(&m, 0, 5, &fresh);
	ok(fresh && hashmap__get(&m, 0, &v) && v == 5, "key 0 is a key like the others");
	is_int(m.n, 1, "key 0 is kept apart from the slots");
	is_int(hashmap__size(&m), 2, "size counts key 0");

	/* grow well past the first capacity; keys collide in the low bits */
	for (uint64_t k = 1; k <= 100000 && !err; k++)
		err = hashmap__add(&m, k << 12, k, NULL);
	is_int(err, 0, "100,000 keys added");
	is_int(m.n, 100001, "100,001 keys held");
	ok(m.cap >= 2 * m.n, "grown to stay at most half full (cap %zu)", m.cap);
	is_int(hashmap__value(&m, 777ULL << 12), 777, "a key found after growing");
	is_int(hashmap__value(&m, 42), 3, "an early key survived growing");
	hashmap__for_each(&m, i) {
		sum += m.vals[i];
		n++;
	}
	is_int(n, 100001, "the walk sees every slot key");
	is_int(sum, 3 + 100000ULL * 100001 / 2, "the walk sees every count");

	hashmap__set(&m, 42, 7);
	is_int(hashmap__value(&m, 42), 7, "set replaces");
	hashmap__clear(&m);
	ok(!hashmap__get(&m, 42, NULL) && !hashmap__get(&m, 0, NULL) && m.n == 0, "cleared");
	ok(m.cap > 0, "clear keeps the memory");
	hashmap__add(&m, 42, 1, &fresh);
	ok(fresh && hashmap__value(&m, 42) == 1, "usable after clear");
	hashmap__free(&m);
	ok(m.cap == 0 && !m.keys, "freed");
	hashmap__free(&m);
	ok(1, "freeing twice is fine");
}

/* removal against a model: random adds and removes, then every key checked */
static void removal(void)
{
	enum { N = 5000 };
	static uint64_t model[N];	/* value + 1, 0: absent */
	struct hashmap m = { 0 };
	int bad = 0;

	srand(7);
	for (int round = 0; round < 200000; round++) {
		uint64_t k = (uint64_t)(rand() % N);

		if (rand() % 3) {
			hashmap__set(&m, k << 20, (uint64_t)round);
			model[k] = (uint64_t)round + 1;
		} else {
			bool had = hashmap__remove(&m, k << 20);

			bad += had != (model[k] != 0);
			model[k] = 0;
		}
	}
	for (uint64_t k = 0; k < N; k++) {
		uint64_t v;
		bool has = hashmap__get(&m, k << 20, &v);

		bad += has != (model[k] != 0) || (has && v + 1 != model[k]);
	}
	is_int(bad, 0, "200,000 random sets and removes agree with a model");
	hashmap__free(&m);
}

static void indirect(void)
{
	struct hashmap m = { 0 };
	int wrong = 0, fresh_n = 0;
	uint64_t v;
	bool fresh;

	for (int i = 0; i < 4096; i++) {
		if (asprintf(&names[i], "name-%d", i % 2048) < 0)
			return;
	}
	/* 4096 strings, 2048 distinct, all in 4 hash chains */
	for (int i = 0; i < 4096; i++) {
		v = (uint64_t)i;
		if (hashmap__intern(&m, bad_hash(names[i]), name_eq, names[i], NULL, &v, &fresh))
			break;
		fresh_n += fresh;
		wrong += (uint64_t)(i % 2048) != v;
	}
	is_int(fresh_n, 2048, "equal hashes, different keys: each interned once");
	is_int(wrong, 0, "a repeated key finds its first index");
	ok(hashmap__lookup(&m, bad_hash("name-77"), name_eq, "name-77", NULL, &v) && v == 77,
	   "lookup finds a key in a crowded chain");
	ok(!hashmap__lookup(&m, bad_hash("nope"), name_eq, "nope", NULL, &v), "an absent key");
	ok(hashmap__hash_str("") != 0 && hashmap__hash_str("a") != hashmap__hash_str("b"),
	   "string hash: never 0, differs");
	hashmap__free(&m);
	for (int i = 0; i < 4096; i++)
		free(names[i]);
}

int main(void)
{
	counts();
	removal();
	indirect();
	return done_testing();
}
