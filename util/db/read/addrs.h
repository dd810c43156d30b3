#ifndef RSPROF_UTIL_DB_READ_ADDRS_H
#define RSPROF_UTIL_DB_READ_ADDRS_H

#include <stdbool.h>
#include <stdint.h>

#include "util/db/read/query.h"

/*
 * Per-address numbers of a profile, for `rsprof annotate`: every code
 * address with CPU samples or heap activity in the filter's window, with its
 * symbols row, and the `map` table as the resolver wants it. Per-line and
 * per-instruction shares are views over these (seed 003's per-instruction
 * counts are the cpu_samples rows themselves: one row per sampled IP).
 */
struct db;

struct addr_row {
	int64_t addr;
	const char *file;	/* the symbols row; NULL when unknown or absent */
	int line;
	const char *function;
	const char *module;
	uint64_t samples;	/* CPU samples at this IP in the window */
	int64_t live_bytes;	/* heap: live bytes of this site at the end (or f->at_ms) */
	int64_t alloc_bytes;	/* heap: allocated in the window */
	int64_t alloc_count;
};

struct addr_totals {
	uint64_t samples;	/* all samples in the window: the denominator of report's CPU% */
	int64_t live_bytes;	/* live bytes of every site */
	int64_t alloc_bytes;
	bool has_heap;		/* the file has heap rows */
};

typedef int (*addr_row_cb)(const struct addr_row *r, void *ctx);

/*
 * Every address with samples or heap rows, in address order. The filter's
 * window (from_ms, to_ms) and at_ms apply as in db_query_cpu() and
 * db_query_heap(); its pattern, group and limit do not. Strings live until cb
 * returns. 0, -ENOMEM or -RSPROF_EDB.
 */
int db_query_addrs(struct db *db, const struct query_filter *f, struct addr_totals *t,
		   addr_row_cb cb, void *ctx);

/*
 * The symbols row of one address: file, line, function into r (strings
 * malloc'd, freed by addr_row__exit()); *found false when there is none.
 */
int db_query_symbol(struct db *db, int64_t addr, struct addr_row *r, bool *found);
void addr_row__exit(struct addr_row *r);

/*
 * The rows of the `map` table (version 2; none in a version-1 file), by
 * start, of process pid (0: the target's, meta.pid, or every row of a
 * file without them): cb for each (r's strings valid while it runs, perms or path NULL
 * when the row has none); cb's error stops the walk and is returned.
 */
struct map_row;
/*
 * The build-id of each file the mappings name (the map table's, version 3
 * files written since it keeps them): cb for each (path, hex id), in path
 * order; a file mapped in two builds (another program of the tree) twice.
 */
int db_query_build_ids(struct db *db, int (*cb)(void *ctx, const char *path, const char *id),
		       void *ctx);
int db_query_maps(struct db *db, int pid,
		  int (*cb)(void *ctx, int pid, const struct map_row *r), void *ctx);

#endif
