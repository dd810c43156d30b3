#include "util/db/read/user.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/db/db.h"
#include "util/error.h"

struct auth_ctx {
	int denied;		/* an SQLITE_* action code that was refused, or 0 */
	const char *what;	/* its name for the message */
};

/* Pragmas that only read, whatever their argument (a table or index name). */
static const char *const pragma_reads[] = {
	"table_info", "table_xinfo", "table_list", "index_list", "index_info",
	"index_xinfo", "foreign_key_list", "foreign_key_check", "integrity_check",
	"quick_check", "database_list", "function_list", "module_list", "pragma_list",
	"collation_list", "compile_options",
};

/* Pragmas that read without an argument and set something with one. */
static const char *const pragma_getters[] = {
	"page_count", "page_size", "freelist_count", "schema_version", "user_version",
	"application_id", "journal_mode", "encoding", "auto_vacuum", "max_page_count",
	"data_version", "query_only",
};

static bool in_list(const char *s, const char *const *list, size_t n)
{
	for (size_t i = 0; s && i < n; i++)
		if (!strcasecmp(s, list[i]))
			return true;
	return false;
}

/*
 * sqlite3_set_authorizer() callback: allow what reads, refuse the rest while
 * the statement is prepared (so nothing of it runs).
 */
static int authorize(void *data, int action, const char *a1, const char *a2,
		     const char *db, const char *trigger)
{
	struct auth_ctx *ctx = data;

	switch (action) {
	case SQLITE_SELECT:
	case SQLITE_READ:
	case SQLITE_FUNCTION:
	case SQLITE_RECURSIVE:
		return SQLITE_OK;
	case SQLITE_PRAGMA:
		if (in_list(a1, pragma_reads, sizeof(pragma_reads) / sizeof(*pragma_reads)))
			return SQLITE_OK;
		if (!a2 && in_list(a1, pragma_getters,
				   sizeof(pragma_getters) / sizeof(*pragma_getters)))
			return SQLITE_OK;
		ctx->what = "this PRAGMA";
		break;
	case SQLITE_ATTACH:
	case SQLITE_DETACH:
		ctx->what = "ATTACH/DETACH";
		break;
	case SQLITE_TRANSACTION:
	case SQLITE_SAVEPOINT:
		ctx->what = "a transaction";
		break;
	default:
		ctx->what = "a statement that writes";
		break;
	}
	if (!ctx->denied)
		ctx->denied = action;
	return SQLITE_DENY;
}

/* True when s holds nothing but white space and SQL comments. */
static bool only_comments(sqlite3 *conn, const char *s)
{
	sqlite3_stmt *st = NULL;
	const char *tail = NULL;
	int rc;

	while (s && *s) {
		rc = sqlite3_prepare_v2(conn, s, -1, &st, &tail);
		if (rc != SQLITE_OK)
			return false;
		if (st) {
			sqlite3_finalize(st);
			return false;
		}
		if (!tail || tail == s)
			break;
		s = tail;
	}
	return true;
}

/* The cell of column c; 0 or -ENOMEM (a blob's hex form). */
static int value_of(sqlite3_stmt *st, int c, struct user_value *v, char **blob_hex)
{
	memset(v, 0, sizeof(*v));
	switch (sqlite3_column_type(st, c)) {
	case SQLITE_INTEGER:
		v->type = USER_INT;
		v->i = sqlite3_column_int64(st, c);
		v->text = (const char *)sqlite3_column_text(st, c);
		break;
	case SQLITE_FLOAT:
		v->type = USER_REAL;
		v->d = sqlite3_column_double(st, c);
		v->text = (const char *)sqlite3_column_text(st, c);
		break;
	case SQLITE_TEXT:
		v->type = USER_TEXT;
		v->text = (const char *)sqlite3_column_text(st, c);
		break;
	case SQLITE_BLOB: {
		const unsigned char *b = sqlite3_column_blob(st, c);
		int n = sqlite3_column_bytes(st, c);
		char *hex = malloc((size_t)n * 2 + 4);

		v->type = USER_BLOB;
		if (hex) {
			char *p = hex;

			*p++ = 'x';
			*p++ = '\'';
			for (int i = 0; i < n; i++)
				p += sprintf(p, "%02x", b[i]);
			*p++ = '\'';
			*p = '\0';
		}
		*blob_hex = hex;
		v->text = hex;
		if (!hex)
			return -ENOMEM;
		break;
	}
	default:
		v->type = USER_NULL;
		v->text = NULL;
		break;
	}
	return 0;
}

