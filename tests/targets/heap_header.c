/*
 * Heap test target (issue 8): what the in-process tracker's block header
 * (preload/block.h) must get right, each on its own line, and a signal
 * handler that frees counted blocks while the thread may be inside the
 * tracker. The program checks what it can itself (alignment, contents
 * kept by realloc, zeroed calloc, usable sizes) and exits non-zero on a
 * fault: 10 + the check's number.
 *
 *   heap_header [ITERS]
 *
 * Kept (bytes): HH_A32 1000 (memalign 32), HH_A64 2048 (aligned_alloc 64),
 * HH_A24 500 (memalign 24: glibc rounds it to 32), HH_A256 3000
 * (posix_memalign 256: no header, the live table), HH_GROWN 5000 (a
 * memalign(64) block realloc'd: moved to its realloc line, HH_GROW_FROM
 * freed), HH_USABLE_GROWN 400 (a block written up to malloc_usable_size,
 * then grown: every usable byte kept), HH_CALLOC 8000 (zeroed, on a
 * recycled dirty block). HH_ZERO: realloc(p, 0) frees p and returns NULL
 * (glibc's behaviour). HH_LOOP: ITERS blocks, each freed by the loop or by
 * the SIGALRM handler (every 100 us): nothing live at the end, every free
 * counted. HH_HANDLER: the handler's own pairs (counted or not, as the
 * signal lands: only never below zero).
 */
#include <malloc.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

void *volatile keep[16];
static void *volatile slot;

static void on_alarm(int sig)
{
	void *p = slot;

	slot = NULL;
	free(p); /* the loop's block, freed here */
	free(malloc(40)); /* HH_HANDLER */
}

static int aligned_to(void *p, uintptr_t a)
{
	return p && !((uintptr_t)p & (a - 1));
}

int main(int argc, char **argv)
{
	unsigned long iters = argc > 1 ? strtoul(argv[1], NULL, 10) : 2000000;
	struct itimerval it = { { 0, 100 }, { 0, 100 } };
	unsigned char *p, *q;
	size_t n;
	sigset_t set;

	keep[0] = memalign(32, 1000); /* HH_A32 */
	keep[1] = aligned_alloc(64, 2048); /* HH_A64 */
	keep[2] = memalign(24, 500); /* HH_A24 */
	if (posix_memalign((void **)&keep[3], 256, 3000)) /* HH_A256 */
		return 10;
	if (!aligned_to(keep[0], 32) || !aligned_to(keep[1], 64) || !aligned_to(keep[2], 32) ||
	    !aligned_to(keep[3], 256))
		return 11;
	if (malloc_usable_size(keep[0]) < 1000 || malloc_usable_size(keep[3]) < 3000)
		return 12;
	memset(keep[0], 1, malloc_usable_size(keep[0]));
	memset(keep[3], 1, malloc_usable_size(keep[3]));

	p = memalign(64, 100); /* HH_GROW_FROM */
	for (int i = 0; i < 100; i++)
		p[i] = (unsigned char)i;
	q = realloc(p, 5000); /* HH_GROWN */
	for (int i = 0; i < 100; i++)
		if (!q || q[i] != (unsigned char)i)
			return 13;
	keep[4] = q;

	p = malloc(100); /* HH_USABLE_FROM */
	n = malloc_usable_size(p);
	if (n < 100)
		return 14;
	memset(p, 0xab, n);	/* all of it is the program's (Redis does this) */
	q = realloc(p, 400); /* HH_USABLE_GROWN */
	for (size_t i = 0; i < (n < 400 ? n : 400); i++)
		if (!q || q[i] != 0xab)
			return 15;
	keep[5] = q;

	p = malloc(300); /* HH_ZERO_FROM */
	if (realloc(p, 0)) /* HH_ZERO */
		return 16;

	p = malloc(8000); /* HH_DIRTY */
	memset(p, 0x5a, 8000);
	free(p);
	q = calloc(1000, 8); /* HH_CALLOC */
	for (int i = 0; i < 8000; i++)
		if (!q || q[i])
			return 17;
	keep[6] = q;

	signal(SIGALRM, on_alarm);
	setitimer(ITIMER_REAL, &it, NULL);
	for (unsigned long i = 0; i < iters; i++) {
		void *b = malloc(64 + (i & 63)); /* HH_LOOP */

		if (!b)
			return 18;
		if (!slot)
			slot = b;	/* the handler frees it, or the loop below */
		else
			free(b);
		if ((i & 1023) == 0) {
			sigemptyset(&set);
			sigaddset(&set, SIGALRM);
			sigprocmask(SIG_BLOCK, &set, NULL);
			free(slot);
			slot = NULL;
			sigprocmask(SIG_UNBLOCK, &set, NULL);
		}
	}
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	signal(SIGALRM, SIG_IGN);
	free(slot);
	slot = NULL;
	usleep(100 * 1000);
	_exit(0);
}
