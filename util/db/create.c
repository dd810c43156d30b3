/*
 * A new profile file, or one appended to (db__create()): made by rsprof
 * and locked, its schema and its companions, a read-write connection, and
 * the columns a file of an older rsprof lacks added.
 */
#include "util/db/db.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/db/db-priv.h"
#include "util/db/schema.h"
#include "util/db/wal-buffer.h"
#include "util/error.h"
#include "util/outfile.h"

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

/*
 * A new profile: the file (O_EXCL), locked, its companions, its first
 * image. The companions come before the image: a reader that opens the
 * file once it is a WAL database (`rsprof top`, `sqlite3 -readonly`
 * polling for it) makes the -shm it misses, and this rsprof would then
 * refuse to use one it did not make. An empty file is no WAL database to
 * it.
 */
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
	err = db_make_companions(db);
	if (!err)
		err = db_first_image(db);
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
	db->rw = true;
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
	/* WAL: readers follow the file while it is written, never blocking the writer */
	if (!err)
		err = db__exec(db, "set journal mode", "PRAGMA journal_mode = WAL");
	if (!err)
		err = db__exec(db, "set synchronous", "PRAGMA synchronous = NORMAL");
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
		err = db__exec(db, "set cache size", "PRAGMA cache_size = -8192");
	if (!err)
		err = db__exec(db, "set wal checkpoint", "PRAGMA wal_autocheckpoint = 8192");
	/* a version-3 file of before heap_events.temp_count or kind:
	 * the columns, as new files have them (old rows: NULL, 0) */
	if (!err)
		db_features(db);
	if (!err && append && !db__has(db, DB_TEMP_COUNT))
		err = db__exec(db, "add heap_events.temp_count",
			       "ALTER TABLE heap_events ADD COLUMN temp_count INTEGER DEFAULT NULL");
	if (!err && append && !db__has(db, DB_KIND))
		err = db__exec(db, "add heap_events.kind",
			       "ALTER TABLE heap_events ADD COLUMN kind INTEGER NOT NULL DEFAULT 0");
	if (!err && append && !db__has(db, DB_MAP_BUILD_ID)) {
		err = db__exec(db, "add map.build_id",
			       "ALTER TABLE map ADD COLUMN build_id TEXT DEFAULT NULL");
		if (!err)
			db->features |= DB_MAP_BUILD_ID;
	}
	/* a file of before the index: the writer's DELETE of a pid's maps scanned the table */
	if (!err && append && db__has(db, DB_V2))
		err = db__exec(db, "index map", "CREATE INDEX IF NOT EXISTS idx_map_pid ON map(pid)");
	if (!err && append && db__has(db, DB_PROCESSES) && !db__has(db, DB_PROC_CGROUP)) {
		err = db__exec(db, "add processes.cgroup",
			       "ALTER TABLE processes ADD COLUMN cgroup TEXT DEFAULT NULL");
		if (!err)
			db->features |= DB_PROC_CGROUP;
	}
	/*
	 * a file appended to keeps what it has: no totals when it was written
	 * without, or with totals without temp_count and kind (an early v3):
	 * its totals stay as they are, the new checkpoints are read from the
	 * event tables
	 */
	if (!err && (!append || (db_probe(db, "SELECT 1 FROM totals_state") == SQLITE_ROW &&
				 db__has(db, DB_TOTALS_KIND)))) {
		db->features |= DB_WRITE_TOTALS;
		/* a file of before the compacted checkpoints gets their tables, one
		 * of before the spread compaction the state of its slices */
		if (append)
			err = db__exec(db, "add the series tables", db_series_sql);
		if (!err && append) {
			db_features(db);
			if (!db__has(db, DB_SERIES_SLICES))
				err = db__exec(db, "add the series slices",
					       "ALTER TABLE series_state ADD COLUMN pack_addr INTEGER DEFAULT NULL;"
					       "ALTER TABLE series_state ADD COLUMN dropped INTEGER DEFAULT NULL;"
					       "ALTER TABLE series_state ADD COLUMN drop_addr INTEGER DEFAULT NULL");
		}
	}
	if (!err)
		db_features(db);
	if (!err)
		err = db__verify(db);
	if (err)
		goto fail;
	*out = db;
	return 0;
fail:
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
	if (!db->rw || db->appending)
		return db__close(db);
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

	if (!db || !db->rw || db->gone)
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

bool db__gone(const struct db *db)
{
	return db->gone;
}
