#ifndef RSPROF_UTIL_DB_WAL_BUFFER_H
#define RSPROF_UTIL_DB_WAL_BUFFER_H

/*
 * The writer's WAL appends gathered into one write(2) per commit. SQLite
 * writes a WAL frame with two calls, its 24-byte header and its page, so
 * a checkpoint that dirties ~2,500 pages (one per address in each seed
 * addr index) made ~5,000 system calls in its commit. The writer opens
 * its file through a VFS of ours, the default one but for the WAL file:
 * writes that follow each other are kept in memory and written at once
 * when the page of a commit frame has been written, which is before
 * SQLite publishes the commit in the WAL index (no reader can look for
 * those frames earlier), and before anything else is done with the file
 * (read, sync, truncate, size, close, or a write elsewhere). A process
 * killed with frames in memory has not committed them: SQLite's recovery
 * ignores a WAL that ends before a commit frame, as after a torn write.
 */

/*
 * The name of the VFS to open the writer's connection with (registered
 * on the first call), or NULL when it could not be (the default VFS then).
 */
const char *wal_buffer__vfs(void);

#endif
