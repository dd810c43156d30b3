/*
 * CPU test target for JIT code: copies a small function (a counting loop)
 * into an anonymous executable mapping, names it in /tmp/perf-PID.map the
 * way JITs do for perf ("START SIZE NAME", hex), and calls it for argv[1]
 * seconds (default 2). The samples fall in memory that belongs to no file:
 * only the perf map can name them. The map is removed at the end unless
 * argv[2] is "keep".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* x86-64: 1: dec %rdi; jnz 1b; ret */
static const unsigned char code[] = { 0x48, 0xff, 0xcf, 0x75, 0xfb, 0xc3 };

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2, t0;
	char path[64];
	void (*fn)(unsigned long);
	unsigned char *mem;
	FILE *f;

	mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
		   -1, 0);
	if (mem == MAP_FAILED)
		return 1;
	/* a little way into the page, as a JIT's code cache would place it */
	memcpy(mem + 64, code, sizeof(code));
	fn = (void (*)(unsigned long))(void *)(mem + 64);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(path, "w");
	if (!f)
		return 1;
	fprintf(f, "%lx %zx jit_spin_loop\n", (unsigned long)(mem + 64), sizeof(code));
	fclose(f);
	t0 = now();
	while (now() - t0 < secs)
		fn(1000000);
	if (argc < 3 || strcmp(argv[2], "keep"))
		unlink(path);
	return 0;
}
