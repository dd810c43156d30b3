#ifndef RSPROF_UTIL_DB_TOTALS_H
#define RSPROF_UTIL_DB_TOTALS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Totals per block of checkpoints (schema v3): what the writer adds up as it
 * writes, so that a reader adds up a few thousand rows instead of scanning
 * the event tables (an hour at 2,000 rows a checkpoint: 7.2 M rows).
 *
 * Blocks: level k holds TOTALS_SPAN^(k+1) checkpoints (60, 3,600, 216,000
 * at the default span); block b of level k is the checkpoint ids
 * b*n+1 .. (b+1)*n. cpu_totals holds per (level, block, addr, pid) the
 * samples, heap_totals per (level, block, addr, stack_id, pid, kind) the sums of
 * heap_events (stack_id -1 and pid 0 for NULL; temp_count NULL while no
 * row of the key counted temporaries; kind, heap_events.kind, is part of
 * the key) and
 * `peak`: the key's highest live bytes at a checkpoint of the block that has
 * a row of it, less its live bytes at the block's start (so a block's row
 * does not depend on what came before it).
 *
 * The writer keeps the current level-0 block in memory and writes it in
 * the transaction of the block's last checkpoint, with the level-1 and
 * level-2 blocks that hold it (their rows hold the level-0 blocks written
 * so far) and totals_state.through, the last checkpoint in the totals. A
 * reader takes checkpoints up to `through` from the totals and the later
 * ones from the event tables; a recorder killed in the middle of a block
 * leaves a file that reads the same.
 *
 * totals_state also holds the largest rowid of cpu_samples and heap_events
 * when `through` was written: a row past it for a checkpoint the totals
 * already hold (the file was changed by hand) makes readers scan.
 */
#define TOTALS_SPAN	60
#define TOTALS_LEVELS	3
/* readers use the totals of files whose checkpoint ids stay below this */
#define TOTALS_MAX_ID	(1LL << 48)

/* One row of a piece: the sums of a key over the piece (raw: one event row). */
struct totals_row {
	int64_t checkpoint;	/* raw: the row's checkpoint; block: the piece's last */
	int64_t addr;
	int64_t stack_id;	/* heap; -1: none */
	int64_t pid;		/* 0: none (NULL in the event table) */
	int64_t count;		/* cpu */
	int64_t alloc_bytes, free_bytes, alloc_count, free_count;
	int64_t peak;		/* heap, block: see above; raw: alloc_bytes - free_bytes */
	int64_t temp_count;	/* heap; -1: not counted (NULL) */
	int64_t kind;		/* heap: heap_events.kind (0 malloc, 1 anonymous mmap) */
};

#endif
