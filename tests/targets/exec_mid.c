/*
 * CPU test target for exec: spins on HOT:before for argv[1] CPU seconds, then
 * execs argv[2] with the arguments after it (typically exec_after). The
 * samples before the exec belong to this program, those after it to the
 * next, even when both fall in one checkpoint interval.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

/* CPU time, not wall time: the shares hold on a busy machine */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noipa)) static void before(double secs)
{
	double t0 = now();
	unsigned long x = 1;

	while (now() - t0 < secs)
		for (int i = 0; i < 20000; i++) x = x * 6364136223846793005UL + i; /* HOT:before */
	sink += x;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: exec_mid SECONDS PROGRAM [ARG...]\n");
		return 2;
	}
	before(atof(argv[1]));
	execv(argv[2], argv + 2);
	perror("execv");
	return 1;
}
