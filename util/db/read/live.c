#include "util/db/read/live.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/db/db.h"
#include "util/db/stmt.h"
#include "util/db/read/series.h"
#include "util/db/totals.h"
#include "util/error.h"

enum {
	ST_VERSION,
	ST_LAST,
	ST_CPU_SERIES,
	ST_HEAP_SERIES,
	ST_ADDRS,
	ST_COUNT
};

/* each prepared at its first use */
static const struct stmt_def live_sql[ST_COUNT] = {
	[ST_VERSION] = { "data version", "PRAGMA data_version", true },
	[ST_LAST] = { "last checkpoint",
		"SELECT id, timestamp_ms FROM checkpoints ORDER BY id DESC LIMIT 1", true },
	/* The addresses of a location first (symbols is small), then their
	 * rows through idx_cpu_addr / idx_heap_addr. */
	[ST_CPU_SERIES] = { "cpu series",
		"SELECT c.checkpoint_id, SUM(c.count) FROM cpu_samples c "
		"WHERE c.checkpoint_id > ?1 AND c.addr IN "
		"(SELECT addr FROM symbols WHERE file IS ?2 AND COALESCE(line, 0) = ?3 "
		"AND function IS ?4) "
		"GROUP BY c.checkpoint_id", true },
	[ST_HEAP_SERIES] = { "heap series",
		/* ?1 unused: the running total needs every checkpoint */
		"SELECT h.checkpoint_id, SUM(h.alloc_bytes) - SUM(h.free_bytes) FROM heap_events h "
		"WHERE h.addr IN "
		"(SELECT addr FROM symbols WHERE file IS ?2 AND COALESCE(line, 0) = ?3 "
		"AND function IS ?4) "
		"GROUP BY h.checkpoint_id", true },
	[ST_ADDRS] = { "addresses",
		"SELECT addr FROM symbols WHERE file IS ?1 AND COALESCE(line, 0) = ?2"
		" AND function IS ?3 ORDER BY addr", true },
};

/* The rows of compacted checkpoints, from their series (util/db/series.h). */
struct packed {
	int64_t *addrs;		/* the location's, sorted */
	size_t n_addrs, cap_addrs;
	bool heap;
	int64_t first, last, *base, *vals;
};

static int add_addr(struct packed *p, int64_t addr)
{
	if (ALLOC_GROW(p->addrs, p->n_addrs + 1, p->cap_addrs, 16))
		return -ENOMEM;
	/* symbols.addr is its primary key: the query gives them sorted */
	p->addrs[p->n_addrs++] = addr;
	return 0;
}

static void packed_row(void *ctx, const struct totals_row *r)
{
	struct packed *p = ctx;
	int64_t v = p->heap ? (int64_t)((uint64_t)r->alloc_bytes - (uint64_t)r->free_bytes) :
		    r->count;

	if (r->checkpoint < p->first)
		*p->base += p->heap ? v : 0;
	else if (r->checkpoint <= p->last)
		p->vals[r->checkpoint - p->first] += v;
}

struct db_live {
	struct db *db;
	struct stmt_table sts;
	int64_t version;
	bool have_version;
};

struct db_live *db_live__new(struct db *db)
{
	struct db_live *l = calloc(1, sizeof(*l));

	if (!l) {
		pr_err("out of memory");
		return NULL;
	}
	l->db = db;
	if (stmt_table__init(&l->sts, db, live_sql, ST_COUNT)) {
		pr_err("out of memory");
		free(l);
		return NULL;
	}
	return l;
}

void db_live__delete(struct db_live *l)
{
	if (!l)
		return;
	stmt_table__fini(&l->sts);
	free(l);
}

/* Statement i, prepared at its first use and kept; reset and unbound. NULL: printed. */
static sqlite3_stmt *stmt(struct db_live *l, int i)
{
	sqlite3_stmt *st = stmt_table__get(&l->sts, i);

	if (st) {
		sqlite3_reset(st);
		sqlite3_clear_bindings(st);
	}
	return st;
}

int db_live__changed(struct db_live *l)
{
	sqlite3_stmt *s = stmt(l, ST_VERSION);
	int64_t v;
	int changed;

	if (!s)
		return -RSPROF_EDB;
	if (sqlite3_step(s) != SQLITE_ROW)
		return stmt_table__err(&l->sts, ST_VERSION);
	v = sqlite3_column_int64(s, 0);
	sqlite3_reset(s);
	changed = !l->have_version || v != l->version;
	l->version = v;
	l->have_version = true;
	return changed;
}

