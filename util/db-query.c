/*
 * The shared read queries (seed 000 §7.5, extended): ranked CPU and heap
 * rows, the summary, the meta table.
 *
 * The ranking aggregates in C rather than with GROUP BY: one sequential scan
 * of cpu_samples or heap_events feeds per-address counters, addresses map
 * to their group (line, function, file or module) through the symbols
 * table loaded once. SQLite has no hash aggregate, and GROUP BY addr over
 * an hour of samples (3.6 M rows) sorts or walks idx_cpu_addr with a
 * random row lookup per sample; the scan is several times faster and also
 * gives per-site peaks in the same pass.
 */
#include "util/db-query.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

#include "util/db.h"
#include "util/error.h"
#include "util/symbol.h"
#include "util/str.h"

void query_filter__init(struct query_filter *f)
{
	memset(f, 0, sizeof(*f));
	f->from_ms = f->to_ms = f->at_ms = TIME_NONE;
	f->group = GROUP_LINE;
}

static int q_err(struct db *db, const char *what)
{
	pr_err("%s: %s: %s", db__path(db), what, sqlite3_errmsg(db__sqlite(db)));
	return -RSPROF_EDB;
}

static int q_prepare(struct db *db, const char *what, const char *sql, sqlite3_stmt **st)
{
	if (sqlite3_prepare_v2(db__sqlite(db), sql, -1, st, NULL) != SQLITE_OK) {
		*st = NULL;
		return q_err(db, what);
	}
	return 0;
}

/* ---- symbols and groups ------------------------------------------------- */

struct qsym {
	int64_t addr;
	char *file, *function, *module;
	int line;
	int group;
	bool match;		/* passes the filter's pattern */
};

struct qgroup {
	const struct qsym *rep;	/* a member: file, line, function, module */
	uint64_t samples;
	int64_t live, peak;
	int64_t alloc_bytes, free_bytes, alloc_count, free_count;
	int64_t touched_cp;	/* last checkpoint that changed live */
	bool used;
};

struct qctx {
	struct db *db;
	const struct query_filter *f;
	struct qsym *syms;
	int n_syms;
	struct qgroup *groups;	/* n_groups + 1: the last one is for unknown addresses */
	int n_groups;
	struct qsym unknown;
	int *slots;		/* open addressing: addr -> index in syms, -1 empty */
	unsigned int mask, shift;
};

static void qctx_free(struct qctx *q)
{
	for (int i = 0; i < q->n_syms; i++) {
		free(q->syms[i].file);
		free(q->syms[i].function);
		free(q->syms[i].module);
	}
	free(q->syms);
	free(q->groups);
	free(q->slots);
}

static inline unsigned int addr_hash(const struct qctx *q, int64_t addr)
{
	return (unsigned int)(((uint64_t)addr * 0x9E3779B97F4A7C15ULL) >> q->shift) & q->mask;
}

static int qctx_index(struct qctx *q)
{
	unsigned int size = 16, bits = 4;

	while (size < 2u * (unsigned int)q->n_syms) {
		size <<= 1;
		bits++;
	}
	q->slots = malloc(size * sizeof(*q->slots));
	if (!q->slots)
		return -ENOMEM;
	memset(q->slots, 0xff, size * sizeof(*q->slots));
	q->mask = size - 1;
	q->shift = 64 - bits;
	for (int i = 0; i < q->n_syms; i++) {
		unsigned int h = addr_hash(q, q->syms[i].addr);

		while (q->slots[h] >= 0)
			h = (h + 1) & q->mask;
		q->slots[h] = i;
	}
	return 0;
}

static char *dup_col(sqlite3_stmt *st, int i, int *err)
{
	return str__dup((const char *)sqlite3_column_text(st, i), err);
}

/* NULL sorts first and differs from "" */
static int key_cmp_str(const char *a, const char *b)
{
	if (!a || !b)
		return (a != NULL) - (b != NULL);
	return strcmp(a, b);
}

/* The group key of a symbol under the chosen aggregation. */
static int qsym_cmp_key(const struct qsym *a, const struct qsym *b, enum group_by by)
{
	int c;

	switch (by) {
	case GROUP_LINE:
		c = key_cmp_str(a->file, b->file);
		if (!c)
			c = (a->line > b->line) - (a->line < b->line);
		if (!c)
			c = key_cmp_str(a->function, b->function);
		if (!c && !a->file && !a->function)
			c = key_cmp_str(a->module, b->module);
		return c;
	case GROUP_FUNCTION:
		c = key_cmp_str(a->function, b->function);
		if (!c)
			c = key_cmp_str(a->file, b->file);
		if (!c && !a->function)
			c = key_cmp_str(a->module, b->module);
		return c;
	case GROUP_FILE:
		c = key_cmp_str(a->file, b->file);
		if (!c && !a->file)
			c = key_cmp_str(a->module, b->module);
		return c;
	case GROUP_MODULE:
	default:
		return key_cmp_str(a->module, b->module);
	}
}

