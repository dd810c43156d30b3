/*
 * Heap test target: a program linked with another allocator (built with
 * -DALLOC_JEMALLOC -ljemalloc, -DALLOC_MIMALLOC -lmimalloc or
 * -DALLOC_TCMALLOC -ltcmalloc), which also hands blocks from malloc() to
 * that allocator's own functions (legitimate where malloc is that
 * allocator) and frees blocks of its own functions with free().
 *
 *   heap_alloclib [CHURN [READY_FILE GO_FILE]]
 *
 * With READY_FILE and GO_FILE (to attach to it): creates READY_FILE, then
 * waits (up to 20 s) for GO_FILE to exist before anything below.
 *
 * Keeps 1,024,000 bytes in 1000 malloc'd blocks (ALIB_KEEP), 1 MiB from
 * calloc (ALIB_CALLOC), 8 MiB grown by realloc (ALIB_REALLOC), 64 blocks
 * of 8 KiB aligned to 4 KiB (ALIB_ALIGNED); churns CHURN malloc+free pairs
 * (ALIB_CHURN); 100 blocks of malloc's freed with the allocator's own
 * function and 100 of its own freed with free() (ALIB_MIX: nothing left).
 * Prints what the allocator says of its blocks and a sum of
 * their contents: the same with the tracker as without.
 */
#include <fcntl.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(ALLOC_JEMALLOC)
#include <jemalloc/jemalloc.h>
#define OWN_ALLOC(n)	mallocx((n), 0)
#define OWN_FREE(p, n)	sdallocx((p), (n), 0)
#define OWN_SIZE(p)	sallocx((p), 0)
#elif defined(ALLOC_MIMALLOC)
#include <mimalloc.h>
#define OWN_ALLOC(n)	mi_malloc(n)
#define OWN_FREE(p, n)	mi_free(p)
#define OWN_SIZE(p)	mi_usable_size(p)
#elif defined(ALLOC_TCMALLOC)
#include <gperftools/tcmalloc.h>
#define OWN_ALLOC(n)	tc_malloc(n)
#define OWN_FREE(p, n)	tc_free(p)
#define OWN_SIZE(p)	tc_malloc_size(p)
#else
#define OWN_ALLOC(n)	malloc(n)
#define OWN_FREE(p, n)	free(p)
#define OWN_SIZE(p)	malloc_usable_size(p)
#endif

static void *keep[1000], *aligned[64];
static char *big;
static unsigned char *zero;

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000, sum = 0;
	size_t cap = 4096, own_sizes = 0;

	if (argc > 3) {
		int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd < 0)
			return 2;
		close(fd);
		for (int i = 0; i < 2000 && access(argv[3], F_OK); i++)
			usleep(10000);
	}
	for (int i = 0; i < 1000; i++) {
		keep[i] = malloc(1024); /* ALIB_KEEP */
		if (!keep[i])
			return 1;
		memset(keep[i], i & 0xff, 1024);
	}
	zero = calloc(256, 4096); /* ALIB_CALLOC */
	big = malloc(cap);
	while (big && cap < (8u << 20)) {
		cap *= 2;
		big = realloc(big, cap); /* ALIB_REALLOC */
		big[cap - 1] = 7;
	}
	for (int i = 0; i < 64; i++)
		if (posix_memalign(&aligned[i], 4096, 8192)) /* ALIB_ALIGNED */
			return 1;
	for (unsigned long i = 0; i < n; i++) {
		volatile unsigned long *b = malloc(48); /* ALIB_CHURN */

		if (!b)
			return 1;
		b[2] = i;
		sum += b[2];
		free((void *)b);
	}
	/* malloc's blocks to the allocator's own functions, and back */
	for (int i = 0; i < 100; i++) {
		void *p = malloc(100), *q = OWN_ALLOC(200); /* ALIB_MIX */

		if (!p || !q)
			return 1;
		memset(p, 1, 100);
		own_sizes += OWN_SIZE(p) >= 100;
		own_sizes += OWN_SIZE(q) >= 200;
		OWN_FREE(p, 100);
		free(q);
	}
	for (int i = 0; i < 1000; i++)
		sum += ((unsigned char *)keep[i])[1023];
	sum += zero ? zero[12345] : 99;
	sum += big ? (unsigned char)big[cap - 1] : 99;
	for (int i = 0; i < 64; i++)
		sum += ((uintptr_t)aligned[i] & 4095) == 0;
	printf("sum %lu own %zu cap %zu\n", sum, own_sizes, cap);
	return 0;
}
