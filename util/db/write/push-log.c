#include "util/db/write/push-log.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "util/db/db.h"
#include "util/error.h"

static const char create_sql[] =
	"CREATE TABLE IF NOT EXISTS pushes (\n"
	"    store TEXT NOT NULL,\n"
	"    from_ms INTEGER NOT NULL,\n"
	"    to_ms INTEGER NOT NULL,\n"
	"    part TEXT NOT NULL,\n"
	"    state TEXT NOT NULL,\n"
	"    http_status INTEGER DEFAULT NULL,\n"
	"    bytes INTEGER NOT NULL DEFAULT 0,\n"
	"    interval_ms INTEGER NOT NULL DEFAULT 0,\n"
	"    time_ms INTEGER NOT NULL,\n"
	"    message TEXT DEFAULT NULL,\n"
	"    PRIMARY KEY (store, from_ms, to_ms, part)\n"
	") WITHOUT ROWID";

static const char insert_sql[] =
	"INSERT OR REPLACE INTO pushes (store, from_ms, to_ms, part, state, http_status, bytes,"
	" interval_ms, time_ms, message) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";

struct push_log {
	sqlite3 *sq;
	char *path;
	int lock_fd;
};

static int log_err(sqlite3 *sq, const char *path, const char *what)
{
	pr_err("%s: %s: %s", path, what, sqlite3_errmsg(sq));
	return -RSPROF_EDB;
}