static int qsym_ptr_cmp(const void *pa, const void *pb, void *by)
{
	const struct qsym *a = *(const struct qsym *const *)pa, *b = *(const struct qsym *const *)pb;

	return qsym_cmp_key(a, b, *(const enum group_by *)by);
}

static bool pattern_match(const struct qsym *s, const char *pat)
{
	if (!pat || !*pat)
		return true;
	return (s->file && strcasestr(s->file, pat)) ||
	       (s->function && strcasestr(s->function, pat)) ||
	       (!s->file && s->module && strcasestr(s->module, pat));
}

static int qctx_load(struct qctx *q, struct db *db, const struct query_filter *f)
{
	const char *sql = db__version(db) >= 2 ?
		"SELECT addr, file, line, function, module FROM symbols ORDER BY addr" :
		"SELECT addr, file, line, function, NULL FROM symbols ORDER BY addr";
	struct qsym **order = NULL;
	sqlite3_stmt *st;
	int cap = 0, rc, err;

	memset(q, 0, sizeof(*q));
	q->db = db;
	q->f = f;
	err = q_prepare(db, "read symbols", sql, &st);
	if (err)
		return err;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct qsym *s;

		if (q->n_syms == cap) {
			int ncap = cap ? 2 * cap : 1024;
			struct qsym *v = realloc(q->syms, ncap * sizeof(*v));

			if (!v) {
				err = -ENOMEM;
				break;
			}
			q->syms = v;
			cap = ncap;
		}
		s = &q->syms[q->n_syms++];
		memset(s, 0, sizeof(*s));
		s->addr = sqlite3_column_int64(st, 0);
		s->file = dup_col(st, 1, &err);
		s->line = sqlite3_column_int(st, 2);
		s->function = dup_col(st, 3, &err);
		s->module = dup_col(st, 4, &err);
		if (err)
			break;
	}
	if (!err && rc != SQLITE_DONE)
		err = q_err(db, "read symbols");
	sqlite3_finalize(st);
	if (err)
		return err;

	err = qctx_index(q);
	if (err)
		return err;
	/* groups: sort pointers by key, equal keys share a group */
	if (q->n_syms) {
		order = malloc(q->n_syms * sizeof(*order));
		if (!order)
			return -ENOMEM;
	}
	for (int i = 0; i < q->n_syms; i++)
		order[i] = &q->syms[i];
	if (q->n_syms)
		qsort_r(order, q->n_syms, sizeof(*order), qsym_ptr_cmp, (void *)&f->group);
	q->groups = calloc(q->n_syms + 1, sizeof(*q->groups));
	if (!q->groups) {
		free(order);
		return -ENOMEM;
	}
	for (int i = 0; i < q->n_syms; i++) {
		if (i == 0 || qsym_cmp_key(order[i - 1], order[i], f->group))
			q->groups[q->n_groups++].rep = order[i];
		order[i]->group = q->n_groups - 1;
		order[i]->match = pattern_match(order[i], f->pattern);
	}
	free(order);
	/* addresses without a symbols row: one "[unknown]" group */
	q->unknown.group = q->n_groups;
	q->unknown.match = pattern_match(&q->unknown, f->pattern);
	q->groups[q->n_groups].rep = &q->unknown;
	return 0;
}

static const struct qsym *qctx_find(const struct qctx *q, int64_t addr)
{
	for (unsigned int h = addr_hash(q, addr); q->slots[h] >= 0; h = (h + 1) & q->mask)
		if (q->syms[q->slots[h]].addr == addr)
			return &q->syms[q->slots[h]];
	return &q->unknown;
}

