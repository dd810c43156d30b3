/*
 * Allocation wrappers in a program built without frame pointers (issue 9):
 * tests/targets/Makefile builds nofp_*.c with -O2 -fomit-frame-pointer.
 *
 *   nofp_wrap custom|xmalloc|inline [HOLD_MS]
 *
 * custom: every allocation goes through pool_take(), a wrapper named like
 * none of rsprof's built-in ones; xmalloc: through xmalloc(), one of them;
 * inline: through take_inline(), a wrapper inlined into each caller (its
 * line and the caller's share one address).
 * Four callers keep known amounts live, each on its own line:
 * WRAP_NAMES 8 MiB in 64-byte blocks, WRAP_TABLE 4 MiB in 4 KiB blocks,
 * WRAP_BUF 2 MiB in one block, WRAP_NODES 1 MiB in 32-byte blocks.
 * Holds HOLD_MS (default 300), exits without freeing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int mode;	/* 0 custom, 1 xmalloc, 2 inline */
static size_t taken;
static void *keep[4];

/* A wrapper as programs have them: never NULL, counts what it hands out. */
__attribute__((noinline)) static void *pool_take(size_t n)
{
	void *p = malloc(n);

	if (!p) {
		fputs("out of memory\n", stderr);
		abort();
	}
	taken += n;
	return p;
}

__attribute__((noinline)) void *xmalloc(size_t n)
{
	void *p = malloc(n);

	if (!p) {
		fputs("xmalloc: out of memory\n", stderr);
		abort();
	}
	taken += n;
	return p;
}

__attribute__((always_inline)) static inline void *take_inline(size_t n)
{
	void *p = malloc(n);

	if (!p)
		abort();
	taken += n;
	return p;
}

#define TAKE(n) (mode == 1 ? xmalloc(n) : mode == 2 ? take_inline(n) : pool_take(n))

__attribute__((noinline)) static void **names(void)
{
	size_t n = (8u << 20) / 64;
	void **v = calloc(n, sizeof(*v));

	for (size_t i = 0; v && i < n; i++)
		v[i] = TAKE(64); /* WRAP_NAMES: 8 MiB in 64-byte blocks */
	return v;
}

__attribute__((noinline)) static void **table(void)
{
	size_t n = (4u << 20) / 4096;
	void **v = calloc(n, sizeof(*v));

	for (size_t i = 0; v && i < n; i++)
		v[i] = TAKE(4096); /* WRAP_TABLE: 4 MiB in 4 KiB blocks */
	return v;
}

__attribute__((noinline)) static char *buf(void)
{
	char *b = TAKE(2u << 20); /* WRAP_BUF: 2 MiB in one block */

	memset(b, 1, 2u << 20);
	return b;
}

__attribute__((noinline)) static void **nodes(void)
{
	size_t n = (1u << 20) / 32;
	void **v = calloc(n, sizeof(*v));

	for (size_t i = 0; v && i < n; i++)
		v[i] = TAKE(32); /* WRAP_NODES: 1 MiB in 32-byte blocks */
	return v;
}

int main(int argc, char **argv)
{
	unsigned long hold = argc > 2 ? strtoul(argv[2], NULL, 10) : 300;

	if (argc < 2 || (strcmp(argv[1], "custom") && strcmp(argv[1], "xmalloc") &&
			 strcmp(argv[1], "inline"))) {
		fputs("usage: nofp_wrap custom|xmalloc|inline [HOLD_MS]\n", stderr);
		return 2;
	}
	mode = !strcmp(argv[1], "xmalloc") ? 1 : !strcmp(argv[1], "inline") ? 2 : 0;
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