/* The rows in one transaction on sq (the table made first). */
static int write_rows(sqlite3 *sq, const char *path, const struct push_log_row *rows, size_t n)
{
	sqlite3_stmt *st = NULL;
	int err = 0;

	if (!n)
		return 0;
	if (sqlite3_exec(sq, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return log_err(sq, path, "begin the push ledger");
	if (sqlite3_exec(sq, create_sql, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(sq, insert_sql, -1, &st, NULL) != SQLITE_OK) {
		err = log_err(sq, path, "write the push ledger");
		goto out;
	}
	for (size_t i = 0; i < n && !err; i++) {
		const struct push_log_row *r = &rows[i];

		sqlite3_bind_text(st, 1, r->store, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, (sqlite3_int64)r->from_ms);
		sqlite3_bind_int64(st, 3, (sqlite3_int64)r->to_ms);
		sqlite3_bind_text(st, 4, r->part, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 5, r->state, -1, SQLITE_STATIC);
		if (r->http_status)
			sqlite3_bind_int64(st, 6, r->http_status);
		else
			sqlite3_bind_null(st, 6);
		sqlite3_bind_int64(st, 7, (sqlite3_int64)r->bytes);
		sqlite3_bind_int64(st, 8, (sqlite3_int64)r->interval_ms);
		sqlite3_bind_int64(st, 9, r->time_ms);
		if (r->message)
			sqlite3_bind_text(st, 10, r->message, -1, SQLITE_STATIC);
		else
			sqlite3_bind_null(st, 10);
		if (sqlite3_step(st) != SQLITE_DONE)
			err = log_err(sq, path, "write the push ledger");
		sqlite3_reset(st);
		sqlite3_clear_bindings(st);
	}
out:
	sqlite3_finalize(st);
	if (!err && sqlite3_exec(sq, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		err = log_err(sq, path, "commit the push ledger");
	if (err)
		sqlite3_exec(sq, "ROLLBACK", NULL, NULL, NULL);
	return err;
}

int push_log__write_db(struct db *writer, const struct push_log_row *rows, size_t n)
{
	return write_rows(db__sqlite(writer), db__path(writer), rows, n);
}

int push_log__write(struct push_log *pl, const struct push_log_row *rows, size_t n)
{
	return write_rows(pl->sq, pl->path, rows, n);
}

int push_log__close(struct push_log *pl)
{
	int err = 0;

	if (!pl)
		return 0;
	if (pl->sq && sqlite3_close(pl->sq) != SQLITE_OK)
		err = log_err(pl->sq, pl->path, "close");
	/* after SQLite's close: closing an fd of the file drops the process's POSIX locks on it */
	if (pl->lock_fd >= 0)
		close(pl->lock_fd);
	free(pl->path);
	free(pl);
	return err;
}

int push_log__open(const char *path, struct push_log **out)
{
	struct push_log *pl = calloc(1, sizeof(*pl));
	struct db *check = NULL;
	int err;

	*out = NULL;
	if (!pl)
		return -ENOMEM;
	pl->lock_fd = -1;
	pl->path = strdup(path);
	if (!pl->path) {
		free(pl);
		return -ENOMEM;
	}
	/* a profile this rsprof reads (not damaged, not newer), checked read-only first */
	err = db__open(path, &check);
	db__close(check);
	if (err)
		goto fail;
	pl->lock_fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (pl->lock_fd < 0) {
		err = -errno;
		pr_err("cannot open '%s': %s", path, strerror(errno));
		goto fail;
	}
	/* the lock a recorder holds for as long as it writes (util/db/db.h) */
	if (flock(pl->lock_fd, LOCK_EX | LOCK_NB)) {
		err = errno == EWOULDBLOCK ? -EBUSY : -errno;
		pr_err("'%s' is being recorded by another rsprof", path);
		pr_hint("a recording pushes itself with 'rsprof record --push URL'; push the file "
			"once it has ended");
		goto fail;
	}
	if (sqlite3_open_v2(path, &pl->sq, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW,
			    NULL) != SQLITE_OK) {
		err = pl->sq ? log_err(pl->sq, path, "open for the push ledger") : -ENOMEM;
		goto fail;
	}
	sqlite3_db_config(pl->sq, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
	sqlite3_db_config(pl->sq, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)NULL);
	sqlite3_db_config(pl->sq, SQLITE_DBCONFIG_ENABLE_VIEW, 0, (int *)NULL);
	sqlite3_db_config(pl->sq, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, (int *)NULL);
	sqlite3_limit(pl->sq, SQLITE_LIMIT_ATTACHED, 0);
	sqlite3_busy_timeout(pl->sq, 5000);
	/*
	 * The WAL is copied back at close, not while a reader of this process
	 * may be reading the file as immutable (a finished profile)
	 */
	if (sqlite3_exec(pl->sq, "PRAGMA wal_autocheckpoint = 0; PRAGMA synchronous = NORMAL",
			 NULL, NULL, NULL) != SQLITE_OK) {
		err = log_err(pl->sq, path, "set up the push ledger");
		goto fail;
	}
	*out = pl;
	return 0;
fail:
	push_log__close(pl);
	return err;
}

int push_log__read(struct push_log *pl, const char *store,
		   int (*cb)(void *ctx, const struct push_log_row *r), void *ctx)
{
	sqlite3_stmt *st = NULL;
	int rc, err = 0;

	rc = sqlite3_prepare_v2(pl->sq, "SELECT store, from_ms, to_ms, part, state, http_status,"
				" bytes, interval_ms, time_ms, message FROM pushes"
				" WHERE ?1 IS NULL OR store = ?1 ORDER BY store, from_ms, to_ms, part",
				-1, &st, NULL);
	if (rc != SQLITE_OK) {
		/* no table: nothing pushed yet */
		if (strstr(sqlite3_errmsg(pl->sq), "no such table"))
			return 0;
		return log_err(pl->sq, pl->path, "read the push ledger");
	}
	if (store)
		sqlite3_bind_text(st, 1, store, -1, SQLITE_STATIC);
	while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct push_log_row r = {
			.store = (const char *)sqlite3_column_text(st, 0),
			.from_ms = (uint64_t)sqlite3_column_int64(st, 1),
			.to_ms = (uint64_t)sqlite3_column_int64(st, 2),
			.part = (const char *)sqlite3_column_text(st, 3),
			.state = (const char *)sqlite3_column_text(st, 4),
			.http_status = (long)sqlite3_column_int64(st, 5),
			.bytes = (uint64_t)sqlite3_column_int64(st, 6),
			.interval_ms = (uint64_t)sqlite3_column_int64(st, 7),
			.time_ms = sqlite3_column_int64(st, 8),
			.message = (const char *)sqlite3_column_text(st, 9),
		};

		if (!r.store || !r.part || !r.state)
			continue;
		err = cb(ctx, &r);
	}
	if (!err && rc != SQLITE_DONE)
		err = log_err(pl->sq, pl->path, "read the push ledger");
	sqlite3_finalize(st);
	return err;
}
