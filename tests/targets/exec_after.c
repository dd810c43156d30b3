/*
 * CPU test target, the program exec_mid execs: spins on HOT:after for
 * argv[1] CPU seconds. Its functions sit at other addresses than exec_mid's
 * (another program), so a sample placed in the wrong image would show
 * up as [unknown] or as the wrong line.
 */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

/* CPU time, not wall time: the shares hold on a busy machine */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noipa)) static void after(double secs)
{
	double t0 = now();
	unsigned long x = 5;

	while (now() - t0 < secs)
		for (int i = 0; i < 20000; i++) x = x * 2862933555777941757UL + 3 * i + 1; /* HOT:after */
	sink += x;
}

int main(int argc, char **argv)
{
	after(argc > 1 ? atof(argv[1]) : 1);
	return 0;
}
