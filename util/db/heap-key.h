#ifndef RSPROF_UTIL_DB_HEAP_KEY_H
#define RSPROF_UTIL_DB_HEAP_KEY_H

#include <stdint.h>

#include "util/hashmap.h"

/*
 * The key of a heap row, as heap_events, heap_totals and the series key
 * them: (addr, stack_id, pid, kind), stack_id -1 and pid 0 for NULL. Its
 * hash for the maps of the writer (the totals, the compaction, --retain)
 * and of info --check; odd, never 0 (the key of an empty slot). A CPU
 * row's key (addr, pid) is (addr, -1, pid, 0).
 */
static inline uint64_t heap_key__hash(int64_t addr, int64_t stack_id, int64_t pid, int64_t kind)
{
	return hashmap__hash_u64((uint64_t)addr ^ hashmap__hash_u64((uint64_t)stack_id ^
				 hashmap__hash_u64((uint64_t)pid * 8 + (uint64_t)kind))) | 1;
}

#endif
