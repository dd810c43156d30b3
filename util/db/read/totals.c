/*
 * The readers' side of the totals (util/db/totals.h): a range of
 * checkpoints cut into the fewest blocks the totals hold plus raw
 * checkpoints at its ends, and their rows. The heap walk that gives every
 * group's live bytes and exact peak from them is totals-walk.c's, the check
 * of info --check totals-check.c's.
 */
#include "util/db/read/totals.h"
#include "util/array.h"
#include "util/db/read/totals-priv.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/db/db.h"
#include "util/db/stmt.h"
#include "util/db/read/series.h"
#include "util/error.h"
#include "util/hashmap.h"
#include "util/saturate.h"

enum tr_stmt {
	TR_CPU_BLOCK,
	TR_HEAP_BLOCK,
	TR_CPU_RAW,
	TR_HEAP_RAW,
	TR_MAX,
};

/*
 * The rows reach C through an SQL function evaluated in the WHERE clause
 * of a query that returns nothing (as the scans of util/db/read/query.c do):
 * no sqlite3_step()/sqlite3_column_*() per row. The reader's handle is
 * bound to ?3 (sqlite3_bind_pointer), not the function's user data, so
 * that handles open at once on one connection do not take each other's
 * rows.
 */
/* %s, %s: temp_count and kind, or NULL and 0 where the file has no such
 * columns (heap_totals of an early v3) */
static const char *const tr_sql[TR_MAX] = {
	[TR_CPU_BLOCK] = "SELECT 1 FROM cpu_totals WHERE level = ?1 AND block = ?2"
			 " AND rsprof_totals_row(?3, addr, pid, count)",
	[TR_HEAP_BLOCK] = "SELECT 1 FROM heap_totals WHERE level = ?1 AND block = ?2"
			  " AND rsprof_totals_row(?3, addr, pid, stack_id, alloc_bytes, free_bytes,"
			  " alloc_count, free_count, peak, %s, %s)",
	[TR_CPU_RAW] = "SELECT 1 FROM cpu_samples WHERE checkpoint_id BETWEEN ?1 AND ?2"
		       " AND rsprof_totals_row(?3, addr, IFNULL(pid, 0), count, checkpoint_id)",
	[TR_HEAP_RAW] = "SELECT 1 FROM heap_events WHERE checkpoint_id BETWEEN ?1 AND ?2"
			" AND rsprof_totals_row(?3, addr, IFNULL(pid, 0), IFNULL(stack_id, -1), alloc_bytes,"
			" free_bytes, alloc_count, free_count, checkpoint_id, %s, %s)",
};

/* their names; the SQL is prepared from tr_sql for the file's columns */
static const struct stmt_def tr_def[TR_MAX] = {
	[TR_CPU_BLOCK] = { "read totals" },
	[TR_HEAP_BLOCK] = { "read totals" },
	[TR_CPU_RAW] = { "read totals" },
	[TR_HEAP_RAW] = { "read totals" },
};

struct totals {
	struct db *db;
	sqlite3 *sq;
	struct stmt_table sts;
	int64_t through;
	int64_t n[TOTALS_LEVELS];	/* checkpoints per block of each level */
	int64_t series_lo, series_hi;	/* checkpoints (lo, hi] are compacted */
	/* the SQL function's target */
	totals_row_fn fn;
	void *ctx;
	int64_t piece_last;
	size_t rows;
};

static void sql_row(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	/* the handle comes bound with the statement: several may share a connection */
	struct totals *t = sqlite3_value_pointer(argv[0], "rsprof_totals");
	struct totals_row r = { .stack_id = -1 };

	if (!t) {
		sqlite3_result_error(ctx, "rsprof_totals_row: no totals", -1);
		return;
	}
	r.checkpoint = t->piece_last;
	argc--;
	argv++;

	r.addr = sqlite3_value_int64(argv[0]);
	r.pid = sqlite3_value_int64(argv[1]);
	switch (argc) {
	case 4:		/* cpu raw */
		r.checkpoint = sqlite3_value_int64(argv[3]);
		/* fall through */
	case 3:		/* cpu block */
		r.count = sqlite3_value_int64(argv[2]);
		break;
	case 10:	/* heap: block (peak) or raw (checkpoint), temp_count, kind */
		r.stack_id = sqlite3_value_int64(argv[2]);
		r.alloc_bytes = sqlite3_value_int64(argv[3]);
		r.free_bytes = sqlite3_value_int64(argv[4]);
		r.alloc_count = sqlite3_value_int64(argv[5]);
		r.free_count = sqlite3_value_int64(argv[6]);
		if (t->piece_last < 0) {
			r.checkpoint = sqlite3_value_int64(argv[7]);
			r.peak = sat__sub(r.alloc_bytes, r.free_bytes);
		} else {
			r.peak = sqlite3_value_int64(argv[7]);
		}
		r.temp_count = sqlite3_value_type(argv[8]) == SQLITE_NULL ? -1 :
			       sqlite3_value_int64(argv[8]);
		r.kind = sqlite3_value_int64(argv[9]);
		break;
	default:
		break;
	}
	t->rows++;
	t->fn(t->ctx, &r);
	sqlite3_result_int(ctx, 0);
}

