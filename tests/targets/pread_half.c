/*
 * CPU test target for kernel time: alternates 10 ms of computing in user
 * space (HOT:compute) with 10 ms of pread() of a file in the page cache
 * (the kernel copies it: kernel time), for argv[2] seconds (default 2);
 * argv[1] is the file to read (created, 4 MiB, when missing). About half
 * of its CPU time is in the kernel: perf reports do_compute near 50 %, and
 * so must rsprof unless --user-only.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FILE_SIZE (4 << 20)

static volatile unsigned long sink;
static char buf[1 << 20];

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noipa)) static void do_compute(double secs)
{
	double t0 = now();
	unsigned long x = 1;

	while (now() - t0 < secs)
		for (int i = 0; i < 20000; i++) x = x * 6364136223846793005UL + i; /* HOT:compute */
	sink += x;
}

__attribute__((noipa)) static void do_read(int fd, double secs)
{
	double t0 = now();

	while (now() - t0 < secs)
		for (off_t off = 0; off < FILE_SIZE; off += sizeof(buf))
			if (pread(fd, buf, sizeof(buf), off) < 0)
				exit(1);
}

int main(int argc, char **argv)
{
	double secs = argc > 2 ? atof(argv[2]) : 2, t0;
	int fd;

	if (argc < 2)
		return 2;
	fd = open(argv[1], O_RDWR | O_CREAT, 0600);
	if (fd < 0)
		return 1;
	memset(buf, 'x', sizeof(buf));
	for (off_t off = 0; off < FILE_SIZE; off += sizeof(buf))
		if (pwrite(fd, buf, sizeof(buf), off) != sizeof(buf))
			return 1;
	t0 = now();
	while (now() - t0 < secs) {
		do_compute(0.01);
		do_read(fd, 0.01);
	}
	close(fd);
	return 0;
}
