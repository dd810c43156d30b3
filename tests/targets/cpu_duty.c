/*
 * CPU test target for host-wide recordings (record -a): for SECONDS of
 * wall time, spin BUSY_US microseconds in its own function (HOT:duty), then
 * sleep until the next PERIOD_MS. Many copies make a host of many small
 * processes. Usage: cpu_duty SECONDS [BUSY_US [PERIOD_MS]] (default 2 s,
 * 1000 us every 10 ms).
 */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noipa)) static void duty(double until)
{
	/* the clock read between rounds of ~20 us: the loop's line is the hot one */
	while (now() < until)
		for (int i = 0; i < 10000; i++) sink = sink * 6364136223846793005UL + i; /* HOT:duty */
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 2;
	double busy = (argc > 2 ? atof(argv[2]) : 1000) / 1e6;
	double period = (argc > 3 ? atof(argv[3]) : 10) / 1e3;
	double t0 = now(), next = t0;

	while (now() - t0 < seconds) {
		struct timespec ts;
		double wait;

		duty(now() + busy);
		next += period;
		wait = next - now();
		if (wait > 0) {
			ts.tv_sec = (time_t)wait;
			ts.tv_nsec = (long)((wait - (double)ts.tv_sec) * 1e9);
			nanosleep(&ts, NULL);
		}
	}
	return 0;
}
