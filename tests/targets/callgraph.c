/*
 * Call-graph test target: main() calls outer() on the line marked CALL:outer,
 * outer() calls crunch() on the line marked CALL:crunch, and crunch() spends
 * the time on the line marked HOT:crunch. A -g recording must show each
 * caller on its call line (the return address is on the line after).
 * Usage: callgraph [SECONDS] (default 2).
 */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) static unsigned long crunch(unsigned long n)
{
	unsigned long x = 5;

	for (unsigned long i = 0; i < n; i++) x = x * 6364136223846793005UL + i; /* HOT:crunch */
	return x;
}

__attribute__((noinline)) static unsigned long outer(unsigned long n)
{
	unsigned long r = crunch(n); /* CALL:crunch */
	sink += r;
	return r + 1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2, t0 = now();

	while (now() - t0 < secs) {
		sink += outer(200000); /* CALL:outer */
		sink ^= 1;
	}
	return 0;
}
