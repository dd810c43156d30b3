/*
 * Heap test target for byte sampling: three sites keep 32 MiB each in
 * blocks of very different sizes (SIZES_SMALL: 32 bytes, SIZES_MID: 4 KiB,
 * SIZES_BIG: 256 KiB), and one churns small blocks (SIZES_CHURN). An
 * unbiased estimator gets each near 32 MiB; one in N would not.
 *
 *   heap_sizes [CHURN]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEEP (32u << 20)

static void **keep_small, **keep_mid, **keep_big;

static void **fill(size_t size, int which)
{
	size_t n = KEEP / size;
	void **v = calloc(n, sizeof(*v));

	for (size_t i = 0; v && i < n; i++) {
		if (which == 0)
			v[i] = malloc(size); /* SIZES_SMALL */
		else if (which == 1)
			v[i] = malloc(size); /* SIZES_MID */
		else
			v[i] = malloc(size); /* SIZES_BIG */
		if (!v[i])
			exit(1);
		memset(v[i], 1, size < 64 ? size : 64);
	}
	return v;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000, sum = 0;

	keep_small = fill(32, 0);
	keep_mid = fill(4096, 1);
	keep_big = fill(256 << 10, 2);
	for (unsigned long i = 0; i < n; i++) {
		volatile char *b = malloc(16 + (i & 63)); /* SIZES_CHURN */

		if (!b)
			return 1;
		b[0] = (char)i;
		sum += (unsigned char)b[0];
		free((void *)b);
	}
	printf("%lu %d\n", sum, ((char *)keep_big[3])[7]);
	return 0;
}
