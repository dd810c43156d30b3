/*
 * Timeline test target (issue 4, test 2): one line leaks steadily while
 * another holds constant memory.
 *
 *   leak_steady [SECONDS]
 *
 * hold() keeps 4 MiB from the start to the end (LEAK:flat); every 20 ms
 * leak_step() allocates 32 KiB and never frees it (LEAK:rising), about
 * 1.6 MiB a second. A little CPU work between steps keeps it on the CPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void *held[4];
static void **leaked;
static size_t n_leaked;

static void hold(void)
{
	for (int i = 0; i < 4; i++)
		held[i] = malloc(1 << 20); /* LEAK:flat */
}

static void leak_step(void)
{
	void *p = malloc(32 << 10); /* LEAK:rising */

	if (p)
		memset(p, 0, 64);
	leaked[n_leaked++] = p;
}

static unsigned long work(void)
{
	volatile unsigned long x = 0;

	for (unsigned long i = 0; i < 200000; i++)
		x += i * 2654435761UL; /* CPU:work */
	return x;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3;
	double end = now() + secs;
	struct timespec pause = { 0, 20 * 1000 * 1000 };
	unsigned long sum = 0;

	leaked = calloc((size_t)(secs * 60) + 64, sizeof(*leaked));
	if (!leaked)
		return 1;
	hold();
	while (now() < end) {
		leak_step();
		sum += work();
		nanosleep(&pause, NULL);
	}
	printf("%lu %zu %p\n", sum & 1, n_leaked, held[0]);
	return 0;
}
