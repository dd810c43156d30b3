#ifndef RSPROF_UTIL_DB_WRITE_ROWS_VTAB_H
#define RSPROF_UTIL_DB_WRITE_ROWS_VTAB_H

#include <stddef.h>
#include <stdint.h>

/*
 * A checkpoint's rows handed to SQLite as a table, so that the writer
 * inserts them with one statement run instead of one per row:
 *
 *   INSERT INTO cpu_samples (checkpoint_id, addr, count, pid)
 *     SELECT ?1, c0, c1, c2 FROM rsprof_rows(?2)
 *
 * with ?2 bound by rows_vtab__bind() to the caller's rows (valid until the
 * statement is reset). One run keeps the table's and the indexes' cursors
 * open across the rows: no statement set-up, binding and reset per row,
 * and the appends to the table and its checkpoint index do not seek from
 * the root each time (SQLite's own shortcut for an insert past the last
 * entry, which needs the cursor of the insert before). rsprof_rows is an
 * eponymous virtual table of the writer's connection only; its columns
 * c0..c9 are integers or NULL, in the order the rows are given.
 */
struct sqlite3;
struct sqlite3_stmt;

#define ROWS_VTAB_COLS	10

struct rows_vtab_row {
	int64_t v[ROWS_VTAB_COLS];
	uint16_t null;		/* bit i: column ci is NULL */
};

struct rows_vtab {
	const struct rows_vtab_row *row;
	size_t n;
};

/* Register rsprof_rows on the connection. 0 or an SQLite error code. */
int rows_vtab__register(struct sqlite3 *sq);

/* Bind rows to parameter i of st (rows must outlive the run). 0 or an SQLite error code. */
int rows_vtab__bind(struct sqlite3_stmt *st, int i, const struct rows_vtab *rows);

#endif
