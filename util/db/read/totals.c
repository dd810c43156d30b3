/*
 * The readers' side of the totals (util/db/totals.h): a range of
 * checkpoints cut into the fewest blocks the totals hold plus raw
 * checkpoints at its ends, their rows, and the heap walk that gives every
 * group's live bytes and exact peak from them.
 */
#include "util/db/read/totals.h"

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
 * of a query that returns nothing (as the scans of util/db/query.c do):
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
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 16;
		struct totals_piece *v = realloc(p->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		p->v = v;
		p->cap = cap;
	}
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
static int wide_start(struct totals *t, int64_t id, int64_t *start)
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
	int err = wide_start(t, a, &a);

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

/* ---- the heap walk ------------------------------------------------------ */

/* A raw row, kept until its piece is read, then put in checkpoint order. */
struct raw_row {
	int64_t checkpoint;
	int64_t seq;		/* read order, for a stable sort */
	int group;
	int64_t net;
	int64_t alloc_bytes, free_bytes, alloc_count, free_count;
	int64_t temp_count;	/* -1: not counted */
};

/* A block whose rows leave a group's peak open: read the blocks below it. */
struct refine {
	struct totals_piece p;
	int group;
	int64_t start;		/* the group's live bytes at the piece's start */
	int64_t ub;		/* what its peak in the piece can be at most, less start */
};

struct walk {
	struct totals *t;
	struct totals_heap_walk *w;
	/* per group, for the piece being read */
	int64_t *start, *ub, *single, *seen;
	int *nmem;
	int *list;
	int n_list;
	int64_t serial;
	/* the piece being read */
	bool track, window;
	int64_t *live;		/* w->live, or the refinement's own live bytes */
	int *slot;		/* refinement: group -> its slot, -1: not refined */
	/* raw rows */
	struct raw_row *raw;
	size_t n_raw, cap_raw;
	bool no_memory;
	/* blocks to read again */
	struct refine *q;
	size_t nq, capq;
};

static bool in_set(const struct walk *k, int g)
{
	return !k->slot || k->slot[g] >= 0;
}

/* A group's temporaries: -1 until a row counted them, as the scan's temp_known. */
static void add_temp(struct totals_heap_walk *w, int g, int64_t tc)
{
	if (tc >= 0)
		w->temp_count[g] = sat__add(w->temp_count[g] < 0 ? 0 : w->temp_count[g], tc);
}

static void block_row(void *ctx, const struct totals_row *r)
{
	struct walk *k = ctx;
	struct totals_heap_walk *w = k->w;
	int64_t net = sat__sub(r->alloc_bytes, r->free_bytes);
	int g;

	g = w->group_of(w->ctx, r);
	if (!k->slot && g >= -1)
		w->total_live = sat__add(w->total_live, net);
	if (g < 0 || g >= w->n_groups || !in_set(k, g))
		return;
	if (!k->slot && w->counted)
		w->counted(w->ctx, r, g);
	if (k->seen[g] != k->serial) {
		k->seen[g] = k->serial;
		k->start[g] = k->live[g];
		k->ub[g] = 0;
		k->nmem[g] = 0;
		k->list[k->n_list++] = g;
	}
	k->live[g] = sat__add(k->live[g], net);
	k->nmem[g]++;
	k->single[g] = r->peak;
	if (r->peak > 0)
		k->ub[g] = sat__add(k->ub[g], r->peak);
	if (!k->slot) {
		w->had_row[g] = true;
		if (k->window) {
			w->alloc_bytes[g] = sat__add(w->alloc_bytes[g], r->alloc_bytes);
			w->free_bytes[g] = sat__add(w->free_bytes[g], r->free_bytes);
			w->alloc_count[g] = sat__add(w->alloc_count[g], r->alloc_count);
			w->free_count[g] = sat__add(w->free_count[g], r->free_count);
			add_temp(w, g, r->temp_count);
		}
	}
}

