/*
 * The shared part of the read queries: the symbols table loaded once and
 * grouped (line, function, file, module), ranked rows handed to the
 * caller, and the scan that feeds table rows to C. The CPU, heap, stack
 * and summary queries are in query-cpu.c, query-heap.c, query-stacks.c
 * and summary.c.
 *
 * The ranking aggregates in C rather than with GROUP BY: one sequential scan
 * of cpu_samples or heap_events feeds per-address counters, addresses map
 * to their group (line, function, file or module) through the symbols
 * table loaded once. SQLite has no hash aggregate, and GROUP BY addr over
 * an hour of samples (3.6 M rows) sorts or walks idx_cpu_addr with a
 * random row lookup per sample; the scan is several times faster and also
 * gives per-site peaks in the same pass.
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
#include "util/error.h"
#include "util/str.h"
#include "util/symbols/demangle.h"
#include "util/symbols/symbol.h"

void query_filter__init(struct query_filter *f)
{
	memset(f, 0, sizeof(*f));
	f->win = TIME_WINDOW_ALL;
	f->at_ms = TIME_NONE;
	f->group = GROUP_LINE;
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
		free(q->syms[i].mangled);
		free(q->syms[i].symname);
	}
	free(q->syms);
	for (int i = 0; i < q->n_procs; i++) {
		free(q->procs[i].function);
		free(q->procs[i].module);
		free(q->procs[i].cgroup);
	}
	free(q->procs);
	free(q->groups);
	hashmap__free(&q->index);
	hashmap__free(&q->proc_index);
}

static int qctx_index(struct qctx *q)
{
	for (int i = 0; i < q->n_addr_syms; i++)
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
	case GROUP_SYMBOL:
		c = key_cmp_str(a->module, b->module);
		if (!c)
			c = key_cmp_str(a->symname ? a->symname : a->function,
					b->symname ? b->symname : b->function);
		return c;
	case GROUP_MODULE:
	default:
		return key_cmp_str(a->module, b->module);
	}
}

/*
 * Where a row has no source file, its module is part of the location: the
 * [vdso]'s clock_gettime is not libc's clock_gettime.
 */
static int qsym_cmp_key_module(const struct qsym *a, const struct qsym *b, enum group_by by)
{
	int c = qsym_cmp_key(a, b, by);

	if (!c && by <= GROUP_FUNCTION && !a->file && a->function)
		c = key_cmp_str(a->module, b->module);
	return c;
}

static int qsym_ptr_cmp(const void *pa, const void *pb, void *by)
{
	const struct qsym *a = *(const struct qsym *const *)pa, *b = *(const struct qsym *const *)pb;

	return qsym_cmp_key_module(a, b, *(const enum group_by *)by);
}

static bool pattern_match(const struct qsym *s, const char *pat)
{
	if (!pat || !*pat)
		return true;
	return (s->file && strcasestr(s->file, pat)) ||
	       (s->function && strcasestr(s->function, pat)) ||
	       (s->symname && strcasestr(s->symname, pat)) ||
	       (!s->file && s->module && strcasestr(s->module, pat));
}

/* Process groups: one per pid of the processes table (v3), or meta's pid. */
static int qctx_add_proc(struct qctx *q, int pid, const char *comm, const char *exe,
			 const char *cgroup)
{
	struct qsym *v = realloc(q->procs, (q->n_procs + 1) * sizeof(*v)), *p;
	int err = 0;

	if (!v)
		return -ENOMEM;
	q->procs = v;
	p = &v[q->n_procs];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->function = str__dup(comm, &err);
	p->module = str__dup(exe, &err);
	p->cgroup = str__dup(cgroup, &err);
	p->match = true;
	q->n_procs++;
	if (!err && hashmap__set(&q->proc_index, (uint64_t)pid, (uint64_t)(q->n_procs - 1)))
		err = -ENOMEM;
	return err;
}

