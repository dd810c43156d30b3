#ifndef RSPROF_UTIL_DB_WRITE_RETAIN_H
#define RSPROF_UTIL_DB_WRITE_RETAIN_H

#include <stdbool.h>
#include <stdint.h>

/*
 * record --retain DUR: the last DUR of a recording at full resolution,
 * older checkpoints folded into coarser ones, so that a recording left
 * running for days stays bounded. A level-0 block of the totals
 * (util/db/totals.h: 60 checkpoints, a minute at the default interval)
 * whose checkpoints are all older than DUR becomes one checkpoint; a
 * level-1 block (3,600: an hour) older than 60 x DUR becomes one too.
 *
 * Folding keeps what the seed-000 queries sum up: the folded checkpoint
 * holds the sums of its event rows per key (cpu_samples, heap_events,
 * cpu_stacks), the sums of the checkpoints' totals and the live heap at
 * its end, with the timestamp and id of the last checkpoint folded into it
 * (checkpoints.merged: how many intervals it holds). What is lost is the
 * time inside it: per-checkpoint series, and peaks between its start and
 * end. The totals are changed to what the folded rows say, so readers give
 * the same from them as from a scan.
 */
struct db;
struct retain;

int retain__new(struct db *db, uint64_t retain_ms, struct retain **out);
void retain__delete(struct retain *r);	/* NULL ok */

/*
 * In the transaction of the checkpoint stamped now_ms, after the totals
 * were written through checkpoint `through`: fold what has aged. 0 or
 * -RSPROF_EDB / -ENOMEM.
 */
int retain__fold(struct retain *r, int64_t through, uint64_t now_ms);

#endif
