/*
 * Heap test target for "live at the end means after teardown": 32 blocks of
 * 1 MiB allocated on the line marked HOLD, held for SECONDS (default 2.5),
 * then all freed, as a program's exit path or an interpreter's teardown
 * does, and the program lingers 1.5 s more. Live at the end is 0; the peak
 * is 32 MiB at HOLD. Usage: heap_teardown [SECONDS]
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BLOCKS 32

static void nap(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (time_t)s) * 1e9) };

	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2.5;
	static char *held[BLOCKS];

	for (int i = 0; i < BLOCKS; i++) {
		held[i] = malloc(1 << 20); /* HOLD */
		memset(held[i], i, 1 << 20);
	}
	nap(secs);
	for (int i = 0; i < BLOCKS; i++)
		free(held[i]);
	nap(1.5);
	return 0;
}
