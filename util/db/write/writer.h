#ifndef RSPROF_UTIL_DB_WRITE_WRITER_H
#define RSPROF_UTIL_DB_WRITE_WRITER_H

#include <stdbool.h>
#include <stdint.h>

#include "util/db/rows.h"

/*
 * The writer of a profile: db_writer__create() makes the file (or opens one
 * to append to, util/db/db.h's db__create()), then one
 * db_writer__checkpoint() per checkpoint, each one transaction with
 * persistent prepared statements, ROLLBACK on error, followed by a passive
 * WAL checkpoint so the file alone holds it. Everything a checkpoint
 * carries is in that one transaction: its rows, symbols, stacks and
 * processes, its samples per call stack (record -g), and what its
 * producer adds (the allocation history, the mappings that changed); with
 * it the writer adds up the totals (util/db/write/totals.h), and folds
 * (--retain, util/db/write/retain.h) and compacts (util/db/write/series.h)
 * what has aged. A writer killed at any moment leaves every checkpoint
 * whole or absent.
 *
 * Every error is printed with the statement's name and sqlite3_errmsg() and
 * returned as -RSPROF_EDB (or -errno for file-system errors).
 */
struct db;
struct db_writer;

/* -EEXIST when path exists and !append; append continues an existing profile. */
int db_writer__create(const char *path, bool append, struct db_writer **out);
/*
 * The end of a recording: what has aged compacted, every statement
 * finalized, the file closed; the result of sqlite3_close(). NULL ok.
 */
int db_writer__close(struct db_writer *w);
/*
 * On a failed start: close and remove the new profile with its -wal and
 * -shm (what SQLite could not fold back into a full disk too); an appended
 * profile is only closed. NULL ok.
 */
int db_writer__discard(struct db_writer *w);

/* The file's connection, for what else writes into it (the history, cpu_stacks). */
struct db *db_writer__db(struct db_writer *w);

int db_writer__meta_set(struct db_writer *w, const char *key, const char *value);
int db_writer__meta_set_int(struct db_writer *w, const char *key, long long value);

/*
 * A stack id no stack of the file has and none handed out before (a
 * stack_rec's id): they count up, so that the stacks grow at the file's
 * end. 0 or -ERANGE (2^40 of them given).
 */
int db_writer__stack_id(struct db_writer *w, int64_t *id);

/* Writes the checkpoint; *id receives checkpoints.id. */
int db_writer__checkpoint(struct db_writer *w, const struct checkpoint *cp, int64_t *id);

/*
 * record --retain (util/db/write/retain.h): from now on, fold the
 * checkpoints older than retain_ms into coarser ones; meta.retain_ms says
 * so. 0 or -RSPROF_EDB (a file appended to that has no totals).
 */
int db_writer__set_retain(struct db_writer *w, uint64_t retain_ms);

/*
 * Compaction (util/db/write/series.h): the blocks of checkpoints older than
 * age_ms (SERIES_AGE_MS unless set) are packed and their seed-000 rows
 * folded; 0: from now on none is. 0 or -RSPROF_EDB.
 */
int db_writer__set_compact(struct db_writer *w, uint64_t age_ms);

/*
 * What the writer's WAL thread did so far (util/db/wal-checkpointer.h):
 * zeros for a writer that copies the WAL itself.
 */
struct wal_checkpointer_stats;
void db_writer__wal_stats(struct db_writer *w, struct wal_checkpointer_stats *out);

/*
 * Replace the `map` table's rows for m->pid with m's, in the transaction of
 * a checkpoint (from its also() hook, util/db/rows.h). 0 or -RSPROF_EDB.
 */
int db_writer__write_maps(struct db_writer *w, const struct map_set *m);

#endif
