/*
 * bench/heap.sh's large-heap target: LIVE blocks kept alive, then N times
 * a random one freed and a new one allocated in its place, timed inside
 * the program (the filling of the heap and a first tenth untimed). As a
 * server's heap behaves (Redis keeps a value until its key is set again):
 * every free is of an old block, far from the last one touched, where
 * heap_bench's 16 blocks stay in the cache. Prints "ns_per_pair N
 * cpu_ns_per_pair" as heap_bench does.
 *
 *   heap_bench_live [N [DELAY_MS [LIVE]]]
 */
#include <stdint.h>
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

static uint64_t next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
	unsigned long delay = argc > 2 ? strtoul(argv[2], NULL, 10) : 0;
	unsigned long live = argc > 3 ? strtoul(argv[3], NULL, 10) : 500000;
	uint64_t x = 88172645463325252ULL;
	double t0 = 0, t1, c0 = 0, c1;
	void **keep;

	if (!live || !(keep = calloc(live, sizeof(*keep))))
		return 1;
	for (unsigned long i = 0; i < live; i++)
		if (!(keep[i] = malloc(16 + (i & 255))))
			return 1;
	if (delay)
		usleep(delay * 1000);	/* time for an attach by PID */
	for (int pass = 0; pass < 2; pass++) {
		unsigned long m = pass ? n : n / 10;

		if (pass) {
			t0 = now_ns(CLOCK_MONOTONIC);
			c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
		}
		for (unsigned long i = 0; i < m; i++) {
			uint64_t r = next(&x);
			unsigned long j = r % live;

			free(keep[j]);
			if (!(keep[j] = malloc(16 + (r >> 56))))
				return 1;
		}
	}
	c1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	t1 = now_ns(CLOCK_MONOTONIC);
	printf("%.1f %lu %.1f\n", (t1 - t0) / n, n, (c1 - c0) / n);
	return 0;
}