int db_live__last_checkpoint(struct db_live *l, int64_t *id, uint64_t *ts_ms)
{
	sqlite3_stmt *s = stmt(l, ST_LAST);
	int rc;

	*id = 0;
	*ts_ms = 0;
	if (!s)
		return -RSPROF_EDB;
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		*id = sqlite3_column_int64(s, 0);
		*ts_ms = (uint64_t)sqlite3_column_int64(s, 1);
	} else if (rc != SQLITE_DONE) {
		return stmt_table__err(&l->sts, ST_LAST);
	}
	sqlite3_reset(s);
	return 0;
}

int db_live__series(struct db_live *l, enum live_series kind, const char *file, int line,
		    const char *function, int64_t *vals, int n)
{
	int i = kind == SERIES_CPU ? ST_CPU_SERIES : ST_HEAP_SERIES;
	int64_t last, first, lo = 0, hi = 0, from;
	uint64_t ts;
	int64_t base = 0;
	sqlite3_stmt *s;
	int rc;

	memset(vals, 0, sizeof(*vals) * n);
	rc = db_live__last_checkpoint(l, &last, &ts);
	if (rc < 0)
		return rc;
	first = last - n + 1;		/* the id shown in vals[0] */
	/*
	 * Compacted checkpoints (lo, hi]: the blocks from the one holding
	 * `first` on are read from their series, their folded rows skipped
	 * (those of older blocks only add to the heap's base, whole).
	 */
	rc = series__range(l->db, &lo, &hi);
	if (rc < 0)
		return rc;
	from = first > 1 ? (first - 1) / TOTALS_SPAN * TOTALS_SPAN : 0;
	if (from < lo)
		from = lo;
	if (hi > last)
		hi = last;
	s = stmt(l, i);
	if (!s)
		return -RSPROF_EDB;
	if (sqlite3_bind_int64(s, 1, first - 1) != SQLITE_OK ||
	    (file ? sqlite3_bind_text(s, 2, file, -1, SQLITE_STATIC)
		  : sqlite3_bind_null(s, 2)) != SQLITE_OK ||
	    sqlite3_bind_int(s, 3, line) != SQLITE_OK ||
	    (function ? sqlite3_bind_text(s, 4, function, -1, SQLITE_STATIC)
		      : sqlite3_bind_null(s, 4)) != SQLITE_OK)
		return stmt_table__err(&l->sts, i);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(s, 0);
		int64_t v = sqlite3_column_int64(s, 1);

		if (id > from && id <= hi)
			continue;	/* folded: from the series below */
		if (id < first)
			base += v;	/* heap: what was live before the chart starts */
		else if (id <= last)
			vals[id - first] += v;
	}
	if (rc != SQLITE_DONE)
		return stmt_table__err(&l->sts, i);
	sqlite3_reset(s);
	if (hi > from) {
		struct packed p = { .heap = kind == SERIES_HEAP, .first = first, .last = last,
				    .base = &base, .vals = vals };

		s = stmt(l, ST_ADDRS);
		if (!s)
			return -RSPROF_EDB;
		if ((file ? sqlite3_bind_text(s, 1, file, -1, SQLITE_STATIC)
			  : sqlite3_bind_null(s, 1)) != SQLITE_OK ||
		    sqlite3_bind_int(s, 2, line) != SQLITE_OK ||
		    (function ? sqlite3_bind_text(s, 3, function, -1, SQLITE_STATIC)
			      : sqlite3_bind_null(s, 3)) != SQLITE_OK)
			return stmt_table__err(&l->sts, ST_ADDRS);
		rc = 0;
		while (!rc && (rc = sqlite3_step(s)) == SQLITE_ROW)
			rc = add_addr(&p, sqlite3_column_int64(s, 0));
		sqlite3_reset(s);
		if (rc == SQLITE_DONE)
			rc = series__rows(l->db, p.heap, from + 1, hi, p.addrs, p.n_addrs,
					  packed_row, &p);
		else if (rc > 0)
			rc = stmt_table__err(&l->sts, ST_ADDRS);
		free(p.addrs);
		if (rc)
			return rc;
	}
	if (kind == SERIES_HEAP) {
		for (int k = 0; k < n; k++) {
			base += vals[k];
			/* before the profile's first checkpoint there is nothing */
			vals[k] = first + k >= 1 ? base : 0;
		}
	}
	return 0;
}
