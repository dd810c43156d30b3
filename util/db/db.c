/*
 * The profile file: writer and reader connections (seed 000 §7.4, §7.6, §7.8).
 */
#include "util/db/db.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/db/fdopen.h"
#include "util/db/schema.h"
#include "util/db/write/retain.h"
#include "util/db/write/rows-vtab.h"
#include "util/db/write/series.h"
#include "util/db/write/totals.h"
#include "util/db/wal-buffer.h"
#include "util/db/wal-checkpointer.h"
#include "util/duration.h"
#include "util/error.h"
#include "util/outfile.h"
#include "util/symbols/symbol.h"

/* The writer's statements, prepared once (SQLITE_PREPARE_PERSISTENT), seed 000 §7.4.2. */
enum db_stmt {
	ST_CHECKPOINT,
	ST_CPU,
	ST_HEAP,
	ST_SYMBOL,
	ST_FRAME,
	ST_STACK,
	ST_STACK_FRAME,
	ST_META_SET,
	ST_MAP_DELETE,
	ST_MAP_INSERT,
	ST_PROCESS,
	ST_BEGIN,
	ST_COMMIT,
	ST_ROLLBACK,
	ST_MAX,
};

static const struct {
	const char *name;
	const char *sql;
} db_stmts[ST_MAX] = {
	[ST_CHECKPOINT] = { "insert checkpoint",
		"INSERT INTO checkpoints (timestamp_ms, lost_samples, heap_dropped, cpu_total,"
		" heap_alloc_bytes, heap_free_bytes, heap_alloc_count, heap_free_count,"
		" heap_live_bytes, rss_bytes, rss_anon_bytes)"
		" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)" },
	/* a checkpoint's rows in one run each (util/db/rows-vtab.h) */
	[ST_CPU] = { "insert cpu samples",
		"INSERT OR FAIL INTO cpu_samples (checkpoint_id, addr, count, pid)"
		" SELECT ?1, c0, c1, c2 FROM rsprof_rows(?2)" },
	[ST_HEAP] = { "insert heap events",
		"INSERT OR FAIL INTO heap_events (checkpoint_id, addr, alloc_bytes, free_bytes,"
		" alloc_count, free_count, stack_id, pid, temp_count, kind)"
		" SELECT ?1, c0, c1, c2, c3, c4, c5, c6, c7, c8 FROM rsprof_rows(?2)" },
	[ST_SYMBOL] = { "insert symbol",
		"INSERT OR IGNORE INTO symbols (addr, file, line, function, module, mangled)"
		" VALUES (?, ?, ?, ?, ?, ?)" },
	[ST_FRAME] = { "insert symbol frame",
		"INSERT OR IGNORE INTO symbol_frames (addr, depth, file, line, function)"
		" VALUES (?, ?, ?, ?, ?)" },
	[ST_STACK] = { "insert stack",
		"INSERT OR IGNORE INTO stacks (id, hash, depth) VALUES (?, ?, ?)" },
	[ST_STACK_FRAME] = { "insert stack frame",
		"INSERT OR IGNORE INTO stack_frames (stack_id, pos, addr) VALUES (?, ?, ?)" },
	[ST_META_SET] = { "set meta",
		"INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)" },
	[ST_MAP_DELETE] = { "delete maps", "DELETE FROM map WHERE pid = ?" },
	[ST_MAP_INSERT] = { "insert map",
		"INSERT INTO map (pid, addr_begin, addr_end, perm, offset, path)"
		" VALUES (?, ?, ?, ?, ?, ?)" },
	[ST_PROCESS] = { "insert process",
		"INSERT OR REPLACE INTO processes (pid, ppid, comm, exe, start_ms, end_ms, samples)"
		" VALUES (?, ?, ?, ?, ?, ?, ?)" },
	[ST_BEGIN] = { "begin", "BEGIN IMMEDIATE" },
	[ST_COMMIT] = { "commit", "COMMIT" },
	[ST_ROLLBACK] = { "rollback", "ROLLBACK" },
};

struct row_order;

struct db {
	sqlite3 *sq;
	char *path;
	bool writer;
	int version;		/* meta.version of the file */
	sqlite3_stmt *st[ST_MAX];
	struct totals_writer *totals;	/* NULL: a file without totals (appended to) */
	struct retain *retain;		/* record --retain; NULL: keep everything */
	struct series_writer *series;	/* compaction; NULL: every checkpoint kept whole */
	struct wal_checkpointer *walck;	/* NULL: the writer checkpoints the WAL itself */
	int64_t retain_through;		/* the totals' through when it last folded */
	struct row_order *order;	/* a checkpoint's rows in address order */
	size_t cap_order;
	struct rows_vtab_row *rows;	/* the same, as ST_CPU/ST_HEAP read them */
	size_t cap_rows;
	/*
	 * The reader's own fd of the file (header check), kept open until
	 * db__close(): closing any fd of a file drops every POSIX lock the
	 * process holds on it, also those of a writer connection in the same
	 * process (`top` with a target). Another process would then think it
	 * is the last connection, checkpoint and delete the live WAL, and the
	 * writer's later checkpoints would be lost.
	 */
	int check_fd;
	/*
	 * The writer's own fd of the file: flock()ed for the whole recording
	 * (a second writer is refused; flock locks are apart from SQLite's
	 * POSIX locks), and compared with the path to notice that the file was
	 * deleted or replaced. dev/ino: the file created or opened.
	 */
	int lock_fd;
	dev_t dev;
	ino_t ino;
	bool gone;		/* deleted or replaced: reported once */
	bool appending;		/* --append: the file was there before */
	/* companions this writer created, removed again when the create fails */
	bool made_wal, made_shm;
	/* reader: the time budget of the progress handler */
	uint64_t limit_ms;	/* 0: none */
	uint64_t deadline_ns;
	bool timed_out;
};

