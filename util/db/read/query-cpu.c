/*
 * CPU rows (report --cpu, top): samples per group over the window.
 */
#include "util/db/read/query.h"
#include "util/db/read/query-priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

#include "util/db/db.h"
#include "util/db/read/totals.h"

static void cpu_row(struct scan *sc, int64_t addr, int64_t n, int64_t pid, bool no_pid)
{
	const struct qsym *s = qctx_find(sc->q, addr);
	int g = qctx_group_of(sc->q, s, pid, no_pid);

	if (g < 0)
		return;
	sc->cpu_total += n;
	if (s->match) {
		sc->q->groups[g].samples += n;
		sc->q->groups[g].used = true;
	}
}

static void totals_cpu_row(void *ctx, const struct totals_row *r)
{
	cpu_row(ctx, r->addr, r->count, r->pid, r->pid == 0);
}

static void sql_cpu_row(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	cpu_row(sqlite3_user_data(ctx), sqlite3_value_int64(argv[0]),
		sqlite3_value_int64(argv[1]), sqlite3_value_int64(argv[2]),
		sqlite3_value_type(argv[2]) == SQLITE_NULL);
	sqlite3_result_int(ctx, 0);
}

int db_query_cpu(struct db *db, const struct query_filter *f, uint64_t *total,
		 prof_row_cb cb, void *ctx)
{
	struct scan sc = { 0 };
	struct totals *t = NULL;
	struct qctx q;
	int64_t lo, hi;
	bool all, snap;
	int err;

	*total = 0;
	err = q_snapshot(db, &snap);
	if (err)
		return err;
	err = qctx_load(&q, db, f);
	if (!err)
		err = checkpoint_range(db, f->win.from_ms, f->win.to_ms, &lo, &hi, &all);
	if (!err)
		err = totals__open(db, &t);
	if (err || lo > hi)
		goto out;
	sc.q = &q;
	if (t)
		err = totals__cpu_range(t, lo, hi, totals_cpu_row, &sc);
	/* the whole run: a plain table scan beats the index walk */
	else if (all)
		err = run_scan(db, "read cpu samples", "rsprof_cpu_row", 3, sql_cpu_row, &sc,
			       q.has_pid ?
			       "SELECT 1 FROM cpu_samples WHERE rsprof_cpu_row(addr, count, pid)" :
			       "SELECT 1 FROM cpu_samples WHERE rsprof_cpu_row(addr, count, NULL)",
			       0, 0, 0);
	else
		err = run_scan(db, "read cpu samples", "rsprof_cpu_row", 3, sql_cpu_row, &sc,
			       q.has_pid ?
			       "SELECT 1 FROM cpu_samples WHERE checkpoint_id BETWEEN ? AND ?"
			       " AND rsprof_cpu_row(addr, count, pid)" :
			       "SELECT 1 FROM cpu_samples WHERE checkpoint_id BETWEEN ? AND ?"
			       " AND rsprof_cpu_row(addr, count, NULL)", 2, lo, hi);
	if (err)
		goto out;
	*total = sc.cpu_total;
	for (int i = 0; i <= q.n_groups; i++)
		if (q.groups[i].used && !q.groups[i].samples)
			q.groups[i].used = false;
	err = emit_rows(&q, false, (double)*total, cb, ctx);
out:
	totals__delete(t);
	qctx_free(&q);
	q_snapshot_end(db, snap);
	return err;
}
