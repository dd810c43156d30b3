#ifndef RSPROF_UTIL_DB_WRITE_STACKS_H
#define RSPROF_UTIL_DB_WRITE_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "util/db/rows.h"

/*
 * CPU samples by call stack (`record -g`): how many samples each stack of
 * the `stacks` table (seed 004's deduplicated stacks, written with the
 * checkpoint) got in a checkpoint, in the extra table
 *
 *   cpu_stacks (checkpoint_id, stack_id, count)
 *
 * created on first use; the seed-000 tables and queries are untouched. A
 * stack's innermost frame is stack_frames.pos 0, its sampled IP.
 */
struct db;

/*
 * record -g: the table, made when the file has none; each checkpoint's
 * rows are written with it (struct checkpoint's stack_counts,
 * util/db/write/writer.h). 0, or -RSPROF_EDB printed.
 */
int db_stacks__create(struct db *db);
/*
 * record --retain (util/db/write/retain.h): the rows of checkpoints first..last
 * summed per stack into checkpoint last, in the writer's open transaction.
 * Nothing to do in a file without cpu_stacks.
 */
int db_stacks__fold(struct db *db, int64_t first, int64_t last);

#endif
