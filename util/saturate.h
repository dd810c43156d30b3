#ifndef RSPROF_UTIL_SATURATE_H
#define RSPROF_UTIL_SATURATE_H

#include <stdint.h>

/*
 * Arithmetic on numbers read from a profile, which may hold anything
 * (INT64_MAX counts, negative sizes, times near the end of the range):
 * saturating at the int64 limits instead of overflowing, which is undefined
 * behaviour in C. A sum that saturates is wrong either way; it is not a
 * crash under UBSan or a value that changes sign. One place for it.
 */
static inline int64_t sat__add(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

static inline int64_t sat__sub(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_sub_overflow(a, b, &r))
		return b < 0 ? INT64_MAX : INT64_MIN;
	return r;
}

static inline int64_t sat__mul(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_mul_overflow(a, b, &r))
		return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
	return r;
}

/* |a|, INT64_MAX for INT64_MIN (llabs() of it is undefined). */
static inline int64_t sat__abs(int64_t a)
{
	return a == INT64_MIN ? INT64_MAX : a < 0 ? -a : a;
}

static inline uint64_t sat__addu(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

#endif
