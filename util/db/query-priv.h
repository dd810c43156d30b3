#ifndef RSPROF_UTIL_DB_QUERY_PRIV_H
#define RSPROF_UTIL_DB_QUERY_PRIV_H

/*
 * Inside the read queries (util/db-query*.c, util/db/summary.c): the
 * symbols table grouped at the filter's level, and the helpers the CPU,
 * heap, stack and summary queries share. Not for other files.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sqlite3.h>

#include "util/db/query.h"
#include "util/hashmap.h"

struct db;

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
	struct hashmap index;	/* addr -> index in syms */
};


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


/* Report sqlite's error for what; returns -RSPROF_EDB. */
int q_err(struct db *db, const char *what);
/* Prepare sql; on failure *st is NULL and the error reported. */
int q_prepare(struct db *db, const char *what, const char *sql, sqlite3_stmt **st);
/* Column i as a malloc'd string (NULL stays NULL); failure sets *err. */
char *dup_col(sqlite3_stmt *st, int i, int *err);
/* One row of n integers from sql. */
int int_query(struct db *db, const char *what, const char *sql, int64_t *v, int n);

/*
 * Hold one read transaction across the reads of a query, unless the caller
 * holds one (*mine tells); q_snapshot_end() ends it when it is *mine.
 */
int q_snapshot(struct db *db, bool *mine);
void q_snapshot_end(struct db *db, bool mine);

/* Load the symbols, group them by f->group, mark those matching f->pattern. */
int qctx_load(struct qctx *q, struct db *db, const struct query_filter *f);
void qctx_free(struct qctx *q);
/* The symbol of addr, or &q->unknown. */
const struct qsym *qctx_find(const struct qctx *q, int64_t addr);

/* The checkpoint ids [*lo, *hi] whose timestamps fall in [from, to]; *lo > *hi when none. */
int checkpoint_range(struct db *db, uint64_t from, uint64_t to, int64_t *lo, int64_t *hi,
		     bool *all);
/* Sort the used groups, apply threshold and limit, hand the rows to cb. */
int emit_rows(struct qctx *q, bool heap, double total, prof_row_cb cb, void *ctx);
/* Run a scan whose WHERE calls fn (nargs values) once per row; binds lo/hi when asked. */
int run_scan(struct db *db, const char *what, const char *fname, int nargs,
	     void (*fn)(sqlite3_context *, int, sqlite3_value **), struct scan *sc,
	     const char *sql, int n_bind, int64_t b1, int64_t b2);

#endif
