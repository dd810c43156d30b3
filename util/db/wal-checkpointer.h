#ifndef RSPROF_UTIL_DB_WAL_CHECKPOINTER_H
#define RSPROF_UTIL_DB_WAL_CHECKPOINTER_H

#include <stdint.h>

/*
 * The writer's WAL copied into the database file by a thread of its own,
 * after every commit: the .db alone (copied, or left by SIGKILL, an OOM
 * kill or a crash) then holds every finished checkpoint but the one being
 * copied. Done in the committing thread (a PASSIVE checkpoint after each
 * commit), the copy and its three fdatasync() calls added 80 % to a
 * checkpoint's write time on the one-hour fixture; here the commit only
 * signals the thread, which runs the PASSIVE checkpoint on its own
 * connection (it never blocks the writer), and the writer's next
 * transaction starts the WAL over once it is all back in the file.
 *
 * Before its next transaction the writer waits for the copy of the last
 * one (wal_checkpointer__wait()): at one checkpoint a second the copy has
 * long finished, so the wait costs nothing, and the .db never lags by more
 * than one checkpoint. A reader holding an old snapshot can hold part of a
 * copy back to the next one; should the WAL grow past max_frames anyway,
 * the writer copies it itself at its commit.
 */
struct sqlite3;
struct wal_checkpointer;

struct wal_checkpointer_stats {
	uint64_t copies;	/* PASSIVE checkpoints run by the thread */
	uint64_t cpu_ns;	/* the thread's CPU time in them */
	uint64_t wall_ns;	/* their wall-clock time */
	uint64_t wait_ns;	/* the writer's time in wal_checkpointer__wait() */
};

/*
 * For the writer connection sq of path: takes over its WAL hook (SQLite's
 * autocheckpoint is off from then on). 0, or -errno / -RSPROF_EDB (the
 * writer then keeps its own checkpoints; the caller may go on).
 */
int wal_checkpointer__start(struct sqlite3 *sq, const char *path, int max_frames,
			    struct wal_checkpointer **out);
/* On the writer's thread, before a transaction: the last commit's copy done. NULL ok. */
void wal_checkpointer__wait(struct wal_checkpointer *w);
/* What the thread did so far. NULL: zeros. */
void wal_checkpointer__stats(struct wal_checkpointer *w, struct wal_checkpointer_stats *out);
/* Stops the thread and closes its connection: before the writer closes. NULL ok. */
void wal_checkpointer__stop(struct wal_checkpointer *w);

#endif
