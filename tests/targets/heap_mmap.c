/*
 * Memory that never passes through malloc (issue 9): a sub-allocator hands
 * out 64-byte objects from 5 anonymous mmap arenas of 10 MiB (50 MiB, every
 * page touched), as CPython's pymalloc and many runtimes do; one malloc of
 * 1 MiB beside it (HEAP_MMAP_MALLOC).
 *
 *   heap_mmap [HOLD_MS]
 *
 * Holds HOLD_MS (default 1500), exits without unmapping.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define ARENA_SIZE	(10u << 20)
#define N_ARENAS	5
#define OBJ_SIZE	64

struct arena {
	char *base;
	size_t used;
};

static struct arena arenas[N_ARENAS];
static int cur;

static struct arena *arena_new(void)
{
	struct arena *a = &arenas[cur];

	a->base = mmap(NULL, ARENA_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0); /* HEAP_MMAP_ARENA */
	if (a->base == MAP_FAILED)
		return NULL;
	a->used = 0;
	return a;
}

/* objects are carved from the current arena, a new one when it is full */
static void *obj_new(void)
{
	struct arena *a = &arenas[cur];
	void *p;

	if (!a->base || a->used + OBJ_SIZE > ARENA_SIZE) {
		if (a->base && ++cur >= N_ARENAS)
			return NULL;
		a = arena_new();
		if (!a)
			return NULL;
	}
	p = a->base + a->used;
	a->used += OBJ_SIZE;
	memset(p, 0x5a, OBJ_SIZE);
	return p;
}

int main(int argc, char **argv)
{
	unsigned long hold = argc > 1 ? strtoul(argv[1], NULL, 10) : 1500;
	size_t n = (size_t)N_ARENAS * ARENA_SIZE / OBJ_SIZE;
	char *side = malloc(1u << 20); /* HEAP_MMAP_MALLOC: 1 MiB */

	if (!side)
		return 1;
	memset(side, 1, 1u << 20);
	for (size_t i = 0; i < n; i++)
		if (!obj_new())
			return 1;
	usleep(hold * 1000);
	printf("%zu objects\n", n);
	fflush(stdout);
	_exit(0);
}
