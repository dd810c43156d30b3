#ifndef RSPROF_UTIL_DB_READ_TOTALS_H
#define RSPROF_UTIL_DB_READ_TOTALS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/db/totals.h"

/* The totals as readers use them (the format: util/db/totals.h). */
struct db;

/*
 * info --check: every level of the totals adds up, key by key, to the event
 * rows of the checkpoints it holds. 0 (also for a file without totals), or
 * -RSPROF_EDB with what differs printed.
 */
int totals__check(struct db *db);

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
