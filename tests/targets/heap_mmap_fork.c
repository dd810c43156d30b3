/*
 * Anonymous mappings across fork (issue 9): the parent maps 8 MiB
 * (HEAP_FORK_PARENT) and forks; the child maps 4 MiB of its own
 * (HEAP_FORK_CHILD) and unmaps its copy of the parent's 8 MiB, which it
 * never made: not a free of any of its sites. The parent keeps its 8 MiB.
 */
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define MIB (1u << 20)

int main(void)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS;
	char *a = mmap(NULL, 8 * MIB, PROT_READ | PROT_WRITE, flags, -1, 0); /* HEAP_FORK_PARENT */
	pid_t p;

	if (a == MAP_FAILED)
		return 1;
	memset(a, 1, 8 * MIB);
	p = fork();
	if (p < 0)
		return 1;
	if (!p) {
		char *b = mmap(NULL, 4 * MIB, PROT_READ | PROT_WRITE, flags, -1, 0); /* HEAP_FORK_CHILD */

		if (b == MAP_FAILED)
			_exit(1);
		memset(b, 2, 4 * MIB);
		munmap(a, 8 * MIB);
		usleep(500000);
		_exit(0);
	}
	waitpid(p, NULL, 0);
	usleep(300000);
	return 0;
}
