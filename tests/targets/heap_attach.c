/*
 * Heap test target (issue 3, test 3): memory allocated before rsprof
 * attaches and freed after.
 *
 *   heap_attach READY_FILE GO_FILE [HOLD_MS]
 *
 * Allocates 2000 blocks of 4 KiB (HEAP_BEFORE), creates READY_FILE, waits
 * (up to 20 s) for GO_FILE to exist, frees the 2000 blocks, allocates
 * 2 MiB that stay (HEAP_AFTER), churns a little (HEAP_CHURN), holds HOLD_MS
 * and exits without freeing.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define N_BEFORE 2000

static void *before[N_BEFORE];
static void *after[2];

int main(int argc, char **argv)
{
	unsigned long hold = argc > 3 ? strtoul(argv[3], NULL, 10) : 500;
	int fd;

	if (argc < 3)
		return 2;
	for (int i = 0; i < N_BEFORE; i++)
		before[i] = malloc(4096); /* HEAP_BEFORE */
	fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return 1;
	close(fd);
	for (int i = 0; i < 2000 && access(argv[2], F_OK); i++)
		usleep(10000);
	for (int i = 0; i < N_BEFORE; i++)
		free(before[i]);
	for (int i = 0; i < 2; i++)
		after[i] = malloc(1u << 20); /* HEAP_AFTER */
	for (int i = 0; i < 10000; i++) {
		volatile char *p = malloc(48); /* HEAP_CHURN */

		if (!p)
			return 1;
		p[0] = 1;
		free((void *)p);
	}
	usleep(hold * 1000);
	_exit(after[0] && after[1] ? 0 : 1);
}