static int qctx_processes(struct qctx *q)
{
	char *pid = NULL, *comm = NULL, *exe = NULL;
	sqlite3_stmt *st;
	struct qgroup *g;
	int rc, err;

	/* v3 files from before the process tree have no pid column */
	q->has_pid = db__has(q->db, DB_PID);
	err = db__meta_get(q->db, "pid", &pid);
	q->default_pid = pid ? atoi(pid) : 0;
	free(pid);
	if (err || q->f->group != GROUP_PROCESS)
		return err;
	if (q->has_pid) {
		/* a pid that exec'd has several rows: its last image names it */
		err = db__prepare(q->db, "read processes", db__has(q->db, DB_PROC_CGROUP) ?
				  "SELECT pid, comm, exe, cgroup FROM processes"
				  " ORDER BY pid, start_ms" :
				  "SELECT pid, comm, exe, NULL FROM processes"
				  " ORDER BY pid, start_ms", &st);
		if (err)
			return err;
		while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW) {
			int p = sqlite3_column_int(st, 0);
			uint64_t i;

			if (hashmap__get(&q->proc_index, (uint64_t)p, &i)) {
				struct qsym *x = &q->procs[i];

				free(x->function);
				free(x->module);
				free(x->cgroup);
				x->function = dup_col(st, 1, &err);
				x->module = dup_col(st, 2, &err);
				x->cgroup = dup_col(st, 3, &err);
				continue;
			}
			err = qctx_add_proc(q, p, (const char *)sqlite3_column_text(st, 1),
					    (const char *)sqlite3_column_text(st, 2),
					    (const char *)sqlite3_column_text(st, 3));
		}
		if (!err && rc != SQLITE_DONE)
			err = db__err(q->db, "read processes");
		sqlite3_finalize(st);
	}
	if (!err && !hashmap__get(&q->proc_index, (uint64_t)q->default_pid, NULL)) {
		err = db__meta_get(q->db, "process_name", &comm);
		if (!err)
			err = db__meta_get(q->db, "exe_path", &exe);
		if (!err)
			err = qctx_add_proc(q, q->default_pid, comm, exe, NULL);
		free(comm);
		free(exe);
	}
	if (err)
		return err;
	/* the groups are the processes (and the last one, processes not in the table) */
	g = calloc(q->n_procs + 1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	free(q->groups);
	q->groups = g;
	q->n_groups = q->n_procs;
	for (int i = 0; i < q->n_procs; i++) {
		q->procs[i].group = i;
		g[i].rep = &q->procs[i];
	}
	g[q->n_procs].rep = &q->unknown;
	return 0;
}

int qctx_group_of(const struct qctx *q, const struct qsym *s, int64_t pid, bool is_null)
{
	uint64_t i;

	if (is_null || !pid)
		pid = q->default_pid;
	if (q->f->pid && pid != q->f->pid)
		return -1;
	if (q->f->group != GROUP_PROCESS)
		return s->group;
	return hashmap__get(&q->proc_index, (uint64_t)pid, &i) ? (int)i : q->n_procs;
}

/* Room for one more symbol. 0 or -ENOMEM. */
static int qctx_grow(struct qctx *q)
{
	int ncap = q->cap_syms ? 2 * q->cap_syms : 1024;
	struct qsym *v;

	if (q->n_syms < q->cap_syms)
		return 0;
	v = realloc(q->syms, ncap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	q->syms = v;
	q->cap_syms = ncap;
	return 0;
}

int qctx_load_syms(struct qctx *q, struct db *db, const struct query_filter *f)
{
	const char *sql = db__has(db, DB_V2) ?
		"SELECT addr, file, line, function, module, mangled FROM symbols ORDER BY addr" :
		"SELECT addr, file, line, function, NULL, NULL FROM symbols ORDER BY addr";
	sqlite3_stmt *st;
	int rc, err;

	memset(q, 0, sizeof(*q));
	q->db = db;
	q->f = f;
	err = db__prepare(db, "read symbols", sql, &st);
	if (err)
		return err;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct qsym *s;

		if (q->n_syms >= DB_MAX_ROWS) {
			err = db__too_many_rows(db, "symbols");
			break;
		}
		err = qctx_grow(q);
		if (err)
			break;
		s = &q->syms[q->n_syms++];
		memset(s, 0, sizeof(*s));
		s->addr = sqlite3_column_int64(st, 0);
		s->file = dup_col(st, 1, &err);
		s->line = sqlite3_column_int(st, 2);
		s->function = dup_col(st, 3, &err);
		s->module = dup_col(st, 4, &err);
		s->mangled = dup_col(st, 5, &err);
		/* by symbol: the real function's name, spelled as the symbol table's */
		if (!err && f->group == GROUP_SYMBOL && s->mangled) {
			s->symname = demangle(s->mangled);
			/* without the version of a versioned name (cfree@GLIBC_2.2.5);
			 * a PLT stub keeps its "@plt" */
			size_t at = strcspn(s->mangled, "@");

			if (!strcmp(s->mangled + at, "@plt"))
				at += 4;
			if (!s->symname && !(s->symname = strndup(s->mangled, at)))
				err = -ENOMEM;
		}
		if (err)
			break;
	}
	if (!err && rc != SQLITE_DONE)
		err = db__err(db, "read symbols");
	sqlite3_finalize(st);
	if (err)
		return err;
	q->n_addr_syms = q->n_syms;
	return qctx_index(q);
}