void totals__delete(struct totals *t)
{
	if (!t)
		return;
	stmt_table__fini(&t->sts);
	free(t);
}

int64_t totals__through(const struct totals *t)
{
	return t->through;
}

/* Do the event tables hold rows, past the writer's last ones, for checkpoints in the totals? */
static int tr_changed(struct totals *t, int64_t cpu_rowid, int64_t heap_rowid, bool *changed)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(t->sq, "SELECT EXISTS (SELECT 1 FROM cpu_samples"
			       " WHERE rowid > ?1 AND +checkpoint_id <= ?3) OR EXISTS (SELECT 1"
			       " FROM heap_events WHERE rowid > ?2 AND +checkpoint_id <= ?3)",
			       -1, &st, NULL) != SQLITE_OK)
		return db__err(t->db, "read totals state");
	sqlite3_bind_int64(st, 1, cpu_rowid);
	sqlite3_bind_int64(st, 2, heap_rowid);
	sqlite3_bind_int64(st, 3, t->through);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*changed = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : db__err(t->db, "read totals state");
}

static bool tr_has_function(sqlite3 *sq)
{
	sqlite3_stmt *st = NULL;
	bool has = sqlite3_prepare_v2(sq, "SELECT rsprof_totals_row(NULL)", -1, &st, NULL) ==
		   SQLITE_OK;

	sqlite3_finalize(st);
	return has;
}

int totals__open(struct db *db, struct totals **out)
{
	struct totals *t;
	sqlite3_stmt *st = NULL;
	int64_t span = 0, cpu_rowid = 0, heap_rowid = 0, last = 0;
	bool changed = false;
	int rc, err;

	*out = NULL;
	/* a version-3 file written without totals (appended to) has no state */
	if (!db__has(db, DB_TOTALS))
		return 0;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->db = db;
	t->sq = db__sqlite(db);
	if (sqlite3_prepare_v2(t->sq, "SELECT span, through, cpu_rowid, heap_rowid"
			       " FROM totals_state", -1, &st, NULL) != SQLITE_OK) {
		err = db__err(t->db, "read totals");
		free(t);
		return err;
	}
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		span = sqlite3_column_int64(st, 0);
		t->through = sqlite3_column_int64(st, 1);
		cpu_rowid = sqlite3_column_int64(st, 2);
		heap_rowid = sqlite3_column_int64(st, 3);
	}
	sqlite3_finalize(st);
	/*
	 * A state this rsprof can have written: a span it uses, totals only of
	 * checkpoints there are, ids far from the int64 limits (block ends are
	 * computed from them). Anything else (a damaged or made-up file) is
	 * read by scanning the event rows, as a file without totals.
	 */
	if (rc == SQLITE_ROW) {
		err = totals__last_checkpoint(t, &last);
		if (err) {
			free(t);
			return err;
		}
		if (last < 0 || last > TOTALS_MAX_ID || t->through > last)
			rc = SQLITE_DONE;
	}
	if (rc != SQLITE_ROW || span != TOTALS_SPAN || t->through < 0) {
		pr_debug(1, "%s: totals_state unusable: scanning", db__path(db));
		free(t);
		return 0;
	}
	t->n[0] = span;
	for (int k = 1; k < TOTALS_LEVELS; k++)
		t->n[k] = t->n[k - 1] * span;
	err = tr_changed(t, cpu_rowid, heap_rowid, &changed);
	if (err || changed) {
		if (changed)
			pr_debug(1, "%s: event rows added after the totals: scanning",
				 db__path(db));
		free(t);
		return err;
	}
	err = series__range(db, &t->series_lo, &t->series_hi);
	if (!err && t->series_hi > t->through)
		t->series_lo = t->series_hi = 0;	/* not a state rsprof writes */
	if (err) {
		free(t);
		return err;
	}
	/* one function for every handle, defined once per connection (defining
	 * it again would make every prepared statement prepare again) */
	if (!tr_has_function(t->sq) &&
	    sqlite3_create_function(t->sq, "rsprof_totals_row", -1, SQLITE_UTF8, NULL, sql_row,
				    NULL, NULL) != SQLITE_OK) {
		err = db__err(t->db, "read totals");
		free(t);
		return err;
	}
	err = stmt_table__init(&t->sts, db, tr_def, TR_MAX);
	for (int i = 0; i < TR_MAX && !err; i++) {
		bool block = i == TR_HEAP_BLOCK;
		char sql[512];

		snprintf(sql, sizeof(sql), tr_sql[i],
			 db__has(db, block ? DB_TOTALS_TEMP : DB_TEMP_COUNT) ? "temp_count" : "NULL",
			 db__has(db, block ? DB_TOTALS_KIND : DB_KIND) ? "kind" : "0");
		err = stmt_table__prepare(&t->sts, i, sql);
	}
	if (err) {
		totals__delete(t);
		return err;
	}
	*out = t;
	return 0;
}

