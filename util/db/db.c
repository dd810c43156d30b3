/*
 * The profile file's connection (util/db/db.h): what readers and the writer
 * share. Opening is open.c's (a reader) and create.c's (the writer).
 */
#include "util/db/db.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/db/db-priv.h"
#include "util/error.h"

int db__err(struct db *db, const char *what)
{
	pr_err("%s: %s: %s", db->path, what, sqlite3_errmsg(db->sq));
	return -RSPROF_EDB;
}

int db__prepare(struct db *db, const char *what, const char *sql, sqlite3_stmt **st)
{
	if (sqlite3_prepare_v2(db->sq, sql, -1, st, NULL) != SQLITE_OK) {
		sqlite3_finalize(*st);
		*st = NULL;
		return db__err(db, what);
	}
	return 0;
}

void db__lock(struct db *db)
{
	sqlite3_mutex_enter(sqlite3_db_mutex(db->sq));
}

void db__unlock(struct db *db)
{
	sqlite3_mutex_leave(sqlite3_db_mutex(db->sq));
}

const char *db__path(const struct db *db)
{
	return db->path;
}

struct sqlite3 *db__sqlite(struct db *db)
{
	return db->sq;
}

int db__version(const struct db *db)
{
	return db->version;
}

/* Does the file's table have that column? */
static bool db_has_column(struct db *db, const char *table, const char *column)
{
	sqlite3_stmt *st = NULL;
	bool found = false;

	if (sqlite3_prepare_v2(db->sq, "SELECT 1 FROM pragma_table_info(?) WHERE name = ?", -1,
			       &st, NULL) == SQLITE_OK &&
	    sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC) == SQLITE_OK &&
	    sqlite3_bind_text(st, 2, column, -1, SQLITE_STATIC) == SQLITE_OK)
		found = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return found;
}

/* Does sql prepare (its tables and columns are there)? */
static bool db_prepares(struct db *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	bool ok = sqlite3_prepare_v2(db->sq, sql, -1, &st, NULL) == SQLITE_OK;

	sqlite3_finalize(st);
	return ok;
}

void db_features(struct db *db)
{
	/* the columns and tables a version-3 file may lack, by who wrote it */
	static const struct {
		enum db_feature f;
		const char *table, *column;	/* a column; NULL: sql prepares */
		const char *sql;
	} v3[] = {
		{ DB_PID, "cpu_samples", "pid", NULL },
		{ DB_PROCESSES, "processes", "pid", NULL },
		{ DB_PROC_CGROUP, "processes", "cgroup", NULL },
		{ DB_TEMP_COUNT, "heap_events", "temp_count", NULL },
		{ DB_KIND, "heap_events", "kind", NULL },
		{ DB_MERGED, NULL, NULL, "SELECT merged FROM checkpoints" },
		{ DB_TOTALS, NULL, NULL,
		  "SELECT span, through, cpu_rowid, heap_rowid FROM totals_state" },
		{ DB_TOTALS_TEMP, "heap_totals", "temp_count", NULL },
		{ DB_TOTALS_KIND, "heap_totals", "kind", NULL },
		{ DB_SERIES, NULL, NULL, "SELECT max((SELECT folded0 FROM totals_state), since),"
		  " through FROM series_state" },
		{ DB_SERIES_SLICES, "series_state", "dropped", NULL },
	};
	unsigned int f = db->features & DB_WRITE_TOTALS;

	if (db->version >= 2)
		f |= DB_V2;
	if (db->version >= 3) {
		f |= DB_V3;
		for (size_t i = 0; i < sizeof(v3) / sizeof(v3[0]); i++)
			if (v3[i].column ? db_has_column(db, v3[i].table, v3[i].column) :
					   db_prepares(db, v3[i].sql))
				f |= v3[i].f;
	}
	if (db_probe(db, "SELECT 1 FROM sqlite_master WHERE type = 'table'"
		     " AND name = 'cpu_stacks'") == SQLITE_ROW)
		f |= DB_CPU_STACKS;
	if (db->version >= 2 && db_has_column(db, "map", "build_id"))
		f |= DB_MAP_BUILD_ID;
	db->features = f;
}

bool db__has(const struct db *db, enum db_feature f)
{
	return (db->features & f) == f;
}

void db__schema_changed(struct db *db)
{
	db_features(db);
}

