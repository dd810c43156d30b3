#ifndef RSPROF_UTIL_HASHMAP_H
#define RSPROF_UTIL_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The hash map of rsprof (one for every use: sample counts per address,
 * the resolver's cache, the readers' address and string tables, pprof's
 * string table). Open addressing with linear probing, u64 keys to u64
 * values (a count, an index, a pointer), grown at half load; cleared
 * without freeing, so a map emptied at every checkpoint stops allocating
 * once it has reached its working size.
 *
 * Direct keys (an address, a stack hash): the key is the identity. Key 0 is
 * a key like the others (kept apart: slot key 0 means empty).
 *
 * Indirect keys (a string, a struct): the map is keyed by the caller's hash
 * of the key and the caller's equality test on the stored value (typically
 * an index into the caller's array of keys), so different keys with equal
 * hashes coexist. hashmap__intern() and hashmap__lookup(); do not mix them
 * with the direct calls on one map.
 *
 * Walk: hashmap__for_each(m, i) { m->keys[i] ... m->vals[i] } visits every
 * direct key but 0 (m->has_zero, m->zero) and every indirect entry.
 */
struct hashmap {
	uint64_t *keys, *vals;
	size_t cap, n;
	uint64_t zero;		/* the value of key 0 */
	bool has_zero;
};

#define hashmap__for_each(m, i) \
	for (size_t i = 0; i < (m)->cap; i++) if ((m)->keys[i])

/* Adds delta to key's value (0 when new); *fresh (may be NULL) tells whether key was new.
 * 0 or -ENOMEM. */
int hashmap__add(struct hashmap *m, uint64_t key, uint64_t delta, bool *fresh);
/* Sets key's value. 0 or -ENOMEM. */
int hashmap__set(struct hashmap *m, uint64_t key, uint64_t val);
/* Is key there; its value in *val (may be NULL). */
bool hashmap__get(const struct hashmap *m, uint64_t key, uint64_t *val);
/* key's value, 0 when absent. */
uint64_t hashmap__value(const struct hashmap *m, uint64_t key);
/* Removes key; false when it was not there. */
bool hashmap__remove(struct hashmap *m, uint64_t key);
/* Number of keys, key 0 included. */
size_t hashmap__size(const struct hashmap *m);

/* Indirect keys: does the stored value val stand for key? */
typedef bool (*hashmap_eq_fn)(uint64_t val, const void *key, const void *ctx);

/* The value stored for key (whose hash is hash): true and *val when found. */
bool hashmap__lookup(const struct hashmap *m, uint64_t hash, hashmap_eq_fn eq,
		     const void *key, const void *ctx, uint64_t *val);
/* Same; when key is absent, stores *val for it and sets *fresh. 0 or -ENOMEM. */
int hashmap__intern(struct hashmap *m, uint64_t hash, hashmap_eq_fn eq, const void *key,
		    const void *ctx, uint64_t *val, bool *fresh);

/* Hashes for indirect keys (never 0) and a mix for integers. */
uint64_t hashmap__hash_str(const char *s);
uint64_t hashmap__hash_u64(uint64_t x);

/* Empties the map, keeps its memory. */
void hashmap__clear(struct hashmap *m);
/* Frees the memory; the map is empty and usable again. */
void hashmap__free(struct hashmap *m);

#endif