static void raw_row(void *ctx, const struct totals_row *r)
{
	struct walk *k = ctx;
	struct totals_heap_walk *w = k->w;
	struct raw_row *x;
	int g;

	g = w->group_of(w->ctx, r);
	if (!k->slot && g >= -1)
		w->total_live = sat__add(w->total_live, sat__sub(r->alloc_bytes, r->free_bytes));
	if (g < 0 || g >= w->n_groups || !in_set(k, g))
		return;
	if (!k->slot && w->counted)
		w->counted(w->ctx, r, g);
	if (k->n_raw == k->cap_raw) {
		size_t cap = k->cap_raw ? 2 * k->cap_raw : 4096;
		struct raw_row *v = realloc(k->raw, cap * sizeof(*v));

		if (!v) {
			k->no_memory = true;
			return;
		}
		k->raw = v;
		k->cap_raw = cap;
	}
	x = &k->raw[k->n_raw];
	x->checkpoint = r->checkpoint;
	x->seq = (int64_t)k->n_raw++;
	x->group = g;
	x->net = sat__sub(r->alloc_bytes, r->free_bytes);
	x->alloc_bytes = r->alloc_bytes;
	x->free_bytes = r->free_bytes;
	x->alloc_count = r->alloc_count;
	x->free_count = r->free_count;
	x->temp_count = r->temp_count;
}

static int cmp_raw(const void *pa, const void *pb)
{
	const struct raw_row *a = pa, *b = pb;

	if (a->checkpoint != b->checkpoint)
		return (a->checkpoint > b->checkpoint) - (a->checkpoint < b->checkpoint);
	return (a->seq > b->seq) - (a->seq < b->seq);
}

static void raw_settle(struct walk *k)
{
	for (int i = 0; i < k->n_list; i++) {
		int g = k->list[i];

		if (k->live[g] > k->w->peak[g])
			k->w->peak[g] = k->live[g];
	}
	k->n_list = 0;
}

/* Raw checkpoints: every checkpoint's end is a candidate for the peaks of its groups. */
static int walk_raw(struct walk *k, const struct totals_piece *p)
{
	struct totals_heap_walk *w = k->w;
	bool ordered = true;
	int64_t cur = INT64_MIN;
	int err;

	k->n_raw = 0;
	err = totals__heap_rows(k->t, p, raw_row, k);
	if (!err && k->no_memory)
		err = -ENOMEM;
	if (err)
		return err;
	w->rows_read += k->n_raw;
	for (size_t i = 1; i < k->n_raw && ordered; i++)
		ordered = k->raw[i].checkpoint >= k->raw[i - 1].checkpoint;
	if (!ordered)
		qsort(k->raw, k->n_raw, sizeof(*k->raw), cmp_raw);
	k->n_list = 0;
	for (size_t i = 0; i < k->n_raw; i++) {
		const struct raw_row *x = &k->raw[i];
		int g = x->group;

		if (x->checkpoint != cur) {
			if (k->track)
				raw_settle(k);
			cur = x->checkpoint;
			k->serial++;
		}
		k->live[g] = sat__add(k->live[g], x->net);
		if (!k->slot) {
			w->had_row[g] = true;
			if (k->window) {
				w->alloc_bytes[g] = sat__add(w->alloc_bytes[g], x->alloc_bytes);
				w->free_bytes[g] = sat__add(w->free_bytes[g], x->free_bytes);
				w->alloc_count[g] = sat__add(w->alloc_count[g], x->alloc_count);
				w->free_count[g] = sat__add(w->free_count[g], x->free_count);
				add_temp(w, g, x->temp_count);
			}
		}
		if (k->track && k->seen[g] != k->serial) {
			k->seen[g] = k->serial;
			k->list[k->n_list++] = g;
		}
	}
	if (k->track)
		raw_settle(k);
	k->n_list = 0;
	return 0;
}

