/*
 * Heap rows (report --heap, top): live bytes, peaks and allocations per
 * group, from the heap_events deltas in checkpoint order.
 */
#include "util/db/read/query.h"
#include "util/array.h"
#include "util/db/read/query-priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

#include "util/db/db.h"
#include "util/db/read/totals.h"
#include "util/error.h"
#include "util/str.h"
#include "util/saturate.h"

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
/* The hint's tally: this stack's live bytes, and where its rows went. */
static void stack_tally(struct scan *sc, int64_t stack_id, int group, int64_t delta)
{
	uint64_t slot;
	struct stack_live *l;

	if (!hashmap__get(sc->stack_slot, (uint64_t)stack_id, &slot)) {
		if (ALLOC_GROW(sc->stack_live, sc->n_stack_live + 1, sc->cap_stack_live, 1024)) {
			sc->no_memory = true;
			return;
		}
		slot = (uint64_t)++sc->n_stack_live;
		sc->stack_live[slot - 1] = (struct stack_live){ .id = stack_id, .group = group };
		if (hashmap__set(sc->stack_slot, (uint64_t)stack_id, slot)) {
			sc->no_memory = true;
			return;
		}
	}
	l = &sc->stack_live[slot - 1];
	l->live = sat__add(l->live, delta);
}

static void heap_row(struct scan *sc, int64_t cp, int64_t addr, int64_t stack_id, int64_t ab,
		     int64_t fb, int64_t ac, int64_t fc, int64_t pid, bool no_pid, int64_t tc,
		     int64_t kind)
{
	const struct qsym *s = NULL;
	struct qgroup *g;
	int gi;

	if (sc->ra && stack_id >= 0)
		s = reattrib_site(sc->ra, sc->q, stack_id);
	if (!s)
		s = qctx_find(sc->q, addr);
	gi = qctx_group_of(sc->q, s, pid, no_pid);

	if (gi < 0)
		return;
	g = &sc->q->groups[gi];
	if (cp != sc->cur) {
		if (cp < sc->cur)
			sc->unordered = true;
		heap_settle(sc);
		sc->cur = cp;
	}
	/* values from the file: saturating (util/saturate.h) */
	sc->total_live = sat__add(sc->total_live, sat__sub(ab, fb));
	if (!s->match)
		return;
	if (g->touched_cp != cp + 1) {
		g->touched_cp = cp + 1;
		sc->touched[sc->n_touched++] = gi;
	}
	g->live = sat__add(g->live, sat__sub(ab, fb));
	if (ab > 0 && kind >= 0 && kind < 8)
		g->kinds |= 1u << kind;
	if (sc->stack_slot && stack_id >= 0)
		stack_tally(sc, stack_id, gi, sat__sub(ab, fb));
	if (cp >= sc->win_lo) {
		g->alloc_bytes = sat__add(g->alloc_bytes, ab);
		g->free_bytes = sat__add(g->free_bytes, fb);
		g->alloc_count = sat__add(g->alloc_count, ac);
		g->free_count = sat__add(g->free_count, fc);
		if (tc >= 0) {
			g->temp_count = sat__add(g->temp_count, tc);
			g->temp_known = true;
		}
	}
}

static void sql_heap_row(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	heap_row(sqlite3_user_data(ctx), sqlite3_value_int64(argv[0]),
		 sqlite3_value_int64(argv[1]), sqlite3_value_int64(argv[2]),
		 sqlite3_value_int64(argv[3]), sqlite3_value_int64(argv[4]),
		 sqlite3_value_int64(argv[5]), sqlite3_value_int64(argv[6]),
		 sqlite3_value_int64(argv[7]), sqlite3_value_type(argv[7]) == SQLITE_NULL,
		 sqlite3_value_type(argv[8]) == SQLITE_NULL ? -1 : sqlite3_value_int64(argv[8]),
		 sqlite3_value_int64(argv[9]));
	sqlite3_result_int(ctx, 0);
}

