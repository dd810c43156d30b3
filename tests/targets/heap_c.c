/*
 * Heap test target (issue 3, test 2): the shape of heap_rust.rs in C.
 *
 *   heap_c [CHURN [HOLD_MS]]
 *
 * Keeps 40 MiB live through realloc growth (HEAP_REALLOC), 10 MiB from
 * calloc (HEAP_CALLOC), 4 MiB in 64-byte malloc blocks (HEAP_MALLOC), churns
 * CHURN malloc+free pairs (HEAP_CHURN), holds HOLD_MS, exits without
 * freeing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *keep[3];
static void **nodes;

static char *grow(void)
{
	size_t cap = 5u << 10;
	char *p = malloc(cap);

	while (p && cap < (40u << 20)) {
		cap *= 2;
		p = realloc(p, cap); /* HEAP_REALLOC: 40 MiB */
		p[cap - 1] = 1;
	}
	return p;
}

static void *zeroed(void)
{
	return calloc(10u << 20, 1); /* HEAP_CALLOC: 10 MiB */
}

static void small_blocks(void)
{
	size_t n = (4u << 20) / 64;

	nodes = calloc(n, sizeof(*nodes));
	for (size_t i = 0; nodes && i < n; i++)
		nodes[i] = malloc(64); /* HEAP_MALLOC: 4 MiB in 64-byte blocks */
}

static unsigned long churn(unsigned long n)
{
	unsigned long sum = 0;

	for (unsigned long i = 0; i < n; i++) {
		volatile unsigned long *b = malloc(32); /* HEAP_CHURN */

		if (!b)
			abort();
		b[1] = i;
		sum += b[1];
		free((void *)b);
	}
	return sum;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
	unsigned long hold = argc > 2 ? strtoul(argv[2], NULL, 10) : 1500;
	unsigned long sum;

	keep[0] = grow();
	keep[1] = zeroed();
	small_blocks();
	sum = churn(n);
	if (!keep[0] || !keep[1] || !nodes)
		return 1;
	usleep(hold * 1000);
	printf("%lu\n", sum & 1);
	fflush(stdout);
	_exit(0);
}