static int queue(struct walk *k, const struct totals_piece *p, int g, int64_t start,
		 int64_t ub)
{
	if (k->nq == k->capq) {
		size_t cap = k->capq ? 2 * k->capq : 64;
		struct refine *v = realloc(k->q, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		k->q = v;
		k->capq = cap;
	}
	k->q[k->nq++] = (struct refine){ *p, g, start, ub };
	return 0;
}

/* A block: a group with one key in it gets its exact peak; others may need the blocks below. */
static int walk_block(struct walk *k, const struct totals_piece *p)
{
	struct totals_heap_walk *w = k->w;
	size_t before = k->t->rows;
	int err;

	k->serial++;
	k->n_list = 0;
	err = totals__heap_rows(k->t, p, block_row, k);
	w->rows_read += k->t->rows - before;
	if (err || !k->track)
		return err;
	for (int i = 0; i < k->n_list && !err; i++) {
		int g = k->list[i];

		if (k->nmem[g] == 1) {
			int64_t cand = sat__add(k->start[g], k->single[g]);

			if (cand > w->peak[g])
				w->peak[g] = cand;
			continue;
		}
		if (k->live[g] > w->peak[g])
			w->peak[g] = k->live[g];
		if (sat__add(k->start[g], k->ub[g]) > w->peak[g])
			err = queue(k, p, g, k->start[g], k->ub[g]);
	}
	return err;
}

static int walk_piece(struct walk *k, const struct totals_piece *p)
{
	return p->level < 0 ? walk_raw(k, p) : walk_block(k, p);
}

static bool same_piece(const struct totals_piece *a, const struct totals_piece *b)
{
	return a->level == b->level && a->block == b->block && a->first == b->first &&
	       a->last == b->last;
}

/*
 * Read again, one level down, the blocks that left a group's peak open,
 * for those groups only (their own live bytes from the block's start);
 * what is still open goes one level further, down to the checkpoints.
 */
static int refine_all(struct walk *k)
{
	struct totals_heap_walk *w = k->w;
	int64_t *rlive = calloc(w->n_groups, sizeof(*rlive));
	int *slot = malloc(w->n_groups * sizeof(*slot));
	int err = 0;

	if (!rlive || !slot) {
		free(rlive);
		free(slot);
		return -ENOMEM;
	}
	for (int g = 0; g < w->n_groups; g++)
		slot[g] = -1;
	while (k->nq && !err) {
		struct refine *q = k->q;
		size_t nq = k->nq, i = 0;

		k->q = NULL;
		k->nq = k->capq = 0;
		while (i < nq && !err) {
			struct totals_piece *ch = NULL;
			size_t n_ch = 0, j = i;

			bool any = false;

			/* the entries of one block are next to each other; a peak
			 * found since may have closed some */
			for (; j < nq && same_piece(&q[j].p, &q[i].p); j++) {
				if (sat__add(q[j].start, q[j].ub) <= w->peak[q[j].group])
					continue;
				slot[q[j].group] = 0;
				rlive[q[j].group] = q[j].start;
				any = true;
			}
			if (any)
				err = totals__children(k->t, &q[i].p, &ch, &n_ch);
			k->slot = slot;
			k->live = rlive;
			k->track = true;
			k->window = false;
			for (size_t c = 0; c < n_ch && !err; c++)
				err = walk_piece(k, &ch[c]);
			k->slot = NULL;
			k->live = w->live;
			for (size_t x = i; x < j; x++)
				slot[q[x].group] = -1;
			free(ch);
			if (any)
				w->refined++;
			i = j;
		}
		free(q);
	}
	free(rlive);
	free(slot);
	return err;
}

void totals_heap_walk__free(struct totals_heap_walk *w)
{
	free(w->live);
	free(w->peak);
	free(w->first);
	free(w->alloc_bytes);
	free(w->free_bytes);
	free(w->alloc_count);
	free(w->free_count);
	free(w->temp_count);
	free(w->had_row);
	w->live = w->peak = w->first = NULL;
	w->alloc_bytes = w->free_bytes = w->alloc_count = w->free_count = NULL;
	w->temp_count = NULL;
	w->had_row = NULL;
}

/*
 * The start of the peak window: every group's peak starts at its live bytes
 * (before, the live bytes at the end of the checkpoint the walk starts at).
 */
static void peak_reset(struct totals_heap_walk *w, const int64_t *before)
{
	for (int g = 0; g < w->n_groups; g++)
		w->first[g] = w->peak[g] = before ? before[g] : w->live[g];
}

struct sum_ctx {
	struct totals_heap_walk *w;
	int64_t *live;
};

static void sum_row(void *ctx, const struct totals_row *r)
{
	struct sum_ctx *c = ctx;
	int g = c->w->group_of(c->w->ctx, r);

	if (g >= 0 && g < c->w->n_groups)
		c->live[g] = sat__add(c->live[g], sat__sub(r->alloc_bytes, r->free_bytes));
}

/*
 * Where the peaks are tracked from. A peak from peak_from on starts at the
 * live bytes at the end of checkpoint at = peak_from - 1, which are no
 * higher than that start: tracking from any checkpoint id after the
 * checkpoint before `at` (no checkpoint ends in between but `at`) gives the
 * same peaks, once they start at the live bytes of `at`. When that range
 * holds the start of a block, the widest such, the walk is cut there and
 * reads blocks instead of the checkpoints of one (timeline's window, from
 * its first checkpoint on: a compacted block's series read twice, or a
 * folded hour's 60 level-0 blocks instead of its level-1 block); the live
 * bytes of `at` are added up first into *before (NULL: no such cut), which
 * the peaks start at. Returns the checkpoint the peaks are tracked from.
 */
static int64_t track_from(struct totals *t, struct totals_heap_walk *w, int64_t **before,
			  int *err)
{
	int64_t at = w->peak_from - 1, from;
	struct sum_ctx c = { w, NULL };

	*before = NULL;
	if (at < 1 || at > w->hi || at > t->through)
		return w->peak_from;
	*err = wide_start(t, at, &from);
	if (*err || (from == at && (at - 1) % t->n[0]))
		return w->peak_from;
	c.live = calloc(w->n_groups > 0 ? (size_t)w->n_groups : 1, sizeof(int64_t));
	if (!c.live) {
		*err = -ENOMEM;
		return w->peak_from;
	}
	*err = totals__heap_range(t, 1, at, sum_row, &c);
	*before = c.live;
	return from;
}

/* The window's sums of a row read apart from the walk. */
static void window_row(void *ctx, const struct totals_row *r)
{
	struct totals_heap_walk *w = ctx;
	int g = w->group_of(w->ctx, r);

	if (g < 0 || g >= w->n_groups)
		return;
	w->alloc_bytes[g] = sat__add(w->alloc_bytes[g], r->alloc_bytes);
	w->free_bytes[g] = sat__add(w->free_bytes[g], r->free_bytes);
	w->alloc_count[g] = sat__add(w->alloc_count[g], r->alloc_count);
	w->free_count[g] = sat__add(w->free_count[g], r->free_count);
	add_temp(w, g, r->temp_count);
}

/* 1..hi cut at the cuts (in order) into *segs; returns how many. */
static int cut_segments(const int64_t *cut, int n_cut, int64_t hi, int64_t segs[][2])
{
	int64_t at = 1;
	int n = 0;

	for (int i = 0; i < n_cut; i++) {
		if (cut[i] > at && cut[i] <= hi) {
			segs[n][0] = at;
			segs[n++][1] = cut[i] - 1;
			at = cut[i];
		}
	}
	if (at <= hi) {
		segs[n][0] = at;
		segs[n++][1] = hi;
	}
	return n;
}

/*
 * What reading checkpoints a..b costs, in reads of a checkpoint's rows: a
 * block's rows (one per key) are about those of one checkpoint.
 */
static int pieces_cost(const struct totals *t, int64_t a, int64_t b, int64_t *cost)
{
	struct totals_piece *v;
	size_t n;
	int err = totals__pieces(t, a, b, &v, &n);

	for (size_t i = 0; i < n && !err; i++)
		*cost += v[i].level >= 0 ? 1 : v[i].last - v[i].first + 1;
	free(v);
	return err;
}

static int segments_cost(const struct totals *t, int64_t segs[][2], int n, int64_t *cost)
{
	int err = 0;

	for (int i = 0; i < n && !err; i++)
		err = pieces_cost(t, segs[i][0], segs[i][1], cost);
	return err;
}

/*
 * The walk's segments: 1..hi cut where the peaks are tracked from, and
 * where the window's allocations start, unless reading those apart costs
 * less (*apart): the walk then reads 1..hi in wider blocks (report --since
 * 10m of an hour: its level-1 block and the window's 10 level-0 blocks,
 * not 60 level-0 blocks).
 */
static int walk_segments(const struct totals *t, const struct totals_heap_walk *w,
			 int64_t from, int64_t win_lo, int64_t segs[][2], int *n, bool *apart)
{
	int64_t cut[2] = { from < win_lo ? from : win_lo, from < win_lo ? win_lo : from };
	int64_t other[4][2], with = 0, without = 0;
	int n_other, err;

	*apart = false;
	*n = cut_segments(cut, 2, w->hi, segs);
	if (win_lo <= 1 || win_lo > w->hi || win_lo == from)
		return 0;
	n_other = cut_segments(&from, 1, w->hi, other);
	err = segments_cost(t, segs, *n, &with);
	if (!err)
		err = segments_cost(t, other, n_other, &without);
	if (!err)
		err = pieces_cost(t, win_lo, w->hi, &without);
	if (err || without >= with)
		return err;
	memcpy(segs, other, sizeof(other));
	*n = n_other;
	*apart = true;
	return 0;
}

int totals__heap_walk(struct totals *t, struct totals_heap_walk *w)
{
	struct walk k = { .t = t, .w = w };
	int64_t segs[4][2], from, win_lo = w->win_lo, *before = NULL;
	int n_segs = 0, err = 0;
	size_t ng = w->n_groups > 0 ? (size_t)w->n_groups : 1;
	bool reset = false, apart = false;

	w->total_live = 0;
	w->rows_read = w->refined = 0;
	w->live = calloc(ng, sizeof(int64_t));
	w->peak = calloc(ng, sizeof(int64_t));
	w->first = calloc(ng, sizeof(int64_t));
	w->alloc_bytes = calloc(ng, sizeof(int64_t));
	w->free_bytes = calloc(ng, sizeof(int64_t));
	w->alloc_count = calloc(ng, sizeof(int64_t));
	w->free_count = calloc(ng, sizeof(int64_t));
	w->temp_count = malloc(ng * sizeof(int64_t));
	w->had_row = calloc(ng, sizeof(bool));
	k.start = calloc(ng, sizeof(int64_t));
	k.ub = calloc(ng, sizeof(int64_t));
	k.single = calloc(ng, sizeof(int64_t));
	k.seen = calloc(ng, sizeof(int64_t));
	k.nmem = calloc(ng, sizeof(int));
	k.list = calloc(ng, sizeof(int));
	if (!w->live || !w->peak || !w->first || !w->alloc_bytes || !w->free_bytes ||
	    !w->alloc_count || !w->free_count || !w->temp_count || !w->had_row || !k.start || !k.ub || !k.single ||
	    !k.seen || !k.nmem || !k.list) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t g = 0; g < ng; g++)
		w->temp_count[g] = -1;
	k.live = w->live;
	from = track_from(t, w, &before, &err);
	/* the allocations of the window: from its widest block (no rows before it) */
	if (!err && w->win_lo <= w->hi)
		err = wide_start(t, w->win_lo, &win_lo);
	if (err)
		goto out;
	err = walk_segments(t, w, from, win_lo, segs, &n_segs, &apart);
	if (!err && apart) {
		size_t before_rows = t->rows;

		err = totals__heap_range(t, win_lo, w->hi, window_row, w);
		w->rows_read += t->rows - before_rows;
	}
	for (int s = 0; s < n_segs && !err; s++) {
		struct totals_piece *v;
		size_t n;

		if (!reset && segs[s][0] >= from) {
			peak_reset(w, before);
			reset = true;
		}
		k.track = reset;
		k.window = !apart && segs[s][0] >= win_lo;
		err = totals__pieces(t, segs[s][0], segs[s][1], &v, &n);
		for (size_t i = 0; i < n && !err; i++)
			err = walk_piece(&k, &v[i]);
		free(v);
	}
	if (!err && !reset)
		peak_reset(w, NULL);
	if (!err)
		err = refine_all(&k);
out:
	free(before);
	free(k.start);
	free(k.ub);
	free(k.single);
	free(k.seen);
	free(k.nmem);
	free(k.list);
	free(k.raw);
	free(k.q);
	if (err)
		totals_heap_walk__free(w);
	return err;
}

