#ifndef RSPROF_UTIL_DB_WAL_CHECKPOINTER_H
#define RSPROF_UTIL_DB_WAL_CHECKPOINTER_H

/*
 * The writer's WAL checkpoints in a thread of their own. Folding the WAL
 * back into the file (about 2,500 pages and two fsyncs once the indexes of
 * an hour's rows are large) took 40 ms of CPU and up to 100 ms of a
 * checkpoint's write every 25 checkpoints when the committing thread did it
 * (SQLite's wal_autocheckpoint). Here the writer's commit only tells a
 * thread with its own connection that the WAL has grown; the thread runs a
 * PASSIVE checkpoint, which never blocks the writer, and the writer's next
 * transaction starts the WAL over once it is all back in the file. Should
 * the WAL still grow past four times the threshold (readers holding old
 * snapshots), the writer checkpoints it itself, as before.
 */
struct sqlite3;
struct wal_checkpointer;

/*
 * For the writer connection sq of path: takes over its WAL hook and turns
 * its own autocheckpoint off. 0, or -errno / -RSPROF_EDB (the writer then
 * keeps wal_autocheckpoint; the caller may go on).
 */
int wal_checkpointer__start(struct sqlite3 *sq, const char *path, int frames,
			    struct wal_checkpointer **out);
/* Stops the thread and closes its connection: before the writer closes. NULL ok. */
void wal_checkpointer__stop(struct wal_checkpointer *w);

#endif
