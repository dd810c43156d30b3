/*
 * Heap test target: the allocator's corner cases, each on its own line.
 *
 *   heap_edge [HOLD_MS]
 *
 * Kept at the end (bytes): EDGE_REALLOC_NULL 3000, EDGE_SHRINK 50000,
 * EDGE_GROW_MOVE 300000, EDGE_MEMALIGN 4096, EDGE_ALIGNED 8192,
 * EDGE_CALLOC 6000. Freed: EDGE_REALLOC_ZERO (realloc(p, 0)),
 * EDGE_FREED. Failed, counting nothing: EDGE_FAIL_MALLOC, EDGE_FAIL_CALLOC,
 * EDGE_FAIL_REALLOC (the old block stays live at EDGE_KEEP_OLD, 1000).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

void *volatile keep[16];

int main(int argc, char **argv)
{
	unsigned long hold = argc > 1 ? strtoul(argv[1], NULL, 10) : 300;
	volatile size_t huge = (size_t)1 << 62;
	void *p, *q;

	keep[0] = realloc(NULL, 3000); /* EDGE_REALLOC_NULL */

	p = malloc(100000); /* EDGE_SHRINK_FROM */
	keep[1] = realloc(p, 50000); /* EDGE_SHRINK */

	p = malloc(1000); /* EDGE_GROW_FROM */
	keep[2] = realloc(p, 300000); /* EDGE_GROW_MOVE */

	if (posix_memalign(&p, 64, 4096)) /* EDGE_MEMALIGN */
		return 1;
	keep[3] = p;
	keep[4] = aligned_alloc(64, 8192); /* EDGE_ALIGNED */
	keep[5] = calloc(100, 60); /* EDGE_CALLOC */

	p = malloc(777); /* EDGE_REALLOC_ZERO_FROM */
	q = realloc(p, 0); /* EDGE_REALLOC_ZERO */
	keep[6] = q;
	free(malloc(555)); /* EDGE_FREED */

	keep[7] = malloc(huge); /* EDGE_FAIL_MALLOC */
	keep[8] = calloc(huge, huge); /* EDGE_FAIL_CALLOC */
	p = malloc(1000); /* EDGE_KEEP_OLD */
	keep[9] = realloc(p, huge); /* EDGE_FAIL_REALLOC */
	keep[10] = p;
	free(NULL);

	if (keep[7] || keep[8] || keep[9] || q)
		return 2;
	usleep(hold * 1000);
	_exit(0);
}
