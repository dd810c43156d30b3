/*
 * A heap larger than the resident memory: one malloc of 64 MiB (served by
 * an mmap of glibc's, its pages not resident until written) of which only
 * the first 8 MiB are written (HEAP_UNTOUCHED_BLOCK).
 *
 *   heap_untouched [HOLD_MS]
 *
 * Holds HOLD_MS (default 800) so that checkpoints read the resident memory,
 * and exits without freeing.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BLOCK	(64u << 20)
#define TOUCHED	(8u << 20)

void *volatile sink;

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 800;
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	char *p = malloc(BLOCK);	/* HEAP_UNTOUCHED_BLOCK */

	if (!p)
		return 1;
	memset(p, 1, TOUCHED);
	sink = p;
	nanosleep(&ts, NULL);
	return 0;
}
