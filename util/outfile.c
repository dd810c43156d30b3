#include "util/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/error.h"

#define OUT_MODE 0600

/* Refuse to replace anything but a regular file (or nothing). 0 or -errno, printed. */
static int check_target(const char *path)
{
	struct stat st;

	if (lstat(path, &st)) {
		if (errno == ENOENT)
			return 0;
		pr_err("cannot write '%s': %s", path, strerror(errno));
		return -errno;
	}
	if (S_ISLNK(st.st_mode)) {
		pr_err("cannot write '%s': it is a symbolic link, and rsprof never writes "
		       "through one", path);
		pr_hint("give the path of the file itself");
		return -ELOOP;
	}
	if (!S_ISREG(st.st_mode)) {
		pr_err("cannot write '%s': not a regular file", path);
		pr_hint("give the path of a new or regular file");
		return -EINVAL;
	}
	return 0;
}

/* The directory of path, malloc'd ("." for a bare name). */
static char *dir_of(const char *path)
{
	char *copy = strdup(path), *d;

	if (!copy)
		return NULL;
	d = strdup(dirname(copy));
	free(copy);
	return d;
}

/* "dir/.name.XXXXXX" with random letters; malloc'd. */
static char *temp_name(const char *path)
{
	static const char abc[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	const char *slash = strrchr(path, '/');
	unsigned char rnd[8];
	char *t;
	int dl = slash ? (int)(slash - path + 1) : 0;

	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return NULL;
	if (asprintf(&t, "%.*s.%s.XXXXXXXX", dl, path, slash ? slash + 1 : path) < 0)
		return NULL;
	for (size_t i = 0; i < sizeof(rnd); i++)
		t[strlen(t) - 8 + i] = abc[rnd[i] % (sizeof(abc) - 1)];
	return t;
}

/* A new file, never an existing one, a link or a device; mode 0600. -errno or the fd. */
static int create_new(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY,
		      OUT_MODE);

	if (fd < 0)
		return -errno;
	if (fchmod(fd, OUT_MODE)) {
		int err = -errno;

		close(fd);
		unlink(path);
		return err;
	}
	return fd;
}

static void print_create_error(const char *path, int err)
{
	struct stat st;

	if (err == -EEXIST && !lstat(path, &st) && S_ISLNK(st.st_mode))
		pr_err("cannot create '%s': a symbolic link of that name exists, and rsprof "
		       "never writes through one", path);
	else if (err == -EEXIST)
		pr_err("cannot create '%s': a file of that name exists", path);
	else
		pr_err("cannot create '%s': %s", path, strerror(-err));
}

int outfile__create(struct outfile *o, const char *path, enum outfile_mode mode)
{
	struct stat st;
	int fd, err;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	o->mode = mode;
	o->path = strdup(path);
	if (!o->path)
		return -ENOMEM;
	if (mode == OUTFILE_NEW) {
		fd = create_new(path);
		if (fd < 0) {
			print_create_error(path, fd);
			err = fd;
			goto fail;
		}
	} else {
		char *dir = dir_of(path);

		err = check_target(path);
		if (err) {
			free(dir);
			goto fail;
		}
		if (!dir) {
			err = -ENOMEM;
			goto fail;
		}
		fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, OUT_MODE);
		err = fd < 0 ? -errno : 0;
		free(dir);
		if (fd >= 0 && fchmod(fd, OUT_MODE)) {
			err = -errno;
			close(fd);
			fd = -1;
		}
		/* no O_TMPFILE here (file system, kernel): a new file of a random name */
		for (int i = 0; fd < 0 && (err == -EOPNOTSUPP || err == -EISDIR ||
					   err == -EINVAL || err == -EEXIST) && i < 16; i++) {
			free(o->tmp);
			o->tmp = temp_name(path);
			if (!o->tmp) {
				err = -ENOMEM;
				break;
			}
			fd = create_new(o->tmp);
			err = fd < 0 ? fd : 0;
		}
		if (fd < 0) {
			pr_err("cannot write '%s': %s", path, strerror(-err));
			goto fail;
		}
	}
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		goto fail;
	}
	o->fd = fd;
	o->dev = st.st_dev;
	o->ino = st.st_ino;
	return 0;
fail:
	if (o->tmp)
		unlink(o->tmp);
	free(o->tmp);
	free(o->path);
	memset(o, 0, sizeof(*o));
	o->fd = -1;
	return err;
}

/* Name the unnamed (O_TMPFILE) file: a link at a new random name. 0 or -errno. */
static int link_tmpfile(struct outfile *o)
{
	char proc[64];
	int err = -EEXIST;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", o->fd);
	for (int i = 0; i < 16 && err == -EEXIST; i++) {
		free(o->tmp);
		o->tmp = temp_name(o->path);
		if (!o->tmp)
			return -ENOMEM;
		err = 0;
		if (linkat(AT_FDCWD, proc, AT_FDCWD, o->tmp, AT_SYMLINK_FOLLOW) &&
		    linkat(o->fd, "", AT_FDCWD, o->tmp, AT_EMPTY_PATH))
			err = -errno;
	}
	if (err) {
		free(o->tmp);
		o->tmp = NULL;
	}
	return err;
}

int outfile__commit(struct outfile *o)
{
	int err = 0;

	if (o->fd < 0)
		return -EBADF;
	if (o->mode == OUTFILE_REPLACE) {
		if (!o->tmp)
			err = link_tmpfile(o);
		if (!err)
			err = check_target(o->path);
		else
			pr_err("cannot write '%s': %s", o->path, strerror(-err));
		if (!err && rename(o->tmp, o->path)) {
			err = -errno;
			pr_err("cannot write '%s': %s", o->path, strerror(errno));
		}
		if (err && o->tmp)
			unlink(o->tmp);
	}
	if (close(o->fd) && !err) {
		err = -errno;
		pr_err("cannot write '%s': %s", o->path, strerror(errno));
	}
	o->fd = -1;
	outfile__release(o);
	return err;
}

void outfile__abort(struct outfile *o)
{
	struct stat st;

	if (!o || !o->path)
		return;
	if (o->mode == OUTFILE_NEW) {
		/* only the file this created, not one put there since */
		if (!lstat(o->path, &st) && st.st_dev == o->dev && st.st_ino == o->ino)
			unlink(o->path);
	} else if (o->tmp) {
		unlink(o->tmp);
	}
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	outfile__release(o);
}

void outfile__release(struct outfile *o)
{
	if (!o)
		return;
	free(o->path);
	free(o->tmp);
	o->path = o->tmp = NULL;
}

FILE *outfile__fdopen(struct outfile *o)
{
	int fd = dup(o->fd);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	if (!f) {
		int e = errno;

		pr_err("cannot write '%s': %s", o->path, strerror(e));
		if (fd >= 0)
			close(fd);
		errno = e;
	}
	return f;
}
