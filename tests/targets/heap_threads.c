/*
 * Heap test target (issue 3, test 4): several threads allocate at once.
 *
 *   heap_threads [THREADS [CHURN [HOLD_MS]]]
 *
 * Each thread keeps 1024 blocks of 1 KiB (HEAP_KEEP, 1 MiB a thread),
 * grows one buffer with realloc to 256 KiB (HEAP_GROW) and churns CHURN
 * malloc+free pairs (HEAP_CHURN); then all hold HOLD_MS and the process
 * exits without freeing.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static unsigned long churn_n = 100000;

static void *worker(void *arg)
{
	void **keep = calloc(1024, sizeof(*keep));
	char *buf = NULL;
	size_t cap = 0;
	unsigned long sum = 0;

	for (int i = 0; keep && i < 1024; i++)
		keep[i] = malloc(1024); /* HEAP_KEEP */
	while (cap < (256u << 10)) {
		cap = cap ? cap * 2 : 1024;
		buf = realloc(buf, cap); /* HEAP_GROW */
		if (!buf)
			abort();
		buf[cap - 1] = 1;
	}
	for (unsigned long i = 0; i < churn_n; i++) {
		volatile char *p = malloc(24 + (i & 63)); /* HEAP_CHURN */

		if (!p)
			abort();
		p[0] = (char)i;
		sum += p[0];
		free((void *)p);
	}
	return (void *)(sum + (unsigned long)buf + (unsigned long)keep);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	unsigned long hold = argc > 3 ? strtoul(argv[3], NULL, 10) : 500;
	pthread_t t[64];

	if (argc > 2)
		churn_n = strtoul(argv[2], NULL, 10);
	if (n < 1 || n > 64)
		return 2;
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, worker, NULL))
			return 1;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	usleep(hold * 1000);
	_exit(0);
}
