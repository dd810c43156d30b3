/*
 * A reader's connection to a profile (db__open()): the file checked through
 * a descriptor of its own, then opened read-only and set up for a file
 * that may be hostile (util/db/db.h says what is refused and bounded).
 */
#include "util/db/db.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/db/db-priv.h"
#include "util/db/fdopen.h"
#include "util/db/schema.h"
#include "util/duration.h"
#include "util/error.h"

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

static void permission_hint(const char *path);

/*
 * -wal and -shm, when there, must be regular files: SQLite opens them by
 * name, and a FIFO there would block a reader in open() for ever. And
 * readable by this user: SQLite only says "unable to open database file"
 * when one is not; the same exit 4 as an unreadable profile, naming it.
 */
static int db_check_companions(const char *path)
{
	static const char *const sfx[] = { "-wal", "-shm" };
	char name[4096];
	struct stat st;
	int fd;

	for (size_t i = 0; i < 2; i++) {
		snprintf(name, sizeof(name), "%s%s", path, sfx[i]);
		if (lstat(name, &st))
			continue;
		if (!S_ISREG(st.st_mode)) {
			pr_err("cannot open '%s': '%s' is not a regular file", path, name);
			pr_hint("remove it; a profile's %s is a file SQLite makes", sfx[i]);
			return -RSPROF_EDB;
		}
		fd = open(name, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
		if (fd >= 0) {
			close(fd);
			continue;
		}
		if (errno != EACCES && errno != EPERM)
			continue;	/* gone meanwhile: SQLite sees the same */
		pr_err("cannot open '%s': cannot read '%s': %s", path, name, strerror(errno));
		permission_hint(name);
		return -EACCES;
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

/* Why a profile could not be opened for reading, and what to do. */
static void permission_hint(const char *path)
{
	struct stat st;

	if (stat(path, &st)) {
		pr_hint("a directory on the path is not searchable by you: ls -ld each "
			"directory of it");
		return;
	}
	pr_hint("'%s' is mode %04o, owned by uid %u: read it as that user, or give "
		"yours read permission (chmod, chown, sudo)", path,
		(unsigned int)(st.st_mode & 07777), (unsigned int)st.st_uid);
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
		/* the file is there, this user may not read it: exit 4, not 6 */
		if (err == EACCES || err == EPERM) {
			permission_hint(path);
			return -err;
		}
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
	if (!err)
		db_features(db);
	if (err) {
		db__close(db);
		return err;
	}
	*out = db;
	return 0;
}
