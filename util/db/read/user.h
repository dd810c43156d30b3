#ifndef RSPROF_UTIL_DB_READ_USER_H
#define RSPROF_UTIL_DB_READ_USER_H

#include <stddef.h>
#include <stdint.h>

/*
 * The user's own SQL on a profile (`rsprof query`): the only place
 * where SQL that rsprof did not write runs. It runs on the reader's
 * connection (opened SQLITE_OPEN_READONLY by db__open()), after
 * `PRAGMA query_only=1`, and with an authorizer that refuses every action
 * that writes or changes the connection (INSERT, UPDATE, DELETE, CREATE,
 * DROP, ALTER, ATTACH, DETACH, VACUUM, REINDEX, ANALYZE, PRAGMA assignments,
 * transactions): a write is refused while it is prepared, before anything
 * runs, so the file stays byte-identical. One statement per call; SQL after
 * the first statement (other than comments and white space) is refused.
 */
struct db;

enum user_type {
	USER_NULL,
	USER_INT,
	USER_REAL,
	USER_TEXT,
	USER_BLOB,
};

/* One cell. text is the value as text (a blob as hex: x'0a1b'), valid during the callback. */
struct user_value {
	enum user_type type;
	int64_t i;
	double d;
	const char *text;
};

struct user_cbs {
	/* Called once, before any row, with the result's column names. */
	int (*columns)(int n, const char *const *names, void *ctx);
	/* Called per row; a non-zero return stops and is returned by db_user__run(). */
	int (*row)(int n, const struct user_value *values, void *ctx);
};

/*
 * Run sql (one statement) and pass the result to cbs, at most `limit` rows
 * (0: all). Returns 0; -EINVAL for SQL that does not prepare or fails while
 * running (the message of SQLite printed); -EROFS for a statement that would
 * write (refused, nothing run); -RSPROF_EDB when the connection itself fails;
 * or a callback's non-zero value.
 */
int db_user__run(struct db *db, const char *sql, long limit, const struct user_cbs *cbs,
		 void *ctx);

#endif