int qctx_add_sym(struct qctx *q, const char *file, int line, const char *function,
		 const char *module)
{
	struct qsym *s;
	int err = qctx_grow(q);

	if (err)
		return err;
	s = &q->syms[q->n_syms];
	memset(s, 0, sizeof(*s));
	s->addr = 0;
	s->file = str__dup(file, &err);
	s->line = line;
	s->function = str__dup(function, &err);
	s->module = str__dup(module, &err);
	if (err) {
		free(s->file);
		free(s->function);
		free(s->module);
		return err;
	}
	return q->n_syms++;
}

int qctx_group(struct qctx *q)
{
	const struct query_filter *f = q->f;
	struct qsym **order = NULL;

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
		if (i == 0 || qsym_cmp_key_module(order[i - 1], order[i], f->group))
			q->groups[q->n_groups++].rep = order[i];
		order[i]->group = q->n_groups - 1;
		order[i]->match = pattern_match(order[i], f->pattern);
	}
	free(order);
	/* addresses without a symbols row: one "[unknown]" group */
	q->unknown.group = q->n_groups;
	q->unknown.match = pattern_match(&q->unknown, f->pattern);
	q->groups[q->n_groups].rep = &q->unknown;
	return qctx_processes(q);
}

int qctx_load(struct qctx *q, struct db *db, const struct query_filter *f)
{
	int err = qctx_load_syms(q, db, f);

	return err ? err : qctx_group(q);
}

const struct qsym *qctx_find(const struct qctx *q, int64_t addr)
{
	uint64_t i;

	return hashmap__get(&q->index, (uint64_t)addr, &i) ? &q->syms[i] : &q->unknown;
}

/* ---- inline chains ------------------------------------------------------ */

