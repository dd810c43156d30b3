/*
 * CPU test target for threads that start after rsprof attached: the main
 * thread waits until the file named by argv[1] exists (the test creates it
 * once rsprof is recording), then starts three threads, each spinning in its
 * own function (HOT:t1, HOT:t2, HOT:t3), and runs for argv[2] seconds.
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile int stop;
static volatile unsigned long sink;

__attribute__((noipa)) static void *thread_one(void *arg)
{
	unsigned long x = 1;

	while (!stop) for (int i = 0; i < 100000; i++) x = x * 6364136223846793005UL + i; /* HOT:t1 */
	sink += x;
	return NULL;
}

__attribute__((noipa)) static void *thread_two(void *arg)
{
	unsigned long x = 3;

	while (!stop) for (int i = 0; i < 100000; i++) x = x * 2862933555777941757UL + i; /* HOT:t2 */
	sink += x;
	return NULL;
}

__attribute__((noipa)) static void *thread_three(void *arg)
{
	unsigned long x = 7;

	while (!stop) for (int i = 0; i < 100000; i++) x = x * 3202034522624059733UL + i; /* HOT:t3 */
	sink += x;
	return NULL;
}

int main(int argc, char **argv)
{
	void *(*fn[])(void *) = { thread_one, thread_two, thread_three };
	pthread_t t[3];
	double secs = argc > 2 ? atof(argv[2]) : 3;

	if (argc > 1)
		while (access(argv[1], F_OK))
			usleep(10000);
	for (int i = 0; i < 3; i++)
		if (pthread_create(&t[i], NULL, fn[i], NULL))
			return 1;
	usleep((useconds_t)(secs * 1e6));
	stop = 1;
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	return 0;
}
