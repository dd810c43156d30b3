/*
 * An allocation wrapper with a big frame, in a program built without frame
 * pointers (issue 9; tests/targets/Makefile builds nofp_*.c with -O2
 * -fomit-frame-pointer, as a distribution builds C).
 *
 *   nofp_deep [HOLD_MS]
 *
 * xmalloc() (one of rsprof's built-in wrapper names) formats what it was
 * asked for into a 2 KiB buffer on its stack before calling malloc (as
 * wrappers that report failures do), so its callers' return addresses lie
 * more than the stack scan's 1 KiB above the call: only unwinding through
 * the CFI reaches them. Four callers keep known amounts live, each on its
 * own line: DEEP_NAMES 8 MiB in 64-byte blocks, DEEP_TABLE 4 MiB in 4 KiB
 * blocks, DEEP_BUF 2 MiB in one block, DEEP_NODES 1 MiB in 32-byte blocks.
 * Holds HOLD_MS (default 300), exits without freeing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static size_t taken;
static void *keep[4];

__attribute__((noinline)) static void fail(const char *why)
{
	fprintf(stderr, "%s: out of memory\n", why);
	abort();
}

__attribute__((noinline)) void *xmalloc(size_t n)
{
	char why[2048];
	void *p;

	snprintf(why, sizeof(why), "xmalloc(%zu)", n);
	__asm__ volatile("" : : "r"(why) : "memory");	/* the buffer is live over the call */
	p = malloc(n);
	if (!p)
		fail(why);
	taken += n;
	return p;
}

__attribute__((noinline)) static void **names(void)
{
	size_t n = (8u << 20) / 64;
	void **v = calloc(n, sizeof(*v));

	for (size_t i = 0; v && i < n; i++)
		v[i] = xmalloc(64); /* DEEP_NAMES: 8 MiB in 64-byte blocks */
	return v;
}

__attribute__((noinline)) static void **table(void)
{
	size_t n = (4u << 20) / 4096;
	void **v = calloc(n, sizeof(*v));

	for (size_t i = 0; v && i < n; i++)
		v[i] = xmalloc(4096); /* DEEP_TABLE: 4 MiB in 4 KiB blocks */
	return v;
}

__attribute__((noinline)) static char *buf(void)
{
	char *b = xmalloc(2u << 20); /* DEEP_BUF: 2 MiB in one block */

	memset(b, 1, 2u << 20);
	return b;
}

__attribute__((noinline)) static void **nodes(void)
{
	size_t n = (1u << 20) / 32;
	void **v = calloc(n, sizeof(*v));

	for (size_t i = 0; v && i < n; i++)
		v[i] = xmalloc(32); /* DEEP_NODES: 1 MiB in 32-byte blocks */
	return v;
}

int main(int argc, char **argv)
{
	unsigned long hold = argc > 1 ? strtoul(argv[1], NULL, 10) : 300;

	keep[0] = names();
	keep[1] = table();
	keep[2] = buf();
	keep[3] = nodes();
	if (!keep[0] || !keep[1] || !keep[3])
		return 1;
	usleep(hold * 1000);
	printf("%zu\n", taken);
	fflush(stdout);
	_exit(0);
}
