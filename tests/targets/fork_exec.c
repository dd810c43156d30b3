/*
 * fork_exec SECONDS PROGRAM [ARG...]: spin on HOT:parent for SECONDS of CPU
 * time, then fork a child that execs PROGRAM, and wait for it. For the
 * privilege tests (t7300): an attached process whose child runs a setuid
 * program, followed by perf's inherit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noipa)) static void parent(double secs)
{
	double t0 = now();
	unsigned long x = 7;

	while (now() - t0 < secs)
		for (int i = 0; i < 20000; i++) x = x * 2862933555777941757UL + i; /* HOT:parent */
	sink += x;
}

int main(int argc, char **argv)
{
	pid_t child;

	if (argc < 3) {
		fprintf(stderr, "usage: fork_exec SECONDS PROGRAM [ARG...]\n");
		return 2;
	}
	parent(atof(argv[1]));
	child = fork();
	if (child == 0) {
		execv(argv[2], argv + 2);
		perror("execv");
		_exit(127);
	}
	if (child < 0)
		return 1;
	waitpid(child, NULL, 0);
	return 0;
}