/* The ORDER BY path for a file whose heap rows are not in checkpoint order. */
static int heap_scan_ordered(struct db *db, struct scan *sc, int64_t hi, const char *cols)
{
	sqlite3_stmt *st;
	char sql[512];
	int rc, err;

	snprintf(sql, sizeof(sql), "SELECT %s FROM heap_events WHERE checkpoint_id <= ?"
		 " ORDER BY checkpoint_id", cols);
	err = db__prepare(db, "read heap events", sql, &st);
	if (err)
		return err;
	sqlite3_bind_int64(st, 1, hi);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		heap_row(sc, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
			 sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3),
			 sqlite3_column_int64(st, 4), sqlite3_column_int64(st, 5),
			 sqlite3_column_int64(st, 6), sqlite3_column_int64(st, 7),
			 sqlite3_column_type(st, 7) == SQLITE_NULL,
			 sqlite3_column_type(st, 8) == SQLITE_NULL ? -1 :
			 sqlite3_column_int64(st, 8), sqlite3_column_int64(st, 9));
	if (rc != SQLITE_DONE)
		err = db__err(db, "read heap events");
	sqlite3_finalize(st);
	return err;
}

/*
 * The hint: the top group holds at least half of the live heap
 * and its stacks were called from at least HINT_CALLERS distinct lines.
 */
#define HINT_MIN_PCT	50.0
#define HINT_CALLERS	2

static int find_hint(struct scan *sc, int64_t total, struct heap_hint *hint)
{
	struct qctx *q = sc->q;
	struct hashmap callers = { 0 };
	const struct qgroup *top = NULL;
	int t = -1, err = 0;

	if (total <= 0)
		return 0;
	for (int i = 0; i < q->n_groups; i++) {	/* not the [unknown] group */
		if (q->groups[i].live > 0 && q->groups[i].rep->match &&
		    (!top || q->groups[i].live > top->live)) {
			top = &q->groups[i];
			t = i;
		}
	}
	if (!top || 100.0 * (double)top->live / (double)total < HINT_MIN_PCT)
		return 0;
	for (int i = 0; i < sc->n_stack_live && !err; i++) {
		const struct stack_live *l = &sc->stack_live[i];
		uint64_t c;

		if (l->group != t || l->live <= 0)
			continue;
		c = reattrib_caller(sc->ra, l->id);
		if (c)
			err = hashmap__set(&callers, c, 1);
	}
	if (!err && hashmap__size(&callers) >= HINT_CALLERS) {
		hint->suspect = true;
		hint->pct = 100.0 * (double)top->live / (double)total;
		hint->callers = (int)hashmap__size(&callers);
		hint->line = top->rep->line;
		hint->file = str__dup(top->rep->file, &err);
		hint->function = str__dup(top->rep->function, &err);
	}
	hashmap__free(&callers);
	return err;
}

/*
 * The group a key's rows count in, as heap_row() puts them: re-attributed
 * past allocation wrappers by their stack, by process; -1: in total_live
 * only (the pattern leaves it out), -2: not at all (another process).
 */
static int totals_group(void *ctx, const struct totals_row *r)
{
	const struct scan *sc = ctx;
	const struct qsym *s = NULL;
	int gi;

	if (sc->ra && r->stack_id >= 0)
		s = reattrib_site(sc->ra, sc->q, r->stack_id);
	if (!s)
		s = qctx_find(sc->q, r->addr);
	gi = qctx_group_of(sc->q, s, r->pid, r->pid == 0);
	if (gi < 0)
		return -2;
	return s->match ? gi : -1;
}

/* A row the walk counted in group g: its kind, and the hint's tally. */
static void totals_tally(void *ctx, const struct totals_row *r, int g)
{
	struct scan *sc = ctx;

	/* as heap_row(): the kinds of its rows that allocated */
	if (r->alloc_bytes > 0 && r->kind >= 0 && r->kind < 8)
		sc->q->groups[g].kinds |= 1u << r->kind;
	if (sc->stack_slot && r->stack_id >= 0)
		stack_tally(sc, r->stack_id, g, sat__sub(r->alloc_bytes, r->free_bytes));
}

