#ifndef RSPROF_UTIL_DB_WRITE_SERIES_H
#define RSPROF_UTIL_DB_WRITE_SERIES_H

#include <stdint.h>

#include "util/db/series.h"

/* The compaction as the writer does it (the format: util/db/series.h). */
struct db;
struct checkpoint;
struct series_writer;

int series_writer__new(struct db *db, uint64_t age_ms, struct series_writer **out);
void series_writer__delete(struct series_writer *sw);	/* NULL ok */

/*
 * In the transaction of checkpoint id, after its rows: its rows packed in
 * memory, and when id ends a block of the totals, the block's parts
 * written (packed ahead: readers read them once the block is compacted,
 * which then needs no reading of its rows). 0, -ENOMEM or -RSPROF_EDB.
 */
int series_writer__stage(struct series_writer *sw, int64_t id, const struct checkpoint *cp);
/*
 * In the transaction of the checkpoint stamped now_ms, after the totals
 * were written through checkpoint `through` and record --retain folded
 * what it folds: a slice of the compaction of the blocks that have aged.
 * 0, -ENOMEM or -RSPROF_EDB.
 */
int series_writer__compact(struct series_writer *sw, int64_t through, uint64_t now_ms);
/*
 * In a transaction of its own at the end of a recording: what has aged by
 * the last checkpoint compacted, every slice of it. 0 or an error.
 */
int series_writer__finish(struct series_writer *sw);
/* The transaction failed: read the state back from the file. */
void series_writer__reset(struct series_writer *sw);

/* record --retain folds block b: its series go. */
int series__drop_block(struct db *db, int64_t block);

#endif
