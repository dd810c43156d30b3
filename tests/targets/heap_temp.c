/*
 * Known temporary allocations (issue 14, heaptrack's definition: a block
 * freed by the thread that allocated it before that thread's next
 * allocation, the free directly following its allocation: no other
 * allocation or free of the thread in between). Per run:
 *   TEMP:a     300,000 allocs, 300,000 temporary (freed at once)
 *   TEMP:b     100,000 allocs, 100,000 temporary
 *   PAIR:first  50,000 allocs,       0 temporary (PAIR:second comes between)
 *   PAIR:second 50,000 allocs,       0 temporary (PAIR:first is freed between)
 *   KEEP:c     200,000 allocs,       0 temporary (freed in a batch after KEEP:d)
 *   KEEP:d           1 alloc,        0 temporary (never freed)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_A	300000
#define N_B	100000
#define N_PAIR	50000
#define N_C	200000

void *volatile sink;

__attribute__((noinline)) static void temp_a(void)
{
	char *p = malloc(100);	/* TEMP:a */

	memset(p, 1, 100);
	sink = p;
	free(p);
}

__attribute__((noinline)) static void temp_b(void)
{
	char *p = malloc(64);	/* TEMP:b */

	p[0] = 2;
	sink = p;
	free(p);
}

__attribute__((noinline)) static void pair(void)
{
	char *p = malloc(32);	/* PAIR:first */
	char *q = malloc(32);	/* PAIR:second */

	p[0] = q[0] = 3;
	sink = p;
	sink = q;
	free(p);
	free(q);
}

int main(void)
{
	char **keep = calloc(N_C, sizeof(*keep));
	char *d;

	for (int i = 0; i < N_A; i++) {
		temp_a();
		if (i % 3 == 0)
			temp_b();
		if (i % 6 == 0)
			pair();
	}
	for (int i = 0; i < N_C; i++) {
		keep[i] = malloc(48);	/* KEEP:c */
		keep[i][0] = 4;
	}
	d = malloc(1000);	/* KEEP:d */
	memset(d, 5, 1000);
	sink = d;
	for (int i = 0; i < N_C; i++)
		free(keep[i]);
	fprintf(stderr, "heap_temp: done\n");
	return 0;
}