static int run_stmt(sqlite3 *conn, sqlite3_stmt *st, long limit, const struct user_cbs *cbs,
		    void *ctx)
{
	int ncol = sqlite3_column_count(st);
	const char **names = calloc((size_t)ncol + 1, sizeof(*names));
	struct user_value *vals = calloc((size_t)ncol + 1, sizeof(*vals));
	char **blobs = calloc((size_t)ncol + 1, sizeof(*blobs));
	long rows = 0;
	int rc = SQLITE_DONE, ret = 0;

	if (!names || !vals || !blobs) {
		ret = -ENOMEM;
		goto out;
	}
	for (int c = 0; c < ncol; c++)
		names[c] = sqlite3_column_name(st, c);
	if (cbs->columns) {
		ret = cbs->columns(ncol, names, ctx);
		if (ret)
			goto out;
	}
	while ((limit <= 0 || rows < limit) && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (int c = 0; c < ncol && !ret; c++)
			ret = value_of(st, c, &vals[c], &blobs[c]);
		if (!ret)
			ret = cbs->row ? cbs->row(ncol, vals, ctx) : 0;
		for (int c = 0; c < ncol; c++) {
			free(blobs[c]);
			blobs[c] = NULL;
		}
		if (ret)
			goto out;
		rows++;
	}
	if (limit > 0 && rows >= limit)
		goto out;
	if (rc != SQLITE_DONE) {
		pr_err("query failed: %s", sqlite3_errmsg(conn));
		/* the reader's limits (util/db/db.h): the file's matter, exit 6 */
		if (rc == SQLITE_INTERRUPT || rc == SQLITE_NOMEM || rc == SQLITE_TOOBIG)
			ret = -RSPROF_EDB;
		else
			ret = -EINVAL;
	}
out:
	free(names);
	free(vals);
	free(blobs);
	return ret;
}

int db_user__run(struct db *db, const char *sql, long limit, const struct user_cbs *cbs,
		 void *ctx)
{
	sqlite3 *conn = db__sqlite(db);
	struct auth_ctx auth = { 0 };
	sqlite3_stmt *st = NULL;
	const char *tail = NULL;
	char *errmsg = NULL;
	int rc, ret;

	if (!conn)
		return -RSPROF_EDB;
	/* A second lock on top of SQLITE_OPEN_READONLY (db__open). */
	rc = sqlite3_exec(conn, "PRAGMA query_only = 1", NULL, NULL, &errmsg);
	if (rc != SQLITE_OK) {
		pr_err("cannot make the connection read-only: %s",
		       errmsg ? errmsg : sqlite3_errstr(rc));
		sqlite3_free(errmsg);
		return -RSPROF_EDB;
	}

	/* the user's own SQL may use views (off for the other readers, util/db/open.c) */
	sqlite3_db_config(conn, SQLITE_DBCONFIG_ENABLE_VIEW, 1, (int *)NULL);
	sqlite3_set_authorizer(conn, authorize, &auth);
	rc = sqlite3_prepare_v2(conn, sql, -1, &st, &tail);
	sqlite3_set_authorizer(conn, NULL, NULL);

	if (auth.denied) {
		pr_err("refused: %s is not allowed, profiles are opened read-only", auth.what);
		pr_hint("query only reads; to change a profile, copy it and use the sqlite3 shell");
		ret = -EROFS;
		goto out;
	}
	if (rc != SQLITE_OK) {
		pr_err("bad SQL: %s", sqlite3_errmsg(conn));
		ret = -EINVAL;
		goto out;
	}
	if (!st) {
		pr_err("no SQL statement given");
		pr_hint("for example: rsprof query FILE 'SELECT * FROM meta'");
		ret = -EINVAL;
		goto out;
	}
	if (!sqlite3_stmt_readonly(st)) {
		pr_err("refused: a statement that writes is not allowed, "
		       "profiles are opened read-only");
		pr_hint("query only reads; to change a profile, copy it and use the sqlite3 shell");
		ret = -EROFS;
		goto out;
	}
	if (!only_comments(conn, tail)) {
		pr_err("only one SQL statement at a time; found more after '%.*s'",
		       (int)(tail - sql), sql);
		pr_hint("run the statements one by one");
		ret = -EINVAL;
		goto out;
	}
	ret = run_stmt(conn, st, limit, cbs, ctx);
out:
	sqlite3_finalize(st);
	return ret;
}
