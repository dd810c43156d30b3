/*
 * Per-address numbers (annotate): the CPU samples and heap rows of every
 * address in a window, and the profile's mappings. An annotated function
 * has a few hundred addresses at most, but the scan cannot know which:
 * one GROUP BY pass per table, kept in a hash map by address.
 */
#include "util/db/read/addrs.h"
#include "util/array.h"
#include "util/db/read/query-priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

#include "util/db/db.h"
#include "util/db/rows.h"
#include "util/hashmap.h"
#include "util/saturate.h"

struct acc {
	int64_t addr;
	uint64_t samples;
	int64_t live, alloc_bytes, alloc_count;
};

struct accs {
	struct acc *v;
	size_t n, cap;
	struct hashmap ix;	/* addr -> index in v */
};

static struct acc *acc_get(struct accs *a, int64_t addr)
{
	uint64_t i;

	if (hashmap__get(&a->ix, (uint64_t)addr, &i))
		return &a->v[i];
	if (ALLOC_GROW(a->v, a->n + 1, a->cap, 256))
		return NULL;
	if (hashmap__set(&a->ix, (uint64_t)addr, a->n))
		return NULL;
	memset(&a->v[a->n], 0, sizeof(a->v[0]));
	a->v[a->n].addr = addr;
	return &a->v[a->n++];
}

/* Addresses are unsigned: a kernel address (stored negative) sorts last. */
static int acc_cmp(const void *x, const void *y)
{
	const struct acc *a = x, *b = y;
	uint64_t p = (uint64_t)a->addr, q = (uint64_t)b->addr;

	return (p > q) - (p < q);
}

static int scan_cpu(struct db *db, struct accs *a, int64_t lo, int64_t hi, uint64_t *total)
{
	sqlite3_stmt *st;
	int rc, err = db__prepare(db, "read cpu samples", "SELECT addr, SUM(count) FROM cpu_samples"
				" WHERE checkpoint_id BETWEEN ? AND ? GROUP BY addr", &st);

	if (err)
		return err;
	sqlite3_bind_int64(st, 1, lo);
	sqlite3_bind_int64(st, 2, hi);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct acc *c = acc_get(a, sqlite3_column_int64(st, 0));

		if (!c) {
			err = -ENOMEM;
			break;
		}
		c->samples += (uint64_t)sqlite3_column_int64(st, 1);
		*total += (uint64_t)sqlite3_column_int64(st, 1);
	}
	if (!err && rc != SQLITE_DONE)
		err = db__err(db, "read cpu samples");
	sqlite3_finalize(st);
	return err;
}

/* Live bytes up to checkpoint hi; allocations from wlo on. */
static int scan_heap(struct db *db, struct accs *a, int64_t wlo, int64_t hi,
		     struct addr_totals *t)
{
	sqlite3_stmt *st;
	int rc, err = db__prepare(db, "read heap events", db__has(db, DB_V2) ?
		"SELECT addr, SUM(alloc_bytes - free_bytes),"
		" TOTAL(CASE WHEN checkpoint_id >= ?2 THEN alloc_bytes END),"
		" TOTAL(CASE WHEN checkpoint_id >= ?2 THEN alloc_count END)"
		" FROM heap_events WHERE checkpoint_id <= ?1 GROUP BY addr" :
		"SELECT addr, SUM(alloc_bytes - free_bytes),"
		" TOTAL(CASE WHEN checkpoint_id >= ?2 THEN alloc_bytes END), 0"
		" FROM heap_events WHERE checkpoint_id <= ?1 GROUP BY addr", &st);

	if (err)
		return err;
	sqlite3_bind_int64(st, 1, hi);
	sqlite3_bind_int64(st, 2, wlo);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct acc *c = acc_get(a, sqlite3_column_int64(st, 0));

		if (!c) {
			err = -ENOMEM;
			break;
		}
		c->live = sat__add(c->live, sqlite3_column_int64(st, 1));
		c->alloc_bytes = sat__add(c->alloc_bytes, sqlite3_column_int64(st, 2));
		c->alloc_count = sat__add(c->alloc_count, sqlite3_column_int64(st, 3));
		t->live_bytes = sat__add(t->live_bytes, sqlite3_column_int64(st, 1));
		t->alloc_bytes = sat__add(t->alloc_bytes, sqlite3_column_int64(st, 2));
		t->has_heap = true;
	}
	if (!err && rc != SQLITE_DONE)
		err = db__err(db, "read heap events");
	sqlite3_finalize(st);
	return err;
}

