/*
 * Heap test target (issue 8): what the in-process tracker interposes
 * beyond the common calls, each on its own line, and frees of memory it
 * never saw allocated.
 *
 *   heap_preload_edge [HOLD_MS]
 *
 * Kept (bytes): PE_REALLOCARRAY 4000 (100 x 40, grown from PE_RA_FROM),
 * PE_VALLOC 5000, PE_PVALLOC 4096 (asked 3000: counted as asked),
 * PE_MEMALIGN 7000, PE_ZERO 0 (malloc(0): one allocation of 0 bytes).
 * Nothing counted: PE_RA_OVERFLOW (reallocarray
 * overflow, ENOMEM), PE_EINVAL (posix_memalign with a bad alignment),
 * PE_CALLOC_OVERFLOW. PE_USABLE: malloc_usable_size() of a tracked block
 * works. PE_BEFORE: 10 blocks of 2000 bytes from __libc_malloc, as if
 * allocated before the tracker loaded, then freed: 10 unknown frees.
 */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

extern void *__libc_malloc(size_t n);

void *volatile keep[16];

int main(int argc, char **argv)
{
	unsigned long hold = argc > 1 ? strtoul(argv[1], NULL, 10) : 100;
	volatile size_t huge = (size_t)1 << 62;
	void *p, *before[10];

	p = malloc(100); /* PE_RA_FROM */
	keep[0] = reallocarray(p, 100, 40); /* PE_REALLOCARRAY */
	errno = 0;
	if (reallocarray(keep[0], huge, huge) || errno != ENOMEM) /* PE_RA_OVERFLOW */
		return 1;
	keep[1] = valloc(5000); /* PE_VALLOC */
	keep[2] = pvalloc(3000); /* PE_PVALLOC */
	keep[3] = memalign(256, 7000); /* PE_MEMALIGN */
	if (posix_memalign(&p, 24, 100) != EINVAL) /* PE_EINVAL */
		return 2;
	if (calloc(huge, 16)) /* PE_CALLOC_OVERFLOW */
		return 3;
	keep[4] = malloc(0); /* PE_ZERO */
	p = malloc(1000); /* PE_USABLE */
	if (malloc_usable_size(p) < 1000)
		return 4;
	free(p);
	for (int i = 0; i < 10; i++)
		before[i] = __libc_malloc(2000); /* PE_BEFORE */
	for (int i = 0; i < 10; i++)
		free(before[i]);
	free(NULL);
	if (!keep[0] || !keep[1] || !keep[2] || !keep[3] || !keep[4] ||
	    ((uintptr_t)keep[1] & 4095) || ((uintptr_t)keep[3] & 255))
		return 5;
	usleep(hold * 1000);
	_exit(0);
}