static int db_err(struct db *db, const char *what)
{
	pr_err("%s: %s: %s", db->path, what, sqlite3_errmsg(db->sq));
	return -RSPROF_EDB;
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

bool db__has_column(struct db *db, const char *table, const char *column)
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

static int db_begin(struct db *db);
static int db_commit(struct db *db);
static void db_rollback(struct db *db);

/*
 * The end of a recording: the compaction spread over the checkpoints
 * (util/db/series.h) finished, what has aged compacted whole, in a
 * transaction of its own; the file stays as it is when it fails.
 */
static void db_finish(struct db *db)
{
	int err;

	if (!db->writer || !db->series || db->gone || !db->sq)
		return;
	err = db_begin(db);
	if (!err)
		err = series_writer__finish(db->series);
	if (!err)
		err = db_commit(db);
	if (err) {
		db_rollback(db);
		pr_debug(1, "%s: the compaction was left as it was", db->path);
	}
}

int db__close(struct db *db)
{
	int rc = SQLITE_OK;

	if (!db)
		return 0;
	db_finish(db);
	for (int i = 0; i < ST_MAX; i++)
		sqlite3_finalize(db->st[i]);
	retain__delete(db->retain);
	series_writer__delete(db->series);
	totals_writer__delete(db->totals);
	wal_checkpointer__stop(db->walck);	/* before the writer's close checkpoints */
	if (db->sq) {
		rc = sqlite3_close(db->sq);
		if (rc != SQLITE_OK)
			pr_err("%s: close: %s", db->path, sqlite3_errstr(rc));
	}
	if (db->check_fd >= 0)
		close(db->check_fd);
	if (db->lock_fd >= 0)
		close(db->lock_fd);	/* after sqlite3_close(): it drops the flock */
	free(db->order);
	free(db->rows);
	free(db->path);
	free(db);
	return rc == SQLITE_OK ? 0 : -RSPROF_EDB;
}

static struct db *db_alloc(const char *path)
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

/* Run SQL without results (pragmas, schema, transaction control). */
static int db_exec(struct db *db, const char *what, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(db->sq, sql, NULL, NULL, &msg) != SQLITE_OK) {
		pr_err("%s: %s: %s", db->path, what, msg ? msg : sqlite3_errmsg(db->sq));
		sqlite3_free(msg);
		return -RSPROF_EDB;
	}
	return 0;
}

/*
 * A damaged file that SQLite still opens: the header's page count (valid
 * when bytes 92..95 match the change counter at 24..27) says how long the
 * file must be. Only checked when there is no WAL to complete it.
 */
static int db_check_length(const char *path, int fd, off_t size)
{
	unsigned char h[100];
	char wal[4096];
	struct stat st;
	uint64_t page_size, pages;

	if (size == 0)
		return 0;
	if (pread(fd, h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    memcmp(h, "SQLite format 3", 16)) {
		pr_err("cannot read '%s': file is not a database", path);
		pr_hint("give the path of a profile written by 'rsprof record'");
		return -RSPROF_EDB;
	}
	snprintf(wal, sizeof(wal), "%s-wal", path);
	if (!stat(wal, &st) && st.st_size > 0)
		return 0;
	if (memcmp(h + 24, h + 92, 4))
		return 0;
	page_size = (h[16] << 8) | h[17];
	if (page_size == 1)
		page_size = 65536;
	pages = ((uint64_t)h[28] << 24) | (h[29] << 16) | (h[30] << 8) | h[31];
	if (pages && (uint64_t)size < pages * page_size) {
		pr_err("cannot read '%s': file is truncated (%lld of %llu bytes)", path,
		       (long long)size, (unsigned long long)(pages * page_size));
		pr_hint("the file is damaged; record the profile again");
		return -RSPROF_EDB;
	}
	return 0;
}

/* Read and check meta.version: an rsprof profile this binary can read. */
static int db_check_version(struct db *db)
{
	sqlite3_stmt *st = NULL;
	const char *v;
	char *end;
	long version;
	int rc;

	rc = sqlite3_prepare_v2(db->sq, "SELECT value FROM meta WHERE key = 'version'", -1,
				&st, NULL);
	if (rc != SQLITE_OK) {
		int ext = sqlite3_errcode(db->sq);

		if (ext == SQLITE_ERROR) {
			pr_err("'%s' is not an rsprof profile (no meta table)", db->path);
			pr_hint("give the path of a profile written by 'rsprof record'");
		} else {
			pr_err("cannot read '%s': %s", db->path, sqlite3_errmsg(db->sq));
			pr_hint("the file is not a profile or is damaged; "
				"'rsprof info --check' tells more");
		}
		return -RSPROF_EDB;
	}
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE) {
		pr_err("'%s' is not an rsprof profile (no meta.version)", db->path);
		pr_hint("give the path of a profile written by 'rsprof record'");
		sqlite3_finalize(st);
		return -RSPROF_EDB;
	}
	if (rc != SQLITE_ROW) {
		pr_err("cannot read '%s': %s", db->path, sqlite3_errmsg(db->sq));
		sqlite3_finalize(st);
		return -RSPROF_EDB;
	}
	v = (const char *)sqlite3_column_text(st, 0);
	errno = 0;
	version = v ? strtol(v, &end, 10) : 0;
	if (!v || !*v || *end || errno || version < 1) {
		pr_err("'%s' is not an rsprof profile (meta.version is '%s')", db->path,
		       v ? v : "");
		sqlite3_finalize(st);
		return -RSPROF_EDB;
	}
	sqlite3_finalize(st);
	if (version > RSPROF_SCHEMA_VERSION) {
		pr_err("'%s': profile version %ld is newer than this rsprof (%d); upgrade rsprof",
		       db->path, version, RSPROF_SCHEMA_VERSION);
		pr_hint("this rsprof is %s; the file was written by a newer one", RSPROF_VERSION);
		return -RSPROF_EDB;
	}
	db->version = (int)version;
	return 0;
}

/* The path as a file: URI asking for an immutable read (no locks, no -wal/-shm). */
static char *db_uri_immutable(const char *path)
{
	char *uri = malloc(3 * strlen(path) + 32);
	size_t n;

	if (!uri)
		return NULL;
	n = sprintf(uri, "file:");
	for (const char *p = path; *p; p++) {
		if (*p == '%' || *p == '?' || *p == '#')
			n += sprintf(uri + n, "%%%02X", (unsigned char)*p);
		else
			uri[n++] = *p;
	}
	strcpy(uri + n, "?immutable=1");
	return uri;
}

/*
 * The budget is CPU time: what a hostile file can make SQLite burn. Time
 * spent waiting (a reader of `query | less`, a slow disk) does not count.
 */
static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * The reader's time budget (SQLite's progress handler, every few thousand
 * virtual machine steps): a hostile or absurd file cannot keep a reader
 * busy for ever. The message is printed once; SQLite then fails the
 * statement with SQLITE_INTERRUPT and the caller reports it (exit 6).
 */
static int db_progress(void *data)
{
	struct db *db = data;
	char lim[32];

	if (!db->deadline_ns || now_ns() < db->deadline_ns)
		return 0;
	if (!db->timed_out) {
		db->timed_out = true;
		pr_err("'%s': reading the profile took more than %s of CPU time, stopped",
		       db->path, duration__format(db->limit_ms, lim, sizeof(lim)));
		pr_hint("the file may be damaged or made to be slow; RSPROF_TIME_LIMIT=DUR "
			"allows more time (0: no limit)");
	}
	return 1;
}

static void db_budget_start(struct db *db)
{
	db->timed_out = false;
	db->deadline_ns = db->limit_ms ? now_ns() + db->limit_ms * 1000000ULL : 0;
}

