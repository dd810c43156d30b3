/*
 * Allocation churn: each of THREADS threads allocates N small blocks
 * (16 to 128 bytes), keeping the last 64 and freeing the one before, then
 * frees what it kept: N allocations and N frees per thread, all at the
 * line marked CHURN:alloc. It prints its own count and a checksum of the
 * bytes it wrote (no address, no time: the same output on every run).
 *   heap_churn [N] [THREADS]	(default 100000 1)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEEP	64

static long n_blocks = 100000;

struct worker {
	pthread_t t;
	int id;
	unsigned long allocs, frees, sum;
};

__attribute__((noinline)) static unsigned char *churn_one(long i, int id)
{
	size_t size = 16 + (size_t)((i * 7 + id) % 113);
	unsigned char *p = malloc(size);	/* CHURN:alloc */

	if (!p)
		abort();
	memset(p, (int)(i + id), size);
	return p;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	unsigned char *keep[KEEP] = { 0 };

	for (long i = 0; i < n_blocks; i++) {
		unsigned char *p = churn_one(i, w->id);

		w->allocs++;
		w->sum += p[0];
		if (keep[i % KEEP]) {
			free(keep[i % KEEP]);
			w->frees++;
		}
		keep[i % KEEP] = p;
	}
	for (int k = 0; k < KEEP; k++) {
		if (keep[k]) {
			free(keep[k]);
			w->frees++;
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 2 ? atoi(argv[2]) : 1;
	unsigned long allocs = 0, frees = 0, sum = 0;
	struct worker *w;

	if (argc > 1)
		n_blocks = atol(argv[1]);
	if (threads < 1 || n_blocks < 1) {
		fprintf(stderr, "usage: heap_churn [N] [THREADS]\n");
		return 2;
	}
	w = calloc((size_t)threads, sizeof(*w));
	if (!w)
		return 1;
	for (int i = 0; i < threads; i++) {
		w[i].id = i;
		if (threads > 1 && pthread_create(&w[i].t, NULL, work, &w[i]))
			return 1;
	}
	if (threads == 1)
		work(&w[0]);
	for (int i = 0; i < threads; i++) {
		if (threads > 1 && pthread_join(w[i].t, NULL))
			return 1;
		allocs += w[i].allocs;
		frees += w[i].frees;
		sum += w[i].sum;
	}
	printf("heap_churn: %lu allocations, %lu frees in %d thread%s, checksum %lu\n", allocs,
	       frees, threads, threads == 1 ? "" : "s", sum);
	free(w);
	return 0;
}
