/*
 * Heap test target (issue 8): 8 threads allocate while threads start and
 * exit. ROUNDS rounds; in each, 8 threads start, and each
 *   keeps 16 blocks of 1 KiB (CHURN_KEEP),
 *   frees the 16 blocks a thread of the previous round kept (CHURN_HANDOFF
 *   allocated them there: cross-thread frees of exited threads' blocks),
 *   churns 2000 malloc+free pairs (CHURN_PAIRS),
 * then exits; the main thread joins the round and starts the next.
 *
 *   heap_thread_churn [ROUNDS [HOLD_MS]]
 *
 * At the end: the last round's 8 x 16 KiB live on CHURN_KEEP; every earlier
 * round's blocks freed; ROUNDS x 8 x 16 allocations on CHURN_KEEP.
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#define THREADS 8
#define KEEP 16
#define PAIRS 2000

static void *slots[THREADS][KEEP];

static void *worker(void *arg)
{
	long t = (long)arg;

	for (int i = 0; i < KEEP; i++) {
		free(slots[t][i]); /* CHURN_HANDOFF */
		slots[t][i] = malloc(1024); /* CHURN_KEEP */
	}
	for (int i = 0; i < PAIRS; i++) {
		volatile char *p = malloc(32 + (i & 31)); /* CHURN_PAIRS */

		if (!p)
			abort();
		p[0] = 1;
		free((void *)p);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 50;
	unsigned long hold = argc > 2 ? strtoul(argv[2], NULL, 10) : 100;
	pthread_t th[THREADS];

	for (int r = 0; r < rounds; r++) {
		for (long t = 0; t < THREADS; t++)
			if (pthread_create(&th[t], NULL, worker, (void *)t))
				return 1;
		for (int t = 0; t < THREADS; t++)
			pthread_join(th[t], NULL);
	}
	usleep(hold * 1000);
	_exit(0);
}
