/*
 * CPU test target for short-lived threads: for argv[1] seconds (default 2),
 * start a thread that spins ~5 ms in its own function (HOT:task), join it,
 * start the next one: a worker pool that spawns a thread per task. A
 * profiler that finds threads by looking at /proc misses most of each
 * thread's life; inherited perf events sample it from its first
 * instruction. At the end, the CPU time of the whole process (every
 * thread, getrusage) is written to argv[2] when given, in seconds: the
 * test compares samples per CPU second with perf's.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* CPU time of this thread: 5 ms of it, however busy the machine is */
static double thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noipa)) static void *pool_task(void *arg)
{
	double t0 = thread_cpu();
	unsigned long x = 1;

	while (thread_cpu() - t0 < 0.005)
		for (int i = 0; i < 2000; i++) x = x * 6364136223846793005UL + i; /* HOT:task */
	sink += x;
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2, t0 = now();
	struct rusage ru;
	long threads = 0;

	while (now() - t0 < secs) {
		pthread_t t;

		if (pthread_create(&t, NULL, pool_task, NULL))
			return 1;
		pthread_join(t, NULL);
		threads++;
	}
	if (argc > 2 && !getrusage(RUSAGE_SELF, &ru)) {
		FILE *f = fopen(argv[2], "w");

		if (!f)
			return 1;
		fprintf(f, "%.4f %ld\n", ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
			ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6, threads);
		fclose(f);
	}
	return 0;
}
