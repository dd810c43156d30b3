/*
 * A run's numbers per site (util/db/read/site.h): CPU samples in a window,
 * live heap bytes at its end and allocations in it, from the writer's
 * totals when the file has them, else from the event tables.
 */
#include "util/db/read/site.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>

#include "util/db/db.h"
#include "util/db/read/query-priv.h"
#include "util/db/read/totals.h"
#include "util/hashmap.h"
#include "util/saturate.h"

/* One read: the run's sites and the heap stacks moved past a wrapper. */
struct sums_read {
	struct sitemap *sm;
	enum site_by by;
	/* heap stacks counted past an allocation wrapper (as report): id -> site + 1 */
	struct hashmap moved;
	bool v2;		/* heap_events has alloc_count and stack_id */
};

/* The checkpoint ids [*lo, *hi] of a window (*lo > *hi when it holds none). */
static int window_ids(struct db *db, const struct time_window *w, int64_t *lo, int64_t *hi)
{
	bool all;

	return checkpoint_range(db, w->from_ms, w->to_ms, lo, hi, &all);
}

/* A heap stack re-attributed past a wrapper: its site in the run, made when new. */
static int moved_cb(void *ctx, int64_t stack_id, const char *file, int line,
		    const char *function, const char *module)
{
	struct sums_read *r = ctx;
	long s = sitemap__intern(r->sm, r->by, file, line, function, module);

	if (s < 0)
		return (int)s;
	return hashmap__set(&r->moved, (uint64_t)stack_id, (uint64_t)s + 1);
}

/* Scan the event tables of one run (its window) into per-site numbers. */
static int scan(struct db *db, const struct sums_read *r, const struct time_window *w,
		struct site_sums *loc, uint64_t *total)
{
	const struct sitemap *sm = r->sm;
	sqlite3_stmt *st = NULL;
	int64_t lo, hi;
	int rc, err;

	err = window_ids(db, w, &lo, &hi);
	if (err)
		return err;
	if (sqlite3_prepare_v2(db__sqlite(db), "SELECT addr, count FROM cpu_samples"
			       " WHERE checkpoint_id BETWEEN ? AND ?", -1, &st, NULL))
		return db__err(db, "cannot read the CPU samples");
	sqlite3_bind_int64(st, 1, lo);
	sqlite3_bind_int64(st, 2, hi);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		long s = sitemap__find_addr(sm, sqlite3_column_int64(st, 0));
		int64_t n = sqlite3_column_int64(st, 1);

		*total += (uint64_t)n;
		if (s >= 0) {
			loc[s].samples += (uint64_t)n;
			loc[s].cpu = true;
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db__err(db, "cannot read the CPU samples");

	/*
	 * alloc_count and stack_id came with schema v2; live bytes at the
	 * window's end, allocations in it
	 */
	if (sqlite3_prepare_v2(db__sqlite(db), r->v2 ? "SELECT addr, alloc_bytes - free_bytes, CASE WHEN"
			       " checkpoint_id >= ?1 THEN alloc_count ELSE 0 END,"
			       " IFNULL(stack_id, -1) FROM heap_events WHERE checkpoint_id <= ?2" :
			       "SELECT addr, alloc_bytes - free_bytes, 0, -1 "
			       "FROM heap_events WHERE checkpoint_id <= ?2", -1, &st, NULL))
		return db__err(db, "cannot read the heap events");
	sqlite3_bind_int64(st, 1, lo);
	sqlite3_bind_int64(st, 2, lo > hi ? 0 : hi);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 3);
		uint64_t v;
		long s = id >= 0 && hashmap__size(&r->moved) &&
			 hashmap__get(&r->moved, (uint64_t)id, &v) && v ? (long)v - 1 :
			 sitemap__find_addr(sm, sqlite3_column_int64(st, 0));

