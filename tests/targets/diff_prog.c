/*
 * Diff test target (issue 4, test 1): build A is this file as it is; build B
 * is made from it with sed at test time (tests/t3000-diff.sh):
 *   SLOW_FACTOR 1 -> 2   changed() does twice the work: its CPU share grows
 *   RETAIN_MB 8 -> 16    retain_changed() keeps twice the bytes
 * and, for the --by function check, every line shifted down by 3.
 *
 *   diff_prog [ROUNDS]
 *
 * Each round runs steady(), changed() and other(), three loops of the
 * same cost (with SLOW_FACTOR 1): about a third of the CPU each. Each loop
 * stands on one line, so that its whole cost is on that line (split over
 * the for line and a body line, changed()'s growth was shared by two rows
 * and steady()'s drop could outrank either).
 */
#include <stdio.h>
#include <stdlib.h>

#define SLOW_FACTOR 1
#define RETAIN_MB 8
#define WORK 200000UL

static void *kept_changed[64], *kept_steady[64];

static unsigned long steady(unsigned long n)
{
	volatile unsigned long x = 0;

	for (unsigned long i = 0; i < n; i++) x += i ^ 0x5bd1e995UL; /* CPU:steady */
	return x;
}

static unsigned long changed(unsigned long n)
{
	volatile unsigned long x = 0;

	for (unsigned long i = 0; i < n * SLOW_FACTOR; i++) x += i ^ 0x1b873593UL; /* CPU:changed */
	return x;
}

static unsigned long other(unsigned long n)
{
	volatile unsigned long x = 0;

	for (unsigned long i = 0; i < n; i++) x += i ^ 0xcc9e2d51UL; /* CPU:other */
	return x;
}

static void retain_changed(void)
{
	for (int i = 0; i < RETAIN_MB; i++)
		kept_changed[i] = malloc(1 << 20); /* HEAP:changed */
}

static void retain_steady(void)
{
	for (int i = 0; i < 8; i++)
		kept_steady[i] = malloc(1 << 20); /* HEAP:steady */
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 1000;
	unsigned long sum = 0;

	retain_steady();
	retain_changed();
	for (long r = 0; r < rounds; r++) {
		sum += steady(WORK);
		sum += changed(WORK);
		sum += other(WORK);
	}
	printf("%lu %p %p\n", sum & 1, kept_changed[0], kept_steady[0]);
	return 0;
}