/* The checkpoint ids [*lo, *hi] whose timestamps fall in [from, to]; *lo > *hi when none. */
static int checkpoint_range(struct db *db, uint64_t from, uint64_t to, int64_t *lo, int64_t *hi,
			    bool *all)
{
	sqlite3_stmt *st;
	int err = q_prepare(db, "read checkpoints",
			    "SELECT MIN(id), MAX(id), (SELECT MIN(id) FROM checkpoints),"
			    " (SELECT MAX(id) FROM checkpoints) FROM checkpoints"
			    " WHERE timestamp_ms >= ? AND timestamp_ms <= ?", &st);
	int rc;

	if (err)
		return err;
	sqlite3_bind_int64(st, 1, from > INT64_MAX ? INT64_MAX : (int64_t)from);
	sqlite3_bind_int64(st, 2, to > INT64_MAX ? INT64_MAX : (int64_t)to);
	if (from == TIME_NONE)
		sqlite3_bind_int64(st, 1, 0);
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		err = q_err(db, "read checkpoints");
	} else if (sqlite3_column_type(st, 0) == SQLITE_NULL) {
		*lo = 1;
		*hi = 0;
		*all = false;
	} else {
		*lo = sqlite3_column_int64(st, 0);
		*hi = sqlite3_column_int64(st, 1);
		*all = *lo == sqlite3_column_int64(st, 2) && *hi == sqlite3_column_int64(st, 3);
	}
	sqlite3_finalize(st);
	return err;
}

static struct prof_row row_of(const struct qgroup *g, enum group_by by)
{
	struct prof_row r = {
		.file = g->rep->file,
		.line = by == GROUP_LINE ? g->rep->line : 0,
		.function = by <= GROUP_FUNCTION ? g->rep->function : NULL,
		.module = g->rep->module,
		.samples = g->samples,
		.live_bytes = g->live,
		.peak_bytes = g->peak,
		.alloc_bytes = g->alloc_bytes,
		.free_bytes = g->free_bytes,
		.alloc_count = g->alloc_count,
		.free_count = g->free_count,
	};

	if (by == GROUP_MODULE)
		r.file = NULL;
	return r;
}

/* Deterministic order for equal values: by location. */
static int group_tiebreak(const struct qgroup *a, const struct qgroup *b)
{
	int c = key_cmp_str(a->rep->file, b->rep->file);

	if (!c)
		c = (a->rep->line > b->rep->line) - (a->rep->line < b->rep->line);
	if (!c)
		c = key_cmp_str(a->rep->function, b->rep->function);
	if (!c)
		c = key_cmp_str(a->rep->module, b->rep->module);
	return c;
}

static int cpu_cmp(const void *pa, const void *pb)
{
	const struct qgroup *a = *(const struct qgroup *const *)pa;
	const struct qgroup *b = *(const struct qgroup *const *)pb;

	if (a->samples != b->samples)
		return a->samples < b->samples ? 1 : -1;
	return group_tiebreak(a, b);
}

static int heap_cmp(const void *pa, const void *pb)
{
	const struct qgroup *a = *(const struct qgroup *const *)pa;
	const struct qgroup *b = *(const struct qgroup *const *)pb;

	if (a->live != b->live)
		return a->live < b->live ? 1 : -1;
	if (a->peak != b->peak)
		return a->peak < b->peak ? 1 : -1;
	if (a->alloc_bytes != b->alloc_bytes)
		return a->alloc_bytes < b->alloc_bytes ? 1 : -1;
	return group_tiebreak(a, b);
}

/* Sort the used groups, apply threshold and limit, hand the rows to cb. */
static int emit_rows(struct qctx *q, bool heap, double total, prof_row_cb cb, void *ctx)
{
	struct qgroup **v = malloc((q->n_groups + 1) * sizeof(*v));
	int n = 0, err = 0, shown = 0;

	if (!v)
		return -ENOMEM;
	for (int i = 0; i <= q->n_groups; i++)
		if (q->groups[i].used)
			v[n++] = &q->groups[i];
	qsort(v, n, sizeof(*v), heap ? heap_cmp : cpu_cmp);
	for (int i = 0; i < n && !err; i++) {
		struct prof_row r = row_of(v[i], q->f->group);

		if (heap)
			r.pct = total > 0 && r.live_bytes > 0 ? 100.0 * r.live_bytes / total : 0;
		else
			r.pct = total > 0 ? 100.0 * r.samples / total : 0;
		if (q->f->threshold_pct > 0 && r.pct < q->f->threshold_pct)
			continue;
		if (q->f->limit > 0 && shown >= q->f->limit)
			break;
		shown++;
		err = cb(&r, ctx);
	}
	free(v);
	return err;
}

/*
 * The rows reach C through an SQL function evaluated in the WHERE clause of
 * a scan that returns nothing: SQLite's VDBE walks the table without the
 * per-row cost of sqlite3_step()/sqlite3_column_*() (an hour of samples:
 * 0.12 s instead of 0.7 s). Registered on the reader's own connection; the
 * file is not touched.
 */
