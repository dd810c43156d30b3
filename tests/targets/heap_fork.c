/*
 * Heap test target (issue 8): a process that forks, where parent and child
 * both allocate, and whose children run other programs.
 *
 *   heap_fork DIR
 *
 * The parent keeps 256 KiB before the fork (FORK_BEFORE: 64 blocks of
 * 4 KiB) and 512 KiB after it (FORK_AFTER: 128 blocks of 4 KiB), and frees
 * 32 of the first blocks (FORK_FREE). The child churns 100000 pairs
 * (FORK_CHILD_CHURN), keeps 2 MiB (FORK_CHILD_KEEP), frees every block it
 * inherited, then execs a shell that writes into DIR/child-env whether
 * LD_PRELOAD still names the heap tracker. The parent then runs, through
 * system() (posix_spawn: no fork handlers), a shell whose own child
 * writes into DIR/spawned-maps how many of its mappings are the tracker.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void *volatile before[64], *volatile after[128], *volatile ckeep[8];

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";
	char cmd[4096];
	int status;
	pid_t pid;

	for (int i = 0; i < 64; i++)
		before[i] = malloc(4096); /* FORK_BEFORE */
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		for (int i = 0; i < 100000; i++)
			free(malloc(48)); /* FORK_CHILD_CHURN */
		for (int i = 0; i < 8; i++)
			ckeep[i] = malloc(256 << 10); /* FORK_CHILD_KEEP */
		for (int i = 0; i < 64; i++)
			free(before[i]);
		snprintf(cmd, sizeof(cmd),
			 "case \"$LD_PRELOAD\" in *librsprof-heap*) echo preloaded;; *) echo clean;; esac"
			 " >'%s/child-env'", dir);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 128; i++)
		after[i] = malloc(4096); /* FORK_AFTER */
	for (int i = 0; i < 32; i++)
		free(before[i]); /* FORK_FREE */
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return 2;
	snprintf(cmd, sizeof(cmd), "grep -c librsprof-heap /proc/self/maps >'%s/spawned-maps'", dir);
	if (system(cmd) < 0)
		return 3;
	return 0;
}
