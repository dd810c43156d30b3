#ifndef RSPROF_UTIL_DB_READ_EVENTS_H
#define RSPROF_UTIL_DB_READ_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The checkpoints and the event tables read row by row, for the readers
 * that keep sums of their own over them (timeline): each row to a callback
 * whose non-zero result stops the walk and is returned (a negative errno,
 * or a positive reason of the caller's). Errors of the file: -RSPROF_EDB,
 * printed.
 */
struct db;

/* One checkpoint with its totals (computed for a version-1 file, which has none). */
struct checkpoint_row {
	int64_t id;
	uint64_t t_ms;			/* timestamp_ms */
	int64_t cpu_total;
	int64_t alloc_bytes, free_bytes;
	int64_t live_bytes;		/* 0 where the file has none (version 1) */
	bool has_rss;			/* schema v3, when read */
	int64_t rss_bytes;
};

/* Every checkpoint, in id order. */
int db_events__checkpoints(struct db *db, int (*cb)(void *ctx, const struct checkpoint_row *r),
			   void *ctx);

/*
 * Every heap_events row: its checkpoint, address, alloc_bytes - free_bytes
 * and stack (-1: none), in the table's order or, sorted, in checkpoint
 * order.
 */
int db_events__heap(struct db *db, bool sorted,
		    int (*cb)(void *ctx, int64_t cp, int64_t addr, int64_t delta, int64_t stack),
		    void *ctx);

/* Every cpu_samples row: its checkpoint, address and count. */
int db_events__cpu(struct db *db, int (*cb)(void *ctx, int64_t cp, int64_t addr, int64_t n),
		   void *ctx);

/*
 * The rows of the n addresses through the tables' addr index: heap
 * (alloc_bytes - free_bytes) or CPU (count), each with its checkpoint.
 */
int db_events__at(struct db *db, bool heap, const int64_t *addrs, size_t n,
		  int (*cb)(void *ctx, int64_t cp, int64_t value), void *ctx);

#endif
