/*
 * Linked into the unit tests and the test helpers, never into rsprof:
 * fdatasync() and fsync() that return at once. These programs write
 * profiles of thousands of checkpoints in seconds, and the writer's copy of
 * its WAL into the file syncs it three times a checkpoint
 * (util/db/wal-checkpointer.h): test-totals alone made some 100,000 syncs,
 * two thirds of its wall time on a shared disk. What a sync guards against,
 * the machine going down, no test checks; the calls are made and succeed
 * as before. An executable's definitions come before libc's for every
 * library it loads, SQLite's included.
 */
#include <unistd.h>

int fdatasync(int fd)
{
	(void)fd;
	return 0;
}

int fsync(int fd)
{
	(void)fd;
	return 0;
}
