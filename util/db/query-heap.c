/*
 * Heap rows (report --heap, top): live bytes, peaks and allocations per
 * group, from the heap_events deltas in checkpoint order.
 */
#include "util/db/query.h"
#include "util/db/query-priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

#include "util/db/db.h"
#include "util/db/totals.h"
#include "util/error.h"

/* Peaks are taken at checkpoint boundaries, for the groups the checkpoint changed. */
static void heap_settle(struct scan *sc)
{
	for (int i = 0; i < sc->n_touched; i++) {
		struct qgroup *t = &sc->q->groups[sc->touched[i]];

		if (t->live > t->peak)
			t->peak = t->live;
	}
	sc->n_touched = 0;
}

/*
 * One heap_events row, in checkpoint order: each group's running live bytes,
 * its peak (two sites of one group moving in opposite directions within a
 * checkpoint do not make a peak that never existed), its allocations in the
 * window.
 */
static void heap_row(struct scan *sc, int64_t cp, int64_t addr, int64_t ab, int64_t fb,
		     int64_t ac, int64_t fc)
{
	const struct qsym *s = qctx_find(sc->q, addr);
	struct qgroup *g = &sc->q->groups[s->group];

	if (cp != sc->cur) {
		if (cp < sc->cur)
			sc->unordered = true;
		heap_settle(sc);
		sc->cur = cp;
	}
	sc->total_live += ab - fb;
	if (!s->match)
		return;
	if (g->touched_cp != cp + 1) {
		g->touched_cp = cp + 1;
		sc->touched[sc->n_touched++] = s->group;
	}
	g->live += ab - fb;
	if (cp >= sc->win_lo) {
		g->alloc_bytes += ab;
		g->free_bytes += fb;
		g->alloc_count += ac;
		g->free_count += fc;
	}
}

static void sql_heap_row(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	heap_row(sqlite3_user_data(ctx), sqlite3_value_int64(argv[0]),
		 sqlite3_value_int64(argv[1]), sqlite3_value_int64(argv[2]),
		 sqlite3_value_int64(argv[3]), sqlite3_value_int64(argv[4]),
		 sqlite3_value_int64(argv[5]));
	sqlite3_result_int(ctx, 0);
}

/* The ORDER BY path for a file whose heap rows are not in checkpoint order. */
static int heap_scan_ordered(struct db *db, struct scan *sc, int64_t hi, bool v2)
{
	sqlite3_stmt *st;
	int rc, err = q_prepare(db, "read heap events", v2 ?
		"SELECT checkpoint_id, addr, alloc_bytes, free_bytes, alloc_count, free_count"
		" FROM heap_events WHERE checkpoint_id <= ? ORDER BY checkpoint_id" :
		"SELECT checkpoint_id, addr, alloc_bytes, free_bytes, 0, 0"
		" FROM heap_events WHERE checkpoint_id <= ? ORDER BY checkpoint_id", &st);

	if (err)
		return err;
	sqlite3_bind_int64(st, 1, hi);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		heap_row(sc, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
			 sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3),
			 sqlite3_column_int64(st, 4), sqlite3_column_int64(st, 5));
	if (rc != SQLITE_DONE)
		err = q_err(db, "read heap events");
	sqlite3_finalize(st);
	return err;
}

/* The group a key's rows count in (-1: filtered out), as heap_row() puts them. */
static int totals_group(void *ctx, const struct totals_row *r)
{
	const struct qctx *q = ctx;
	const struct qsym *s = qctx_find(q, r->addr);

	return s->match ? s->group : -1;
}

