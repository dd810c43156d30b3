/*
 * Heap test target (issue 8): a process that replaces itself. It keeps
 * 1 MiB (EXEC_BEFORE), waits WAIT_MS, then execs PROGRAM with its
 * arguments: the memory goes with the old image.
 *
 *   heap_exec WAIT_MS PROGRAM [ARGS...]
 */
#include <stdlib.h>
#include <unistd.h>

void *volatile keep[16];

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	for (int i = 0; i < 16; i++)
		keep[i] = malloc(64 << 10); /* EXEC_BEFORE */
	usleep(strtoul(argv[1], NULL, 10) * 1000);
	execv(argv[2], argv + 2);
	return 127;
}
