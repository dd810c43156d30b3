/* util/infile.h: files rsprof reads that others may have put there or swap. */
#include "util/infile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"

static char dir[] = "/tmp/rsprof-test-infile.XXXXXX";
static char map[300], fifo[300], link_[300], fifolink[300], none[300];

int main(void)
{
	struct stat st;
	char line[64] = "";
	FILE *f;
	int fd;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(map, sizeof(map), "%s/map", dir);
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	snprintf(link_, sizeof(link_), "%s/link", dir);
	snprintf(fifolink, sizeof(fifolink), "%s/fifolink", dir);
	snprintf(none, sizeof(none), "%s/none", dir);
	f = fopen(map, "w");
	if (f) {
		fputs("1000 10 jit_fn\n", f);
		fclose(f);
	}
	fd = infile__open(map, INFILE_NOFOLLOW, &st);
	ok(fd >= 0, "a regular file opens");
	is_int((int)st.st_size, 15, "with its stat");
	ok(fd >= 0 && !(fcntl(fd, F_GETFL) & O_NONBLOCK), "and blocking reads again");
	if (fd >= 0)
		close(fd);
	f = infile__fopen(map, 0, NULL);
	ok(f && fgets(line, sizeof(line), f), "as a stdio stream");
	is_str(line, "1000 10 jit_fn\n", "which reads it");
	if (f)
		fclose(f);

	/* a FIFO in its place: refused at once, not a reader blocked in open() */
	ok(!mkfifo(fifo, 0600), "mkfifo");
	is_int(infile__open(fifo, 0, NULL), -EINVAL, "a FIFO: -EINVAL, no block");
	ok(!infile__fopen(fifo, INFILE_NOFOLLOW, NULL) && errno == EINVAL,
	   "as a stream too");
	is_int(infile__open(dir, 0, NULL), -EISDIR, "a directory: -EISDIR");
	is_int(infile__open(none, 0, NULL), -ENOENT, "a missing file: -ENOENT");

	/* a link planted in a shared directory */
	ok(!symlink(map, link_), "symlink");
	is_int(infile__open(link_, INFILE_NOFOLLOW, NULL), -ELOOP,
	       "INFILE_NOFOLLOW: a link is refused (-ELOOP)");
	fd = infile__open(link_, 0, NULL);
	ok(fd >= 0, "without it a link to a regular file opens");
	if (fd >= 0)
		close(fd);
	ok(!symlink(fifo, fifolink), "symlink to the FIFO");
	is_int(infile__open(fifolink, 0, NULL), -EINVAL, "a link to a FIFO: -EINVAL");

	unlink(map);
	unlink(fifo);
	unlink(link_);
	unlink(fifolink);
	rmdir(dir);
	return done_testing();
}