/*
 * The budget starts again with every statement run outside a transaction
 * (a refresh of top, query's statement), and once for a whole snapshot
 * (BEGIN starts it: a report's queries share one budget).
 */
static int db_trace(unsigned int what, void *data, void *p, void *x)
{
	struct db *db = data;

	if (what == SQLITE_TRACE_STMT && sqlite3_get_autocommit(db->sq))
		db_budget_start(db);
	return 0;
}

/*
 * A reader connection set up for an untrusted file (SQLite's "defense
 * against dark arts"): defensive mode, schema code not trusted, no views
 * or triggers run (the readers only read tables; `query` turns views back
 * on for the user's own SQL), no ATTACH, a bound on the length of any
 * value, and the progress handler above.
 */
static void db_harden(struct db *db)
{
	sqlite3 *sq = db->sq;

	sqlite3_db_config(sq, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
	sqlite3_db_config(sq, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)NULL);
	sqlite3_db_config(sq, SQLITE_DBCONFIG_ENABLE_VIEW, 0, (int *)NULL);
	sqlite3_db_config(sq, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, (int *)NULL);
	sqlite3_db_config(sq, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, (int *)NULL);
	sqlite3_limit(sq, SQLITE_LIMIT_LENGTH, DB_MAX_VALUE);
	sqlite3_limit(sq, SQLITE_LIMIT_ATTACHED, 0);
	sqlite3_progress_handler(sq, 4000, db_progress, db);
	sqlite3_trace_v2(sq, SQLITE_TRACE_STMT, db_trace, db);
}

static int db_sqlite_open(struct db *db, bool immutable)
{
	char *uri = immutable ? db_uri_immutable(db->path) : NULL;
	int rc;

	if (immutable && !uri)
		return -ENOMEM;
	/* the file checked is the file read (util/db/fdopen.h) */
	if (db->check_fd >= 0)
		fdopen__arm(db->check_fd, db->path);
	rc = sqlite3_open_v2(immutable ? uri : db->path, &db->sq,
			     SQLITE_OPEN_READONLY | (immutable ? SQLITE_OPEN_URI : 0), NULL);
	fdopen__disarm();
	free(uri);
	if (rc != SQLITE_OK) {
		pr_err("cannot open '%s': %s", db->path,
		       db->sq ? sqlite3_errmsg(db->sq) : "out of memory");
		return -RSPROF_EDB;
	}
	db_harden(db);
	/* a live recorder holds the write lock for a moment per checkpoint */
	sqlite3_busy_timeout(db->sq, 2000);
	return 0;
}

static void db_sqlite_close(struct db *db)
{
	sqlite3_close(db->sq);
	db->sq = NULL;
}

/* The primary result code of the first read of the schema. */
static int db_probe(struct db *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db->sq, sql, -1, &st, NULL);

	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc & 0xff;
}

/*
 * A reader of a WAL database makes -shm (and -wal) files next to it and
 * leaves them there, and cannot read at all where it may not create them (a
 * profile attached to a bug report, another user's directory). A finished
 * profile (meta.end_time, no WAL with data: no writer) cannot change, so it
 * is read as immutable. A file being written, or one whose recorder died,
 * gets a normal read-only connection, falling back to immutable when the
 * directory is read-only and no WAL holds data.
 */
static int db_open_reader(struct db *db)
{
	char wal[4096];
	struct stat st;
	bool has_wal;
	int err, rc;

	snprintf(wal, sizeof(wal), "%s-wal", db->path);
	has_wal = !lstat(wal, &st) && S_ISREG(st.st_mode) && st.st_size > 0;
	if (!has_wal) {
		err = db_sqlite_open(db, true);
		if (err)
			return err;
		if (db_probe(db, "SELECT 1 FROM meta WHERE key = 'end_time'") == SQLITE_ROW) {
			pr_debug(2, "%s: finished profile, read as immutable", db->path);
			return 0;
		}
		db_sqlite_close(db);
	}
	err = db_sqlite_open(db, false);
	if (err)
		return err;
	rc = db_probe(db, "SELECT COUNT(*) FROM sqlite_master");
	if ((rc == SQLITE_READONLY || rc == SQLITE_CANTOPEN) && !has_wal) {
		pr_debug(1, "%s: no -shm can be made here, read as immutable", db->path);
		db_sqlite_close(db);
		return db_sqlite_open(db, true);
	}
	return 0;
}

/*
 * -wal and -shm, when there, must be regular files: SQLite opens them by
 * name, and a FIFO there would block a reader in open() for ever.
 */
static int db_check_companions(const char *path)
{
	static const char *const sfx[] = { "-wal", "-shm" };
	char name[4096];
	struct stat st;

	for (size_t i = 0; i < 2; i++) {
		snprintf(name, sizeof(name), "%s%s", path, sfx[i]);
		if (lstat(name, &st) || S_ISREG(st.st_mode))
			continue;
		pr_err("cannot open '%s': '%s' is not a regular file", path, name);
		pr_hint("remove it; a profile's %s is a file SQLite makes", sfx[i]);
		return -RSPROF_EDB;
	}
	return 0;
}

/*
 * The tables the readers read must be tables: a view (a recursive one
 * never ends) or a virtual table of the same name is refused up front.
 * Views are off on reader connections anyway (db_harden()); this says why.
 * An index or trigger of such a name does not shadow the table.
 */
static int db_check_tables(struct db *db)
{
	static const char *const names[] = {
		"meta", "checkpoints", "symbols", "cpu_samples", "heap_events",
		"symbol_frames", "stacks", "stack_frames", "cpu_stacks", "map",
		"alloc_slices", "alloc_chunks", "alloc_events", "cpu_totals", "heap_totals",
		"totals_state",
	};
	sqlite3_stmt *st = NULL;
	int rc, err = 0;

	rc = sqlite3_prepare_v2(db->sq, "SELECT type, sql FROM sqlite_master WHERE name = ?"
				" COLLATE NOCASE", -1, &st, NULL);
	if (rc != SQLITE_OK) {
		pr_err("cannot read '%s': %s", db->path, sqlite3_errmsg(db->sq));
		pr_hint("the file is not a profile or is damaged; "
			"'rsprof info --check' tells more");
		return -RSPROF_EDB;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && !err; i++) {
		const char *type, *sql;

		sqlite3_bind_text(st, 1, names[i], -1, SQLITE_STATIC);
		while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW) {
			type = (const char *)sqlite3_column_text(st, 0);
			sql = (const char *)sqlite3_column_text(st, 1);
			if (type && !strcmp(type, "view")) {
				pr_err("'%s' is not an rsprof profile: its '%s' is a view, not a "
				       "table", db->path, names[i]);
				err = -RSPROF_EDB;
			} else if (type && !strcmp(type, "table") &&
				   (!sql || strncasecmp(sql, "CREATE TABLE", 12))) {
				pr_err("'%s' is not an rsprof profile: its '%s' is not a plain "
				       "table", db->path, names[i]);
				err = -RSPROF_EDB;
			}
		}
		if (!err && rc != SQLITE_DONE) {
			pr_err("cannot read '%s': %s", db->path, sqlite3_errmsg(db->sq));
			err = -RSPROF_EDB;
		}
		sqlite3_reset(st);
	}
	if (err)
		pr_hint("give the path of a profile written by 'rsprof record'");
	sqlite3_finalize(st);
	return err;
}