/* ---- the check ---------------------------------------------------------- */

#define CHECK_VALUES	6

struct check_key {
	int64_t addr, stack_id, pid, kind;
	bool heap;
	/* event rows; one level of the totals: 4 sums, temp_count's, whether it was counted */
	int64_t raw[CHECK_VALUES], sum[CHECK_VALUES];
};

struct check {
	struct check_key *v;
	size_t n, cap;
	struct hashmap index;
};

static bool check_eq(uint64_t val, const void *key, const void *ctx)
{
	const struct check *c = ctx;
	const struct check_key *a = &c->v[val], *b = key;

	return a->addr == b->addr && a->stack_id == b->stack_id && a->pid == b->pid &&
	       a->kind == b->kind && a->heap == b->heap;
}

static struct check_key *check_key(struct check *c, int64_t addr, int64_t stack_id, int64_t pid,
				   int64_t kind, bool heap)
{
	struct check_key k = { addr, stack_id, pid, kind, heap, { 0 }, { 0 } };
	uint64_t h = hashmap__hash_u64((uint64_t)addr ^ hashmap__hash_u64((uint64_t)stack_id ^
				       hashmap__hash_u64(((uint64_t)pid * 8 + (uint64_t)kind) * 2 +
							 heap))) | 1;
	uint64_t idx = c->n;
	bool fresh;

	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 1024;
		struct check_key *v = realloc(c->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		c->v = v;
		c->cap = cap;
	}
	if (hashmap__intern(&c->index, h, check_eq, &k, c, &idx, &fresh))
		return NULL;
	if (fresh)
		c->v[c->n++] = k;
	return &c->v[idx];
}

