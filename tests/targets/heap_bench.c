/*
 * Allocation-heavy target for bench/heap.sh: N malloc+free pairs of
 * varying small sizes, timed inside the program (only the work, not the
 * start-up or the attach). Prints "ns_per_pair N".
 *
 *   heap_bench [N [DELAY_MS]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
	unsigned long delay = argc > 2 ? strtoul(argv[2], NULL, 10) : 0;
	void *keep[16] = { 0 };
	double t0, t1;

	if (delay)
		usleep(delay * 1000);	/* time for an attach by PID */
	t0 = now_ns();
	for (unsigned long i = 0; i < n; i++) {
		void *p = malloc(16 + (i & 255));

		if (!p)
			return 1;
		/* keep a few alive for a while so the allocator does some work */
		free(keep[i & 15]);
		keep[i & 15] = p;
	}
	t1 = now_ns();
	printf("%.1f %lu\n", (t1 - t0) / n, n);
	return 0;
}