/* RSPROF_TIME_LIMIT, or the default. 0 or -RSPROF_EUSAGE (printed). */
static int db_time_limit(uint64_t *ms)
{
	const char *env = getenv("RSPROF_TIME_LIMIT");

	*ms = DB_TIME_LIMIT_MS;
	if (!env || !*env)
		return 0;
	if (duration__parse(env, ms)) {
		pr_err("RSPROF_TIME_LIMIT: '%s' is not a duration", env);
		pr_hint("use e.g. 30s, 5m, 1h30m, or 0 for no limit");
		return -RSPROF_EUSAGE;
	}
	return 0;
}

int db__open(const char *path, struct db **out)
{
	struct db *db;
	struct stat st;
	uint64_t limit;
	int fd, err;

	*out = NULL;
	err = db_time_limit(&limit);
	if (err)
		return err;
	/* O_NONBLOCK: a FIFO given as the profile must not block open() */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0 || fstat(fd, &st)) {
		err = errno;
		pr_err("cannot open '%s': %s", path, strerror(err));
		if (err == ENOENT)
			pr_hint("check the path, or run 'rsprof record' to make a profile");
		if (fd >= 0)
			close(fd);
		return -RSPROF_EDB;
	}
	if (!S_ISREG(st.st_mode)) {
		pr_err("cannot open '%s': not a regular file", path);
		close(fd);
		return -RSPROF_EDB;
	}
	if (st.st_size == 0) {
		pr_err("'%s' is not an rsprof profile (empty file)", path);
		close(fd);
		return -RSPROF_EDB;
	}
	err = db_check_length(path, fd, st.st_size);
	if (!err)
		err = db_check_companions(path);
	if (err) {
		close(fd);
		return err;
	}
	/* SQLite's own memory, whatever the file asks for (process-wide) */
	sqlite3_hard_heap_limit64(DB_MAX_MEMORY);

	db = db_alloc(path);
	if (!db) {
		close(fd);
		return -ENOMEM;
	}
	db->check_fd = fd;	/* closed by db__close(), after sqlite3_close() */
	db->limit_ms = limit;
	db_budget_start(db);
	err = db_open_reader(db);
	if (!err)
		err = db_check_tables(db);
	if (!err)
		err = db_check_version(db);
	if (err) {
		db__close(db);
		return err;
	}
	*out = db;
	return 0;
}

int db__too_many_rows(struct db *db, const char *what)
{
	pr_err("'%s': more than %d rows of %s, more than rsprof reads", db->path, DB_MAX_ROWS,
	       what);
	pr_hint("the file is damaged or not a real profile");
	return -RSPROF_EDB;
}

static int db_prepare_writer(struct db *db)
{
	for (int i = 0; i < ST_MAX; i++) {
		if (sqlite3_prepare_v3(db->sq, db_stmts[i].sql, -1, SQLITE_PREPARE_PERSISTENT,
				       &db->st[i], NULL) != SQLITE_OK)
			return db_err(db, db_stmts[i].name);
	}
	return 0;
}

/* Step a bound writer statement to SQLITE_DONE and reset it. */
static int db_step(struct db *db, enum db_stmt i)
{
	sqlite3_stmt *st = db->st[i];
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc != SQLITE_DONE)
		return db_err(db, db_stmts[i].name);
	return 0;
}

static int db_begin(struct db *db)
{
	return db_step(db, ST_BEGIN);
}

static int db_commit(struct db *db)
{
	return db_step(db, ST_COMMIT);
}

static void db_rollback(struct db *db)
{
	if (!sqlite3_get_autocommit(db->sq))
		db_step(db, ST_ROLLBACK);
}

/* "PATH-wal" or "PATH-shm" into buf. */
static const char *companion(const struct db *db, const char *sfx, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s", db->path, sfx);
	return buf;
}

/*
 * The first image of a new profile, made in memory: the schema and
 * meta.version, with the header's read and write versions (bytes 18, 19)
 * at 2, WAL. Written through the writer's own fd, it means SQLite never
 * creates the file by name, never needs a -journal, and, the file being
 * non-empty, opens the -wal made beforehand instead of deleting and making
 * it again (a moment when another user could plant one).
 */
static int db_first_image(struct db *db)
{
	sqlite3 *mem = NULL;
	unsigned char *img = NULL;
	sqlite3_int64 size = 0;
	char *sql = NULL;
	int err = -RSPROF_EDB;

	if (sqlite3_open_v2(":memory:", &mem, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
	    SQLITE_OK)
		goto out;
	if (asprintf(&sql, "PRAGMA page_size = 1024; BEGIN; %s INSERT INTO meta (key, value)"
		     " VALUES ('version', '%d'); COMMIT;", db_schema_sql,
		     RSPROF_SCHEMA_VERSION) < 0) {
		err = -ENOMEM;
		goto out;
	}
	if (sqlite3_exec(mem, sql, NULL, NULL, NULL) != SQLITE_OK)
		goto out;
	img = sqlite3_serialize(mem, "main", &size, 0);
	if (!img || size < 100)
		goto out;
	img[18] = img[19] = 2;
	for (sqlite3_int64 off = 0; off < size;) {
		ssize_t n = pwrite(db->lock_fd, img + off, (size_t)(size - off), off);

		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			pr_err("cannot write '%s': %s", db->path, strerror(-err));
			goto out;
		}
		off += n;
	}
	err = 0;
out:
	if (err == -RSPROF_EDB)
		pr_err("cannot make the schema of '%s': %s", db->path,
		       mem ? sqlite3_errmsg(mem) : "out of memory");
	sqlite3_free(img);
	free(sql);
	sqlite3_close(mem);
	return err;
}

/*
 * -wal and -shm of a new profile, made by rsprof (O_EXCL, never through a
 * link, 0600) before SQLite opens them: something already there (planted by
 * another user in a shared directory, or left over) is refused.
 */
static int db_make_companions(struct db *db)
{
	char name[4096];
	struct outfile of;
	int err;

	err = outfile__create(&of, companion(db, "-wal", name, sizeof(name)), OUTFILE_NEW);
	if (err)
		return err;
	db->made_wal = true;
	outfile__commit(&of);
	err = outfile__create(&of, companion(db, "-shm", name, sizeof(name)), OUTFILE_NEW);
	if (err)
		return err;
	db->made_shm = true;
	outfile__commit(&of);
	return 0;
}