/* The groups' numbers from the writer's totals instead of a scan. */
static int heap_from_totals(struct totals *t, struct qctx *q, int64_t hi, int64_t win_lo,
			    int64_t *total_live)
{
	struct totals_heap_walk w = {
		.n_groups = q->n_groups + 1,
		.group_of = totals_group,
		.ctx = q,
		.hi = hi,
		.peak_from = 1,
		.win_lo = win_lo,
	};
	int err = totals__heap_walk(t, &w);

	if (err)
		return err;
	for (int i = 0; i <= q->n_groups; i++) {
		struct qgroup *g = &q->groups[i];

		g->live = w.live[i];
		g->peak = w.peak[i];
		g->alloc_bytes = w.alloc_bytes[i];
		g->free_bytes = w.free_bytes[i];
		g->alloc_count = w.alloc_count[i];
		g->free_count = w.free_count[i];
	}
	*total_live = w.total_live;
	pr_debug(2, "heap from the totals: %zu rows, %zu blocks read again", w.rows_read,
		 w.refined);
	totals_heap_walk__free(&w);
	return 0;
}

int db_query_heap(struct db *db, const struct query_filter *f, int64_t *total_live,
		  prof_row_cb cb, void *ctx)
{
	const bool v2 = db__version(db) >= 2;
	uint64_t end = f->at_ms != TIME_NONE && (f->to_ms == TIME_NONE || f->at_ms < f->to_ms) ?
		       f->at_ms : f->to_ms;
	struct scan sc = { 0 };
	struct totals *t = NULL;
	struct qctx q;
	int64_t lo, hi, wlo, whi;
	bool all, snap;
	int err;

	*total_live = 0;
	err = q_snapshot(db, &snap);
	if (err)
		return err;
	err = qctx_load(&q, db, f);
	if (!err)
		err = checkpoint_range(db, TIME_NONE, end, &lo, &hi, &all);
	if (!err)
		err = checkpoint_range(db, f->from_ms, end, &wlo, &whi, &all);
	if (!err)
		err = totals__open(db, &t);
	if (err || lo > hi)
		goto out;
	sc.q = &q;
	sc.cur = -1;
	sc.win_lo = wlo > whi ? INT64_MAX : wlo;	/* empty window: nothing allocated */
	if (t) {
		err = heap_from_totals(t, &q, hi, sc.win_lo, total_live);
		if (err)
			goto out;
		goto rows;
	}
	sc.touched = malloc((q.n_groups + 1) * sizeof(int));
	if (!sc.touched) {
		err = -ENOMEM;
		goto out;
	}
	/*
	 * Rows are written in checkpoint order, so the table scan (the unary +
	 * keeps SQLite off idx_heap_checkpoint) is ordered; a file where they
	 * are not (edited by hand) is read again with ORDER BY.
	 */
	err = run_scan(db, "read heap events", "rsprof_heap_row", 6, sql_heap_row, &sc, v2 ?
		       "SELECT 1 FROM heap_events WHERE +checkpoint_id <= ? AND rsprof_heap_row("
		       "checkpoint_id, addr, alloc_bytes, free_bytes, alloc_count, free_count)" :
		       "SELECT 1 FROM heap_events WHERE +checkpoint_id <= ? AND rsprof_heap_row("
		       "checkpoint_id, addr, alloc_bytes, free_bytes, 0, 0)", 1, hi, 0);
	if (!err && sc.unordered) {
		for (int i = 0; i <= q.n_groups; i++) {
			const struct qsym *rep = q.groups[i].rep;

			memset(&q.groups[i], 0, sizeof(q.groups[i]));
			q.groups[i].rep = rep;
		}
		sc.total_live = 0;
		sc.cur = -1;
		sc.n_touched = 0;
		err = heap_scan_ordered(db, &sc, hi, v2);
	}
	if (err)
		goto out;
	heap_settle(&sc);
	*total_live = sc.total_live;
rows:
	for (int i = 0; i <= q.n_groups; i++) {
		struct qgroup *g = &q.groups[i];

		g->used = g->live > 0 || g->alloc_bytes > 0;
	}
	err = emit_rows(&q, true, (double)*total_live, cb, ctx);
out:
	free(sc.touched);
	totals__delete(t);
	qctx_free(&q);
	q_snapshot_end(db, snap);
	return err;
}
