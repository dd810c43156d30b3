#ifndef RSPROF_UTIL_DB_STMT_H
#define RSPROF_UTIL_DB_STMT_H

#include <stdbool.h>
#include <stdint.h>

/*
 * The statements a part of util/db/ runs again and again (the writer's
 * inserts, the totals' reads, top's refresh): named in an enum, given as a
 * table of { name, sql } indexed by it, prepared once with
 * SQLITE_PREPARE_PERSISTENT and finalized together. An error is printed
 * with the file, the statement's name and SQLite's message (db__err()),
 * and returned as -RSPROF_EDB.
 *
 *	enum { ST_STATE, ST_SAVE, ST_MAX };
 *	static const struct stmt_def defs[ST_MAX] = {
 *		[ST_STATE] = { "read state", "SELECT through FROM totals_state" },
 *		...
 *	};
 *	err = stmt_table__init(&t, db, defs, ST_MAX);
 *	err = stmt_table__run(&t, ST_STATE, 0, NULL, &through, 1, &row);
 *	stmt_table__fini(&t);
 */
struct db;
struct sqlite3_stmt;

struct stmt_def {
	const char *name;	/* what it does, for messages: "insert checkpoint" */
	const char *sql;
	bool lazy;		/* prepared at its first use (its table may come later) */
};

struct stmt_table {
	struct db *db;
	const struct stmt_def *def;
	struct sqlite3_stmt **st;
	int n;
};

/*
 * Prepares the n statements of def (all but the lazy ones, and those whose
 * sql is NULL: stmt_table__prepare()). def must outlive t. 0, -ENOMEM or
 * -RSPROF_EDB (printed); t is then still to be finalized.
 */
int stmt_table__init(struct stmt_table *t, struct db *db, const struct stmt_def *def, int n);
/* Prepares statement i from sql instead of its def's (a def that is a format). */
int stmt_table__prepare(struct stmt_table *t, int i, const char *sql);
/* Finalizes every statement. A zeroed t is fine. */
void stmt_table__fini(struct stmt_table *t);

/* Statement i, to bind and step (prepared now when lazy); NULL when it cannot be (printed). */
struct sqlite3_stmt *stmt_table__get(struct stmt_table *t, int i);
/* Statement i failed: printed with its name, reset. Returns -RSPROF_EDB. */
int stmt_table__err(struct stmt_table *t, int i);
/* Steps the bound statement i to its end (SQLITE_DONE), then resets it and clears its bindings. */
int stmt_table__step(struct stmt_table *t, int i);
/*
 * Binds args[0..n) to ?1..?n of statement i and steps it to its end; the
 * last row's first n_out columns go to out, *got_row (NULL: not wanted)
 * says whether there was one.
 */
int stmt_table__run(struct stmt_table *t, int i, int n, const int64_t *args, int64_t *out,
		    int n_out, bool *got_row);

#endif
