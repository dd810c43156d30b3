#include "util/db/write/stacks.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>

#include "util/db/db.h"
#include "util/db/rows.h"
#include "util/error.h"

static const char create_sql[] =
	"CREATE TABLE IF NOT EXISTS cpu_stacks (\n"
	"    checkpoint_id INTEGER NOT NULL,\n"
	"    stack_id INTEGER NOT NULL,\n"
	"    count INTEGER NOT NULL,\n"
	"    FOREIGN KEY (checkpoint_id) REFERENCES checkpoints(id),\n"
	"    FOREIGN KEY (stack_id) REFERENCES stacks(id)\n"
	");\n"
	"CREATE INDEX IF NOT EXISTS idx_cpu_stacks_checkpoint ON cpu_stacks(checkpoint_id);\n";

int db_stacks__create(struct db *db)
{
	int err = db__exec(db, "create cpu_stacks", create_sql);

	if (!err)
		db__schema_changed(db);
	return err;
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
	return db__err(db, "fold cpu stacks");
}
