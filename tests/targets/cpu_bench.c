/*
 * Benchmark target (bench/cpu.sh): a fixed amount of CPU-bound work, timed
 * by the program itself so that a profiler's start-up and write-out are not
 * counted as slowdown of the work. Usage: cpu_bench [ROUNDS] (default 1000);
 * prints "work_ms <wall milliseconds> cpu_ms <CPU milliseconds>" (the CPU
 * time is the steadier number on a busy machine).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noipa)) static unsigned long mix(unsigned long n, unsigned long x)
{
	for (unsigned long i = 0; i < n; i++) x = x * 6364136223846793005UL + (x >> 29) + i; /* HOT:mix */
	return x;
}

__attribute__((noipa)) static unsigned long round_of_work(unsigned long seed)
{
	unsigned long x = seed;

	for (int k = 0; k < 16; k++)
		x ^= mix(100000, x + k);
	return x;
}

static double now_ms(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (double)ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 1000;
	double t0 = now_ms(CLOCK_MONOTONIC), c0 = now_ms(CLOCK_PROCESS_CPUTIME_ID);

	for (long r = 0; r < rounds; r++)
		sink += round_of_work((unsigned long)r);
	printf("work_ms %.3f cpu_ms %.3f\n", now_ms(CLOCK_MONOTONIC) - t0,
	       now_ms(CLOCK_PROCESS_CPUTIME_ID) - c0);
	return 0;
}