struct scan {
	struct qctx *q;
	uint64_t cpu_total;
	int64_t total_live;
	int64_t win_lo;		/* heap: allocations counted from this checkpoint on */
	int64_t cur;		/* heap: checkpoint of the previous row */
	int *touched;
	int n_touched;
	bool unordered;
};

static void cpu_row(struct scan *sc, int64_t addr, int64_t n)
{
	const struct qsym *s = qctx_find(sc->q, addr);

	sc->cpu_total += n;
	if (s->match) {
		sc->q->groups[s->group].samples += n;
		sc->q->groups[s->group].used = true;
	}
}

static void sql_cpu_row(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	cpu_row(sqlite3_user_data(ctx), sqlite3_value_int64(argv[0]),
		sqlite3_value_int64(argv[1]));
	sqlite3_result_int(ctx, 0);
}

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

/* Run a scan whose WHERE calls fn (nargs values) once per row; binds lo/hi when asked. */
static int run_scan(struct db *db, const char *what, const char *fname, int nargs,
		    void (*fn)(sqlite3_context *, int, sqlite3_value **), struct scan *sc,
		    const char *sql, int n_bind, int64_t b1, int64_t b2)
{
	sqlite3 *sq = db__sqlite(db);
	sqlite3_stmt *st = NULL;
	int rc, err;

	if (sqlite3_create_function(sq, fname, nargs, SQLITE_UTF8, sc, fn, NULL, NULL) !=
	    SQLITE_OK)
		return q_err(db, what);
	err = q_prepare(db, what, sql, &st);
	if (!err) {
		if (n_bind >= 1)
			sqlite3_bind_int64(st, 1, b1);
		if (n_bind >= 2)
			sqlite3_bind_int64(st, 2, b2);
		while ((rc = sqlite3_step(st)) == SQLITE_ROW)
			;
		if (rc != SQLITE_DONE)
			err = q_err(db, what);
	}
	sqlite3_finalize(st);
	sqlite3_create_function(sq, fname, nargs, SQLITE_UTF8, NULL, NULL, NULL, NULL);
	return err;
}

