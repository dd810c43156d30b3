#ifndef RSPROF_TESTS_RESOLVER_INLINE_H
#define RSPROF_TESTS_RESOLVER_INLINE_H

/*
 * An always_inline helper from a second file, for test-resolver.c: an
 * address inside it must resolve to its own line here, with the call site
 * in test-resolver.c one frame out.
 */
#include <stdint.h>

uint64_t here(void);

static inline __attribute__((always_inline)) uint64_t inline_helper(int *line)
{
	uint64_t pc;

	pc = here(); *line = __LINE__;
	__asm__ volatile("" ::: "memory");
	return pc;
}

#endif
