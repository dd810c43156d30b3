/*
 * Memory that never passes through malloc (issue 9): a sub-allocator hands
 * out 64-byte objects from 5 anonymous mmap arenas of 10 MiB (50 MiB, every
 * page touched), as CPython's pymalloc and many runtimes do; one malloc of
 * 1 MiB beside it (HEAP_MMAP_MALLOC).
 *
 *   heap_mmap [HOLD_MS [remap]]
 *
 * Holds HOLD_MS (default 1500), exits without unmapping. With "remap",
 * before holding: arena 0 unmapped (-10 MiB), arena 1 grown to 20 MiB by
 * mremap (+10), 4 MiB cut out of the middle of arena 2 (-4), arena 3
 * shrunk to 6 MiB by mremap (-4), an anonymous MAP_FIXED mapping over the
 * last 2 MiB of arena 4 (-2 at the arena, +2 at HEAP_MMAP_FIXED): the
 * arenas hold 40 MiB. A thread is started too (its stack is glibc's
 * mapping, not the program's), a file mapped (not anonymous) and 64 MiB
 * of address space reserved (PROT_NONE): none of them counts.
 */
#define _GNU_SOURCE	/* mremap */
#include <fcntl.h>
#include <pthread.h>
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

	int flags = MAP_PRIVATE | MAP_ANONYMOUS;

	a->base = mmap(NULL, ARENA_SIZE, PROT_READ | PROT_WRITE, flags, -1, 0); /* HEAP_MMAP_ARENA */
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

static void *idle(void *arg)
{
	return arg;
}

static int remap(void)
{
	const size_t mib = 1u << 20;
	int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, fd;
	pthread_t th;
	char *p;

	if (munmap(arenas[0].base, ARENA_SIZE))
		return 1;
	p = mremap(arenas[1].base, ARENA_SIZE, 2 * ARENA_SIZE, MREMAP_MAYMOVE);
	if (p == MAP_FAILED)
		return 1;
	memset(p + ARENA_SIZE, 0x5b, ARENA_SIZE);
	if (munmap(arenas[2].base + 3 * mib, 4 * mib))
		return 1;
	if (mremap(arenas[3].base, ARENA_SIZE, 6 * mib, 0) == MAP_FAILED)
		return 1;
	p = mmap(arenas[4].base + 8 * mib, 2 * mib, PROT_READ, flags, -1, 0); /* HEAP_MMAP_FIXED */
	if (p == MAP_FAILED || mprotect(p, 2 * mib, PROT_READ | PROT_WRITE))
		return 1;
	memset(p, 0x5c, 2 * mib);
	if (pthread_create(&th, NULL, idle, NULL) || pthread_join(th, NULL))
		return 1;
	if (mmap(NULL, 64 * mib, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0) ==
	    MAP_FAILED)
		return 1;
	fd = open("/proc/self/exe", O_RDONLY);
	if (fd < 0 || mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0) == MAP_FAILED)
		return 1;
	close(fd);
	return 0;
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
	if (argc > 2 && !strcmp(argv[2], "remap") && remap())
		return 1;
	usleep(hold * 1000);
	printf("%zu objects\n", n);
	fflush(stdout);
	_exit(0);
}