void chains_free(struct chains *c, int n_syms)
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
int chains_load(struct qctx *q, struct chains *c)
{
	sqlite3_stmt *st;
	int cap = 0, rc, err = 0;

	memset(c, 0, sizeof(*c));
	c->n_syms = q->n_syms;
	c->first = calloc(q->n_syms + 1, sizeof(int));
	c->n = calloc(q->n_syms + 1, sizeof(int));
	if (!c->first || !c->n)
		return -ENOMEM;
	if (!db__has(q->db, DB_V2))
		return 0;
	err = db__prepare(q->db, "read inline frames", "SELECT addr, depth, file, line, function"
			" FROM symbol_frames ORDER BY addr, depth", &st);
	if (err)
		return err;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const struct qsym *s = qctx_find(q, sqlite3_column_int64(st, 0));
		int si = s == &q->unknown ? -1 : (int)(s - q->syms);
		struct frame *f;

		if (si < 0)
			continue;
		if (c->nv >= DB_MAX_ROWS) {
			err = db__too_many_rows(q->db, "symbol_frames");
			break;
		}
		if (ALLOC_GROW(c->v, c->nv + 1, cap, 1024)) {
			err = -ENOMEM;
			break;
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
		err = db__err(q->db, "read inline frames");
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

/* The checkpoint ids [*lo, *hi] whose timestamps fall in [from, to]; *lo > *hi when none. */
int checkpoint_range(struct db *db, uint64_t from, uint64_t to, int64_t *lo, int64_t *hi,
			    bool *all)
{
	sqlite3_stmt *st;
	int err = db__prepare(db, "read checkpoints",
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
		err = db__err(db, "read checkpoints");
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
		.file = by == GROUP_PROCESS ? NULL : g->rep->file,
		.line = by == GROUP_LINE ? g->rep->line : 0,
		.function = by <= GROUP_FUNCTION || by == GROUP_PROCESS ? g->rep->function : NULL,
		.module = g->rep->module,
		.pid = g->rep->pid,
		.cgroup = by == GROUP_PROCESS ? g->rep->cgroup : NULL,
		.samples = g->samples,
		.live_bytes = g->live,
		.peak_bytes = g->peak,
		.alloc_bytes = g->alloc_bytes,
		.free_bytes = g->free_bytes,
		.alloc_count = g->alloc_count,
		.free_count = g->free_count,
		.temp_count = g->temp_known ? g->temp_count : -1,
		.kinds = g->kinds,
	};

	if (by == GROUP_MODULE)
		r.file = NULL;
	if (by == GROUP_SYMBOL) {
		r.file = NULL;
		r.function = g->rep->symname ? g->rep->symname : g->rep->function;
	}
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

/* A group's value under the heap sort key. */
static int64_t heap_key(const struct qgroup *g, enum heap_sort by)
{
	switch (by) {
	case HEAP_SORT_PEAK:
		return g->peak;
	case HEAP_SORT_ALLOCATED:
		return g->alloc_bytes;
	case HEAP_SORT_ALLOCS:
		return g->alloc_count;
	case HEAP_SORT_TEMPORARY:
		return g->temp_known ? g->temp_count : 0;
	default:
		return g->live;
	}
}

static int heap_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct qgroup *a = *(const struct qgroup *const *)pa;
	const struct qgroup *b = *(const struct qgroup *const *)pb;
	enum heap_sort by = *(const enum heap_sort *)ctx;

	if (heap_key(a, by) != heap_key(b, by))
		return heap_key(a, by) < heap_key(b, by) ? 1 : -1;
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
	enum heap_sort by = q->f->heap_sort;
	int n = 0, err = 0, shown = 0;
	double key_total = 0;

	if (!v)
		return -ENOMEM;
	for (int i = 0; i <= q->n_groups; i++)
		if (q->groups[i].used)
			v[n++] = &q->groups[i];
	/* the live share is the row's pct; the threshold is a share of the sort key */
	if (heap && by != HEAP_SORT_LIVE) {
		for (int i = 0; i < n; i++)
			key_total += (double)heap_key(v[i], by);
		qsort_r(v, n, sizeof(*v), heap_cmp, &by);
	} else if (heap) {
		key_total = total;
		qsort_r(v, n, sizeof(*v), heap_cmp, &by);
	} else {
		qsort(v, n, sizeof(*v), cpu_cmp);
	}
	for (int i = 0; i < n && !err; i++) {
		struct prof_row r = row_of(v[i], q->f->group);
		double key_pct;

		if (heap) {
			r.pct = total > 0 && r.live_bytes > 0 ? 100.0 * r.live_bytes / total : 0;
			key_pct = key_total > 0 && heap_key(v[i], by) > 0 ?
				  100.0 * heap_key(v[i], by) / key_total : 0;
		} else {
			r.pct = key_pct = total > 0 ? 100.0 * r.samples / total : 0;
		}
		if (q->f->threshold_pct > 0 && key_pct < q->f->threshold_pct)
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
		return db__err(db, what);
	err = db__prepare(db, what, sql, &st);
	if (!err) {
		if (n_bind >= 1)
			sqlite3_bind_int64(st, 1, b1);
		if (n_bind >= 2)
			sqlite3_bind_int64(st, 2, b2);
		while ((rc = sqlite3_step(st)) == SQLITE_ROW)
			;
		if (rc != SQLITE_DONE)
			err = db__err(db, what);
	}
	sqlite3_finalize(st);
	sqlite3_create_function(sq, fname, nargs, SQLITE_UTF8, NULL, NULL, NULL, NULL);
	return err;
}

int int_query(struct db *db, const char *what, const char *sql, int64_t *v, int n)
{
	sqlite3_stmt *st;
	int err = db__prepare(db, what, sql, &st);

	if (err)
		return err;
	if (sqlite3_step(st) != SQLITE_ROW) {
		err = db__err(db, what);
	} else {
		for (int i = 0; i < n; i++)
			v[i] = sqlite3_column_int64(st, i);
	}
	sqlite3_finalize(st);
	return err;
}
