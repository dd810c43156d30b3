/*
 * Heap test target (issue 8): a program with its own allocator linked in
 * (it defines malloc and free, as a program linking jemalloc statically
 * does); here they count and hand over to glibc. Its malloc wins over any
 * LD_PRELOAD: the in-process tracker rewrites its entry (preload/hooks.c);
 * uprobes go on it. That malloc starts as jemalloc's does, with a size
 * check and a jump (cmp $imm,%rdi; jae): the kernel single-steps a probe
 * on the cmp, but emulates one on the jae, where rsprof puts it.
 *
 *   heap_own_malloc [HOLD_MS]
 *
 * Keeps 1 MiB in 256 blocks of 4 KiB (OWN_KEEP), churns 1000 pairs
 * (OWN_CHURN).
 */
#include <stdlib.h>
#include <unistd.h>

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);

static unsigned long calls;

__attribute__((noinline, used)) void *own_malloc_large(size_t n)
{
	calls++;
	return __libc_malloc(n);
}

__attribute__((noinline, used)) void *own_malloc_small(size_t n)
{
	calls++;
	return __libc_malloc(n);
}

__attribute__((naked)) void *malloc(size_t n)
{
	__asm__("cmp $0x1001, %rdi\n\t"
		"jae own_malloc_large\n\t"
		"jmp own_malloc_small\n\t");
}

void *calloc(size_t n, size_t size)
{
	calls++;
	return __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
	calls++;
	return __libc_realloc(p, n);
}

void free(void *p)
{
	__libc_free(p);
}

void *volatile keep[256];

int main(int argc, char **argv)
{
	unsigned long hold = argc > 1 ? strtoul(argv[1], NULL, 10) : 100;

	for (int i = 0; i < 256; i++)
		keep[i] = malloc(4096); /* OWN_KEEP */
	for (int i = 0; i < 1000; i++) {
		void *volatile p = malloc(100); /* OWN_CHURN */

		free(p);
	}
	usleep(hold * 1000);
	return calls < 1256;
}