/*
 * --append: the file and its companions must be regular files of ours (a
 * profile in a shared directory that another user could read or swap is
 * refused), and no other rsprof may be writing it (the flock).
 */
static int db_open_append(struct db *db)
{
	static const char *const sfx[] = { "-wal", "-shm" };
	char name[4096];
	struct stat st;
	int fd;

	fd = open(db->path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0 || fstat(fd, &st)) {
		int e = errno;

		pr_err("cannot open '%s' to append: %s", db->path,
		       e == ELOOP ? "it is a symbolic link" : strerror(e));
		if (fd >= 0)
			close(fd);
		return -RSPROF_EDB;
	}
	db->lock_fd = fd;
	db->dev = st.st_dev;
	db->ino = st.st_ino;
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		pr_err("cannot append to '%s': %s", db->path, !S_ISREG(st.st_mode) ?
		       "not a regular file" : "the file belongs to another user");
		return -RSPROF_EDB;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		int e = errno;

		if (e == EWOULDBLOCK) {
			pr_err("cannot append to '%s': another rsprof is recording into it",
			       db->path);
			pr_hint("wait for it to finish, or record into another file");
			return -RSPROF_EDB;
		}
		pr_err("cannot lock '%s': %s", db->path, strerror(e));
		return -RSPROF_EDB;
	}
	for (size_t i = 0; i < 2; i++) {
		companion(db, sfx[i], name, sizeof(name));
		if (lstat(name, &st)) {
			if (errno != ENOENT) {
				pr_err("cannot append to '%s': %s: %s", db->path, name,
				       strerror(errno));
				return -RSPROF_EDB;
			}
			continue;
		}
		if (!S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
			pr_err("cannot append to '%s': '%s' is %s", db->path, name,
			       !S_ISREG(st.st_mode) ? "not a regular file" :
			       "another user's file");
			pr_hint("a profile's %s is a file SQLite makes; remove the one there",
				sfx[i]);
			return -RSPROF_EDB;
		}
	}
	return 0;
}

/* A new profile: the file (O_EXCL), locked, its first image, its companions. */
static int db_create_file(struct db *db)
{
	struct outfile of;
	int err;

	err = outfile__create(&of, db->path, OUTFILE_NEW);
	if (err) {
		if (err == -EEXIST)
			pr_hint("choose another name with -o, or add to it with --append");
		return err;
	}
	db->lock_fd = of.fd;
	db->dev = of.dev;
	db->ino = of.ino;
	outfile__release(&of);
	if (flock(db->lock_fd, LOCK_EX | LOCK_NB)) {
		err = -errno;
		pr_err("cannot lock '%s': %s", db->path, strerror(errno));
		return err;
	}
	err = db_first_image(db);
	if (!err)
		err = db_make_companions(db);
	return err;
}

/* A failed create: the companions and the file it made, as long as they are the ones. */
static void db_remove_created(struct db *db, bool created)
{
	char name[4096];
	struct stat st;

	if (db->made_wal)
		unlink(companion(db, "-wal", name, sizeof(name)));
	if (db->made_shm)
		unlink(companion(db, "-shm", name, sizeof(name)));
	if (created && !lstat(db->path, &st) && st.st_dev == db->dev && st.st_ino == db->ino)
		unlink(db->path);
}

