/*
 * A steady allocator for bench/history.sh: EVENTS allocation and free
 * events (half each) at RATE events a second, paced by the millisecond.
 * 4,096 live blocks of 16 to 512 bytes; each step frees a random one and
 * allocates again (malloc's caches hand addresses out again and again).
 * Prints "events seconds" at the end.
 *
 *   heap_paced EVENTS RATE
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define SLOTS 4096

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	unsigned long events = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
	double rate = argc > 2 ? strtod(argv[2], NULL) : 100000;
	static char *slot[SLOTS];
	unsigned long done = 0, x = 88172645463325252ul;
	double t0 = now_s(), t;

	for (int i = 0; i < SLOTS; i++) {
		slot[i] = malloc(16 + i % 497);
		done++;
	}
	while (done + 2 <= events) {
		/* the events due by now, then a millisecond's sleep */
		unsigned long due = (unsigned long)((now_s() - t0) * rate) + 64;

		while (done + 2 <= events && done < due) {
			unsigned int i;

			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			i = x % SLOTS;
			free(slot[i]);
			slot[i] = malloc(16 + x % 497);
			slot[i][0] = 1;
			done += 2;
		}
		if (done + 2 <= events) {
			struct timespec ms = { 0, 1000000 };

			nanosleep(&ms, NULL);
		}
	}
	t = now_s() - t0;
	printf("%lu %.2f\n", done, t);
	return 0;
}
