/*
 * CPU test target for process trees: the parent forks two workers and
 * waits (light: it sleeps); worker A spins on HOT:a, worker B on HOT:b, each
 * for argv[1] seconds of CPU time (default 2). rsprof record -- fork_workers must show
 * both children's lines (perf's inherit), each about half of the CPU.
 */
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

/* CPU time, not wall time: the shares hold on a busy machine */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noipa)) static void worker_a(double secs)
{
	double t0 = now();
	unsigned long x = 1;

	while (now() - t0 < secs)
		for (int i = 0; i < 20000; i++) x = x * 6364136223846793005UL + i; /* HOT:a */
	sink += x;
}

__attribute__((noipa)) static void worker_b(double secs)
{
	double t0 = now();
	unsigned long x = 3;

	while (now() - t0 < secs)
		for (int i = 0; i < 20000; i++) x = x * 2862933555777941757UL + i; /* HOT:b */
	sink += x;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2;
	pid_t a, b;

	a = fork();
	if (a == 0) {
		worker_a(secs);
		_exit(0);
	}
	b = fork();
	if (b == 0) {
		worker_b(secs);
		_exit(0);
	}
	if (a < 0 || b < 0)
		return 1;
	waitpid(a, NULL, 0);
	waitpid(b, NULL, 0);
	return 0;
}
