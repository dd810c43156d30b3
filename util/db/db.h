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
/*
 * What the file's schema has, read once when it is opened or created (and
 * again by db__schema_changed()): the tables and columns that came with a
 * later version, or with a later writer of version 3. Readers ask
 * db__has() rather than trying a statement and falling back when it fails.
 */
enum db_feature {
	/* version 2: checkpoints' totals (cpu_total, heap_*_bytes, ...), symbols.module
	 * and mangled, symbol_frames, heap_events' counts and stack_id, stacks,
	 * stack_frames, map */
	DB_V2		= 1u << 0,
	/* version 3: checkpoints.rss_bytes, the allocation history's tables */
	DB_V3		= 1u << 1,
	DB_PID		= 1u << 2,	/* v3: cpu_samples.pid (and heap_events.pid) */
	DB_PROCESSES	= 1u << 3,	/* v3: processes */
	DB_TEMP_COUNT	= 1u << 4,	/* v3: heap_events.temp_count */
	DB_KIND		= 1u << 5,	/* v3: heap_events.kind */
	DB_MERGED	= 1u << 6,	/* v3: checkpoints.merged (record --retain) */
	DB_TOTALS	= 1u << 7,	/* v3: totals_state (the writer's totals) */
	DB_TOTALS_TEMP	= 1u << 8,	/* v3: heap_totals.temp_count */
	DB_TOTALS_KIND	= 1u << 9,	/* v3: heap_totals.kind */
	DB_SERIES	= 1u << 10,	/* v3: series_state (compacted checkpoints) */
	DB_SERIES_SLICES = 1u << 11,	/* v3: series_state.dropped (the spread compaction) */
	DB_CPU_STACKS	= 1u << 12,	/* cpu_stacks (record -g) */
	DB_MAP_BUILD_ID	= 1u << 14,	/* map.build_id */
	DB_PROC_CGROUP	= 1u << 15,	/* v3: processes.cgroup */
	/* the writer's file: a new one, or one appended to whose totals have every
	 * column, so that the writer adds up its totals and compacts */
	DB_WRITE_TOTALS	= 1u << 13,
};

bool db__has(const struct db *db, enum db_feature f);
/* The writer changed the schema (made a table): the feature bits read again. */
void db__schema_changed(struct db *db);
/* For util/db/ only: builtins never see SQL. */
struct sqlite3 *db__sqlite(struct db *db);
/* sqlite3_errmsg() printed with the file and what failed; returns -RSPROF_EDB. */
int db__err(struct db *db, const char *what);
/*
 * Hold the connection's mutex across a pass over many rows (SQLite takes it
 * in every call otherwise: a tenth of the time of a pass over millions of
 * rows). Recursive; unlock as often as locked.
 */
void db__lock(struct db *db);
void db__unlock(struct db *db);
/* Prepare a statement run once (the repeated ones: util/db/stmt.h); on failure *st is NULL. */
struct sqlite3_stmt;
int db__prepare(struct db *db, const char *what, const char *sql, struct sqlite3_stmt **st);
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
