/*
 * The shared part of the read queries (seed 000 §7.5, extended): the
 * symbols table loaded once and grouped (line, function, file, module),
 * ranked rows handed to the caller, and the scan that feeds table rows to C.
 * The CPU, heap, stack and summary queries are in db-query-cpu.c,
 * db-query-heap.c, db-query-stacks.c and db-summary.c.
 *
 * The ranking aggregates in C rather than with GROUP BY: one sequential scan
 * of cpu_samples or heap_events feeds per-address counters, addresses map
 * to their group (line, function, file or module) through the symbols
 * table loaded once. SQLite has no hash aggregate, and GROUP BY addr over
 * an hour of samples (3.6 M rows) sorts or walks idx_cpu_addr with a
 * random row lookup per sample; the scan is several times faster and also
 * gives per-site peaks in the same pass.
 */
#include "util/db/query.h"
#include "util/db/query-priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

#include "util/db/db.h"
#include "util/error.h"
#include "util/str.h"

void query_filter__init(struct query_filter *f)
{
	memset(f, 0, sizeof(*f));
	f->from_ms = f->to_ms = f->at_ms = TIME_NONE;
	f->group = GROUP_LINE;
}

int q_err(struct db *db, const char *what)
{
	pr_err("%s: %s: %s", db__path(db), what, sqlite3_errmsg(db__sqlite(db)));
	return -RSPROF_EDB;
}

int q_prepare(struct db *db, const char *what, const char *sql, sqlite3_stmt **st)
{
	if (sqlite3_prepare_v2(db__sqlite(db), sql, -1, st, NULL) != SQLITE_OK) {
		*st = NULL;
		return q_err(db, what);
	}
	return 0;
}

int q_snapshot(struct db *db, bool *mine)
{
	*mine = sqlite3_get_autocommit(db__sqlite(db));
	return *mine ? db__snapshot_begin(db) : 0;
}

void q_snapshot_end(struct db *db, bool mine)
{
	if (mine)
		db__snapshot_end(db);
}

/* ---- symbols and groups ------------------------------------------------- */
void qctx_free(struct qctx *q)
{
	for (int i = 0; i < q->n_syms; i++) {
		free(q->syms[i].file);
		free(q->syms[i].function);
		free(q->syms[i].module);
	}
	free(q->syms);
	free(q->groups);
	hashmap__free(&q->index);
}

static int qctx_index(struct qctx *q)
{
	for (int i = 0; i < q->n_syms; i++)
		if (hashmap__set(&q->index, (uint64_t)q->syms[i].addr, (uint64_t)i))
			return -ENOMEM;
	return 0;
}

char *dup_col(sqlite3_stmt *st, int i, int *err)
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

int qctx_load(struct qctx *q, struct db *db, const struct query_filter *f)
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

const struct qsym *qctx_find(const struct qctx *q, int64_t addr)
{
	uint64_t i;

	return hashmap__get(&q->index, (uint64_t)addr, &i) ? &q->syms[i] : &q->unknown;
}

/* The checkpoint ids [*lo, *hi] whose timestamps fall in [from, to]; *lo > *hi when none. */
int checkpoint_range(struct db *db, uint64_t from, uint64_t to, int64_t *lo, int64_t *hi,
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
int emit_rows(struct qctx *q, bool heap, double total, prof_row_cb cb, void *ctx)
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

/* Run a scan whose WHERE calls fn (nargs values) once per row; binds lo/hi when asked. */
int run_scan(struct db *db, const char *what, const char *fname, int nargs,
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

int int_query(struct db *db, const char *what, const char *sql, int64_t *v, int n)
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
