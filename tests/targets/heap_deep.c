/*
 * Allocation-heavy target with deep recursive stacks and a large live heap,
 * for bench/heap.sh's "C deep" row: a recursive descent (two functions
 * calling each other, 40 to 120 frames deep, the depth changing at every
 * step as a parser's or a tree walk's does) allocates at every level and
 * keeps the blocks in a ring of RING slots (~50 MB live at 256 bytes),
 * each allocation freeing the block RING allocations older. Prints
 * "ns_per_pair N cpu_ns_per_pair" for the timed part, as heap_bench does.
 *
 *   heap_deep [N [RING]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void **ring;
static unsigned long ring_n, at, left;

static double now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void one(unsigned long depth);

static void keep(unsigned long depth)
{
	void *p = malloc(128 + (depth & 7) * 32); /* DEEP_ALLOC */

	if (!p)
		exit(1);
	memset(p, (int)depth, 16);
	free(ring[at]);
	ring[at] = p;
	at = (at + 1) % ring_n;
	left--;
}

static __attribute__((noinline)) void other(unsigned long depth)
{
	keep(depth);
	if (left && depth > 1)
		one(depth - 1);
	__asm__ volatile("" ::: "memory");	/* no tail call */
}

static __attribute__((noinline)) void one(unsigned long depth)
{
	keep(depth);
	if (left && depth > 1)
		other(depth - 1);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 2000000;
	double t0, t1, c0, c1;
	unsigned long seed = 1;

	ring_n = argc > 2 ? strtoul(argv[2], NULL, 10) : 200000;
	ring = calloc(ring_n, sizeof(*ring));
	if (!ring)
		return 1;
	/* fill the ring first: the timed part has the whole heap live */
	left = ring_n;
	while (left)
		one(40 + (seed = seed * 6364136223846793005ULL + 1) % 81);
	left = n;
	t0 = now_ns(CLOCK_MONOTONIC);
	c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	while (left)
		one(40 + (seed = seed * 6364136223846793005ULL + 1) % 81);
	c1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	t1 = now_ns(CLOCK_MONOTONIC);
	printf("%.1f %lu %.1f\n", (t1 - t0) / n, n, (c1 - c0) / n);
	return 0;
}
