/*
 * A leaf with two callers (tests/t2201): leaf() is the hot function and,
 * as gcc -O2 builds a function that calls nothing, sets up no frame of its
 * own even with -fno-omit-frame-pointer; path_a() calls it with three times
 * the work of path_b() (CALL:a, CALL:b), so 75 % of its samples come
 * through path_a and 25 % through path_b. Built twice: with frame pointers
 * (callers_leaf) and without (callers_leaf_nofp).
 *   callers_leaf [SECONDS]   (of CPU time; default 2)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define UNIT 1000000

__attribute__((noinline)) uint64_t leaf(uint64_t x, int n)
{
	for (int i = 0; i < n; i++)
		x = x * 6364136223846793005ULL + (uint64_t)i;	/* HOT:leaf */
	return x;
}

__attribute__((noinline)) uint64_t path_a(uint64_t x)
{
	x = leaf(x, 3 * UNIT);	/* CALL:a */
	return x ^ (x >> 7);
}

__attribute__((noinline)) uint64_t path_b(uint64_t x)
{
	x = leaf(x, UNIT);	/* CALL:b */
	return x ^ (x >> 11);
}

__attribute__((noinline)) uint64_t mid(uint64_t x)
{
	x = path_a(x);
	x += 3;
	x = path_b(x);
	return x + 5;
}

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double limit = argc > 1 ? atof(argv[1]) : 2.0;
	uint64_t x = 1;

	while (cpu_seconds() < limit)
		x = mid(x);
	printf("%llu\n", (unsigned long long)(x & 0xff));
	return 0;
}
