/*
 * A shared library whose debug information the test splits off
 * (objcopy --only-keep-debug, then --strip-debug): its hot line must
 * still be found, through .gnu_debuglink or a build-id cache.
 */
#include <time.h>

static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noipa)) void split_spin(double secs)
{
	double t0 = now();
	unsigned long x = 1;

	while (now() - t0 < secs)
		for (int i = 0; i < 20000; i++) x = x * 6364136223846793005UL + i; /* HOT:lib */
	sink += x;
}
