#include "util/db/diff.h"

#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/db/db.h"
#include "util/db/totals.h"
#include "util/error.h"
#include "util/symbols/srcpath.h"

/* One run's numbers for one site. */
struct side {
	uint64_t samples;
	int64_t live, allocs;
	bool cpu, heap, matched;
};

struct pair {
	struct side s[2];	/* A, B */
};

struct diff_ctx {
	const struct diff_opts *o;
	struct sitemap *shared;	/* sites of both runs, keyed by display path */
	struct pair *pairs;
	size_t cap;
	uint64_t total_samples[2];
	int64_t total_live[2];
	bool heap[2];
};

static int db_fail(sqlite3 *conn, const char *what)
{
	pr_err("%s: %s", what, sqlite3_errmsg(conn));
	return -RSPROF_EDB;
}

static int grow_pairs(struct diff_ctx *c)
{
	size_t need = sitemap__count(c->shared), nc = c->cap ? c->cap * 2 : 1024;
	struct pair *p;

	if (need < c->cap)
		return 0;
	while (nc <= need)
		nc *= 2;
	p = realloc(c->pairs, nc * sizeof(*p));
	if (!p)
		return -ENOMEM;
	memset(p + c->cap, 0, (nc - c->cap) * sizeof(*p));
	c->pairs = p;
	c->cap = nc;
	return 0;
}

/* The checkpoint ids [*lo, *hi] of a window (*lo > *hi when it holds none). */
static int window_ids(sqlite3 *conn, const struct diff_window *w, int64_t *lo, int64_t *hi)
{
	sqlite3_stmt *st = NULL;
	int rc;

	*lo = 0;
	*hi = INT64_MAX;
	if (!w->on)
		return 0;
	if (sqlite3_prepare_v2(conn, "SELECT COALESCE(MIN(id), 1), COALESCE(MAX(id), 0)"
			       " FROM checkpoints WHERE timestamp_ms > ? AND timestamp_ms <= ?",
			       -1, &st, NULL))
		return db_fail(conn, "cannot read the checkpoints");
	sqlite3_bind_int64(st, 1, w->from_ms == TIME_NONE ? -1 : (int64_t)w->from_ms);
	sqlite3_bind_int64(st, 2, w->to_ms == TIME_NONE ? INT64_MAX : (int64_t)w->to_ms);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*lo = sqlite3_column_int64(st, 0);
		*hi = sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : db_fail(conn, "cannot read the checkpoints");
}

/* Scan the event tables of one run (its window) into per-site numbers (local sites). */
static int scan(sqlite3 *conn, const struct sitemap *sm, const struct diff_window *w,
		struct side *loc, uint64_t *total)
{
	sqlite3_stmt *st = NULL;
	int64_t lo, hi;
	int rc, err;

	err = window_ids(conn, w, &lo, &hi);
	if (err)
		return err;
	if (sqlite3_prepare_v2(conn, "SELECT addr, count FROM cpu_samples"
			       " WHERE checkpoint_id BETWEEN ? AND ?", -1, &st, NULL))
		return db_fail(conn, "cannot read the CPU samples");
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
		return db_fail(conn, "cannot read the CPU samples");

	/* alloc_count came with schema v2; live bytes at the window's end, allocations in it */
	if (sqlite3_prepare_v2(conn, "SELECT addr, alloc_bytes - free_bytes, CASE WHEN"
			       " checkpoint_id >= ?1 THEN alloc_count ELSE 0 END FROM heap_events"
			       " WHERE checkpoint_id <= ?2", -1, &st, NULL) &&
	    sqlite3_prepare_v2(conn, "SELECT addr, alloc_bytes - free_bytes, 0 "
			       "FROM heap_events WHERE checkpoint_id <= ?2", -1, &st, NULL))
		return db_fail(conn, "cannot read the heap events");
	sqlite3_bind_int64(st, 1, lo);
	sqlite3_bind_int64(st, 2, lo > hi ? 0 : hi);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		long s = sitemap__find_addr(sm, sqlite3_column_int64(st, 0));

		if (s >= 0) {
			loc[s].live += sqlite3_column_int64(st, 1);
			loc[s].allocs += sqlite3_column_int64(st, 2);
			loc[s].heap = true;
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_fail(conn, "cannot read the heap events");
	return 0;
}

struct totals_scan {
	const struct sitemap *sm;
	struct side *loc;
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
	long s = sitemap__find_addr(x->sm, r->addr);

