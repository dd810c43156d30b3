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
struct db;
struct checkpoint;

#define TOTALS_SPAN	60
#define TOTALS_LEVELS	3
/* readers use the totals of files whose checkpoint ids stay below this */
#define TOTALS_MAX_ID	(1LL << 48)

/* ---- writer ------------------------------------------------------------- */

struct totals_writer;

/* For a new file (empty) or one being appended to (the open block is read back). */
int totals_writer__new(struct db *db, struct totals_writer **out);
void totals_writer__delete(struct totals_writer *tw);	/* NULL ok */

/*
 * In the transaction of checkpoint id, after its rows: add them up, and
 * write the block when id ends it. 0, -ENOMEM or -RSPROF_EDB.
 */
int totals_writer__checkpoint(struct totals_writer *tw, int64_t id, const struct checkpoint *cp);

/* The transaction failed: forget the open block; it is read back from the file next time. */
void totals_writer__reset(struct totals_writer *tw);

/* The last checkpoint the totals hold (totals_state.through). */
int64_t totals_writer__through(const struct totals_writer *tw);

/*
 * info --check: every level of the totals adds up, key by key, to the event
 * rows of the checkpoints it holds. 0 (also for a file without totals), or
 * -RSPROF_EDB with what differs printed.
 */
int totals__check(struct db *db);

/* ---- reader ------------------------------------------------------------- */

struct totals;

/*
 * The file's totals, or *out NULL when it has none that can be used (a
 * version 1 or 2 file, or one changed by hand since): then scan. Must be
 * called, and the totals used, within one read transaction
 * (db__snapshot_begin) so that they agree with the event tables.
 */
int totals__open(struct db *db, struct totals **out);
void totals__delete(struct totals *t);	/* NULL ok */

/* The last checkpoint in the totals; later ones are read from the event tables. */
int64_t totals__through(const struct totals *t);

/* A run of checkpoints: a block of a level, or raw checkpoints (level -1). */
struct totals_piece {
	int level;		/* -1: checkpoints first..last of the event tables */
	int64_t block;
	int64_t first, last;	/* checkpoint ids covered */
};

/* The pieces that cover checkpoints a..b, in order, fewest first. *v is malloc'd. */
int totals__pieces(const struct totals *t, int64_t a, int64_t b, struct totals_piece **v,
		   size_t *n);
/* The pieces one level down that cover p (raw checkpoints under a level-0 block). */
int totals__children(const struct totals *t, const struct totals_piece *p,
		     struct totals_piece **v, size_t *n);

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

typedef void (*totals_row_fn)(void *ctx, const struct totals_row *r);

/* Every row of piece p; raw rows come in checkpoint order. */
int totals__cpu_rows(struct totals *t, const struct totals_piece *p, totals_row_fn fn,
		     void *ctx);
int totals__heap_rows(struct totals *t, const struct totals_piece *p, totals_row_fn fn,
		      void *ctx);

/* Every row of checkpoints a..b (the sums of a key over a piece, in no order). */
int totals__cpu_range(struct totals *t, int64_t a, int64_t b, totals_row_fn fn, void *ctx);
int totals__heap_range(struct totals *t, int64_t a, int64_t b, totals_row_fn fn, void *ctx);

/*
 * The compacted checkpoints (lo, hi] (util/db/series.h; 0, 0: none): raw
 * pieces read them from the series, exact; a scan of the event tables
 * finds their rows folded into the last checkpoint of each block.
 */
void totals__series_range(const struct totals *t, int64_t *lo, int64_t *hi);

/* The last checkpoint of the file (0: none). */
int totals__last_checkpoint(struct totals *t, int64_t *id);

/*
 * The heap walk: what a pass over heap_events in checkpoint order gives,
 * from the totals. Rows are put in groups by the caller (group_of). Per
 * group: live bytes at checkpoint hi, the peak (the highest live bytes at
 * the end of a checkpoint from peak_from to hi that has a row of the group;
 * it starts at the live bytes before peak_from), the live bytes before
 * peak_from, and the allocation sums of the checkpoints from win_lo to hi.
 * A group's peak is exact: where two keys of a group meet in a block and
 * its bounds leave the peak open, the blocks below are read, down to the
 * checkpoints if need be.
 */
struct totals_heap_walk {
	int n_groups;
	/* a group; -1: counted in total_live only; -2: not counted at all */
	int (*group_of)(void *ctx, const struct totals_row *r);
	/* called once for every row counted in a group (NULL: not needed) */
	void (*counted)(void *ctx, const struct totals_row *r, int group);
	void *ctx;
	int64_t hi;		/* the last checkpoint */
	int64_t peak_from;	/* >= 1 */
	int64_t win_lo;		/* allocation sums from this checkpoint on */
	/* results, n_groups each, allocated by the walk (totals_heap_walk__free) */
	int64_t *live, *peak, *first;
	int64_t *alloc_bytes, *free_bytes, *alloc_count, *free_count;
	int64_t *temp_count;	/* in the window; -1: no row of the group counted them */
	bool *had_row;		/* a row of the group up to hi */
	int64_t total_live;	/* every row's, grouped or not */
	/* statistics */
	size_t rows_read, refined;
};

int totals__heap_walk(struct totals *t, struct totals_heap_walk *w);
void totals_heap_walk__free(struct totals_heap_walk *w);

#endif
