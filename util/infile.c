#include "util/infile.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

int infile__open(const char *path, unsigned int flags, struct stat *st)
{
	struct stat sb;
	int fd, fl, err;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK |
		  (flags & INFILE_NOFOLLOW ? O_NOFOLLOW : 0));
	if (fd < 0)
		return -errno;
	if (fstat(fd, &sb))
		err = -errno;
	else if (!S_ISREG(sb.st_mode))
		err = S_ISDIR(sb.st_mode) ? -EISDIR : -EINVAL;
	else if ((fl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
		err = -errno;
	else
		err = 0;
	if (err) {
		close(fd);
		return err;
	}
	if (st)
		*st = sb;
	return fd;
}

FILE *infile__fopen(const char *path, unsigned int flags, struct stat *st)
{
	int fd = infile__open(path, flags, st);
	FILE *f;

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	f = fdopen(fd, "r");
	if (!f) {
		int e = errno;

		close(fd);
		errno = e;
	}
	return f;
}