/*
 * Do the heap rows count temporary allocations (heap_events.temp_count, the
 * in-process tracker)? The totals of an early v3 file (no
 * heap_totals.temp_count) do not add them up: such a file is scanned. The rows of the last checkpoint with heap rows tell (through
 * idx_heap_checkpoint, not a scan): the tracker writes it on every row.
 */
static int heap_temp_rows(struct db *db, bool *temp)
{
	sqlite3_stmt *st;
	int rc, err;

	*temp = false;
	if (!db__has(db, DB_TEMP_COUNT))
		return 0;
	err = db__prepare(db, "read heap events", "SELECT EXISTS (SELECT 1 FROM heap_events"
			" WHERE checkpoint_id = (SELECT MAX(checkpoint_id) FROM heap_events)"
			" AND temp_count IS NOT NULL)", &st);
	if (err)
		return err;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*temp = sqlite3_column_int(st, 0);
	else
		err = db__err(db, "read heap events");
	sqlite3_finalize(st);
	return err;
}

/* The groups' numbers from the writer's totals instead of a scan. */
static int heap_from_totals(struct totals *t, struct scan *sc, int64_t hi)
{
	struct qctx *q = sc->q;
	struct totals_heap_walk w = {
		.n_groups = q->n_groups + 1,
		.group_of = totals_group,
		.counted = totals_tally,
		.ctx = sc,
		.hi = hi,
		.peak_from = 1,
		.win_lo = sc->win_lo,
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
		g->temp_count = w.temp_count[i] < 0 ? 0 : w.temp_count[i];
		g->temp_known = w.temp_count[i] >= 0;
	}
	sc->total_live = w.total_live;
	pr_debug(2, "heap from the totals: %zu rows, %zu blocks read again", w.rows_read,
		 w.refined);
	totals_heap_walk__free(&w);
	return 0;
}