int db_query_cpu(struct db *db, const struct query_filter *f, uint64_t *total,
		 prof_row_cb cb, void *ctx)
{
	struct scan sc = { 0 };
	struct qctx q;
	int64_t lo, hi;
	bool all;
	int err;

	*total = 0;
	err = qctx_load(&q, db, f);
	if (!err)
		err = checkpoint_range(db, f->from_ms, f->to_ms, &lo, &hi, &all);
	if (err || lo > hi)
		goto out;
	sc.q = &q;
	/* the whole run: a plain table scan beats the index walk */
	if (all)
		err = run_scan(db, "read cpu samples", "rsprof_cpu_row", 2, sql_cpu_row, &sc,
			       "SELECT 1 FROM cpu_samples WHERE rsprof_cpu_row(addr, count)",
			       0, 0, 0);
	else
		err = run_scan(db, "read cpu samples", "rsprof_cpu_row", 2, sql_cpu_row, &sc,
			       "SELECT 1 FROM cpu_samples WHERE checkpoint_id BETWEEN ? AND ?"
			       " AND rsprof_cpu_row(addr, count)", 2, lo, hi);
	if (err)
		goto out;
	*total = sc.cpu_total;
	for (int i = 0; i <= q.n_groups; i++)
		if (q.groups[i].used && !q.groups[i].samples)
			q.groups[i].used = false;
	err = emit_rows(&q, false, (double)*total, cb, ctx);
out:
	qctx_free(&q);
	return err;
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

int db_query_heap(struct db *db, const struct query_filter *f, int64_t *total_live,
		  prof_row_cb cb, void *ctx)
{
	const bool v2 = db__version(db) >= 2;
	uint64_t end = f->at_ms != TIME_NONE && (f->to_ms == TIME_NONE || f->at_ms < f->to_ms) ?
		       f->at_ms : f->to_ms;
	struct scan sc = { 0 };
	struct qctx q;
	int64_t lo, hi, wlo, whi;
	bool all;
	int err;

	*total_live = 0;
	err = qctx_load(&q, db, f);
	if (!err)
		err = checkpoint_range(db, TIME_NONE, end, &lo, &hi, &all);
	if (!err)
		err = checkpoint_range(db, f->from_ms, end, &wlo, &whi, &all);
	if (err || lo > hi)
		goto out;
	sc.q = &q;
	sc.cur = -1;
	sc.win_lo = wlo > whi ? INT64_MAX : wlo;	/* empty window: nothing allocated */
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
	for (int i = 0; i <= q.n_groups; i++) {
		struct qgroup *g = &q.groups[i];

		g->used = g->live > 0 || g->alloc_bytes > 0;
	}
	err = emit_rows(&q, true, (double)*total_live, cb, ctx);
out:
	free(sc.touched);
	qctx_free(&q);
	return err;
}

/* ---- call stacks ----------------------------------------------------- */

static int int_query(struct db *db, const char *what, const char *sql, int64_t *v, int n);

/* The inline chains of symbol_frames, per symbol index. */
struct chains {
	struct frame *v;	/* all rows, grouped by symbol */
	int *first, *n;		/* per symbol: index in v, count */
	int nv;
};

static void chains_free(struct chains *c, int n_syms)
{
	for (int i = 0; i < c->nv; i++) {
		free(c->v[i].file);
		free(c->v[i].function);
	}
	free(c->v);
	free(c->first);
	free(c->n);
	(void)n_syms;
}

static bool same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/*
 * Load symbol_frames (innermost first) and keep, per symbol, the part from
 * the reported frame (the symbols row) outwards: what a flame graph shows.
 */
static int chains_load(struct qctx *q, struct chains *c)
{
	sqlite3_stmt *st;
	int cap = 0, rc, err = 0;

	memset(c, 0, sizeof(*c));
	c->first = calloc(q->n_syms + 1, sizeof(int));
	c->n = calloc(q->n_syms + 1, sizeof(int));
	if (!c->first || !c->n)
		return -ENOMEM;
	if (db__version(q->db) < 2)
		return 0;
	err = q_prepare(q->db, "read inline frames", "SELECT addr, depth, file, line, function"
			" FROM symbol_frames ORDER BY addr, depth", &st);
	if (err)
		return err;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const struct qsym *s = qctx_find(q, sqlite3_column_int64(st, 0));
		int si = s == &q->unknown ? -1 : (int)(s - q->syms);
		struct frame *f;

		if (si < 0)
			continue;
		if (c->nv == cap) {
			int ncap = cap ? 2 * cap : 1024;
			struct frame *v = realloc(c->v, ncap * sizeof(*v));

			if (!v) {
				err = -ENOMEM;
				break;
			}
			c->v = v;
			cap = ncap;
		}
		if (!c->n[si])
			c->first[si] = c->nv;
		else if (c->first[si] + c->n[si] != c->nv)
			continue;	/* rows of one address are consecutive (ORDER BY) */
		f = &c->v[c->nv++];
		f->file = dup_col(st, 2, &err);
		f->line = sqlite3_column_int(st, 3);
		f->function = dup_col(st, 4, &err);
		c->n[si]++;
		if (err)
			break;
	}
	if (!err && rc != SQLITE_DONE)
		err = q_err(q->db, "read inline frames");
	sqlite3_finalize(st);
	if (err)
		return err;
	/* start each chain at the reported frame */
	for (int i = 0; i < q->n_syms; i++) {
		const struct qsym *s = &q->syms[i];

		for (int d = 0; d < c->n[i]; d++) {
			const struct frame *f = &c->v[c->first[i] + d];

			if (same_str(f->file, s->file) && f->line == s->line &&
			    same_str(f->function, s->function)) {
				c->first[i] += d;
				c->n[i] -= d;
				break;
			}
			if (d == c->n[i] - 1)
				c->n[i] = 0;	/* no match: the symbols row alone */
		}
	}
	return 0;
}

struct stack_weight {
	int64_t id;		/* stacks.id, or the address for a one-frame stack */
	bool one_frame;
	int64_t value, count;
};

struct stacks_ctx {
	struct qctx *q;
	struct chains *c;
	struct frame *single;	/* per symbol (+ unknown): its row as a one-line chain */
	sqlite3_stmt *frames;
	uint64_t *addrs;
	struct prof_frame *pf;
	int cap;
};

