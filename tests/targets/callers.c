/*
 * Call graph test target: leaf() is the only hot function; a() calls it
 * with three times the work of b(), so 75 % of leaf's samples come through
 * a and 25 % through b (CALL:a, CALL:b mark the call sites, HOT:leaf the
 * hot line). The heap side is the same shape: keep() retains 3 MiB through
 * a and 1 MiB through b (KEEP:a, KEEP:b), in 64 KiB blocks, during the
 * first rounds. Usage: callers [SECONDS] (of CPU time; default: run forever).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define UNIT 100000UL
#define BLOCK (64 * 1024)

static volatile unsigned long sink;
/* volatile: the compiler may not drop an allocation nobody reads */
static void *volatile kept[64];
static int n_kept;

/*
 * GCC 12 keeps no frame pointer in a function that calls nothing, even with
 * -fno-omit-frame-pointer: a sample in such a leaf unwinds from its
 * caller's frame, which loses the caller itself (perf's frame-pointer
 * callchains have the same gap). leaf() calls begin() so it has a frame.
 */
__attribute__((noipa)) static unsigned long begin(void)
{
	return 1;
}

__attribute__((noipa)) static unsigned long leaf(unsigned long n)
{
	unsigned long x = begin();

	for (unsigned long i = 0; i < n; i++) x = x * 6364136223846793005UL + i; /* HOT:leaf */
	return x;
}

__attribute__((noipa)) static void keep(void)
{
	if (n_kept < 64) {
		char *p = malloc(BLOCK); /* KEEP:site */

		memset(p, 1, BLOCK);
		kept[n_kept] = p;
		n_kept++;
	}
}

__attribute__((noipa)) static unsigned long a(void)
{
	keep(); keep(); keep(); /* KEEP:a */
	return leaf(3 * UNIT) + 1; /* CALL:a (+ 1: a call, not a jump to leaf) */
}

__attribute__((noipa)) static unsigned long b(void)
{
	keep(); /* KEEP:b */
	return leaf(UNIT) + 1; /* CALL:b */
}

/* CPU time, not wall time: enough samples for the 3:1 split on a busy machine */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0, t0 = now();

	for (;;) {
		sink += a();
		sink += b();
		if (secs > 0 && now() - t0 >= secs)
			break;
	}
	return 0;
}
