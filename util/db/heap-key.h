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

/* The order of heap keys: addr, then stack_id, pid and kind. -1, 0 or 1. */
static inline int heap_key__cmp(int64_t a_addr, int64_t a_stack, int64_t a_pid, int64_t a_kind,
				int64_t b_addr, int64_t b_stack, int64_t b_pid, int64_t b_kind)
{
	if (a_addr != b_addr)
		return a_addr < b_addr ? -1 : 1;
	if (a_stack != b_stack)
		return a_stack < b_stack ? -1 : 1;
	if (a_pid != b_pid)
		return a_pid < b_pid ? -1 : 1;
	if (a_kind != b_kind)
		return a_kind < b_kind ? -1 : 1;
	return 0;
}

/* heap_key__cmp() of two structs with the fields addr, stack_id, pid and kind. */
#define HEAP_KEY_CMP(a, b) heap_key__cmp((a)->addr, (a)->stack_id, (a)->pid, (a)->kind, \
					 (b)->addr, (b)->stack_id, (b)->pid, (b)->kind)

#endif