		if (s >= 0) {
			loc[s].live = sat__add(loc[s].live, sqlite3_column_int64(st, 1));
			loc[s].allocs = sat__add(loc[s].allocs, sqlite3_column_int64(st, 2));
			loc[s].heap = true;
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db__err(db, "cannot read the heap events");
	return 0;
}

struct totals_scan {
	const struct sitemap *sm;
	const struct sums_read *run;	/* its moved heap stacks (--alloc-fn) */
	struct site_sums *loc;
	uint64_t *total;
	bool allocs;		/* the heap rows are in the window: count their allocations */
};

static void totals_cpu(void *ctx, const struct totals_row *r)
{
	struct totals_scan *x = ctx;
	long s = sitemap__find_addr(x->sm, r->addr);

	*x->total += (uint64_t)r->count;
	if (s >= 0) {
		x->loc[s].samples += (uint64_t)r->count;
		x->loc[s].cpu = true;
	}
}

static void totals_heap(void *ctx, const struct totals_row *r)
{
	struct totals_scan *x = ctx;
	uint64_t v;
	long s = r->stack_id >= 0 && hashmap__size(&x->run->moved) &&
		 hashmap__get(&x->run->moved, (uint64_t)r->stack_id, &v) && v ? (long)v - 1 :
		 sitemap__find_addr(x->sm, r->addr);

	if (s >= 0) {
		x->loc[s].live = sat__add(x->loc[s].live, sat__sub(r->alloc_bytes, r->free_bytes));
		if (x->allocs)
			x->loc[s].allocs = sat__add(x->loc[s].allocs, r->alloc_count);
		x->loc[s].heap = true;
	}
}

/* The same as scan(), from the writer's totals. */
static int scan_totals(struct db *db, struct totals *t, const struct sums_read *run,
		       const struct time_window *w, struct site_sums *loc, uint64_t *total)
{
	struct totals_scan x = { run->sm, run, loc, total, false };
	int64_t lo, hi, last;
	int err = window_ids(db, w, &lo, &hi);

	if (!err)
		err = totals__last_checkpoint(t, &last);
	if (err)
		return err;
	if (lo < 1)
		lo = 1;
	if (hi > last)
		hi = last;
	if (lo > hi)
		return 0;
	err = totals__cpu_range(t, lo, hi, totals_cpu, &x);
	/* live bytes at the window's end, allocations in it */
	if (!err && lo > 1)
		err = totals__heap_range(t, 1, lo - 1, totals_heap, &x);
	x.allocs = true;
	if (!err)
		err = totals__heap_range(t, lo, hi, totals_heap, &x);
	return err;
}

int site_sums__read(struct db *db, struct sitemap *sm, enum site_by by,
		    const char *const *alloc_fn, const struct time_window *w,
		    struct site_sums **out, uint64_t *total_samples)
{
	struct sums_read r = { .sm = sm, .by = by, .v2 = db__has(db, DB_V2) };
	struct totals *t = NULL;
	bool snap = sqlite3_get_autocommit(db__sqlite(db));
	int err;

	*out = NULL;
	err = snap ? db__snapshot_begin(db) : 0;	/* the totals agree with the rows */
	if (err)
		return err;
	db__lock(db);	/* for the whole pass */
	err = sitemap__load(sm, db, by);
	if (!err && r.v2)
		err = db_query_heap_moved(db, alloc_fn, moved_cb, &r);
	if (!err) {
		*out = calloc(sitemap__count(sm) + 1, sizeof(**out));
		if (!*out)
			err = -ENOMEM;
	}
	if (!err)
		err = totals__open(db, &t);
	if (!err && t)
		err = scan_totals(db, t, &r, w, *out, total_samples);
	else if (!err)
		err = scan(db, &r, w, *out, total_samples);
	totals__delete(t);
	db__unlock(db);
	if (snap)
		db__snapshot_end(db);
	hashmap__free(&r.moved);
	if (err) {
		free(*out);
		*out = NULL;
	}
	return err;
}
