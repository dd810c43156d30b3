/*
 * CPU test target: three functions that take about 60 %, 30 % and 10 % of
 * the time, each on one known line (marked HOT:a, HOT:b, HOT:c for the tests
 * to grep). Usage: cpu_split [SECONDS [EXIT_STATUS]] (default: run forever):
 * SECONDS of CPU time, not wall time, so that a busy machine does not shrink
 * the run next to the fixed cost of starting it (exec, a wrapper, the
 * kernel), which would move the shares.
 */
#include <stdlib.h>
#include <time.h>

#define UNIT 200000UL

static volatile unsigned long sink;

__attribute__((noipa)) static unsigned long work_a(unsigned long n)
{
	unsigned long x = 1;

	for (unsigned long i = 0; i < n; i++) x = x * 6364136223846793005UL + i; /* HOT:a */
	return x;
}

__attribute__((noipa)) static unsigned long work_b(unsigned long n)
{
	unsigned long x = 3;

	for (unsigned long i = 0; i < n; i++) x = x * 2862933555777941757UL + i; /* HOT:b */
	return x;
}

__attribute__((noipa)) static unsigned long work_c(unsigned long n)
{
	unsigned long x = 7;

	for (unsigned long i = 0; i < n; i++) x = x * 3202034522624059733UL + i; /* HOT:c */
	return x;
}

/* CPU time, not wall time: the shares hold on a busy machine */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0, t0 = now();
	int status = argc > 2 ? atoi(argv[2]) : 0;

	for (;;) {
		sink += work_a(6 * UNIT);
		sink += work_b(3 * UNIT);
		sink += work_c(1 * UNIT);
		if (secs > 0 && now() - t0 >= secs)
			break;
	}
	return status;
}