int db__create(const char *path, bool append, struct db **out)
{
	struct db *db;
	int err;

	*out = NULL;
	db = db_alloc(path);
	if (!db)
		return -ENOMEM;
	db->writer = true;
	db->version = RSPROF_SCHEMA_VERSION;
	if (!append) {
		err = db_create_file(db);
	} else {
		struct db *check = NULL;

		db->appending = true;
		err = db_open_append(db);
		/* the file must be a profile this rsprof writes, checked read-only first */
		if (!err)
			err = db__open(path, &check);
		if (!err && check->version != RSPROF_SCHEMA_VERSION) {
			pr_err("cannot append to '%s': profile version %d, this rsprof writes %d",
			       path, check->version, RSPROF_SCHEMA_VERSION);
			pr_hint("record into a new file");
			err = -RSPROF_EDB;
		}
		db__close(check);
	}
	if (err)
		goto fail;

	/*
	 * The file and its -wal/-shm exist and are ours: SQLite opens them, never
	 * a link. NOMUTEX: the writer's connection is used by one thread at a
	 * time (the recorder's; top's sampler thread between the main thread's
	 * create and close), so SQLite's lock around every call of the API
	 * (four to eleven calls a row) is not needed; the WAL thread has a
	 * connection of its own.
	 */
	if (sqlite3_open_v2(path, &db->sq, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW |
			    SQLITE_OPEN_NOMUTEX, wal_buffer__vfs()) != SQLITE_OK) {
		pr_err("cannot open '%s': %s", path,
		       db->sq ? sqlite3_errmsg(db->sq) : "out of memory");
		err = -RSPROF_EDB;
		goto fail;
	}
	sqlite3_busy_timeout(db->sq, 5000);
	sqlite3_db_config(db->sq, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
	/* seed 000 §7.4.1 */
	if (!err)
		err = db_exec(db, "set journal mode", "PRAGMA journal_mode = WAL");
	if (!err)
		err = db_exec(db, "set synchronous", "PRAGMA synchronous = NORMAL");
	/*
	 * Every checkpoint inserts into idx_cpu_addr/idx_heap_addr at one place
	 * per address, so it dirties index pages all over the file: keep them
	 * cached (8 MB; 32 MB wrote no faster: writer CPU at minute 10 of the
	 * big fixture 15.9 ms against 13.5 ms, load 1). The WAL is copied into the file after every commit
	 * by a thread of its own (util/db/wal-checkpointer.h), off the
	 * writer's path; where that thread cannot run, by SQLite's own
	 * autocheckpoint in the writer's commit (every 8,192 pages).
	 */
	if (!err)
		err = db_exec(db, "set cache size", "PRAGMA cache_size = -8192");
	if (!err)
		err = db_exec(db, "set wal checkpoint", "PRAGMA wal_autocheckpoint = 8192");
	/* a version-3 file of before heap_events.temp_count or kind (issues 14, 9):
	 * the columns, as new files have them (old rows: NULL, 0) */
	if (!err && append && !db__has_column(db, "heap_events", "temp_count"))
		err = db_exec(db, "add heap_events.temp_count",
			      "ALTER TABLE heap_events ADD COLUMN temp_count INTEGER DEFAULT NULL");
	if (!err && append && !db__has_column(db, "heap_events", "kind"))
		err = db_exec(db, "add heap_events.kind",
			      "ALTER TABLE heap_events ADD COLUMN kind INTEGER NOT NULL DEFAULT 0");
	if (!err && rows_vtab__register(db->sq) != SQLITE_OK)
		err = db_err(db, "register rsprof_rows");
	if (!err)
		err = db_prepare_writer(db);
	if (!err)
		err = db__verify(db);
	if (err)
		goto fail;
	/* the WAL folded back in a thread of its own (else wal_autocheckpoint stays) */
	/* the WAL copied into the file by a thread of its own (else by the writer) */
	if (wal_checkpointer__start(db->sq, path, 65536, &db->walck))
		pr_debug(1, "%s: the writer copies the WAL into the file itself", path);
	/*
	 * a file appended to keeps what it has: no totals when it was written
	 * without, or with totals without temp_count and kind (an early v3):
	 * its totals stay as they are, the new checkpoints are read from the
	 * event tables
	 */
	if (!append || (db_probe(db, "SELECT 1 FROM totals_state") == SQLITE_ROW &&
			db__has_column(db, "heap_totals", "kind"))) {
		err = totals_writer__new(db, &db->totals);
		/* a file of before the compacted checkpoints gets their tables, one
		 * of before the spread compaction the state of its slices */
		if (!err && append)
			err = db_exec(db, "add the series tables", db_series_sql);
		if (!err && append && !db__has_column(db, "series_state", "dropped"))
			err = db_exec(db, "add the series slices",
				      "ALTER TABLE series_state ADD COLUMN pack_addr INTEGER DEFAULT NULL;"
				      "ALTER TABLE series_state ADD COLUMN dropped INTEGER DEFAULT NULL;"
				      "ALTER TABLE series_state ADD COLUMN drop_addr INTEGER DEFAULT NULL");
		if (!err)
			err = series_writer__new(db, SERIES_AGE_MS, &db->series);
		if (err)
			goto fail;
	}
	*out = db;
	return 0;
fail:
	for (int i = 0; i < ST_MAX; i++) {
		sqlite3_finalize(db->st[i]);
		db->st[i] = NULL;
	}
	sqlite3_close(db->sq);
	db->sq = NULL;
	db_remove_created(db, !append);
	db__close(db);
	return err;
}

int db__discard(struct db *db)
{
	if (!db)
		return 0;
	if (!db->writer || db->appending)
		return db__close(db);
	for (int i = 0; i < ST_MAX; i++) {
		sqlite3_finalize(db->st[i]);
		db->st[i] = NULL;
	}
	sqlite3_close(db->sq);
	db->sq = NULL;
	/* SQLite keeps a -wal it could not fold back (a full disk): still ours */
	db_remove_created(db, true);
	return db__close(db);
}

int db__verify(struct db *db)
{
	struct stat st;
	const char *what = NULL;

	if (!db || !db->writer || db->gone)
		return db && db->gone ? -RSPROF_EDB : 0;
	if (stat(db->path, &st))
		what = errno == ENOENT ? "deleted" : "made unreachable";
	else if (st.st_dev != db->dev || st.st_ino != db->ino)
		what = "replaced by another file";
	else if (fstat(db->lock_fd, &st) || st.st_nlink == 0)
		what = "deleted";
	if (!what)
		return 0;
	db->gone = true;
	pr_err("'%s' was %s while it was being written: this recording is lost", db->path,
	       what);
	pr_hint("leave a profile in place until its recording has ended");
	return -RSPROF_EDB;
}

int db__meta_set(struct db *db, const char *key, const char *value)
{
	sqlite3_stmt *st = db->st[ST_META_SET];

	if (!db->writer) {
		pr_err("%s: set meta: the profile is open read-only", db->path);
		return -RSPROF_EDB;
	}
	if (sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_text(st, 2, value ? value : "", -1, SQLITE_STATIC) != SQLITE_OK) {
		sqlite3_reset(st);
		return db_err(db, db_stmts[ST_META_SET].name);
	}
	return db_step(db, ST_META_SET);
}

int db__meta_set_int(struct db *db, const char *key, long long value)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lld", value);
	return db__meta_set(db, key, buf);
}

int db__meta_get(struct db *db, const char *key, char **value)
{
	sqlite3_stmt *st;
	int rc;

	*value = NULL;
	if (sqlite3_prepare_v2(db->sq, "SELECT value FROM meta WHERE key = ?", -1, &st,
			       NULL) != SQLITE_OK)
		return db_err(db, "read meta");
	if (sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC) != SQLITE_OK) {
		sqlite3_finalize(st);
		return db_err(db, "read meta");
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
		return db_err(db, "read meta");
	return 0;
}

/* Bind a text that may be NULL. */
static int bind_text(sqlite3_stmt *st, int i, const char *s)
{
	return s ? sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC) : sqlite3_bind_null(st, i);
}

static int db_write_symbol(struct db *db, const struct symbol *s)
{
	static const struct frame none;
	const struct frame *f = &none;
	sqlite3_stmt *st = db->st[ST_SYMBOL];
	int err;

	/* symbol.h promises n_frames >= 1; a broken one is stored as unresolved */
	if (s->frames && s->n_frames > 0 && s->chosen >= 0 && s->chosen < s->n_frames)
		f = symbol__frame(s);

	if (sqlite3_bind_int64(st, 1, (int64_t)s->addr) || bind_text(st, 2, f->file) ||
	    (f->line > 0 ? sqlite3_bind_int(st, 3, f->line) : sqlite3_bind_null(st, 3)) ||
	    bind_text(st, 4, f->function) || bind_text(st, 5, s->module) ||
	    bind_text(st, 6, s->mangled)) {
		sqlite3_reset(st);
		return db_err(db, db_stmts[ST_SYMBOL].name);
	}
	err = db_step(db, ST_SYMBOL);
	if (err)
		return err;
	st = db->st[ST_FRAME];
	for (int d = 0; s->frames && d < s->n_frames; d++) {
		f = &s->frames[d];
		if (sqlite3_bind_int64(st, 1, (int64_t)s->addr) || sqlite3_bind_int(st, 2, d) ||
		    bind_text(st, 3, f->file) ||
		    (f->line > 0 ? sqlite3_bind_int(st, 4, f->line) : sqlite3_bind_null(st, 4)) ||
		    bind_text(st, 5, f->function)) {
			sqlite3_reset(st);
			return db_err(db, db_stmts[ST_FRAME].name);
		}
		err = db_step(db, ST_FRAME);
		if (err)
			return err;
	}
	return 0;
}