int db_query_addrs(struct db *db, const struct query_filter *f, struct addr_totals *t,
		   addr_row_cb cb, void *ctx)
{
	uint64_t end = f->at_ms != TIME_NONE && (f->win.to_ms == TIME_NONE || f->at_ms < f->win.to_ms) ?
		       f->at_ms : f->win.to_ms;
	struct query_filter all;
	struct accs a = { 0 };
	struct qctx q;
	int64_t lo, hi, wlo, whi;
	bool whole;
	int err;

	memset(t, 0, sizeof(*t));
	query_filter__init(&all);
	err = qctx_load(&q, db, &all);
	if (!err)
		err = checkpoint_range(db, f->win.from_ms, f->win.to_ms, &lo, &hi, &whole);
	if (!err && lo <= hi)
		err = scan_cpu(db, &a, lo, hi, &t->samples);
	if (!err)
		err = checkpoint_range(db, TIME_NONE, end, &lo, &hi, &whole);
	if (!err)
		err = checkpoint_range(db, f->win.from_ms, end, &wlo, &whi, &whole);
	if (!err && lo <= hi)
		err = scan_heap(db, &a, wlo > whi ? INT64_MAX : wlo, hi, t);
	if (err)
		goto out;
	if (a.n)
		qsort(a.v, a.n, sizeof(*a.v), acc_cmp);
	for (size_t i = 0; i < a.n && !err; i++) {
		const struct qsym *s = qctx_find(&q, a.v[i].addr);
		struct addr_row r = {
			.addr = a.v[i].addr, .file = s->file, .line = s->line,
			.function = s->function, .module = s->module,
			.samples = a.v[i].samples, .live_bytes = a.v[i].live,
			.alloc_bytes = a.v[i].alloc_bytes, .alloc_count = a.v[i].alloc_count,
		};

		err = cb(&r, ctx);
	}
out:
	free(a.v);
	hashmap__free(&a.ix);
	qctx_free(&q);
	return err;
}

int db_query_symbol(struct db *db, int64_t addr, struct addr_row *r, bool *found)
{
	sqlite3_stmt *st;
	int rc, err = db__prepare(db, "read symbol", db__has(db, DB_V2) ?
				"SELECT file, line, function, module FROM symbols WHERE addr = ?" :
				"SELECT file, line, function, NULL FROM symbols WHERE addr = ?", &st);

	memset(r, 0, sizeof(*r));
	*found = false;
	r->addr = addr;
	if (err)
		return err;
	sqlite3_bind_int64(st, 1, addr);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*found = true;
		r->file = dup_col(st, 0, &err);
		r->line = sqlite3_column_int(st, 1);
		r->function = dup_col(st, 2, &err);
		r->module = dup_col(st, 3, &err);
	} else if (rc != SQLITE_DONE) {
		err = db__err(db, "read symbol");
	}
	sqlite3_finalize(st);
	return err;
}

void addr_row__exit(struct addr_row *r)
{
	free((char *)r->file);
	free((char *)r->function);
	free((char *)r->module);
	memset(r, 0, sizeof(*r));
}

int db_query_maps(struct db *db, int pid,
		  int (*cb)(void *ctx, int pid, const struct map_row *r), void *ctx)
{
	sqlite3_stmt *st;
	int rc, err;

	if (!db__has(db, DB_V2))
		return 0;
	/*
	 * A recording of a process tree (v3) has the mappings of every process:
	 * the target's (meta.pid) when it has any, they do not overlap.
	 */
	err = db__prepare(db, "read mappings", pid > 0 ?
			  "SELECT pid, addr_begin, addr_end, perm, offset, path"
			  " FROM map WHERE pid = ?1 ORDER BY addr_begin" :
			  "SELECT pid, addr_begin, addr_end, perm, offset, path"
			  " FROM map WHERE NOT EXISTS (SELECT 1 FROM map m, meta k"
			  " WHERE k.key = 'pid' AND m.pid = CAST(k.value AS INTEGER))"
			  " OR pid = (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'pid')"
			  " ORDER BY addr_begin", &st);
	if (err)
		return err;
	if (pid > 0)
		sqlite3_bind_int64(st, 1, pid);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct map_row r = {
			.start = (uint64_t)sqlite3_column_int64(st, 1),
			.end = (uint64_t)sqlite3_column_int64(st, 2),
			.perms = (const char *)sqlite3_column_text(st, 3),
			.pgoff = (uint64_t)sqlite3_column_int64(st, 4),
			.path = (const char *)sqlite3_column_text(st, 5),
		};

		err = cb(ctx, (int)sqlite3_column_int64(st, 0), &r);
		if (err)
			break;
	}
	if (!err && rc != SQLITE_DONE)
		err = db__err(db, "read mappings");
	sqlite3_finalize(st);
	return err;
}


int db_query_build_ids(struct db *db, int (*cb)(void *ctx, const char *path, const char *id),
		       void *ctx)
{
	sqlite3_stmt *st;
	int rc, err;

	if (!db__has(db, DB_MAP_BUILD_ID))
		return 0;
	err = db__prepare(db, "read build-ids", "SELECT DISTINCT path, build_id FROM map"
			  " WHERE path IS NOT NULL AND build_id IS NOT NULL ORDER BY path", &st);
	if (err)
		return err;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		err = cb(ctx, (const char *)sqlite3_column_text(st, 0),
			 (const char *)sqlite3_column_text(st, 1));
		if (err)
			break;
	}
	if (!err && rc != SQLITE_DONE)
		err = db__err(db, "read build-ids");
	sqlite3_finalize(st);
	return err;
}
