#ifndef RSPROF_UTIL_DB_FDOPEN_H
#define RSPROF_UTIL_DB_FDOPEN_H

/*
 * SQLite opens a profile by its name; the readers check the file first
 * through a descriptor of their own (regular, not a FIFO, its length:
 * db.c). Between the check and SQLite's open() the name could be made to
 * point elsewhere (a FIFO that hangs the reader, a device). While armed,
 * SQLite's open() of a file with the checked file's base name gets a
 * duplicate of the checked descriptor instead of a new open by name: the
 * file read is the file checked. Through the unix VFS's own hook for its
 * system calls (sqlite3_vfs.xSetSystemCall("open")). Per thread.
 *
 *	fdopen__arm(fd, path);
 *	sqlite3_open_v2(path, ...);
 *	fdopen__disarm();
 *
 * The -wal and -shm files are opened by their own names (db.c checks them).
 */
void fdopen__arm(int fd, const char *path);
void fdopen__disarm(void);

#endif