static int db_write_stack(struct db *db, const struct stack_rec *s)
{
	sqlite3_stmt *st = db->st[ST_STACK];
	int err;

	if (sqlite3_bind_int64(st, 1, s->id) || sqlite3_bind_int64(st, 2, (int64_t)s->hash) ||
	    sqlite3_bind_int(st, 3, s->depth)) {
		sqlite3_reset(st);
		return db_err(db, db_stmts[ST_STACK].name);
	}
	err = db_step(db, ST_STACK);
	if (err)
		return err;
	st = db->st[ST_STACK_FRAME];
	for (int i = 0; i < s->depth; i++) {
		if (sqlite3_bind_int64(st, 1, s->id) || sqlite3_bind_int(st, 2, i) ||
		    sqlite3_bind_int64(st, 3, (int64_t)s->addrs[i])) {
			sqlite3_reset(st);
			return db_err(db, db_stmts[ST_STACK_FRAME].name);
		}
		err = db_step(db, ST_STACK_FRAME);
		if (err)
			return err;
	}
	return 0;
}

struct row_order {
	int64_t addr;
	size_t i;
};

static int cmp_row_order(const void *pa, const void *pb)
{
	const struct row_order *a = pa, *b = pb;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return (a->i > b->i) - (a->i < b->i);
}

/*
 * The n rows of a checkpoint in address order (as the seed's addr indexes
 * hold them), into db->order: the rows of neighbouring addresses are then
 * neighbours in the table and its checkpoint index too, so that the
 * compaction's slices of addresses (util/db/series.h) dirty a few pages of
 * each checkpoint instead of every page of the block. heap: cp->heap, else
 * cp->cpu.
 */
static int db_order_rows(struct db *db, const struct checkpoint *cp, bool heap)
{
	size_t n = heap ? cp->n_heap : cp->n_cpu;

	if (n > db->cap_order) {
		struct row_order *o = realloc(db->order, n * sizeof(*o));

		if (!o)
			return -ENOMEM;
		db->order = o;
		db->cap_order = n;
	}
	for (size_t i = 0; i < n; i++)
		db->order[i] = (struct row_order){
			(int64_t)(heap ? cp->heap[i].addr : cp->cpu[i].addr), i };
	if (n)			/* qsort(NULL, 0, ...) is undefined */
		qsort(db->order, n, sizeof(*db->order), cmp_row_order);
	return 0;
}

/* Run ST_CPU or ST_HEAP over the n rows in db->rows. */
static int db_insert_rows(struct db *db, enum db_stmt i, int64_t id, size_t n)
{
	struct rows_vtab rows = { db->rows, n };
	sqlite3_stmt *st = db->st[i];

	if (!n)
		return 0;
	if (sqlite3_bind_int64(st, 1, id) || rows_vtab__bind(st, 2, &rows)) {
		sqlite3_reset(st);
		return db_err(db, db_stmts[i].name);
	}
	return db_step(db, i);
}

/* Room for n rows in db->rows. */
static int db_rows_reserve(struct db *db, size_t n)
{
	struct rows_vtab_row *r;

	if (n <= db->cap_rows)
		return 0;
	r = realloc(db->rows, n * sizeof(*r));
	if (!r)
		return -ENOMEM;
	db->rows = r;
	db->cap_rows = n;
	return 0;
}

