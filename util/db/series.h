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
/*
 * A part's blob (varints: unsigned LEB128; zz: zigzag-signed), keys sorted:
 *   nkeys, then per key:
 *     cpu:  zz(addr - previous key's addr), zz(pid), nrows, nbytes, rows
 *     heap: zz(addr - previous), zz(stack_id), zz(pid), zz(kind), nrows, nbytes, rows
 *   nbytes: the size of the key's rows, so that a reader skips a key it does
 *   not want; rows in checkpoint order, each:
 *     cpu:  checkpoint - previous row's (the first: less block * 60), zz(count)
 *     heap: the same delta, zz(alloc_bytes), zz(alloc_bytes - free_bytes),
 *           zz(alloc_count), zz(alloc_count - free_count), temp_count (0 NULL, else zz + 1)
 * Differences wrap (uint64) and unwrap exactly. Hand-written: SQLite has no
 * integer-array type, and zlib's general compression costs more CPU per
 * checkpoint than these few lines for a third of the size.
 */

/* Blocks whose last checkpoint is older than this are compacted (by default). */
#define SERIES_AGE_MS	(5 * 60 * 1000)

/* part ids of block b: b * BLOCK_PARTS + part */
#define BLOCK_PARTS	(1 << 20)

/* zigzag: a signed value as an unsigned one, small when near 0 */
static inline uint64_t series__zz(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t series__unzz(uint64_t u)
{
	return (int64_t)((u >> 1) ^ (0 - (u & 1)));
}

/* a - b, wrapping (uint64): undone exactly by adding b back */
static inline int64_t series__wrap_sub(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a - (uint64_t)b);
}

#endif
