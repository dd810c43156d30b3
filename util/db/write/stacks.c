#include "util/db/write/stacks.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>

#include "util/db/db.h"
#include "util/db/rows.h"
#include "util/error.h"

struct db_stacks {
	struct db *db;
	sqlite3_stmt *ins;
};

static const char create_sql[] =
	"CREATE TABLE IF NOT EXISTS cpu_stacks (\n"
	"    checkpoint_id INTEGER NOT NULL,\n"
	"    stack_id INTEGER NOT NULL,\n"
	"    count INTEGER NOT NULL,\n"
	"    FOREIGN KEY (checkpoint_id) REFERENCES checkpoints(id),\n"
	"    FOREIGN KEY (stack_id) REFERENCES stacks(id)\n"
	");\n"
	"CREATE INDEX IF NOT EXISTS idx_cpu_stacks_checkpoint ON cpu_stacks(checkpoint_id);\n";

static int fail(struct db_stacks *ds, const char *what)
{
	pr_err("%s: %s: %s", db__path(ds->db), what, sqlite3_errmsg(db__sqlite(ds->db)));
	return -RSPROF_EDB;
}

int db_stacks__new(struct db *db, struct db_stacks **out)
{
	struct db_stacks *ds = calloc(1, sizeof(*ds));
	sqlite3 *sq = db__sqlite(db);
	int err;

	*out = NULL;
	if (!ds)
		return -ENOMEM;
	ds->db = db;
	if (sqlite3_exec(sq, create_sql, NULL, NULL, NULL) != SQLITE_OK) {
		err = fail(ds, "create cpu_stacks");
		free(ds);
		return err;
	}
	db__schema_changed(db);
	if (sqlite3_prepare_v3(sq, "INSERT INTO cpu_stacks (checkpoint_id, stack_id, count) "
			       "VALUES (?, ?, ?)", -1, SQLITE_PREPARE_PERSISTENT, &ds->ins,
			       NULL) != SQLITE_OK) {
		err = fail(ds, "prepare insert cpu stack");
		free(ds);
		return err;
	}
	*out = ds;
	return 0;
}

int db_stacks__write(struct db_stacks *ds, int64_t checkpoint_id, const struct stack_count *v,
		     size_t n)
{
	sqlite3 *sq = db__sqlite(ds->db);
	int err;

	if (!n)
		return 0;
	if (sqlite3_exec(sq, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return fail(ds, "begin cpu stacks");
	for (size_t i = 0; i < n; i++) {
		if (sqlite3_bind_int64(ds->ins, 1, checkpoint_id) != SQLITE_OK ||
		    sqlite3_bind_int64(ds->ins, 2, v[i].stack_id) != SQLITE_OK ||
		    sqlite3_bind_int64(ds->ins, 3, (int64_t)v[i].count) != SQLITE_OK ||
		    sqlite3_step(ds->ins) != SQLITE_DONE) {
			err = fail(ds, "insert cpu stack");
			sqlite3_reset(ds->ins);
			sqlite3_exec(sq, "ROLLBACK", NULL, NULL, NULL);
			return err;
		}
		sqlite3_reset(ds->ins);
	}
	if (sqlite3_exec(sq, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		err = fail(ds, "commit cpu stacks");
		sqlite3_exec(sq, "ROLLBACK", NULL, NULL, NULL);
		return err;
	}
	return 0;
}

int db_stacks__fold(struct db *db, int64_t first, int64_t last)
{
	static const char *const sql[] = {
		"SELECT IFNULL(MAX(rowid), 0) FROM cpu_stacks",
		"INSERT OR FAIL INTO cpu_stacks (checkpoint_id, stack_id, count)"
		" SELECT ?2, stack_id, SUM(count) FROM cpu_stacks"
		" WHERE checkpoint_id BETWEEN ?1 AND ?2 GROUP BY stack_id",
		"DELETE FROM cpu_stacks WHERE checkpoint_id BETWEEN ?1 AND ?2 AND rowid <= ?3",
	};
	sqlite3 *sq = db__sqlite(db);
	int64_t max_rowid = 0;
	sqlite3_stmt *st;
	int rc;

	if (!db__has(db, DB_CPU_STACKS))
		return 0;	/* recorded without -g */
	for (int i = 0; i < 3; i++) {
		if (sqlite3_prepare_v2(sq, sql[i], -1, &st, NULL) != SQLITE_OK)
			goto fail;
		if (i) {
			sqlite3_bind_int64(st, 1, first);
			sqlite3_bind_int64(st, 2, last);
		}
		if (i == 2)
			sqlite3_bind_int64(st, 3, max_rowid);
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW)
			max_rowid = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE)
			goto fail;
	}
	return 0;
fail:
	pr_err("%s: fold cpu stacks: %s", db__path(db), sqlite3_errmsg(sq));
	return -RSPROF_EDB;
}

void db_stacks__delete(struct db_stacks *ds)
{
	if (!ds)
		return;
	sqlite3_finalize(ds->ins);
	free(ds);
}