static int stack_emit(struct stacks_ctx *x, const struct stack_weight *w, prof_stack_cb cb,
		      void *ctx)
{
	struct prof_stack ps = { .value = w->value, .count = w->count };
	const char *pat = x->q->f->pattern;
	bool match = !pat || !*pat;
	int n = 0, rc;

	if (w->one_frame) {
		if (x->cap < 1)
			return -EINVAL;
		x->addrs[0] = (uint64_t)w->id;
		n = 1;
	} else {
		sqlite3_reset(x->frames);
		sqlite3_bind_int64(x->frames, 1, w->id);
		while ((rc = sqlite3_step(x->frames)) == SQLITE_ROW) {
			if (n == x->cap) {
				int ncap = 2 * x->cap;
				uint64_t *a = realloc(x->addrs, ncap * sizeof(*a));
				struct prof_frame *p;

				if (!a)
					return -ENOMEM;
				x->addrs = a;
				p = realloc(x->pf, ncap * sizeof(*p));
				if (!p)
					return -ENOMEM;
				x->pf = p;
				x->cap = ncap;
			}
			x->addrs[n++] = (uint64_t)sqlite3_column_int64(x->frames, 0);
		}
		if (rc != SQLITE_DONE)
			return q_err(x->q->db, "read stack frames");
		if (!n)
			return 0;
	}
	for (int i = 0; i < n; i++) {
		const struct qsym *s = qctx_find(x->q, (int64_t)x->addrs[i]);
		int si = s == &x->q->unknown ? x->q->n_syms : (int)(s - x->q->syms);
		struct prof_frame *f = &x->pf[i];

		f->addr = x->addrs[i];
		f->module = s->module;
		if (si < x->q->n_syms && x->c->n[si]) {
			f->lines = &x->c->v[x->c->first[si]];
			f->n_lines = x->c->n[si];
		} else {
			f->lines = &x->single[si];
			f->n_lines = 1;
		}
		match = match || s->match;
	}
	if (!match)
		return 0;
	ps.frames = x->pf;
	ps.depth = n;
	return cb(&ps, ctx);
}

static int add_weight(struct stack_weight **v, int *n, int *cap, const struct stack_weight *w)
{
	if (*n == *cap) {
		int ncap = *cap ? 2 * *cap : 256;
		struct stack_weight *nv = realloc(*v, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = ncap;
	}
	(*v)[(*n)++] = *w;
	return 0;
}

static int weight_cmp(const void *pa, const void *pb)
{
	const struct stack_weight *a = pa, *b = pb;

	if (a->value != b->value)
		return a->value < b->value ? 1 : -1;
	return (a->id > b->id) - (a->id < b->id);
}

/* Weights per stack (and per address for rows without one). */
static int stack_weights(struct db *db, const struct query_filter *f, bool heap,
			 struct stack_weight **v, int *n)
{
	const bool v2 = db__version(db) >= 2;
	uint64_t end = f->at_ms != TIME_NONE && (f->to_ms == TIME_NONE || f->at_ms < f->to_ms) ?
		       f->at_ms : f->to_ms;
	int64_t lo, hi;
	bool all, has_cpu_stacks = false;
	const char *sql[2] = { NULL, NULL };
	int cap = 0, err;

	*v = NULL;
	*n = 0;
	if (heap) {
		err = checkpoint_range(db, TIME_NONE, end, &lo, &hi, &all);
		lo = 0;
	} else {
		err = checkpoint_range(db, f->from_ms, f->to_ms, &lo, &hi, &all);
	}
	if (err || lo > hi)
		return err;
	if (!heap) {
		int64_t one = 0;

		err = int_query(db, "read schema", "SELECT COUNT(*) FROM sqlite_master WHERE"
				" type = 'table' AND name = 'cpu_stacks'", &one, 1);
		if (err)
			return err;
		has_cpu_stacks = one > 0;
		if (has_cpu_stacks)
			sql[0] = "SELECT stack_id, SUM(count), SUM(count), 0 FROM cpu_stacks"
				 " WHERE checkpoint_id BETWEEN ?1 AND ?2 GROUP BY stack_id";
		else
			sql[1] = "SELECT addr, SUM(count), SUM(count), 1 FROM cpu_samples"
				 " WHERE checkpoint_id BETWEEN ?1 AND ?2 GROUP BY addr";
	} else if (v2) {
		sql[0] = "SELECT stack_id, SUM(alloc_bytes - free_bytes),"
			 " SUM(alloc_count - free_count), 0 FROM heap_events"
			 " WHERE checkpoint_id BETWEEN ?1 AND ?2 AND stack_id IS NOT NULL"
			 " GROUP BY stack_id";
		sql[1] = "SELECT addr, SUM(alloc_bytes - free_bytes),"
			 " SUM(alloc_count - free_count), 1 FROM heap_events"
			 " WHERE checkpoint_id BETWEEN ?1 AND ?2 AND stack_id IS NULL GROUP BY addr";
	} else {
		sql[1] = "SELECT addr, SUM(alloc_bytes - free_bytes), 0, 1 FROM heap_events"
			 " WHERE checkpoint_id BETWEEN ?1 AND ?2 GROUP BY addr";
	}
	for (int i = 0; i < 2 && !err; i++) {
		sqlite3_stmt *st;
		int rc;

		if (!sql[i])
			continue;
		err = q_prepare(db, "read stacks", sql[i], &st);
		if (err)
			break;
		sqlite3_bind_int64(st, 1, lo);
		sqlite3_bind_int64(st, 2, hi);
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			struct stack_weight w = {
				.id = sqlite3_column_int64(st, 0),
				.value = sqlite3_column_int64(st, 1),
				.count = sqlite3_column_int64(st, 2),
				.one_frame = sqlite3_column_int(st, 3),
			};

			if (w.value <= 0)
				continue;
			err = add_weight(v, n, &cap, &w);
			if (err)
				break;
		}
		if (!err && rc != SQLITE_DONE)
			err = q_err(db, "read stacks");
		sqlite3_finalize(st);
	}
	if (!err && *n)
		qsort(*v, *n, sizeof(**v), weight_cmp);
	return err;
}

