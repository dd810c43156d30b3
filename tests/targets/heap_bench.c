/*
 * Allocation-heavy target for bench/heap.sh: N malloc+free pairs of
 * varying small sizes, timed inside the program (only the work, not the
 * start-up or the attach). Prints "ns_per_pair N cpu_ns_per_pair": wall-clock
 * time, and the CPU time of the thread (user and kernel: what a loaded
 * machine does not inflate).
 *
 *   heap_bench [N [DELAY_MS]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
	unsigned long delay = argc > 2 ? strtoul(argv[2], NULL, 10) : 0;
	void *keep[16] = { 0 };
	double t0 = 0, t1, c0 = 0, c1;

	if (delay)
		usleep(delay * 1000);	/* time for an attach by PID */
	/* a first tenth untimed: the steady state is measured, not the start */
	for (int pass = 0; pass < 2; pass++) {
		unsigned long m = pass ? n : n / 10;

		if (pass) {
			t0 = now_ns(CLOCK_MONOTONIC);
			c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
		}
		for (unsigned long i = 0; i < m; i++) {
			void *p = malloc(16 + (i & 255));

			if (!p)
				return 1;
			/* keep a few alive for a while so the allocator does some work */
			free(keep[i & 15]);
			keep[i & 15] = p;
		}
	}
	c1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	t1 = now_ns(CLOCK_MONOTONIC);
	printf("%.1f %lu %.1f\n", (t1 - t0) / n, n, (c1 - c0) / n);
	return 0;
}
