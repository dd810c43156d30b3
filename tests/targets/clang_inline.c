/*
 * Built with clang -g -O2 (see Makefile): clang writes no .debug_aranges,
 * which libdwfl 0.188 needs to find the unit of an address; the resolver
 * must still give the always_inline helper's line (HOT LINE), not the
 * caller's (CALLER LINE). Usage: clang_inline [SECONDS] (default 3).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline __attribute__((always_inline)) uint64_t mix(uint64_t h, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		h = (h * 0x9e3779b97f4a7c15ull + i) ^ (h >> 29); // HOT LINE
	return h;
}

__attribute__((noinline)) static uint64_t work(uint64_t seed)
{
	uint64_t acc = 0;

	for (uint64_t k = 0; k < 100; k++)
		acc ^= mix(seed + k, 100000); // CALLER LINE
	return acc;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3.0;
	struct timespec t0, t;
	uint64_t total = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		total += work(total);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	printf("%llu\n", (unsigned long long)total);
	return 0;
}
