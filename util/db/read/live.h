#ifndef RSPROF_UTIL_DB_READ_LIVE_H
#define RSPROF_UTIL_DB_READ_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The queries of the live view (`top`) that util/db/read/query.h has no use
 * for: "did the file change?", asked every 100 ms, and the per-checkpoint
 * series of one location for the row detail. Statements are prepared once
 * (SQLITE_PREPARE_PERSISTENT) on the reader's connection and reused.
 */
struct db;
struct db_live;

/* NULL on -ENOMEM (reported). The db must outlive it. */
struct db_live *db_live__new(struct db *db);
void db_live__delete(struct db_live *l);	/* NULL ok */

/*
 * True when another connection committed to the file since the last call
 * (PRAGMA data_version; the first call is true). 0/1, or -RSPROF_EDB.
 */
int db_live__changed(struct db_live *l);

/* The last checkpoint's id and timestamp (0, 0 for an empty profile). */
int db_live__last_checkpoint(struct db_live *l, int64_t *id, uint64_t *ts_ms);

enum live_series {
	SERIES_CPU,	/* samples per checkpoint */
	SERIES_HEAP,	/* live bytes at the end of each checkpoint */
};

/*
 * The series of the location (file, line, function) — NULL matches NULL —
 * over the last n checkpoints, oldest first, into vals[0..n-1]; checkpoints
 * before the start of the profile are 0. Returns 0 or -RSPROF_EDB.
 */
int db_live__series(struct db_live *l, enum live_series kind, const char *file, int line,
		    const char *function, int64_t *vals, int n);

#endif