/* Add up the rows of sql (addr, stack_id, pid, kind, CHECK_VALUES values) into raw or sum. */
static int check_read(struct db *db, struct check *c, const char *sql, int64_t b1, int64_t b2,
		      bool heap, bool raw)
{
	sqlite3_stmt *st;
	int rc, err = 0;

	if (sqlite3_prepare_v2(db__sqlite(db), sql, -1, &st, NULL) != SQLITE_OK)
		return db__err(db, "check the totals");
	sqlite3_bind_int64(st, 1, b1);
	sqlite3_bind_int64(st, 2, b2);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct check_key *k = check_key(c, sqlite3_column_int64(st, 0),
						sqlite3_column_int64(st, 1),
						sqlite3_column_int64(st, 2),
						sqlite3_column_int64(st, 3), heap);

		if (!k) {
			err = -ENOMEM;
			break;
		}
		for (int i = 0; i < CHECK_VALUES; i++) {
			int64_t *v = &(raw ? k->raw : k->sum)[i];

			*v = sat__add(*v, sqlite3_column_int64(st, 4 + i));
		}
	}
	if (!err && rc != SQLITE_DONE)
		err = db__err(db, "check the totals");
	sqlite3_finalize(st);
	return err;
}

int totals__check(struct db *db)
{
	struct check c = { 0 };
	struct totals *t = NULL;
	int64_t through;
	char sql[320];
	bool temp, kind;
	int err, findings = 0;

	if (!db__has(db, DB_TOTALS))
		return 0;	/* no totals */
	/* the state as it is, even when the rows say it is stale */
	{
		sqlite3_stmt *st;

		if (sqlite3_prepare_v2(db__sqlite(db), "SELECT through FROM totals_state", -1, &st,
				       NULL) != SQLITE_OK)
			return db__err(db, "read totals");
		through = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
		sqlite3_finalize(st);
	}
	if (through < 0) {
		pr_err("%s: totals_state has no row", db__path(db));
		return -RSPROF_EDB;
	}
	err = totals__open(db, &t);
	if (!err && !t) {
		pr_err("%s: the event tables have rows for checkpoints the totals hold, added"
		       " after them (the file was changed by hand); readers scan them instead",
		       db__path(db));
		findings++;
	}
	totals__delete(t);
	/* temp_count where both sides have it (not in an early v3's totals) */
	temp = db__has(db, DB_TOTALS_TEMP | DB_TEMP_COUNT);
	/* kind: the totals' where they have it, else 0 as they were written */
	kind = db__has(db, DB_TOTALS_KIND);
	if (!err)
		err = check_read(db, &c, "SELECT addr, -1, IFNULL(pid, 0), 0, count, 0, 0, 0, 0, 0"
				 " FROM cpu_samples WHERE checkpoint_id <= ?1", through, 0, false,
				 true);
	if (!err) {
		snprintf(sql, sizeof(sql), "SELECT addr, IFNULL(stack_id, -1), IFNULL(pid, 0), %s,"
			 " alloc_bytes, free_bytes, alloc_count, free_count, %s FROM heap_events"
			 " WHERE checkpoint_id <= ?1", kind ? "kind" : "0", temp ?
			 "IFNULL(temp_count, 0), temp_count IS NOT NULL" : "0, 0");
		err = check_read(db, &c, sql, through, 0, true, true);
	}
	for (int level = 0; level < TOTALS_LEVELS && !err; level++) {
		int bad = 0;

		for (size_t i = 0; i < c.n; i++)
			memset(c.v[i].sum, 0, sizeof(c.v[i].sum));
		err = check_read(db, &c, "SELECT addr, -1, pid, 0, count, 0, 0, 0, 0, 0 FROM cpu_totals"
				 " WHERE level = ?1", level, 0, false, false);
		if (!err) {
			snprintf(sql, sizeof(sql), "SELECT addr, stack_id, pid, %s, alloc_bytes,"
				 " free_bytes, alloc_count, free_count, %s FROM heap_totals"
				 " WHERE level = ?1", kind ? "kind" : "0", temp ?
				 "IFNULL(temp_count, 0), temp_count IS NOT NULL" : "0, 0");
			err = check_read(db, &c, sql, level, 0, true, false);
		}
		for (size_t i = 0; i < c.n && !err; i++) {
			const struct check_key *k = &c.v[i];

			/* counted or not: by any row (raw), by the key's total (sum) */
			if (!memcmp(k->raw, k->sum, 5 * sizeof(k->raw[0])) &&
			    (k->raw[5] > 0) == (k->sum[5] > 0))
				continue;
			if (bad++ < 3)
				pr_err("%s: totals of level %d: %s addr %#llx stack %lld pid %lld kind %lld:"
				       " %lld %lld %lld %lld temp %lld%s in the totals, %lld %lld %lld"
				       " %lld temp %lld%s in the event rows of checkpoints 1..%lld",
				       db__path(db), level,
				       k->heap ? "heap" : "cpu", (unsigned long long)k->addr,
				       (long long)k->stack_id, (long long)k->pid, (long long)k->kind,
				       (long long)k->sum[0], (long long)k->sum[1],
				       (long long)k->sum[2], (long long)k->sum[3],
				       (long long)k->sum[4], k->sum[5] ? "" : " (not counted)",
				       (long long)k->raw[0], (long long)k->raw[1],
				       (long long)k->raw[2], (long long)k->raw[3],
				       (long long)k->raw[4], k->raw[5] ? "" : " (not counted)",
				       (long long)through);
		}
		if (bad > 3)
			pr_err("%s: totals of level %d: %d keys differ in all", db__path(db), level,
			       bad);
		findings += bad;
	}
	free(c.v);
	hashmap__free(&c.index);
	if (err)
		return err;
	return findings ? -RSPROF_EDB : 0;
}