int db__close(struct db *db)
{
	int rc = SQLITE_OK;

	if (!db)
		return 0;
	if (db->sq) {
		rc = sqlite3_close(db->sq);
		if (rc != SQLITE_OK)
			pr_err("%s: close: %s", db->path, sqlite3_errstr(rc));
	}
	if (db->check_fd >= 0)
		close(db->check_fd);
	if (db->lock_fd >= 0)
		close(db->lock_fd);	/* after sqlite3_close(): it drops the flock */
	free(db->path);
	free(db);
	return rc == SQLITE_OK ? 0 : -RSPROF_EDB;
}

struct db *db_alloc(const char *path)
{
	struct db *db = calloc(1, sizeof(*db));

	if (!db)
		return NULL;
	db->check_fd = db->lock_fd = -1;
	db->path = strdup(path);
	if (!db->path) {
		free(db);
		return NULL;
	}
	return db;
}

int db__exec(struct db *db, const char *what, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(db->sq, sql, NULL, NULL, &msg) != SQLITE_OK) {
		pr_err("%s: %s: %s", db->path, what, msg ? msg : sqlite3_errmsg(db->sq));
		sqlite3_free(msg);
		return -RSPROF_EDB;
	}
	return 0;
}

/* The primary result code of the first read of the schema. */
int db_probe(struct db *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db->sq, sql, -1, &st, NULL);

	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc & 0xff;
}

int db__too_many_rows(struct db *db, const char *what)
{
	pr_err("'%s': more than %d rows of %s, more than rsprof reads", db->path, DB_MAX_ROWS,
	       what);
	pr_hint("the file is damaged or not a real profile");
	return -RSPROF_EDB;
}

int db__meta_get(struct db *db, const char *key, char **value)
{
	sqlite3_stmt *st;
	int rc;

	*value = NULL;
	if (sqlite3_prepare_v2(db->sq, "SELECT value FROM meta WHERE key = ?", -1, &st,
			       NULL) != SQLITE_OK)
		return db__err(db, "read meta");
	if (sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC) != SQLITE_OK) {
		sqlite3_finalize(st);
		return db__err(db, "read meta");
	}
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const char *v = (const char *)sqlite3_column_text(st, 0);

		*value = strdup(v ? v : "");
		sqlite3_finalize(st);
		return *value ? 0 : -ENOMEM;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db__err(db, "read meta");
	return 0;
}

int db__snapshot_begin(struct db *db)
{
	if (!sqlite3_get_autocommit(db->sq))
		return 0;
	/* BEGIN alone takes no snapshot; the first read does: read something now */
	if (db__exec(db, "begin snapshot", "BEGIN") ||
	    db__exec(db, "begin snapshot", "SELECT COUNT(*) FROM meta")) {
		if (!sqlite3_get_autocommit(db->sq))
			sqlite3_exec(db->sq, "ROLLBACK", NULL, NULL, NULL);
		return -RSPROF_EDB;
	}
	return 0;
}

int db__snapshot_end(struct db *db)
{
	if (!db || sqlite3_get_autocommit(db->sq))
		return 0;
	return db__exec(db, "end snapshot", "COMMIT");
}

int db__file_size(const struct db *db, uint64_t *size, uint64_t *wal_size)
{
	char wal[4096];
	struct stat st;

	*size = *wal_size = 0;
	if (stat(db->path, &st))
		return -errno;
	*size = st.st_size;
	snprintf(wal, sizeof(wal), "%s-wal", db->path);
	if (!stat(wal, &st))
		*wal_size = st.st_size;
	return 0;
}

int db__check(struct db *db)
{
	sqlite3_stmt *st;
	int rc, findings = 0;

	if (sqlite3_prepare_v2(db->sq, "PRAGMA integrity_check", -1, &st, NULL) != SQLITE_OK)
		return db__err(db, "integrity check");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *v = (const char *)sqlite3_column_text(st, 0);

		if (v && !strcmp(v, "ok"))
			continue;
		pr_err("%s: integrity check: %s", db->path, v ? v : "(null)");
		findings++;
	}
	if (rc != SQLITE_DONE) {
		db__err(db, "integrity check");
		findings++;
	}
	sqlite3_finalize(st);
	return findings ? -RSPROF_EDB : 0;
}