/* ---- pieces ------------------------------------------------------------- */

struct pieces {
	struct totals_piece *v;
	size_t n, cap;
};

static int push(struct pieces *p, int level, int64_t block, int64_t first, int64_t last)
{
	if (level < 0 && p->n && p->v[p->n - 1].level < 0 && p->v[p->n - 1].last + 1 == first) {
		p->v[p->n - 1].last = last;	/* raw next to raw: one piece */
		return 0;
	}
	if (ALLOC_GROW(p->v, p->n + 1, p->cap, 16))
		return -ENOMEM;
	p->v[p->n++] = (struct totals_piece){ level, block, first, last };
	return 0;
}

/* Hand the pieces to the caller, or none on error. */
static int pieces_done(struct pieces *p, int err, struct totals_piece **v, size_t *n)
{
	if (err) {
		free(p->v);
		p->v = NULL;
		p->n = 0;
	}
	*v = p->v;
	*n = p->n;
	return err;
}

/* The checkpoints block b of level k holds so far. */
static int64_t covered_last(const struct totals *t, int k, int64_t b)
{
	int64_t end = (b + 1) * t->n[k];

	return end < t->through ? end : t->through;
}

int totals__pieces(const struct totals *t, int64_t a, int64_t b, struct totals_piece **v,
		   size_t *n)
{
	struct pieces p = { 0 };
	int64_t at = a < 1 ? 1 : a;
	int err = 0;

	while (at <= b && !err) {
		bool chosen = false;

		if (at > t->through) {
			err = push(&p, -1, 0, at, b);
			break;
		}
		for (int k = TOTALS_LEVELS - 1; k >= 0 && !chosen; k--) {
			int64_t blk, last;

			if ((at - 1) % t->n[k])
				continue;
			blk = (at - 1) / t->n[k];
			last = covered_last(t, k, blk);
			if (last > b)
				continue;
			err = push(&p, k, blk, at, last);
			at = last + 1;
			chosen = true;
		}
		if (!chosen && !err) {
			int64_t last = ((at - 1) / t->n[0] + 1) * t->n[0];

			if (last > b)
				last = b;
			if (last > t->through)
				last = t->through;
			err = push(&p, -1, 0, at, last);
			at = last + 1;
		}
	}
	return pieces_done(&p, err, v, n);
}

int totals__children(const struct totals *t, const struct totals_piece *pc,
		     struct totals_piece **v, size_t *n)
{
	struct pieces p = { 0 };
	int err = 0;

	if (pc->level <= 0) {
		err = push(&p, -1, 0, pc->first, pc->last);
	} else {
		int k = pc->level - 1;

		for (int64_t at = pc->first; at <= pc->last && !err;) {
			int64_t blk = (at - 1) / t->n[k], last = covered_last(t, k, blk);

			if (last > pc->last)
				last = pc->last;
			err = push(&p, k, blk, at, last);
			at = last + 1;
		}
	}
	return pieces_done(&p, err, v, n);
}

/* ---- rows --------------------------------------------------------------- */

static int tr_run(struct totals *t, enum tr_stmt i, int64_t b1, int64_t b2, int64_t piece_last,
		  totals_row_fn fn, void *ctx)
{
	sqlite3_stmt *st = stmt_table__get(&t->sts, i);
	int rc;

	t->fn = fn;
	t->ctx = ctx;
	t->piece_last = piece_last;
	sqlite3_reset(st);
	if (sqlite3_bind_int64(st, 1, b1) || sqlite3_bind_int64(st, 2, b2) ||
	    sqlite3_bind_pointer(st, 3, t, "rsprof_totals", NULL))
		return stmt_table__err(&t->sts, i);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		;
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return stmt_table__err(&t->sts, i);
	return 0;
}

struct counted {
	struct totals *t;
	totals_row_fn fn;
	void *ctx;
};

static void series_row(void *ctx, const struct totals_row *r)
{
	struct counted *c = ctx;

	c->t->rows++;
	c->fn(c->ctx, r);
}

