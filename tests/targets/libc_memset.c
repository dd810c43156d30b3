/*
 * CPU test target for libc's debug information: spends nearly all of its
 * time in libc's memset (argv[1] seconds, default 1.5). With libc6-dbg
 * installed, the samples in libc resolve to libc's own source lines
 * (memset-vec-unaligned-erms.S), as the executable's do: every module gets
 * the same symbol sources.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

static char buf[1 << 20];

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.5;
	struct timespec t0, t;
	unsigned long n = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		memset(buf, (int)n++, sizeof(buf));
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	return buf[4096] == 3;
}
