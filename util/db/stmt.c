/*
 * Tables of persistent prepared statements (util/db/stmt.h).
 */
#include "util/db/stmt.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>

#include "util/db/db.h"
#include "util/error.h"

int stmt_table__init(struct stmt_table *t, struct db *db, const struct stmt_def *def, int n)
{
	t->db = db;
	t->def = def;
	t->n = n;
	t->st = calloc(n, sizeof(*t->st));
	if (!t->st)
		return -ENOMEM;
	for (int i = 0; i < n; i++)
		if (def[i].sql && !def[i].lazy && stmt_table__prepare(t, i, def[i].sql))
			return -RSPROF_EDB;
	return 0;
}

int stmt_table__prepare(struct stmt_table *t, int i, const char *sql)
{
	sqlite3_finalize(t->st[i]);
	t->st[i] = NULL;
	if (sqlite3_prepare_v3(db__sqlite(t->db), sql, -1, SQLITE_PREPARE_PERSISTENT, &t->st[i],
			       NULL) != SQLITE_OK)
		return stmt_table__err(t, i);
	return 0;
}

void stmt_table__fini(struct stmt_table *t)
{
	for (int i = 0; t->st && i < t->n; i++)
		sqlite3_finalize(t->st[i]);
	free(t->st);
	t->st = NULL;
	t->n = 0;
}

sqlite3_stmt *stmt_table__get(struct stmt_table *t, int i)
{
	if (!t->st[i] && stmt_table__prepare(t, i, t->def[i].sql))
		return NULL;
	return t->st[i];
}

int stmt_table__err(struct stmt_table *t, int i)
{
	int err = db__err(t->db, t->def[i].name);

	if (t->st[i])
		sqlite3_reset(t->st[i]);
	return err;
}

int stmt_table__step(struct stmt_table *t, int i)
{
	sqlite3_stmt *st = t->st[i];
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc != SQLITE_DONE)
		return stmt_table__err(t, i);
	return 0;
}

int stmt_table__run(struct stmt_table *t, int i, int n, const int64_t *args, int64_t *out,
		    int n_out, bool *got_row)
{
	sqlite3_stmt *st = stmt_table__get(t, i);
	int rc;

	if (got_row)
		*got_row = false;
	if (!st)
		return -RSPROF_EDB;
	sqlite3_reset(st);
	for (int a = 0; a < n; a++)
		if (sqlite3_bind_int64(st, a + 1, args[a]) != SQLITE_OK)
			return stmt_table__err(t, i);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (int c = 0; c < n_out; c++)
			out[c] = sqlite3_column_int64(st, c);
		if (got_row)
			*got_row = true;
	}
	if (rc != SQLITE_DONE)
		return stmt_table__err(t, i);
	sqlite3_reset(st);
	return 0;
}
