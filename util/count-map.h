#ifndef RSPROF_UTIL_COUNT_MAP_H
#define RSPROF_UTIL_COUNT_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * An open-addressing hash map u64 -> u64 count (ip -> samples, stack hash
 * -> samples). Key 0 is the empty slot; a real 0 is counted apart. Grown
 * at half load, cleared (not freed) at every checkpoint: no allocation per
 * sample once it has reached the working set's size.
 */
struct count_map {
	uint64_t *keys, *vals;
	size_t cap, n;
	uint64_t zero;
	bool has_zero;
};

/* Adds v to key's count; *fresh tells whether the key was new. 0 or -ENOMEM. */
int count_map__add(struct count_map *m, uint64_t key, uint64_t v, bool *fresh);
bool count_map__has(const struct count_map *m, uint64_t key);
/* The count of key, 0 when absent. */
uint64_t count_map__get(const struct count_map *m, uint64_t key);
/* Empties the map, keeps its memory. */
void count_map__clear(struct count_map *m);
/* Frees the memory; the map is empty and usable again. */
void count_map__free(struct count_map *m);

/*
 * Walk: for (size_t i = 0; i < m->cap; i++) if (m->keys[i]) ... m->vals[i];
 * plus m->zero when m->has_zero (key 0).
 */

#endif