static int heap_query(struct db *db, const struct query_filter *f, int64_t *total_live,
		      prof_row_cb cb, void *ctx, struct heap_hint *hint)
{
	const bool v2 = db__has(db, DB_V2);
	uint64_t end = f->at_ms != TIME_NONE && (f->win.to_ms == TIME_NONE || f->at_ms < f->win.to_ms) ?
		       f->at_ms : f->win.to_ms;
	struct scan sc = { 0 };
	struct reattrib ra = { 0 };
	struct hashmap slots = { 0 };
	struct totals *t = NULL;
	struct qctx q;
	int64_t lo, hi, wlo, whi;
	bool all, snap, temp = false;
	char cols[256], sql[512];
	int err;

	*total_live = 0;
	if (hint)
		memset(hint, 0, sizeof(*hint));
	err = q_snapshot(db, &snap);
	if (err)
		return err;
	err = qctx_load_syms(&q, db, f);
	if (!err)
		err = reattrib_load(&q, &ra);
	if (!err)
		err = qctx_group(&q);
	if (!err)
		err = checkpoint_range(db, TIME_NONE, end, &lo, &hi, &all);
	if (!err)
		err = checkpoint_range(db, f->win.from_ms, end, &wlo, &whi, &all);
	if (!err && !db__has(db, DB_TOTALS_TEMP))
		err = heap_temp_rows(db, &temp);
	if (!err && !temp)
		err = totals__open(db, &t);
	else if (!err)
		pr_debug(1, "%s: the totals do not add up temp_count: scanning", db__path(db));
	if (err || lo > hi)
		goto out;
	sc.q = &q;
	sc.ra = &ra;
	sc.stack_slot = hint ? &slots : NULL;
	sc.cur = -1;
	sc.win_lo = wlo > whi ? INT64_MAX : wlo;	/* empty window: nothing allocated */
	if (t) {
		err = heap_from_totals(t, &sc, hi);
		if (!err && sc.no_memory)
			err = -ENOMEM;
		if (err)
			goto out;
		*total_live = sc.total_live;
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
	/* the columns a file of this version has (v3: pid, temp_count, kind) */
	snprintf(cols, sizeof(cols), "%s, %s, %s",
		 q.has_pid ? "checkpoint_id, addr, IFNULL(stack_id, -1), alloc_bytes, free_bytes,"
			     " alloc_count, free_count, pid" :
		 v2 ? "checkpoint_id, addr, IFNULL(stack_id, -1), alloc_bytes, free_bytes,"
		      " alloc_count, free_count, NULL" :
		      "checkpoint_id, addr, -1, alloc_bytes, free_bytes, 0, 0, NULL",
		 db__has(db, DB_TEMP_COUNT) ? "temp_count" : "NULL",
		 db__has(db, DB_KIND) ? "kind" : "0");
	snprintf(sql, sizeof(sql), "SELECT 1 FROM heap_events WHERE +checkpoint_id <= ? AND"
		 " rsprof_heap_row(%s)", cols);
	err = run_scan(db, "read heap events", "rsprof_heap_row", 10, sql_heap_row, &sc, sql, 1,
		       hi, 0);
	if (!err && sc.unordered) {
		for (int i = 0; i <= q.n_groups; i++) {
			const struct qsym *rep = q.groups[i].rep;

			memset(&q.groups[i], 0, sizeof(q.groups[i]));
			q.groups[i].rep = rep;
		}
		sc.total_live = 0;
		sc.cur = -1;
		sc.n_touched = 0;
		sc.n_stack_live = 0;
		hashmap__clear(&slots);
		err = heap_scan_ordered(db, &sc, hi, cols);
	}
	if (!err && sc.no_memory)
		err = -ENOMEM;
	if (err)
		goto out;
	heap_settle(&sc);
	*total_live = sc.total_live;
rows:
	for (int i = 0; i <= q.n_groups; i++) {
		struct qgroup *g = &q.groups[i];

		g->used = g->live > 0 || g->alloc_bytes > 0;
	}
	if (hint)
		err = find_hint(&sc, *total_live, hint);
	if (!err)
		err = emit_rows(&q, true, (double)*total_live, cb, ctx);
out:
	free(sc.touched);
	free(sc.stack_live);
	hashmap__free(&slots);
	reattrib_free(&ra);
	totals__delete(t);
	qctx_free(&q);
	q_snapshot_end(db, snap);
	return err;
}

int db_query_heap(struct db *db, const struct query_filter *f, int64_t *total_live,
		  prof_row_cb cb, void *ctx)
{
	return heap_query(db, f, total_live, cb, ctx, NULL);
}

int db_query_heap_hint(struct db *db, const struct query_filter *f, int64_t *total_live,
		       prof_row_cb cb, void *ctx, struct heap_hint *hint)
{
	return heap_query(db, f, total_live, cb, ctx, hint);
}

void heap_hint__free(struct heap_hint *h)
{
	if (!h)
		return;
	free(h->file);
	free(h->function);
	h->file = h->function = NULL;
}

int db_query_heap_mmap_peak(struct db *db, int64_t *mmap_bytes, int64_t *live)
{
	sqlite3_stmt *st;
	int rc, err;

	*mmap_bytes = *live = 0;
	if (!db__has(db, DB_KIND))
		return 0;
	err = db__prepare(db, "read the heap's peak",
			  "SELECT m, l FROM (SELECT SUM(SUM(CASE WHEN kind = 1 THEN alloc_bytes"
			  " - free_bytes ELSE 0 END)) OVER (ORDER BY checkpoint_id) AS m,"
			  " SUM(SUM(alloc_bytes - free_bytes)) OVER (ORDER BY checkpoint_id) AS l"
			  " FROM heap_events GROUP BY checkpoint_id) ORDER BY l DESC LIMIT 1", &st);
	if (err)
		return err;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*mmap_bytes = sqlite3_column_int64(st, 0);
		*live = sqlite3_column_int64(st, 1);
	} else if (rc != SQLITE_DONE) {
		err = db__err(db, "read the heap's peak");
	}
	sqlite3_finalize(st);
	return err;
}
