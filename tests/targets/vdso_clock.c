/*
 * CPU test target for the [vdso]: asks clock_gettime() for the time in a
 * loop for argv[1] seconds (default 1.5). The kernel maps the vDSO into the
 * process; its clock_gettime runs there without a system call, so the
 * samples land in [vdso], a module of its own, not in libc's
 * clock_gettime (a small wrapper in libc.so.6 that jumps into it).
 */
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.5;
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while (t.tv_sec - t0.tv_sec + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	return 0;
}
