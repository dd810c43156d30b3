#ifndef RSPROF_UTIL_INFILE_H
#define RSPROF_UTIL_INFILE_H

#include <stdio.h>
#include <sys/stat.h>

/*
 * The one way rsprof opens a file it reads that someone else may have put
 * there or may swap (the counterpart of util/outfile.h): a JIT's
 * /tmp/perf-PID.map, the sources, executables, libraries and debug files
 * a recording or a profile names. The open is O_NONBLOCK, so a FIFO or a
 * device put there cannot block it; fstat() of the descriptor then checks
 * that what was opened is a regular file (-EISDIR for a directory,
 * -EINVAL for anything else), whatever the path names a moment later; then
 * O_NONBLOCK is cleared for the reads. INFILE_NOFOLLOW: the last component
 * must not be a symbolic link either (-ELOOP), for a file in a directory
 * others may write to (/tmp).
 */
#define INFILE_NOFOLLOW	(1u << 0)

/* The fd (O_RDONLY, close-on-exec) or -errno; *st (NULL: not wanted) the file's. */
int infile__open(const char *path, unsigned int flags, struct stat *st);
/* The same as a stdio stream; NULL with errno set. */
FILE *infile__fopen(const char *path, unsigned int flags, struct stat *st);

#endif
