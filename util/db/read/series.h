#ifndef RSPROF_UTIL_DB_READ_SERIES_H
#define RSPROF_UTIL_DB_READ_SERIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/db/series.h"

/* The compacted checkpoints as readers read them (the format: util/db/series.h). */
struct db;
struct totals_row;

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
