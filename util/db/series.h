#ifndef RSPROF_UTIL_DB_SERIES_H
#define RSPROF_UTIL_DB_SERIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Compacted checkpoints (schema v3): the event rows of a level-0 block of
 * the totals (util/db/totals.h, 60 checkpoints) that has aged past the
 * compaction age are moved, row for row, into cpu_series and heap_series
 * (a varint-packed blob per block and part of its keys), and the block's
 * rows in cpu_samples and heap_events are folded into one row per key at
 * the block's last checkpoint, as record --retain folds them: the
 * seed-000 queries over the whole run, the last seconds or the end give the
 * same numbers in a third of the space, and rsprof's readers read the
 * checkpoints inside the block from the series (exact at 1 s). The
 * checkpoints rows stay as they are.
 *
 * series_state: the blocks of checkpoints (max(totals_state.folded0, since),
 * through] are compacted (since: 0, or where a file written before
 * compaction existed was appended to). The work is spread over the
 * checkpoints' transactions, a slice of a block's addresses in each, so
 * that no write pays for a whole block: the next block that has aged is
 * packed into its series slice by slice (pack_addr: its keys up to that
 * address are; readers do not read its parts before through covers it),
 * then the compacted blocks (dropped, through] have their event rows
 * folded slice by slice (drop_addr: those of block dropped / 60 up to that
 * address are), every address adding up as before at every commit. A
 * recording killed at any moment leaves every block whole or compacted
 * for rsprof's readers, and the sums of the event tables as written.
 */
struct db;
struct checkpoint;
struct totals_row;
struct series_writer;

/* Blocks whose last checkpoint is older than this are compacted (by default). */
#define SERIES_AGE_MS	(5 * 60 * 1000)

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

/* ---- reader ------------------------------------------------------------- */

/*
 * The compacted checkpoints of a file: (*lo, *hi]; both 0 when none (a file
 * without series_state). 0 or -RSPROF_EDB.
 */
int series__range(struct db *db, int64_t *lo, int64_t *hi);

typedef void (*series_row_fn)(void *ctx, const struct totals_row *r);

/*
 * The event rows of checkpoints first..last (all compacted), in checkpoint
 * order, as they were written (totals_row: pid 0 and stack_id -1 for NULL,
 * temp_count -1 for NULL, peak alloc - free). want: NULL, or the n_want
 * addresses wanted, sorted (only the parts holding them are read, and of
 * those only their keys decoded).
 */
int series__rows(struct db *db, bool heap, int64_t first, int64_t last, const int64_t *want,
		 size_t n_want, series_row_fn fn, void *ctx);

/*
 * info --check: the packed rows of every compacted block add up, key by
 * key, to the block's level-0 totals. 0 (also without series), or
 * -RSPROF_EDB with what differs printed.
 */
int series__check(struct db *db);

#endif
