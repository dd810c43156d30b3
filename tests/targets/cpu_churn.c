/*
 * CPU test target for thread churn: for argv[1] seconds (default 3), start
 * a thread that spins ~30 ms in its own function (HOT:churn), join it,
 * start the next one. rsprof must follow the new threads and close the
 * events of the dead ones.
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noipa)) static void *churn(void *arg)
{
	double t0 = now();
	unsigned long x = 1;

	while (now() - t0 < 0.03)
		for (int i = 0; i < 10000; i++) x = x * 6364136223846793005UL + i; /* HOT:churn */
	sink += x;
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3, t0 = now();

	while (now() - t0 < secs) {
		pthread_t t;

		if (pthread_create(&t, NULL, churn, NULL))
			return 1;
		pthread_join(t, NULL);
	}
	return 0;
}
