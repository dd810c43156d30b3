#ifndef RSPROF_UTIL_OUTFILE_H
#define RSPROF_UTIL_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

/*
 * The one way rsprof creates a file it writes: the profile and
 * its -wal/-shm, `timeline --svg`, anything given with -o.
 *
 * OUTFILE_NEW: the file must not exist: open(O_CREAT | O_EXCL | O_NOFOLLOW),
 * which never follows a link and never opens a device or a FIFO; the fd is
 * the new file itself.
 *
 * OUTFILE_REPLACE: a picture or export the user may write again over an
 * older one. The data goes to an unnamed file in the same directory
 * (O_TMPFILE; where the file system has none, a new file of a random name
 * made with O_EXCL), and outfile__commit() puts it at the path with
 * rename(), which replaces the directory entry and never writes through a
 * link. A path that is a symbolic link or anything but a regular file is
 * refused, before and at the commit. The reader sees the old file or the
 * whole new one, never half of it.
 *
 * Either way the file gets mode 0600 with fchmod() after the create, so a
 * umask can neither open it to others nor make it unreadable.
 * Errors are printed with the path; functions return 0 or -errno (-ELOOP
 * for a link, -EINVAL for a file that is not regular, -EEXIST).
 */
enum outfile_mode {
	OUTFILE_NEW,
	OUTFILE_REPLACE,
};

struct outfile {
	int fd;			/* open for reading and writing; -1 once closed */
	char *path;
	char *tmp;		/* REPLACE without O_TMPFILE: the temporary name */
	enum outfile_mode mode;
	dev_t dev;		/* of the file created, to remove only that one */
	ino_t ino;
};

int outfile__create(struct outfile *o, const char *path, enum outfile_mode mode);

/*
 * Done writing: REPLACE links the file at its path (rename); both close the
 * fd (its close() checked). 0 or -errno, printed; on an error the
 * temporary file is removed.
 */
int outfile__commit(struct outfile *o);

/*
 * Give up: close, and remove what outfile__create() made (the NEW file
 * while its path still names it, the temporary file). NULL-safe, idempotent.
 */
void outfile__abort(struct outfile *o);

/* Release without closing or removing: the caller keeps o->fd. Frees the names. */
void outfile__release(struct outfile *o);

/*
 * A stdio stream writing to the file: a duplicate of o->fd, to fclose()
 * (checked) before outfile__commit(). NULL with the error printed, errno
 * set.
 */
FILE *outfile__fdopen(struct outfile *o);

#endif