int db_query_stacks(struct db *db, const struct query_filter *f, bool heap,
		    prof_stack_cb cb, void *ctx)
{
	struct stacks_ctx x = { 0 };
	struct stack_weight *w = NULL;
	struct chains c = { 0 };
	struct qctx q;
	int n = 0, err;

	err = qctx_load(&q, db, f);
	if (!err)
		err = chains_load(&q, &c);
	if (!err)
		err = stack_weights(db, f, heap, &w, &n);
	if (err || !n)
		goto out;
	x.q = &q;
	x.c = &c;
	x.cap = 64;
	x.addrs = malloc(x.cap * sizeof(*x.addrs));
	x.pf = malloc(x.cap * sizeof(*x.pf));
	x.single = calloc(q.n_syms + 1, sizeof(*x.single));
	if (!x.addrs || !x.pf || !x.single) {
		err = -ENOMEM;
		goto out;
	}
	for (int i = 0; i <= q.n_syms; i++) {
		const struct qsym *s = i < q.n_syms ? &q.syms[i] : &q.unknown;

		/* borrowed strings: never freed through single */
		x.single[i].file = s->file;
		x.single[i].line = s->line;
		x.single[i].function = s->function;
	}
	if (db__version(db) >= 2) {
		err = q_prepare(db, "read stack frames", "SELECT addr FROM stack_frames"
				" WHERE stack_id = ? ORDER BY pos", &x.frames);
		if (err)
			goto out;
	}
	for (int i = 0; i < n && !err; i++) {
		if (!w[i].one_frame && !x.frames)
			continue;
		err = stack_emit(&x, &w[i], cb, ctx);
	}
out:
	sqlite3_finalize(x.frames);
	free(x.addrs);
	free(x.pf);
	free(x.single);
	free(w);
	chains_free(&c, q.n_syms);
	qctx_free(&q);
	return err;
}

/* ---- summary and meta --------------------------------------------------- */

static int int_query(struct db *db, const char *what, const char *sql, int64_t *v, int n)
{
	sqlite3_stmt *st;
	int err = q_prepare(db, what, sql, &st);

	if (err)
		return err;
	if (sqlite3_step(st) != SQLITE_ROW) {
		err = q_err(db, what);
	} else {
		for (int i = 0; i < n; i++)
			v[i] = sqlite3_column_int64(st, i);
	}
	sqlite3_finalize(st);
	return err;
}

/* An integer meta value; 0 when absent or not a number. */
static int meta_int(struct db *db, const char *key, int64_t *v)
{
	char *val = NULL;
	int err = db__meta_get(db, key, &val);

	*v = val ? strtoll(val, NULL, 10) : 0;
	free(val);
	return err;
}

