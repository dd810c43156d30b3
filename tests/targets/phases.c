/*
 * Window diff test target: the hot function changes halfway. For the first
 * half of the run first() takes ~90 % of the time and second() ~10 %, then
 * the other way round (PHASE:first, PHASE:second mark the hot lines).
 * Usage: phases SECONDS (default 4).
 */
#include <stdlib.h>
#include <time.h>

#define UNIT 50000UL

static volatile unsigned long sink;

__attribute__((noipa)) static unsigned long first(unsigned long n)
{
	unsigned long x = 1;

	for (unsigned long i = 0; i < n; i++) x = x * 6364136223846793005UL + i; /* PHASE:first */
	return x;
}

__attribute__((noipa)) static unsigned long second(unsigned long n)
{
	unsigned long x = 3;

	for (unsigned long i = 0; i < n; i++) x = x * 2862933555777941757UL + i; /* PHASE:second */
	return x;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 4, t0 = now(), t;

	while ((t = now() - t0) < secs) {
		int late = t >= secs / 2;

		sink += first((late ? 1 : 9) * UNIT);
		sink += second((late ? 9 : 1) * UNIT);
	}
	return 0;
}
