/*
 * rsprof_rows: a checkpoint's rows as an eponymous virtual table of the
 * writer's connection (rows-vtab.h). SQLite's documented pointer passing
 * (sqlite3_bind_pointer) hands the rows over; the table has no state of its
 * own.
 */
#include "util/db/write/rows-vtab.h"

#include <sqlite3.h>
#include <string.h>

#define ROWS_PTR_TYPE	"rsprof-rows"
#define COL_ROWS	ROWS_VTAB_COLS	/* the hidden column the rows are given by */

struct rows_cursor {
	sqlite3_vtab_cursor base;
	const struct rows_vtab *rows;
	size_t i;
};

static int rows_connect(sqlite3 *sq, void *aux, int argc, const char *const *argv,
			sqlite3_vtab **out, char **err)
{
	sqlite3_vtab *vt;
	int rc;

	(void)aux;
	(void)argc;
	(void)argv;
	(void)err;
	rc = sqlite3_declare_vtab(sq, "CREATE TABLE x(c0, c1, c2, c3, c4, c5, c6, c7, c8, c9,"
				  " rows HIDDEN)");
	if (rc != SQLITE_OK)
		return rc;
	vt = sqlite3_malloc(sizeof(*vt));
	if (!vt)
		return SQLITE_NOMEM;
	memset(vt, 0, sizeof(*vt));
	*out = vt;
	return SQLITE_OK;
}

static int rows_disconnect(sqlite3_vtab *vt)
{
	sqlite3_free(vt);
	return SQLITE_OK;
}

/* Usable only with rows = ?: the rows are the argument. */
static int rows_best_index(sqlite3_vtab *vt, sqlite3_index_info *info)
{
	(void)vt;
	for (int i = 0; i < info->nConstraint; i++) {
		const struct sqlite3_index_constraint *c = &info->aConstraint[i];

		if (c->iColumn != COL_ROWS || c->op != SQLITE_INDEX_CONSTRAINT_EQ)
			continue;
		if (!c->usable)
			return SQLITE_CONSTRAINT;
		info->aConstraintUsage[i].argvIndex = 1;
		info->aConstraintUsage[i].omit = 1;
		info->estimatedCost = 1000;
		info->estimatedRows = 1000;
		info->idxNum = 1;
		return SQLITE_OK;
	}
	info->estimatedCost = 1e99;
	info->idxNum = 0;
	return SQLITE_OK;
}

static int rows_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **out)
{
	struct rows_cursor *c = sqlite3_malloc(sizeof(*c));

	(void)vt;
	if (!c)
		return SQLITE_NOMEM;
	memset(c, 0, sizeof(*c));
	*out = &c->base;
	return SQLITE_OK;
}

static int rows_close(sqlite3_vtab_cursor *cur)
{
	sqlite3_free(cur);
	return SQLITE_OK;
}

static int rows_filter(sqlite3_vtab_cursor *cur, int idx_num, const char *idx_str, int argc,
		       sqlite3_value **argv)
{
	struct rows_cursor *c = (struct rows_cursor *)cur;

	(void)idx_str;
	c->i = 0;
	c->rows = idx_num == 1 && argc == 1 ? sqlite3_value_pointer(argv[0], ROWS_PTR_TYPE) :
					      NULL;
	return SQLITE_OK;
}

static int rows_next(sqlite3_vtab_cursor *cur)
{
	((struct rows_cursor *)cur)->i++;
	return SQLITE_OK;
}

static int rows_eof(sqlite3_vtab_cursor *cur)
{
	struct rows_cursor *c = (struct rows_cursor *)cur;

	return !c->rows || c->i >= c->rows->n;
}

static int rows_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
	struct rows_cursor *c = (struct rows_cursor *)cur;
	const struct rows_vtab_row *r = &c->rows->row[c->i];

	if (col < 0 || col >= ROWS_VTAB_COLS || (r->null & (1u << col)))
		sqlite3_result_null(ctx);
	else
		sqlite3_result_int64(ctx, r->v[col]);
	return SQLITE_OK;
}

static int rows_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
	*rowid = (sqlite3_int64)((struct rows_cursor *)cur)->i;
	return SQLITE_OK;
}

static const sqlite3_module rows_module = {
	.iVersion = 0,
	.xCreate = NULL,	/* eponymous only: no CREATE VIRTUAL TABLE */
	.xConnect = rows_connect,
	.xBestIndex = rows_best_index,
	.xDisconnect = rows_disconnect,
	.xDestroy = rows_disconnect,
	.xOpen = rows_open,
	.xClose = rows_close,
	.xFilter = rows_filter,
	.xNext = rows_next,
	.xEof = rows_eof,
	.xColumn = rows_column,
	.xRowid = rows_rowid,
};

int rows_vtab__register(sqlite3 *sq)
{
	return sqlite3_create_module_v2(sq, "rsprof_rows", &rows_module, NULL, NULL);
}

int rows_vtab__bind(sqlite3_stmt *st, int i, const struct rows_vtab *rows)
{
	return sqlite3_bind_pointer(st, i, (void *)rows, ROWS_PTR_TYPE, NULL);
}