int db_query_summary(struct db *db, struct prof_summary *s)
{
	int64_t v[8] = { 0 };
	char *val = NULL;
	int err;

	memset(s, 0, sizeof(*s));
	err = int_query(db, "read checkpoints",
			"SELECT COALESCE(MAX(timestamp_ms), 0), COUNT(*) FROM checkpoints", v, 2);
	if (err)
		return err;
	s->duration_ms = v[0];
	s->checkpoints = v[1];
	if (db__version(db) >= 2) {
		err = int_query(db, "read checkpoint totals",
				"SELECT TOTAL(cpu_total), TOTAL(lost_samples), TOTAL(heap_alloc_bytes),"
				" TOTAL(heap_free_bytes), TOTAL(heap_alloc_count),"
				" TOTAL(heap_free_count), TOTAL(heap_dropped),"
				" COALESCE(MAX(heap_live_bytes), 0) FROM checkpoints", v, 8);
		if (err)
			return err;
		s->samples = v[0];
		s->lost_samples = v[1];
		s->alloc_bytes = v[2];
		s->free_bytes = v[3];
		s->alloc_count = v[4];
		s->free_count = v[5];
		s->heap_dropped = v[6];
		s->peak_bytes = v[7];
		/* the peak of the running sum too, whatever heap_live_bytes holds */
		err = int_query(db, "read heap peak",
				"SELECT COALESCE(MAX(l), 0) FROM (SELECT SUM(heap_alloc_bytes -"
				" heap_free_bytes) OVER (ORDER BY id ROWS UNBOUNDED PRECEDING) AS l"
				" FROM checkpoints)", v, 1);
		if (err)
			return err;
		if (v[0] > s->peak_bytes)
			s->peak_bytes = v[0];
	} else {
		err = int_query(db, "read cpu samples",
				"SELECT TOTAL(count) FROM cpu_samples", v, 1);
		if (!err)
			err = int_query(db, "read heap events",
					"SELECT TOTAL(alloc_bytes), TOTAL(free_bytes) FROM heap_events",
					v + 1, 2);
		if (err)
			return err;
		s->samples = v[0];
		s->alloc_bytes = v[1];
		s->free_bytes = v[2];
		err = int_query(db, "read heap peak",
				"SELECT COALESCE(MAX(l), 0) FROM (SELECT SUM(d) OVER (ORDER BY"
				" checkpoint_id ROWS UNBOUNDED PRECEDING) AS l FROM (SELECT"
				" checkpoint_id, SUM(alloc_bytes - free_bytes) AS d FROM heap_events"
				" GROUP BY checkpoint_id))", v, 1);
		if (err)
			return err;
		s->peak_bytes = v[0];
	}
	s->live_bytes = s->alloc_bytes - s->free_bytes;
	err = int_query(db, "read symbols", "SELECT COUNT(*), EXISTS (SELECT 1 FROM heap_events)"
			" FROM symbols", v, 2);
	if (err)
		return err;
	s->symbols = v[0];
	s->has_heap = v[1];
	if (db__version(db) >= 2) {
		err = int_query(db, "read stacks", "SELECT (SELECT COUNT(*) FROM stacks),"
				" (SELECT COUNT(*) FROM map)", v, 2);
		if (err)
			return err;
		s->stacks = v[0];
		s->mappings = v[1];
	}
	err = db__meta_get(db, "heap_probes", &val);
	if (err)
		return err;
	if (val && *val && strcmp(val, "none") && strcmp(val, "off"))
		s->has_heap = true;
	free(val);
	/* set when the recording starts: a live file has heap before its first row */
	err = db__meta_get(db, "heap", &val);
	if (err)
		return err;
	if (val && !strcmp(val, "on"))
		s->has_heap = true;
	free(val);
	/* the tracker's own peak sees between checkpoints */
	err = meta_int(db, "heap_peak_bytes", &v[0]);
	if (!err && v[0] > s->peak_bytes)
		s->peak_bytes = v[0];
	if (!err)
		err = meta_int(db, "unknown_frees", &v[0]);
	if (!err)
		s->unknown_frees = v[0] > 0 ? v[0] : 0;
	if (!err)
		err = meta_int(db, "unknown_free_bytes", &s->unknown_free_bytes);
	if (!err)
		err = meta_int(db, "heap_sample", &v[0]);
	if (err)
		return err;
	s->heap_sample = v[0] > 1 && v[0] < UINT32_MAX ? (unsigned int)v[0] : 0;
	err = db__meta_get(db, "end_time", &val);
	if (err)
		return err;
	s->finished = val != NULL;
	free(val);
	return 0;
}

int db_query_meta(struct db *db, int (*cb)(const char *key, const char *value, void *ctx),
		  void *ctx)
{
	sqlite3_stmt *st;
	int rc, err = q_prepare(db, "read meta", "SELECT key, value FROM meta ORDER BY key", &st);

	if (err)
		return err;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *k = (const char *)sqlite3_column_text(st, 0);
		const char *v = (const char *)sqlite3_column_text(st, 1);

		err = cb(k ? k : "", v ? v : "", ctx);
		if (err)
			break;
	}
	if (!err && rc != SQLITE_DONE)
		err = q_err(db, "read meta");
	sqlite3_finalize(st);
	return err;
}