	if (s >= 0) {
		x->loc[s].live += r->alloc_bytes - r->free_bytes;
		if (x->allocs)
			x->loc[s].allocs += r->alloc_count;
		x->loc[s].heap = true;
	}
}

/* The same as scan(), from the writer's totals. */
static int scan_totals(sqlite3 *conn, struct totals *t, const struct sitemap *sm,
		       const struct diff_window *w, struct side *loc, uint64_t *total)
{
	struct totals_scan x = { sm, loc, total, false };
	int64_t lo, hi, last;
	int err = window_ids(conn, w, &lo, &hi);

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

static bool matches(const char *pattern, const char *file, const char *function)
{
	if (!pattern || !*pattern)
		return true;
	return (file && strcasestr(file, pattern)) || (function && strcasestr(function, pattern));
}

/* One run: its own sites, scanned, then folded into the shared sites. */
static int load_run(struct diff_ctx *c, struct db *db, int side)
{
	struct sitemap *sm = sitemap__new();
	struct side *loc = NULL;
	struct totals *t = NULL;
	sqlite3_mutex *mx = sqlite3_db_mutex(db__sqlite(db));
	bool snap = sqlite3_get_autocommit(db__sqlite(db));
	int err;

	if (!sm)
		return -ENOMEM;
	err = snap ? db__snapshot_begin(db) : 0;	/* the totals agree with the rows */
	if (err) {
		sitemap__delete(sm);
		return err;
	}
	/* held for the whole pass: else every sqlite3_column_*() takes it */
	sqlite3_mutex_enter(mx);
	err = sitemap__load(sm, db, c->o->by);
	if (!err) {
		loc = calloc(sitemap__count(sm) + 1, sizeof(*loc));
		if (!loc)
			err = -ENOMEM;
	}
	if (!err)
		err = totals__open(db, &t);
	if (!err && t)
		err = scan_totals(db__sqlite(db), t, sm, &c->o->win[side], loc,
				  &c->total_samples[side]);
	else if (!err)
		err = scan(db__sqlite(db), sm, &c->o->win[side], loc, &c->total_samples[side]);
	totals__delete(t);
	for (size_t i = 0; !err && i < sitemap__count(sm); i++) {
		const char *file, *function, *module;
		char disp[1024];
		struct side *d;
		int line;
		long k;

		if (!loc[i].cpu && !loc[i].heap)
			continue;
		sitemap__site(sm, (long)i, &file, &line, &function, &module);
		k = sitemap__intern(c->shared, c->o->by,
				    file ? srcpath__display(file, module, disp, sizeof(disp)) : NULL,
				    line, function, module);
		if (k < 0 || (err = grow_pairs(c))) {
			err = -ENOMEM;
			break;
		}
		d = &c->pairs[k].s[side];
		d->samples += loc[i].samples;
		d->live += loc[i].live;
		d->allocs += loc[i].allocs;
		d->cpu |= loc[i].cpu;
		d->heap |= loc[i].heap;
		d->matched |= matches(c->o->pattern, file, function) ||
			      matches(c->o->pattern, file ? disp : NULL, NULL);
		c->total_live[side] += loc[i].live;
		c->heap[side] |= loc[i].heap;
	}
	sqlite3_mutex_leave(mx);
	if (snap)
		db__snapshot_end(db);
	free(loc);
	sitemap__delete(sm);
	return err;
}

static int cmp_cpu(const void *x, const void *y)
{
	const struct diff_row *a = x, *b = y;
	double da = fabs(a->delta_pct), db = fabs(b->delta_pct);

	if (da != db)
		return da > db ? -1 : 1;
	da = fmax(a->pct_a, a->pct_b);
	db = fmax(b->pct_a, b->pct_b);
	if (da != db)
		return da > db ? -1 : 1;
	return 0;
}

static int cmp_heap(const void *x, const void *y)
{
	const struct diff_row *a = x, *b = y;
	int64_t da = llabs(a->delta_bytes), db = llabs(b->delta_bytes);

	if (da != db)
		return da > db ? -1 : 1;
	da = a->live_a > a->live_b ? a->live_a : a->live_b;
	db = b->live_a > b->live_b ? b->live_a : b->live_b;
	if (da != db)
		return da > db ? -1 : 1;
	return 0;
}

static enum diff_status status_of(bool in_a, bool in_b, bool changed)
{
	if (!in_a)
		return DIFF_NEW;
	if (!in_b)
		return DIFF_GONE;
	return changed ? DIFF_CHANGED : DIFF_SAME;
}

static double share(uint64_t n, uint64_t total)
{
	return total ? 100.0 * (double)n / (double)total : 0;
}

static void row_init(struct diff_ctx *c, long k, struct diff_row *r)
{
	const struct pair *p = &c->pairs[k];

	memset(r, 0, sizeof(*r));
	sitemap__site(c->shared, k, &r->file, &r->line, &r->function, &r->module);
	r->samples_a = p->s[0].samples;
	r->samples_b = p->s[1].samples;
	r->pct_a = share(r->samples_a, c->total_samples[0]);
	r->pct_b = share(r->samples_b, c->total_samples[1]);
	r->delta_pct = r->pct_b - r->pct_a;
	r->live_a = p->s[0].live;
	r->live_b = p->s[1].live;
	r->delta_bytes = r->live_b - r->live_a;
	r->allocs_a = p->s[0].allocs;
	r->allocs_b = p->s[1].allocs;
}

static int build_rows(struct diff_ctx *c, struct diff *d)
{
	size_t n = sitemap__count(c->shared);
	const struct diff_opts *o = c->o;
	int64_t big = c->total_live[0] > c->total_live[1] ? c->total_live[0] : c->total_live[1];

	d->cpu = calloc(n + 1, sizeof(*d->cpu));
	d->heap = calloc(n + 1, sizeof(*d->heap));
	if (!d->cpu || !d->heap)
		return -ENOMEM;
	d->identical = true;
	for (size_t k = 0; k < n; k++) {
		const struct pair *p = &c->pairs[k];
		struct diff_row r;

		row_init(c, (long)k, &r);
		if (p->s[0].cpu || p->s[1].cpu) {
			r.status = status_of(p->s[0].cpu, p->s[1].cpu, r.delta_pct != 0);
			if (r.status != DIFF_SAME)
				d->identical = false;
			d->n_cpu_all++;
			if (p->s[0].matched || p->s[1].matched) {
				if (fabs(r.delta_pct) >= o->threshold)
					d->cpu[d->n_cpu++] = r;
			}
		}
		if (p->s[0].heap || p->s[1].heap) {
			r.status = status_of(p->s[0].heap, p->s[1].heap,
					     r.delta_bytes != 0 || r.allocs_a != r.allocs_b);
			if (r.status != DIFF_SAME)
				d->identical = false;
			d->n_heap_all++;
			if (p->s[0].matched || p->s[1].matched) {
				double min = o->threshold / 100.0 * (double)big;

				if ((double)llabs(r.delta_bytes) >= min)
					d->heap[d->n_heap++] = r;
			}
		}
	}
	qsort(d->cpu, d->n_cpu, sizeof(*d->cpu), cmp_cpu);
	qsort(d->heap, d->n_heap, sizeof(*d->heap), cmp_heap);
	if (o->limit > 0 && d->n_cpu > (size_t)o->limit)
		d->n_cpu = (size_t)o->limit;
	if (o->limit > 0 && d->n_heap > (size_t)o->limit)
		d->n_heap = (size_t)o->limit;
	d->heap_a = c->heap[0];
	d->heap_b = c->heap[1];
	for (int i = 0; i < 2; i++) {
		d->win_samples[i] = c->total_samples[i];
		d->win_live[i] = c->total_live[i];
	}
	return 0;
}

void diff__delete(struct diff *d)
{
	if (!d)
		return;
	free(d->cpu);
	free(d->heap);
	sitemap__delete(d->sites);
	free(d);
}

int diff__compute(struct db *a, struct db *b, const struct diff_opts *o, struct diff **out)
{
	struct diff_ctx c = { .o = o };
	struct diff *d = calloc(1, sizeof(*d));
	int err;

	*out = NULL;
	if (!d)
		return -ENOMEM;
	c.shared = d->sites = sitemap__new();
	if (!c.shared) {
		free(d);
		return -ENOMEM;
	}
	err = db_query_summary(a, &d->a);
	if (!err)
		err = db_query_summary(b, &d->b);
	if (!err)
		err = load_run(&c, a, 0);
	if (!err)
		err = load_run(&c, b, 1);
	if (!err)
		err = build_rows(&c, d);
	free(c.pairs);
	if (err) {
		diff__delete(d);
		return err;
	}
	*out = d;
	return 0;
}
