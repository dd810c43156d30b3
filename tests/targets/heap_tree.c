/*
 * Heap test target (issues 8, 10): a process tree where every process
 * allocates known bytes on known lines.
 *
 *   heap_tree [DIR]
 *
 * The parent keeps 100 blocks of 4 KiB (TREE_PARENT) and forks two
 * children that allocate while it waits: the first keeps 3 blocks of
 * 64 KiB (TREE_CHILD_A), the second 5 blocks of 32 KiB (TREE_CHILD_B);
 * both churn 1000 pairs of 48 bytes (TREE_CHURN) and free every block
 * they inherited from the parent (their unknown frees), then exit without
 * freeing what they keep. The parent then frees 20 of its blocks
 * (TREE_PARENT_FREE). With DIR, the parent's pid goes into DIR/parent.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

void *volatile parent[100], *volatile kept[8];
void *volatile churn;

static void child(int n, size_t size)
{
	for (int i = 0; i < 1000; i++) {
		churn = malloc(48); /* TREE_CHURN */
		free(churn);
	}
	for (int i = 0; i < n; i++) {
		if (size == 64 << 10)
			kept[i] = malloc(size); /* TREE_CHILD_A */
		else
			kept[i] = malloc(size); /* TREE_CHILD_B */
	}
	for (int i = 0; i < 100; i++)
		free(parent[i]);
	_exit(0);
}

int main(int argc, char **argv)
{
	pid_t a, b;
	int st;

	for (int i = 0; i < 100; i++)
		parent[i] = malloc(4096); /* TREE_PARENT */
	if (argc > 1) {
		char path[4096];
		FILE *f;

		snprintf(path, sizeof(path), "%s/parent", argv[1]);
		f = fopen(path, "w"); /* TREE_FOPEN */
		if (!f)
			return 1;
		fprintf(f, "%d\n", (int)getpid()); /* TREE_STDIO */
		fclose(f);
	}
	a = fork();
	if (a == 0)
		child(3, 64 << 10);
	b = fork();
	if (b == 0)
		child(5, 32 << 10);
	if (a < 0 || b < 0 || waitpid(a, &st, 0) != a || !WIFEXITED(st) ||
	    waitpid(b, &st, 0) != b || !WIFEXITED(st))
		return 2;
	for (int i = 0; i < 20; i++)
		free(parent[i]); /* TREE_PARENT_FREE */
	return 0;
}