/*
 * Raw checkpoints first..last: from the event tables, but those of
 * compacted blocks (whose event rows are folded into the block's last
 * checkpoint) from their series.
 */
static int tr_raw(struct totals *t, bool heap, int64_t first, int64_t last, totals_row_fn fn,
		  void *ctx)
{
	enum tr_stmt i = heap ? TR_HEAP_RAW : TR_CPU_RAW;
	int64_t lo = t->series_lo, hi = t->series_hi;
	struct counted c = { t, fn, ctx };
	int err = 0;

	if (last <= lo || first > hi)
		return tr_run(t, i, first, last, -1, fn, ctx);
	if (first <= lo)
		err = tr_run(t, i, first, lo, -1, fn, ctx);
	if (!err)
		err = series__rows(t->db, heap, first > lo ? first : lo + 1, last < hi ? last : hi,
				   NULL, 0, series_row, &c);
	if (!err && last > hi)
		err = tr_run(t, i, hi + 1, last, -1, fn, ctx);
	return err;
}

int totals__cpu_rows(struct totals *t, const struct totals_piece *p, totals_row_fn fn,
		     void *ctx)
{
	if (p->level < 0)
		return tr_raw(t, false, p->first, p->last, fn, ctx);
	return tr_run(t, TR_CPU_BLOCK, p->level, p->block, p->last, fn, ctx);
}

int totals__heap_rows(struct totals *t, const struct totals_piece *p, totals_row_fn fn,
		      void *ctx)
{
	if (p->level < 0)
		return tr_raw(t, true, p->first, p->last, fn, ctx);
	return tr_run(t, TR_HEAP_BLOCK, p->level, p->block, p->last, fn, ctx);
}

void totals__series_range(const struct totals *t, int64_t *lo, int64_t *hi)
{
	*lo = t->series_lo;
	*hi = t->series_hi;
}

/* The last checkpoint before id (0: none). */
static int checkpoint_before(struct totals *t, int64_t id, int64_t *prev)
{
	sqlite3_stmt *st;
	int rc;

	*prev = 0;
	if (sqlite3_prepare_v2(t->sq, "SELECT IFNULL(MAX(id), 0) FROM checkpoints WHERE id < ?1",
			       -1, &st, NULL) != SQLITE_OK)
		return db__err(t->db, "read checkpoints");
	rc = sqlite3_bind_int64(st, 1, id);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*prev = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : db__err(t->db, "read checkpoints");
}

/*
 * Where a read from checkpoint id on may start instead: at the widest block
 * whose start s has no checkpoint in s..id-1, as the rows are those of
 * existing checkpoints (a window whose first checkpoint is a folded one of
 * record --retain, 60 in a file of id 60, 120, ...: its block, its hour's
 * block), so the read takes fewer pieces; else id itself.
 */
int totals_wide_start(struct totals *t, int64_t id, int64_t *start)
{
	int64_t prev;
	int err;

	*start = id;
	if (id <= 1 || id > t->through)
		return 0;
	err = checkpoint_before(t, id, &prev);
	for (int k = TOTALS_LEVELS - 1; k >= 0 && !err; k--) {
		int64_t s = (id - 1) / t->n[k] * t->n[k] + 1;

		if (s > prev) {
			*start = s;
			break;
		}
	}
	return err;
}

static int tr_range(struct totals *t, int64_t a, int64_t b, bool heap, totals_row_fn fn,
		    void *ctx)
{
	struct totals_piece *v = NULL;
	size_t n = 0;
	int err = totals_wide_start(t, a, &a);

	if (!err)
		err = totals__pieces(t, a, b, &v, &n);
	for (size_t i = 0; i < n && !err; i++)
		err = heap ? totals__heap_rows(t, &v[i], fn, ctx) : totals__cpu_rows(t, &v[i], fn, ctx);
	free(v);
	return err;
}

int totals__cpu_range(struct totals *t, int64_t a, int64_t b, totals_row_fn fn, void *ctx)
{
	return tr_range(t, a, b, false, fn, ctx);
}

int totals__heap_range(struct totals *t, int64_t a, int64_t b, totals_row_fn fn, void *ctx)
{
	return tr_range(t, a, b, true, fn, ctx);
}

int totals__last_checkpoint(struct totals *t, int64_t *id)
{
	sqlite3_stmt *st;
	int rc;

	*id = 0;
	if (sqlite3_prepare_v2(t->sq, "SELECT IFNULL(MAX(id), 0) FROM checkpoints", -1, &st,
			       NULL) != SQLITE_OK)
		return db__err(t->db, "read checkpoints");
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : db__err(t->db, "read checkpoints");
}

size_t totals_rows(const struct totals *t)
{
	return t->rows;
}
