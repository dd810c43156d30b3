/*
 * The checkpoints and event tables row by row (util/db/read/events.h).
 */
#include "util/db/read/events.h"

#include <sqlite3.h>

#include "util/db/db.h"
#include "util/error.h"

/* Schema v3: one row per checkpoint with its totals and the resident memory. */
static const char sql_cp_v3[] =
	"SELECT id, timestamp_ms, cpu_total, heap_alloc_bytes, heap_free_bytes, heap_live_bytes, "
	"rss_bytes FROM checkpoints ORDER BY id";
/* Schema v2: the totals. */
static const char sql_cp_v2[] =
	"SELECT id, timestamp_ms, cpu_total, heap_alloc_bytes, heap_free_bytes, heap_live_bytes, "
	"NULL FROM checkpoints ORDER BY id";
/* Schema v1 (seed 000 as written): the same totals, computed. */
static const char sql_cp_v1[] =
	"SELECT cp.id, cp.timestamp_ms, "
	"(SELECT COALESCE(SUM(count), 0) FROM cpu_samples WHERE checkpoint_id = cp.id), "
	"(SELECT COALESCE(SUM(alloc_bytes), 0) FROM heap_events WHERE checkpoint_id = cp.id), "
	"(SELECT COALESCE(SUM(free_bytes), 0) FROM heap_events WHERE checkpoint_id = cp.id), "
	"0, NULL FROM checkpoints cp ORDER BY cp.id";

int db_events__checkpoints(struct db *db, int (*cb)(void *ctx, const struct checkpoint_row *r),
			   void *ctx)
{
	sqlite3_stmt *st = NULL;
	int rc, err = 0;

	if (db__prepare(db, "cannot read the checkpoints", db__has(db, DB_V3) ? sql_cp_v3 :
			db__has(db, DB_V2) ? sql_cp_v2 : sql_cp_v1, &st))
		return -RSPROF_EDB;
	while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct checkpoint_row r = {
			.id = sqlite3_column_int64(st, 0),
			.t_ms = (uint64_t)sqlite3_column_int64(st, 1),
			.cpu_total = sqlite3_column_int64(st, 2),
			.alloc_bytes = sqlite3_column_int64(st, 3),
			.free_bytes = sqlite3_column_int64(st, 4),
			.live_bytes = sqlite3_column_int64(st, 5),
			.has_rss = sqlite3_column_type(st, 6) != SQLITE_NULL,
			.rss_bytes = sqlite3_column_int64(st, 6),
		};

		err = cb(ctx, &r);
	}
	sqlite3_finalize(st);
	if (!err && rc != SQLITE_DONE)
		return db__err(db, "cannot read the checkpoints");
	return err;
}

/* heap_events rows: checkpoint, address, delta, stack (-1: none; v1 has no stacks). */
static const char *heap_rows_sql(struct db *db, bool sorted)
{
	if (db__has(db, DB_V2))
		return sorted ? "SELECT checkpoint_id, addr, alloc_bytes - free_bytes,"
				" IFNULL(stack_id, -1) FROM heap_events ORDER BY checkpoint_id" :
				"SELECT checkpoint_id, addr, alloc_bytes - free_bytes,"
				" IFNULL(stack_id, -1) FROM heap_events";
	return sorted ? "SELECT checkpoint_id, addr, alloc_bytes - free_bytes, -1"
			" FROM heap_events ORDER BY checkpoint_id" :
			"SELECT checkpoint_id, addr, alloc_bytes - free_bytes, -1 FROM heap_events";
}

int db_events__heap(struct db *db, bool sorted,
		    int (*cb)(void *ctx, int64_t cp, int64_t addr, int64_t delta, int64_t stack),
		    void *ctx)
{
	sqlite3_stmt *st = NULL;
	int rc, err = 0;

	if (db__prepare(db, "cannot read the heap events", heap_rows_sql(db, sorted), &st))
		return -RSPROF_EDB;
	while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW)
		err = cb(ctx, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
			 sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3));
	sqlite3_finalize(st);
	if (!err && rc != SQLITE_DONE)
		return db__err(db, "cannot read the heap events");
	return err;
}

int db_events__cpu(struct db *db, int (*cb)(void *ctx, int64_t cp, int64_t addr, int64_t n),
		   void *ctx)
{
	sqlite3_stmt *st = NULL;
	int rc, err = 0;

	if (db__prepare(db, "cannot read the CPU samples",
			"SELECT checkpoint_id, addr, count FROM cpu_samples", &st))
		return -RSPROF_EDB;
	while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW)
		err = cb(ctx, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
			 sqlite3_column_int64(st, 2));
	sqlite3_finalize(st);
	if (!err && rc != SQLITE_DONE)
		return db__err(db, "cannot read the CPU samples");
	return err;
}

int db_events__at(struct db *db, bool heap, const int64_t *addrs, size_t n,
		  int (*cb)(void *ctx, int64_t cp, int64_t value), void *ctx)
{
	sqlite3_stmt *st = NULL;
	int rc = SQLITE_DONE, err = 0;

	if (db__prepare(db, "cannot read a site's series", heap ?
			"SELECT checkpoint_id, alloc_bytes - free_bytes FROM heap_events WHERE addr = ?" :
			"SELECT checkpoint_id, count FROM cpu_samples WHERE addr = ?", &st))
		return -RSPROF_EDB;
	for (size_t i = 0; i < n && !err; i++) {
		sqlite3_reset(st);
		rc = sqlite3_bind_int64(st, 1, addrs[i]);
		if (rc != SQLITE_OK)
			break;
		while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW)
			err = cb(ctx, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1));
		if (rc != SQLITE_DONE)
			break;
	}
	sqlite3_finalize(st);
	if (!err && rc != SQLITE_DONE)
		return db__err(db, "cannot read a site's series");
	return err;
}