static int db_write_rows(struct db *db, const struct checkpoint *cp, int64_t id)
{
	sqlite3_stmt *st;
	int err;

	err = db_order_rows(db, cp, false);
	if (!err)
		err = db_rows_reserve(db, cp->n_cpu > cp->n_heap ? cp->n_cpu : cp->n_heap);
	if (err)
		return err;
	for (size_t k = 0; k < cp->n_cpu; k++) {
		const struct cpu_count *c = &cp->cpu[db->order[k].i];

		db->rows[k] = (struct rows_vtab_row){
			.v = { (int64_t)c->addr, (int64_t)c->count, c->pid },
			.null = c->pid > 0 ? 0 : 1u << 2,
		};
	}
	err = db_insert_rows(db, ST_CPU, id, cp->n_cpu);
	if (!err)
		err = db_order_rows(db, cp, true);
	if (err)
		return err;
	for (size_t k = 0; k < cp->n_heap; k++) {
		const struct heap_count *h = &cp->heap[db->order[k].i];

		db->rows[k] = (struct rows_vtab_row){
			.v = { (int64_t)h->addr, h->alloc_bytes, h->free_bytes, h->alloc_count,
			       h->free_count, h->stack_id, h->pid, h->temp_count, h->kind },
			.null = (h->stack_id >= 0 ? 0 : 1u << 5) | (h->pid > 0 ? 0 : 1u << 6) |
				(h->temp_count >= 0 ? 0 : 1u << 7),
		};
	}
	err = db_insert_rows(db, ST_HEAP, id, cp->n_heap);
	if (err)
		return err;
	st = db->st[ST_PROCESS];
	for (size_t i = 0; i < cp->n_processes; i++) {
		const struct process_row *p = &cp->processes[i];

		if (sqlite3_bind_int(st, 1, p->pid) ||
		    (p->ppid > 0 ? sqlite3_bind_int(st, 2, p->ppid) : sqlite3_bind_null(st, 2)) ||
		    bind_text(st, 3, p->comm) || bind_text(st, 4, p->exe) ||
		    sqlite3_bind_int64(st, 5, (int64_t)p->start_ms) ||
		    (p->end_ms >= 0 ? sqlite3_bind_int64(st, 6, p->end_ms) :
				      sqlite3_bind_null(st, 6)) ||
		    sqlite3_bind_int64(st, 7, (int64_t)p->samples)) {
			sqlite3_reset(st);
			return db_err(db, db_stmts[ST_PROCESS].name);
		}
		err = db_step(db, ST_PROCESS);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Copy what the WAL holds into the file itself (a passive checkpoint: it
 * waits for no reader), so that the .db alone, copied or left by a
 * SIGKILL, an OOM kill or a crash, holds every finished checkpoint. A
 * reader's older snapshot can hold some pages back until the next one.
 * Only where the WAL thread (util/db/wal-checkpointer.h) could not start:
 * it does the same off the writer's path.
 */
static int db_wal_to_file(struct db *db)
{
	int rc = sqlite3_wal_checkpoint_v2(db->sq, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);

	if (rc == SQLITE_OK || rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
		return 0;
	return db_err(db, "copy the write-ahead log into the file");
}

int db__write_checkpoint(struct db *db, const struct checkpoint *cp, int64_t *id)
{
	sqlite3_stmt *st = db->st[ST_CHECKPOINT];
	int64_t cpu_total = 0, ab = 0, fb = 0, ac = 0, fc = 0;
	int64_t cid;
	int err;

	if (!db->writer) {
		pr_err("%s: write checkpoint: the profile is open read-only", db->path);
		return -RSPROF_EDB;
	}
	for (size_t i = 0; i < cp->n_cpu; i++)
		cpu_total += (int64_t)cp->cpu[i].count;
	for (size_t i = 0; i < cp->n_heap; i++) {
		ab += cp->heap[i].alloc_bytes;
		fb += cp->heap[i].free_bytes;
		ac += cp->heap[i].alloc_count;
		fc += cp->heap[i].free_count;
	}

	/* the last checkpoint in the .db first: it never lags by more than one */
	wal_checkpointer__wait(db->walck);
	err = db_begin(db);
	if (err)
		return err;
	for (size_t i = 0; i < cp->n_symbols; i++) {
		if (!cp->symbols[i])
			continue;
		err = db_write_symbol(db, cp->symbols[i]);
		if (err)
			goto fail;
	}
	for (size_t i = 0; i < cp->n_stacks; i++) {
		err = db_write_stack(db, &cp->stacks[i]);
		if (err)
			goto fail;
	}
	if (sqlite3_bind_int64(st, 1, (int64_t)cp->timestamp_ms) ||
	    sqlite3_bind_int64(st, 2, (int64_t)cp->lost_samples) ||
	    sqlite3_bind_int64(st, 3, (int64_t)cp->heap_dropped) ||
	    sqlite3_bind_int64(st, 4, cpu_total) || sqlite3_bind_int64(st, 5, ab) ||
	    sqlite3_bind_int64(st, 6, fb) || sqlite3_bind_int64(st, 7, ac) ||
	    sqlite3_bind_int64(st, 8, fc) || sqlite3_bind_int64(st, 9, cp->heap_live_bytes) ||
	    (cp->has_rss ? sqlite3_bind_int64(st, 10, cp->rss_bytes) :
			   sqlite3_bind_null(st, 10)) ||
	    (cp->has_rss ? sqlite3_bind_int64(st, 11, cp->rss_anon_bytes) :
			   sqlite3_bind_null(st, 11))) {
		sqlite3_reset(st);
		err = db_err(db, db_stmts[ST_CHECKPOINT].name);
		goto fail;
	}
	err = db_step(db, ST_CHECKPOINT);
	if (err)
		goto fail;
	cid = sqlite3_last_insert_rowid(db->sq);
	err = db_write_rows(db, cp, cid);
	if (!err && db->series)
		err = series_writer__stage(db->series, cid, cp);
	if (!err && db->totals)
		err = totals_writer__checkpoint(db->totals, cid, cp);
	/* a block was written: another may have aged past --retain */
	if (!err && db->retain && totals_writer__through(db->totals) > db->retain_through) {
		err = retain__fold(db->retain, totals_writer__through(db->totals), cp->timestamp_ms);
		if (!err)
			db->retain_through = totals_writer__through(db->totals);
	}
	/* and older blocks compacted (after the fold: a folded block is not) */
	if (!err && db->series)
		err = series_writer__compact(db->series, totals_writer__through(db->totals),
					     cp->timestamp_ms);
	if (err)
		goto fail;
	err = db_commit(db);
	if (err)
		goto fail;
	if (id)
		*id = cid;
	/* the thread copies the WAL into the file now (the commit signalled it) */
	err = db->walck ? 0 : db_wal_to_file(db);
	return err ? err : db__verify(db);
fail:
	db_rollback(db);
	totals_writer__reset(db->totals);
	series_writer__reset(db->series);
	return err;
}

int db__set_compact(struct db *db, uint64_t age_ms)
{
	if (!db->writer || !db->totals) {
		if (!age_ms)
			return 0;
		pr_err("%s: compaction: the profile has no totals (it was written by an older"
		       " rsprof)", db->path);
		return -RSPROF_EDB;
	}
	series_writer__delete(db->series);
	db->series = NULL;
	return age_ms ? series_writer__new(db, age_ms, &db->series) : 0;
}

void db__wal_stats(struct db *db, struct wal_checkpointer_stats *out)
{
	wal_checkpointer__stats(db ? db->walck : NULL, out);
}

int db__set_retain(struct db *db, uint64_t retain_ms)
{
	int err;

	if (!db->writer || !db->totals) {
		pr_err("%s: --retain: the profile has no totals to fold by (it was written by an"
		       " older rsprof)", db->path);
		pr_hint("record into a new file");
		return -RSPROF_EDB;
	}
	retain__delete(db->retain);
	db->retain = NULL;
	err = retain__new(db, retain_ms, &db->retain);
	if (!err)
		err = db__meta_set_int(db, "retain_ms", (long long)retain_ms);
	return err;
}

int db__write_maps(struct db *db, const struct map_set *m)
{
	sqlite3_stmt *st;
	int err;

	if (!db->writer) {
		pr_err("%s: write maps: the profile is open read-only", db->path);
		return -RSPROF_EDB;
	}
	err = db_begin(db);
	if (err)
		return err;
	st = db->st[ST_MAP_DELETE];
	if (sqlite3_bind_int64(st, 1, m->pid)) {
		sqlite3_reset(st);
		err = db_err(db, db_stmts[ST_MAP_DELETE].name);
		goto fail;
	}
	err = db_step(db, ST_MAP_DELETE);
	if (err)
		goto fail;
	st = db->st[ST_MAP_INSERT];
	for (size_t i = 0; i < m->n; i++) {
		const struct map_row *e = &m->v[i];

		if (sqlite3_bind_int64(st, 1, m->pid) ||
		    sqlite3_bind_int64(st, 2, (int64_t)e->start) ||
		    sqlite3_bind_int64(st, 3, (int64_t)e->end) || bind_text(st, 4, e->perms) ||
		    sqlite3_bind_int64(st, 5, (int64_t)e->pgoff) || bind_text(st, 6, e->path)) {
			sqlite3_reset(st);
			err = db_err(db, db_stmts[ST_MAP_INSERT].name);
			goto fail;
		}
		err = db_step(db, ST_MAP_INSERT);
		if (err)
			goto fail;
	}
	err = db_commit(db);
	if (err)
		goto fail;
	return 0;
fail:
	db_rollback(db);
	return err;
}

int db__snapshot_begin(struct db *db)
{
	if (!sqlite3_get_autocommit(db->sq))
		return 0;
	/* BEGIN alone takes no snapshot; the first read does: read something now */
	if (db_exec(db, "begin snapshot", "BEGIN") ||
	    db_exec(db, "begin snapshot", "SELECT COUNT(*) FROM meta")) {
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
	return db_exec(db, "end snapshot", "COMMIT");
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
		return db_err(db, "integrity check");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *v = (const char *)sqlite3_column_text(st, 0);

		if (v && !strcmp(v, "ok"))
			continue;
		pr_err("%s: integrity check: %s", db->path, v ? v : "(null)");
		findings++;
	}
	if (rc != SQLITE_DONE) {
		db_err(db, "integrity check");
		findings++;
	}
	sqlite3_finalize(st);
	return findings ? -RSPROF_EDB : 0;
}
