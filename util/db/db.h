#ifndef RSPROF_UTIL_DB_DB_H
#define RSPROF_UTIL_DB_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The profile file and its connection (seed 000, schema in util/db/schema.c).
 *
 * The writer's file: db__create() makes a new file (mode 0600, WAL,
 * synchronous=NORMAL, schema, meta.version) or opens one to append to,
 * adding the columns a file of an older rsprof lacks. The file and its
 * -wal and -shm are created by util/outfile.h (never through a link, never
 * over an existing file); the writer holds an flock() on the file for as
 * long as it is open, so a second writer (--append) is refused, and
 * db__verify() notices when the file was deleted or replaced meanwhile.
 * What is written into it is util/db/write/'s (writer.h).
 *
 * Reader: db__open() opens read-only and refuses (-RSPROF_EDB, with the
 * reason printed) a file that is missing, not a regular file (a FIFO does
 * not block), not SQLite, not an rsprof profile (its tables must be tables,
 * not views), damaged, or of a newer meta.version. The connection is set up
 * for an untrusted file: defensive mode, trusted_schema off, no views or
 * triggers, values of at most DB_MAX_VALUE bytes, SQLite's memory bounded
 * (DB_MAX_MEMORY) and a time budget per snapshot (RSPROF_TIME_LIMIT,
 * default DB_TIME_LIMIT_MS) after which statements fail. Nothing a reader
 * does changes the file. What readers ask of it is util/db/read/'s.
 *
 * Every error is printed with the statement's name and sqlite3_errmsg() and
 * returned as -RSPROF_EDB (or -errno for file-system errors).
 */
/* Limits of a reader (see above); DB_MAX_ROWS: rows of one table a reader keeps in memory. */
#define DB_TIME_LIMIT_MS	60000
#define DB_MAX_VALUE		(16 * 1024 * 1024)
#define DB_MAX_MEMORY		(1024LL * 1024 * 1024)
#define DB_MAX_ROWS		(16 * 1024 * 1024)

struct db;
struct sqlite3;

/* -EEXIST when path exists and !append; append continues an existing profile. */
int db__create(const char *path, bool append, struct db **out);
int db__open(const char *path, struct db **out);
/* Closes the connection; the result of sqlite3_close() is returned. NULL ok. */
int db__close(struct db *db);

/*
 * The writer's file, on a failed start: close and remove the new profile
 * with its -wal and -shm (what SQLite could not fold back into a full disk
 * too); an appended profile is only closed. NULL ok.
 */
int db__discard(struct db *db);

/*
 * The writer's file: is it still the one created (not deleted, not
 * replaced)? 0, or -RSPROF_EDB with the loss printed (once). Readers: 0.
 */
int db__verify(struct db *db);
/* The writer's file was found deleted or replaced by db__verify(). */
bool db__gone(const struct db *db);

/* A reader found more than DB_MAX_ROWS rows of `what`: printed, -RSPROF_EDB. */
int db__too_many_rows(struct db *db, const char *what);

/* The file name given at open/create. */
const char *db__path(const struct db *db);
/* meta.version of the file (RSPROF_SCHEMA_VERSION for a file being written). */
int db__version(const struct db *db);
/* Does the file's table have that column? (v3 files differ in what they got.) */
bool db__has_column(struct db *db, const char *table, const char *column);
/* For util/db/ only: builtins never see SQL. */
struct sqlite3 *db__sqlite(struct db *db);
/* sqlite3_errmsg() printed with the file and what failed; returns -RSPROF_EDB. */
int db__err(struct db *db, const char *what);
/* Run SQL without results (pragmas, schema, transaction control). 0 or -RSPROF_EDB, printed. */
int db__exec(struct db *db, const char *what, const char *sql);

/* *value is malloc'd (caller frees) or NULL when the key is absent; returns 0 or -RSPROF_EDB. */
int db__meta_get(struct db *db, const char *key, char **value);

/*
 * Reader: hold one snapshot across several queries (a read transaction), so
 * a header and its tables agree while a recorder keeps writing. 0 or
 * -RSPROF_EDB; end is a no-op without a begin.
 */
int db__snapshot_begin(struct db *db);
int db__snapshot_end(struct db *db);

/* Sizes in bytes of the file and of its -wal (0 when there is none). 0 or -errno. */
int db__file_size(const struct db *db, uint64_t *size, uint64_t *wal_size);

/* PRAGMA integrity_check: 0 when "ok", else -RSPROF_EDB with the findings printed. */
int db__check(struct db *db);

#endif
